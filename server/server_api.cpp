// The server API as the server library implements it. Each function is the
// thin facade of style.md #1: check state and arguments, copy C inputs into
// C++ values, send one message to the server actor, turn the reply into a
// pmix_status_t (and outputs). libpmix.so.2 forwards PMIx_server_* here.
#include <pmix.h>
#include <pmix_server.h>
#include <pthread.h>
#include <unistd.h>

#include <caf/send.hpp>
#include <algorithm>
#include <chrono>
#include <climits>
#include <condition_variable>
#include <cstdio>
#include <cstring>
#include <atomic>
#include <map>
#include <mutex>
#include <thread>
#include <new>

#include "actors/messages.hpp"
#include "actors/server_actor.hpp"
#include "api/convert.hpp"
#include "server/registration.hpp"
#include "api/data_pack.hpp"
#include "api/fork_env.hpp"
#include "faults/check.hpp"
#include "faults/plane.hpp"
#include "server/server_runtime.hpp"
#include "server/server_directives.hpp"
#include "api/server_runtime_abi.h"
#include "common/host.hpp"
#include "common/log.hpp"
#include "common/directives.hpp"
#include "common/fork_park.hpp"
#include "common/progress.hpp"
#include "common/supported.hpp"

namespace pmix::server {
namespace {

struct library {
  std::mutex mutex;
  std::shared_ptr<runtime> rt;
  int refcount = 0;
  // PMIx_server_setup_local_support's environment changes, by namespace,
  // applied by PMIx_server_setup_fork (also in a forked child, which reads
  // the copy it inherited).
  std::map<std::string, std::vector<env_change>> fork_env;
  // What libpmix.so.2 does for us (set once, right after loading).
  std::atomic<const pmix_cxx_library_hooks_t*> hooks{nullptr};
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

// The parent's fixed server context, in a forked child: a host may call
// PMIx_server_setup_fork there, between fork and exec (Slurm's slurmstepd
// does), and the child's environment depends only on it. The runtime it
// belongs to is leaked in the child, so the pointer stays valid.
const actors::server_context* forked_context = nullptr;

void forget_after_fork() {
  auto& l = lib();
  forked_context = l.rt ? &l.rt->context() : nullptr;
  new (&l.mutex) std::mutex();
  fork_park::park(l.rt);  // leaked on purpose, kept reachable (common/fork_park.hpp)
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
  bool ready() {
    std::lock_guard<std::mutex> guard{m};
    return done;
  }
  // Waits for the result, progressing the server meanwhile if the host
  // drives progress (PMIX_EXTERNAL_PROGRESS).
  pmix_status_t wait(runtime& rt) {
    rt.wait_until([this] { return ready(); },
                  [this] {
                    std::unique_lock<std::mutex> guard{m};
                    cv.wait(guard, [this] { return done; });
                  });
    std::lock_guard<std::mutex> guard{m};
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
    rt->tell(make(std::move(channel)));
    return PMIX_SUCCESS;
  }
  if (progress::in_library_thread()) {
    log::error("api", name, " called from a PMIx library thread (a callback or host up-call): ",
               "PMIX_ERR_WOULD_BLOCK; use the non-blocking form or a thread of your own");
    return PMIX_ERR_WOULD_BLOCK;
  }
  auto w = std::make_shared<waiter<actors::no_result>>();
  rt->tell(make(w->channel(w)));
  return w->wait(*rt);
}

bool valid_nspace(const char* ns) {
  return ns != nullptr && ns[0] != '\0' && strnlen(ns, PMIX_MAX_NSLEN + 1) <= PMIX_MAX_NSLEN;
}

// The directives as C++ values, except PMIX_TOPOLOGY2, whose pointer cannot
// be copied into one: it is handed over as is.
pmix_status_t read_directives(const pmix_info_t* info, size_t ninfo, info_list& out,
                              const pmix_topology_t*& topology) {
  out.clear();
  topology = nullptr;
  if (ninfo > 0 && info == nullptr) return PMIX_ERR_BAD_PARAM;
  for (size_t k = 0; k < ninfo; ++k) {
    if (std::strncmp(info[k].key, PMIX_TOPOLOGY2, PMIX_MAX_KEYLEN) == 0) {
      if (info[k].value.type == PMIX_TOPO) topology = info[k].value.data.topo;
      else if (info[k].value.type == PMIX_POINTER)
        topology = static_cast<const pmix_topology_t*>(info[k].value.data.ptr);
      out.push_back(pmix::info{PMIX_TOPOLOGY2, value{}, info[k].flags});
      continue;
    }
    pmix::info i;
    i.key = convert::key(info[k].key);
    i.flags = info[k].flags;
    const auto rc = convert::from_c(info[k].value, i.val);
    if (rc != PMIX_SUCCESS) {
      log::error("server", "PMIx_server_init: directive ", i.key, " has a value that cannot be read");
      return PMIX_ERR_BAD_PARAM;
    }
    out.push_back(std::move(i));
  }
  return PMIX_SUCCESS;
}

// ---- the table's functions -------------------------------------------------

int in_library_thread() { return progress::in_library_thread() ? 1 : 0; }

pmix_status_t init(pmix_server_module_t* module, pmix_info_t info[], size_t ninfo) {
  if (progress::in_library_thread()) return PMIX_ERR_WOULD_BLOCK;
  info_list directives;
  const pmix_topology_t* topology = nullptr;
  auto rc = read_directives(info, ninfo, directives, topology);
  if (rc != PMIX_SUCCESS) return rc;
  auto& l = lib();
  std::lock_guard<std::mutex> guard{l.mutex};
  if (l.rt) {
    std::uint32_t nslots = host::module::kSlotsV4;
    std::string why;
    for (const auto& d : directives)
      if (d.key == PMIX_CXX_SERVER_MODULE_SLOTS && !module_slots(d, nslots, why)) {
        log::error("server", "PMIx_server_init: ", why);
        return PMIX_ERR_BAD_PARAM;
      }
    ++l.refcount;
    if (l.rt->host().adopt(module, nslots)) log::info("server", "adopted the host module of a later init");
    return PMIX_SUCCESS;
  }
  settings s;
  std::string error;
  rc = read_settings(directives, topology, [](const char* n) { return std::getenv(n); }, host_name(),
                     ::getpid(), s, error);
  if (rc == PMIX_SUCCESS) {
    std::unique_ptr<runtime> rt;
    const auto* hooks = l.hooks.load(std::memory_order_acquire);
    rc = runtime::start(s, module, hooks != nullptr ? hooks->attribute_support : nullptr, rt, error);
    if (rc == PMIX_SUCCESS) {
      l.rt = std::move(rt);
      l.refcount = 1;
      return PMIX_SUCCESS;
    }
  }
  log::error("server", "PMIx_server_init failed (", PMIx_Error_string(rc), "): ", error);
  return rc;
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
    l.fork_env.clear();
  }
  // The teardown runs outside the lock. Calls other threads still have in
  // flight end (PMIX_ERR_NOT_AVAILABLE) before the runtime is destroyed, so
  // it is gone when finalize returns.
  doomed->stop();
  while (doomed.use_count() > 1) std::this_thread::sleep_for(std::chrono::microseconds(100));
  doomed.reset();
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
  auto rc = registration::from_c(info, ninfo, msg.reg);
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
  {
    std::lock_guard<std::mutex> guard{lib().mutex};
    lib().fork_env.erase(name);
  }
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
  // A host registers its ranks in a burst: the loop thread takes each call
  // as a plain record (no allocation, no message of its own).
  if (cbfunc != nullptr && rt->post_registration(proc->nspace, {proc->rank, uid, gid, server_object, cbfunc, cbdata}))
    return PMIX_SUCCESS;
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
  // In a forked child of the server the parent's context still answers:
  // the environment needs no thread of the server.
  const actors::server_context* ctx = rt ? &rt->context() : forked_context;
  if (ctx == nullptr) return PMIX_ERR_INIT;
  if (proc == nullptr || env == nullptr || !valid_nspace(proc->nspace)) return PMIX_ERR_BAD_PARAM;
  // Computed from the fixed server context: no actor round trip needed.
  const auto p = convert::proc(*proc);
  const auto vars = actors::client_environment(*ctx, p);
  for (const auto& v : vars) {
    const auto eq = v.find('=');
    const auto name = v.substr(0, eq);
    const auto value = v.substr(eq + 1);
    auto rc = pmix_setenv(name.c_str(), value.c_str(), true, env);
    if (rc != PMIX_SUCCESS) return rc;
  }
  std::vector<env_change> changes;
  {
    std::lock_guard<std::mutex> guard{lib().mutex};
    auto it = lib().fork_env.find(p.nspace);
    if (it != lib().fork_env.end()) changes = it->second;
  }
  return apply_env_changes(changes, env);
}

// Runs `fn` on a library thread (the server's), inside a progress::scope:
// a callback the host gets from a call it made is never run inside that
// call.
template <class F>
void call_back_later(runtime& rt, F fn) {
  rt.tell(actors::task_msg{[fn = std::move(fn)]() mutable {
    progress::scope in_callback;
    fn();
  }});
}

pmix_status_t dmodex_request(const pmix_proc_t* proc, pmix_dmodex_response_fn_t cbfunc, void* cbdata) {
  auto rt = current();
  if (!rt) return PMIX_ERR_INIT;
  if (proc == nullptr || cbfunc == nullptr || !valid_nspace(proc->nspace) || proc->rank >= rank_valid_limit) {
    log::error("api", "PMIx_server_dmodex_request: a process of a valid rank and a callback are required");
    return PMIX_ERR_BAD_PARAM;
  }
  auto done = actors::make_reply<std::string>([cbfunc, cbdata](pmix_status_t st, std::string data) {
    progress::scope in_callback;
    cbfunc(st, data.empty() ? nullptr : data.data(), data.size(), cbdata);
  });
  rt->tell(actors::dmodex_request_msg{convert::proc(*proc), std::move(done)});
  return PMIX_SUCCESS;
}

pmix_status_t iof_deliver(const pmix_proc_t* source, pmix_iof_channel_t channel, const pmix_byte_object_t* bo,
                          const pmix_info_t info[], size_t ninfo, pmix_op_cbfunc_t cbfunc, void* cbdata) {
  auto rt = current();
  if (!rt) return PMIX_ERR_INIT;
  if (source == nullptr || bo == nullptr || (bo->size > 0 && bo->bytes == nullptr)) {
    log::error("api", "PMIx_server_IOF_deliver: a source and a byte object are required");
    return PMIX_ERR_BAD_PARAM;
  }
  auto rc = directives::check("PMIx_server_IOF_deliver", info, ninfo, supported::iof_deliver);
  if (rc != PMIX_SUCCESS) return rc;
  // To the processes that pulled it (PMIx_IOF_pull), and with
  // PMIX_IOF_LOCAL_OUTPUT to the server's own stdout or stderr.
  if (bo->size > 0) {
    actors::iof_output_msg out{convert::proc(*source), channel, std::string(bo->bytes, bo->size), {}};
    if (ninfo > 0 && convert::from_c(info, ninfo, out.info) != PMIX_SUCCESS) out.info.clear();
    rt->tell(std::move(out));
  }
  if (rt->context().iof_local_output && bo->size > 0) {
    const int fd = (channel & PMIX_FWD_STDOUT_CHANNEL) != 0 ? STDOUT_FILENO : STDERR_FILENO;
    std::size_t done = 0;
    while (done < bo->size) {
      const auto n = ::write(fd, bo->bytes + done, bo->size - done);
      if (n <= 0) break;
      done += static_cast<std::size_t>(n);
    }
  }
  if (cbfunc != nullptr) call_back_later(*rt, [cbfunc, cbdata] { cbfunc(PMIX_SUCCESS, cbdata); });
  return PMIX_SUCCESS;
}

// The host stops (xoff) or resumes the stdin of `source` (NULL: every
// producer; a wildcard rank: a whole namespace): actors/stdin_flow.hpp.
pmix_status_t iof_flow_control(const pmix_proc_t* source, pmix_iof_channel_t channel, bool xoff,
                               const pmix_info_t directives[], size_t ndirs, pmix_op_cbfunc_t cbfunc, void* cbdata) {
  auto rt = current();  // a library thread's blocking call was refused in api/server_stub.cpp
  if (!rt) return PMIX_ERR_INIT;
  if ((channel & PMIX_FWD_STDIN_CHANNEL) == 0) {
    log::warning("api", "PMIx_server_IOF_flow_control: only stdin (PMIX_FWD_STDIN_CHANNEL) is flow-controlled");
    return PMIX_ERR_NOT_SUPPORTED;
  }
  auto rc = directives::check("PMIx_server_IOF_flow_control", directives, ndirs, supported::iof_deliver);
  if (rc != PMIX_SUCCESS) return rc;
  std::optional<proc_id> producers;
  if (source != nullptr && source->nspace[0] != '\0') producers = convert::proc(*source);
  const auto& ctx = rt->context();
  for (auto& h : ctx.stdin_control->set(producers, xoff))
    ctx.gate->send_if_open(h.peer, actors::resume_push_atom::value, h.id, std::move(h.request));
  log::debug("api", "PMIx_server_IOF_flow_control: stdin ", xoff ? "stopped" : "resumed", " for ",
             producers ? to_string(*producers) : std::string{"every producer"});
  if (cbfunc == nullptr) return PMIX_OPERATION_SUCCEEDED;
  call_back_later(*rt, [cbfunc, cbdata] { cbfunc(PMIX_SUCCESS, cbdata); });
  return PMIX_SUCCESS;
}

struct info_release {
  pmix_info_t* info = nullptr;
  size_t ninfo = 0;
};

void release_info(pmix_status_t, void* cbdata) {
  std::unique_ptr<info_release> r{static_cast<info_release*>(cbdata)};
  if (r->info != nullptr) PMIX_INFO_FREE(r->info, r->ninfo);
}

pmix_status_t setup_application(const pmix_nspace_t nspace, pmix_info_t info[], size_t ninfo,
                                 pmix_setup_application_cbfunc_t cbfunc, void* cbdata) {
  auto rt = current();
  if (!rt) return PMIX_ERR_INIT;
  if (!valid_nspace(nspace) || cbfunc == nullptr) {
    log::error("api", "PMIx_server_setup_application: a namespace and a callback are required");
    return PMIX_ERR_BAD_PARAM;
  }
  info_list directives;
  if (convert::from_c(info, ninfo, directives) != PMIX_SUCCESS) return PMIX_ERR_BAD_PARAM;
  auto rc = directives::check("PMIx_server_setup_application", directives, supported::setup_application);
  if (rc != PMIX_SUCCESS) return rc;
  bool envars = false;
  for (const auto& d : directives)
    if ((d.key == PMIX_SETUP_APP_ENVARS || d.key == PMIX_SETUP_APP_ALL) && d.val.truthy()) envars = true;
  // There is no fabric to prepare: the environment is all there is to give.
  const auto out = envars ? harvest_envars(environ) : info_list{};
  call_back_later(*rt, [out, cbfunc, cbdata] {
    auto* r = new info_release;
    r->ninfo = out.size();
    if (!out.empty()) {
      PMIX_INFO_CREATE(r->info, r->ninfo);
      for (size_t k = 0; k < out.size(); ++k) convert::to_c(out[k], r->info[k]);
    }
    cbfunc(PMIX_SUCCESS, r->info, r->ninfo, cbdata, release_info, r);
  });
  return PMIX_SUCCESS;
}

pmix_status_t setup_local_support(const pmix_nspace_t nspace, pmix_info_t info[], size_t ninfo,
                                  pmix_op_cbfunc_t cbfunc, void* cbdata) {
  auto rt = current();
  if (!rt) return PMIX_ERR_INIT;
  if (!valid_nspace(nspace)) return PMIX_ERR_BAD_PARAM;
  info_list all;
  if (convert::from_c(info, ninfo, all) != PMIX_SUCCESS) return PMIX_ERR_BAD_PARAM;
  std::vector<env_change> changes;
  info_list job;
  std::string error;
  auto rc = split_env_changes(all, changes, job, error);
  if (rc != PMIX_SUCCESS) {
    log::error("api", "PMIx_server_setup_local_support: ", error);
    return rc;
  }
  const auto name = convert::nspace(nspace);
  if (!changes.empty()) {
    std::lock_guard<std::mutex> guard{lib().mutex};
    auto& kept = lib().fork_env[name];
    kept.insert(kept.end(), changes.begin(), changes.end());
  }
  return op_call("PMIx_server_setup_local_support", rt, cbfunc, cbdata,
                 [&](actors::reply_to<actors::no_result> done) {
                   return actors::extend_job_msg{name, std::move(job), std::move(done)};
                 });
}

pmix_status_t collect_job_info(pmix_proc_t* procs, size_t nprocs, pmix_data_buffer_t* dbuf) {
  if (progress::in_library_thread()) {
    log::error("api", "PMIx_server_collect_job_info called from a PMIx library thread: ",
               "PMIX_ERR_WOULD_BLOCK; call it from a thread of your own");
    return PMIX_ERR_WOULD_BLOCK;
  }
  if (procs == nullptr || nprocs == 0 || dbuf == nullptr) {
    log::error("api", "PMIx_server_collect_job_info: no procs or no buffer");
    return PMIX_ERR_BAD_PARAM;
  }
  auto rt = current();
  if (!rt) return PMIX_ERR_INIT;
  if (rt->stopped()) return PMIX_ERR_NOT_AVAILABLE;  // finalizing
  // The unique namespaces, in the order they first appear.
  std::vector<std::string> nspaces;
  for (size_t k = 0; k < nprocs; ++k) {
    auto ns = convert::nspace(procs[k].nspace);
    if (std::find(nspaces.begin(), nspaces.end(), ns) == nspaces.end()) nspaces.push_back(std::move(ns));
  }
  auto w = std::make_shared<waiter<actors::job_infos>>();
  rt->tell(actors::collect_job_info_msg{std::move(nspaces), w->channel(w)});
  const auto rc = w->wait(*rt);
  if (rc != PMIX_SUCCESS) return rc;
  // Per namespace one byte object (spec 002), whose bytes are packed values:
  // the namespace's name, then its job-level items (what
  // PMIx_server_register_nspace takes), one PMIX_INFO each, to the end of
  // the bytes. OpenPMIx packs its items as PMIX_KVAL, a type without a
  // public struct that no host can unpack; PMIX_INFO is the public form.
  std::vector<value> out;
  for (auto& [ns, info] : w->result) {
    std::vector<value> payload;
    payload.reserve(info.size() + 1);
    payload.push_back(value::string(ns));
    for (auto& i : info) payload.push_back(value{PMIX_INFO, std::make_shared<const pmix::info>(std::move(i))});
    out.push_back(value::bytes(PMIX_BYTE_OBJECT, pack::records(payload)));
  }
  return pack::append(*dbuf, out);
}

pmix_status_t view(pmix_cxx_server_view_t* out) {
  if (out == nullptr) return PMIX_ERR_BAD_PARAM;
  std::memset(out, 0, sizeof *out);
  auto rt = current();
  if (!rt) return PMIX_ERR_INIT;
  if (progress::in_library_thread()) return PMIX_ERR_WOULD_BLOCK;
  auto w = std::make_shared<waiter<actors::server_snapshot>>();
  rt->tell(actors::snapshot_msg{w->channel(w)});
  auto rc = w->wait(*rt);
  if (rc != PMIX_SUCCESS) return rc;
  const auto& snap = w->result;
  out->fences_in_flight = snap.fences_in_flight;
  out->connections = rt->connection_count();
  out->actors_running = rt->actors_running();
  out->departed = snap.departed;
  out->dropped_sends = snap.dropped_sends;
  out->board_posts = snap.board_posts;
  out->sensors = snap.sensors;
  out->iof_registrations = snap.iof_registrations;
  out->stdin_held = rt->context().stdin_control->held_count();
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
      o.ranks[k] = pmix_cxx_rank_view_t{r.rank,       r.registered, r.proc_cnt, r.peers, r.tombstones,
                                        r.has_peerid, r.dead,       r.actor,    r.waiting_gets};
    }
  }
  return PMIX_SUCCESS;
}

pmix_status_t faults_check(const char* nspace, int wait_ms, char** report) {
  if (report != nullptr) *report = nullptr;
  auto rt = current();
  if (!rt) return PMIX_ERR_INIT;
  if (progress::in_library_thread()) return PMIX_ERR_WOULD_BLOCK;
  const auto& plane = rt->context().faults;
  std::vector<std::string> violations;
  const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(std::max(wait_ms, 0));
  for (;;) {
    auto w = std::make_shared<waiter<actors::server_snapshot>>();
    rt->tell(actors::snapshot_msg{w->channel(w)});
    const auto rc = w->wait(*rt);
    if (rc != PMIX_SUCCESS) return rc;
    faults::observed o;
    o.snapshot = std::move(w->result);
    o.connections = rt->connection_count();
    o.actors_running = rt->actors_running();
    if (plane) o.ledger = plane->snapshot();
    violations = nspace != nullptr ? faults::check_job_ended(o, nspace) : faults::check_all_deregistered(o);
    if (violations.empty() || std::chrono::steady_clock::now() >= until) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  if (report != nullptr) {
    std::string text;
    if (plane) {
      const auto r = plane->snapshot();
      char line[160];
      std::snprintf(line, sizeof line, "seed %llu, %zu faults injected, trace hash %016llx, set hash %016llx\n",
                    static_cast<unsigned long long>(r.seed), r.trace.size(),
                    static_cast<unsigned long long>(r.trace_hash), static_cast<unsigned long long>(r.set_hash));
      text += "plan " + r.plan + "\n" + line;
      for (const auto& t : r.trace) text += "injected " + t + "\n";
    } else {
      text += "no fault plane\n";
    }
    for (const auto& v : violations) text += "violation " + v + "\n";
    *report = strdup(text.c_str());
  }
  return violations.empty() ? PMIX_SUCCESS : PMIX_ERROR;
}

pmix_status_t faults_disarm() {
  auto rt = current();
  if (!rt) return PMIX_ERR_INIT;
  if (!rt->context().faults) return PMIX_ERR_NOT_FOUND;
  rt->context().faults->disarm();
  return PMIX_SUCCESS;
}

void view_free(pmix_cxx_server_view_t* v) {
  if (v == nullptr) return;
  for (std::size_t i = 0; i < v->nnspaces; ++i) std::free(v->nspaces[i].ranks);
  std::free(v->nspaces);
  std::memset(v, 0, sizeof *v);
}

void progress() {
  if (auto rt = current()) rt->progress(0);
}

pmix_status_t contact(char** uri, char** alt_uris) {
  auto rt = current();
  if (!rt || rt->stopped()) return PMIX_ERR_INIT;
  std::string alts;
  for (const auto& a : rt->alt_uris()) alts += (alts.empty() ? "" : ",") + a;
  *uri = ::strdup(rt->uri().c_str());
  *alt_uris = ::strdup(alts.c_str());
  return PMIX_SUCCESS;
}

int running(pmix_proc_t* self) {
  auto rt = current();
  if (!rt || rt->stopped()) return 0;
  if (self != nullptr) convert::to_c(rt->context().server, *self);
  return 1;
}

// PMIx_Notify_event from the host: to the clients and tools in range.
pmix_status_t notify(pmix_status_t status, const pmix_proc_t* source, pmix_data_range_t range,
                     const pmix_info_t info[], size_t ninfo, pmix_op_cbfunc_t cbfunc, void* cbdata) {
  auto rt = current();
  if (!rt) return PMIX_ERR_INIT;
  if (rt->stopped()) return PMIX_ERR_NOT_AVAILABLE;
  event ev;
  ev.status = status;
  ev.source = source == nullptr ? rt->context().server : convert::proc(*source);
  ev.range = range;
  if (convert::from_c(info, ninfo, ev.info) != PMIX_SUCCESS) {
    log::error("api", "PMIx_Notify_event: unreadable info");
    return PMIX_ERR_BAD_PARAM;
  }
  return op_call("PMIx_Notify_event", rt, cbfunc, cbdata,
                 [&](actors::reply_to<actors::no_result> done) {
                   return actors::notify_msg{std::move(ev), std::move(done)};
                 });
}

pmix_status_t post(void (*fn)(void*), void* arg) {
  auto rt = current();
  if (!rt || rt->stopped()) return PMIX_ERR_INIT;
  rt->tell(actors::task_msg{[fn, arg] {
    progress::scope in_library;
    fn(arg);
  }});
  return PMIX_SUCCESS;
}

void set_library_hooks(const pmix_cxx_library_hooks_t* hooks) {
  lib().hooks.store(hooks, std::memory_order_release);
}

// ---- inventory, process sets, resources -----------------------------------

pmix_status_t collect_inventory(pmix_info_t directives[], size_t ndirs, pmix_info_cbfunc_t cbfunc, void* cbdata) {
  auto rt = current();
  if (!rt) return PMIX_ERR_INIT;
  info_list dirs;
  if (cbfunc == nullptr || convert::from_c(directives, ndirs, dirs) != PMIX_SUCCESS) {
    log::error("api", "PMIx_server_collect_inventory: a callback and readable directives are required");
    return PMIX_ERR_BAD_PARAM;
  }
  if (auto rc = directives::check("PMIx_server_collect_inventory", dirs, supported::collect_inventory);
      rc != PMIX_SUCCESS)
    return rc;
  actors::collect_inventory_msg msg;
  if (const auto* host = find(dirs, PMIX_HOSTNAME); host != nullptr && host->val.as_string() != nullptr)
    msg.host = *host->val.as_string();
  msg.done = actors::make_reply<info_list>([cbfunc, cbdata](pmix_status_t st, info_list out) {
    progress::scope in_callback;
    convert::deliver_infos(cbfunc, cbdata, st, out);
  });
  rt->tell(std::move(msg));
  return PMIX_SUCCESS;
}

pmix_status_t deliver_inventory(pmix_info_t info[], size_t ninfo, pmix_info_t directives[], size_t ndirs,
                                pmix_op_cbfunc_t cbfunc, void* cbdata) {
  auto rt = current();
  if (!rt) return PMIX_ERR_INIT;
  info_list inventory, dirs;
  if (convert::from_c(info, ninfo, inventory) != PMIX_SUCCESS ||
      convert::from_c(directives, ndirs, dirs) != PMIX_SUCCESS) {
    log::error("api", "PMIx_server_deliver_inventory: unreadable info");
    return PMIX_ERR_BAD_PARAM;
  }
  const auto* host = find(inventory, PMIX_HOSTNAME);
  if (host == nullptr || host->val.as_string() == nullptr || host->val.as_string()->empty()) {
    log::error("api", "PMIx_server_deliver_inventory: the inventory names no node (PMIX_HOSTNAME)");
    return PMIX_ERR_BAD_PARAM;
  }
  // No directive of its own: ignored unless required.
  if (auto rc = directives::check("PMIx_server_deliver_inventory", dirs, {}); rc != PMIX_SUCCESS) return rc;
  const std::string name = *host->val.as_string();
  return op_call("PMIx_server_deliver_inventory", rt, cbfunc, cbdata,
                 [&](actors::reply_to<actors::no_result> done) {
                   return actors::deliver_inventory_msg{name, std::move(inventory), std::move(done)};
                 });
}

pmix_status_t define_process_set(const pmix_proc_t* members, size_t nmembers, const char* pset_name) {
  auto rt = current();
  if (!rt) return PMIX_ERR_INIT;
  std::vector<proc_id> procs;
  if (!valid_nspace(pset_name) || members == nullptr || nmembers == 0 ||
      convert::from_c(members, nmembers, procs) != PMIX_SUCCESS) {
    log::error("api", "PMIx_server_define_process_set: a name of 1 to ", PMIX_MAX_NSLEN,
               " characters and members are required");
    return PMIX_ERR_BAD_PARAM;
  }
  return op_call("PMIx_server_define_process_set", rt, nullptr, nullptr,
                 [&](actors::reply_to<actors::no_result> done) {
                   return actors::pset_msg{true, pset_name, std::move(procs), std::move(done)};
                 });
}

pmix_status_t delete_process_set(const char* pset_name) {
  auto rt = current();
  if (!rt) return PMIX_ERR_INIT;
  if (!valid_nspace(pset_name)) {
    log::error("api", "PMIx_server_delete_process_set: no valid name");
    return PMIX_ERR_BAD_PARAM;
  }
  return op_call("PMIx_server_delete_process_set", rt, nullptr, nullptr,
                 [&](actors::reply_to<actors::no_result> done) {
                   return actors::pset_msg{false, pset_name, {}, std::move(done)};
                 });
}

pmix_status_t change_resources(const char* call, bool add, pmix_info_t info[], size_t ninfo,
                               pmix_op_cbfunc_t cbfunc, void* cbdata) {
  auto rt = current();
  if (!rt) return PMIX_ERR_INIT;
  info_list items;
  if (info == nullptr || ninfo == 0 || convert::from_c(info, ninfo, items) != PMIX_SUCCESS) {
    log::error("api", call, ": no info, or unreadable");
    return PMIX_ERR_BAD_PARAM;
  }
  return op_call(call, rt, cbfunc, cbdata, [&](actors::reply_to<actors::no_result> done) {
    return actors::resources_msg{add, std::move(items), std::move(done)};
  });
}

pmix_status_t register_resources(pmix_info_t info[], size_t ninfo, pmix_op_cbfunc_t cbfunc, void* cbdata) {
  return change_resources("PMIx_server_register_resources", true, info, ninfo, cbfunc, cbdata);
}

pmix_status_t deregister_resources(pmix_info_t info[], size_t ninfo, pmix_op_cbfunc_t cbfunc, void* cbdata) {
  return change_resources("PMIx_server_deregister_resources", false, info, ninfo, cbfunc, cbdata);
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
    progress,
    collect_job_info,
    running,
    notify,
    post,
    dmodex_request,
    iof_deliver,
    setup_application,
    setup_local_support,
    contact,
    set_library_hooks,
    collect_inventory,
    deliver_inventory,
    define_process_set,
    delete_process_set,
    register_resources,
    deregister_resources,
    faults_check,
    faults_disarm,
    iof_flow_control,
};

}  // namespace
}  // namespace pmix::server

extern "C" __attribute__((visibility("default"))) const pmix_cxx_server_runtime_t*
pmix_cxx_server_runtime(void) {
  return &pmix::server::table;
}
