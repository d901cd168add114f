// The tool API (pmix_tool.h). Reference counted separately from PMIx_Init
// (spec 004, "Tool-Side Teardown"); a tool shares the client session, so the
// client calls (PMIx_Get, ...) work after PMIx_tool_init. Every init reads
// its directives and the environment afresh -- including the temporary
// directories it searches -- and the last finalize of both kinds tears the
// session down.
//
// Finding the server, in order: PMIX_SERVER_URI / PMIX_TCP_URI; the
// environment a launcher gave its child (PMIX_SERVER_URI41/4); otherwise the
// rendezvous files servers write (spec 000, 20.2.247.6.1): by
// PMIX_SERVER_PIDINFO, by PMIX_SERVER_NSPACE, the system server
// (PMIX_CONNECT_TO_SYSTEM, or first with PMIX_CONNECT_SYSTEM_FIRST), else the
// session server and then any server of this node. A file's URI is tried
// first, then its alternatives. PMIX_CONNECT_MAX_RETRIES and
// PMIX_CONNECT_RETRY_DELAY repeat the search. PMIX_TOOL_DO_NOT_CONNECT makes
// a standalone tool.
#include <dirent.h>
#include <pmix.h>
#include <pmix_tool.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <mutex>
#include <string>
#include <thread>

#include "api/blocking.hpp"
#include "api/convert.hpp"
#include "api/events.hpp"
#include "api/library.hpp"
#include "api/rendezvous.hpp"
#include "api/server_directives.hpp"
#include "common/host.hpp"
#include "common/log.hpp"

namespace pmix::api {

pmix_status_t end_session(std::shared_ptr<client::session> s);

namespace {

struct tool_directives {
  proc_id proposed;  // empty nspace: the server assigns one
  bool standalone = false;
  std::string uri;
  // The rendezvous search.
  std::string tmpdir, system_tmpdir;
  pid_t server_pid = 0;
  std::string server_nspace;
  bool to_system = false, system_first = false;
  std::uint32_t retries = 0, delay_s = 0;
};

const char* env_value(const char* name) {
  const char* v = std::getenv(name);
  return v != nullptr && *v != '\0' ? v : nullptr;
}

pmix_status_t read_directives(const info_list& directives, tool_directives& out) {
  const server::env_fn env = [](const char* n) { return std::getenv(n); };
  out.tmpdir = server::tmpdir_from_env(env, false);
  out.system_tmpdir = server::tmpdir_from_env(env, true);
  // A tool launched by a PMIx server as one of its clients knows who it is.
  if (const char* ns = env_value("PMIX_NAMESPACE")) {
    const char* rank = env_value("PMIX_RANK");
    out.proposed = proc_id{ns, rank == nullptr ? 0u : static_cast<rank_t>(std::strtoul(rank, nullptr, 10))};
  }
  if (const char* uri = env_value("PMIX_SERVER_URI41")) out.uri = uri;
  else if (const char* uri4 = env_value("PMIX_SERVER_URI4")) out.uri = uri4;
  auto text = [](const info& d, std::string& dest) {
    const auto* s = d.val.as_string();
    if (s == nullptr || s->empty()) {
      log::error("api", "PMIx_tool_init: ", d.key, " must be a non-empty string");
      return false;
    }
    dest = *s;
    return true;
  };
  for (const auto& d : directives) {
    if (d.key == PMIX_TOOL_NSPACE) {
      if (!text(d, out.proposed.nspace) || out.proposed.nspace.size() > PMIX_MAX_NSLEN)
        return PMIX_ERR_BAD_PARAM;
    } else if (d.key == PMIX_TOOL_RANK) {
      const auto r = d.val.as_uint();
      if (!r || *r >= rank_valid_limit) {
        log::error("api", "PMIx_tool_init: PMIX_TOOL_RANK must be a valid rank");
        return PMIX_ERR_BAD_PARAM;
      }
      out.proposed.rank = static_cast<rank_t>(*r);
    } else if (d.key == PMIX_TOOL_DO_NOT_CONNECT) {
      out.standalone = d.val.truthy();
    } else if (d.key == PMIX_SERVER_URI || d.key == PMIX_TCP_URI) {
      if (!text(d, out.uri)) return PMIX_ERR_BAD_PARAM;
    } else if (d.key == PMIX_SERVER_TMPDIR) {
      if (!text(d, out.tmpdir)) return PMIX_ERR_BAD_PARAM;
    } else if (d.key == PMIX_SYSTEM_TMPDIR) {
      if (!text(d, out.system_tmpdir)) return PMIX_ERR_BAD_PARAM;
    } else if (d.key == PMIX_SERVER_PIDINFO) {
      const auto p = d.val.as_int();
      if (!p || *p <= 0) {
        log::error("api", "PMIx_tool_init: PMIX_SERVER_PIDINFO must be a process id");
        return PMIX_ERR_BAD_PARAM;
      }
      out.server_pid = static_cast<pid_t>(*p);
    } else if (d.key == PMIX_SERVER_NSPACE) {
      if (!text(d, out.server_nspace)) return PMIX_ERR_BAD_PARAM;
    } else if (d.key == PMIX_CONNECT_TO_SYSTEM) {
      out.to_system = d.val.truthy();
    } else if (d.key == PMIX_CONNECT_SYSTEM_FIRST) {
      out.system_first = d.val.truthy();
    } else if (d.key == PMIX_CONNECT_MAX_RETRIES) {
      out.retries = static_cast<std::uint32_t>(d.val.as_uint().value_or(0));
    } else if (d.key == PMIX_CONNECT_RETRY_DELAY) {
      out.delay_s = static_cast<std::uint32_t>(d.val.as_uint().value_or(0));
    }
  }
  if (out.proposed.rank == rank_undef) out.proposed.rank = 0;
  return PMIX_SUCCESS;
}

// The rendezvous files to try, in order.
std::vector<std::string> candidate_files(const tool_directives& d) {
  const auto host = host_name();
  const std::string tool_prefix = d.tmpdir + "/pmix." + host + ".tool";
  const std::string system_file = d.system_tmpdir + "/pmix.sys." + host;
  if (d.server_pid > 0) return {tool_prefix + "." + std::to_string(d.server_pid)};
  if (!d.server_nspace.empty()) return {tool_prefix + "." + d.server_nspace};
  if (d.to_system) return {system_file};
  std::vector<std::string> out;
  if (d.system_first) out.push_back(system_file);
  out.push_back(tool_prefix);  // the session server
  // Then every server of this node, by PID.
  std::vector<std::pair<long, std::string>> by_pid;
  const std::string name_prefix = "pmix." + host + ".tool.";
  if (DIR* dir = ::opendir(d.tmpdir.c_str())) {
    while (auto* e = ::readdir(dir)) {
      const std::string name = e->d_name;
      if (name.compare(0, name_prefix.size(), name_prefix) != 0) continue;
      const auto suffix = name.substr(name_prefix.size());
      if (suffix.empty() || suffix.find_first_not_of("0123456789") != std::string::npos) continue;
      by_pid.emplace_back(std::stol(suffix), d.tmpdir + "/" + name);
    }
    ::closedir(dir);
  }
  std::sort(by_pid.begin(), by_pid.end());
  for (auto& [pid, path] : by_pid) out.push_back(std::move(path));
  return out;
}

pmix_status_t connect_tool(const std::string& uri, const tool_directives& d, const info_list& info,
                           std::shared_ptr<client::session>& out) {
  return client::session::connect(uri, client::role::tool, d.proposed, info, out, events::deliver);
}

// Finds a live server through the rendezvous files and connects to it.
pmix_status_t rendezvous(const tool_directives& d, const info_list& info,
                         std::shared_ptr<client::session>& out) {
  pmix_status_t last = PMIX_ERR_UNREACH;
  for (std::uint32_t attempt = 0; attempt <= d.retries; ++attempt) {
    if (attempt > 0) std::this_thread::sleep_for(std::chrono::seconds(d.delay_s));
    for (const auto& file : candidate_files(d)) {
      server::rendezvous_contents c;
      if (!server::read_file(file, c) || !server::process_alive(c.pid)) continue;
      std::vector<std::string> uris{c.uri};
      uris.insert(uris.end(), c.alt_uris.begin(), c.alt_uris.end());
      for (const auto& uri : uris) {
        last = connect_tool(uri, d, info, out);
        // Only an unreachable address makes the next one worth trying.
        if (last != PMIX_ERR_UNREACH) return last;
        log::debug("api", "PMIx_tool_init: ", uri, " (from ", file, ") is unreachable");
      }
    }
  }
  log::error("api", "PMIx_tool_init: no reachable server found (searched ", d.tmpdir,
             d.system_tmpdir != d.tmpdir ? " and " + d.system_tmpdir : std::string{}, ")");
  return last;
}

}  // namespace
}  // namespace pmix::api

using namespace pmix;
using namespace pmix::api;

extern "C" {

PMIX_EXPORT pmix_status_t PMIx_tool_init(pmix_proc_t* proc, pmix_info_t info[], size_t ninfo) {
  if (on_library_thread()) return refuse_blocking("PMIx_tool_init");
  auto& l = lib();
  std::lock_guard<std::mutex> guard{l.mutex};
  l.forget_if_forked();
  if (!l.session) {
    info_list directives;
    if (convert::from_c(info, ninfo, directives) != PMIX_SUCCESS) {
      log::error("api", "PMIx_tool_init: unreadable directives");
      return PMIX_ERR_BAD_PARAM;
    }
    tool_directives d;
    auto rc = read_directives(directives, d);
    if (rc != PMIX_SUCCESS) return rc;
    if (d.standalone) {
      if (d.proposed.nspace.empty())
        d.proposed.nspace = "tool." + host_name() + "." + std::to_string(getpid());
      l.session = client::session::singleton(d.proposed);
    } else if (!d.uri.empty()) {
      rc = connect_tool(d.uri, d, directives, l.session);
      if (rc != PMIX_SUCCESS) {
        log::error("api", "PMIx_tool_init: cannot connect to the server at '", d.uri, "': ",
                   PMIx_Error_string(rc));
        return rc;
      }
    } else {
      rc = rendezvous(d, directives, l.session);
      if (rc != PMIX_SUCCESS) return rc;
    }
    l.pid = getpid();
  }
  ++l.tool_refs;
  if (proc != nullptr) convert::to_c(l.session->self(), *proc);
  return PMIX_SUCCESS;
}

PMIX_EXPORT pmix_status_t PMIx_tool_finalize(void) {
  if (on_library_thread()) return refuse_blocking("PMIx_tool_finalize");
  std::shared_ptr<client::session> doomed;
  {
    auto& l = lib();
    std::lock_guard<std::mutex> guard{l.mutex};
    if (l.tool_refs == 0 || l.pid != getpid()) return PMIX_ERR_INIT;
    if (--l.tool_refs > 0 || l.client_refs > 0) return PMIX_SUCCESS;
    doomed = std::move(l.session);
    l.pid = 0;
  }
  return end_session(std::move(doomed));
}

}  // extern "C"
