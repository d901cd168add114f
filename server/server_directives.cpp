#include "server/server_directives.hpp"

#include <pmix_server.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <set>

#include "common/directives.hpp"
#include "common/module_copy.hpp"
#include "common/supported.hpp"

namespace pmix::server {
namespace {

// Every directive of 20.2.247.4 (and the ones PMIx_server_init may also be
// given that need nothing from us). Anything else is ignored unless marked
// PMIX_INFO_REQD.
const std::set<std::string>& known_directives() {
  static const std::set<std::string> keys = [] {
    std::set<std::string> k;
    for (auto key : supported::server_init) k.emplace(key);
    return k;
  }();
  return keys;
}

// A rank given as text: a simple non-negative number below PMIX_RANK_VALID.
bool parse_rank(const std::string& text, rank_t& out) {
  if (text.empty() || text.size() > 10) return false;
  std::uint64_t v = 0;
  for (char c : text) {
    if (c < '0' || c > '9') return false;
    v = v * 10 + static_cast<unsigned>(c - '0');
  }
  if (v >= rank_valid_limit) return false;
  out = static_cast<rank_t>(v);
  return true;
}

std::vector<std::string> split(const std::string& text) {
  std::vector<std::string> out;
  std::size_t start = 0;
  for (;;) {
    const auto comma = text.find(',', start);
    auto item = text.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    item.erase(0, item.find_first_not_of(" \t"));
    item.erase(item.find_last_not_of(" \t") + 1);
    if (!item.empty()) out.push_back(item);
    if (comma == std::string::npos) return out;
    start = comma + 1;
  }
}

// A port directive: an integer (0 or -1: any) or a string of ports and ranges.
bool port_text(const value& v, std::string& out) {
  if (const auto* s = v.as_string()) {
    out = *s;
    return true;
  }
  if (auto i = v.as_int()) {
    out = *i < 0 ? "0" : std::to_string(*i);
    return *i >= -1 && *i <= 65535;
  }
  return false;
}

bool port_list_syntax(const std::string& text) {
  if (text == "-1" || text == "0") return true;
  const auto items = split(text);
  if (items.empty()) return false;
  for (const auto& item : items) {
    const auto dash = item.find('-');
    auto number = [](const std::string& s) {
      if (s.empty() || s.size() > 5 || !std::all_of(s.begin(), s.end(), ::isdigit)) return false;
      return std::stoul(s) <= 65535;
    };
    if (dash == std::string::npos) {
      if (!number(item)) return false;
    } else if (!number(item.substr(0, dash)) || !number(item.substr(dash + 1)) ||
               std::stoul(item.substr(0, dash)) > std::stoul(item.substr(dash + 1))) {
      return false;
    }
  }
  return true;
}

std::string first_of(const env_fn& getenv, std::initializer_list<const char*> names,
                     const std::string& fallback) {
  for (const char* n : names)
    if (const char* v = getenv(n); v != nullptr && *v != '\0') return v;
  return fallback;
}

}  // namespace

std::string tmpdir_from_env(const env_fn& getenv, bool system) {
  return first_of(getenv, {system ? "PMIX_SYSTEM_TMPDIR" : "PMIX_SERVER_TMPDIR", "TMPDIR", "TEMP", "TMP"},
                  "/tmp");
}

bool valid_cpu_list(const std::string& text) {
  const auto items = split(text);
  if (items.empty()) return false;
  for (const auto& item : items) {
    const auto dash = item.find('-');
    auto number = [](const std::string& s) {
      return !s.empty() && s.size() <= 6 && std::all_of(s.begin(), s.end(), ::isdigit);
    };
    if (dash == std::string::npos ? !number(item)
                                  : !number(item.substr(0, dash)) || !number(item.substr(dash + 1)))
      return false;
  }
  return true;
}

bool module_slots(const info& d, std::uint32_t& out, std::string& error) {
  const auto n = d.val.as_uint();
  if (!n || !module_copy::valid_slots(*n)) {
    error = std::string{PMIX_CXX_SERVER_MODULE_SLOTS} +
            " must be 28 (OpenPMIx 4.2's module), 29 (5.0's) or 32 (6.0's and ours)";
    return false;
  }
  out = static_cast<std::uint32_t>(*n);
  return true;
}

pmix_status_t read_settings(const info_list& directives, const pmix_topology_t* topology,
                            const env_fn& getenv, const std::string& hostname, pid_t pid,
                            settings& s, std::string& error) {
  s = settings{};
  s.hostname = hostname;
  s.server = proc_id{"pmix-server." + hostname + "." + std::to_string(pid), 0};
  if (const char* ns = getenv("PMIX_SERVER_NSPACE"); ns != nullptr && *ns != '\0') s.server.nspace = ns;
  if (const char* r = getenv("PMIX_SERVER_RANK"); r != nullptr && *r != '\0') {
    if (!parse_rank(r, s.server.rank)) {
      error = std::string{"environment variable PMIX_SERVER_RANK='"} + r +
              "' is not a simple non-negative number";
      return PMIX_ERR_BAD_PARAM;
    }
  }
  s.tmpdir = tmpdir_from_env(getenv, false);
  s.system_tmpdir = tmpdir_from_env(getenv, true);

  bool bools_ok = true;
  auto flag = [&](const info& d) {
    if (d.val.type != PMIX_BOOL && d.val.type != PMIX_UNDEF && !d.val.as_int() && !d.val.as_string())
      bools_ok = false;
    return d.val.truthy();
  };
  auto text = [&](const info& d, std::string& out) {
    const auto* t = d.val.as_string();
    if (t == nullptr || t->empty()) {
      error = d.key + " must be a non-empty string";
      return false;
    }
    out = *t;
    return true;
  };
  bool include_given = false, exclude_given = false;
  for (const auto& d : directives) {
    const auto& k = d.key;
    if (k == PMIX_SERVER_NSPACE) {
      if (!text(d, s.server.nspace) || s.server.nspace.size() > PMIX_MAX_NSLEN) {
        error = "PMIX_SERVER_NSPACE must be a non-empty string of at most 255 bytes";
        return PMIX_ERR_BAD_PARAM;
      }
    } else if (k == PMIX_SERVER_RANK) {
      const auto r = d.val.as_uint();
      if (!r || *r >= rank_valid_limit) {
        error = "PMIX_SERVER_RANK must be a valid rank";
        return PMIX_ERR_BAD_PARAM;
      }
      s.server.rank = static_cast<rank_t>(*r);
    } else if (k == PMIX_SERVER_TMPDIR) {
      if (!text(d, s.tmpdir)) return PMIX_ERR_BAD_PARAM;
    } else if (k == PMIX_SYSTEM_TMPDIR) {
      if (!text(d, s.system_tmpdir)) return PMIX_ERR_BAD_PARAM;
    } else if (k == PMIX_HOSTNAME) {
      if (!text(d, s.hostname)) return PMIX_ERR_BAD_PARAM;
    } else if (k == PMIX_SERVER_TOOL_SUPPORT) {
      s.tool_support = flag(d);
    } else if (k == PMIX_SERVER_SYSTEM_SUPPORT) {
      s.system_support = flag(d);
    } else if (k == PMIX_SERVER_SESSION_SUPPORT) {
      s.session_support = flag(d);
    } else if (k == PMIX_SERVER_GATEWAY) {
      s.gateway = flag(d);
    } else if (k == PMIX_SERVER_SCHEDULER) {
      s.scheduler = flag(d);
    } else if (k == PMIX_SERVER_SYS_CONTROLLER) {
      s.sys_controller = flag(d);
    } else if (k == PMIX_SERVER_REMOTE_CONNECTIONS) {
      s.remote_connections = flag(d);
    } else if (k == PMIX_SERVER_ALLOW_FOREIGN_TOOLS) {
      s.foreign_tools = flag(d);
    } else if (k == PMIX_ALLOW_CLIENT_CLONES) {
      s.allow_clones = flag(d);
    } else if (k == PMIX_LAUNCHER_RENDEZVOUS_FILE) {
      if (!text(d, s.launcher_rendezvous)) return PMIX_ERR_BAD_PARAM;
      if (s.launcher_rendezvous[0] != '/') {
        error = "PMIX_LAUNCHER_RENDEZVOUS_FILE must be an absolute path";
        return PMIX_ERR_BAD_PARAM;
      }
    } else if (k == PMIX_TCP_REPORT_URI) {
      if (!text(d, s.report_uri)) return PMIX_ERR_BAD_PARAM;
    } else if (k == PMIX_TCP_IF_INCLUDE || k == PMIX_TCP_IF_EXCLUDE) {
      std::string list;
      if (!text(d, list)) return PMIX_ERR_BAD_PARAM;
      (k == PMIX_TCP_IF_INCLUDE ? s.if_include : s.if_exclude) = split(list);
      (k == PMIX_TCP_IF_INCLUDE ? include_given : exclude_given) = true;
      s.tcp_requested = true;
    } else if (k == PMIX_TCP_IPV4_PORT || k == PMIX_TCP_IPV6_PORT) {
      std::string ports;
      if (!port_text(d.val, ports) || !port_list_syntax(ports)) {
        error = k + " must be a port (0 or -1: any) or a list of ports and ranges";
        return PMIX_ERR_BAD_PARAM;
      }
      (k == PMIX_TCP_IPV4_PORT ? s.ipv4_ports : s.ipv6_ports) = ports == "-1" ? "0" : ports;
      s.tcp_requested = true;
    } else if (k == PMIX_TCP_DISABLE_IPV4) {
      s.disable_ipv4 = flag(d);
    } else if (k == PMIX_TCP_DISABLE_IPV6) {
      s.disable_ipv6 = flag(d);
    } else if (k == PMIX_TOPOLOGY2) {
      if (topology == nullptr) {
        error = "PMIX_TOPOLOGY2 must point to a topology";
        return PMIX_ERR_BAD_PARAM;
      }
      if (topology->source == nullptr || std::strncmp(topology->source, "hwloc", 5) != 0 ||
          topology->topology == nullptr) {
        // Not one we can read: the server discovers the node itself.
        if (directives::unsupported("PMIx_server_init", k, d.flags, "only hwloc topologies can be used") !=
            PMIX_SUCCESS) {
          error = "PMIX_TOPOLOGY2 (required): only hwloc topologies are supported";
          return PMIX_ERR_NOT_SUPPORTED;
        }
      } else {
        s.topology = topology;
      }
    } else if (k == PMIX_SERVER_SHARE_TOPOLOGY) {
      s.share_topology = flag(d);
    } else if (k == PMIX_HOMOGENEOUS_SYSTEM) {
      s.homogeneous = flag(d);
    } else if (k == PMIX_SERVER_ENABLE_MONITORING) {
      // Hosts ask for it by default (Open MPI's mpirun does): without
      // monitoring capabilities the server runs unmonitored, unless the
      // host requires them.
      if (flag(d) && directives::unsupported("PMIx_server_init", k, d.flags,
                                             "this server has no monitoring capabilities") != PMIX_SUCCESS) {
        error = "PMIX_SERVER_ENABLE_MONITORING (required): this server has no monitoring capabilities";
        return PMIX_ERR_NOT_SUPPORTED;
      }
    } else if (k == PMIX_EXTERNAL_PROGRESS) {
      s.external_progress = flag(d);
    } else if (k == PMIX_CXX_PROGRESS_FD) {
      const auto where = d.val.as_uint();
      if (d.val.type != PMIX_POINTER || !where || *where == 0) {
        error = std::string{PMIX_CXX_PROGRESS_FD} + " must point to an int (PMIX_POINTER)";
        return PMIX_ERR_BAD_PARAM;
      }
      s.progress_fd = reinterpret_cast<int*>(static_cast<std::uintptr_t>(*where));
    } else if (k == PMIX_CXX_FAULTS_ATTR) {
      if (!text(d, s.faults)) return PMIX_ERR_BAD_PARAM;
    } else if (k == PMIX_CXX_FAULTS_SEED_ATTR) {
      const auto seed = d.val.as_uint();
      if (!seed) {
        error = std::string{PMIX_CXX_FAULTS_SEED_ATTR} + " must be an unsigned number";
        return PMIX_ERR_BAD_PARAM;
      }
      s.faults_seed = *seed;
    } else if (k == PMIX_CXX_SERVER_MODULE_SLOTS) {
      if (!module_slots(d, s.module_slots, error)) return PMIX_ERR_BAD_PARAM;
    } else if (k == PMIX_CXX_HOST_FREES_FENCE_DATA) {
      s.host_frees_fence_data = flag(d);
    } else if (k == PMIX_SINGLETON) {
      std::string id;
      if (!text(d, id)) return PMIX_ERR_BAD_PARAM;
      const auto dot = id.rfind('.');
      rank_t r = 0;
      if (dot == std::string::npos || dot == 0 || !parse_rank(id.substr(dot + 1), r) ||
          dot > PMIX_MAX_NSLEN) {
        error = "PMIX_SINGLETON must be of the form nspace.rank: '" + id + "'";
        return PMIX_ERR_BAD_PARAM;
      }
      s.singleton = proc_id{id.substr(0, dot), r};
    } else if (k == PMIX_IOF_LOCAL_OUTPUT) {
      s.iof_local_output = flag(d);
    } else if (k == PMIX_BIND_PROGRESS_THREAD) {
      if (!text(d, s.bind_cpus)) return PMIX_ERR_BAD_PARAM;
      if (!valid_cpu_list(s.bind_cpus)) {
        error = "PMIX_BIND_PROGRESS_THREAD must be a CPU list such as 0-3,8: '" + s.bind_cpus + "'";
        return PMIX_ERR_BAD_PARAM;
      }
    } else if (k == PMIX_BIND_REQUIRED) {
      s.bind_required = flag(d);
    } else if (k == PMIX_EXTERNAL_AUX_EVENT_BASE) {
      // Accepted: the library needs no auxiliary event base (it captures no
      // signals), so there is nothing to apply it to.
      s.aux_event_base = true;
    } else if (known_directives().count(k) == 0 &&
               directives::unsupported("PMIx_server_init", k, d.flags, "not a directive of this server") !=
                   PMIX_SUCCESS) {
      error = "required directive " + k + " is not supported by this server";
      return PMIX_ERR_NOT_SUPPORTED;
    }
    if (!bools_ok) {
      error = k + " must be a bool";
      return PMIX_ERR_BAD_PARAM;
    }
  }
  if (include_given && exclude_given) {
    error = "PMIX_TCP_IF_INCLUDE and PMIX_TCP_IF_EXCLUDE cannot be combined";
    return PMIX_ERR_BAD_PARAM;
  }
  if (s.remote_connections) s.tcp_requested = true;
  if (s.tcp_requested && s.disable_ipv4 && s.disable_ipv6) {
    error = "TCP connections were asked for with both PMIX_TCP_DISABLE_IPV4 and PMIX_TCP_DISABLE_IPV6";
    return PMIX_ERR_INIT;
  }
  // System and session support take effect only with tool support.
  if (!s.tool_support) s.system_support = s.session_support = false;

  // The fault plane (docs/fault-injection.md): the attributes first, then
  // the environment.
  if (s.faults.empty()) s.faults = first_of(getenv, {"PMIX_CXX_FAULTS"}, "");
  if (const char* seed = getenv("PMIX_CXX_FAULTS_SEED"); seed != nullptr && *seed != '\0' && s.faults_seed == 0) {
    char* stop = nullptr;
    errno = 0;
    s.faults_seed = std::strtoull(seed, &stop, 10);
    if (*stop != '\0' || errno != 0) {
      error = std::string{"PMIX_CXX_FAULTS_SEED='"} + seed + "' must be an unsigned number";
      return PMIX_ERR_BAD_PARAM;
    }
  }

  s.scheduler_policy = first_of(getenv, {"PMIX_CXX_SCHEDULER"}, "sharing");
  if (s.scheduler_policy != "sharing" && s.scheduler_policy != "stealing") {
    error = "PMIX_CXX_SCHEDULER must be 'sharing' or 'stealing'";
    return PMIX_ERR_BAD_PARAM;
  }
  const auto threads = std::atoi(first_of(getenv, {"PMIX_CXX_THREADS"}, "2").c_str());
  if (threads < 1 || threads > 256) {
    error = "PMIX_CXX_THREADS must be between 1 and 256";
    return PMIX_ERR_BAD_PARAM;
  }
  s.threads = static_cast<std::size_t>(threads);
  const auto spin = first_of(getenv, {"PMIX_CXX_SERVER_SPIN_US"}, "50");
  char* end = nullptr;
  const long spin_us = std::strtol(spin.c_str(), &end, 10);
  if (*end != '\0' || spin_us < 0 || spin_us > 10000) {
    error = "PMIX_CXX_SERVER_SPIN_US must be a number of microseconds between 0 and 10000";
    return PMIX_ERR_BAD_PARAM;
  }
  s.loop_spin = std::chrono::microseconds{spin_us};
  // The limits (docs/security.md): a number within its range, else the
  // server does not start (a typo must not leave a server unbounded).
  struct bound {
    const char* name;
    unsigned long long low, high;
    std::function<void(unsigned long long)> set;
  };
  const bound bounds[] = {
      {"PMIX_CXX_MAX_FRAME", 4096, 1ull << 30, [&](unsigned long long v) { s.max_frame = static_cast<std::uint32_t>(v); }},
      {"PMIX_CXX_MAX_HANDSHAKE_FRAME", 1024, 1ull << 30,
       [&](unsigned long long v) { s.max_handshake_frame = static_cast<std::uint32_t>(v); }},
      {"PMIX_CXX_MAX_SEND_BACKLOG", 4096, 1ull << 40, [&](unsigned long long v) { s.max_send_backlog = v; }},
      {"PMIX_CXX_MAX_UNAUTHENTICATED", 1, 1000000, [&](unsigned long long v) { s.max_unauthenticated = v; }},
      {"PMIX_CXX_HANDSHAKE_TIMEOUT_MS", 10, 3600000,
       [&](unsigned long long v) { s.handshake_timeout_ms = static_cast<std::uint32_t>(v); }},
      {"PMIX_CXX_HANDSHAKE_GRACE_MS", 1, 3600000,
       [&](unsigned long long v) { s.handshake_grace_ms = static_cast<std::uint32_t>(v); }},
      {"PMIX_CXX_MAX_COMMIT", 4096, 1ull << 40, [&](unsigned long long v) { s.max_commit = v; }},
      {"PMIX_CXX_MAX_COMMIT_JOB", 4096, 1ull << 44, [&](unsigned long long v) { s.max_commit_job = v; }},
      {"PMIX_CXX_MAX_REQUESTS", 1, 1u << 30, [&](unsigned long long v) { s.max_requests = v; }},
      {"PMIX_CXX_MAX_REQUESTS_JOB", 1, 1u << 30, [&](unsigned long long v) { s.max_requests_job = v; }},
      {"PMIX_CXX_MAX_REQUEST_BYTES", 4096, 1ull << 40, [&](unsigned long long v) { s.max_request_bytes = v; }},
      {"PMIX_CXX_MAX_REQUEST_BYTES_JOB", 4096, 1ull << 44, [&](unsigned long long v) { s.max_request_bytes_job = v; }},
      {"PMIX_CXX_MAX_SEND_BACKLOG_JOB", 4096, 1ull << 44, [&](unsigned long long v) { s.max_send_backlog_job = v; }},
      {"PMIX_CXX_MAX_CREDENTIAL_LIFETIME_S", 1, 31536000,
       [&](unsigned long long v) { s.max_credential_lifetime_s = static_cast<std::uint32_t>(v); }},
  };
  for (const auto& b : bounds) {
    const char* text = getenv(b.name);
    if (text == nullptr || *text == '\0') continue;
    char* stop = nullptr;
    errno = 0;
    const auto v = std::strtoull(text, &stop, 10);
    if (*stop != '\0' || errno != 0 || v < b.low || v > b.high) {
      error = std::string{b.name} + "='" + text + "' must be a number from " + std::to_string(b.low) + " to " +
              std::to_string(b.high);
      return PMIX_ERR_BAD_PARAM;
    }
    b.set(v);
  }
  if (s.max_handshake_frame > s.max_frame) s.max_handshake_frame = s.max_frame;
  return PMIX_SUCCESS;
}

}  // namespace pmix::server
