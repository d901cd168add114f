// The server API as the server library implements it. Each function is the
// thin facade of style.md #1: check state and arguments, copy C inputs into
// C++ values, send one message to the server actor, turn the reply into a
// pmix_status_t (and outputs). libpmix.so.2 forwards PMIx_server_* here.
#include <pmix.h>
#include <pmix_server.h>
#include <pthread.h>
#include <unistd.h>

#include <caf/send.hpp>
#include <climits>
#include <condition_variable>
#include <cstring>
#include <mutex>
#include <new>

#include "actors/messages.hpp"
#include "actors/server_actor.hpp"
#include "api/convert.hpp"
#include "api/server_runtime.hpp"
#include "api/server_runtime_abi.h"
#include "common/host.hpp"
#include "common/log.hpp"
#include "common/progress.hpp"

namespace pmix::server {
namespace {

struct library {
  std::mutex mutex;
  std::shared_ptr<runtime> rt;
  int refcount = 0;
};

// In a forked child of a server the actor system's threads do not exist:
// forget the runtime (leak it) rather than tear it down (notes/caf-0.17.md
// 5.4). The child may start its own server.
void forget_after_fork();

library& lib() {
  static library instance;
  static const int registered = pthread_atfork(nullptr, nullptr, forget_after_fork);
  (void)registered;
  return instance;
}

void forget_after_fork() {
  auto& l = lib();
  new (&l.mutex) std::mutex();
  new (&l.rt) std::shared_ptr<runtime>();
  l.refcount = 0;
}

std::shared_ptr<runtime> current() {
  std::lock_guard<std::mutex> guard{lib().mutex};
  return lib().rt;
}

// Waits for a reply channel's result on a user thread.
template <class Result>
struct waiter {
  std::mutex m;
  std::condition_variable cv;
  bool done = false;
  pmix_status_t status = PMIX_ERR_NOT_AVAILABLE;
  Result result{};

  actors::reply_to<Result> channel(const std::shared_ptr<waiter>& self) {
    return actors::make_reply<Result>([self](pmix_status_t st, Result r) {
      std::lock_guard<std::mutex> guard{self->m};
      self->status = st;
      self->result = std::move(r);
      self->done = true;
      self->cv.notify_all();
    });
  }
  pmix_status_t wait() {
    std::unique_lock<std::mutex> guard{m};
    cv.wait(guard, [this] { return done; });
    return status;
  }
};

// Sends `make(channel)` to the server actor and either waits for the reply
// (cbfunc == NULL) or arranges for cbfunc to be called with it.
template <class Make>
pmix_status_t op_call(const char* name, const std::shared_ptr<runtime>& rt, pmix_op_cbfunc_t cbfunc,
                      void* cbdata, Make make) {
  if (cbfunc != nullptr) {
    auto channel = actors::make_reply<actors::no_result>(
        [cbfunc, cbdata](pmix_status_t st, actors::no_result) {
          progress::scope in_callback;
          cbfunc(st, cbdata);
        });
    caf::anon_send(rt->root(), make(std::move(channel)));
    return PMIX_SUCCESS;
  }
  if (progress::in_library_thread()) {
    log::error("api", name, " called from a PMIx library thread (a callback or host up-call): ",
               "PMIX_ERR_WOULD_BLOCK; use the non-blocking form or a thread of your own");
    return PMIX_ERR_WOULD_BLOCK;
  }
  auto w = std::make_shared<waiter<actors::no_result>>();
  caf::anon_send(rt->root(), make(w->channel(w)));
  return w->wait();
}

bool valid_nspace(const char* ns) {
  return ns != nullptr && ns[0] != '\0' && strnlen(ns, PMIX_MAX_NSLEN + 1) <= PMIX_MAX_NSLEN;
}

std::string env_or(const char* name, const std::string& fallback) {
  const char* v = std::getenv(name);
  return v != nullptr && *v != '\0' ? std::string{v} : fallback;
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

pmix_status_t read_settings(const info_list& directives, settings& s) {
  s.hostname = host_name();
  s.server.nspace = "pmix-server." + s.hostname + "." + std::to_string(getpid());
  s.server.rank = 0;
  if (const char* env = std::getenv("PMIX_SERVER_NSPACE"); env != nullptr && *env != '\0')
    s.server.nspace = env;
  if (const char* env = std::getenv("PMIX_SERVER_RANK"); env != nullptr && *env != '\0') {
    if (!parse_rank(env, s.server.rank)) {
      log::error("server", "PMIX_SERVER_RANK='", env, "' is not a simple non-negative number");
      return PMIX_ERR_BAD_PARAM;
    }
  }
  s.tmpdir = env_or("PMIX_SERVER_TMPDIR",
                    env_or("TMPDIR", env_or("TEMP", env_or("TMP", "/tmp"))));
  for (const auto& d : directives) {
    if (d.key == PMIX_SERVER_NSPACE) {
      const auto* ns = d.val.as_string();
      if (ns == nullptr || ns->empty() || ns->size() > PMIX_MAX_NSLEN) {
        log::error("server", "PMIX_SERVER_NSPACE must be a non-empty string");
        return PMIX_ERR_BAD_PARAM;
      }
      s.server.nspace = *ns;
    } else if (d.key == PMIX_SERVER_RANK) {
      auto r = d.val.as_uint();
      if (!r || *r >= rank_valid_limit) {
        log::error("server", "PMIX_SERVER_RANK must be a valid rank");
        return PMIX_ERR_BAD_PARAM;
      }
      s.server.rank = static_cast<rank_t>(*r);
    } else if (d.key == PMIX_SERVER_TMPDIR) {
      const auto* dir = d.val.as_string();
      if (dir == nullptr || dir->empty()) {
        log::error("server", "PMIX_SERVER_TMPDIR must be a non-empty string");
        return PMIX_ERR_BAD_PARAM;
      }
      s.tmpdir = *dir;
    } else if (d.key == PMIX_HOSTNAME) {
      if (const auto* h = d.val.as_string(); h != nullptr && !h->empty()) s.hostname = *h;
    } else if (d.key == PMIX_ALLOW_CLIENT_CLONES) {
      s.allow_clones = d.val.truthy();
    }
  }
  s.scheduler_policy = env_or("PMIX_CXX_SCHEDULER", "sharing");
  if (s.scheduler_policy != "sharing" && s.scheduler_policy != "stealing") {
    log::error("server", "PMIX_CXX_SCHEDULER must be 'sharing' or 'stealing'");
    return PMIX_ERR_BAD_PARAM;
  }
  const auto threads = std::atoi(env_or("PMIX_CXX_THREADS", "2").c_str());
  if (threads < 1 || threads > 256) {
    log::error("server", "PMIX_CXX_THREADS must be between 1 and 256");
    return PMIX_ERR_BAD_PARAM;
  }
  s.threads = static_cast<std::size_t>(threads);
  return PMIX_SUCCESS;
}

// ---- the table's functions -------------------------------------------------

int in_library_thread() { return progress::in_library_thread() ? 1 : 0; }

pmix_status_t init(pmix_server_module_t* module, pmix_info_t info[], size_t ninfo) {
  if (progress::in_library_thread()) return PMIX_ERR_WOULD_BLOCK;
  info_list directives;
  auto rc = convert::from_c(info, ninfo, directives);
  if (rc != PMIX_SUCCESS) {
    log::error("server", "PMIx_server_init: unreadable directives: ", PMIx_Error_string(rc));
    return rc == PMIX_ERR_NOT_SUPPORTED ? PMIX_ERR_BAD_PARAM : rc;
  }
  auto& l = lib();
  std::lock_guard<std::mutex> guard{l.mutex};
  if (l.rt) {
    ++l.refcount;
    if (l.rt->host().adopt(module)) log::info("server", "adopted the host module of a later init");
    return PMIX_SUCCESS;
  }
  settings s;
  rc = read_settings(directives, s);
  if (rc != PMIX_SUCCESS) return rc;
  std::unique_ptr<runtime> rt;
  rc = runtime::start(s, module, rt);
  if (rc != PMIX_SUCCESS) return rc;
  l.rt = std::move(rt);
  l.refcount = 1;
  return PMIX_SUCCESS;
}

pmix_status_t finalize() {
  if (progress::in_library_thread()) {
    log::error("api", "PMIx_server_finalize called from a PMIx library thread: PMIX_ERR_WOULD_BLOCK");
    return PMIX_ERR_WOULD_BLOCK;
  }
  std::shared_ptr<runtime> doomed;
  {
    auto& l = lib();
    std::lock_guard<std::mutex> guard{l.mutex};
    if (!l.rt) return PMIX_ERR_INIT;
    if (--l.refcount > 0) return PMIX_SUCCESS;
    doomed = std::move(l.rt);
  }
  doomed.reset();  // the teardown runs outside the lock
  return PMIX_SUCCESS;
}

pmix_status_t register_nspace(const pmix_nspace_t nspace, int nlocalprocs, pmix_info_t info[],
                              size_t ninfo, pmix_op_cbfunc_t cbfunc, void* cbdata) {
  auto rt = current();
  if (!rt) return PMIX_ERR_INIT;
  if (!valid_nspace(nspace) || nlocalprocs < 0) {
    log::error("api", "PMIx_server_register_nspace: invalid namespace or nlocalprocs");
    return PMIX_ERR_BAD_PARAM;
  }
  actors::register_nspace_msg msg;
  msg.nspace = convert::nspace(nspace);
  msg.nlocalprocs = nlocalprocs;
  auto rc = convert::from_c(info, ninfo, msg.info);
  if (rc != PMIX_SUCCESS) {
    log::error("api", "PMIx_server_register_nspace(", msg.nspace, "): unreadable info: ",
               PMIx_Error_string(rc));
    return PMIX_ERR_BAD_PARAM;
  }
  return op_call("PMIx_server_register_nspace", rt, cbfunc, cbdata,
                 [&](actors::reply_to<actors::no_result> done) {
                   msg.done = std::move(done);
                   return std::move(msg);
                 });
}

void deregister_nspace(const pmix_nspace_t nspace, pmix_op_cbfunc_t cbfunc, void* cbdata) {
  auto fail = [&](pmix_status_t st) {
    if (cbfunc != nullptr) cbfunc(st, cbdata);
  };
  auto rt = current();
  if (!rt) return fail(PMIX_ERR_INIT);
  if (!valid_nspace(nspace)) return fail(PMIX_ERR_BAD_PARAM);
  const auto name = convert::nspace(nspace);
  auto rc = op_call("PMIx_server_deregister_nspace", rt, cbfunc, cbdata,
                    [&](actors::reply_to<actors::no_result> done) {
                      return actors::deregister_nspace_msg{name, std::move(done)};
                    });
  if (cbfunc == nullptr && rc != PMIX_SUCCESS && rc != PMIX_ERR_NOT_FOUND)
    log::warning("api", "PMIx_server_deregister_nspace(", name, "): ", PMIx_Error_string(rc));
}

pmix_status_t register_client(const pmix_proc_t* proc, uid_t uid, gid_t gid, void* server_object,
                              pmix_op_cbfunc_t cbfunc, void* cbdata) {
  auto rt = current();
  if (!rt) return PMIX_ERR_INIT;
  if (proc == nullptr || !valid_nspace(proc->nspace)) return PMIX_ERR_BAD_PARAM;
  auto p = convert::proc(*proc);
  return op_call("PMIx_server_register_client", rt, cbfunc, cbdata,
                 [&](actors::reply_to<actors::no_result> done) {
                   return actors::register_client_msg{p, uid, gid, server_object, std::move(done)};
                 });
}

void deregister_client(const pmix_proc_t* proc, pmix_op_cbfunc_t cbfunc, void* cbdata) {
  auto fail = [&](pmix_status_t st) {
    if (cbfunc != nullptr) cbfunc(st, cbdata);
  };
  auto rt = current();
  if (!rt) return fail(PMIX_ERR_INIT);
  if (proc == nullptr || !valid_nspace(proc->nspace)) return fail(PMIX_ERR_BAD_PARAM);
  auto p = convert::proc(*proc);
  op_call("PMIx_server_deregister_client", rt, cbfunc, cbdata,
          [&](actors::reply_to<actors::no_result> done) {
            return actors::deregister_client_msg{p, std::move(done)};
          });
}

pmix_status_t setup_fork(const pmix_proc_t* proc, char*** env) {
  auto rt = current();
  if (!rt) return PMIX_ERR_INIT;
  if (proc == nullptr || env == nullptr || !valid_nspace(proc->nspace)) return PMIX_ERR_BAD_PARAM;
  // Computed from the fixed server context: no actor round trip needed.
  const auto vars = actors::client_environment(rt->context(), convert::proc(*proc));
  for (const auto& v : vars) {
    const auto eq = v.find('=');
    const auto name = v.substr(0, eq);
    const auto value = v.substr(eq + 1);
    auto rc = pmix_setenv(name.c_str(), value.c_str(), true, env);
    if (rc != PMIX_SUCCESS) return rc;
  }
  return PMIX_SUCCESS;
}

pmix_status_t view(pmix_cxx_server_view_t* out) {
  if (out == nullptr) return PMIX_ERR_BAD_PARAM;
  std::memset(out, 0, sizeof *out);
  auto rt = current();
  if (!rt) return PMIX_ERR_INIT;
  if (progress::in_library_thread()) return PMIX_ERR_WOULD_BLOCK;
  auto w = std::make_shared<waiter<actors::server_snapshot>>();
  caf::anon_send(rt->root(), actors::snapshot_msg{w->channel(w)});
  auto rc = w->wait();
  if (rc != PMIX_SUCCESS) return rc;
  const auto& snap = w->result;
  out->fences_in_flight = snap.fences_in_flight;
  out->connections = rt->connection_count();
  out->actors_running = rt->actors_running();
  out->departed = snap.departed;
  out->pending_upcalls = snap.pending_upcalls;
  out->nnspaces = snap.nspaces.size();
  out->nspaces = static_cast<pmix_cxx_nspace_view_t*>(
      std::calloc(snap.nspaces.size() + 1, sizeof(pmix_cxx_nspace_view_t)));
  for (std::size_t i = 0; i < snap.nspaces.size(); ++i) {
    const auto& n = snap.nspaces[i];
    auto& o = out->nspaces[i];
    std::strncpy(o.nspace, n.name.c_str(), PMIX_MAX_NSLEN);
    o.nlocalprocs = n.nlocalprocs;
    o.nfinalized = n.nfinalized;
    o.local_app_fini_fired = n.local_app_fini_fired ? 1 : 0;
    o.local_app_fini_runs = n.local_app_fini_runs;
    o.nranks = n.ranks.size();
    o.ranks = static_cast<pmix_cxx_rank_view_t*>(
        std::calloc(n.ranks.size() + 1, sizeof(pmix_cxx_rank_view_t)));
    for (std::size_t k = 0; k < n.ranks.size(); ++k) {
      const auto& r = n.ranks[k];
      o.ranks[k] = pmix_cxx_rank_view_t{r.rank, r.registered, r.proc_cnt, r.peers, r.tombstones,
                                        r.has_peerid, r.dead};
    }
  }
  return PMIX_SUCCESS;
}

void view_free(pmix_cxx_server_view_t* v) {
  if (v == nullptr) return;
  for (std::size_t i = 0; i < v->nnspaces; ++i) std::free(v->nspaces[i].ranks);
  std::free(v->nspaces);
  std::memset(v, 0, sizeof *v);
}

const pmix_cxx_server_runtime_t table = {
    PMIX_CXX_SERVER_RUNTIME_VERSION,
    in_library_thread,
    init,
    finalize,
    register_nspace,
    deregister_nspace,
    register_client,
    deregister_client,
    setup_fork,
    view,
    view_free,
};

}  // namespace
}  // namespace pmix::server

extern "C" __attribute__((visibility("default"))) const pmix_cxx_server_runtime_t*
pmix_cxx_server_runtime(void) {
  return &pmix::server::table;
}
