// What the command-line tools (pmix_info, pps, pquery, pevent) share: the
// options that find a server, connecting as a tool, exit codes, reading
// attribute, status and range names, and printing values. Public API only
// (pmix.h, pmix_tool.h): the tools link libpmix.so.2 like any program.
// docs/tools.md describes the tools.
#pragma once

#include <pmix.h>
#include <pmix_tool.h>

#include <string>
#include <vector>

namespace pmix_cli {

// Exit codes, the same for every tool.
enum exit_code : int {
  exit_ok = 0,
  exit_failed = 1,         // the request was refused or failed, or asked for something unknown
  exit_usage = 2,          // a bad command line
  exit_no_server = 3,      // no server found, or it could not be reached
  exit_not_supported = 4,  // the server's host does not support the request
};

// How to find the server (PMIx_tool_init's directives).
struct server_options {
  long pid = 0;               // --pid PID: PMIX_SERVER_PIDINFO
  std::string nspace;         // --namespace NS: PMIX_SERVER_NSPACE (the server's own namespace)
  std::string uri;            // --uri URI, or file:PATH holding it: PMIX_SERVER_URI
  bool system = false;        // --system-server: PMIX_CONNECT_TO_SYSTEM
  bool system_first = false;  // --system-server-first: PMIX_CONNECT_SYSTEM_FIRST
  std::string tmpdir;         // --tmpdir DIR: PMIX_SERVER_TMPDIR and PMIX_SYSTEM_TMPDIR
  unsigned wait = 0;          // --wait-to-connect S: PMIX_CONNECT_RETRY_DELAY
  unsigned retries = 0;       // --num-connect-retries N: PMIX_CONNECT_MAX_RETRIES
  bool given = false;         // any of them was given
};

// The --help text of the options above.
extern const char* const server_options_help;

// Reads the server option at argv[i] ("--pid 12" or "--pid=12"), advancing
// i past its argument. Returns false when argv[i] is not one, or when its
// value is bad: then `error` says why.
bool take_server_option(int argc, char** argv, int& i, server_options& out, std::string& error);

// Connects as a tool. On failure prints "<tool>: ..." to stderr, saying how
// it looked for the server, and returns PMIx_tool_init's status; the caller
// exits with exit_no_server.
pmix_status_t connect(const char* tool, const server_options& options, pmix_proc_t& self);

// The results of one PMIx_Query_info call, freed with it.
class query_answer {
 public:
  query_answer() = default;
  query_answer(const query_answer&) = delete;
  query_answer& operator=(const query_answer&) = delete;
  ~query_answer();

  pmix_status_t status = PMIX_ERR_NOT_FOUND;
  pmix_info_t* results = nullptr;
  size_t nresults = 0;

  // The first result with this key, or nullptr.
  const pmix_info_t* find(const std::string& key) const;
};

// PMIx_Query_info of one query: `keys` (names or keys) with `qualifiers`
// (which stay the caller's). Returns out.status.
pmix_status_t query(const std::vector<std::string>& keys, const std::vector<pmix_info_t>& qualifiers,
                    query_answer& out);

// The exit code for a failed request's status.
int exit_code_of(pmix_status_t rc);

// The key of an attribute given by name ("PMIX_JOB_SIZE") or key
// ("pmix.job.size"); other text is taken as a key of its own.
std::string attribute_key(const std::string& given);
// "PMIX_JOB_SIZE" for "pmix.job.size"; the key itself when it has no name.
std::string attribute_name(const std::string& key);

// A status given as a number or a name ("PMIX_ERR_PROC_ABORTED", or without
// its "PMIX_" prefix); false when it is neither.
bool parse_status(const std::string& text, pmix_status_t& out);
// "PMIX_ERR_PROC_ABORTED (-7)", or the number alone for a code without a name.
std::string status_text(pmix_status_t status);

// A range given by name (local, namespace, session, global, rm, custom,
// proc_local, undef, or the PMIX_RANGE_ constant) or number.
bool parse_range(const std::string& text, pmix_data_range_t& out);
// The short name parse_range takes ("session").
std::string range_name(pmix_data_range_t range);

// A value from the command line: "VALUE" is a string; "TYPE:VALUE" with TYPE
// one of string, bool, int, int32, int64, uint, uint8, uint16, uint32,
// uint64, size, pid, double, rank, status, proc ("nspace:rank", rank a
// number or "*") gives that type. False (and `error`) for a bad one. The
// value must be destructed (PMIX_VALUE_DESTRUCT).
bool parse_value(const std::string& text, pmix_value_t& out, std::string& error);

// "KEY=VALUE" into an info, KEY a name or key, VALUE as parse_value reads
// it. The info must be destructed (PMIX_INFO_DESTRUCT).
bool parse_info(const std::string& text, pmix_info_t& out, std::string& error);

// A value as text: one line for simple types; the elements of an array (and
// the entries of nested infos) on following lines, each indented by
// `indent` + 2 spaces.
std::string format_value(const pmix_value_t& v, int indent);
// "NAME (key): value" ("key: value" for a key without a name).
std::string format_info(const pmix_info_t& info, int indent);

std::vector<std::string> split(const std::string& text, char sep);

}  // namespace pmix_cli
