// The client API (pmix.h) in libpmix.so.2: the thin facade over the client
// session (client/session.hpp). No actor system here: client processes stay
// light.
#include <pmix.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <vector>
#include <memory>
#include <mutex>

#include "api/attribute_support.hpp"
#include "api/blocking.hpp"
#include "api/convert.hpp"
#include "server/events.hpp"
#include "api/library.hpp"
#include "api/server_stub.hpp"
#include "common/directives.hpp"
#include "common/log.hpp"
#include "common/progress.hpp"
#include "common/supported.hpp"
#include "protocol/version.hpp"

namespace pmix::api {
namespace {

bool valid_key(const char* key) {
  return key != nullptr && key[0] != '\0' && strnlen(key, PMIX_MAX_KEYLEN + 1) <= PMIX_MAX_KEYLEN;
}

// An environment variable, with an empty value counted as absent.
const char* env(const char* name) {
  const char* v = std::getenv(name);
  return v != nullptr && *v != '\0' ? v : nullptr;
}

// The server's URI from the environment setup_fork gave us: our own
// protocol's (PMIX_CXX_SERVER_URI), else the PMIX_SERVER_URI* a server of
// OpenPMIx's sets (read in OpenPMIx's order: 41, 4, 3, 21, 2), which is
// spoken to in OpenPMIx's protocol (issue 36) unless it names a Unix socket
// (only servers of ours have those). A server of ours sets both: its
// PMIX_SERVER_URI* name the listener OpenPMIx's processes reach.
struct server_address {
  const char* uri = nullptr;
  bool openpmix = false;
};
server_address server_uri() {
  if (const char* ours = env("PMIX_CXX_SERVER_URI")) return {ours, false};
  for (const char* name : {"PMIX_SERVER_URI41", "PMIX_SERVER_URI4", "PMIX_SERVER_URI3", "PMIX_SERVER_URI21",
                           "PMIX_SERVER_URI2"})
    if (const char* uri = env(name)) return {uri, std::strstr(uri, ";uds://") == nullptr};
  return {};
}

pmix_status_t open_client(std::shared_ptr<client::session>& out) {
  const char* ns = env("PMIX_NAMESPACE");
  const auto server = server_uri();
  if (ns == nullptr || server.uri == nullptr) {
    // No server: a singleton, as OpenPMIx does.
    out = client::session::singleton(proc_id{"singleton." + std::to_string(getpid()), 0});
    return PMIX_SUCCESS;
  }
  const char* rank = std::getenv("PMIX_RANK");
  char* end = nullptr;
  const auto r = rank == nullptr ? 0ul : std::strtoul(rank, &end, 10);
  if (rank == nullptr || *rank == '\0' || *end != '\0' || r >= rank_valid_limit) {
    log::error("client", "PMIX_RANK is missing or not a valid rank");
    return PMIX_ERR_BAD_PARAM;
  }
  const proc_id self{ns, static_cast<rank_t>(r)};
  if (server.openpmix) {
    const char* version = env("PMIX_VERSION");
    return client::session::connect_openpmix(server.uri, client::role::client, self, {},
                                             version != nullptr ? version : "", out, events::deliver);
  }
  return client::session::connect(server.uri, client::role::client, self, {}, out, events::deliver);
}

struct get_args {
  proc_id target;
  std::string key;
  info_list info;
  bool optional = false;
  // PMIX_GROUP_CONTEXT_ID: a value a group's member gave at its construct,
  // which only the server keeps.
  bool qualified = false;
  // A NULL key: everything of one process (a PMIX_DATA_ARRAY of PMIX_INFO).
  bool all = false;
};

pmix_status_t read_get_args(const client::session& s, const pmix_proc_t* proc, const char* key,
                            const pmix_info_t info[], size_t ninfo, get_args& out) {
  out.all = key == nullptr;
  if (out.all) {
    // As OpenPMIx: all the data of one process, never of a whole namespace.
    if (proc == nullptr || proc->rank >= rank_valid_limit) {
      log::error("api", "PMIx_Get with a NULL key (all of a process's data) needs one process, not ",
                 proc == nullptr ? "a NULL proc" : "a wildcard or undefined rank");
      return PMIX_ERR_BAD_PARAM;
    }
  } else if (!valid_key(key)) {
    log::error("api", "PMIx_Get: the key is empty or longer than ", PMIX_MAX_KEYLEN, " bytes");
    return PMIX_ERR_BAD_PARAM;
  } else {
    out.key = key;
  }
  out.target = proc == nullptr ? proc_id{s.self().nspace, PMIX_RANK_UNDEF} : convert::proc(*proc);
  if (out.target.nspace.empty()) out.target.nspace = s.self().nspace;
  if (convert::from_c(info, ninfo, out.info) != PMIX_SUCCESS) return PMIX_ERR_BAD_PARAM;
  // PMIX_IMMEDIATE (Open MPI asks for it) is not honoured yet: a Get of data
  // not committed yet waits for it.
  if (const auto rc = directives::check("PMIx_Get", out.info, supported::get); rc != PMIX_SUCCESS) return rc;
  if (const auto* o = find(out.info, PMIX_OPTIONAL)) out.optional = o->val.truthy();
  out.qualified = find(out.info, PMIX_GROUP_CONTEXT_ID) != nullptr;
  if (out.qualified && out.all) {
    log::error("api", "PMIx_Get: a group's value (PMIX_GROUP_CONTEXT_ID) needs its key");
    return PMIX_ERR_BAD_PARAM;
  }
  return PMIX_SUCCESS;
}

// Where a Get's answer is: the local store, or the server.
client::session::lookup resolve(client::session& s, const get_args& args, value& found) {
  if (args.qualified) return client::session::lookup::ask_server;
  return args.all ? s.resolve_all(args.target, args.optional, found)
                  : s.resolve_local(args.target, args.key, args.optional, found);
}

pmix_status_t copy_out(const value& v, pmix_value_t** out) {
  auto* result = static_cast<pmix_value_t*>(std::calloc(1, sizeof(pmix_value_t)));
  if (result == nullptr) return PMIX_ERR_NOMEM;
  auto rc = convert::to_c(v, *result);
  if (rc != PMIX_SUCCESS) {
    PMIx_Value_destruct(result);
    std::free(result);
    return rc;
  }
  *out = result;
  return PMIX_SUCCESS;
}

pmix_status_t read_fence_args(const pmix_proc_t procs[], size_t nprocs, const pmix_info_t info[],
                              size_t ninfo, std::vector<proc_id>& participants, info_list& directives) {
  if (convert::from_c(procs, nprocs, participants) != PMIX_SUCCESS ||
      convert::from_c(info, ninfo, directives) != PMIX_SUCCESS) {
    log::error("api", "PMIx_Fence: unreadable procs or info");
    return PMIX_ERR_BAD_PARAM;
  }
  return PMIX_SUCCESS;
}

}  // namespace

// Shared with tool_api.cpp: tells the session's server this process leaves
// it, and closes the connection.
pmix_status_t close_session(const std::shared_ptr<client::session>& s) {
  const auto rc = wait_for(s, [&](client::done_fn done) { return s->finalize(std::move(done)); });
  s->close();
  return rc == PMIX_ERR_LOST_CONNECTION ? PMIX_SUCCESS : rc;
}

// Shared with tool_api.cpp: ends the sessions after the last reference
// (library::take_sessions); the status is the first failure's.
pmix_status_t end_sessions(const std::vector<std::shared_ptr<client::session>>& doomed) {
  pmix_status_t rc = PMIX_SUCCESS;
  for (const auto& s : doomed) {
    const auto one = close_session(s);
    if (rc == PMIX_SUCCESS) rc = one;
  }
  // The handlers go with the last user of the library in this process.
  const auto* rt = server_runtime(false);
  if (rt == nullptr || rt->running(nullptr) == 0) {
    events::handlers().clear();
    attribute_support::clear_host();
  }
  return rc;
}

}  // namespace pmix::api

using namespace pmix;
using namespace pmix::api;

extern "C" {

PMIX_EXPORT pmix_status_t PMIx_Init(pmix_proc_t* proc, pmix_info_t info[], size_t ninfo) {
  if (on_library_thread()) return refuse_blocking("PMIx_Init");
  // The client needs no directive (Open MPI declares its programming model
  // in a second PMIx_Init): each is ignored unless required.
  if (const auto rc = directives::check("PMIx_Init", info, ninfo, {}); rc != PMIX_SUCCESS) return rc;
  auto& l = lib();
  std::lock_guard<std::mutex> guard{l.mutex};
  // A forked child (a clone) starts over with its own connection.
  l.forget_if_forked();
  if (!l.session) {
    auto rc = open_client(l.session);
    if (rc != PMIX_SUCCESS) return rc;
    if (!l.session->is_singleton()) l.connections.push_back(l.session);
    l.pid = getpid();
    ++l.cycle;
  }
  ++l.client_refs;
  if (proc != nullptr) convert::to_c(l.session->self(), *proc);
  return PMIX_SUCCESS;
}

// Any init of this process counts, as in OpenPMIx (one counter for client,
// tool and server init): hosts and the Python binding ask it after
// PMIx_server_init.
PMIX_EXPORT int PMIx_Initialized(void) {
  auto& l = lib();
  std::lock_guard<std::mutex> guard{l.mutex};
  const bool client_or_tool = (l.client_refs > 0 || l.tool_refs > 0) && l.pid == getpid();
  return client_or_tool || l.server_self ? 1 : 0;
}

PMIX_EXPORT pmix_status_t PMIx_Finalize(const pmix_info_t info[], size_t ninfo) {
  if (on_library_thread()) return refuse_blocking("PMIx_Finalize");
  if (const auto rc = directives::check("PMIx_Finalize", info, ninfo, supported::finalize); rc != PMIX_SUCCESS)
    return rc;
  std::vector<std::shared_ptr<client::session>> doomed;
  {
    auto& l = lib();
    std::lock_guard<std::mutex> guard{l.mutex};
    if (l.client_refs == 0 || l.pid != getpid()) return PMIX_ERR_INIT;
    if (--l.client_refs > 0 || l.tool_refs > 0) return PMIX_SUCCESS;
    doomed = l.take_sessions();
  }
  info_list directives;
  if (convert::from_c(info, ninfo, directives) == PMIX_SUCCESS) {
    if (const auto* b = find(directives, PMIX_EMBED_BARRIER); b != nullptr && b->val.truthy()) {
      const auto& current = doomed.front();
      wait_for(current, [&](client::done_fn done) { return current->fence({}, {}, std::move(done)); });
    }
  }
  return end_sessions(doomed);
}

PMIX_EXPORT const char* PMIx_Get_version(void) { return protocol::library_version; }

// Clients always have a progress thread; a server whose host drives progress
// (PMIX_EXTERNAL_PROGRESS) does one round of its work here.
PMIX_EXPORT void PMIx_Progress(void) {
  if (on_library_thread()) return;  // already inside the library's progress
  if (const auto* rt = server_runtime(false)) rt->progress();
}

// OpenPMIx 6.0: stops the library's progress thread (PMIX_PROGRESS_THREAD_NAME
// absent or naming it: ours are one per server connection). With
// PMIX_PROGRESS_THREAD_FLUSH (default true) what was queued for it runs
// first. Then no callback, event or output comes any more, and calls that
// need a server answer PMIX_ERR_NOT_AVAILABLE (so does PMIx_Finalize's
// goodbye, as in OpenPMIx: call it last).
PMIX_EXPORT void PMIx_Progress_thread_stop(const pmix_info_t* info, size_t ninfo) {
  bool flush = true;
  for (size_t k = 0; info != nullptr && k < ninfo; ++k) {
    if (PMIx_Check_key(info[k].key, PMIX_PROGRESS_THREAD_FLUSH)) {
      flush = PMIx_Info_true(&info[k]) == PMIX_BOOL_TRUE;
    } else if (PMIx_Check_key(info[k].key, PMIX_PROGRESS_THREAD_NAME) && info[k].value.type == PMIX_STRING &&
               info[k].value.data.string != nullptr &&
               std::strcmp(info[k].value.data.string, "PMIX-wide async progress thread") != 0) {
      log::debug("api", "PMIx_Progress_thread_stop: no progress thread named ", info[k].value.data.string);
      return;
    }
  }
  if (on_library_thread()) {
    log::warning("api", "PMIx_Progress_thread_stop on a library thread: a thread cannot stop itself");
    return;
  }
  std::vector<std::shared_ptr<client::session>> sessions;
  {
    auto& l = lib();
    std::lock_guard<std::mutex> guard{l.mutex};
    if (!l.initialized()) return;
    sessions = l.connections;
    if (l.session) sessions.push_back(l.session);
  }
  for (const auto& s : sessions) s->stop_progress(flush);
}

PMIX_EXPORT pmix_status_t PMIx_Put(pmix_scope_t scope, const pmix_key_t key, pmix_value_t* val) {
  auto s = current_session();
  if (!s) return PMIX_ERR_INIT;
  if (!valid_key(key) || val == nullptr) {
    log::error("api", "PMIx_Put: missing key or value");
    return PMIX_ERR_BAD_PARAM;
  }
  if (scope != PMIX_LOCAL && scope != PMIX_REMOTE && scope != PMIX_GLOBAL && scope != PMIX_INTERNAL) {
    log::error("api", "PMIx_Put(", key, "): unknown scope ", static_cast<int>(scope));
    return PMIX_ERR_BAD_PARAM;
  }
  info item;
  item.key = convert::key(key);
  auto rc = convert::from_c(*val, item.val);
  if (rc != PMIX_SUCCESS) {
    log::error("api", "PMIx_Put(", item.key, "): the value cannot be stored: ", PMIx_Error_string(rc));
    return rc;
  }
  return s->put(scope, std::move(item));
}

PMIX_EXPORT pmix_status_t PMIx_Commit(void) {
  auto s = current_session();
  return s ? s->commit() : PMIX_ERR_INIT;
}

PMIX_EXPORT pmix_status_t PMIx_Fence(const pmix_proc_t procs[], size_t nprocs,
                                     const pmix_info_t info[], size_t ninfo) {
  if (on_library_thread()) return refuse_blocking("PMIx_Fence");
  auto s = current_session();
  if (!s) return PMIX_ERR_INIT;
  std::vector<proc_id> participants;
  info_list directives;
  auto rc = read_fence_args(procs, nprocs, info, ninfo, participants, directives);
  if (rc != PMIX_SUCCESS) return rc;
  return wait_for(s, [&](client::done_fn done) {
    return s->fence(std::move(participants), std::move(directives), std::move(done));
  });
}

PMIX_EXPORT pmix_status_t PMIx_Fence_nb(const pmix_proc_t procs[], size_t nprocs,
                                        const pmix_info_t info[], size_t ninfo,
                                        pmix_op_cbfunc_t cbfunc, void* cbdata) {
  if (cbfunc == nullptr) {
    if (on_library_thread()) return refuse_blocking("PMIx_Fence_nb with a NULL cbfunc");
    return PMIx_Fence(procs, nprocs, info, ninfo);
  }
  auto s = current_session();
  if (!s) return PMIX_ERR_INIT;
  std::vector<proc_id> participants;
  info_list directives;
  auto rc = read_fence_args(procs, nprocs, info, ninfo, participants, directives);
  if (rc != PMIX_SUCCESS) return rc;
  // As OpenPMIx: PMIX_OPERATION_SUCCEEDED, without a callback, when the fence
  // completes at once (a singleton).
  return s->fence(std::move(participants), std::move(directives),
                  [cbfunc, cbdata](pmix_status_t st) { cbfunc(st, cbdata); });
}

PMIX_EXPORT pmix_status_t PMIx_Get(const pmix_proc_t* proc, const pmix_key_t key,
                                   const pmix_info_t info[], size_t ninfo, pmix_value_t** val) {
  // The blocking form, even when the answer is local (spec 002): use
  // PMIx_Get_nb from a callback.
  if (on_library_thread()) return refuse_blocking("PMIx_Get");
  auto s = current_session();
  if (!s) return PMIX_ERR_INIT;
  if (val == nullptr) return PMIX_ERR_BAD_PARAM;
  *val = nullptr;
  get_args args;
  auto rc = read_get_args(*s, proc, key, info, ninfo, args);
  if (rc != PMIX_SUCCESS) return rc;
  value found;
  switch (resolve(*s, args, found)) {
    case client::session::lookup::found: return copy_out(found, val);
    case client::session::lookup::not_found: return PMIX_ERR_NOT_FOUND;
    case client::session::lookup::ask_server: break;
  }
  auto result = std::make_shared<value>();
  rc = wait_for(s, [&](client::done_fn done) {
    return s->fetch(args.target, args.key, args.info,
                    [result, done](pmix_status_t st, const value* v) {
                      if (v != nullptr) *result = *v;
                      done(st);
                    });
  });
  return rc == PMIX_SUCCESS ? copy_out(*result, val) : rc;
}

PMIX_EXPORT pmix_status_t PMIx_Get_nb(const pmix_proc_t* proc, const pmix_key_t key,
                                      const pmix_info_t info[], size_t ninfo,
                                      pmix_value_cbfunc_t cbfunc, void* cbdata) {
  if (cbfunc == nullptr) return PMIX_ERR_BAD_PARAM;
  auto s = current_session();
  if (!s) return PMIX_ERR_INIT;
  get_args args;
  auto rc = read_get_args(*s, proc, key, info, ninfo, args);
  if (rc != PMIX_SUCCESS) return rc;
  auto deliver = [cbfunc, cbdata](pmix_status_t st, const value* v) {
    pmix_value_t out;
    std::memset(&out, 0, sizeof out);
    if (st == PMIX_SUCCESS && v != nullptr) st = convert::to_c(*v, out);
    cbfunc(st, st == PMIX_SUCCESS ? &out : nullptr, cbdata);
    PMIx_Value_destruct(&out);
  };
  value found;
  const auto where = resolve(*s, args, found);
  if (where == client::session::lookup::ask_server)
    return s->fetch(args.target, args.key, args.info, deliver);
  // Answered locally: the callback still comes from the progress thread.
  s->post([deliver, where, found] {
    deliver(where == client::session::lookup::found ? PMIX_SUCCESS : PMIX_ERR_NOT_FOUND, &found);
  });
  return PMIX_SUCCESS;
}

PMIX_EXPORT pmix_status_t PMIx_Store_internal(const pmix_proc_t* proc, const char key[],
                                              pmix_value_t* val) {
  auto s = current_session();
  if (!s) return PMIX_ERR_INIT;
  if (proc == nullptr || !valid_key(key) || val == nullptr) return PMIX_ERR_BAD_PARAM;
  value v;
  auto rc = convert::from_c(*val, v);
  if (rc != PMIX_SUCCESS) return rc;
  s->store_internal(convert::proc(*proc), convert::key(key), std::move(v));
  return PMIX_SUCCESS;
}

PMIX_EXPORT pmix_status_t PMIx_Abort(int status, const char msg[], pmix_proc_t procs[],
                                     size_t nprocs) {
  if (on_library_thread()) return refuse_blocking("PMIx_Abort");
  auto s = current_session();
  if (!s) return PMIX_ERR_INIT;
  std::vector<proc_id> targets;
  if (convert::from_c(procs, nprocs, targets) != PMIX_SUCCESS) return PMIX_ERR_BAD_PARAM;
  const std::string message = msg == nullptr ? "" : msg;
  return wait_for(s,
      [&](client::done_fn done) { return s->abort(status, message, targets, std::move(done)); });
}

}  // extern "C"

namespace pmix::api {
namespace {

// A C info array for a callback or an output, built from C++ values.
pmix_info_t* info_out(const info_list& list) { return convert::new_infos(list); }

struct info_release {
  pmix_info_t* info;
  std::size_t ninfo;
};

void release_info(void* cbdata) {
  auto* r = static_cast<info_release*>(cbdata);
  PMIX_INFO_FREE(r->info, r->ninfo);
  delete r;
}

pmix_status_t read_job_control(const pmix_proc_t targets[], size_t ntargets,
                               const pmix_info_t directives[], size_t ndirs,
                               std::vector<proc_id>& t, info_list& d) {
  if (convert::from_c(targets, ntargets, t) != PMIX_SUCCESS ||
      convert::from_c(directives, ndirs, d) != PMIX_SUCCESS || d.empty()) {
    log::error("api", "PMIx_Job_control: unreadable targets or no directives");
    return PMIX_ERR_BAD_PARAM;
  }
  return PMIX_SUCCESS;
}

pmix_status_t read_queries(pmix_query_t queries[], size_t nqueries, std::vector<query>& out) {
  if (nqueries == 0 || convert::from_c(queries, nqueries, out) != PMIX_SUCCESS) {
    log::error("api", "PMIx_Query_info: no queries, or a query without keys");
    return PMIX_ERR_BAD_PARAM;
  }
  return PMIX_SUCCESS;
}

// The Standard ABI versions this library implements, answered by the
// library itself (before init too, for the blocking form), as OpenPMIx
// 4.2.2 does; its values are "0.0" for both.
constexpr const char* kStableAbiVersion = "0.0";
constexpr const char* kProvisionalAbiVersion = "0.0";

bool local_answer(const std::string& key, info_list& out) {
  if (key == PMIX_QUERY_STABLE_ABI_VERSION) {
    out.push_back(info{key, value::string(kStableAbiVersion), 0});
  } else if (key == PMIX_QUERY_PROVISIONAL_ABI_VERSION) {
    out.push_back(info{key, value::string(kProvisionalAbiVersion), 0});
  } else {
    return false;
  }
  return true;
}

// Whether this process runs a server: then the host's registered attributes
// are its own (PMIx_Register_attributes) and need no server.
bool in_server_process() {
  const auto* rt = server_runtime(false);
  return rt != nullptr && rt->running(nullptr) != 0;
}

// What a query asked that the library answered itself.
struct local_answers {
  info_list results;
  bool attributes_asked = false;  // PMIX_QUERY_ATTRIBUTE_SUPPORT, answered here or not
};

// Answers what the library knows itself into `local` and leaves in `q`
// only the keys the server must answer (queries left without keys go). Of
// an attribute-support query the library answers the client, server and
// tool levels (and the host's in a server process); the host level of a
// client or tool becomes a query of its own for the server.
void split_local(std::vector<query>& q, local_answers& local) {
  const unsigned here = attribute_support::client | attribute_support::server | attribute_support::tool |
                        (in_server_process() ? attribute_support::host : 0u);
  std::vector<query> for_server;
  for (auto& one : q) {
    if (attribute_support::asked(one)) {
      local.attributes_asked = true;
      auto rest = attribute_support::answer(one.qualifiers, here, local.results);
      if (!rest.empty()) for_server.push_back(query{{PMIX_QUERY_ATTRIBUTE_SUPPORT}, std::move(rest)});
    }
    one.keys.erase(std::remove_if(one.keys.begin(), one.keys.end(),
                                  [&](const std::string& k) {
                                    return k == PMIX_QUERY_ATTRIBUTE_SUPPORT || local_answer(k, local.results);
                                  }),
                   one.keys.end());
  }
  q.erase(std::remove_if(q.begin(), q.end(), [](const query& one) { return one.keys.empty(); }), q.end());
  q.insert(q.end(), std::make_move_iterator(for_server.begin()), std::make_move_iterator(for_server.end()));
}

// The status of an answer given without the server: an attribute query
// that found nothing is PMIX_ERR_NOT_FOUND, as in OpenPMIx 4.2.2.
pmix_status_t local_status(const local_answers& local) {
  return local.results.empty() && local.attributes_asked ? PMIX_ERR_NOT_FOUND : PMIX_SUCCESS;
}

// The results as the caller gets them (attribute lists as pmix_regattr_t).
pmix_info_t* results_out(const info_list& list) {
  auto* out = info_out(list);
  attribute_support::materialize(out, list.size());
  return out;
}

// The server's answer joined to the local one: the local results first; a
// server that knows none of its keys leaves a partial success.
std::function<void(pmix_status_t, info_list)> with_local(info_list local,
                                                          std::function<void(pmix_status_t, info_list)> done) {
  return [local = std::move(local), done = std::move(done)](pmix_status_t st, info_list r) mutable {
    if (local.empty()) return done(st, std::move(r));
    local.insert(local.end(), std::make_move_iterator(r.begin()), std::make_move_iterator(r.end()));
    if (st != PMIX_SUCCESS && st != PMIX_ERR_PARTIAL_SUCCESS) st = PMIX_ERR_PARTIAL_SUCCESS;
    done(st, std::move(local));
  };
}

}  // namespace
}  // namespace pmix::api

extern "C" {

PMIX_EXPORT pmix_status_t PMIx_Query_info_nb(pmix_query_t queries[], size_t nqueries,
                                             pmix_info_cbfunc_t cbfunc, void* cbdata) {
  if (cbfunc == nullptr) {
    log::error("api", "PMIx_Query_info_nb: no cbfunc");
    return PMIX_ERR_BAD_PARAM;
  }
  auto s = current_session();
  if (!s) return PMIX_ERR_INIT;
  std::vector<query> q;
  auto rc = read_queries(queries, nqueries, q);
  if (rc != PMIX_SUCCESS) return rc;
  local_answers local;
  split_local(q, local);
  auto deliver = [cbfunc, cbdata](pmix_status_t st, info_list results) {
    auto* r = new info_release{results_out(results), results.size()};
    cbfunc(st, r->info, r->ninfo, cbdata, release_info, r);
  };
  if (q.empty()) {
    // Answered here, through the callback on the library's thread (inline
    // only in a process without one, such as a singleton).
    const auto st = local_status(local);
    s->post([deliver, st, results = std::move(local.results)]() mutable { deliver(st, std::move(results)); });
    return PMIX_SUCCESS;
  }
  return s->query(q, with_local(std::move(local.results), deliver));
}

PMIX_EXPORT pmix_status_t PMIx_Query_info(pmix_query_t queries[], size_t nqueries,
                                          pmix_info_t** results, size_t* nresults) {
  if (on_library_thread()) return refuse_blocking("PMIx_Query_info");
  if (results == nullptr || nresults == nullptr) return PMIX_ERR_BAD_PARAM;
  *results = nullptr;
  *nresults = 0;
  std::vector<query> q;
  auto rc = read_queries(queries, nqueries, q);
  if (rc != PMIX_SUCCESS) return rc;
  local_answers local;
  split_local(q, local);
  if (q.empty()) {
    // Only keys the library answers itself: allowed before init too.
    *results = results_out(local.results);
    *nresults = local.results.size();
    return local_status(local);
  }
  auto s = current_session();
  if (!s) return PMIX_ERR_INIT;
  auto out = std::make_shared<info_list>();
  rc = wait_for(s, [&](client::done_fn done) {
    return s->query(q, with_local(std::move(local.results), [out, done](pmix_status_t st, info_list r) {
      *out = std::move(r);
      done(st);
    }));
  });
  if (!out->empty()) {
    *results = results_out(*out);
    *nresults = out->size();
  }
  return rc;
}

PMIX_EXPORT pmix_status_t PMIx_Job_control_nb(const pmix_proc_t targets[], size_t ntargets,
                                              const pmix_info_t directives[], size_t ndirs,
                                              pmix_info_cbfunc_t cbfunc, void* cbdata) {
  auto s = current_session();
  if (!s) return PMIX_ERR_INIT;
  std::vector<proc_id> t;
  info_list d;
  auto rc = read_job_control(targets, ntargets, directives, ndirs, t, d);
  if (rc != PMIX_SUCCESS) return rc;
  return s->job_control(t, d, [cbfunc, cbdata](pmix_status_t st, info_list results) {
    if (cbfunc == nullptr) return;
    auto* r = new info_release{info_out(results), results.size()};
    cbfunc(st, r->info, r->ninfo, cbdata, release_info, r);
  });
}

PMIX_EXPORT pmix_status_t PMIx_Job_control(const pmix_proc_t targets[], size_t ntargets,
                                           const pmix_info_t directives[], size_t ndirs,
                                           pmix_info_t** results, size_t* nresults) {
  if (on_library_thread()) return refuse_blocking("PMIx_Job_control");
  auto s = current_session();
  if (!s) return PMIX_ERR_INIT;
  if (results != nullptr) *results = nullptr;
  if (nresults != nullptr) *nresults = 0;
  std::vector<proc_id> t;
  info_list d;
  auto rc = read_job_control(targets, ntargets, directives, ndirs, t, d);
  if (rc != PMIX_SUCCESS) return rc;
  auto out = std::make_shared<info_list>();
  rc = wait_for(s, [&](client::done_fn done) {
    return s->job_control(t, d, [out, done](pmix_status_t st, info_list r) {
      *out = std::move(r);
      done(st);
    });
  });
  if (results != nullptr && nresults != nullptr && !out->empty()) {
    *results = info_out(*out);
    *nresults = out->size();
  }
  return rc;
}

}  // extern "C"
