// pps: the jobs of a running PMIx server and their processes, asked from
// its host (PMIX_QUERY_NAMESPACES, PMIX_QUERY_NAMESPACE_INFO,
// PMIX_QUERY_PROC_TABLE). docs/tools.md.
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "cli.hpp"

using namespace pmix_cli;

namespace {

const char* const kUsage =
    "usage: pps [server options] [NAMESPACE...]\n"
    "Lists the jobs (namespaces) of a running PMIx server and, for each, its processes:\n"
    "rank, pid, exit code, state, node and executable. With NAMESPACE arguments, only\n"
    "those jobs. The server's host answers (PMIx_Query_info).\n"
    "\n"
    "  --help           this text\n"
    "\n";

struct job_row {
  std::string nspace;
  std::string size;     // empty: not known
  std::string command;  // empty: not known
};

std::string string_of(const pmix_value_t& v) {
  return v.type == PMIX_STRING && v.data.string != nullptr ? v.data.string : format_value(v, 0);
}

// The entries of a PMIX_QUERY_NAMESPACE_INFO answer: an array with, per
// job, an info whose value is an array of PMIX_NSPACE, PMIX_JOB_SIZE,
// PMIX_CMD_LINE (any of them may be missing).
void read_namespace_info(const pmix_value_t& v, std::vector<job_row>& jobs) {
  if (v.type != PMIX_DATA_ARRAY || v.data.darray == nullptr || v.data.darray->type != PMIX_INFO) return;
  const auto* per_job = static_cast<const pmix_info_t*>(v.data.darray->array);
  for (size_t k = 0; k < v.data.darray->size; ++k) {
    const pmix_value_t& one = per_job[k].value;
    if (one.type != PMIX_DATA_ARRAY || one.data.darray == nullptr || one.data.darray->type != PMIX_INFO)
      continue;
    const auto* fields = static_cast<const pmix_info_t*>(one.data.darray->array);
    job_row row;
    for (size_t f = 0; f < one.data.darray->size; ++f) {
      if (PMIX_CHECK_KEY(&fields[f], PMIX_NSPACE))
        row.nspace = string_of(fields[f].value);
      else if (PMIX_CHECK_KEY(&fields[f], PMIX_JOB_SIZE))
        row.size = format_value(fields[f].value, 0);
      else if (PMIX_CHECK_KEY(&fields[f], PMIX_CMD_LINE))
        row.command = string_of(fields[f].value);
    }
    if (row.nspace.empty()) continue;
    auto same =
        std::find_if(jobs.begin(), jobs.end(), [&](const job_row& j) { return j.nspace == row.nspace; });
    if (same == jobs.end())
      jobs.push_back(row);
    else
      *same = row;
  }
}

// Prints the process table of one job; returns the query's status.
pmix_status_t print_processes(const std::string& nspace) {
  std::vector<pmix_info_t> qualifier(1);
  PMIX_INFO_CONSTRUCT(&qualifier[0]);
  PMIX_INFO_LOAD(&qualifier[0], PMIX_NSPACE, nspace.c_str(), PMIX_STRING);
  query_answer answer;
  const pmix_status_t rc = query({PMIX_QUERY_PROC_TABLE}, qualifier, answer);
  PMIX_INFO_DESTRUCT(&qualifier[0]);
  const pmix_info_t* table = answer.find(PMIX_QUERY_PROC_TABLE);
  if (rc != PMIX_SUCCESS || table == nullptr || table->value.type != PMIX_DATA_ARRAY ||
      table->value.data.darray == nullptr || table->value.data.darray->type != PMIX_PROC_INFO) {
    std::printf("  (no process table: %s)\n",
                PMIx_Error_string(rc == PMIX_SUCCESS ? PMIX_ERR_BAD_PARAM : rc));
    return rc == PMIX_SUCCESS ? PMIX_ERR_BAD_PARAM : rc;
  }
  const auto* procs = static_cast<const pmix_proc_info_t*>(table->value.data.darray->array);
  std::printf("  %6s %8s %5s  %-12s %-16s %s\n", "RANK", "PID", "EXIT", "STATE", "NODE", "EXECUTABLE");
  for (size_t k = 0; k < table->value.data.darray->size; ++k) {
    const pmix_proc_info_t& p = procs[k];
    std::printf("  %6u %8d %5d  %-12s %-16s %s\n", p.proc.rank, static_cast<int>(p.pid), p.exit_code,
                PMIx_Proc_state_string(p.state), p.hostname != nullptr ? p.hostname : "?",
                p.executable_name != nullptr ? p.executable_name : "?");
  }
  return PMIX_SUCCESS;
}

}  // namespace

int main(int argc, char** argv) {
  server_options server;
  std::vector<std::string> wanted;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    std::string error;
    if (a == "--help" || a == "-h") {
      std::printf("%s%s", kUsage, server_options_help);
      return exit_ok;
    }
    if (take_server_option(argc, argv, i, server, error)) continue;
    if (!error.empty() || (a.size() > 1 && a[0] == '-')) {
      if (error.empty()) error = "unknown option '" + a + "'";
      std::fprintf(stderr, "pps: %s\nTry 'pps --help'.\n", error.c_str());
      return exit_usage;
    }
    wanted.push_back(a);
  }

  pmix_proc_t self;
  if (connect("pps", server, self) != PMIX_SUCCESS) return exit_no_server;

  int code = exit_ok;
  query_answer answer;
  const pmix_status_t rc = query({PMIX_QUERY_NAMESPACES, PMIX_QUERY_NAMESPACE_INFO}, {}, answer);
  std::vector<job_row> jobs;
  if (const pmix_info_t* list = answer.find(PMIX_QUERY_NAMESPACES))
    for (const auto& ns : split(string_of(list->value), ',')) jobs.push_back(job_row{ns, {}, {}});
  if (const pmix_info_t* details = answer.find(PMIX_QUERY_NAMESPACE_INFO))
    read_namespace_info(details->value, jobs);
  if (rc != PMIX_SUCCESS && rc != PMIX_ERR_PARTIAL_SUCCESS) {
    std::fprintf(stderr, "pps: the server's host did not list its jobs: %s\n", PMIx_Error_string(rc));
    PMIx_tool_finalize();
    return exit_code_of(rc);
  }

  for (const auto& ns : wanted)
    if (std::none_of(jobs.begin(), jobs.end(), [&](const job_row& j) { return j.nspace == ns; })) {
      std::fprintf(stderr, "pps: the server has no job %s\n", ns.c_str());
      code = exit_failed;
    }
  std::size_t shown = 0;
  for (const auto& j : jobs) {
    if (!wanted.empty() && std::find(wanted.begin(), wanted.end(), j.nspace) == wanted.end()) continue;
    std::printf("%sJOB %s", shown++ == 0 ? "" : "\n", j.nspace.c_str());
    if (!j.size.empty()) std::printf("  size %s", j.size.c_str());
    if (!j.command.empty()) std::printf("  command %s", j.command.c_str());
    std::printf("\n");
    const pmix_status_t st = print_processes(j.nspace);
    if (st != PMIX_SUCCESS && code == exit_ok) code = exit_code_of(st);
  }
  if (jobs.empty()) std::printf("no jobs\n");
  PMIx_tool_finalize();
  return code;
}
