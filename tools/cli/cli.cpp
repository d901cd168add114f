#include "cli.hpp"

#include <cctype>
#include <cerrno>
#include <cinttypes>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <initializer_list>

namespace pmix_cli {

const char* const server_options_help =
    "Finding the server (default: the server that launched this tool, else the session\n"
    "server, else any server of this node):\n"
    "  --pid PID                the server running as process PID (e.g. pmixrun)\n"
    "  --namespace NS           the server whose own namespace is NS\n"
    "  --uri URI                the server at URI; file:PATH reads the URI from PATH\n"
    "  --system-server          the node's system server\n"
    "  --system-server-first    the system server if there is one, else as by default\n"
    "  --tmpdir DIR             where servers leave their rendezvous files (default:\n"
    "                           $PMIX_SERVER_TMPDIR, $TMPDIR, $TEMP, $TMP or /tmp)\n"
    "  --num-connect-retries N  search N more times when no server is found\n"
    "  --wait-to-connect S      seconds between those searches\n";

namespace {

bool parse_long(const std::string& text, long long min, long long max, long long& out) {
  if (text.empty()) return false;
  errno = 0;
  char* end = nullptr;
  const long long v = std::strtoll(text.c_str(), &end, 0);
  if (errno != 0 || *end != '\0' || v < min || v > max) return false;
  out = v;
  return true;
}

bool parse_unsigned(const std::string& text, unsigned long long max, unsigned long long& out) {
  if (text.empty() || text[0] == '-') return false;
  errno = 0;
  char* end = nullptr;
  const unsigned long long v = std::strtoull(text.c_str(), &end, 0);
  if (errno != 0 || *end != '\0' || v > max) return false;
  out = v;
  return true;
}

// The option's value: "--opt=VALUE" or the next argument.
bool option_value(int argc, char** argv, int& i, const std::string& name, std::string& value, bool& matched) {
  const std::string a = argv[i];
  matched = false;
  if (a == name) {
    matched = true;
    if (i + 1 >= argc) return false;
    value = argv[++i];
    return true;
  }
  if (a.compare(0, name.size() + 1, name + "=") == 0) {
    matched = true;
    value = a.substr(name.size() + 1);
    return true;
  }
  return false;
}

const char* first_env(std::initializer_list<const char*> names, const char* fallback) {
  for (const char* n : names)
    if (const char* v = std::getenv(n); v != nullptr && *v != '\0') return v;
  return fallback;
}

std::string rank_text(pmix_rank_t r) {
  if (r == PMIX_RANK_WILDCARD) return "*";
  if (r == PMIX_RANK_UNDEF) return "undef";
  if (r == PMIX_RANK_LOCAL_NODE) return "local-node";
  if (r == PMIX_RANK_INVALID) return "invalid";
  return std::to_string(r);
}

std::string proc_text(const pmix_proc_t& p) {
  return std::string(p.nspace, strnlen(p.nspace, PMIX_MAX_NSLEN)) + ":" + rank_text(p.rank);
}

std::string key_text(const char* key) {
  const std::string k(key, strnlen(key, PMIX_MAX_KEYLEN));
  const std::string name = attribute_name(k);
  return name == k ? k : name + " (" + k + ")";
}

struct range_entry {
  pmix_data_range_t range;
  const char* name;
};
constexpr range_entry kRanges[] = {
    {PMIX_RANGE_UNDEF, "undef"},     {PMIX_RANGE_RM, "rm"},
    {PMIX_RANGE_LOCAL, "local"},     {PMIX_RANGE_NAMESPACE, "namespace"},
    {PMIX_RANGE_SESSION, "session"}, {PMIX_RANGE_GLOBAL, "global"},
    {PMIX_RANGE_CUSTOM, "custom"},   {PMIX_RANGE_PROC_LOCAL, "proc_local"},
};

std::string upper(std::string s) {
  for (auto& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return s;
}

// The size of one element of a data array of a scalar type; 0 for others.
std::size_t scalar_size(pmix_data_type_t t) {
  switch (t) {
    case PMIX_BOOL: return sizeof(bool);
    case PMIX_BYTE:
    case PMIX_INT8:
    case PMIX_UINT8: return 1;
    case PMIX_INT16:
    case PMIX_UINT16: return 2;
    case PMIX_INT32:
    case PMIX_UINT32: return 4;
    case PMIX_INT64:
    case PMIX_UINT64: return 8;
    case PMIX_INT: return sizeof(int);
    case PMIX_UINT: return sizeof(unsigned);
    case PMIX_SIZE: return sizeof(size_t);
    case PMIX_PID: return sizeof(pid_t);
    case PMIX_FLOAT: return sizeof(float);
    case PMIX_DOUBLE: return sizeof(double);
    case PMIX_STATUS: return sizeof(pmix_status_t);
    case PMIX_PROC_RANK: return sizeof(pmix_rank_t);
    case PMIX_DATA_RANGE: return sizeof(pmix_data_range_t);
    case PMIX_PROC_STATE: return sizeof(pmix_proc_state_t);
    case PMIX_PERSIST: return sizeof(pmix_persistence_t);
    default: return 0;
  }
}

std::string element_text(const pmix_data_array_t& a, std::size_t k, int indent) {
  const std::string pad(static_cast<std::size_t>(indent), ' ');
  switch (a.type) {
    case PMIX_STRING: {
      const char* s = static_cast<char**>(a.array)[k];
      return s != nullptr ? s : "";
    }
    case PMIX_PROC: return proc_text(static_cast<pmix_proc_t*>(a.array)[k]);
    case PMIX_INFO: {
      return format_info(static_cast<pmix_info_t*>(a.array)[k], indent);
    }
    case PMIX_VALUE: return format_value(static_cast<pmix_value_t*>(a.array)[k], indent);
    case PMIX_PROC_INFO: {
      const pmix_proc_info_t& p = static_cast<pmix_proc_info_t*>(a.array)[k];
      return proc_text(p.proc) + " pid " + std::to_string(p.pid) + " state " +
             PMIx_Proc_state_string(p.state) + " exit " + std::to_string(p.exit_code) + " host " +
             (p.hostname != nullptr ? p.hostname : "?") + " executable " +
             (p.executable_name != nullptr ? p.executable_name : "?");
    }
    case PMIX_REGATTR: {
      const pmix_regattr_t& r = static_cast<pmix_regattr_t*>(a.array)[k];
      std::string text = r.name != nullptr ? r.name : "?";
      const std::string key(r.string, strnlen(r.string, PMIX_MAX_KEYLEN));
      if (!key.empty() && key != text) text += " (" + key + ", " + PMIx_Data_type_string(r.type) + ")";
      for (char** d = r.description; d != nullptr && *d != nullptr; ++d) text += "\n" + pad + "  " + *d;
      return text;
    }
    default: break;
  }
  if (const std::size_t size = scalar_size(a.type)) {
    pmix_value_t v;
    PMIX_VALUE_CONSTRUCT(&v);
    v.type = a.type;
    std::memcpy(&v.data, static_cast<const char*>(a.array) + k * size, size);
    return format_value(v, indent);
  }
  return std::string("(an element of type ") + PMIx_Data_type_string(a.type) + ")";
}

}  // namespace

bool take_server_option(int argc, char** argv, int& i, server_options& out, std::string& error) {
  const std::string a = argv[i];
  auto flag = [&](const char* name, bool& dest) {
    if (a != name) return false;
    dest = true;
    return true;
  };
  if (flag("--system-server", out.system) || flag("--system-server-first", out.system_first)) {
    out.given = true;
    return true;
  }
  struct valued {
    const char* name;
    const char* what;
  };
  const valued options[] = {{"--pid", "a process id"},
                            {"--namespace", "a namespace"},
                            {"--uri", "a URI"},
                            {"--tmpdir", "a directory"},
                            {"--wait-to-connect", "a number of seconds"},
                            {"--num-connect-retries", "a number"}};
  for (const auto& o : options) {
    std::string value;
    bool matched = false;
    const bool has = option_value(argc, argv, i, o.name, value, matched);
    if (!matched) continue;
    if (!has || value.empty()) {
      error = std::string(o.name) + " needs " + o.what;
      return false;
    }
    const std::string name = o.name;
    long long n = 0;
    unsigned long long u = 0;
    if (name == "--pid") {
      if (!parse_long(value, 1, INT_MAX, n)) {
        error = "--pid needs a process id, not '" + value + "'";
        return false;
      }
      out.pid = static_cast<long>(n);
    } else if (name == "--namespace") {
      if (value.size() > PMIX_MAX_NSLEN) {
        error = "--namespace: a namespace has at most " + std::to_string(PMIX_MAX_NSLEN) + " characters";
        return false;
      }
      out.nspace = value;
    } else if (name == "--uri") {
      out.uri = value;
    } else if (name == "--tmpdir") {
      out.tmpdir = value;
    } else if (!parse_unsigned(value, UINT32_MAX, u)) {
      error = name + " needs " + o.what + ", not '" + value + "'";
      return false;
    } else if (name == "--wait-to-connect") {
      out.wait = static_cast<unsigned>(u);
    } else {
      out.retries = static_cast<unsigned>(u);
    }
    out.given = true;
    return true;
  }
  return false;
}

pmix_status_t connect(const char* tool, const server_options& o, pmix_proc_t& self) {
  std::string uri = o.uri;
  if (uri.compare(0, 5, "file:") == 0) {
    std::ifstream in(uri.substr(5));
    std::string line;
    if (!in || !std::getline(in, line) || line.empty()) {
      std::fprintf(stderr, "%s: cannot read a server URI from %s\n", tool, uri.substr(5).c_str());
      return PMIX_ERR_NOT_FOUND;
    }
    uri = line;
  }
  std::vector<pmix_info_t> dirs;
  auto add = [&dirs](const char* key, const void* data, pmix_data_type_t type) {
    dirs.emplace_back();
    PMIX_INFO_CONSTRUCT(&dirs.back());
    PMIX_INFO_LOAD(&dirs.back(), key, data, type);
  };
  const pid_t pid = static_cast<pid_t>(o.pid);
  const bool yes = true;
  const uint32_t wait = o.wait, retries = o.retries;
  if (!uri.empty()) add(PMIX_SERVER_URI, uri.c_str(), PMIX_STRING);
  if (o.pid > 0) add(PMIX_SERVER_PIDINFO, &pid, PMIX_PID);
  if (!o.nspace.empty()) add(PMIX_SERVER_NSPACE, o.nspace.c_str(), PMIX_STRING);
  if (o.system) add(PMIX_CONNECT_TO_SYSTEM, &yes, PMIX_BOOL);
  if (o.system_first) add(PMIX_CONNECT_SYSTEM_FIRST, &yes, PMIX_BOOL);
  if (!o.tmpdir.empty()) {
    add(PMIX_SERVER_TMPDIR, o.tmpdir.c_str(), PMIX_STRING);
    add(PMIX_SYSTEM_TMPDIR, o.tmpdir.c_str(), PMIX_STRING);
  }
  if (o.retries > 0) add(PMIX_CONNECT_MAX_RETRIES, &retries, PMIX_UINT32);
  if (o.wait > 0) add(PMIX_CONNECT_RETRY_DELAY, &wait, PMIX_UINT32);

  // A server named on the command line wins over the one that launched
  // this tool: the library would take the environment's address first.
  if (!uri.empty() || o.pid > 0 || !o.nspace.empty() || o.system || o.system_first) {
    ::unsetenv("PMIX_CXX_SERVER_URI");
    ::unsetenv("PMIX_SERVER_URI41");
    ::unsetenv("PMIX_SERVER_URI4");
  }
  PMIX_PROC_CONSTRUCT(&self);
  const pmix_status_t rc = PMIx_tool_init(&self, dirs.empty() ? nullptr : dirs.data(), dirs.size());
  for (auto& d : dirs) PMIX_INFO_DESTRUCT(&d);
  if (rc == PMIX_SUCCESS) return rc;

  const bool from_env =
      std::getenv("PMIX_CXX_SERVER_URI") != nullptr || std::getenv("PMIX_SERVER_URI41") != nullptr ||
      std::getenv("PMIX_SERVER_URI4") != nullptr;
  std::string sought;
  if (!uri.empty()) {
    sought = "at " + uri;
  } else if (o.pid > 0) {
    sought = "running as process " + std::to_string(o.pid);
  } else if (!o.nspace.empty()) {
    sought = "with namespace " + o.nspace;
  } else if (o.system) {
    sought = "of the system";
  } else if (from_env) {
    sought = "that launched this tool (PMIX_CXX_SERVER_URI or PMIX_SERVER_URI41 in the environment)";
  } else {
    sought = "on this node";
  }
  std::string where;
  if (uri.empty() && !from_env) {
    const bool system = o.system || o.system_first;
    const std::string dir =
        !o.tmpdir.empty() ? o.tmpdir : first_env({"PMIX_SERVER_TMPDIR", "TMPDIR", "TEMP", "TMP"}, "/tmp");
    where = " (rendezvous files in " + dir;
    if (system && o.tmpdir.empty()) {
      const std::string sysdir = first_env({"PMIX_SYSTEM_TMPDIR", "TMPDIR", "TEMP", "TMP"}, "/tmp");
      if (sysdir != dir) where += " and " + sysdir;
    }
    where += ")";
  }
  std::fprintf(stderr,
               "%s: no PMIx server found %s%s: %s\n"
               "%s: is the server running, and does it accept tools (PMIX_SERVER_TOOL_SUPPORT)?\n",
               tool, sought.c_str(), where.c_str(), PMIx_Error_string(rc), tool);
  return rc;
}

query_answer::~query_answer() { PMIX_INFO_FREE(results, nresults); }

const pmix_info_t* query_answer::find(const std::string& key) const {
  for (size_t k = 0; results != nullptr && k < nresults; ++k)
    if (PMIX_CHECK_KEY(&results[k], key.c_str())) return &results[k];
  return nullptr;
}

pmix_status_t query(const std::vector<std::string>& keys, const std::vector<pmix_info_t>& qualifiers,
                    query_answer& out) {
  std::vector<std::string> full;
  for (const auto& k : keys) full.push_back(attribute_key(k));
  std::vector<char*> argv;
  for (auto& k : full) argv.push_back(const_cast<char*>(k.c_str()));
  argv.push_back(nullptr);
  pmix_query_t q;
  PMIX_QUERY_CONSTRUCT(&q);
  q.keys = argv.data();
  q.qualifiers = qualifiers.empty() ? nullptr : const_cast<pmix_info_t*>(qualifiers.data());
  q.nqual = qualifiers.size();
  out.status = PMIx_Query_info(&q, 1, &out.results, &out.nresults);
  return out.status;  // q owns nothing: no destruct
}

int exit_code_of(pmix_status_t rc) {
  switch (rc) {
    case PMIX_SUCCESS: return exit_ok;
    case PMIX_ERR_NOT_SUPPORTED: return exit_not_supported;
    case PMIX_ERR_UNREACH:
    case PMIX_ERR_LOST_CONNECTION: return exit_no_server;
    default: return exit_failed;
  }
}

std::string attribute_key(const std::string& given) {
  const char* key = PMIx_Get_attribute_string(given.c_str());
  return key != nullptr ? key : given;
}

std::string attribute_name(const std::string& key) {
  const char* name = PMIx_Get_attribute_name(key.c_str());
  return name != nullptr ? name : key;
}

bool parse_status(const std::string& text, pmix_status_t& out) {
  long long n = 0;
  if (parse_long(text, INT_MIN, INT_MAX, n)) {
    out = static_cast<pmix_status_t>(n);
    return true;
  }
  if (text.empty()) return false;
  const std::string name =
      upper(text.compare(0, 5, "PMIX_") == 0 || text.compare(0, 5, "pmix_") == 0 ? text : "PMIX_" + text);
  // The library's names: every code it has a name for lies in this span
  // (the Standard's codes are above PMIX_EXTERNAL_ERR_BASE, -3000).
  for (pmix_status_t code = -3100; code <= 100; ++code)
    if (name == PMIx_Error_string(code)) {
      out = code;
      return true;
    }
  return false;
}

std::string status_text(pmix_status_t status) {
  const std::string name = PMIx_Error_string(status);
  if (name.compare(0, 5, "PMIX_") != 0) return std::to_string(status);
  return name + " (" + std::to_string(status) + ")";
}

bool parse_range(const std::string& text, pmix_data_range_t& out) {
  long long n = 0;
  if (parse_long(text, 0, PMIX_RANGE_PROC_LOCAL, n)) {
    out = static_cast<pmix_data_range_t>(n);
    return true;
  }
  for (const auto& r : kRanges)
    if (text == r.name || upper(text) == "PMIX_RANGE_" + upper(r.name)) {
      out = r.range;
      return true;
    }
  return false;
}

std::string range_name(pmix_data_range_t range) {
  for (const auto& r : kRanges)
    if (r.range == range) return r.name;
  return std::to_string(range);
}

bool parse_value(const std::string& text, pmix_value_t& out, std::string& error) {
  PMIX_VALUE_CONSTRUCT(&out);
  const auto colon = text.find(':');
  const std::string type = colon == std::string::npos ? "" : text.substr(0, colon);
  const std::string v = colon == std::string::npos ? text : text.substr(colon + 1);
  auto bad = [&](const char* what) {
    error = "'" + v + "' is not " + what;
    return false;
  };
  long long n = 0;
  unsigned long long u = 0;
  auto load = [&out](const void* data, pmix_data_type_t t) {
    PMIX_VALUE_LOAD(&out, data, t);
    return true;
  };
  if (type == "string") return load(v.c_str(), PMIX_STRING);
  if (type == "bool") {
    const bool yes = v == "true" || v == "yes" || v == "1";
    if (!yes && v != "false" && v != "no" && v != "0") return bad("true or false");
    return load(&yes, PMIX_BOOL);
  }
  struct signed_type {
    const char* name;
    pmix_data_type_t type;
    long long min, max;
  };
  const signed_type signed_types[] = {{"int", PMIX_INT, INT_MIN, INT_MAX},
                                      {"int32", PMIX_INT32, INT32_MIN, INT32_MAX},
                                      {"int64", PMIX_INT64, INT64_MIN, INT64_MAX},
                                      {"pid", PMIX_PID, 1, INT_MAX}};
  for (const auto& s : signed_types) {
    if (type != s.name) continue;
    if (!parse_long(v, s.min, s.max, n)) return bad("a number of that type");
    const int i = static_cast<int>(n);
    const int32_t i32 = static_cast<int32_t>(n);
    const int64_t i64 = n;
    const pid_t p = static_cast<pid_t>(n);
    if (s.type == PMIX_INT) return load(&i, s.type);
    if (s.type == PMIX_INT32) return load(&i32, s.type);
    if (s.type == PMIX_INT64) return load(&i64, s.type);
    return load(&p, s.type);
  }
  struct unsigned_type {
    const char* name;
    pmix_data_type_t type;
    unsigned long long max;
  };
  const unsigned_type unsigned_types[] = {
      {"uint", PMIX_UINT, UINT_MAX},       {"uint8", PMIX_UINT8, UINT8_MAX},
      {"uint16", PMIX_UINT16, UINT16_MAX}, {"uint32", PMIX_UINT32, UINT32_MAX},
      {"uint64", PMIX_UINT64, UINT64_MAX}, {"size", PMIX_SIZE, SIZE_MAX}};
  for (const auto& s : unsigned_types) {
    if (type != s.name) continue;
    if (!parse_unsigned(v, s.max, u)) return bad("a number of that type");
    const unsigned ui = static_cast<unsigned>(u);
    const uint8_t u8 = static_cast<uint8_t>(u);
    const uint16_t u16 = static_cast<uint16_t>(u);
    const uint32_t u32 = static_cast<uint32_t>(u);
    const uint64_t u64 = u;
    const size_t sz = static_cast<size_t>(u);
    switch (s.type) {
      case PMIX_UINT: return load(&ui, s.type);
      case PMIX_UINT8: return load(&u8, s.type);
      case PMIX_UINT16: return load(&u16, s.type);
      case PMIX_UINT32: return load(&u32, s.type);
      case PMIX_UINT64: return load(&u64, s.type);
      default: return load(&sz, s.type);
    }
  }
  if (type == "double") {
    errno = 0;
    char* end = nullptr;
    const double d = std::strtod(v.c_str(), &end);
    if (v.empty() || errno != 0 || *end != '\0') return bad("a number");
    return load(&d, PMIX_DOUBLE);
  }
  if (type == "rank") {
    pmix_rank_t r = 0;
    if (v == "*" || v == "wildcard")
      r = PMIX_RANK_WILDCARD;
    else if (parse_unsigned(v, PMIX_RANK_VALID - 1, u))
      r = static_cast<pmix_rank_t>(u);
    else
      return bad("a rank");
    return load(&r, PMIX_PROC_RANK);
  }
  if (type == "status") {
    pmix_status_t st = 0;
    if (!parse_status(v, st)) return bad("a status");
    return load(&st, PMIX_STATUS);
  }
  if (type == "proc") {
    const auto sep = v.rfind(':');
    pmix_proc_t p;
    PMIX_PROC_CONSTRUCT(&p);
    if (sep == std::string::npos || sep == 0 || sep > PMIX_MAX_NSLEN) return bad("nspace:rank");
    const std::string rank = v.substr(sep + 1);
    if (rank == "*")
      p.rank = PMIX_RANK_WILDCARD;
    else if (parse_unsigned(rank, PMIX_RANK_VALID - 1, u))
      p.rank = static_cast<pmix_rank_t>(u);
    else
      return bad("nspace:rank");
    PMIX_LOAD_NSPACE(p.nspace, v.substr(0, sep).c_str());
    return load(&p, PMIX_PROC);
  }
  // No type, or text before a ':' that is no type: the whole text is a string.
  return load(text.c_str(), PMIX_STRING);
}

bool parse_info(const std::string& text, pmix_info_t& out, std::string& error) {
  PMIX_INFO_CONSTRUCT(&out);
  const auto eq = text.find('=');
  if (eq == std::string::npos || eq == 0) {
    error = "'" + text + "' is not KEY=VALUE";
    return false;
  }
  const std::string key = attribute_key(text.substr(0, eq));
  if (key.size() > PMIX_MAX_KEYLEN) {
    error = "the key '" + key + "' is longer than " + std::to_string(PMIX_MAX_KEYLEN) + " characters";
    return false;
  }
  pmix_value_t v;
  if (!parse_value(text.substr(eq + 1), v, error)) {
    PMIX_VALUE_DESTRUCT(&v);
    return false;
  }
  PMIX_LOAD_KEY(out.key, key.c_str());
  out.value = v;  // the info takes over what the value holds
  return true;
}

std::string format_value(const pmix_value_t& v, int indent) {
  char buf[64];
  switch (v.type) {
    case PMIX_UNDEF: return "(no value)";
    case PMIX_BOOL: return v.data.flag ? "true" : "false";
    case PMIX_BYTE: return std::to_string(v.data.byte);
    case PMIX_STRING: return v.data.string != nullptr ? v.data.string : "";
    case PMIX_SIZE: return std::to_string(v.data.size);
    case PMIX_PID: return std::to_string(v.data.pid);
    case PMIX_INT: return std::to_string(v.data.integer);
    case PMIX_INT8: return std::to_string(v.data.int8);
    case PMIX_INT16: return std::to_string(v.data.int16);
    case PMIX_INT32: return std::to_string(v.data.int32);
    case PMIX_INT64: return std::to_string(v.data.int64);
    case PMIX_UINT: return std::to_string(v.data.uint);
    case PMIX_UINT8: return std::to_string(v.data.uint8);
    case PMIX_UINT16: return std::to_string(v.data.uint16);
    case PMIX_UINT32: return std::to_string(v.data.uint32);
    case PMIX_UINT64: return std::to_string(v.data.uint64);
    case PMIX_FLOAT: std::snprintf(buf, sizeof buf, "%g", static_cast<double>(v.data.fval)); return buf;
    case PMIX_DOUBLE: std::snprintf(buf, sizeof buf, "%g", v.data.dval); return buf;
    case PMIX_TIME: return std::to_string(static_cast<long long>(v.data.time));
    case PMIX_TIMEVAL:
      std::snprintf(buf, sizeof buf, "%lld.%06ld", static_cast<long long>(v.data.tv.tv_sec),
                    static_cast<long>(v.data.tv.tv_usec));
      return buf;
    case PMIX_STATUS: return status_text(v.data.status);
    case PMIX_PROC_RANK: return rank_text(v.data.rank);
    case PMIX_PROC: return v.data.proc != nullptr ? proc_text(*v.data.proc) : "(no process)";
    case PMIX_DATA_RANGE: return range_name(v.data.range);
    case PMIX_PROC_STATE: return PMIx_Proc_state_string(v.data.state);
    case PMIX_PERSIST: return PMIx_Persistence_string(v.data.persist);
    case PMIX_JOB_STATE: return PMIx_Job_state_string(v.data.jstate);
    case PMIX_BYTE_OBJECT:
    case PMIX_COMPRESSED_BYTE_OBJECT: return "(" + std::to_string(v.data.bo.size) + " bytes)";
    case PMIX_DATA_ARRAY: {
      const pmix_data_array_t* a = v.data.darray;
      if (a == nullptr) return "(no array)";
      std::string out =
          std::string("array of ") + std::to_string(a->size) + " " + PMIx_Data_type_string(a->type);
      const std::string pad(static_cast<std::size_t>(indent + 2), ' ');
      for (std::size_t k = 0; a->array != nullptr && k < a->size; ++k)
        out += "\n" + pad + element_text(*a, k, indent + 2);
      return out;
    }
    default: break;
  }
  // Anything else: the library's own readable form.
  char* text = PMIx_Value_string(&v);
  std::string out = text != nullptr ? text : PMIx_Data_type_string(v.type);
  std::free(text);
  while (!out.empty() && (out.back() == '\n' || out.back() == ' ')) out.pop_back();
  return out;
}

std::string format_info(const pmix_info_t& info, int indent) {
  return key_text(info.key) + ": " + format_value(info.value, indent);
}

std::vector<std::string> split(const std::string& text, char sep) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (start <= text.size()) {
    auto end = text.find(sep, start);
    if (end == std::string::npos) end = text.size();
    if (end > start) out.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  return out;
}

}  // namespace pmix_cli
