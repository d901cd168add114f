#include "actors/peer_actor.hpp"

#include "actors/peer_detail.hpp"
#include "protocol/openpmix.hpp"
#include "api/attributes.hpp"
#include "transport/peer_identity.hpp"

#include <caf/default_attachable.hpp>
#include <caf/exit_reason.hpp>
#include <caf/system_messages.hpp>
#include <caf/send.hpp>

#include <algorithm>
#include <chrono>
#include <map>
#include <cstddef>
#include <type_traits>
#include <unordered_map>

#include "common/log_sink.hpp"
#include "actors/cleaner.hpp"
#include "actors/job_layout.hpp"
#include "actors/openpmix_job.hpp"
#include "actors/shared_behavior.hpp"
#include "actors/upcall.hpp"
#include "server/host_module.hpp"
#include <pmix.h>

#include "common/directives.hpp"
#include "common/log.hpp"
#include "faults/plane.hpp"
#include "transport/shared_data.hpp"
#include "protocol/codec.hpp"
#include "protocol/direct.hpp"
#include "protocol/messages.hpp"
#include "protocol/version.hpp"
#include "transport/atoms.hpp"

namespace pmix::actors {

namespace {
// (job_control_done_atom, envelope id, status, results): the host's answer.
using job_control_done_atom = caf::atom_constant<caf::atom("jobctldone")>;
// (query_done_atom, envelope id, status, results): the host's answer to a query.
using query_done_atom = caf::atom_constant<caf::atom("querydone")>;
// (fault_replay_atom, frame): a frame the fault plane delayed, duplicated or
// held back, handled now without asking the plane again.
using fault_replay_atom = caf::atom_constant<caf::atom("freplay")>;
// (fault_flush_atom): a held-back frame whose next one did not come.
using fault_flush_atom = caf::atom_constant<caf::atom("fflush")>;
// (request_timeout_atom, kind, envelope id): a request's PMIX_TIMEOUT passed.
using request_timeout_atom = caf::atom_constant<caf::atom("reqtimeout")>;
enum class timed : std::uint8_t { get, lookup, query, publish, unpublish };
}  // namespace

const char* peer_state::name = "pmix.peer";

peer_state::~peer_state() {
  if (me != nullptr) {
    // What a functor attached at its start did (an allocation per client):
    // the pushes it held for a stopped stdin go with it
    // (actors/stdin_flow.hpp), and a peer that fails (ends abnormally) shuts
    // its socket, so that its client learns it at once instead of waiting
    // forever (found by the fault plane, kill:peer; docs/fault-injection.md).
    if (ctx) ctx->stdin_control->drop(me->address());
    if (conn && me->fail_state() != caf::exit_reason::normal) {
      if (ctx && ctx->faults) ctx->faults->closed(conn->id());  // what it left unanswered, its client learns by the end of the stream
      conn->shutdown();
    }
  }
  if (!budget) return;
  budget->give(job_budget::committed, committed_bytes);
  budget->give(job_budget::requests, requests_out());
  budget->give(job_budget::request_bytes, request_bytes);
}

std::size_t peer_state::requests_out() const {
  return gets_out.size() + (rare_ ? rare_->lookups_out.size() + rare_->queries_out.size() : 0);
}

const std::shared_ptr<const std::string>& peer_state::rank_blob() {
  if (!committed_blob) {
    // A wire::RankData written field by field from the kept items, the
    // bytes its serializer gives (tests/protocol/direct_test.cpp).
    constexpr int proc_field = wire::RankData::kProcFieldNumber, data_field = wire::RankData::kDataFieldNumber;
    std::size_t size = protocol::proc_size(proc_field, proc);
    for (const auto& [key, entry] : committed) size += protocol::header_size(data_field, entry.size()) + entry.size();
    std::string data;
    data.reserve(size);
    protocol::append_proc(data, proc_field, proc);
    for (const auto& [key, entry] : committed) protocol::append_delimited(data, data_field, entry);
    committed_blob = std::make_shared<const std::string>(std::move(data));
  }
  return committed_blob;
}

namespace peer {

// Spec 004: once the socket has closed (the peer is a tombstone, or its
// process died; `conn` reset is the spec's sd = -1) every send path stops
// here: a reply or event for it is dropped and counted, never queued on a
// dead connection. Every send below asks first.
bool can_send(self_ptr self) {
  auto& st = self->state;
  if (st.conn) return true;
  st.ctx->dropped_sends.fetch_add(1, std::memory_order_relaxed);
  return false;
}

void answered(self_ptr self, std::uint64_t id) {
  auto& st = self->state;
  if (st.ctx->faults && st.conn && id != 0) st.ctx->faults->answer(st.conn->id(), id);
}

void send_openpmix(self_ptr self, const wire::Envelope& e);

void send_envelope(self_ptr self, const wire::Envelope& e,
                   std::shared_ptr<const transport::shared_data> attach) {
  auto& st = self->state;
  if (!can_send(self)) return;
  if (st.openpmix) return send_openpmix(self, e);
  if (st.ctx->faults) answered(self, e.id());
  if (!st.conn->send(protocol::to_frame(e), {}, std::move(attach)))
    log::debug("peer", to_string(st.proc), ": write failed, connection broken");
}

void send_status(self_ptr self, std::uint64_t id, pmix_status_t status) {
  wire::Envelope e;
  e.set_id(id);
  e.mutable_status_reply()->set_status(status);
  send_envelope(self, e);
}

// A request this connection must not send: log it, end the connection. The
// I/O thread then reports closed_atom and the usual departure path runs.
void protocol_error(self_ptr self, const std::string& what) {
  auto& st = self->state;
  const auto pid = st.cred.pid;
  log::error("peer", "connection from pid ", pid,
             st.state == peer_state::phase::handshake ? std::string{} : " (" + to_string(st.proc) + ")",
             ": ", what, ": closing that connection");
  if (st.conn) st.conn->shutdown();
}

void send_info_reply(self_ptr self, std::uint64_t id, pmix_status_t status, const info_list& info,
                     const std::string& data) {
  wire::Envelope e;
  e.set_id(id);
  auto* r = e.mutable_info_reply();
  r->set_status(status);
  protocol::to_wire(info, r->mutable_info());
  if (!data.empty()) r->set_data(data);
  send_envelope(self, e);
}

}  // namespace peer

namespace {

using peer::self_ptr;
using peer::answered;
using peer::can_send;
using peer::protocol_error;
using peer::send_envelope;
using peer::send_info_reply;
using peer::send_status;

void strike(self_ptr self, const faults::decision& d);
void drop_requests(self_ptr self);
bool release(self_ptr self);

void answer_waiting_gets(self_ptr self, pmix_status_t status) {
  auto& st = self->state;
  auto waiting = std::move(st.waiting_gets);
  st.waiting_gets.clear();
  for (auto& w : waiting) w.promise.deliver(get_result{status, st.rank_data()});
}

// The process is gone (or this actor is): the gets waiting for its data
// get what it committed, or why there is none.
void answer_gets_of_departed(self_ptr self) {
  auto& st = self->state;
  answer_waiting_gets(self, st.has_committed ? PMIX_SUCCESS
                            : st.finalized   ? PMIX_ERR_NOT_FOUND
                                             : PMIX_ERR_PROC_TERM_WO_SYNC);
}

// Its rank failed and said so (its state's destructor sends its peers the
// down message a monitor would have, without the 48 bytes a monitor costs
// in the rank's list for each client) before the answer to the connect
// named it: the peer goes now, after that answer, as the monitor it would
// have set on a dead actor made it go.
void check_rank_failed(self_ptr self) {
  if (!self->state.rank_failed) return;
  log::warning("peer", to_string(self->state.proc), ": its rank actor failed, closing the connection");
  release(self);
}

void on_connect(self_ptr self, std::uint64_t id, const wire::ConnectRequest& req) {
  auto& st = self->state;
  if (req.protocol_version() != protocol::wire_version) {
    log::error("peer", "pid ", st.cred.pid, " speaks protocol version ",
               req.protocol_version(), ", this server ", protocol::wire_version);
    wire::Envelope e;
    e.set_id(id);
    e.mutable_connect_reply()->set_status(PMIX_ERR_NOT_SUPPORTED);
    send_envelope(self, e);
    st.conn->shutdown();
    return;
  }
  st.proc = protocol::from_wire(req.proc());
  st.role = req.role() == wire::ROLE_TOOL ? peer_role::tool : peer_role::client;
  st.offers_hold = st.role == peer_role::client && req.commit_hold();
  st.state = peer_state::phase::connecting;
  // A TCP peer of this host: the kernel named the owner of its socket; its
  // gid and pid are those of a process of that user holding the socket
  // (the pid it gives is only where to look first).
  // A rank's process is looked for under the pid it names only (ours name
  // theirs; OpenPMIx's name none): its user is the kernel's answer, and
  // its group the registration's (rank_actor.cpp). Reading every process's
  // descriptors instead made each of 64 ranks starting at once wait 2 ms,
  // up to 130 ms (docs/performance.md). A tool's is looked for everywhere:
  // its host hears its pid and group.
  if (st.cred.socket_inode != 0 && st.cred.pid == 0) {
    const auto started = std::chrono::steady_clock::now();
    const auto holder = st.role == peer_role::tool
                            ? transport::socket_holder(st.cred.uid, st.cred.socket_inode, req.pid())
                            : transport::claimed_holder(st.cred.uid, st.cred.socket_inode, req.pid());
    if (holder) {
      st.cred.pid = holder->pid;
      st.cred.gid = holder->gid;
      log::debug("peer", "a TCP connection of uid ", st.cred.uid, " is pid ", holder->pid, " (found in ",
                 std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - started)
                     .count(),
                 " us)");
    } else if (st.role == peer_role::tool) {
      log::warning("peer", "a TCP connection of uid ", st.cred.uid, " (claiming pid ", req.pid(),
                   "): no process of that user holds its socket; its group stays unknown");
    }
  }
  connect_msg msg{st.proc, st.cred, st.role, caf::actor_cast<caf::actor>(self),
                  st.conn->id(), {}};
  if (st.openpmix && st.openpmix_kind == 0) msg.openpmix_buffer = st.openpmix_buffer;
  std::string error;
  if (!protocol::from_wire(req.info(), msg.info, &error)) return protocol_error(self, error);
  self->request(st.server, caf::infinite, std::move(msg))
      .then(
          [=](connect_result& r) {
            auto& st = self->state;
            if (!st.conn) {
              // The socket went away while the handshake was in flight.
              if (r.status == PMIX_SUCCESS) {
                st.rank = r.rank;
                self->send(st.rank, peer_lost_msg{caf::actor_cast<caf::actor>(self), false});
                check_rank_failed(self);
              } else {
                self->quit();
              }
              return;
            }
            wire::Envelope e;
            e.set_id(id);
            auto* reply = e.mutable_connect_reply();
            reply->set_status(r.status);
            protocol::to_wire(st.ctx->server, reply->mutable_server());
            if (r.status != PMIX_SUCCESS) {
              log::warning("peer", "connection of ", to_string(st.proc), " refused: ",
                           PMIx_Error_string(r.status));
              send_envelope(self, e);
              st.state = peer_state::phase::refused;
              st.conn->shutdown();
              return;
            }
            st.rank = r.rank;
            if (st.cred.socket_inode != 0 && st.cred.pid == 0) st.cred.gid = r.registered_gid;
            st.server_object = r.server_object;
            st.proc = r.assigned;
            st.budget = r.budget;
            st.conn->set_budget(r.budget);
            // Before the answer goes out: the peer's next frames may be large.
            st.conn->authenticate();
            protocol::to_wire(r.assigned, reply->mutable_assigned());
            if (st.state == peer_state::phase::connecting) st.state = peer_state::phase::active;
            const bool shared = r.job_shared && st.conn->passes_descriptors();
            // A process linked with OpenPMIx reads its namespace's shared
            // form of the job data (actors/openpmix_job.hpp), not a copy.
            if (r.openpmix_job) st.rare().openpmix_form = r.openpmix_job;
            if (shared) reply->set_job_shared(r.job_shared->size());
            else if (r.job && !r.openpmix_job) reply->set_job(*r.job);
            // Not when a request for its data already waits (it came before
            // the process connected): nothing would end that hold.
            if (st.offers_hold && st.waiting_gets.empty()) {
              reply->set_commit_hold(true);
              st.hold = peer_state::hold_phase::allowed;
            }
            send_envelope(self, e, shared ? r.job_shared : nullptr);
            if (st.ctx->faults)
              strike(self, st.ctx->faults->at(faults::point_kind::message, "init_ack", st.proc.nspace,
                                              st.proc.rank, faults::after_step));
            check_rank_failed(self);
          },
          [=](caf::error&) {
            wire::Envelope e;
            e.set_id(id);
            e.mutable_connect_reply()->set_status(PMIX_ERR_UNREACH);
            send_envelope(self, e);
            if (self->state.conn) self->state.conn->shutdown();
            // No rank holds it, nor will: it ends here (the server is
            // going, or the connect's route failed).
            self->quit();
          });
}

// A commit's items, each as its key and the bytes the server keeps (a
// ScopedInfo, written again: protocol::write_scoped_item).
using commit_items = std::vector<std::pair<std::string, std::string>>;
void keep_commit(self_ptr self, commit_items& items);

void on_commit(self_ptr self, const wire::CommitRequest& req) {
  // Each item is read and written again before it is kept (all or none).
  // Kept as sent, an item whose value the clients' reader refuses, or with
  // unknown fields it refuses (groups), made every peer's fence and get of
  // this rank fail with PMIX_ERR_UNPACK_FAILURE (found by tests/fuzz
  // server_envelope). Such a commit is a protocol error, as a malformed
  // value is in any other request.
  commit_items items(static_cast<std::size_t>(req.data_size()));
  std::string error;
  for (int k = 0; k < req.data_size(); ++k) {
    auto& [key, bytes] = items[static_cast<std::size_t>(k)];
    if (!protocol::canonical_item(req.data(k), bytes, key, &error)) return protocol_error(self, "commit: " + error);
  }
  keep_commit(self, items);
}

void keep_commit(self_ptr self, commit_items& items) {
  auto& st = self->state;
  // What the data will weigh once these items are in (an item replaces
  // the one of its key), against the process's and its job's limits: over
  // either, the connection ends (a commit has no answer to refuse it with).
  std::size_t total = st.committed_bytes;
  // Keys this commit sets already, and their weight (an item replacing an
  // earlier one of the same commit: rare, our client sends a key once):
  // looked up in the items themselves for a usual commit, in a map for a
  // large one (a linear search would let a commit of many items cost the
  // server their square).
  constexpr std::size_t few = 16;
  std::unordered_map<std::string_view, std::size_t> seen;
  for (std::size_t k = 0; k < items.size(); ++k) {
    const auto& [key, bytes] = items[k];
    std::size_t before = 0;
    bool earlier = false;
    if (items.size() <= few) {
      for (std::size_t j = k; j-- > 0 && !earlier;)
        if (items[j].first == key) {
          before = key.size() + items[j].second.size();
          earlier = true;
        }
    } else if (auto n = seen.find(key); n != seen.end()) {
      before = n->second;
      earlier = true;
    }
    if (!earlier)
      if (auto it = st.committed.find(key); it != st.committed.end()) before = key.size() + it->second.size();
    total = total - before + key.size() + bytes.size();
    if (items.size() > few) seen[key] = key.size() + bytes.size();
  }
  const bool over_process = total > st.ctx->max_commit;
  const bool over_job = !over_process && total > st.committed_bytes && st.budget &&
                        !st.budget->take(job_budget::committed, total - st.committed_bytes);
  if (over_process || over_job) {
    if (over_process)
      log::error("peer", to_string(st.proc), " (uid ", st.owner, "): a commit would make the server hold ", total,
                 " bytes of its data, over PMIX_CXX_MAX_COMMIT (", st.ctx->max_commit, "): closing its connection");
    else
      log::error("peer", to_string(st.proc), " (uid ", st.owner, "): a commit would make the server hold more than ",
                 st.budget->limit(job_budget::committed), " bytes of its job's data (PMIX_CXX_MAX_COMMIT_JOB): ",
                 "closing its connection");
    if (st.conn) st.conn->shutdown();
    return;
  }
  if (total < st.committed_bytes && st.budget) st.budget->give(job_budget::committed, st.committed_bytes - total);
  st.committed_bytes = total;
  for (auto& [key, bytes] : items) st.committed[std::move(key)] = std::move(bytes);
  st.has_committed = true;
  st.committed_blob.reset();
  // While a hold ends, the client may be sending more: the gets wait for
  // commit_hold_ended.
  if (st.hold != peer_state::hold_phase::ending) answer_waiting_gets(self, PMIX_SUCCESS);
}

// The client sent everything it held (commit_hold_end), and holds no more.
void on_hold_ended(self_ptr self) {
  auto& st = self->state;
  const bool was_ending = st.hold == peer_state::hold_phase::ending;
  st.hold = peer_state::hold_phase::none;
  if (was_ending && st.has_committed) answer_waiting_gets(self, PMIX_SUCCESS);
}

void send_fence(self_ptr self, std::uint64_t id, fence_msg& msg, bool board_wait, bool board_request);

void on_fence(self_ptr self, std::uint64_t id, const wire::FenceRequest& req) {
  fence_msg msg;
  msg.procs.reserve(static_cast<std::size_t>(req.procs_size()));
  for (const auto& p : req.procs()) msg.procs.push_back(protocol::from_wire(p));
  std::string error;
  if (!protocol::from_wire(req.info(), msg.info, &error)) return protocol_error(self, error);
  msg.collect = req.collect_data();
  send_fence(self, id, msg, req.board_wait(), req.board_request());
}

// `msg` holds the request's participants, directives and collect flag.
void send_fence(self_ptr self, std::uint64_t id, fence_msg& msg, bool board_wait, bool board_request) {
  auto& st = self->state;
  msg.from = st.proc;
  msg.uid = st.owner;
  if (msg.procs.empty()) msg.procs.push_back(proc_id{st.proc.nspace, rank_wildcard});
  // A peer that committed nothing adds nothing to the collected data: the
  // clients take a collecting fence's participants as complete either way
  // (client::store::participants_complete).
  if (msg.collect && !st.committed.empty()) msg.data = st.rank_blob();
  msg.board_wait = board_wait && st.board_sent;
  msg.board_request = board_request && !st.board_asked && st.conn->passes_descriptors();
  st.board_asked = st.board_asked || msg.board_request;
  // Sent, not requested: the answer (on_fence_answer) comes only when the
  // reply is not on the board. The server actor never ends before this
  // actor does (finalize ends both), so no answer is lost with it.
  msg.answer_id = id;
  msg.answer_on_board = st.ctx->faults != nullptr;
  self->send(st.server, std::move(msg));
}

void send_openpmix_status(self_ptr self, std::uint32_t tag, pmix_status_t status);
void send_openpmix_event(self_ptr self, const std::string& frame);
void send_openpmix_connect_reply(self_ptr self, std::uint32_t tag, const std::string& reply);

void on_fence_answer(self_ptr self, const fence_answer_msg& a) {
  auto& st = self->state;
  const auto& r = a.result;
  if (r.on_board) return answered(self, a.id);  // the client reads it there
  if (!can_send(self)) return;
  if (st.openpmix) {
    // OpenPMIx's clients take only the status, and get the data they want.
    answered(self, a.id);
    return send_openpmix_status(self, static_cast<std::uint32_t>(a.id), r.status);
  }
  const bool shared = r.shared && st.conn->passes_descriptors();
  const std::string& body = shared ? *r.shared_reply : *r.reply;
  const protocol::frame_prefix prefix{a.id, protocol::body::fence_reply, body.size()};
  answered(self, a.id);
  if (!st.conn->send(prefix.view(), body, shared ? r.shared : nullptr))
    log::debug("peer", to_string(st.proc), ": write failed, connection broken");
}

void send_get_status(self_ptr self, std::uint64_t id, pmix_status_t status) {
  wire::Envelope e;
  e.set_id(id);
  e.mutable_get_reply()->set_status(status);
  send_envelope(self, e);
}

// Counts a request of `bytes` that waits for an answer, for this peer and
// its job; false (logged: the caller answers PMIX_ERR_OUT_OF_RESOURCE) when
// that would pass a limit (docs/security.md, "Limits").
bool take_request(self_ptr self, std::size_t bytes, const char* what) {
  auto& st = self->state;
  const char* limit = nullptr;
  if (st.requests_out() >= st.ctx->max_requests) {
    limit = "PMIX_CXX_MAX_REQUESTS";
  } else if (st.request_bytes + bytes > st.ctx->max_request_bytes) {
    limit = "PMIX_CXX_MAX_REQUEST_BYTES";
  } else if (st.budget && !st.budget->take(job_budget::requests, 1)) {
    limit = "PMIX_CXX_MAX_REQUESTS_JOB";
  } else if (st.budget && !st.budget->take(job_budget::request_bytes, bytes)) {
    st.budget->give(job_budget::requests, 1);
    limit = "PMIX_CXX_MAX_REQUEST_BYTES_JOB";
  }
  if (limit == nullptr) {
    st.request_bytes += bytes;
    return true;
  }
  log::warning("peer", to_string(st.proc), " (uid ", st.owner, "): ", what, " refused: ", st.requests_out(),
               " requests of ", st.request_bytes, " bytes wait for answers already (", limit, ")");
  return false;
}

// The answer came, or will not be waited for: the request's count and
// bytes go back. False if `id` was not waiting (answered already).
template <class Map>
bool finish_request(self_ptr self, Map& pending, std::uint64_t id) {
  auto it = pending.find(id);
  if (it == pending.end()) return false;
  std::size_t bytes;
  if constexpr (std::is_same_v<typename Map::mapped_type, std::size_t>)
    bytes = it->second;
  else
    bytes = it->second.bytes;
  pending.erase(it);
  auto& st = self->state;
  st.request_bytes -= bytes;
  if (st.budget) {
    st.budget->give(job_budget::requests, 1);
    st.budget->give(job_budget::request_bytes, bytes);
  }
  return true;
}

// A request that waits for an answer ends after `seconds` (its PMIX_TIMEOUT).
void time_request(self_ptr self, timed kind, std::uint64_t id, std::int64_t seconds) {
  if (seconds > 0)
    self->delayed_send(self, std::chrono::seconds(seconds), request_timeout_atom::value, static_cast<std::uint8_t>(kind),
                       id);
}

void on_get(self_ptr self, std::uint64_t id, const wire::GetRequest& req) {
  auto& st = self->state;
  if (req.key().size() > PMIX_MAX_KEYLEN) {
    log::error("peer", to_string(st.proc), ": PMIx_Get of a key of ", req.key().size(), " bytes (at most ",
               PMIX_MAX_KEYLEN, ")");
    return send_get_status(self, id, PMIX_ERR_BAD_PARAM);
  }
  if (st.gets_out.count(id) != 0) return protocol_error(self, "two gets with one request id");
  const std::size_t bytes = req.ByteSizeLong();
  if (!take_request(self, bytes, "PMIx_Get")) return send_get_status(self, id, PMIX_ERR_OUT_OF_RESOURCE);
  get_msg msg;
  msg.from = st.proc;
  msg.uid = st.owner;
  msg.target = protocol::from_wire(req.proc());
  msg.key = req.key();
  msg.asker = self->address();
  msg.request = id;
  std::string error;
  st.gets_out.emplace(id, peer_state::pending_get{msg.target, bytes});
  if (!protocol::from_wire(req.info(), msg.info, &error)) return protocol_error(self, error);
  time_request(self, timed::get, id, directives::timeout_seconds(msg.info));
  self->request(st.server, caf::infinite, std::move(msg))
      .then(
          [=](get_result& r) {
            // Not if it timed out (or its connection ended) meanwhile.
            if (!finish_request(self, self->state.gets_out, id)) return;
            wire::Envelope e;
            e.set_id(id);
            auto* reply = e.mutable_get_reply();
            reply->set_status(r.status);
            if (!r.data.empty() && !reply->mutable_data()->ParseFromString(r.data))
              reply->set_status(PMIX_ERR_UNPACK_FAILURE);
            if (r.job) reply->set_job(*r.job);
            send_envelope(self, e);
          },
          [=](caf::error&) {
            if (finish_request(self, self->state.gets_out, id)) send_get_status(self, id, PMIX_ERR_UNREACH);
          });
}

void on_abort(self_ptr self, std::uint64_t id, const wire::AbortRequest& req) {
  auto& st = self->state;
  std::vector<proc_id> procs;
  for (const auto& p : req.procs()) procs.push_back(protocol::from_wire(p));
  const auto upcall = st.next_upcall++;
  const bool supported =
      st.ctx->host->abort(st.proc, st.server_object, req.status(), req.message(), procs,
                          reply_to_actor(self->address(), st.ctx, upcall));
  if (!supported) return send_status(self, id, PMIX_ERR_NOT_SUPPORTED);
  st.rare().upcalls.emplace(upcall, id);
}

// PMIx_Job_control: cleanup directives are served here (the peer's epilog,
// or the namespace's through the server); anything else goes to the host.
void on_job_control(self_ptr self, std::uint64_t id, const wire::JobControlRequest& req) {
  auto& st = self->state;
  std::vector<proc_id> targets;
  for (const auto& t : req.targets()) targets.push_back(protocol::from_wire(t));
  info_list directives;
  std::string error;
  if (!protocol::from_wire(req.directives(), directives, &error)) return protocol_error(self, error);
  if (epilog::is_cleanup(directives)) {
    const bool self_only =
        targets.empty() || std::all_of(targets.begin(), targets.end(),
                                       [&](const proc_id& p) { return p == st.proc; });
    const bool whole_job = targets.size() == 1 && targets[0].nspace == st.proc.nspace &&
                           targets[0].rank == rank_wildcard;
    if (self_only) {
      const auto rc = st.rare().cleanup.add(directives, st.owner, error);
      if (rc != PMIX_SUCCESS) log::error("peer", to_string(st.proc), ": cleanup refused: ", error);
      return send_info_reply(self, id, rc, {});
    }
    if (whole_job) {
      self->request(st.server, caf::infinite, register_epilog_msg{st.proc.nspace, directives, st.owner})
          .then([=](pmix_status_t rc) { send_info_reply(self, id, rc, {}); },
                [=](caf::error&) { send_info_reply(self, id, PMIX_ERR_UNREACH, {}); });
      return;
    }
    log::error("peer", to_string(st.proc), ": cleanup may name the caller or its whole job only");
    return send_info_reply(self, id, PMIX_ERR_BAD_PARAM, {});
  }
  const bool asked = st.ctx->host->job_control(
      st.proc, targets, directives,
      peer::answer_once("job_control", [addr = self->address(), gate = st.ctx->gate, id](pmix_status_t status,
                                                                                  info_list results) {
        gate->send_if_open(addr, job_control_done_atom::value, id, status, std::move(results));
      }));
  if (!asked) send_info_reply(self, id, PMIX_ERR_NOT_SUPPORTED, {});
}

// PMIx_Query_info: the host answers (PMIX_ERR_NOT_SUPPORTED without a
// query up-call).
void on_query(self_ptr self, std::uint64_t id, const wire::QueryRequest& req) {
  auto& st = self->state;
  std::vector<query> queries;
  for (const auto& q : req.queries()) {
    query item;
    for (const auto& k : q.keys()) item.keys.push_back(k);
    std::string error;
    if (!protocol::from_wire(q.qualifiers(), item.qualifiers, &error))
      return protocol_error(self, error);
    queries.push_back(std::move(item));
  }
  // The server actor answers the process-set keys itself and refuses what
  // names another user's namespace; the rest go to the host.
  // The shortest PMIX_TIMEOUT among the queries' qualifiers bounds the wait.
  std::int64_t seconds = 0;
  for (const auto& q : queries) {
    const auto t = directives::timeout_seconds(q.qualifiers);
    if (t > 0 && (seconds == 0 || t < seconds)) seconds = t;
  }
  auto ask_host = [self, id, seconds](const std::vector<query>& asked_for, info_list answered) {
    auto& st = self->state;
    std::size_t bytes = 0;
    for (const auto& q : asked_for) {
      for (const auto& k : q.keys) bytes += k.size();
      for (const auto& i : q.qualifiers) bytes += i.key.size() + sizeof(info);
    }
    if (!take_request(self, bytes, "PMIx_Query_info")) return send_info_reply(self, id, PMIX_ERR_OUT_OF_RESOURCE, {});
    st.rare().queries_out.emplace(id, bytes);
    const bool asked = st.ctx->host->query(
        st.proc, asked_for,
        peer::answer_once("query", [addr = self->address(), gate = st.ctx->gate, id, answered](
                                 pmix_status_t status, info_list results) mutable {
          // Both: the server's answers first; a host failure is partial.
          if (!answered.empty()) {
            if (status != PMIX_SUCCESS) status = PMIX_ERR_PARTIAL_SUCCESS;
            answered.insert(answered.end(), std::make_move_iterator(results.begin()),
                            std::make_move_iterator(results.end()));
            results = std::move(answered);
          }
          gate->send_if_open(addr, query_done_atom::value, id, status, std::move(results));
        }));
    if (asked) return time_request(self, timed::query, id, seconds);
    finish_request(self, st.rare().queries_out, id);
    if (answered.empty()) return send_info_reply(self, id, PMIX_ERR_NOT_SUPPORTED, {});
    send_info_reply(self, id, PMIX_ERR_PARTIAL_SUCCESS, answered);
  };
  self->request(st.server, caf::infinite, pset_query_msg{std::move(queries), st.proc, st.owner})
      .then(
          [=](query_plan& plan) {
            if (!plan.for_host.empty()) return ask_host(plan.for_host, std::move(plan.answered));
            const auto status = plan.answered.empty() ? PMIX_ERR_NOT_FOUND
                                : plan.refused > 0    ? PMIX_ERR_PARTIAL_SUCCESS
                                                      : PMIX_SUCCESS;
            send_info_reply(self, id, status, plan.answered);
          },
          [=](caf::error&) { send_info_reply(self, id, PMIX_ERR_UNREACH, {}); });
}

// PMIx_Notify_event from this process: delivered by the server (the process
// ran its own handlers already), answered when done.
void on_notify(self_ptr self, std::uint64_t id, const wire::Event& req) {
  auto& st = self->state;
  client_event_msg msg;
  msg.ev.status = req.status();
  // The source is the sender, whatever the request names (as OpenPMIx does):
  // another process's name would reach its job's handlers and the host as
  // if it had raised the event, and route the range by its namespace.
  msg.ev.source = st.proc;
  if (req.has_source() && !req.source().nspace().empty()) {
    const auto claimed = protocol::from_wire(req.source());
    if (claimed != st.proc)
      log::warning("peer", to_string(st.proc), " (uid ", st.owner, "): PMIx_Notify_event names ", to_string(claimed),
                   " as its source: the event goes out from ", to_string(st.proc));
  }
  msg.ev.range = static_cast<pmix_data_range_t>(req.range());
  msg.origin = caf::actor_cast<caf::actor>(self);
  std::string error;
  if (!protocol::from_wire(req.info(), msg.ev.info, &error)) return protocol_error(self, error);
  self->request(st.server, caf::infinite, std::move(msg))
      .then([=](pmix_status_t rc) { send_status(self, id, rc); },
            [=](caf::error&) { send_status(self, id, PMIX_ERR_UNREACH); });
}

// The caller's user and group, added to what a publish, lookup or unpublish
// hands the host (as OpenPMIx does: Open MPI's data server keys its entries
// on the user and refuses a lookup without it). Those the kernel reported
// for the connection: a PMIX_USERID or PMIX_GRPID the client put in its
// directives is dropped (another user's id would reach that user's data).
void add_user(const peer_state& st, info_list& info) {
  const auto claimed = std::remove_if(info.begin(), info.end(), [](const pmix::info& i) {
    return i.key == PMIX_USERID || i.key == PMIX_GRPID;
  });
  if (claimed != info.end()) {
    log::debug("peer", to_string(st.proc), ": the user and group it named are replaced by its own");
    info.erase(claimed, info.end());
  }
  // Over TCP from another host the user is unknown: (uid_t)-1, nobody's id.
  info.push_back({PMIX_USERID, value::unsigned_(PMIX_UINT32, st.owner), 0});
  info.push_back({PMIX_GRPID, value::unsigned_(PMIX_UINT32, st.cred.gid), 0});
}

// PMIx_Publish / _Unpublish: the host keeps published data.
void on_publish(self_ptr self, std::uint64_t id, const wire::PublishRequest& req) {
  auto& st = self->state;
  info_list info;
  std::string error;
  if (!protocol::from_wire(req.info(), info, &error)) return protocol_error(self, error);
  add_user(st, info);
  const auto seconds = directives::timeout_seconds(info);
  const auto upcall = st.next_upcall++;
  if (!st.ctx->host->publish(st.proc, info, reply_to_actor(self->address(), st.ctx, upcall)))
    return send_status(self, id, PMIX_ERR_NOT_SUPPORTED);
  st.rare().upcalls.emplace(upcall, id);
  // The host has PMIX_TIMEOUT too; the server answers when it passes
  // whatever the host does (its late answer is dropped).
  time_request(self, timed::publish, upcall, seconds);
}

void on_unpublish(self_ptr self, std::uint64_t id, const wire::KeysRequest& req) {
  auto& st = self->state;
  info_list info;
  std::string error;
  if (!protocol::from_wire(req.info(), info, &error)) return protocol_error(self, error);
  add_user(st, info);
  const std::vector<std::string> keys(req.keys().begin(), req.keys().end());
  const auto seconds = directives::timeout_seconds(info);
  const auto upcall = st.next_upcall++;
  if (!st.ctx->host->unpublish(st.proc, keys, info, reply_to_actor(self->address(), st.ctx, upcall)))
    return send_status(self, id, PMIX_ERR_NOT_SUPPORTED);
  st.rare().upcalls.emplace(upcall, id);
  time_request(self, timed::unpublish, upcall, seconds);
}

void send_lookup_reply(self_ptr self, std::uint64_t id, pmix_status_t status, const std::vector<pdata>& data) {
  wire::Envelope e;
  e.set_id(id);
  auto* r = e.mutable_lookup_reply();
  r->set_status(status);
  for (const auto& d : data) protocol::to_wire(d, r->add_data());
  send_envelope(self, e);
}

void on_lookup(self_ptr self, std::uint64_t id, const wire::KeysRequest& req) {
  auto& st = self->state;
  info_list info;
  std::string error;
  if (!protocol::from_wire(req.info(), info, &error)) return protocol_error(self, error);
  if (req.keys().empty()) {
    log::error("peer", to_string(st.proc), ": PMIx_Lookup without keys");
    return send_lookup_reply(self, id, PMIX_ERR_BAD_PARAM, {});
  }
  add_user(st, info);
  const std::size_t bytes = req.ByteSizeLong();
  if (!take_request(self, bytes, "PMIx_Lookup")) return send_lookup_reply(self, id, PMIX_ERR_OUT_OF_RESOURCE, {});
  const std::vector<std::string> keys(req.keys().begin(), req.keys().end());
  // Tracked before the host is asked: it may answer at once.
  st.rare().lookups_out.emplace(id, bytes);
  const auto seconds = directives::timeout_seconds(info);
  const bool asked = st.ctx->host->lookup(
      st.proc, keys, info,
      peer::answer_once("lookup", [addr = self->address(), gate = st.ctx->gate, id](pmix_status_t status,
                                                                             std::vector<pdata> data) {
        gate->send_if_open(addr, lookup_done_msg{id, status, std::move(data)});
      }));
  if (!asked) {
    finish_request(self, st.rare().lookups_out, id);
    return send_lookup_reply(self, id, PMIX_ERR_NOT_SUPPORTED, {});
  }
  time_request(self, timed::lookup, id, seconds);
}

void send_spawn_reply(self_ptr self, std::uint64_t id, pmix_status_t status, const std::string& nspace) {
  wire::Envelope e;
  e.set_id(id);
  auto* r = e.mutable_spawn_reply();
  r->set_status(status);
  r->set_nspace(nspace);
  send_envelope(self, e);
}

// PMIx_Spawn: the host starts the job and names its namespace.
void start_spawn(self_ptr self, std::uint64_t id, const info_list& job_info, const std::vector<app>& apps) {
  auto& st = self->state;
  if (apps.empty() || std::any_of(apps.begin(), apps.end(), [](const app& a) { return a.cmd.empty(); })) {
    log::error("peer", to_string(st.proc), ": PMIx_Spawn without applications or with an empty command");
    return send_spawn_reply(self, id, PMIX_ERR_BAD_PARAM, {});
  }
  const bool asked = st.ctx->host->spawn(
      st.proc, job_info, apps,
      peer::answer_once("spawn", [addr = self->address(), gate = st.ctx->gate, id](pmix_status_t status,
                                                                            std::string nspace) {
        gate->send_if_open(addr, spawn_done_msg{id, status, std::move(nspace)});
      }));
  if (!asked) send_spawn_reply(self, id, PMIX_ERR_NOT_SUPPORTED, {});
}

void on_spawn(self_ptr self, std::uint64_t id, const wire::SpawnRequest& req) {
  info_list job_info;
  std::string error;
  if (!protocol::from_wire(req.job_info(), job_info, &error)) return protocol_error(self, error);
  std::vector<app> apps(static_cast<std::size_t>(req.apps_size()));
  for (int k = 0; k < req.apps_size(); ++k)
    if (!protocol::from_wire(req.apps(k), apps[static_cast<std::size_t>(k)], &error))
      return protocol_error(self, error);
  start_spawn(self, id, job_info, apps);
}

// PMIx_Connect / PMIx_Disconnect: a collective the server tracks.
void on_connect_procs(self_ptr self, std::uint64_t id, const wire::ConnectProcsRequest& req) {
  auto& st = self->state;
  connect_procs_msg msg;
  msg.from = st.proc;
  msg.uid = st.owner;
  msg.disconnect = req.disconnect();
  for (const auto& p : req.procs()) msg.procs.push_back(protocol::from_wire(p));
  std::string error;
  if (!protocol::from_wire(req.info(), msg.info, &error)) return protocol_error(self, error);
  self->request(st.server, caf::infinite, std::move(msg))
      .then(
          [=](fence_result& r) {
            auto& st = self->state;
            if (!r.reply || !can_send(self)) return;
            if (st.openpmix) {
              answered(self, id);
              return send_openpmix_connect_reply(self, static_cast<std::uint32_t>(id), *r.reply);
            }
            const protocol::frame_prefix prefix{id, protocol::body::connect_procs_reply, r.reply->size()};
            answered(self, id);
            if (!st.conn->send(prefix.view(), *r.reply))
              log::debug("peer", to_string(st.proc), ": write failed, connection broken");
          },
          [=](caf::error&) {
            wire::Envelope e;
            e.set_id(id);
            e.mutable_connect_procs_reply()->set_status(PMIX_ERR_UNREACH);
            send_envelope(self, e);
          });
}

// PMIx_Log: to the host's log up-call, or else to the channels this
// server reaches itself (actors/log_sink.hpp).
void on_log(self_ptr self, std::uint64_t id, const wire::LogRequest& req) {
  auto& st = self->state;
  info_list data, directives;
  std::string error;
  if (!protocol::from_wire(req.data(), data, &error) || !protocol::from_wire(req.directives(), directives, &error))
    return protocol_error(self, error);
  // The source is the sender, for the host too: a PMIX_LOG_SOURCE the
  // client gives is replaced by its authenticated identity.
  directives.erase(std::remove_if(directives.begin(), directives.end(),
                                  [](const info& d) { return d.key == PMIX_LOG_SOURCE; }),
                   directives.end());
  directives.push_back({PMIX_LOG_SOURCE, value::proc(st.proc), 0});
  const auto upcall = st.next_upcall++;
  if (st.ctx->host->log(st.proc, data, directives, reply_to_actor(self->address(), st.ctx, upcall))) {
    st.rare().upcalls.emplace(upcall, id);
    return;
  }
  const auto rc = logging::log_locally(st.proc, data, directives, error, true);
  if (rc != PMIX_SUCCESS) log::warning("peer", to_string(st.proc), ": PMIx_Log: ", error);
  send_status(self, id, rc);
}

void on_finalize(self_ptr self, std::uint64_t id) {
  auto& st = self->state;
  st.finalized = true;
  st.state = peer_state::phase::finalizing;
  self->request(st.rank, caf::infinite, peer_finalize_msg{caf::actor_cast<caf::actor>(self)})
      .then([=](pmix_status_t status) { send_status(self, id, status); },
            [=](caf::error&) { send_status(self, id, PMIX_ERR_UNREACH); });
}

// The step a client's message is at, as the fault plane names it.
const char* step_of(wire::Envelope::BodyCase c) {
  switch (c) {
    case wire::Envelope::kConnect: return "init";
    case wire::Envelope::kCommit: return "commit";
    case wire::Envelope::kFence: return "fence";
    case wire::Envelope::kGet: return "get";
    case wire::Envelope::kAbort: return "abort";
    case wire::Envelope::kFinalize: return "finalize";
    case wire::Envelope::kJobControl: return "job_control";
    case wire::Envelope::kNotify: return "notify";
    case wire::Envelope::kQuery: return "query";
    case wire::Envelope::kPublish: return "publish";
    case wire::Envelope::kLookup: return "lookup";
    case wire::Envelope::kUnpublish: return "unpublish";
    case wire::Envelope::kSpawn: return "spawn";
    case wire::Envelope::kConnectProcs: return "connect_procs";
    case wire::Envelope::kLog: return "log";
    case wire::Envelope::kHost: return "host";
    case wire::Envelope::kGroup: return "group";
    default: return "other";
  }
}

// A cut or kill the fault plane decided, once the step's message has been
// handed on (mid-step): the socket is shut, or an actor ends abnormally.
void strike(self_ptr self, const faults::decision& d) {
  auto& st = self->state;
  if (d.what == faults::action::cut) {
    log::info("peer", to_string(st.proc), ": fault plane: socket cut");
    if (st.conn) st.conn->shutdown();
    return;
  }
  if (d.what != faults::action::kill) return;
  const caf::error reason = caf::exit_reason::unhandled_exception;
  log::info("peer", to_string(st.proc), ": fault plane: killing the ",
            d.who == faults::victim::peer ? "peer" : d.who == faults::victim::rank ? "rank" : "namespace",
            " actor");
  switch (d.who) {
    case faults::victim::peer:
      // A promise this actor holds is not answered by CAF when it ends:
      // a get waiting here (for a commit, or for the end of a commit hold)
      // would wait for ever (tests/faults matrix_test, "random" seed 3).
      answer_gets_of_departed(self);
      drop_requests(self);
      return self->quit(reason);
    case faults::victim::rank:
      if (st.rank) self->send_exit(st.rank, reason);
      return;
    case faults::victim::nspace:
      if (st.rank) self->send(st.rank, fault_kill_nspace_atom::value);
      return;
  }
}

void dispatch(self_ptr self, const wire::Envelope& e) {
  auto& st = self->state;
  const auto id = e.id();
  if (st.state == peer_state::phase::handshake) {
    if (e.body_case() != wire::Envelope::kConnect)
      return protocol_error(self, "first message is not a connect request");
    if (st.ctx->faults && id != 0) st.ctx->faults->request(st.conn->id(), id);
    return on_connect(self, id, e.connect());
  }
  if (st.state == peer_state::phase::connecting || st.state == peer_state::phase::refused)
    return protocol_error(self, "request before a successful connect");
  // Also after finalize: the client may have answered a commit_hold_end
  // sent while its finalize was on the way.
  if (e.body_case() == wire::Envelope::kCommitHoldEnded) return on_hold_ended(self);
  if (st.state == peer_state::phase::finalizing)
    return protocol_error(self, "request after finalize");
  if (st.ctx->faults && id != 0 && e.body_case() != wire::Envelope::kCommit)
    st.ctx->faults->request(st.conn->id(), id);
  switch (e.body_case()) {
    case wire::Envelope::kCommit:
      return on_commit(self, e.commit());
    case wire::Envelope::kFence:
      return on_fence(self, id, e.fence());
    case wire::Envelope::kGet:
      return on_get(self, id, e.get());
    case wire::Envelope::kAbort:
      return on_abort(self, id, e.abort());
    case wire::Envelope::kFinalize:
      return on_finalize(self, id);
    case wire::Envelope::kJobControl:
      return on_job_control(self, id, e.job_control());
    case wire::Envelope::kNotify:
      return on_notify(self, id, e.notify());
    case wire::Envelope::kQuery:
      return on_query(self, id, e.query());
    case wire::Envelope::kPublish:
      return on_publish(self, id, e.publish());
    case wire::Envelope::kLookup:
      return on_lookup(self, id, e.lookup());
    case wire::Envelope::kUnpublish:
      return on_unpublish(self, id, e.unpublish());
    case wire::Envelope::kSpawn:
      return on_spawn(self, id, e.spawn());
    case wire::Envelope::kConnectProcs:
      return on_connect_procs(self, id, e.connect_procs());
    case wire::Envelope::kLog:
      return on_log(self, id, e.log());
    case wire::Envelope::kHost:
      return peer::on_host_request(self, id, e.host());
    case wire::Envelope::kGroup:
      return peer::on_group_request(self, id, e.group());
    case wire::Envelope::kConnect:
      return protocol_error(self, "second connect request");
    case wire::Envelope::BODY_NOT_SET:
      return protocol_error(self, "empty envelope");
    default:
      log::warning("peer", to_string(st.proc), ": unsupported request ",
                   static_cast<int>(e.body_case()));
      return send_status(self, id, PMIX_ERR_NOT_SUPPORTED);
  }
}

// A commit or a fence, the two requests of every fence, read without
// protobuf's classes (protocol::read_request): false, having done nothing,
// for any other frame and any such request that reader leaves to protobuf
// (on_frame then parses it as before). Only for an active peer with no fault
// plane: dispatch's checks of the phase and its fault points are not made.
bool read_fence_request(self_ptr self, std::string_view payload) {
  protocol::request req;
  if (!protocol::read_request(payload, req)) return false;
  if (req.kind == protocol::body::commit) {
    std::vector<protocol::scoped_info> read;
    if (!protocol::read_commit(req.message, read)) return false;
    commit_items items(read.size());
    for (std::size_t k = 0; k < read.size(); ++k) {
      protocol::write_scoped_item(items[k].second, read[k].scope, read[k].item);
      items[k].first = std::move(read[k].item.key);
    }
    keep_commit(self, items);
    return true;
  }
  protocol::fence_request_data read;
  if (!protocol::read_fence(req.message, read)) return false;
  fence_msg msg;
  msg.procs = std::move(read.procs);
  msg.info = std::move(read.info);
  msg.collect = read.collect_data;
  send_fence(self, req.id, msg, read.board_wait, read.board_request);
  return true;
}

// `replay`: a frame the fault plane already decided on (delayed,
// duplicated or held back), handled without asking it again.
void on_openpmix_frame(self_ptr self, const std::string& frame);

void on_frame(self_ptr self, const std::string& payload, bool replay = false) {
  auto& st = self->state;
  // Nothing more from a connection this side ended (a cut, a refused
  // connect, a protocol error): frames the I/O thread read before the end
  // are dropped, as they would be had they come a moment later.
  if (st.state == peer_state::phase::tombstone || !st.conn || st.conn->shut()) return;
  if (st.state == peer_state::phase::handshake && !st.openpmix) st.openpmix = st.conn->openpmix();
  if (st.openpmix) return on_openpmix_frame(self, payload);
  if (!st.ctx->faults && st.state == peer_state::phase::active && read_fence_request(self, payload)) return;
  // The request is parsed on an arena whose first block is on the stack:
  // its parts cost no allocation and no destructor each (no handler keeps
  // a reference to them past this call).
  protocol::stack_arena<2048> arena;
  auto& e = arena.make<wire::Envelope>();
  if (!protocol::parse(payload, e)) return protocol_error(self, "malformed frame");
  if (!st.ctx->faults) return dispatch(self, e);
  // The fault plane's delivery point for clients' messages.
  faults::decision fault;
  if (!replay) {
    const bool hello = e.body_case() == wire::Envelope::kConnect;
    const auto& ns = hello ? e.connect().proc().nspace() : st.proc.nspace;
    const auto rank = hello ? e.connect().proc().rank() : st.proc.rank;
    fault = st.ctx->faults->at(faults::point_kind::message, step_of(e.body_case()), ns, rank);
    switch (fault.what) {
      case faults::action::drop:
        // A lost request breaks its stream: the client is told by its end.
        if (e.id() != 0) protocol_error(self, std::string{"fault plane: "} + step_of(e.body_case()) + " lost");
        return;
      case faults::action::delay:
        self->delayed_send(self, std::chrono::milliseconds(fault.ms), fault_replay_atom::value, payload);
        return;
      case faults::action::reorder:
        if (st.holding) break;  // one held at a time
        st.rare().held_frame = payload;
        st.holding = true;
        self->delayed_send(self, std::chrono::milliseconds(20), fault_flush_atom::value);
        return;
      default:
        break;
    }
  }
  dispatch(self, e);
  if (fault.what == faults::action::dup) self->send(self, fault_replay_atom::value, payload);
  if (st.holding && !replay) {
    // The held-back message comes after this one.
    st.holding = false;
    self->send(self, fault_replay_atom::value, std::exchange(st.rare().held_frame, {}));
  }
  strike(self, fault);
}

// ---- OpenPMIx's protocol (issue 35) ---------------------------------------------
//
// A process linked with OpenPMIx connects to its own listener (loopback TCP).
// Its handshake and requests become the Envelopes our clients send, handled
// by the same code (dispatch); the replies meant for them are written in its
// form by send_openpmix. docs/wire-format.md, "OpenPMIx's protocol", says
// what is served so far; any other request is answered PMIX_ERR_NOT_SUPPORTED.

// The handshake's request id (OpenPMIx's tags are 32-bit).
constexpr std::uint64_t openpmix_handshake = std::uint64_t{1} << 40;

using openpmix::put_be32;

// One message to the process: the 16-byte header (index 0, the tag, the
// length, padding; big-endian) and the packed payload.
void send_openpmix_message(self_ptr self, std::uint32_t tag, const std::string& payload) {
  auto& st = self->state;
  char header[openpmix::header_size];
  openpmix::message_header(header, 0, tag, static_cast<std::uint32_t>(payload.size()));
  std::string frame;
  frame.reserve(sizeof header + payload.size());
  frame.append(header, sizeof header);
  frame += payload;
  if (log::enabled(log::level::debug))
    log::debug("peer", to_string(st.proc), " (linked with OpenPMIx): a message on tag ", tag, ", ", payload.size(),
               " bytes");
  if (!st.conn->send(frame)) log::debug("peer", to_string(st.proc), ": write failed, connection broken");
}

openpmix::buffer_type buffer_of(const peer_state& st) {
  return st.openpmix_buffer == 2 ? openpmix::buffer_type::fully_desc : openpmix::buffer_type::non_desc;
}

void send_openpmix_status(self_ptr self, std::uint32_t tag, pmix_status_t status) {
  openpmix::writer w{buffer_of(self->state)};
  w.status(status);
  send_openpmix_message(self, tag, w.bytes());
}

// PMIX_REQ_CMD: the process's job data.
void send_openpmix_job(self_ptr self, std::uint32_t tag) {
  auto& st = self->state;
  auto& form = st.rare().openpmix_form;
  if (!form) {
    // Not made by the namespace at connect (a tool's): made here.
    const auto& job_blob = st.rare().openpmix_job;
    if (st.openpmix_kind != 0 && (!job_blob || job_blob->empty())) {
      // A tool's: its namespace, with no data of its own.
      openpmix::writer w{buffer_of(st)};
      w.string(st.proc.nspace);
      return send_openpmix_message(self, tag, w.bytes());
    }
    if (job_blob) form = make_openpmix_job_form(*job_blob, buffer_of(st));
    if (!form) {
      log::error("peer", to_string(st.proc), ": no job data to give a process linked with OpenPMIx");
      return send_openpmix_status(self, tag, PMIX_ERR_NOT_FOUND);
    }
  }
  if (form->skipped > 0)
    log::debug("peer", to_string(st.proc), ": ", form->skipped, " job keys have no form in OpenPMIx's protocol (left out)");
  send_openpmix_message(self, tag, form->payload);
}

// A connect's answer: the status, then a byte object with the job data of
// each other namespace among the participants (as at init).
void send_openpmix_connect_reply(self_ptr self, std::uint32_t tag, const std::string& reply) {
  auto& st = self->state;
  wire::ConnectProcsReply r;
  if (!r.ParseFromString(reply)) return send_openpmix_status(self, tag, PMIX_ERR_UNPACK_FAILURE);
  openpmix::writer w{buffer_of(st)};
  w.status(r.status());
  std::size_t skipped = 0;
  if (r.status() == PMIX_SUCCESS)
    for (const auto& bytes : r.jobs()) {
      wire::JobInfo job;
      if (!job.ParseFromString(bytes) || job.nspace() == st.proc.nspace) continue;
      add_derived_ranks(job);
      w.byte_object(encode_openpmix_job(job, buffer_of(st), skipped));
    }
  send_openpmix_message(self, tag, w.bytes());
}

// The handshake (its header in the client's byte order, then NUL-ended
// strings and big-endian 32-bit numbers): the security module, the
// credential (ignored: the kernel names the peer), the process type, its
// namespace and rank, its version, its data format, buffer type and store.
void on_openpmix_handshake(self_ptr self, const std::string& frame) {
  auto& st = self->state;
  std::size_t pos = 16;
  bool ok = true;
  auto text = [&](std::string& out) {
    const auto nul = frame.find('\0', pos);
    if (!ok || nul == std::string::npos) return void(ok = false);
    out.assign(frame, pos, nul - pos);
    pos = nul + 1;
  };
  auto u32 = [&](std::uint32_t& out) {
    if (!ok || pos + 4 > frame.size()) return void(ok = false);
    out = openpmix::get_be32(frame.data() + pos);
    pos += 4;
  };
  auto u8 = [&](std::uint8_t& out) {
    if (!ok || pos >= frame.size()) return void(ok = false);
    out = static_cast<std::uint8_t>(frame[pos++]);
  };
  std::string security, nspace, version, format, store;
  std::uint32_t cred_len = 0, rank = 0, claimed = 0;
  std::uint8_t kind = 0, buffer = 0;
  text(security);
  u32(cred_len);
  if (ok && cred_len <= frame.size() - pos) pos += cred_len; else ok = false;
  u8(kind);
  // Its identity: a client's namespace and rank; a tool's or launcher's
  // user and group (claims: the kernel's are used), then, unless it needs
  // one assigned (3, 6) or is of the old kinds (1, 2), the identity it has.
  // 10 is OpenPMIx 5's scheduler with an identity, served as a tool.
  if (ok && kind > 10) ok = false;
  if (ok && kind != 0) {
    u32(claimed);
    u32(claimed);
  }
  const bool has_id = kind == 0 || kind == 4 || kind == 5 || kind == 7 || kind == 8 || kind == 9 || kind == 10;
  if (has_id) {
    text(nspace);
    u32(rank);
  }
  text(version);
  text(format);
  u8(buffer);
  text(store);
  if (!ok) return protocol_error(self, "a malformed OpenPMIx handshake");
  // Then a tool's directives (a SIZE and INFOs, in its buffer type), and
  // one byte more its header counts.
  info_list directives;
  if (kind != 0 && frame.size() > pos + 1 && (buffer == 1 || buffer == 2)) {
    openpmix::reader blob{std::string_view{frame}.substr(pos, frame.size() - pos - 1),
                          buffer == 2 ? openpmix::buffer_type::fully_desc : openpmix::buffer_type::non_desc};
    std::uint64_t n = 0;
    if (!blob.size(n) || (n > 0 && !blob.infos(directives)))
      return protocol_error(self, "a malformed OpenPMIx tool handshake: " + blob.error());
  }
  if (format != "v41" || (buffer != 1 && buffer != 2) || store.find("hash") == std::string::npos) {
    log::warning("peer", "a process linked with OpenPMIx ", version, " as ", nspace, ".", rank,
                 " asks for data format ", format, " and store ", store,
                 ": only v41 and hash are served; closing the connection");
    return st.conn->shutdown();
  }
  st.openpmix_buffer = buffer;
  st.openpmix_kind = kind;
  st.openpmix_major = static_cast<std::uint32_t>(std::strtoul(version.c_str(), nullptr, 10));
  if (kind == 0)
    log::info("peer", "a process linked with OpenPMIx ", version, " connects as ", nspace, ".", rank, " (",
              buffer == 1 ? "NON_DESC" : "FULLY_DESC", " buffers)");
  else
    log::info("peer", "a tool linked with OpenPMIx ", version, " connects (type ", int{kind}, has_id ? ", as " : "",
              nspace, has_id ? "." + std::to_string(rank) : std::string{}, ")");
  wire::Envelope e;
  e.set_id(openpmix_handshake);
  auto* c = e.mutable_connect();
  c->set_protocol_version(protocol::wire_version);
  c->set_role(kind == 0 ? wire::ROLE_CLIENT : wire::ROLE_TOOL);
  if (has_id) {
    c->mutable_proc()->set_nspace(nspace);
    c->mutable_proc()->set_rank(rank);
  } else {
    c->mutable_proc()->set_rank(0);
  }
  c->set_library_version("OpenPMIx " + version);
  protocol::to_wire(directives, c->mutable_info());
  dispatch(self, e);
}

void on_openpmix_frame(self_ptr self, const std::string& frame) {
  auto& st = self->state;
  if (st.state == peer_state::phase::handshake) return on_openpmix_handshake(self, frame);
  if (frame.size() < 16) return protocol_error(self, "a short OpenPMIx frame");
  const std::uint32_t tag = openpmix::get_be32(frame.data() + 4);
  const std::string_view payload{frame.data() + 16, frame.size() - 16};
  openpmix::reader r{payload, buffer_of(st)};
  std::uint8_t cmd = 0;
  if (!r.command(cmd)) return protocol_error(self, "an OpenPMIx request without a command: " + r.error());
  if (log::enabled(log::level::debug))  // the name is built only when it is printed
    log::debug("peer", to_string(st.proc), " (linked with OpenPMIx): command ", int{cmd}, ", tag ", tag);
  wire::Envelope e;
  e.set_id(tag);
  std::string error;
  auto bad = [&](const char* what) {
    protocol_error(self, std::string{"a malformed OpenPMIx "} + what + ": " + r.error());
  };
  switch (cmd) {
    case 0:  // PMIX_REQ_CMD
      return send_openpmix_job(self, tag);
    case 1: {  // PMIX_ABORT_CMD: status, message, procs
      std::int32_t status = 0;
      std::string message;
      std::uint64_t n = 0;
      std::vector<proc_id> procs;
      if (!r.status(status) || !r.string(message) || !r.size(n) || (n > 0 && !r.procs(procs))) return bad("abort");
      auto* a = e.mutable_abort();
      a->set_status(status);
      a->set_message(message);
      for (const auto& p : procs) protocol::to_wire(p, a->add_procs());
      return dispatch(self, e);
    }
    case 2: {  // PMIX_COMMIT_CMD: (scope, buffer of key/values) pairs
      // A key in both the local and the remote buffer was put GLOBAL.
      std::map<std::string, std::pair<std::uint32_t, value>> items;
      while (!r.at_end()) {
        std::uint8_t scope = 0;
        std::string bytes;
        if (!r.scope(scope) || !r.buffer(bytes)) return bad("commit");
        openpmix::reader kvs{bytes, buffer_of(st)};
        while (!kvs.at_end()) {
          std::string key;
          value v;
          if (!kvs.kval(key, v)) return protocol_error(self, "a malformed OpenPMIx commit: " + kvs.error());
          auto& item = items[key];
          item.first |= scope;
          item.second = std::move(v);
        }
      }
      auto* c = e.mutable_commit();
      for (auto& [key, item] : items) {
        auto* d = c->add_data();
        d->set_scope(item.first);
        protocol::to_wire(pmix::info{key, std::move(item.second), 0}, d->mutable_info());
      }
      dispatch(self, e);
      // Ours has no answer; OpenPMIx's client waits for one.
      if (st.conn && !st.conn->shut()) send_openpmix_status(self, tag, PMIX_SUCCESS);
      return;
    }
    case 3: {  // PMIX_FENCENB_CMD: procs, directives
      std::uint64_t n = 0, ninfo = 0;
      std::vector<proc_id> procs;
      info_list info;
      if (!r.size(n) || (n > 0 && !r.procs(procs)) || !r.size(ninfo) || (ninfo > 0 && !r.infos(info)))
        return bad("fence");
      auto* f = e.mutable_fence();
      for (const auto& p : procs) protocol::to_wire(p, f->add_procs());
      const auto* collect = find(info, PMIX_COLLECT_DATA);
      f->set_collect_data(collect != nullptr && collect->val.truthy());
      protocol::to_wire(info, f->mutable_info());
      return dispatch(self, e);
    }
    case 4: {  // PMIX_GETNB_CMD: namespace, rank, directives, key
      std::string nspace, key;
      rank_t rank = 0;
      std::uint64_t ninfo = 0;
      info_list info;
      if (!r.string(nspace) || !r.rank(rank) || !r.size(ninfo) || (ninfo > 0 && !r.infos(info))) return bad("get");
      if (!r.at_end() && !r.string(key)) return bad("get");
      if (nspace == st.proc.nspace && rank != rank_wildcard && key.rfind("pmix.", 0) == 0)
        if (const auto* known = st.rare_if() ? find(st.rare_if()->job_level(), key) : nullptr) {
          openpmix::writer one{buffer_of(st)};
          if (one.proc(proc_id{nspace, rank}).try_kval(key, known->val)) {
            openpmix::writer w{buffer_of(st)};
            w.status(PMIX_SUCCESS).byte_object(one.bytes());
            return send_openpmix_message(self, tag, w.bytes());
          }
        }
      auto* g = e.mutable_get();
      protocol::to_wire(proc_id{nspace, rank}, g->mutable_proc());
      g->set_key(key);
      protocol::to_wire(info, g->mutable_info());
      return dispatch(self, e);
    }
    case 5:  // PMIX_FINALIZE_CMD
      e.mutable_finalize();
      return dispatch(self, e);
    case 10:    // PMIX_CONNECTNB_CMD and
    case 11: {  // PMIX_DISCONNECTNB_CMD: procs, directives
      std::uint64_t n = 0, ninfo = 0;
      std::vector<proc_id> procs;
      info_list info;
      if (!r.size(n) || (n > 0 && !r.procs(procs)) || !r.size(ninfo) || (ninfo > 0 && !r.infos(info)))
        return bad("connect");
      auto* c = e.mutable_connect_procs();
      c->set_disconnect(cmd == 11);
      for (const auto& p : procs) protocol::to_wire(p, c->add_procs());
      protocol::to_wire(info, c->mutable_info());
      return dispatch(self, e);
    }
    case 12: {  // PMIX_NOTIFY_CMD: code, range, directives (the source is the sender)
      std::int32_t code = 0;
      std::uint8_t range = 0;
      std::uint64_t ninfo = 0;
      info_list info;
      if (!r.status(code) || !r.range(range) || !r.size(ninfo) || (ninfo > 0 && !r.infos(info))) return bad("notify");
      auto* n = e.mutable_notify();
      n->set_status(code);
      n->set_range(range);
      protocol::to_wire(info, n->mutable_info());
      return dispatch(self, e);
    }
    case 6: {  // PMIX_PUBLISHNB_CMD: the user it claims (ignored: the kernel's
               // is the one the host hears), directives with the data
      std::uint32_t claimed_uid = 0;
      std::uint64_t ninfo = 0;
      info_list info;
      if (!r.uint32(claimed_uid) || !r.size(ninfo) || (ninfo > 0 && !r.infos(info))) return bad("publish");
      protocol::to_wire(info, e.mutable_publish()->mutable_info());
      return dispatch(self, e);
    }
    case 7:    // PMIX_LOOKUPNB_CMD and
    case 8: {  // PMIX_UNPUBLISHNB_CMD: the user, the keys one pack each, directives
      std::uint32_t claimed_uid = 0;
      std::uint64_t nkeys = 0, ninfo = 0;
      if (!r.uint32(claimed_uid) || !r.size(nkeys)) return bad("lookup");
      auto* k = cmd == 7 ? e.mutable_lookup() : e.mutable_unpublish();
      for (std::uint64_t i = 0; i < nkeys; ++i) {
        std::string key;
        if (!r.string(key)) return bad("lookup");
        k->add_keys(key);
      }
      info_list info;
      if (!r.size(ninfo) || (ninfo > 0 && !r.infos(info))) return bad("lookup");
      protocol::to_wire(info, k->mutable_info());
      return dispatch(self, e);
    }
    case 15: {  // PMIX_QUERY_CMD
      std::uint64_t n = 0;
      std::vector<std::pair<std::vector<std::string>, info_list>> queries;
      if (!r.size(n) || (n > 0 && !r.queries(queries))) return bad("query");
      auto* q = e.mutable_query();
      for (const auto& [keys, qualifiers] : queries) {
        auto* one = q->add_queries();
        for (const auto& key : keys) one->add_keys(key);
        protocol::to_wire(qualifiers, one->mutable_qualifiers());
      }
      return dispatch(self, e);
    }
    case 16: {  // PMIX_LOG_CMD: a time stamp, the data, the directives
      std::uint64_t stamp = 0, ndata = 0, ndirs = 0;
      info_list data, dirs;
      if (!r.time(stamp) || !r.size(ndata) || (ndata > 0 && !r.infos(data)) || !r.size(ndirs) ||
          (ndirs > 0 && !r.infos(dirs)))
        return bad("log");
      auto* l = e.mutable_log();
      protocol::to_wire(data, l->mutable_data());
      protocol::to_wire(dirs, l->mutable_directives());
      return dispatch(self, e);
    }
    case 9: {  // PMIX_SPAWNNB_CMD: the job's directives, the applications
      std::uint64_t ninfo = 0, napps = 0;
      info_list job_info;
      std::vector<app> apps;
      if (!r.size(ninfo) || (ninfo > 0 && !r.infos(job_info)) || !r.size(napps) || (napps > 0 && !r.apps(apps)))
        return bad("spawn");
      return start_spawn(self, tag, job_info, apps);
    }
    case 17: {  // PMIX_ALLOC_CMD: the directive, the request
      std::uint8_t directive = 0;
      std::uint64_t ninfo = 0;
      info_list info;
      if (!r.alloc_directive(directive) || !r.size(ninfo) || (ninfo > 0 && !r.infos(info))) return bad("allocation");
      auto* h = e.mutable_host();
      h->set_call(wire::HOST_ALLOCATE);
      h->set_code(directive);
      protocol::to_wire(info, h->mutable_info());
      return dispatch(self, e);
    }
    case 18: {  // PMIX_JOB_CONTROL_CMD: targets, directives
      std::uint64_t n = 0, ninfo = 0;
      std::vector<proc_id> procs;
      info_list info;
      if (!r.size(n) || (n > 0 && !r.procs(procs)) || !r.size(ninfo) || (ninfo > 0 && !r.infos(info)))
        return bad("job control");
      auto* j = e.mutable_job_control();
      for (const auto& p : procs) protocol::to_wire(p, j->add_targets());
      protocol::to_wire(info, j->mutable_directives());
      return dispatch(self, e);
    }
    case 19: {  // PMIX_MONITOR_CMD: what to monitor, the error to raise, directives
      info_list what, info;
      std::int32_t code = 0;
      std::uint64_t ninfo = 0;
      if (!r.infos(what) || what.size() != 1 || !r.status(code) || !r.size(ninfo) || (ninfo > 0 && !r.infos(info)))
        return bad("monitor");
      auto* h = e.mutable_host();
      h->set_call(wire::HOST_MONITOR);
      h->set_code(code);
      protocol::to_wire(what, h->mutable_info());
      protocol::to_wire(info, h->mutable_directives());
      return dispatch(self, e);
    }
    case 20:    // PMIX_GET_CREDENTIAL_CMD: directives
    case 21: {  // PMIX_VALIDATE_CRED_CMD: the credential, directives
      std::string credential;
      std::uint64_t ninfo = 0;
      info_list info;
      if ((cmd == 21 && !r.byte_object(credential)) || !r.size(ninfo) || (ninfo > 0 && !r.infos(info)))
        return bad("credential request");
      auto* h = e.mutable_host();
      h->set_call(cmd == 20 ? wire::HOST_GET_CREDENTIAL : wire::HOST_VALIDATE_CREDENTIAL);
      if (cmd == 21) h->set_data(credential);
      protocol::to_wire(info, h->mutable_directives());
      if (cmd == 20) st.rare().openpmix_forms[tag] = {cmd, 0};
      return dispatch(self, e);
    }
    case 22:    // PMIX_IOF_PULL_CMD: sources, directives, channels, the handler's id
    case 23: {  // PMIX_IOF_PUSH_CMD: targets, directives, the bytes (none: end of input)
      std::uint64_t n = 0, ninfo = 0, handler = 0;
      std::vector<proc_id> procs;
      info_list info;
      std::uint16_t channels = 0;
      std::string bytes;
      if (!r.size(n) || (n > 0 && !r.procs(procs)) || !r.size(ninfo) || (ninfo > 0 && !r.infos(info)))
        return bad("IOF request");
      auto* h = e.mutable_host();
      if (cmd == 22) {
        if (!r.iof_channel(channels) || !r.size(handler)) return bad("IOF pull");
        h->set_call(wire::HOST_IOF_PULL);
        h->set_code(channels);
        h->set_ref(handler);
        st.rare().openpmix_forms[tag] = {cmd, handler};
      } else {
        h->set_call(wire::HOST_IOF_PUSH);
        if (!r.at_end()) {
          if (!r.byte_object(bytes)) return bad("IOF push");
          h->set_data(bytes);
          h->set_has_data(true);
        }
      }
      for (const auto& p : procs) protocol::to_wire(p, h->add_procs());
      protocol::to_wire(info, h->mutable_directives());
      return dispatch(self, e);
    }
    case 29: {  // PMIX_IOF_DEREG_CMD: directives, the pull's id
      std::uint64_t ninfo = 0, ref = 0;
      info_list info;
      if (!r.size(ninfo) || (ninfo > 0 && !r.infos(info)) || !r.size(ref)) return bad("IOF deregistration");
      auto* h = e.mutable_host();
      h->set_call(wire::HOST_IOF_DEREGISTER);
      h->set_ref(ref);
      protocol::to_wire(info, h->mutable_directives());
      return dispatch(self, e);
    }
    case 24:    // PMIX_GROUP_CONSTRUCT_CMD: name, members, directives
    case 28: {  // PMIX_GROUP_DESTRUCT_CMD: name, (5.x: members,) directives
      std::string name;
      std::uint64_t n = 0, ninfo = 0;
      std::vector<proc_id> procs;
      info_list info;
      const bool members = cmd == 24 || st.openpmix_major >= 5;
      if (!r.string(name) || (members && (!r.size(n) || (n > 0 && !r.procs(procs)))) || !r.size(ninfo) ||
          (ninfo > 0 && !r.infos(info)))
        return bad("group request");
      if (cmd == 28) procs.clear();  // a destruct's members are the group's, which the server keeps
      auto* g = e.mutable_group();
      g->set_op(cmd == 24 ? wire::GROUP_CONSTRUCT : wire::GROUP_DESTRUCT);
      g->set_name(name);
      for (const auto& p : procs) protocol::to_wire(p, g->add_procs());
      protocol::to_wire(info, g->mutable_directives());
      st.rare().openpmix_forms[tag] = {cmd, 0};
      return dispatch(self, e);
    }
    case 30:    // PMIX_FABRIC_REGISTER_CMD: directives
    case 31: {  // PMIX_FABRIC_UPDATE_CMD: the fabric's index
      std::uint64_t ninfo = 0, index = 0;
      info_list info;
      if (cmd == 30 ? (!r.size(ninfo) || (ninfo > 0 && !r.infos(info))) : !r.size(index)) return bad("fabric request");
      if (cmd == 31) info.push_back({PMIX_FABRIC_INDEX, value::unsigned_(PMIX_SIZE, index), 0});
      auto* h = e.mutable_host();
      h->set_call(wire::HOST_FABRIC);
      h->set_code(cmd == 30 ? PMIX_FABRIC_REQUEST_INFO : PMIX_FABRIC_UPDATE_INFO);
      protocol::to_wire(info, h->mutable_directives());
      return dispatch(self, e);
    }
    case 13:  // PMIX_REGEVENTS_CMD: every event in range reaches a client (its
              // own registry picks the handlers), so there is nothing to keep
      return send_openpmix_status(self, tag, PMIX_SUCCESS);
    case 14:  // PMIX_DEREGEVENTS_CMD: no answer is waited for
      return;
    default:  // group join, invite and leave, device distances, 5.x's resolve commands, unknown ones
      log::warning("peer", to_string(st.proc), " (linked with OpenPMIx): command ", int{cmd},
                   " is not served (docs/wire-format.md, \"OpenPMIx's protocol\"): PMIX_ERR_NOT_SUPPORTED");
      return send_openpmix_status(self, tag, PMIX_ERR_NOT_SUPPORTED);
  }
}

// A get's answer: the status, then byte objects each holding a process
// (the rank, or the namespace's wildcard for its job-level data) and its
// key/values, which the client's store takes as they are.
void send_openpmix_get_reply(self_ptr self, std::uint32_t tag, const wire::GetReply& g) {
  auto& st = self->state;
  if (g.status() != PMIX_SUCCESS) return send_openpmix_status(self, tag, g.status());
  const auto type = buffer_of(st);
  openpmix::writer w{type};
  w.status(PMIX_SUCCESS);
  std::size_t skipped = 0;
  std::string error;
  auto add = [&](const proc_id& p, const auto& infos, auto info_of) {
    openpmix::writer one{type};
    one.proc(p);
    for (const auto& item : infos) {
      pmix::info i;
      if (!protocol::from_wire(info_of(item), i, &error) || !one.try_kval(i.key, i.val)) ++skipped;
    }
    w.byte_object(one.bytes());
  };
  if (!g.job().empty()) {
    wire::JobInfo job;
    if (job.ParseFromString(g.job())) {
      add_derived_ranks(job);
      add(proc_id{job.nspace(), rank_wildcard}, job.info(), [](const wire::Info& i) -> const wire::Info& { return i; });
      for (const auto& r : job.ranks())
        add(proc_id{job.nspace(), r.rank()}, r.info(), [](const wire::Info& i) -> const wire::Info& { return i; });
    }
  }
  if (g.has_data())
    add(protocol::from_wire(g.data().proc()), g.data().data(),
        [](const wire::ScopedInfo& s) -> const wire::Info& { return s.info(); });
  if (skipped > 0)
    log::debug("peer", to_string(st.proc), ": ", skipped, " values have no form in OpenPMIx's protocol (left out)");
  send_openpmix_message(self, tag, w.bytes());
}

// The infos OpenPMIx's format carries (the others are left out).
info_list carried_by_openpmix(const peer_state& st, info_list in);

// The same from our wire form; false if it does not read.
bool carried_by_openpmix(const peer_state& st, const google::protobuf::RepeatedPtrField<wire::Info>& in,
                         info_list& out) {
  info_list info;
  std::string error;
  if (!protocol::from_wire(in, info, &error)) return false;
  out = carried_by_openpmix(st, std::move(info));
  return true;
}

info_list carried_by_openpmix(const peer_state& st, info_list in) {
  info_list out;
  for (auto& i : in) {
    openpmix::writer probe{buffer_of(st)};
    if (probe.try_kval(i.key, i.val)) out.push_back(std::move(i));
  }
  return out;
}

// The Envelope in one of our frames (its length, then the message).
bool envelope_of(const std::string& frame, wire::Envelope& e) {
  return frame.size() >= 4 && e.ParseFromArray(frame.data() + 4, static_cast<int>(frame.size() - 4));
}

// An event for the process (our frame: length, then an Envelope holding an
// Event), in OpenPMIx's form on tag 0: the command (notify), the code, the
// source, the directives and the range.
void send_openpmix_event(self_ptr self, const std::string& frame) {
  auto& st = self->state;
  wire::Envelope e;
  if (!envelope_of(frame, e) || !e.has_event()) return;
  const auto& ev = e.event();
  info_list carried;
  if (!carried_by_openpmix(st, ev.info(), carried)) return;
  openpmix::writer w{buffer_of(st)};
  w.command(12).status(ev.status()).proc(protocol::from_wire(ev.source())).size(carried.size());
  if (!carried.empty()) w.infos(carried);
  w.range(static_cast<std::uint8_t>(ev.range()));
  send_openpmix_message(self, 0, w.bytes());
}

// PMIX_QUERY_ATTRIBUTE_SUPPORT's answers, which ours give as text (each
// function's attribute names joined by commas; our library makes them
// pmix_regattr_t), taken out of `results` in OpenPMIx's form: a list of
// functions as an info of its own (keyed PMIX_*_FUNCTIONS), each function's
// attributes as REGATTRs (name, key, type; a description line, empty: its
// tools print every line and none is kept here).
std::vector<openpmix::function_attributes> attribute_tables(info_list& results) {
  std::vector<openpmix::function_attributes> table;
  info_list kept;
  for (auto& i : results) {
    const auto* a = i.val.as_array();
    if (i.key != PMIX_QUERY_ATTRIBUTE_SUPPORT || a == nullptr || a->type != PMIX_INFO) {
      kept.push_back(std::move(i));
      continue;
    }
    for (const auto& element : a->elements) {
      const auto* entry = element.as_info();
      const auto* text = entry != nullptr ? entry->val.as_string() : nullptr;
      if (text == nullptr) continue;
      if (entry->key == PMIX_CLIENT_FUNCTIONS || entry->key == PMIX_SERVER_FUNCTIONS ||
          entry->key == PMIX_TOOL_FUNCTIONS || entry->key == PMIX_HOST_FUNCTIONS) {
        kept.push_back({entry->key, value::string(*text), 0});
        continue;
      }
      openpmix::function_attributes f{entry->key, {}};
      std::size_t start = 0;
      while (start <= text->size()) {
        const auto comma = std::min(text->find(',', start), text->size());
        const std::string name = text->substr(start, comma - start);
        start = comma + 1;
        if (name.empty()) continue;
        const char* key = api::attribute_key(name);
        f.attributes.push_back({name, key != nullptr ? key : name, api::attribute_type(name), {""}});
      }
      if (f.attributes.empty()) f.attributes.push_back({"NONE", "", PMIX_UNDEF, {""}});
      table.push_back(std::move(f));
    }
  }
  results = std::move(kept);
  return table;
}

// An answer carrying results: the status, then (if it succeeded) in the
// form the request's command reads: a credential first (GET_CREDENTIAL),
// the pull's id alone (IOF_PULL), the group's context id alone
// (GROUP_CONSTRUCT), nothing (GROUP_DESTRUCT), else the results (a count
// and INFOs).
void send_openpmix_info_reply(self_ptr self, std::uint32_t tag, const wire::InfoReply& ir) {
  auto& st = self->state;
  std::uint8_t cmd = 0;
  std::uint64_t ref = 0;
  if (auto* r = st.rare_if()) {
    if (auto it = r->openpmix_forms.find(tag); it != r->openpmix_forms.end()) {
      std::tie(cmd, ref) = it->second;
      r->openpmix_forms.erase(it);
    }
  }
  info_list results;
  std::string error;
  if (ir.status() != PMIX_SUCCESS || !protocol::from_wire(ir.info(), results, &error))
    return send_openpmix_status(self, tag, ir.status() != PMIX_SUCCESS ? ir.status() : PMIX_ERR_UNPACK_FAILURE);
  openpmix::writer w{buffer_of(st)};
  w.status(PMIX_SUCCESS);
  if (cmd == 22) {
    w.size(ref);
  } else if (cmd == 24) {
    // 5.x first lists the members; then the context id, SIZE_MAX for none
    // (4.2.2's client returns one whatever follows: absent, it held
    // whatever its memory had).
    if (st.openpmix_major >= 5) {
      std::vector<proc_id> members;
      if (const auto* m = find(results, PMIX_GROUP_MEMBERSHIP); m != nullptr && m->val.as_array() != nullptr)
        for (const auto& e : m->val.as_array()->elements)
          if (const auto* p = e.as_proc()) members.push_back(*p);
      w.size(members.size());
      if (!members.empty()) w.procs(members);
    }
    const auto* id = find(results, PMIX_GROUP_CONTEXT_ID);
    w.size(id != nullptr && id->val.as_uint() ? *id->val.as_uint() : SIZE_MAX);
  } else if (cmd != 28) {
    if (cmd == 20) w.byte_object(ir.data());
    const auto table = attribute_tables(results);
    const auto carried = carried_by_openpmix(st, std::move(results));
    w.size(carried.size() + table.size());
    if (!carried.empty() || !table.empty()) w.infos(carried, PMIX_QUERY_ATTRIBUTE_SUPPORT, table);
  }
  send_openpmix_message(self, tag, w.bytes());
}

// Output for the process (our frame: length, then an Envelope holding an
// IofData), on tag 2: the source, the channel, the id of the process's
// handler (its pull's), the directives, the bytes.
void send_openpmix_iof(self_ptr self, const std::string& frame) {
  auto& st = self->state;
  wire::Envelope e;
  if (!envelope_of(frame, e) || !e.has_iof()) return;
  const auto& d = e.iof();
  info_list carried;
  if (!carried_by_openpmix(st, d.info(), carried)) return;
  openpmix::writer w{buffer_of(st)};
  w.proc(protocol::from_wire(d.source()))
      .iof_channel(static_cast<std::uint16_t>(d.channel()))
      .size(d.ref())
      .size(carried.size());
  if (!carried.empty()) w.infos(carried);
  w.byte_object(d.data());
  send_openpmix_message(self, 2, w.bytes());
}

// Our reply to a request of a process linked with OpenPMIx, in its form.
void send_openpmix_reply(self_ptr self, const wire::Envelope& e) {
  auto& st = self->state;
  switch (e.body_case()) {
    case wire::Envelope::kConnectReply: {
      const auto& r = e.connect_reply();
      if (r.status() != PMIX_SUCCESS) {
        // OpenPMIx's clients take any answer as success: the refusal is
        // the connection's end, as OpenPMIx's servers do it.
        st.conn->shutdown();
        return;
      }
      if (!st.rare().openpmix_form) st.rare().openpmix_job = std::make_shared<const std::string>(r.job());
      std::string ack;
      put_be32(ack, 0);
      if (st.openpmix_kind == 0) {
        put_be32(ack, static_cast<std::uint32_t>(st.conn->id()));
      } else {
        // A tool's: the identity it was given (if it asked for one), the
        // server's, then the security check's status.
        auto put_proc = [&](const wire::Proc& p) {
          std::string name = p.nspace().substr(0, PMIX_MAX_NSLEN);
          name.resize(PMIX_MAX_NSLEN + 1, '\0');
          ack += name;
          put_be32(ack, p.rank());
        };
        if (st.openpmix_kind == 3 || st.openpmix_kind == 6) put_proc(r.assigned());
        put_proc(r.server());
        put_be32(ack, 0);
      }
      if (!st.conn->send(ack)) log::debug("peer", to_string(st.proc), ": write failed, connection broken");
      return;
    }
    case wire::Envelope::kStatusReply:
      if (auto* r = st.rare_if()) r->openpmix_forms.erase(static_cast<std::uint32_t>(e.id()));
      return send_openpmix_status(self, static_cast<std::uint32_t>(e.id()), e.status_reply().status());
    case wire::Envelope::kInfoReply:
      return send_openpmix_info_reply(self, static_cast<std::uint32_t>(e.id()), e.info_reply());
    case wire::Envelope::kLookupReply: {
      const auto& lr = e.lookup_reply();
      if (lr.status() != PMIX_SUCCESS)
        return send_openpmix_status(self, static_cast<std::uint32_t>(e.id()), lr.status());
      std::vector<std::tuple<proc_id, std::string, value>> data;
      std::string error;
      for (const auto& d : lr.data()) {
        value v;
        if (!protocol::from_wire(d.value(), v, &error)) continue;
        data.emplace_back(protocol::from_wire(d.proc()), d.key(), std::move(v));
      }
      openpmix::writer w{buffer_of(st)};
      w.status(PMIX_SUCCESS).size(data.size());
      if (!data.empty() && !w.pdata(data)) return send_openpmix_status(self, static_cast<std::uint32_t>(e.id()), PMIX_ERR_NOT_SUPPORTED);
      return send_openpmix_message(self, static_cast<std::uint32_t>(e.id()), w.bytes());
    }
    case wire::Envelope::kGetReply:
      return send_openpmix_get_reply(self, static_cast<std::uint32_t>(e.id()), e.get_reply());
    case wire::Envelope::kSpawnReply: {
      // The status and the new namespace; its job data the client reads
      // with its first get there (OpenPMIx's servers add it here).
      openpmix::writer w{buffer_of(st)};
      w.status(e.spawn_reply().status());
      if (!e.spawn_reply().nspace().empty()) w.string(e.spawn_reply().nspace());
      return send_openpmix_message(self, static_cast<std::uint32_t>(e.id()), w.bytes());
    }
    default:
      if (e.id() != 0) send_openpmix_status(self, static_cast<std::uint32_t>(e.id()), PMIX_ERR_NOT_SUPPORTED);
      return;  // unprompted messages have no OpenPMIx form yet
  }
}

}  // namespace

namespace peer {
void send_openpmix(self_ptr self, const wire::Envelope& e) { send_openpmix_reply(self, e); }
void deliver_openpmix_iof(self_ptr self, const std::string& frame) { send_openpmix_iof(self, frame); }
}  // namespace peer

namespace {

// Starts the epilog (once), off the actors' threads; epilog_done_msg tells
// when it is done.
void start_cleanup(self_ptr self) {
  auto& st = self->state;
  if (st.cleanup_state != peer_state::cleanup_phase::idle) return;
  if (!st.rare_if() || st.rare_if()->cleanup.empty()) {
    st.cleanup_state = peer_state::cleanup_phase::done;
    return;
  }
  st.cleanup_state = peer_state::cleanup_phase::running;
  run_epilog(*st.ctx, std::exchange(st.rare().cleanup, epilog{}), self->address());
}

// A request's PMIX_TIMEOUT passed before its answer: the client hears
// PMIX_ERR_TIMEOUT, and a get is cancelled wherever it waits (the answer,
// should it come, is dropped).
void on_request_timeout(self_ptr self, std::uint8_t kind, std::uint64_t id) {
  auto& st = self->state;
  switch (static_cast<timed>(kind)) {
    case timed::get: {
      auto it = st.gets_out.find(id);
      if (it == st.gets_out.end()) return;
      const auto target = it->second.target;
      finish_request(self, st.gets_out, id);
      log::warning("peer", to_string(st.proc), ": PMIx_Get of ", to_string(target), " timed out (PMIX_TIMEOUT)");
      send_get_status(self, id, PMIX_ERR_TIMEOUT);
      self->send(st.server, get_cancel_msg{self->address(), id, target});
      return;
    }
    case timed::lookup:
      if (!st.rare_if() || !finish_request(self, st.rare_if()->lookups_out, id)) return;
      log::warning("peer", to_string(st.proc), ": PMIx_Lookup timed out (PMIX_TIMEOUT)");
      return send_lookup_reply(self, id, PMIX_ERR_TIMEOUT, {});
    case timed::query:
      if (!st.rare_if() || !finish_request(self, st.rare_if()->queries_out, id)) return;
      log::warning("peer", to_string(st.proc), ": PMIx_Query_info timed out (PMIX_TIMEOUT)");
      return send_info_reply(self, id, PMIX_ERR_TIMEOUT, {});
    case timed::publish:
    case timed::unpublish: {
      // `id` is the up-call's: still waiting for the host?
      auto* rare = st.rare_if();
      if (rare == nullptr) return;
      auto it = rare->upcalls.find(id);
      if (it == rare->upcalls.end()) return;
      const auto request = it->second;
      rare->upcalls.erase(it);
      log::warning("peer", to_string(st.proc), ": ",
                   static_cast<timed>(kind) == timed::publish ? "PMIx_Publish" : "PMIx_Unpublish",
                   " timed out (PMIX_TIMEOUT): the host did not answer");
      return send_status(self, request, PMIX_ERR_TIMEOUT);
    }
  }
}

// The connection is gone: nothing it asked for stays anywhere. Its gets are
// cancelled where they wait; the host's late answers to its lookups and
// queries are dropped.
void drop_requests(self_ptr self) {
  auto& st = self->state;
  for (const auto& [id, get] : st.gets_out) self->send(st.server, get_cancel_msg{self->address(), id, get.target});
  while (!st.gets_out.empty()) finish_request(self, st.gets_out, st.gets_out.begin()->first);
  if (auto* r = st.rare_if()) {
    while (!r->lookups_out.empty()) finish_request(self, r->lookups_out, r->lookups_out.begin()->first);
    while (!r->queries_out.empty()) finish_request(self, r->queries_out, r->queries_out.begin()->first);
  }
}

void on_closed(self_ptr self) {
  auto& st = self->state;
  if (st.state == peer_state::phase::tombstone) return;
  const bool registered = st.state == peer_state::phase::active ||
                          st.state == peer_state::phase::finalizing;
  if (st.ctx->faults && st.conn) st.ctx->faults->closed(st.conn->id());
  st.conn.reset();  // the spec's sd = -1: our end of the socket is closed
  if (!registered) {
    // The handshake never completed. If its request is still in flight the
    // reply handler finishes the departure; otherwise nothing refers to us.
    if (st.state == peer_state::phase::handshake || st.state == peer_state::phase::refused)
      self->quit();
    st.state = peer_state::phase::tombstone;
    return;
  }
  st.state = peer_state::phase::tombstone;
  if (auto* r = st.rare_if()) r->heartbeat.reset();  // nothing to watch any more
  drop_requests(self);
  if (st.iof_pulls > 0) self->send(st.server, iof_forget_msg{caf::actor_cast<caf::actor>(self)});
  // The process is gone (finalized or dead): its epilog runs now (spec 004).
  start_cleanup(self);
  answer_gets_of_departed(self);
  self->send(st.rank, peer_lost_msg{caf::actor_cast<caf::actor>(self), st.finalized});
}

// Freed by the rank (reclaimed, stranded, deregistered while still
// connected), or its rank actor failed: the socket is shut and the epilog
// runs; true when the peer is done (it has quit), false when it quits once
// the epilog is done (epilog_done_msg).
bool release(self_ptr self) {
  auto& st = self->state;
  // What the process had the server hold goes with it, as when its socket
  // closes (spec 004: deregistration restores the rank's sensors and prunes
  // its IOF registrations; the actor may outlive this while the epilog runs).
  if (auto* r = st.rare_if()) r->heartbeat.reset();
  if (st.iof_pulls > 0 && st.conn) self->send(st.server, iof_forget_msg{caf::actor_cast<caf::actor>(self)});
  start_cleanup(self);
  if (st.conn) st.conn->shutdown();
  if (st.ctx->faults && st.conn) st.ctx->faults->closed(st.conn->id());
  st.conn.reset();
  drop_requests(self);
  answer_waiting_gets(self, PMIX_ERR_NOT_FOUND);
  if (st.cleanup_state != peer_state::cleanup_phase::done) return false;
  self->quit();
  return true;
}

}  // namespace


namespace {

// The peer actor: its behavior is built once and shared by every peer
// actor (actors/shared_behavior.hpp); its handlers find their actor with
// current().
class peer_actor_impl final : public shared_behavior_actor<peer_state> {
 public:
  peer_actor_impl(caf::actor_config& cfg, std::shared_ptr<transport::connection> conn, caf::actor server,
                  context_ptr ctx)
      : shared_behavior_actor<peer_state>(cfg) {
    state.owner = conn->credentials().uid;
    state.cred = conn->credentials();
    state.openpmix = conn->openpmix();
    state.conn = std::move(conn);
    state.server = std::move(server);
    state.ctx = std::move(ctx);
  }

  caf::behavior make_behavior() override;
};

caf::stateful_actor<peer_state, lean_actor>* current() { return peer_actor_impl::current(); }

caf::behavior peer_behavior() {
  return caf::message_handler{
      [](transport::frame_atom, const std::string& payload) { on_frame(current(), payload); },
      [](transport::frames_atom, const transport::frames_msg& batch) {
        // Each frame as if it came in a message of its own.
        auto* self = current();
        for (const auto& payload : batch.frames) {
          if (self->quitting()) return;
          on_frame(self, payload);
        }
      },
      [](fault_replay_atom, const std::string& payload) { on_frame(current(), payload, true); },
      [](fault_flush_atom) {
        auto* self = current();
        auto& st = self->state;
        if (!st.holding) return;
        st.holding = false;
        on_frame(self, std::exchange(st.rare().held_frame, {}), true);
      },
      [](transport::closed_atom) { on_closed(current()); },
      [](transport::writable_atom) {
        auto* self = current();
        if (self->state.conn) self->state.conn->flush();
      },
      [](const upcall_result& r) {
        auto* self = current();
        auto& st = self->state;
        auto* rare = st.rare_if();
        if (rare == nullptr) return;
        auto it = rare->upcalls.find(r.id);
        if (it == rare->upcalls.end()) return;
        const auto id = it->second;
        rare->upcalls.erase(it);
        send_status(self, id, r.status);
      },
      [](const get_msg& msg) -> caf::result<get_result> {
        auto* self = current();
        auto& st = self->state;
        // What the client holds is needed now: it sends it and holds no
        // more (one round trip, the first time another process asks).
        if (st.hold == peer_state::hold_phase::allowed && st.state == peer_state::phase::active &&
            can_send(self)) {
          wire::Envelope end;
          end.mutable_commit_hold_end();
          send_envelope(self, end);
          st.hold = peer_state::hold_phase::ending;
        }
        const bool ending = st.hold == peer_state::hold_phase::ending;
        if ((st.has_committed && !ending) || st.state == peer_state::phase::tombstone || st.finalized) {
          const pmix_status_t status = st.has_committed ? PMIX_SUCCESS
                                       : st.finalized   ? PMIX_ERR_NOT_FOUND
                                                        : PMIX_ERR_PROC_TERM_WO_SYNC;
          return get_result{status, st.rank_data()};
        }
        auto rp = self->make_response_promise();
        st.waiting_gets.push_back(peer_state::waiting_get{msg.asker, msg.request, rp});
        return rp;
      },
      [](const deliver_event_msg& msg) {
        auto* self = current();
        auto& st = self->state;
        if (msg.skip == caf::actor_cast<caf::actor>(self) || !can_send(self)) return;
        // Spec 004: the finalized flag short-circuits every send path, also
        // while the socket is still open (Finalizing): dropped and counted.
        if (st.finalized) {
          st.ctx->dropped_sends.fetch_add(1, std::memory_order_relaxed);
          return;
        }
        if (st.state != peer_state::phase::active) return;
        if (st.openpmix) return send_openpmix_event(self, *msg.frame);
        if (!st.conn->send(*msg.frame))
          log::debug("peer", to_string(st.proc), ": write failed, event not delivered");
      },
      [](resume_push_atom, std::uint64_t id, std::string& request) {
        auto* self = current();
        wire::HostRequest req;
        if (!req.ParseFromString(request)) return send_info_reply(self, id, PMIX_ERR_UNPACK_FAILURE, {});
        peer::on_host_request(self, id, req);
      },
      [](job_control_done_atom, std::uint64_t id, pmix_status_t status, info_list& results) {
        auto* self = current();
        send_info_reply(self, id, status, results);
      },
      [](query_done_atom, std::uint64_t id, pmix_status_t status, info_list& results) {
        auto* self = current();
        auto* rare = self->state.rare_if();
        if (rare && finish_request(self, rare->queries_out, id)) send_info_reply(self, id, status, results);
      },
      [](request_timeout_atom, std::uint8_t kind, std::uint64_t id) { on_request_timeout(current(), kind, id); },
      [](const get_cancel_msg& msg) {
        auto* self = current();
        // The asker stopped waiting for a get that waits here.
        auto& w = self->state.waiting_gets;
        for (auto it = w.begin(); it != w.end();) {
          if (it->asker == msg.asker && (msg.request == 0 || it->request == msg.request)) {
            it->promise.deliver(get_result{PMIX_ERR_TIMEOUT, {}});
            it = w.erase(it);
          } else {
            ++it;
          }
        }
      },
      [](const lookup_done_msg& r) {
        auto* self = current();
        auto* rare = self->state.rare_if();
        if (rare && finish_request(self, rare->lookups_out, r.id)) send_lookup_reply(self, r.id, r.status, r.data);
      },
      [](const spawn_done_msg& r) {
        auto* self = current();
        auto& st = self->state;
        if (r.status == PMIX_SUCCESS && !r.nspace.empty()) self->send(st.server, spawned_msg{r.nspace, st.owner});
        send_spawn_reply(self, r.id, r.status, r.nspace);
      },
      [](const release_msg&) -> caf::result<bool> {
        auto* self = current();
        // Freed (reclaimed, stranded, or deregistered while still
        // connected): the epilog runs too, and the answer (which a
        // deregistration waits for) comes once it is done.
        if (release(self)) return true;
        auto rp = self->make_response_promise();
        self->state.rare().released.push_back(rp);
        return rp;
      },
      [](const epilog_done_msg&) {
        auto* self = current();
        auto& st = self->state;
        st.cleanup_state = peer_state::cleanup_phase::done;
        auto* rare = st.rare_if();
        if (rare == nullptr || rare->released.empty()) return;
        for (auto& rp : rare->released) rp.deliver(true);
        rare->released.clear();
        self->quit();
      },
      [](peer::host_done_atom, std::uint64_t id, pmix_status_t status, info_list& info, std::string& data) {
        auto* self = current();
        send_info_reply(self, id, status, info, data);
      },
      [](peer::beat_check_atom, std::uint64_t generation) { peer::check_heartbeat(current(), generation); },
      [](const deliver_iof_msg& msg) { peer::on_deliver_iof(current(), msg); },
      [](const fence_answer_msg& msg) { on_fence_answer(current(), msg); },
      [](const fence_board_msg& msg) {
        auto* self = current();
        auto& st = self->state;
        if (!st.conn || !st.conn->passes_descriptors()) return;
        wire::Envelope e;
        e.mutable_fence_board()->set_size(msg.file->size());
        send_envelope(self, e, msg.file);
        st.board_sent = true;
      },
  };
}

caf::behavior peer_actor_impl::make_behavior() {
  set_default_handler(caf::drop);
  // No link (a link is 80 bytes a client, in both actors' lists): at
  // finalize the server's exit takes its namespaces, whose ranks end with
  // it and tell their peers (the down message below, reason
  // user_shutdown), including peers whose socket is gone but which still
  // wait for something (an up-call's answer, a heartbeat check); a peer in
  // its handshake ends when the I/O thread closes its socket, one whose
  // connect is in flight when the server's answer fails or, when the answer
  // waits for the host (a tool's tool_connected), once nothing refers to it
  // (CAF 0.17 ends an actor nothing refers to: lifecycle_test, "finalize
  // ends a tool's connection whose tool_connected the host never
  // answered").
  // When it ends, its state's destructor shuts a failed peer's socket and
  // drops its held stdin pushes (peer_state::~peer_state).
  // Its rank actor failed (found by the fault plane, seed 7,
  // kill:rank:at=fence:rank=1): what the rank knew of this process is gone,
  // so the connection ends and the client learns it (lost connection).
  // Only its rank sends it one, from the rank state's destructor (the peer
  // monitors nothing): before the connect's answer named the rank, it is
  // noted for that answer (check_rank_failed).
  set_down_handler([this](caf::down_msg& dm) {
    auto& st = state;
    if (dm.reason == caf::exit_reason::normal) return;
    if (dm.reason == caf::exit_reason::user_shutdown) return quit(dm.reason);  // finalize
    if (!st.rank) {
      st.rank_failed = true;
      return;
    }
    if (dm.source != st.rank.address()) return;
    log::warning("peer", to_string(st.proc), ": its rank actor failed, closing the connection");
    release(this);
  });
  static const caf::behavior shared = peer_behavior();
  return shared;
}

}  // namespace

caf::actor spawn_peer_actor(caf::actor_system& system, std::shared_ptr<transport::connection> conn,
                            caf::actor server, context_ptr ctx) {
  return system.spawn<peer_actor_impl>(std::move(conn), std::move(server), std::move(ctx));
}

}  // namespace pmix::actors
