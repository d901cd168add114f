#include "client/session.hpp"

#include <pmix.h>
#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>

#include <google/protobuf/arena.h>

#include "common/log.hpp"
#include "common/progress.hpp"
#include "protocol/codec.hpp"
#include "protocol/version.hpp"

namespace pmix::client {
namespace {

bool is_reserved(const std::string& key) { return key.compare(0, 4, "pmix") == 0; }

wire::JobInfo singleton_job(const proc_id& self) {
  wire::JobInfo job;
  job.set_nspace(self.nspace);
  const info_list info = {
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
  const info_list rank = {
      {PMIX_LOCAL_RANK, value::unsigned_(PMIX_UINT16, 0), 0},
      {PMIX_NODE_RANK, value::unsigned_(PMIX_UINT16, 0), 0},
      {PMIX_GLOBAL_RANK, value::unsigned_(PMIX_PROC_RANK, 0), 0},
  };
  protocol::to_wire(rank, r->mutable_info());
  return job;
}

// The status a reply carries, or why it is not the expected kind.
pmix_status_t status_of(pmix_status_t transport, const wire::Envelope* reply,
                        wire::Envelope::BodyCase expected) {
  if (transport != PMIX_SUCCESS) return transport;
  if (reply->body_case() != expected) return PMIX_ERR_UNPACK_FAILURE;
  switch (expected) {
    case wire::Envelope::kStatusReply: return reply->status_reply().status();
    case wire::Envelope::kFenceReply: return reply->fence_reply().status();
    case wire::Envelope::kGetReply: return reply->get_reply().status();
    case wire::Envelope::kInfoReply: return reply->info_reply().status();
    default: return PMIX_ERR_UNPACK_FAILURE;
  }
}

// The completion of a request answered by an InfoReply: `done` gets the
// status and the info.
connection::completion info_reply(std::function<void(pmix_status_t, info_list)> done) {
  return [done = std::move(done)](pmix_status_t st, wire::Envelope* reply) {
    st = status_of(st, reply, wire::Envelope::kInfoReply);
    info_list results;
    std::string error;
    if (reply != nullptr && reply->body_case() == wire::Envelope::kInfoReply &&
        !protocol::from_wire(reply->info_reply().info(), results, &error))
      st = PMIX_ERR_UNPACK_FAILURE;
    done(st, std::move(results));
  };
}

// A blocked client polls for its reply a little before it sleeps, but only
// when the job leaves a CPU free for the server (its local processes plus
// one fit the CPUs this process may run on): then the spin takes no CPU
// anyone else needs and saves the wake-up. On a busier node it would steal
// the server's CPU, so the client sleeps at once. PMIX_CXX_SPIN_US overrides
// the choice (0 never spins).
std::chrono::microseconds spin_budget(const value* local_size) {
  constexpr long default_us = 100, max_us = 10000;
  if (const char* v = std::getenv("PMIX_CXX_SPIN_US"); v != nullptr && *v != '\0')
    return std::chrono::microseconds{std::clamp(std::atol(v), 0L, max_us)};
  cpu_set_t cpus;
  CPU_ZERO(&cpus);
  if (local_size == nullptr || ::sched_getaffinity(0, sizeof cpus, &cpus) != 0)
    return std::chrono::microseconds{0};
  const auto n = local_size->as_uint();
  const auto free = static_cast<std::uint64_t>(CPU_COUNT(&cpus));
  return std::chrono::microseconds{n && *n + 1 <= free ? default_us : 0};
}

}  // namespace

pmix_status_t session::connect(const std::string& uri, role r, const proc_id& proposed,
                               const info_list& info, std::shared_ptr<session>& out,
                               event_fn on_event) {
  std::shared_ptr<session> s{new session};
  s->role_ = r;
  auto rc = connection::open(uri, s->conn_);
  if (rc != PMIX_SUCCESS) {
    if (r == role::client) log::error("client", "cannot reach the server at '", uri, "'");
    return rc;
  }
  wire::Envelope request;
  auto* c = request.mutable_connect();
  c->set_protocol_version(protocol::wire_version);
  c->set_role(r == role::tool ? wire::ROLE_TOOL : wire::ROLE_CLIENT);
  protocol::to_wire(proposed, c->mutable_proc());
  c->set_pid(getpid());
  c->set_library_version(protocol::library_version);
  protocol::to_wire(info, c->mutable_info());
  wire::Envelope reply;
  rc = s->conn_->handshake(request, reply);
  if (rc != PMIX_SUCCESS) return rc;
  if (reply.body_case() != wire::Envelope::kConnectReply) return PMIX_ERR_UNPACK_FAILURE;
  const auto& cr = reply.connect_reply();
  if (cr.status() != PMIX_SUCCESS) {
    log::error("client", "the server refused ", proposed.nspace.empty() ? "the tool" : to_string(proposed),
               ": ", PMIx_Error_string(cr.status()));
    return cr.status();
  }
  s->server_ = protocol::from_wire(cr.server());
  s->self_ = cr.has_assigned() ? protocol::from_wire(cr.assigned()) : proposed;
  wire::JobInfo job;
  std::string error;
  if (!job.ParseFromString(cr.job()) || !s->data_.load_job(job, &error)) {
    log::error("client", "unreadable job data from the server: ", error);
    return PMIX_ERR_UNPACK_FAILURE;
  }
  if (on_event) {
    // The connection lives inside the session and its thread is joined
    // before the session goes: a plain pointer is safe here.
    session* raw = s.get();
    std::weak_ptr<session> weak = s;
    task_poster post = [weak](std::function<void()> task) {
      if (auto live = weak.lock()) live->post(std::move(task));
    };
    s->conn_->on_unprompted([on_event, post](wire::Envelope& e) {
      if (e.body_case() != wire::Envelope::kEvent) {
        log::warning("client", "ignoring an unprompted message of kind ", static_cast<int>(e.body_case()));
        return;
      }
      const auto& w = e.event();
      event ev;
      ev.status = w.status();
      ev.source = protocol::from_wire(w.source());
      ev.range = static_cast<pmix_data_range_t>(w.range());
      std::string error;
      if (!protocol::from_wire(w.info(), ev.info, &error)) {
        log::error("client", "unreadable event from the server: ", error);
        return;
      }
      on_event(std::move(ev), post);
    });
    s->conn_->on_lost([raw, on_event, post] {
      if (raw->finalizing_) return;
      on_event(event{PMIX_ERR_LOST_CONNECTION, raw->server_, PMIX_RANGE_PROC_LOCAL, {}}, post);
    });
  }
  if (r == role::client) s->conn_->set_spin(spin_budget(s->data_.job_value(s->self_.nspace, PMIX_LOCAL_SIZE)));
  rc = s->conn_->start();
  if (rc != PMIX_SUCCESS) return rc;
  out = std::move(s);
  return PMIX_SUCCESS;
}

std::shared_ptr<session> session::singleton(const proc_id& self) {
  std::shared_ptr<session> s{new session};
  s->self_ = self;
  std::string error;
  s->data_.load_job(singleton_job(self), &error);
  return s;
}

pmix_status_t session::put(pmix_scope_t scope, info item) {
  std::lock_guard<std::mutex> guard{mutex_};
  if (scope != PMIX_INTERNAL) {
    wire::ScopedInfo w;
    w.set_scope(scope);
    protocol::to_wire(item, w.mutable_info());
    staged_[item.key] = std::move(w);
  }
  data_.store_value(self_, item.key, std::move(item.val));
  return PMIX_SUCCESS;
}

pmix_status_t session::commit() {
  wire::Envelope e;
  {
    std::lock_guard<std::mutex> guard{mutex_};
    if (staged_.empty() || !conn_) {
      staged_.clear();
      return PMIX_SUCCESS;
    }
    auto* c = e.mutable_commit();
    for (auto& [key, item] : staged_) *c->add_data() = std::move(item);
    staged_.clear();
  }
  return conn_->send(e);
}

void session::store_modex(const std::string& bytes, pmix_status_t& status) {
  // One arena for the whole message: a collecting fence brings every rank's
  // data, and parsing it piece by piece with malloc showed in the profiles.
  char first_block[16384];
  google::protobuf::ArenaOptions options;
  options.initial_block = first_block;
  options.initial_block_size = sizeof first_block;
  google::protobuf::Arena arena{options};
  auto* data = google::protobuf::Arena::CreateMessage<wire::ModexData>(&arena);
  if (!data->ParseFromString(bytes)) {
    status = PMIX_ERR_UNPACK_FAILURE;
    return;
  }
  std::lock_guard<std::mutex> guard{mutex_};
  std::string error;
  if (!data_.add_modex(*data, self_, &error)) {
    log::error("client", "unreadable fence data: ", error);
    status = PMIX_ERR_UNPACK_FAILURE;
  }
}

pmix_status_t session::fence(std::vector<proc_id> procs, info_list info, done_fn done) {
  if (!conn_) return PMIX_OPERATION_SUCCEEDED;
  bool collect = false;
  if (const auto* c = find(info, PMIX_COLLECT_DATA)) collect = c->val.truthy();
  wire::Envelope e;
  auto* f = e.mutable_fence();
  for (auto& p : procs) {
    if (p.nspace.empty()) p.nspace = self_.nspace;
    protocol::to_wire(p, f->add_procs());
  }
  protocol::to_wire(info, f->mutable_info());
  f->set_collect_data(collect);
  auto self = shared_from_this();
  return conn_->request(e, [self, done](pmix_status_t st, wire::Envelope* reply) {
    st = status_of(st, reply, wire::Envelope::kFenceReply);
    if (st == PMIX_SUCCESS) {
      {
        std::lock_guard<std::mutex> guard{self->mutex_};
        self->data_.fence_completed();
      }
      if (!reply->fence_reply().data().empty()) self->store_modex(reply->fence_reply().data(), st);
    }
    done(st);
  });
}

session::lookup session::resolve_local(const proc_id& target, const std::string& key, bool optional,
                                       value& out) {
  std::lock_guard<std::mutex> guard{mutex_};
  const bool rank_level = target.rank < rank_valid_limit;
  if (is_reserved(key)) {
    if (rank_level)
      if (const auto* v = data_.rank_value(target, key)) return out = *v, lookup::found;
    if (const auto* v = data_.job_value(target.nspace, key)) return out = *v, lookup::found;
    if (const auto* v = data_.peer_value(target, key)) return out = *v, lookup::found;
    return lookup::not_found;
  }
  if (const auto* v = data_.peer_value(target, key)) return out = *v, lookup::found;
  if (!rank_level) {
    if (const auto* v = data_.job_value(target.nspace, key)) return out = *v, lookup::found;
    return lookup::not_found;
  }
  if (target == self_ || !conn_ || optional || data_.has_complete_data(target))
    return lookup::not_found;
  return lookup::ask_server;
}

pmix_status_t session::fetch(const proc_id& target, const std::string& key, const info_list& info,
                             value_fn done) {
  if (!conn_) return PMIX_ERR_NOT_FOUND;
  wire::Envelope e;
  auto* g = e.mutable_get();
  protocol::to_wire(target, g->mutable_proc());
  g->set_key(key);
  protocol::to_wire(info, g->mutable_info());
  auto self = shared_from_this();
  return conn_->request(e, [self, target, key, done](pmix_status_t st, wire::Envelope* reply) {
    st = status_of(st, reply, wire::Envelope::kGetReply);
    if (st != PMIX_SUCCESS && st != PMIX_ERR_NOT_FOUND) return done(st, nullptr);
    value found;
    bool have = false;
    {
      std::lock_guard<std::mutex> guard{self->mutex_};
      std::string error;
      if (reply->get_reply().has_data() &&
          !self->data_.add_peer_data(reply->get_reply().data(), self->self_, &error)) {
        log::error("client", "unreadable data for ", to_string(target), ": ", error);
        return done(PMIX_ERR_UNPACK_FAILURE, nullptr);
      }
      if (const auto* v = self->data_.peer_value(target, key)) {
        found = *v;
        have = true;
      }
    }
    done(have ? PMIX_SUCCESS : PMIX_ERR_NOT_FOUND, have ? &found : nullptr);
  });
}

pmix_status_t session::abort(int status, const std::string& message,
                             const std::vector<proc_id>& procs, done_fn done) {
  if (!conn_) {
    log::error("client", "PMIx_Abort without a server: ", message);
    return PMIX_ERR_UNREACH;
  }
  wire::Envelope e;
  auto* a = e.mutable_abort();
  a->set_status(status);
  a->set_message(message);
  for (const auto& p : procs) protocol::to_wire(p, a->add_procs());
  return conn_->request(e, [done](pmix_status_t st, wire::Envelope* reply) {
    done(status_of(st, reply, wire::Envelope::kStatusReply));
  });
}

pmix_status_t session::job_control(const std::vector<proc_id>& targets, const info_list& directives,
                                   std::function<void(pmix_status_t, info_list)> done) {
  if (!conn_) return PMIX_ERR_UNREACH;
  wire::Envelope e;
  auto* j = e.mutable_job_control();
  for (const auto& t : targets) protocol::to_wire(t, j->add_targets());
  protocol::to_wire(directives, j->mutable_directives());
  return conn_->request(e, info_reply(std::move(done)));
}

pmix_status_t session::query(const std::vector<pmix::query>& queries,
                             std::function<void(pmix_status_t, info_list)> done) {
  if (!conn_) return PMIX_ERR_UNREACH;
  wire::Envelope e;
  auto* q = e.mutable_query();
  for (const auto& item : queries) {
    auto* w = q->add_queries();
    for (const auto& k : item.keys) w->add_keys(k);
    protocol::to_wire(item.qualifiers, w->mutable_qualifiers());
  }
  return conn_->request(e, info_reply(std::move(done)));
}

pmix_status_t session::notify(const event& ev, done_fn done) {
  if (!conn_) return PMIX_ERR_UNREACH;
  wire::Envelope e;
  auto* n = e.mutable_notify();
  n->set_status(ev.status);
  protocol::to_wire(ev.source, n->mutable_source());
  n->set_range(ev.range);
  protocol::to_wire(ev.info, n->mutable_info());
  return conn_->request(e, [done](pmix_status_t st, wire::Envelope* reply) {
    done(status_of(st, reply, wire::Envelope::kStatusReply));
  });
}

pmix_status_t session::finalize(done_fn done) {
  if (!conn_) return PMIX_OPERATION_SUCCEEDED;
  finalizing_ = true;
  wire::Envelope e;
  e.mutable_finalize();
  return conn_->request(e, [done](pmix_status_t st, wire::Envelope* reply) {
    done(status_of(st, reply, wire::Envelope::kStatusReply));
  });
}

void session::store_internal(const proc_id& p, const std::string& key, value v) {
  std::lock_guard<std::mutex> guard{mutex_};
  data_.store_value(p, key, std::move(v));
}

void session::drive(const std::function<bool()>& done) {
  if (conn_) conn_->drive(done);
}

void session::post(std::function<void()> task) {
  if (conn_) return conn_->post(std::move(task));
  progress::scope in_callback;
  task();
}

void session::close() {
  if (conn_) conn_->close();
}

void session::abandon() {
  if (conn_) conn_->abandon();
}

}  // namespace pmix::client
