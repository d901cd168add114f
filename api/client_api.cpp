// The client API (pmix.h) in libpmix.so.2: the thin facade over the client
// runtime (client/). No actor system here: client processes stay light.
#include <pmix.h>
#include <unistd.h>

#include <condition_variable>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>

#include "api/blocking.hpp"
#include "api/convert.hpp"
#include "api/server_stub.hpp"
#include "client/connection.hpp"
#include "client/store.hpp"
#include "common/log.hpp"
#include "common/progress.hpp"
#include "protocol/codec.hpp"
#include "protocol/version.hpp"

namespace pmix::api {
namespace {

// One init..finalize cycle of the client library.
struct client_state {
  proc_id self;
  proc_id server;
  bool singleton = false;
  std::unique_ptr<client::connection> conn;
  std::mutex mutex;  // guards data and staged
  client::store data;
  std::map<std::string, wire::ScopedInfo> staged;  // put since the last commit
};

struct client_library {
  std::mutex mutex;
  int refcount = 0;
  pid_t pid = 0;  // the process that initialized (a forked child differs)
  std::shared_ptr<client_state> state;
};

client_library& lib() {
  static client_library instance;
  return instance;
}

std::shared_ptr<client_state> current() {
  auto& l = lib();
  std::lock_guard<std::mutex> guard{l.mutex};
  if (l.pid != getpid()) return nullptr;
  return l.state;
}

// Waits on a user thread for a completion that runs on the progress thread.
struct waiter {
  std::mutex m;
  std::condition_variable cv;
  bool done = false;
  pmix_status_t status = PMIX_ERR_NOT_AVAILABLE;

  void finish(pmix_status_t st) {
    std::lock_guard<std::mutex> guard{m};
    status = st;
    done = true;
    cv.notify_all();
  }
  pmix_status_t wait() {
    std::unique_lock<std::mutex> guard{m};
    cv.wait(guard, [this] { return done; });
    return status;
  }
};

bool is_reserved(const std::string& key) { return key.compare(0, 4, "pmix") == 0; }

bool valid_key(const char* key) {
  return key != nullptr && key[0] != '\0' && strnlen(key, PMIX_MAX_KEYLEN + 1) <= PMIX_MAX_KEYLEN;
}

// ---- init -------------------------------------------------------------------

wire::JobInfo singleton_job(const proc_id& self) {
  wire::JobInfo job;
  job.set_nspace(self.nspace);
  info_list info = {
      {PMIX_JOB_SIZE, value::unsigned_(PMIX_UINT32, 1), 0},
      {PMIX_UNIV_SIZE, value::unsigned_(PMIX_UINT32, 1), 0},
      {PMIX_LOCAL_SIZE, value::unsigned_(PMIX_UINT32, 1), 0},
      {PMIX_LOCAL_PEERS, value::string("0"), 0},
      {PMIX_NUM_NODES, value::unsigned_(PMIX_UINT32, 1), 0},
      {PMIX_JOBID, value::string(self.nspace), 0},
      {PMIX_APPNUM, value::unsigned_(PMIX_UINT32, 0), 0},
  };
  protocol::to_wire(info, job.mutable_info());
  auto* r = job.add_ranks();
  r->set_rank(0);
  info_list rank = {
      {PMIX_LOCAL_RANK, value::unsigned_(PMIX_UINT16, 0), 0},
      {PMIX_NODE_RANK, value::unsigned_(PMIX_UINT16, 0), 0},
      {PMIX_GLOBAL_RANK, value::unsigned_(PMIX_PROC_RANK, 0), 0},
  };
  protocol::to_wire(rank, r->mutable_info());
  return job;
}

pmix_status_t start_client(std::shared_ptr<client_state>& out) {
  auto st = std::make_shared<client_state>();
  const char* ns = std::getenv("PMIX_NAMESPACE");
  const char* uri = std::getenv("PMIX_SERVER_URI41");
  if (uri == nullptr) uri = std::getenv("PMIX_SERVER_URI4");
  if (ns == nullptr || uri == nullptr) {
    // No server: a singleton, as OpenPMIx does.
    st->singleton = true;
    st->self = proc_id{"singleton." + std::to_string(getpid()), 0};
    std::string error;
    st->data.load_job(singleton_job(st->self), &error);
    out = std::move(st);
    return PMIX_SUCCESS;
  }
  const char* rank = std::getenv("PMIX_RANK");
  char* end = nullptr;
  const auto r = rank == nullptr ? 0ul : std::strtoul(rank, &end, 10);
  if (rank == nullptr || *rank == '\0' || *end != '\0' || r >= rank_valid_limit) {
    log::error("client", "PMIX_RANK is missing or not a valid rank");
    return PMIX_ERR_BAD_PARAM;
  }
  st->self = proc_id{ns, static_cast<rank_t>(r)};
  auto rc = client::connection::open(uri, st->conn);
  if (rc != PMIX_SUCCESS) return rc;
  wire::Envelope request;
  auto* c = request.mutable_connect();
  c->set_protocol_version(protocol::wire_version);
  c->set_role(wire::ROLE_CLIENT);
  protocol::to_wire(st->self, c->mutable_proc());
  c->set_pid(getpid());
  wire::Envelope reply;
  rc = st->conn->handshake(request, reply);
  if (rc != PMIX_SUCCESS) return rc;
  if (reply.body_case() != wire::Envelope::kConnectReply) return PMIX_ERR_UNPACK_FAILURE;
  const auto& cr = reply.connect_reply();
  if (cr.status() != PMIX_SUCCESS) {
    log::error("client", "the server refused ", to_string(st->self), ": ",
               PMIx_Error_string(cr.status()));
    return cr.status();
  }
  st->server = protocol::from_wire(cr.server());
  wire::JobInfo job;
  std::string error;
  if (!job.ParseFromString(cr.job()) || !st->data.load_job(job, &error)) {
    log::error("client", "unreadable job data from the server: ", error);
    return PMIX_ERR_UNPACK_FAILURE;
  }
  rc = st->conn->start();
  if (rc != PMIX_SUCCESS) return rc;
  out = std::move(st);
  return PMIX_SUCCESS;
}

// ---- get ----------------------------------------------------------------------

enum class lookup { found, not_found, ask_server };

lookup resolve_local(client_state& st, const proc_id& target, const std::string& key, bool optional,
                     value& out) {
  std::lock_guard<std::mutex> guard{st.mutex};
  const bool rank_level = target.rank < rank_valid_limit;
  if (is_reserved(key)) {
    if (rank_level)
      if (const auto* v = st.data.rank_value(target, key)) return out = *v, lookup::found;
    if (const auto* v = st.data.job_value(target.nspace, key)) return out = *v, lookup::found;
    if (const auto* v = st.data.peer_value(target, key)) return out = *v, lookup::found;
    return lookup::not_found;
  }
  if (const auto* v = st.data.peer_value(target, key)) return out = *v, lookup::found;
  if (!rank_level) {
    if (const auto* v = st.data.job_value(target.nspace, key)) return out = *v, lookup::found;
    return lookup::not_found;
  }
  if (target == st.self || st.singleton || optional || st.data.has_complete_data(target))
    return lookup::not_found;
  return lookup::ask_server;
}

struct get_request {
  proc_id target;
  std::string key;
  info_list info;
  bool optional = false;
};

pmix_status_t read_get_args(const client_state& st, const pmix_proc_t* proc, const char* key,
                            const pmix_info_t info[], size_t ninfo, get_request& req) {
  if (!valid_key(key)) {
    log::error("api", "PMIx_Get: the key is missing or longer than ", PMIX_MAX_KEYLEN, " bytes");
    return PMIX_ERR_BAD_PARAM;
  }
  req.key = key;
  req.target = proc == nullptr ? proc_id{st.self.nspace, PMIX_RANK_UNDEF} : convert::proc(*proc);
  if (req.target.nspace.empty()) req.target.nspace = st.self.nspace;
  auto rc = convert::from_c(info, ninfo, req.info);
  if (rc != PMIX_SUCCESS) return PMIX_ERR_BAD_PARAM;
  if (const auto* o = find(req.info, PMIX_OPTIONAL)) req.optional = o->val.truthy();
  return PMIX_SUCCESS;
}

// Asks the server for target's committed data; `done` runs on the progress
// thread with the lookup's final status.
pmix_status_t fetch_remote(const std::shared_ptr<client_state>& st, const get_request& req,
                           std::function<void(pmix_status_t, const value*)> done) {
  wire::Envelope e;
  auto* g = e.mutable_get();
  protocol::to_wire(req.target, g->mutable_proc());
  g->set_key(req.key);
  protocol::to_wire(req.info, g->mutable_info());
  return st->conn->request(e, [st, req, done](pmix_status_t status, wire::Envelope* reply) {
    if (status == PMIX_SUCCESS && reply->body_case() != wire::Envelope::kGetReply)
      status = PMIX_ERR_UNPACK_FAILURE;
    if (status == PMIX_SUCCESS) status = reply->get_reply().status();
    if (status != PMIX_SUCCESS && status != PMIX_ERR_NOT_FOUND) return done(status, nullptr);
    value found;
    bool have = false;
    {
      std::lock_guard<std::mutex> guard{st->mutex};
      std::string error;
      if (reply != nullptr && reply->get_reply().has_data() &&
          !st->data.add_peer_data(reply->get_reply().data(), st->self, &error)) {
        log::error("client", "unreadable data for ", to_string(req.target), ": ", error);
        return done(PMIX_ERR_UNPACK_FAILURE, nullptr);
      }
      if (const auto* v = st->data.peer_value(req.target, req.key)) {
        found = *v;
        have = true;
      }
    }
    done(have ? PMIX_SUCCESS : PMIX_ERR_NOT_FOUND, have ? &found : nullptr);
  });
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

// ---- fence --------------------------------------------------------------------

pmix_status_t start_fence(const std::shared_ptr<client_state>& st, const pmix_proc_t procs[],
                          size_t nprocs, const pmix_info_t info[], size_t ninfo,
                          std::function<void(pmix_status_t)> done) {
  std::vector<proc_id> participants;
  info_list directives;
  if (convert::from_c(procs, nprocs, participants) != PMIX_SUCCESS ||
      convert::from_c(info, ninfo, directives) != PMIX_SUCCESS) {
    log::error("api", "PMIx_Fence: unreadable procs or info");
    return PMIX_ERR_BAD_PARAM;
  }
  bool collect = false;
  if (const auto* c = find(directives, PMIX_COLLECT_DATA)) collect = c->val.truthy();
  if (st->singleton) return PMIX_OPERATION_SUCCEEDED;
  wire::Envelope e;
  auto* f = e.mutable_fence();
  for (auto& p : participants) {
    if (p.nspace.empty()) p.nspace = st->self.nspace;
    protocol::to_wire(p, f->add_procs());
  }
  protocol::to_wire(directives, f->mutable_info());
  f->set_collect_data(collect);
  return st->conn->request(e, [st, done](pmix_status_t status, wire::Envelope* reply) {
    if (status == PMIX_SUCCESS && reply->body_case() != wire::Envelope::kFenceReply)
      status = PMIX_ERR_UNPACK_FAILURE;
    if (status == PMIX_SUCCESS) status = reply->fence_reply().status();
    if (status == PMIX_SUCCESS) {
      std::lock_guard<std::mutex> guard{st->mutex};
      st->data.fence_completed();
    }
    if (status == PMIX_SUCCESS && !reply->fence_reply().data().empty()) {
      wire::ModexData data;
      if (!data.ParseFromString(reply->fence_reply().data())) {
        status = PMIX_ERR_UNPACK_FAILURE;
      } else {
        std::lock_guard<std::mutex> guard{st->mutex};
        std::string error;
        for (const auto& r : data.ranks())
          if (!st->data.add_peer_data(r, st->self, &error)) {
            log::error("client", "unreadable fence data: ", error);
            status = PMIX_ERR_UNPACK_FAILURE;
            break;
          }
      }
    }
    done(status);
  });
}

pmix_status_t send_finalize(client_state& st) {
  if (st.singleton) return PMIX_SUCCESS;
  wire::Envelope e;
  e.mutable_finalize();
  auto w = std::make_shared<waiter>();
  auto rc = st.conn->request(e, [w](pmix_status_t status, wire::Envelope* reply) {
    if (status == PMIX_SUCCESS)
      status = reply->body_case() == wire::Envelope::kStatusReply ? reply->status_reply().status()
                                                                  : PMIX_ERR_UNPACK_FAILURE;
    w->finish(status);
  });
  return rc == PMIX_SUCCESS ? w->wait() : rc;
}

}  // namespace
}  // namespace pmix::api

using namespace pmix;
using namespace pmix::api;

extern "C" {

PMIX_EXPORT pmix_status_t PMIx_Init(pmix_proc_t* proc, pmix_info_t info[], size_t ninfo) {
  (void)info;
  (void)ninfo;
  if (on_library_thread()) return refuse_blocking("PMIx_Init");
  auto& l = lib();
  std::lock_guard<std::mutex> guard{l.mutex};
  if (l.state && l.pid != getpid()) {
    // A forked child of an initialized process (a clone): the parent's
    // connection and thread are not ours. Start over.
    if (l.state->conn) l.state->conn->abandon();
    l.state.reset();
    l.refcount = 0;
  }
  if (l.refcount > 0) {
    ++l.refcount;
    if (proc != nullptr) convert::to_c(l.state->self, *proc);
    return PMIX_SUCCESS;
  }
  std::shared_ptr<client_state> st;
  auto rc = start_client(st);
  if (rc != PMIX_SUCCESS) return rc;
  l.state = std::move(st);
  l.pid = getpid();
  l.refcount = 1;
  if (proc != nullptr) convert::to_c(l.state->self, *proc);
  return PMIX_SUCCESS;
}

PMIX_EXPORT int PMIx_Initialized(void) {
  auto& l = lib();
  std::lock_guard<std::mutex> guard{l.mutex};
  return l.refcount > 0 && l.pid == getpid() ? 1 : 0;
}

PMIX_EXPORT pmix_status_t PMIx_Finalize(const pmix_info_t info[], size_t ninfo) {
  if (on_library_thread()) return refuse_blocking("PMIx_Finalize");
  std::shared_ptr<client_state> doomed;
  {
    auto& l = lib();
    std::lock_guard<std::mutex> guard{l.mutex};
    if (l.refcount == 0 || l.pid != getpid()) return PMIX_ERR_INIT;
    if (--l.refcount > 0) return PMIX_SUCCESS;
    doomed = std::move(l.state);
    l.pid = 0;
  }
  info_list directives;
  if (convert::from_c(info, ninfo, directives) == PMIX_SUCCESS) {
    if (const auto* b = find(directives, PMIX_EMBED_BARRIER); b != nullptr && b->val.truthy()) {
      auto w = std::make_shared<waiter>();
      auto rc = start_fence(doomed, nullptr, 0, nullptr, 0, [w](pmix_status_t s) { w->finish(s); });
      if (rc == PMIX_SUCCESS) w->wait();
    }
  }
  const auto rc = send_finalize(*doomed);
  if (doomed->conn) doomed->conn->close();
  doomed.reset();
  return rc == PMIX_ERR_LOST_CONNECTION ? PMIX_SUCCESS : rc;
}

PMIX_EXPORT const char* PMIx_Get_version(void) { return protocol::library_version; }

// Our progress threads always run; there is nothing to drive by hand.
PMIX_EXPORT void PMIx_Progress(void) {}

PMIX_EXPORT pmix_status_t PMIx_Put(pmix_scope_t scope, const pmix_key_t key, pmix_value_t* val) {
  auto st = current();
  if (!st) return PMIX_ERR_INIT;
  if (!valid_key(key) || val == nullptr) {
    log::error("api", "PMIx_Put: missing key or value");
    return PMIX_ERR_BAD_PARAM;
  }
  if (scope != PMIX_LOCAL && scope != PMIX_REMOTE && scope != PMIX_GLOBAL && scope != PMIX_INTERNAL) {
    log::error("api", "PMIx_Put(", key, "): unknown scope ", static_cast<int>(scope));
    return PMIX_ERR_BAD_PARAM;
  }
  info i;
  i.key = convert::key(key);
  auto rc = convert::from_c(*val, i.val);
  if (rc != PMIX_SUCCESS) {
    log::error("api", "PMIx_Put(", i.key, "): the value cannot be stored: ", PMIx_Error_string(rc));
    return rc;
  }
  std::lock_guard<std::mutex> guard{st->mutex};
  if (scope != PMIX_INTERNAL) {
    wire::ScopedInfo item;
    item.set_scope(scope);
    protocol::to_wire(i, item.mutable_info());
    st->staged[i.key] = std::move(item);
  }
  st->data.store_value(st->self, i.key, std::move(i.val));
  return PMIX_SUCCESS;
}

PMIX_EXPORT pmix_status_t PMIx_Commit(void) {
  auto st = current();
  if (!st) return PMIX_ERR_INIT;
  wire::Envelope e;
  {
    std::lock_guard<std::mutex> guard{st->mutex};
    if (st->staged.empty() || st->singleton) {
      st->staged.clear();
      return PMIX_SUCCESS;
    }
    auto* c = e.mutable_commit();
    for (auto& [key, item] : st->staged) *c->add_data() = std::move(item);
    st->staged.clear();
  }
  return st->conn->send(e);
}

PMIX_EXPORT pmix_status_t PMIx_Fence(const pmix_proc_t procs[], size_t nprocs,
                                     const pmix_info_t info[], size_t ninfo) {
  auto st = current();
  if (!st) return PMIX_ERR_INIT;
  if (on_library_thread()) return refuse_blocking("PMIx_Fence");
  auto w = std::make_shared<waiter>();
  auto rc = start_fence(st, procs, nprocs, info, ninfo, [w](pmix_status_t s) { w->finish(s); });
  if (rc == PMIX_OPERATION_SUCCEEDED) return PMIX_SUCCESS;
  if (rc != PMIX_SUCCESS) return rc;
  return w->wait();
}

PMIX_EXPORT pmix_status_t PMIx_Fence_nb(const pmix_proc_t procs[], size_t nprocs,
                                        const pmix_info_t info[], size_t ninfo,
                                        pmix_op_cbfunc_t cbfunc, void* cbdata) {
  if (cbfunc == nullptr) {
    if (on_library_thread()) return refuse_blocking("PMIx_Fence_nb with a NULL cbfunc");
    return PMIx_Fence(procs, nprocs, info, ninfo);
  }
  auto st = current();
  if (!st) return PMIX_ERR_INIT;
  // OpenPMIx returns PMIX_OPERATION_SUCCEEDED, without calling cbfunc, when
  // the fence completes at once (a singleton).
  return start_fence(st, procs, nprocs, info, ninfo,
                     [cbfunc, cbdata](pmix_status_t s) { cbfunc(s, cbdata); });
}

PMIX_EXPORT pmix_status_t PMIx_Get(const pmix_proc_t* proc, const pmix_key_t key,
                                   const pmix_info_t info[], size_t ninfo, pmix_value_t** val) {
  auto st = current();
  if (!st) return PMIX_ERR_INIT;
  if (val == nullptr) return PMIX_ERR_BAD_PARAM;
  *val = nullptr;
  get_request req;
  auto rc = read_get_args(*st, proc, key, info, ninfo, req);
  if (rc != PMIX_SUCCESS) return rc;
  value found;
  switch (resolve_local(*st, req.target, req.key, req.optional, found)) {
    case lookup::found: return copy_out(found, val);
    case lookup::not_found: return PMIX_ERR_NOT_FOUND;
    case lookup::ask_server: break;
  }
  if (on_library_thread()) return refuse_blocking("PMIx_Get (data held by the server)");
  auto w = std::make_shared<waiter>();
  auto result = std::make_shared<value>();
  rc = fetch_remote(st, req, [w, result](pmix_status_t s, const value* v) {
    if (v != nullptr) *result = *v;
    w->finish(s);
  });
  if (rc != PMIX_SUCCESS) return rc;
  rc = w->wait();
  return rc == PMIX_SUCCESS ? copy_out(*result, val) : rc;
}

PMIX_EXPORT pmix_status_t PMIx_Get_nb(const pmix_proc_t* proc, const pmix_key_t key,
                                      const pmix_info_t info[], size_t ninfo,
                                      pmix_value_cbfunc_t cbfunc, void* cbdata) {
  if (cbfunc == nullptr) return PMIX_ERR_BAD_PARAM;
  auto st = current();
  if (!st) return PMIX_ERR_INIT;
  get_request req;
  auto rc = read_get_args(*st, proc, key, info, ninfo, req);
  if (rc != PMIX_SUCCESS) return rc;
  auto deliver = [cbfunc, cbdata](pmix_status_t s, const value* v) {
    pmix_value_t out;
    std::memset(&out, 0, sizeof out);
    if (s == PMIX_SUCCESS && v != nullptr) s = convert::to_c(*v, out);
    cbfunc(s, s == PMIX_SUCCESS ? &out : nullptr, cbdata);
    PMIx_Value_destruct(&out);
  };
  value found;
  const auto where = resolve_local(*st, req.target, req.key, req.optional, found);
  if (where == lookup::ask_server) return fetch_remote(st, req, deliver);
  if (st->singleton) {
    // No progress thread: complete here, as a callback of this call.
    progress::scope in_callback;
    deliver(where == lookup::found ? PMIX_SUCCESS : PMIX_ERR_NOT_FOUND, &found);
    return PMIX_SUCCESS;
  }
  st->conn->post([deliver, where, found] {
    deliver(where == lookup::found ? PMIX_SUCCESS : PMIX_ERR_NOT_FOUND, &found);
  });
  return PMIX_SUCCESS;
}

PMIX_EXPORT pmix_status_t PMIx_Store_internal(const pmix_proc_t* proc, const char key[],
                                              pmix_value_t* val) {
  auto st = current();
  if (!st) return PMIX_ERR_INIT;
  if (proc == nullptr || !valid_key(key) || val == nullptr) return PMIX_ERR_BAD_PARAM;
  value v;
  auto rc = convert::from_c(*val, v);
  if (rc != PMIX_SUCCESS) return rc;
  std::lock_guard<std::mutex> guard{st->mutex};
  st->data.store_value(convert::proc(*proc), convert::key(key), std::move(v));
  return PMIX_SUCCESS;
}

PMIX_EXPORT pmix_status_t PMIx_Abort(int status, const char msg[], pmix_proc_t procs[],
                                     size_t nprocs) {
  auto st = current();
  if (!st) return PMIX_ERR_INIT;
  if (on_library_thread()) return refuse_blocking("PMIx_Abort");
  if (st->singleton) {
    log::error("client", "PMIx_Abort in a singleton (no server): ", msg == nullptr ? "" : msg);
    return PMIX_ERR_UNREACH;
  }
  std::vector<proc_id> targets;
  if (convert::from_c(procs, nprocs, targets) != PMIX_SUCCESS) return PMIX_ERR_BAD_PARAM;
  wire::Envelope e;
  auto* a = e.mutable_abort();
  a->set_status(status);
  if (msg != nullptr) a->set_message(msg);
  for (const auto& p : targets) protocol::to_wire(p, a->add_procs());
  auto w = std::make_shared<waiter>();
  auto rc = st->conn->request(e, [w](pmix_status_t s, wire::Envelope* reply) {
    if (s == PMIX_SUCCESS)
      s = reply->body_case() == wire::Envelope::kStatusReply ? reply->status_reply().status()
                                                             : PMIX_ERR_UNPACK_FAILURE;
    w->finish(s);
  });
  return rc == PMIX_SUCCESS ? w->wait() : rc;
}

}  // extern "C"
