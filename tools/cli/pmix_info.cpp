// pmix_info: the PMIx library's version and build, and the attributes each
// PMIx function supports (PMIX_QUERY_ATTRIBUTE_SUPPORT): the library's own
// client, server and tool functions, and the functions a server's host
// registered with PMIx_Register_attributes. docs/tools.md.
#include <dlfcn.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "cli.hpp"

using namespace pmix_cli;

namespace {

const char* const kUsage =
    "usage: pmix_info [--level LEVEL]... [--function NAME]... [--functions] [--version]\n"
    "                 [server options]\n"
    "Prints the PMIx library's version and build, then which attributes each PMIx\n"
    "function supports: the library's own client, server and tool functions and,\n"
    "with a server, what its host registered (PMIx_Register_attributes).\n"
    "\n"
    "  --level LEVEL    client, server, tool, host or all; repeatable (default: client,\n"
    "                   server and tool, and host when a server option is given).\n"
    "                   host needs a server: the one the options below find\n"
    "  --function NAME  only this function (e.g. PMIx_Get); repeatable\n"
    "  --functions      only the names of the functions of each level\n"
    "  --version        only the version and build\n"
    "  --help           this text\n"
    "\n";

struct level_info {
  const char* name;
  const char* attributes_key;
  const char* functions_key;
  const char* title;
};

const level_info kLevels[] = {
    {"client", PMIX_CLIENT_ATTRIBUTES, PMIX_CLIENT_FUNCTIONS, "Client functions (this library)"},
    {"server", PMIX_SERVER_ATTRIBUTES, PMIX_SERVER_FUNCTIONS, "Server functions (this library)"},
    {"tool", PMIX_TOOL_ATTRIBUTES, PMIX_TOOL_FUNCTIONS, "Tool functions (this library)"},
    {"host", PMIX_HOST_ATTRIBUTES, PMIX_HOST_FUNCTIONS, "Host functions (registered by the server's host)"},
};
constexpr int kHost = 3;

std::string library_file() {
  Dl_info info;
  if (dladdr(reinterpret_cast<void*>(&PMIx_Get_version), &info) != 0 && info.dli_fname != nullptr)
    return info.dli_fname;
  return "(unknown)";
}

// An answer the library gives itself (PMIX_QUERY_STABLE_ABI_VERSION, ...).
std::string local_answer(const char* key) {
  query_answer answer;
  const pmix_status_t rc = query({key}, {}, answer);
  const pmix_info_t* found = answer.find(key);
  if (rc != PMIX_SUCCESS || found == nullptr) return "(" + std::string(PMIx_Error_string(rc)) + ")";
  return format_value(found->value, 0);
}

void print_version() {
  std::printf("%-18s %s\n", "PMIx library", PMIx_Get_version());
  std::printf("%-18s %s\n", "Library file", library_file().c_str());
  std::printf("%-18s %ld.%ld.%ld (PMIX_NUMERIC_VERSION 0x%08x)\n", "Built for headers", PMIX_VERSION_MAJOR,
              PMIX_VERSION_MINOR, PMIX_VERSION_RELEASE, PMIX_NUMERIC_VERSION);
  std::printf("%-18s %s\n", "Stable ABI", local_answer(PMIX_QUERY_STABLE_ABI_VERSION).c_str());
  std::printf("%-18s %s\n", "Provisional ABI", local_answer(PMIX_QUERY_PROVISIONAL_ABI_VERSION).c_str());
#if defined(__clang__)
  std::printf("%-18s clang %s, C++ %ld\n", "Tool compiler", __clang_version__,
              static_cast<long>(__cplusplus));
#elif defined(__GNUC__)
  std::printf("%-18s g++ %s, C++ %ld\n", "Tool compiler", __VERSION__, static_cast<long>(__cplusplus));
#endif
}

// One level's answer: PMIx_Query_info of PMIX_QUERY_ATTRIBUTE_SUPPORT with
// the level's qualifier. Returns the status; prints what came back.
pmix_status_t print_level(const level_info& level, bool functions_only, const std::vector<std::string>& only,
                          std::size_t& found) {
  std::string wanted;
  for (const auto& f : only) wanted += (wanted.empty() ? "" : ",") + f;
  if (wanted.empty()) wanted = "all";
  std::vector<pmix_info_t> qualifier(1);
  const bool yes = true;
  PMIX_INFO_CONSTRUCT(&qualifier[0]);
  if (functions_only)
    PMIX_INFO_LOAD(&qualifier[0], level.functions_key, &yes, PMIX_BOOL);
  else
    PMIX_INFO_LOAD(&qualifier[0], level.attributes_key, wanted.c_str(), PMIX_STRING);
  query_answer answer;
  const pmix_status_t rc = query({PMIX_QUERY_ATTRIBUTE_SUPPORT}, qualifier, answer);
  PMIX_INFO_DESTRUCT(&qualifier[0]);
  const pmix_info_t* results = answer.results;
  const size_t nresults = answer.nresults;

  std::printf("\n%s:\n", level.title);
  std::size_t shown = 0;
  for (size_t r = 0; r < nresults; ++r) {
    const pmix_value_t& v = results[r].value;
    if (!PMIX_CHECK_KEY(&results[r], PMIX_QUERY_ATTRIBUTE_SUPPORT) || v.type != PMIX_DATA_ARRAY ||
        v.data.darray == nullptr || v.data.darray->type != PMIX_INFO)
      continue;
    const auto* entries = static_cast<const pmix_info_t*>(v.data.darray->array);
    for (size_t e = 0; e < v.data.darray->size; ++e) {
      const pmix_info_t& entry = entries[e];
      if (functions_only) {
        // One entry: the level's key, the function names joined by ','.
        if (entry.value.type != PMIX_STRING || entry.value.data.string == nullptr) continue;
        for (const auto& f : split(entry.value.data.string, ',')) {
          if (!only.empty() && std::find(only.begin(), only.end(), f) == only.end()) continue;
          std::printf("  %s\n", f.c_str());
          ++shown;
        }
        continue;
      }
      // One entry per function: its attributes as an array of pmix_regattr_t.
      std::printf("  %.*s\n", static_cast<int>(strnlen(entry.key, PMIX_MAX_KEYLEN)), entry.key);
      ++shown;
      const pmix_data_array_t* attrs =
          entry.value.type == PMIX_DATA_ARRAY ? entry.value.data.darray : nullptr;
      if (attrs == nullptr || attrs->type != PMIX_REGATTR) {
        std::printf("    %s\n", format_value(entry.value, 4).c_str());
        continue;
      }
      const auto* regs = static_cast<const pmix_regattr_t*>(attrs->array);
      for (size_t a = 0; a < attrs->size; ++a) {
        const pmix_regattr_t& reg = regs[a];
        const std::string name = reg.name != nullptr ? reg.name : "?";
        const std::string key(reg.string, strnlen(reg.string, PMIX_MAX_KEYLEN));
        if (key.empty() || name == "NONE")
          std::printf("    (none)\n");
        else
          std::printf("    %-40s %-28s %s\n", name.c_str(), key.c_str(), PMIx_Data_type_string(reg.type));
      }
    }
  }
  if (shown == 0)
    std::printf("  (none%s)\n", rc == PMIX_SUCCESS || rc == PMIX_ERR_NOT_FOUND ? "" : ": query failed");
  found += shown;
  return rc;
}

}  // namespace

int main(int argc, char** argv) {
  server_options server;
  bool levels[4] = {false, false, false, false};
  bool any_level = false, functions_only = false, version_only = false;
  std::vector<std::string> only;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    std::string error;
    if (a == "--help" || a == "-h") {
      std::printf("%s%s", kUsage, server_options_help);
      return exit_ok;
    }
    if (a == "--functions") {
      functions_only = true;
    } else if (a == "--version") {
      version_only = true;
    } else if ((a == "--level" || a == "--function") && i + 1 < argc) {
      const std::string value = argv[++i];
      if (a == "--function") {
        only.push_back(value);
        continue;
      }
      bool known = false;
      for (int l = 0; l < 4; ++l)
        if (value == kLevels[l].name || value == "all") {
          levels[l] = known = true;
        }
      if (!known) {
        std::fprintf(stderr, "pmix_info: unknown level '%s' (client, server, tool, host or all)\n",
                     value.c_str());
        return exit_usage;
      }
      any_level = true;
    } else if (take_server_option(argc, argv, i, server, error)) {
      continue;
    } else {
      if (error.empty()) error = "unknown option '" + a + "'";
      std::fprintf(stderr, "pmix_info: %s\n%s", error.c_str(), "Try 'pmix_info --help'.\n");
      return exit_usage;
    }
  }
  if (!any_level) {
    levels[0] = levels[1] = levels[2] = true;
    levels[kHost] = server.given;
  }

  // The host level needs a server; the library answers the others itself,
  // as a tool that connects nowhere (OpenPMIx answers no query before init).
  pmix_proc_t self;
  const bool connected = !version_only && levels[kHost];
  if (connected && connect("pmix_info", server, self) != PMIX_SUCCESS) return exit_no_server;
  bool standalone = false;
  if (!connected && !version_only) {
    pmix_info_t alone;
    const bool yes = true;
    PMIX_INFO_CONSTRUCT(&alone);
    PMIX_INFO_LOAD(&alone, PMIX_TOOL_DO_NOT_CONNECT, &yes, PMIX_BOOL);
    standalone = PMIx_tool_init(&self, &alone, 1) == PMIX_SUCCESS;
    PMIX_INFO_DESTRUCT(&alone);
  }

  print_version();
  int code = exit_ok;
  if (!version_only) {
    if (connected)
      std::printf("%-18s connected to a server as %.*s:%u\n", "Server",
                  static_cast<int>(strnlen(self.nspace, PMIX_MAX_NSLEN)), self.nspace, self.rank);
    std::size_t found = 0;
    for (int l = 0; l < 4; ++l) {
      if (!levels[l]) continue;
      const pmix_status_t rc = print_level(kLevels[l], functions_only, only, found);
      if (rc != PMIX_SUCCESS && rc != PMIX_ERR_NOT_FOUND && rc != PMIX_ERR_PARTIAL_SUCCESS) {
        std::fprintf(stderr, "pmix_info: the %s attributes could not be read: %s\n", kLevels[l].name,
                     PMIx_Error_string(rc));
        code = exit_code_of(rc);
      }
    }
    if (!only.empty() && found == 0 && code == exit_ok) {
      std::fprintf(stderr, "pmix_info: no function of the levels shown is named");
      for (const auto& f : only) std::fprintf(stderr, " %s", f.c_str());
      std::fprintf(stderr, "\n");
      code = exit_failed;
    }
  }
  if (connected || standalone) PMIx_tool_finalize();
  return code;
}
