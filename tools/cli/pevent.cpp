// pevent: injects an event through a running PMIx server
// (PMIx_Notify_event from a tool), to a range or to named processes.
// docs/tools.md.
#include <cctype>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "cli.hpp"

using namespace pmix_cli;

namespace {

const char* const kUsage =
    "usage: pevent [server options] [--range RANGE] [--target NSPACE[:RANK]]...\n"
    "              [--info KEY=VALUE]... [--non-default] STATUS\n"
    "Injects the event STATUS (a number, or a name such as PMIX_ERR_PROC_ABORTED or\n"
    "ERR_PROC_ABORTED) through a running PMIx server, from this tool\n"
    "(PMIx_Notify_event). Returns once the server has passed it on.\n"
    "\n"
    "  --range RANGE           who hears it: session (default), global, namespace (this\n"
    "                          tool's own), local (this node), rm (the host only),\n"
    "                          proc_local (nobody else), or custom with --target\n"
    "  --target NSPACE[:RANK]  only these processes (PMIX_RANGE_CUSTOM); without a\n"
    "                          rank, or with rank *, every process of NSPACE; repeatable\n"
    "  --info KEY=VALUE        data carried by the event; VALUE as pquery's --qualifier\n"
    "                          reads it; repeatable\n"
    "  --non-default           not for default handlers (PMIX_EVENT_NON_DEFAULT)\n"
    "  --help                  this text\n"
    "\n";

bool parse_target(const std::string& text, pmix_proc_t& out) {
  PMIX_PROC_CONSTRUCT(&out);
  std::string nspace = text;
  out.rank = PMIX_RANK_WILDCARD;
  const auto colon = text.rfind(':');
  if (colon != std::string::npos) {
    const std::string rank = text.substr(colon + 1);
    nspace = text.substr(0, colon);
    if (rank != "*") {
      if (rank.empty() || rank.find_first_not_of("0123456789") != std::string::npos || rank.size() > 9)
        return false;
      out.rank = static_cast<pmix_rank_t>(std::stoul(rank));
    }
  }
  if (nspace.empty() || nspace.size() > PMIX_MAX_NSLEN) return false;
  PMIX_LOAD_NSPACE(out.nspace, nspace.c_str());
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  server_options server;
  std::vector<pmix_info_t> info;
  std::vector<pmix_proc_t> targets;
  pmix_data_range_t range = PMIX_RANGE_SESSION;
  bool range_given = false, non_default = false, status_given = false;
  pmix_status_t status = PMIX_SUCCESS;
  auto fail = [&info](const std::string& error) {
    for (auto& i : info) PMIX_INFO_DESTRUCT(&i);
    std::fprintf(stderr, "pevent: %s\nTry 'pevent --help'.\n", error.c_str());
    return exit_usage;
  };
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    std::string error;
    if (a == "--help" || a == "-h") {
      std::printf("%s%s", kUsage, server_options_help);
      for (auto& d : info) PMIX_INFO_DESTRUCT(&d);
      return exit_ok;
    }
    if (a == "--non-default") {
      non_default = true;
    } else if (a == "--range" && i + 1 < argc) {
      if (!parse_range(argv[++i], range)) return fail(std::string("unknown range '") + argv[i] + "'");
      range_given = true;
    } else if (a == "--target" && i + 1 < argc) {
      pmix_proc_t p;
      if (!parse_target(argv[++i], p))
        return fail(std::string("--target: '") + argv[i] + "' is not NSPACE[:RANK]");
      targets.push_back(p);
    } else if (a == "--info" && i + 1 < argc) {
      pmix_info_t d;
      if (!parse_info(argv[++i], d, error)) {
        PMIX_INFO_DESTRUCT(&d);
        return fail("--info: " + error);
      }
      info.push_back(d);
    } else if (take_server_option(argc, argv, i, server, error)) {
      continue;
    } else if (!error.empty()) {
      return fail(error);
    } else if (!status_given &&
               (a.size() < 2 || a[0] != '-' || std::isdigit(static_cast<unsigned char>(a[1])))) {
      if (!parse_status(a, status)) return fail("'" + a + "' is neither a status number nor a status name");
      status_given = true;
    } else {
      return fail(status_given && a[0] != '-' ? "only one STATUS may be given"
                                              : "unknown option '" + a + "'");
    }
  }
  if (!status_given) return fail("no event STATUS given");
  if (!targets.empty()) {
    if (range_given && range != PMIX_RANGE_CUSTOM) return fail("--target goes with --range custom only");
    range = PMIX_RANGE_CUSTOM;
    pmix_data_array_t procs;
    procs.type = PMIX_PROC;
    procs.size = targets.size();
    procs.array = targets.data();
    info.emplace_back();
    PMIX_INFO_CONSTRUCT(&info.back());
    PMIX_INFO_LOAD(&info.back(), PMIX_EVENT_CUSTOM_RANGE, &procs, PMIX_DATA_ARRAY);  // copied
  } else if (range == PMIX_RANGE_CUSTOM) {
    return fail("--range custom needs --target");
  }
  if (non_default) {
    const bool yes = true;
    info.emplace_back();
    PMIX_INFO_CONSTRUCT(&info.back());
    PMIX_INFO_LOAD(&info.back(), PMIX_EVENT_NON_DEFAULT, &yes, PMIX_BOOL);
  }

  pmix_proc_t self;
  if (connect("pevent", server, self) != PMIX_SUCCESS) {
    for (auto& d : info) PMIX_INFO_DESTRUCT(&d);
    return exit_no_server;
  }
  // No callback: returns once the server has passed the event on.
  const pmix_status_t rc = PMIx_Notify_event(status, &self, range, info.empty() ? nullptr : info.data(),
                                             info.size(), nullptr, nullptr);
  for (auto& d : info) PMIX_INFO_DESTRUCT(&d);
  int code = exit_ok;
  if (rc == PMIX_SUCCESS || rc == PMIX_OPERATION_SUCCEEDED) {
    std::printf("pevent: %s sent to range %s\n", status_text(status).c_str(), range_name(range).c_str());
  } else {
    std::fprintf(stderr, "pevent: %s was not sent: %s%s\n", status_text(status).c_str(),
                 PMIx_Error_string(rc),
                 rc == PMIX_ERR_NOT_SUPPORTED ? " (the server's host takes no events)" : "");
    code = exit_code_of(rc);
  }
  PMIx_tool_finalize();
  return code;
}
