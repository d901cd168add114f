#include "client/session.hpp"

#include <pmix.h>
#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <thread>

#include "common/log.hpp"
#include "common/log_sink.hpp"
#include "common/progress.hpp"
#include "client/openpmix_wire.hpp"
#include "protocol/messages.hpp"
#include "protocol/version.hpp"

namespace pmix::client {
namespace {

bool is_reserved(const std::string& key) { return reserved_key(key); }

protocol::job_info singleton_job(const proc_id& self) {
  protocol::job_info job;
  job.nspace = self.nspace;
  job.info = {
      {PMIX_JOB_SIZE, value::unsigned_(PMIX_UINT32, 1), 0},
      {PMIX_UNIV_SIZE, value::unsigned_(PMIX_UINT32, 1), 0},
      {PMIX_LOCAL_SIZE, value::unsigned_(PMIX_UINT32, 1), 0},
      {PMIX_LOCAL_PEERS, value::string("0"), 0},
      {PMIX_NUM_NODES, value::unsigned_(PMIX_UINT32, 1), 0},
      {PMIX_JOBID, value::string(self.nspace), 0},
      {PMIX_APPNUM, value::unsigned_(PMIX_UINT32, 0), 0},
  };
  job.ranks.emplace_back(0, info_list{
                                {PMIX_LOCAL_RANK, value::unsigned_(PMIX_UINT16, 0), 0},
                                {PMIX_NODE_RANK, value::unsigned_(PMIX_UINT16, 0), 0},
                                {PMIX_GLOBAL_RANK, value::unsigned_(PMIX_PROC_RANK, 0), 0},
                            });
  return job;
}

// The status a reply carries (and its payload, in `out`), or why it is not
// the expected kind.
pmix_status_t status_of(pmix_status_t transport, const protocol::envelope* reply, protocol::body expected,
                        protocol::status_reply& out) {
  if (transport != PMIX_SUCCESS) return transport;
  if (reply->kind != expected || !protocol::decode(reply->message, expected, out)) return PMIX_ERR_UNPACK_FAILURE;
  return out.status;
}
pmix_status_t status_of(pmix_status_t transport, const protocol::envelope* reply) {
  protocol::status_reply out;
  return status_of(transport, reply, protocol::body::status_reply, out);
}

// The status a reply of kind `kind` carries (decoded into `out`), or why it
// is not one.
template <class Reply>
pmix_status_t decoded(pmix_status_t transport, const protocol::envelope* reply, protocol::body kind, Reply& out) {
  if (transport != PMIX_SUCCESS) return transport;
  return reply->kind == kind && protocol::decode(reply->message, out) ? out.status : PMIX_ERR_UNPACK_FAILURE;
}

// The completion of a request answered by an InfoReply: `done` gets the
// status and the info.
connection::completion info_reply(std::function<void(pmix_status_t, info_list)> done) {
  return [done = std::move(done)](pmix_status_t st, protocol::envelope* reply) {
    protocol::info_reply r;
    st = decoded(st, reply, protocol::body::info_reply, r);
    done(st, std::move(r.info));
  };
}

// A blocked client polls for its reply for up to 1 ms before it sleeps: a
// reply that comes within the budget costs no wake-up (25-40 µs on a VM, more
// than a whole fence's work), and a woken process on a busy node can wait a
// whole scheduler slice for a CPU. Between polls it yields its CPU
// (sched_yield), so on a node with more processes than CPUs the spin costs
// the server and the other ranks nothing: measured on 2 CPUs, fences of 2 to
// 64 clients got faster, where polling without yielding had doubled them;
// 1 ms against 100 µs cut the p99 of 8- and 16-client fences by 3-8×
// (docs/performance.md, "Third pass"). PMIX_CXX_SPIN_US overrides the budget
// (0 never spins).
std::chrono::microseconds spin_budget() {
  constexpr long default_us = 1000, max_us = 100000;
  const char* v = std::getenv("PMIX_CXX_SPIN_US");
  if (v == nullptr || *v == '\0') return std::chrono::microseconds{default_us};
  char* end = nullptr;
  const long us = std::strtol(v, &end, 10);
  if (*end != '\0' || us < 0 || us > max_us) {
    log::warning("client", "PMIX_CXX_SPIN_US='", v, "' is not a number of microseconds from 0 to ", max_us,
                 ": using ", default_us);
    return std::chrono::microseconds{default_us};
  }
  return std::chrono::microseconds{us};
}

}  // namespace

pmix_status_t session::connect(const std::string& uri, role r, const proc_id& proposed,
                               const info_list& info, std::shared_ptr<session>& out,
                               event_fn on_event) {
  auto s = make();
  s->role_ = r;
  const auto request = protocol::connect_request(
      protocol::wire_version, r == role::tool ? protocol::role::tool : protocol::role::client, proposed,
      static_cast<std::int32_t>(getpid()), protocol::library_version, info, r == role::client);
  protocol::envelope reply;
  // A server whose handshake queue is full of silent connections gives the
  // oldest's place to a newer one, telling it so before it reads anything
  // (docs/security.md, "Limits"): a process that was slow to send its
  // request tries again, a few times.
  constexpr int attempts = 6;
  for (int attempt = 1;; ++attempt) {
    auto rc = connection::open(uri, s->conn_);
    if (rc != PMIX_SUCCESS) {
      if (r == role::client) log::error("client", "cannot reach the server at '", uri, "'");
      return rc;
    }
    rc = s->conn_->handshake(protocol::body::connect, request, reply);
    if (rc == PMIX_SUCCESS) break;
    if (rc == PMIX_ERR_LOST_CONNECTION && r == role::client)
      log::error("client", "the server closed the connection during the handshake");
    if (rc != PMIX_ERR_OUT_OF_RESOURCE) return rc;
    if (attempt == attempts) {
      log::error("client", "the server did not take the connection (busy) in ", attempts, " attempts");
      return rc;
    }
    s->conn_.reset();
    std::this_thread::sleep_for(std::chrono::milliseconds(10 << attempt));
  }
  protocol::connect_reply cr;
  std::string error;
  if (reply.kind != protocol::body::connect_reply || !protocol::decode(reply.message, cr, &error)) {
    log::error("client", "the server's answer to connect is malformed");
    return PMIX_ERR_UNPACK_FAILURE;
  }
  if (cr.status != PMIX_SUCCESS) {
    log::error("client", "the server refused ", proposed.nspace.empty() ? "the tool" : to_string(proposed),
               ": ", PMIx_Error_string(cr.status));
    return cr.status;
  }
  s->server_ = cr.server;
  s->self_ = cr.assigned ? *cr.assigned : proposed;
  protocol::job_info job;
  // A large job's data comes as the server's shared copy (mapped by the
  // connection), read in place: the job data keeps the mapping. A small
  // one (under transport::shared_data_threshold) is copied from the reply.
  std::shared_ptr<const void> owner;
  std::string_view bytes;
  if (cr.job_shared > 0) {
    owner = reply.shared_owner;
    bytes = reply.shared;
  } else {
    auto held = std::make_shared<const std::string>(cr.job);
    bytes = *held;
    owner = std::move(held);
  }
  if (!protocol::decode_lazy(bytes, std::move(owner), job, &error)) {
    log::error("client", "unreadable job data from the server: ", error);
    return PMIX_ERR_UNPACK_FAILURE;
  }
  s->data_.load_job(std::move(job));
  s->conn_->allow_hold(r == role::client && cr.commit_hold);
  const auto rc = s->start_connection(std::move(on_event));
  if (rc != PMIX_SUCCESS) return rc;
  out = std::move(s);
  return PMIX_SUCCESS;
}

pmix_status_t session::start_connection(event_fn on_event) {
  // The connection lives inside the session and its thread is joined
  // before the session goes: a plain pointer is safe here.
  session* raw = this;
  std::weak_ptr<session> weak = shared_from_this();
  task_poster post = [weak](std::function<void()> task) {
    if (auto live = weak.lock()) live->post(std::move(task));
  };
  conn_->on_unprompted([raw, on_event, post](protocol::envelope& e) {
    if (raw->openpmix_) return raw->openpmix_unprompted(e, on_event, post);
    if (e.kind == protocol::body::iof) return raw->deliver_iof(e.message);
    if (e.kind != protocol::body::event || !on_event) {
      log::warning("client", "ignoring an unprompted message of kind ", static_cast<int>(e.kind));
      return;
    }
    event ev;
    std::string error;
    if (!protocol::decode(e.message, ev, &error)) {
      log::error("client", "unreadable event from the server: ", error);
      return;
    }
    on_event(std::move(ev), post);
  });
  if (on_event) {
    conn_->on_lost([raw, on_event, post] {
      if (raw->finalizing_) return;
      on_event(event{PMIX_ERR_LOST_CONNECTION, raw->server_, PMIX_RANGE_PROC_LOCAL, {}}, post);
    });
  }
  if (role_ == role::client) conn_->set_spin(spin_budget());
  return conn_->start();
}

std::shared_ptr<session> session::singleton(const proc_id& self, role r) {
  auto s = make();
  s->self_ = self;
  s->role_ = r;
  s->data_.load_job(singleton_job(self));
  return s;
}

std::shared_ptr<session> session::server_self(const proc_id& self) {
  auto s = make();
  s->self_ = self;
  s->server_ = self;
  return s;
}

pmix_status_t session::put(pmix_scope_t scope, info item) {
  std::lock_guard<std::mutex> guard{mutex_};
  if (scope != PMIX_INTERNAL) staged_[item.key] = protocol::scoped_info{static_cast<std::uint32_t>(scope), item};
  data_.store_value(self_, item.key, std::move(item.val));
  return PMIX_SUCCESS;
}

pmix_status_t session::commit() {
  std::vector<protocol::scoped_info> data;
  {
    std::lock_guard<std::mutex> guard{mutex_};
    if (staged_.empty() || !conn_) {
      staged_.clear();
      return PMIX_SUCCESS;
    }
    data.reserve(staged_.size());
    for (auto& [key, item] : staged_) data.push_back(std::move(item));
    staged_.clear();
  }
  if (openpmix_) return openpmix_commit(std::move(data));
  // Held for the next frame (most often the fence that follows), unless
  // the server said no (client::connection::send_held).
  return conn_->send_held(protocol::body::commit, protocol::commit_request(data));
}

void session::store_modex(std::shared_ptr<const void> owner, std::string_view bytes, const std::string* whole,
                          pmix_status_t& status) {
  // Kept encoded (the reply's frame, or the mapping of the server's shared
  // data): each rank's items are decoded when first looked up.
  std::lock_guard<std::mutex> guard{mutex_};
  if (whole != nullptr) {
    data_.keep_modex(std::move(owner), bytes, *whole, self_);
    return;
  }
  std::string error;
  if (!data_.add_modex(std::move(owner), bytes, self_, &error)) {
    log::error("client", "unreadable fence data: ", error);
    status = PMIX_ERR_UNPACK_FAILURE;
  }
}

pmix_status_t session::fence(std::vector<proc_id> procs, info_list info, done_fn done) {
  if (!conn_) return PMIX_OPERATION_SUCCEEDED;
  if (openpmix_) return openpmix_fence(procs, info, std::move(done));
  bool collect = false;
  if (const auto* c = find(info, PMIX_COLLECT_DATA)) collect = c->val.truthy();
  for (auto& p : procs)
    if (p.nspace.empty()) p.nspace = self_.nspace;
  auto self = shared_from_this();
  // A fence over our whole namespace may be answered on its fence board
  // (client::connection::plan_board).
  const bool whole = procs.empty() || (procs.size() == 1 && procs[0].nspace == self_.nspace &&
                                       procs[0].rank == rank_wildcard);
  if (whole && !cpus_counted_.exchange(true)) {
    // A CPU for each local process of the namespace and one for the server
    // (client::steps_aside)?
    cpu_set_t cpus;
    CPU_ZERO(&cpus);
    std::optional<std::uint64_t> local;
    {
      std::lock_guard<std::mutex> guard{mutex_};
      if (const auto* v = data_.job_value(self_.nspace, PMIX_LOCAL_SIZE)) local = v->as_uint();
    }
    if (local && ::sched_getaffinity(0, sizeof cpus, &cpus) == 0)
      conn_->set_cpu_to_spare(*local + 1 <= static_cast<std::uint64_t>(CPU_COUNT(&cpus)));
  }
  const auto board = whole ? conn_->plan_board() : connection::board_plan{};
  auto request = protocol::fence_request(procs, info, collect, board.wait, board.request);
  // A collecting fence brings every participant's data (no procs: all of
  // our namespace); only those need remembering.
  std::vector<proc_id> participants;
  if (collect) participants = procs.empty() ? std::vector<proc_id>{{self_.nspace, rank_wildcard}} : std::move(procs);
  return conn_->request(
      protocol::body::fence, std::move(request),
      [self, done, participants = std::move(participants)](pmix_status_t st, protocol::envelope* reply) {
    protocol::status_reply r;
    st = status_of(st, reply, protocol::body::fence_reply, r);
    if (st == PMIX_SUCCESS) {
      {
        std::lock_guard<std::mutex> guard{self->mutex_};
        self->data_.fence_completed();
        self->data_.participants_complete(participants);
      }
      // Every rank of the one namespace sent data (the server looked): kept
      // unread until a lookup (store::keep_modex).
      const std::string* whole = r.whole_namespace && participants.size() == 1 &&
                                         participants[0].rank == rank_wildcard
                                     ? &participants[0].nspace
                                     : nullptr;
      if (r.shared > 0) {
        self->store_modex(std::move(reply->shared_owner), reply->shared, whole, st);
      } else if (r.has_data) {
        // The store keeps the frame itself (taken over, not copied): the
        // data is most of it.
        const auto offset = static_cast<std::size_t>(r.data.data() - reply->bytes.data());
        auto frame = std::make_shared<const std::string>(std::move(reply->bytes));
        reply->message = {};
        self->store_modex(frame, std::string_view{*frame}.substr(offset, r.data.size()), whole, st);
      }
    }
    done(st);
  }, board.wait);
}

session::lookup session::resolve_local(const proc_id& target, const std::string& key, bool optional,
                                       value& out) {
  std::lock_guard<std::mutex> guard{mutex_};
  const bool rank_level = target.rank < rank_valid_limit;
  if (is_reserved(key)) {
    if (rank_level) {
      if (const auto* v = data_.rank_value(target, key)) return out = *v, lookup::found;
      if (auto v = data_.other_node_value(target, key, own_host())) return out = std::move(*v), lookup::found;
    }
    if (const auto* v = data_.job_value(target.nspace, key)) return out = *v, lookup::found;
    if (const auto* v = data_.peer_value(target, key)) return out = *v, lookup::found;
    // Another job's data (one this process spawned, say) that we do not
    // hold yet: the server has it.
    if (!data_.has_job(target.nspace) && conn_ && !optional) return lookup::ask_server;
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

bool all_values(info_list&& items, value& out) {
  if (items.empty()) return false;
  array_value a{PMIX_INFO, {}};
  a.elements.reserve(items.size());
  for (auto& i : items) a.elements.push_back(value{PMIX_INFO, std::shared_ptr<const info>(std::make_shared<info>(std::move(i)))});
  out = value::array(std::move(a));
  return true;
}

session::lookup session::resolve_all(const proc_id& target, bool optional, value& out) {
  std::lock_guard<std::mutex> guard{mutex_};
  // As a get of one key: a peer's data is asked for once per fence.
  if (!(target == self_ || !conn_ || optional || data_.has_complete_data(target))) return lookup::ask_server;
  return all_values(data_.all_of(target), out) ? lookup::found : lookup::not_found;
}

pmix_status_t session::fetch(const proc_id& target, const std::string& key, const info_list& info,
                             value_fn done) {
  if (!conn_) return PMIX_ERR_NOT_FOUND;
  if (openpmix_) return openpmix_fetch(target, key, info, std::move(done));
  auto self = shared_from_this();
  return conn_->request(
      protocol::body::get, protocol::get_request(target, key, info),
      [self, target, key, done, qualified = find(info, PMIX_GROUP_CONTEXT_ID) != nullptr](
          pmix_status_t st, protocol::envelope* reply) {
    protocol::status_reply r;
    st = status_of(st, reply, protocol::body::get_reply, r);
    if (st != PMIX_SUCCESS && st != PMIX_ERR_NOT_FOUND) return done(st, nullptr);
    value found;
    bool have = false;
    // A value qualified by a group's context id is that group's, not the
    // process's: it is handed over, not kept.
    if (qualified) {
      std::string error;
      protocol::rank_data data;
      if (r.has_data && !protocol::decode(r.data, data, &error)) {
        log::error("client", "unreadable group data for ", to_string(target), ": ", error);
        return done(PMIX_ERR_UNPACK_FAILURE, nullptr);
      }
      for (const auto& [scope, bytes] : data.items) {
        pmix::info i;
        if (protocol::decode_checked_info(bytes, i) && i.key == key) {
          found = std::move(i.val);
          have = true;
          break;
        }
      }
      return done(have ? PMIX_SUCCESS : PMIX_ERR_NOT_FOUND, have ? &found : nullptr);
    }
    // The process the data is of: a get of {group, r} names the group.
    proc_id of = target;
    {
      std::lock_guard<std::mutex> guard{self->mutex_};
      std::string error;
      protocol::rank_data data;
      if (r.has_data && (!protocol::decode(r.data, data, &error) ||
                         !self->data_.add_peer_data(data, self->self_, &error))) {
        log::error("client", "unreadable data for ", to_string(target), ": ", error);
        return done(PMIX_ERR_UNPACK_FAILURE, nullptr);
      }
      if (r.has_data) of = data.proc;
      protocol::job_info job;
      if (!r.job.empty()) {
        if (!protocol::decode_lazy(r.job, job, &error)) {
          log::error("client", "unreadable job data of ", target.nspace, ": ", error);
          return done(PMIX_ERR_UNPACK_FAILURE, nullptr);
        }
        if (job.nspace != self->self_.nspace) self->data_.load_job(std::move(job));
      }
      const value* v = nullptr;
      std::optional<value> elsewhere;
      if (key.empty()) {
        have = all_values(self->data_.all_of(of), found);
      } else if (is_reserved(key)) {
        if (of.rank < rank_valid_limit) v = self->data_.rank_value(of, key);
        if (v == nullptr && of.rank < rank_valid_limit)
          elsewhere = self->data_.other_node_value(of, key, self->own_host());
        if (elsewhere) v = &*elsewhere;
        if (v == nullptr) v = self->data_.job_value(of.nspace, key);
      }
      if (v == nullptr && !key.empty()) v = self->data_.peer_value(of, key);
      if (v != nullptr) {
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
  if (openpmix_) return openpmix_status_request(openpmix_wire::abort(buffer_type(), status, message, procs), done);
  return conn_->request(protocol::body::abort, protocol::abort_request(status, message, procs),
                        [done](pmix_status_t st, protocol::envelope* reply) { done(status_of(st, reply)); });
}

pmix_status_t session::job_control(const std::vector<proc_id>& targets, const info_list& directives,
                                   std::function<void(pmix_status_t, info_list)> done) {
  if (!conn_) return PMIX_ERR_UNREACH;
  if (openpmix_) return openpmix_info_request(openpmix_wire::job_control(buffer_type(), targets, directives), std::move(done));
  return conn_->request(protocol::body::job_control, protocol::job_control_request(targets, directives),
                        info_reply(std::move(done)));
}

pmix_status_t session::query(const std::vector<pmix::query>& queries,
                             std::function<void(pmix_status_t, info_list)> done) {
  if (!conn_) return PMIX_ERR_UNREACH;
  if (openpmix_) {
    // OpenPMIx 4.2's servers crash answering which attributes their host
    // supports (its own pattrs --host shows it): not asked.
    for (const auto& q : queries)
      if (server_major_ == 4 && std::find(q.keys.begin(), q.keys.end(), PMIX_QUERY_ATTRIBUTE_SUPPORT) != q.keys.end() &&
          (find(q.qualifiers, PMIX_HOST_FUNCTIONS) != nullptr || find(q.qualifiers, PMIX_HOST_ATTRIBUTES) != nullptr)) {
        log::warning("client", "PMIx_Query_info: the host's attributes are not asked of an OpenPMIx 4.x server ",
                     "(it crashes answering): PMIX_ERR_NOT_SUPPORTED");
        return PMIX_ERR_NOT_SUPPORTED;
      }
    return openpmix_info_request(openpmix_wire::query(buffer_type(), queries), std::move(done));
  }
  return conn_->request(protocol::body::query, protocol::query_request(queries), info_reply(std::move(done)));
}

pmix_status_t session::host_request(const protocol::host_request& r, host_reply_fn done) {
  if (!conn_) return PMIX_ERR_UNREACH;
  if (openpmix_) return openpmix_host_request(r, std::move(done));
  return conn_->request(protocol::body::host, protocol::encode(r),
                        [done = std::move(done)](pmix_status_t st, protocol::envelope* reply) {
                          protocol::info_reply ir;
                          st = decoded(st, reply, protocol::body::info_reply, ir);
                          done(st, std::move(ir.info), std::move(ir.data));
                        });
}

pmix_status_t session::group(const protocol::group_request& r,
                             std::function<void(pmix_status_t, info_list)> done) {
  if (!conn_) return PMIX_ERR_UNREACH;
  if (openpmix_) return openpmix_group(r, std::move(done));
  return conn_->request(protocol::body::group, protocol::encode(r), info_reply(std::move(done)));
}

void session::deliver_iof(std::string_view message) {
  protocol::iof_data d;
  std::string error;
  if (!protocol::decode(message, d, &error)) {
    log::error("client", "unreadable output from the server: ", error);
    return;
  }
  iof_handler handler;
  {
    std::lock_guard<std::mutex> guard{iof_mutex_};
    auto it = iof_handlers_.find(d.ref);
    if (it == iof_handlers_.end()) return;  // deregistered meanwhile
    handler = it->second;
  }
  handler(d);
}

pmix_status_t session::iof_pull(const std::vector<proc_id>& procs, pmix_iof_channel_t channels,
                                const info_list& directives, iof_handler handler,
                                std::function<void(pmix_status_t, std::uint64_t)> done) {
  if (!conn_) return PMIX_ERR_UNREACH;
  std::uint64_t ref;
  {
    // Installed before the request: output may come before the answer.
    std::lock_guard<std::mutex> guard{iof_mutex_};
    ref = next_iof_ref_++;
    iof_handlers_.emplace(ref, std::move(handler));
  }
  protocol::host_request r;
  r.call = protocol::host_call::iof_pull;
  r.procs = procs;
  r.code = static_cast<std::int32_t>(channels);
  r.directives = directives;
  r.ref = ref;
  auto self = shared_from_this();
  const auto rc = host_request(r, [self, ref, done](pmix_status_t st, info_list, std::string) {
    if (st != PMIX_SUCCESS) {
      std::lock_guard<std::mutex> guard{self->iof_mutex_};
      self->iof_handlers_.erase(ref);
    }
    done(st, ref);
  });
  if (rc != PMIX_SUCCESS) {
    std::lock_guard<std::mutex> guard{iof_mutex_};
    iof_handlers_.erase(ref);
  }
  return rc;
}

pmix_status_t session::iof_deregister(std::uint64_t ref, done_fn done) {
  {
    std::lock_guard<std::mutex> guard{iof_mutex_};
    if (iof_handlers_.erase(ref) == 0) return PMIX_ERR_NOT_FOUND;
  }
  if (!conn_) return PMIX_ERR_UNREACH;
  protocol::host_request r;
  r.call = protocol::host_call::iof_deregister;
  r.ref = ref;
  return host_request(r, [done](pmix_status_t st, info_list, std::string) { done(st); });
}

pmix_status_t session::notify(const event& ev, done_fn done) {
  if (!conn_) return PMIX_ERR_UNREACH;
  if (openpmix_) return openpmix_status_request(openpmix_wire::notify(buffer_type(), ev), std::move(done));
  return conn_->request(protocol::body::notify, protocol::event_message(ev),
                        [done](pmix_status_t st, protocol::envelope* reply) { done(status_of(st, reply)); });
}

bool session::store_job(std::string_view bytes) {
  protocol::job_info job;
  std::string error;
  if (!protocol::decode_lazy(bytes, job, &error)) {
    log::error("client", "unreadable job data: ", error);
    return false;
  }
  std::lock_guard<std::mutex> guard{mutex_};
  if (job.nspace != self_.nspace) data_.load_job(std::move(job));
  return true;
}

pmix_status_t session::publish(const info_list& info, done_fn done) {
  if (!conn_) return PMIX_ERR_UNREACH;
  if (openpmix_) return openpmix_status_request(openpmix_wire::publish(buffer_type(), info), std::move(done));
  return conn_->request(protocol::body::publish, protocol::publish_request(info),
                        [done](pmix_status_t st, protocol::envelope* reply) { done(status_of(st, reply)); });
}

pmix_status_t session::unpublish(const std::vector<std::string>& keys, const info_list& info, done_fn done) {
  if (!conn_) return PMIX_ERR_UNREACH;
  if (openpmix_)
    return openpmix_status_request(openpmix_wire::keys(buffer_type(), 8, keys, info), std::move(done));
  return conn_->request(protocol::body::unpublish, protocol::keys_request(keys, info),
                        [done](pmix_status_t st, protocol::envelope* reply) { done(status_of(st, reply)); });
}

pmix_status_t session::lookup_published(const std::vector<std::string>& keys, const info_list& info,
                              std::function<void(pmix_status_t, std::vector<pdata>)> done) {
  if (!conn_) return PMIX_ERR_UNREACH;
  if (openpmix_) return openpmix_lookup(keys, info, std::move(done));
  return conn_->request(protocol::body::lookup, protocol::keys_request(keys, info),
                        [done](pmix_status_t st, protocol::envelope* reply) {
                          protocol::lookup_reply r;
                          st = decoded(st, reply, protocol::body::lookup_reply, r);
                          done(st, std::move(r.data));
                        });
}

pmix_status_t session::spawn(const info_list& job_info, const std::vector<app>& apps,
                             std::function<void(pmix_status_t, std::string)> done) {
  if (!conn_) return PMIX_ERR_UNREACH;
  if (openpmix_) return openpmix_spawn(job_info, apps, std::move(done));
  return conn_->request(protocol::body::spawn, protocol::spawn_request(job_info, apps),
                        [done](pmix_status_t st, protocol::envelope* reply) {
                          protocol::spawn_reply r;
                          st = decoded(st, reply, protocol::body::spawn_reply, r);
                          done(st, std::move(r.nspace));
                        });
}

pmix_status_t session::connect_procs(std::vector<proc_id> procs, const info_list& info, bool disconnect,
                                     done_fn done) {
  for (auto& p : procs)
    if (p.nspace.empty()) p.nspace = self_.nspace;
  if (!conn_) {
    // Without a server only this process can take part.
    for (const auto& p : procs)
      if (!(p.nspace == self_.nspace && (p.rank == self_.rank || p.rank == rank_wildcard))) return PMIX_ERR_UNREACH;
    return PMIX_OPERATION_SUCCEEDED;
  }
  if (openpmix_) return openpmix_connect_procs(procs, info, disconnect, std::move(done));
  auto self = shared_from_this();
  return conn_->request(protocol::body::connect_procs, protocol::connect_procs_request(procs, info, disconnect),
                        [self, done](pmix_status_t st, protocol::envelope* reply) {
                          protocol::connect_procs_reply r;
                          st = decoded(st, reply, protocol::body::connect_procs_reply, r);
                          if (st == PMIX_SUCCESS)
                            for (auto job : r.jobs)
                              if (!self->store_job(job)) st = PMIX_ERR_UNPACK_FAILURE;
                          done(st);
                        });
}

pmix_status_t session::log(const info_list& data, const info_list& directives, done_fn done) {
  if (!conn_) {
    std::string error;
    const auto rc = logging::log_locally(self_, data, directives, error);
    if (rc != PMIX_SUCCESS) log::warning("client", "PMIx_Log: ", error);
    return rc == PMIX_SUCCESS ? PMIX_OPERATION_SUCCEEDED : rc;
  }
  if (openpmix_) return openpmix_status_request(openpmix_wire::log(buffer_type(), data, directives), std::move(done));
  return conn_->request(protocol::body::log, protocol::log_request(data, directives),
                        [done](pmix_status_t st, protocol::envelope* reply) { done(status_of(st, reply)); });
}

std::string session::own_host() const {
  const auto* me = data_.rank_value(self_, PMIX_HOSTNAME);
  if (me == nullptr) me = data_.job_value(self_.nspace, PMIX_HOSTNAME);
  return me != nullptr && me->as_string() != nullptr ? *me->as_string() : std::string{};
}

pmix_status_t session::resolve_peers(const std::string& node, const std::string& nspace,
                                     std::vector<proc_id>& out) {
  out.clear();
  std::lock_guard<std::mutex> guard{mutex_};
  const std::string where = node.empty() ? own_host() : node;
  if (!nspace.empty() && !data_.has_job(nspace)) return PMIX_ERR_NOT_FOUND;
  const auto names = nspace.empty() ? data_.nspaces() : std::vector<std::string>{nspace};
  for (const auto& ns : names)
    for (auto r : data_.ranks_on(ns, where)) out.push_back(proc_id{ns, r});
  return out.empty() ? PMIX_ERR_NOT_FOUND : PMIX_SUCCESS;
}

pmix_status_t session::resolve_nodes(const std::string& nspace, std::string& out) {
  out.clear();
  std::lock_guard<std::mutex> guard{mutex_};
  if (!nspace.empty() && !data_.has_job(nspace)) return PMIX_ERR_NOT_FOUND;
  const auto names = nspace.empty() ? data_.nspaces() : std::vector<std::string>{nspace};
  std::vector<std::string> nodes;
  for (const auto& ns : names)
    for (auto& n : data_.nodes_of(ns))
      if (std::find(nodes.begin(), nodes.end(), n) == nodes.end()) nodes.push_back(std::move(n));
  for (const auto& n : nodes) out += (out.empty() ? "" : ",") + n;
  return nodes.empty() ? PMIX_ERR_NOT_FOUND : PMIX_SUCCESS;
}

pmix_status_t session::finalize(done_fn done) {
  if (!conn_) return PMIX_OPERATION_SUCCEEDED;
  finalizing_ = true;
  if (openpmix_) return openpmix_status_request(openpmix_wire::command(buffer_type(), 5), std::move(done));
  return conn_->request(protocol::body::finalize, protocol::finalize_request({}),
                        [done](pmix_status_t st, protocol::envelope* reply) { done(status_of(st, reply)); });
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

session::~session() { close(); }

std::shared_ptr<session> session::make() { return std::shared_ptr<session>(new session, &session::dispose); }

void session::dispose(session* s) {
  if (s->conn_ && s->conn_->on_own_thread()) {
    std::thread([s] { delete s; }).detach();
    return;
  }
  delete s;
}

void session::abandon() {
  if (conn_) conn_->abandon();
}

}  // namespace pmix::client
