// pquery: asks a running PMIx server any query key (PMIx_Query_info), with
// qualifiers, and prints the answers. docs/tools.md.
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "cli.hpp"

using namespace pmix_cli;

namespace {

const char* const kUsage =
    "usage: pquery [server options] [--qualifier KEY=VALUE]... KEY...\n"
    "Asks a running PMIx server the query KEYs (PMIx_Query_info, one query) and prints\n"
    "each answer. A KEY is an attribute's name (PMIX_QUERY_NAMESPACES) or its key\n"
    "(pmix.qry.ns). Exit status 1 when a KEY got no answer.\n"
    "\n"
    "  -q, --qualifier KEY=VALUE  a qualifier of the query, e.g. PMIX_NSPACE=myjob; VALUE\n"
    "                         is a string, or TYPE:VALUE with TYPE one of string, bool,\n"
    "                         int, int32, int64, uint, uint8, uint16, uint32, uint64,\n"
    "                         size, pid, double, rank, status, proc (nspace:rank)\n"
    "  --help                 this text\n"
    "\n";

}  // namespace

int main(int argc, char** argv) {
  server_options server;
  std::vector<std::string> keys;
  std::vector<pmix_info_t> qualifiers;
  auto free_qualifiers = [&qualifiers] {
    for (auto& q : qualifiers) PMIX_INFO_DESTRUCT(&q);
  };
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    std::string error;
    if (a == "--help" || a == "-h") {
      std::printf("%s%s", kUsage, server_options_help);
      free_qualifiers();
      return exit_ok;
    }
    if ((a == "--qualifier" || a == "-q") && i + 1 < argc) {
      pmix_info_t q;
      if (!parse_info(argv[++i], q, error)) {
        PMIX_INFO_DESTRUCT(&q);
        std::fprintf(stderr, "pquery: --qualifier: %s\n", error.c_str());
        free_qualifiers();
        return exit_usage;
      }
      qualifiers.push_back(q);
      continue;
    }
    if (take_server_option(argc, argv, i, server, error)) continue;
    if (!error.empty() || (a.size() > 1 && a[0] == '-')) {
      if (error.empty()) error = "unknown option '" + a + "'";
      std::fprintf(stderr, "pquery: %s\nTry 'pquery --help'.\n", error.c_str());
      free_qualifiers();
      return exit_usage;
    }
    keys.push_back(attribute_key(a));
  }
  if (keys.empty()) {
    std::fprintf(stderr, "pquery: no query key given\nTry 'pquery --help'.\n");
    free_qualifiers();
    return exit_usage;
  }

  pmix_proc_t self;
  if (connect("pquery", server, self) != PMIX_SUCCESS) {
    free_qualifiers();
    return exit_no_server;
  }
  query_answer answer;
  const pmix_status_t rc = query(keys, qualifiers, answer);
  free_qualifiers();
  for (size_t k = 0; k < answer.nresults; ++k) std::printf("%s\n", format_info(answer.results[k], 0).c_str());

  int code = exit_ok;
  if (rc == PMIX_SUCCESS || rc == PMIX_ERR_PARTIAL_SUCCESS || rc == PMIX_ERR_NOT_FOUND) {
    // Name each key that got no answer.
    for (const auto& key : keys) {
      if (answer.find(key) != nullptr) continue;
      const std::string name = attribute_name(key);
      std::fprintf(stderr, "pquery: %s%s: no answer: the server does not know it (the query's status: %s)\n",
                   key.c_str(), name != key ? (" (" + name + ")").c_str() : "", PMIx_Error_string(rc));
      code = exit_failed;
    }
  } else {
    std::fprintf(stderr, "pquery: the query failed: %s%s\n", PMIx_Error_string(rc),
                 rc == PMIX_ERR_NOT_SUPPORTED ? " (the server's host answers no queries)" : "");
    code = exit_code_of(rc);
  }
  PMIx_tool_finalize();
  return code;
}
