// The tool API (pmix_tool.h). Reference counted separately from PMIx_Init
// (spec 004, "Tool-Side Teardown"); a tool shares the client session, so the
// client calls (PMIx_Get, ...) work after PMIx_tool_init. Every init reads
// its directives and the environment afresh -- including the temporary
// directories it searches -- and the last finalize of both kinds tears the
// sessions down.
//
// Several servers: PMIx_tool_attach_to_server opens one more session, found
// the way PMIx_tool_init finds its first (but not from a launcher's
// environment), with the tool's identity; the library keeps them in
// attachment order and points the client calls at the primary one
// (api/library.hpp, docs/architecture.md "Tools").
//
// Finding the server, in order: PMIX_SERVER_URI / PMIX_TCP_URI; the
// environment a launcher gave its child (PMIX_CXX_SERVER_URI, else
// PMIX_SERVER_URI41/4), unless a
// directive names the server (PID, namespace, system); otherwise the
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
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include "common/module_copy.hpp"
#include "api/blocking.hpp"
#include "api/convert.hpp"
#include "server/events.hpp"
#include "api/library.hpp"
#include "client/openpmix_wire.hpp"
#include "server/rendezvous.hpp"
#include "server/server_directives.hpp"
#include "common/host.hpp"
#include "common/log.hpp"

namespace pmix::api {

pmix_status_t close_session(const std::shared_ptr<client::session>& s);
pmix_status_t end_sessions(const std::vector<std::shared_ptr<client::session>>& doomed);

namespace {

// Which protocol a server speaks: ours (its rendezvous file, or
// PMIX_CXX_SERVER_URI), OpenPMIx's (its rendezvous file, or the
// PMIX_SERVER_URI* of a launcher of OpenPMIx's), or not known (a URI the
// tool was given).
enum class speaks { ours, openpmix, unknown };

struct tool_directives {
  proc_id proposed;  // empty nspace: the server assigns one
  bool standalone = false;
  bool primary = false;  // PMIX_PRIMARY_SERVER (attach)
  std::string uri;
  speaks uri_protocol = speaks::unknown;
  // The rendezvous search.
  std::string tmpdir, system_tmpdir;
  pid_t server_pid = 0;
  std::string server_nspace;
  std::string attachment_file;  // PMIX_TOOL_ATTACHMENT_FILE: one contact file, named
  bool to_system = false, system_first = false;
  std::uint32_t retries = 0, delay_s = 0;
};

const char* env_value(const char* name) {
  const char* v = std::getenv(name);
  return v != nullptr && *v != '\0' ? v : nullptr;
}

// `launched`: also what a launcher put in the environment (the first
// connection only: a later one is named by its directives).
pmix_status_t read_directives(const info_list& directives, bool launched, tool_directives& out) {
  const server::env_fn env = [](const char* n) { return std::getenv(n); };
  out.tmpdir = server::tmpdir_from_env(env, false);
  out.system_tmpdir = server::tmpdir_from_env(env, true);
  // A tool launched by a PMIx server as one of its clients knows who it is.
  if (const char* ns = env_value("PMIX_NAMESPACE"); launched && ns != nullptr) {
    const char* rank = env_value("PMIX_RANK");
    out.proposed = proc_id{ns, rank == nullptr ? 0u : static_cast<rank_t>(std::strtoul(rank, nullptr, 10))};
  }
  const char* call = launched ? "PMIx_tool_init" : "PMIx_tool_attach_to_server";
  auto text = [call](const info& d, std::string& dest) {
    const auto* s = d.val.as_string();
    if (s == nullptr || s->empty()) {
      log::error("api", call, ": ", d.key, " must be a non-empty string");
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
        log::error("api", call, ": PMIX_TOOL_RANK must be a valid rank");
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
        log::error("api", call, ": PMIX_SERVER_PIDINFO must be a process id");
        return PMIX_ERR_BAD_PARAM;
      }
      out.server_pid = static_cast<pid_t>(*p);
    } else if (d.key == PMIX_SERVER_NSPACE) {
      if (!text(d, out.server_nspace)) return PMIX_ERR_BAD_PARAM;
    } else if (d.key == PMIX_TOOL_ATTACHMENT_FILE) {
      // A server's contact file (a launcher's PMIX_LAUNCHER_RENDEZVOUS_FILE,
      // or a tool file of its tmpdir), read as the search reads them.
      if (!text(d, out.attachment_file)) return PMIX_ERR_BAD_PARAM;
    } else if (d.key == PMIX_CONNECT_TO_SYSTEM) {
      out.to_system = d.val.truthy();
    } else if (d.key == PMIX_CONNECT_SYSTEM_FIRST) {
      out.system_first = d.val.truthy();
    } else if (d.key == PMIX_CONNECT_MAX_RETRIES) {
      out.retries = static_cast<std::uint32_t>(d.val.as_uint().value_or(0));
    } else if (d.key == PMIX_CONNECT_RETRY_DELAY) {
      out.delay_s = static_cast<std::uint32_t>(d.val.as_uint().value_or(0));
    } else if (d.key == PMIX_PRIMARY_SERVER) {
      out.primary = d.val.truthy();
    }
  }
  // A launcher's environment names the server only when the directives
  // name none (as OpenPMIx: a tool told where to go goes there).
  const bool named = !out.uri.empty() || out.server_pid != 0 || !out.server_nspace.empty() ||
                     !out.attachment_file.empty() || out.to_system || out.system_first;
  if (launched && !named) {
    // As a client finds its server (api/client_api.cpp): OpenPMIx's
    // variables alone name a server of OpenPMIx's, unless a Unix socket.
    if (const char* ours = env_value("PMIX_CXX_SERVER_URI")) {
      out.uri = ours;
      out.uri_protocol = speaks::ours;
    } else if (const char* uri = env_value("PMIX_SERVER_URI41") ? env_value("PMIX_SERVER_URI41")
                                                                  : env_value("PMIX_SERVER_URI4")) {
      out.uri = uri;
      out.uri_protocol = out.uri.find(";uds://") != std::string::npos ? speaks::ours : speaks::openpmix;
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
  if (!d.attachment_file.empty()) return {d.attachment_file};
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
                           std::shared_ptr<client::session>& out, speaks protocol = speaks::ours,
                           const std::string& version = {}) {
  if (protocol == speaks::openpmix)
    return client::session::connect_openpmix(uri, client::role::tool, d.proposed, info, version, out,
                                             events::deliver);
  const auto rc = client::session::connect(uri, client::role::tool, d.proposed, info, out, events::deliver);
  // A server of OpenPMIx's closes a connection whose first frame is ours at
  // once (its header's length, read from our bytes, is above the 128 kB it
  // takes): a TCP address not known to be ours gets OpenPMIx's protocol then.
  if (rc != PMIX_ERR_LOST_CONNECTION || protocol != speaks::unknown || uri.find(";uds://") != std::string::npos)
    return rc;
  log::debug("api", "tool: the server at ", uri, " closed our handshake: trying OpenPMIx's protocol");
  return client::session::connect_openpmix(uri, client::role::tool, d.proposed, info, version, out,
                                           events::deliver);
}

// The server a URI names ("<nspace>.<rank>;<address>"), if it names one.
std::optional<proc_id> server_of(const std::string& uri) {
  proc_id p;
  if (!client::openpmix_wire::server_of(uri, p)) return std::nullopt;
  return p;
}

// The servers a tool is connected to: a candidate that is one of them is not
// connected to again.
using held_fn = std::function<bool(const proc_id&)>;

// Finds a live server through the rendezvous files and connects to it. A
// server in `held`, named by the directives, is the answer (`already`, no
// new session); found by the search, it is passed over [Standard 4.2,
// "Rendezvousing with a local server"].
pmix_status_t rendezvous(const tool_directives& d, const info_list& info, const held_fn& held,
                         std::shared_ptr<client::session>& out, std::optional<proc_id>& already) {
  const bool named = d.server_pid > 0 || !d.server_nspace.empty() || !d.attachment_file.empty() || d.to_system;
  pmix_status_t last = PMIX_ERR_UNREACH;
  for (std::uint32_t attempt = 0; attempt <= d.retries; ++attempt) {
    if (attempt > 0) std::this_thread::sleep_for(std::chrono::seconds(d.delay_s));
    for (const auto& file : candidate_files(d)) {
      server::rendezvous_contents c;
      std::string why;
      if (!server::read_trusted(file, c, why)) {
        // Absent is the usual case; a file that is there but untrusted is
        // someone else's, planted where a server's would be.
        struct stat there;
        if (::lstat(file.c_str(), &there) == 0 || file == d.attachment_file)
          log::warning("api", "tool: ignoring rendezvous file ", file, ": ", why);
        continue;
      }
      if (!server::process_alive(c.pid)) continue;
      if (const auto id = server_of(c.uri); id && held && held(*id)) {
        if (!named) continue;
        already = *id;
        return PMIX_SUCCESS;
      }
      std::vector<std::string> uris{c.uri};
      uris.insert(uris.end(), c.alt_uris.begin(), c.alt_uris.end());
      // A Unix socket first: the kernel names both ends, and it is the
      // faster (the first line names a TCP address OpenPMIx's tools can
      // read too; server/server_runtime.cpp, write_rendezvous).
      std::stable_partition(uris.begin(), uris.end(),
                            [](const std::string& u) { return u.find(";uds://") != std::string::npos; });
      for (const auto& uri : uris) {
        last = connect_tool(uri, d, info, out, c.openpmix ? speaks::openpmix : speaks::ours, c.version);
        // Only an unreachable address makes the next one worth trying.
        if (last != PMIX_ERR_UNREACH) return last;
        log::debug("api", "tool: ", uri, " (from ", file, ") is unreachable");
      }
    }
  }
  log::error("api", "no reachable PMIx server found for the tool (searched ", d.tmpdir,
             d.system_tmpdir != d.tmpdir ? " and " + d.system_tmpdir : std::string{}, ")");
  return last;
}

// Connects to the server the directives name by URI, else to the one the
// rendezvous search finds (see rendezvous() for `held` and `already`).
pmix_status_t find_server(const tool_directives& d, const info_list& info, const held_fn& held,
                          std::shared_ptr<client::session>& out, std::optional<proc_id>& already) {
  if (d.uri.empty()) return rendezvous(d, info, held, out, already);
  if (const auto id = server_of(d.uri); id && held && held(*id)) {
    already = *id;
    return PMIX_SUCCESS;
  }
  const char* version = env_value("PMIX_VERSION");
  const auto rc = connect_tool(d.uri, d, info, out, d.uri_protocol, version != nullptr ? version : "");
  if (rc != PMIX_SUCCESS)
    log::error("api", "cannot connect the tool to the server at '", d.uri, "': ", PMIx_Error_string(rc));
  return rc;
}

// The session a tool has while no server is its primary: its own identity,
// no server (calls that need one give PMIX_ERR_UNREACH).
std::shared_ptr<client::session> without_server(const proc_id& self) {
  return client::session::singleton(self, client::role::tool);
}

// PMIx_tool_attach_to_server's directives, read outside the library's lock.
pmix_status_t read_attach(const char* call, const pmix_info_t info[], size_t ninfo, info_list& directives,
                          tool_directives& d) {
  if (info == nullptr || ninfo == 0) {
    log::error("api", call, ": no directives to find a server by");
    return PMIX_ERR_BAD_PARAM;
  }
  if (convert::from_c(info, ninfo, directives) != PMIX_SUCCESS) {
    log::error("api", call, ": unreadable directives");
    return PMIX_ERR_BAD_PARAM;
  }
  return read_directives(directives, false, d);
}

// PMIx_tool_set_server's wait: PMIX_WAIT_FOR_CONNECTION for up to
// PMIX_TIMEOUT seconds (no timeout: no wait, as in OpenPMIx 4.2.2).
struct set_server_wait {
  bool wait = false;
  std::chrono::seconds timeout{0};
};

pmix_status_t read_set_server(const pmix_info_t info[], size_t ninfo, set_server_wait& out) {
  info_list directives;
  if (convert::from_c(info, ninfo, directives) != PMIX_SUCCESS) {
    log::error("api", "PMIx_tool_set_server: unreadable directives");
    return PMIX_ERR_BAD_PARAM;
  }
  for (const auto& d : directives) {
    if (d.key == PMIX_WAIT_FOR_CONNECTION) {
      out.wait = d.val.truthy();
    } else if (d.key == PMIX_TIMEOUT) {
      const auto t = d.val.as_int();
      if (!t) {
        log::error("api", "PMIx_tool_set_server: PMIX_TIMEOUT must be a number of seconds");
        return PMIX_ERR_BAD_PARAM;
      }
      out.timeout = std::chrono::seconds{std::max<std::int64_t>(*t, 0)};
    }
  }
  return PMIX_SUCCESS;
}

// Attaches one more session under the library's lock (`cycle`: the init cycle
// the search began in; `fresh` null: `already` is held). Sets the primary,
// the identities, and what the caller must close (outside the lock).
pmix_status_t adopt(std::uint64_t cycle, std::shared_ptr<client::session> fresh,
                    std::optional<proc_id> already, bool primary, proc_id& myproc, proc_id& server,
                    std::vector<std::shared_ptr<client::session>>& to_close) {
  auto& l = lib();
  if (!l.initialized() || l.cycle != cycle) {
    if (fresh) to_close.push_back(std::move(fresh));
    return PMIX_ERR_INIT;  // finalized meanwhile
  }
  if (fresh && l.connection_to(fresh->server())) {  // another thread attached it meanwhile
    already = fresh->server();
    to_close.push_back(std::move(fresh));
  }
  bool replaces_primary = false;
  std::shared_ptr<client::session> target;
  if (fresh) {
    // A lost connection to the same server goes: this one takes its place.
    auto& c = l.connections;
    for (auto it = c.begin(); it != c.end();) {
      if ((*it)->server() != fresh->server()) {
        ++it;
        continue;
      }
      replaces_primary = replaces_primary || *it == l.session;
      to_close.push_back(std::move(*it));
      it = c.erase(it);
    }
    c.push_back(fresh);
    l.connections_changed.notify_all();
    target = std::move(fresh);
  } else {
    target = l.connection_to(*already);
    if (!target) return PMIX_ERR_UNREACH;  // disconnected meanwhile
  }
  // Only PMIX_PRIMARY_SERVER moves the requests, as in OpenPMIx 4.2.2 (a
  // tool without a primary server stays so until it names one).
  if (replaces_primary || primary) l.session = target;
  myproc = target->self();
  server = target->server();
  return PMIX_SUCCESS;
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
    auto rc = read_directives(directives, true, d);
    if (rc != PMIX_SUCCESS) return rc;
    for (const auto& i : directives) {
      if (i.key != PMIX_CXX_SERVER_MODULE_SLOTS) continue;
      const auto n = i.val.as_uint();
      if (!n || !module_copy::valid_slots(*n)) {
        log::error("api", "PMIx_tool_init: " PMIX_CXX_SERVER_MODULE_SLOTS " must be 28, 29 or 32");
        return PMIX_ERR_BAD_PARAM;
      }
      l.tool_module_slots = static_cast<std::uint32_t>(*n);
    }
    if (d.standalone) {
      if (d.proposed.nspace.empty())
        d.proposed.nspace = "tool." + host_name() + "." + std::to_string(getpid());
      l.session = without_server(d.proposed);
    } else {
      std::optional<proc_id> none;
      rc = find_server(d, directives, {}, l.session, none);
      if (rc != PMIX_SUCCESS) return rc;
      l.connections.push_back(l.session);
    }
    l.pid = getpid();
    ++l.cycle;
  }
  ++l.tool_refs;
  if (proc != nullptr) convert::to_c(l.session->self(), *proc);
  return PMIX_SUCCESS;
}

PMIX_EXPORT pmix_status_t PMIx_tool_finalize(void) {
  if (on_library_thread()) return refuse_blocking("PMIx_tool_finalize");
  std::vector<std::shared_ptr<client::session>> doomed;
  {
    auto& l = lib();
    std::lock_guard<std::mutex> guard{l.mutex};
    if (l.tool_refs == 0 || l.pid != getpid()) return PMIX_ERR_INIT;
    if (--l.tool_refs > 0 || l.client_refs > 0) return PMIX_SUCCESS;
    doomed = l.take_sessions();
  }
  return end_sessions(doomed);
}

PMIX_EXPORT pmix_status_t PMIx_tool_attach_to_server(pmix_proc_t* myproc, pmix_proc_t* server,
                                                     pmix_info_t info[], size_t ninfo) {
  if (on_library_thread()) return refuse_blocking("PMIx_tool_attach_to_server");
  auto& l = lib();
  proc_id me;
  std::uint64_t cycle;
  std::vector<proc_id> held;
  {
    std::lock_guard<std::mutex> guard{l.mutex};
    if (!l.initialized()) return PMIX_ERR_INIT;
    me = l.session->self();
    cycle = l.cycle;
    for (const auto& c : l.connections)
      if (c->connected()) held.push_back(c->server());
  }
  if (myproc != nullptr) convert::to_c(me, *myproc);
  info_list directives;
  tool_directives d;
  if (const auto rc = read_attach("PMIx_tool_attach_to_server", info, ninfo, directives, d);
      rc != PMIX_SUCCESS)
    return rc;
  d.proposed = me;  // a tool keeps its identity across servers [Standard 4.2, 18.1]
  // Found and connected without the lock: other calls go on meanwhile.
  const held_fn is_held = [&held](const proc_id& p) {
    return std::find(held.begin(), held.end(), p) != held.end();
  };
  std::shared_ptr<client::session> fresh;
  std::optional<proc_id> already;
  auto rc = find_server(d, directives, is_held, fresh, already);
  if (rc != PMIX_SUCCESS) return rc;
  std::vector<std::shared_ptr<client::session>> to_close;
  if (fresh && is_held(fresh->server())) {  // its URI did not say whose it was
    already = fresh->server();
    to_close.push_back(std::move(fresh));
  }
  proc_id mine, theirs;
  {
    std::lock_guard<std::mutex> guard{l.mutex};
    rc = adopt(cycle, std::move(fresh), already, d.primary, mine, theirs, to_close);
  }
  for (const auto& s : to_close) close_session(s);
  if (rc != PMIX_SUCCESS) return rc;
  if (myproc != nullptr) convert::to_c(mine, *myproc);
  if (server != nullptr) convert::to_c(theirs, *server);
  return PMIX_SUCCESS;
}

// Deprecated in 4.x; OpenPMIx 4.2.2 still exports it as the same attach.
PMIX_EXPORT pmix_status_t PMIx_tool_connect_to_server(pmix_proc_t* proc, pmix_info_t info[], size_t ninfo) {
  if (on_library_thread()) return refuse_blocking("PMIx_tool_connect_to_server");  // its own name (spec 002)
  return PMIx_tool_attach_to_server(proc, nullptr, info, ninfo);
}

PMIX_EXPORT pmix_status_t PMIx_tool_disconnect(const pmix_proc_t* server) {
  if (on_library_thread()) return refuse_blocking("PMIx_tool_disconnect");
  std::shared_ptr<client::session> doomed;
  {
    auto& l = lib();
    std::lock_guard<std::mutex> guard{l.mutex};
    if (!l.initialized()) return PMIX_ERR_INIT;
    if (server == nullptr) {
      // No server named: the tool leaves its primary server but keeps every
      // connection (OpenPMIx 4.2.2 does the same); PMIx_tool_set_server
      // names the next one.
      if (!l.session->is_singleton()) l.session = without_server(l.session->self());
      return PMIX_SUCCESS;
    }
    const auto id = convert::proc(*server);
    auto& c = l.connections;
    const auto it = std::find_if(c.begin(), c.end(), [&](const auto& s) { return s->server() == id; });
    if (it == c.end()) return PMIX_ERR_NOT_FOUND;
    doomed = std::move(*it);
    c.erase(it);
    // No primary server now, until the tool names one [Standard 4.2, 18.4.2].
    if (doomed == l.session) l.session = without_server(doomed->self());
  }
  return close_session(doomed);
}

// A tool's own host module (OpenPMIx 4.2.9; its layout as PMIx_tool_init's
// PMIX_CXX_SERVER_MODULE_SLOTS said, 4.2.2's 28 slots by default): its
// allocate and resource_block up-calls then serve this process's own
// PMIx_Allocation_request and PMIx_Resource_block, as OpenPMIx hands a
// server's requests to its host. Once per init (PMIX_ERR_INIT after, as
// OpenPMIx master answers).
PMIX_EXPORT pmix_status_t PMIx_tool_set_server_module(pmix_server_module_t* module) {
  auto& l = lib();
  std::lock_guard<std::mutex> guard{l.mutex};
  if (!l.initialized()) return PMIX_ERR_INIT;
  if (module == nullptr) return PMIX_ERR_BAD_PARAM;
  if (l.tool_module) {
    log::error("api", "PMIx_tool_set_server_module: a module was set already");
    return PMIX_ERR_INIT;
  }
  auto own = std::make_shared<library::own_host>();
  own->module = module_copy::copy(*module, l.tool_module_slots);
  convert::to_c(l.session->self(), own->self);
  l.tool_module = std::move(own);
  return PMIX_SUCCESS;
}

// Whether this process (a tool or a client) has a live connection to its
// primary server (OpenPMIx 4.2.9): false before init, without a server,
// after PMIx_tool_disconnect or once the connection is lost.
PMIX_EXPORT bool PMIx_tool_is_connected(void) {
  auto& l = lib();
  std::lock_guard<std::mutex> guard{l.mutex};
  return l.initialized() && l.session && !l.session->is_singleton() && l.session->connected();
}

PMIX_EXPORT pmix_status_t PMIx_tool_get_servers(pmix_proc_t* servers[], size_t* nservers) {
  if (servers == nullptr || nservers == nullptr) return PMIX_ERR_BAD_PARAM;
  *servers = nullptr;
  *nservers = 0;
  std::vector<proc_id> found;
  {
    auto& l = lib();
    std::lock_guard<std::mutex> guard{l.mutex};
    if (!l.initialized()) return PMIX_ERR_INIT;
    if (l.session->connected()) found.push_back(l.session->server());
    for (const auto& c : l.connections)
      if (c != l.session && c->connected()) found.push_back(c->server());
  }
  if (found.empty()) return PMIX_ERR_UNREACH;
  PMIX_PROC_CREATE(*servers, found.size());
  if (*servers == nullptr) return PMIX_ERR_NOMEM;
  for (std::size_t k = 0; k < found.size(); ++k) convert::to_c(found[k], (*servers)[k]);
  *nservers = found.size();
  return PMIX_SUCCESS;
}

PMIX_EXPORT pmix_status_t PMIx_tool_set_server(const pmix_proc_t* server, pmix_info_t info[], size_t ninfo) {
  set_server_wait w;
  if (const auto rc = read_set_server(info, ninfo, w); rc != PMIX_SUCCESS) return rc;
  if (w.wait && w.timeout.count() > 0 && on_library_thread())
    return refuse_blocking("PMIx_tool_set_server with PMIX_WAIT_FOR_CONNECTION");
  auto& l = lib();
  std::unique_lock<std::mutex> guard{l.mutex};
  if (!l.initialized()) return PMIX_ERR_INIT;
  if (server == nullptr) {
    log::error("api", "PMIx_tool_set_server: no server named");
    return PMIX_ERR_BAD_PARAM;
  }
  const auto id = convert::proc(*server);
  // The tool itself: no primary server (as OpenPMIx 4.2.2 does).
  if (id == l.session->self() && !l.session->is_singleton()) {
    l.session = without_server(id);
    return PMIX_SUCCESS;
  }
  if (id == l.session->self()) return PMIX_SUCCESS;
  const auto cycle = l.cycle;
  const auto deadline = std::chrono::steady_clock::now() + w.timeout;
  while (true) {
    if (auto c = l.connection_to(id)) {
      l.session = std::move(c);
      return PMIX_SUCCESS;
    }
    if (!w.wait) return PMIX_ERR_UNREACH;
    if (l.connections_changed.wait_until(guard, deadline) == std::cv_status::timeout &&
        l.connection_to(id) == nullptr)
      return PMIX_ERR_NOT_FOUND;
    if (!l.initialized() || l.cycle != cycle) return PMIX_ERR_INIT;
  }
}

}  // extern "C"
