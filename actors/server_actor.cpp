#include "actors/server_actor.hpp"

#include <algorithm>
#include <caf/exit_reason.hpp>
#include <caf/system_messages.hpp>

#include "actors/epilog.hpp"
#include "actors/job_layout.hpp"
#include "actors/nspace_actor.hpp"
#include "actors/upcall.hpp"
#include "server/host_module.hpp"
#include <pmix.h>

#include "common/directives.hpp"
#include "common/supported.hpp"
#include "common/log.hpp"
#include "protocol/codec.hpp"
#include "protocol/messages.hpp"
#include "protocol/version.hpp"
#include "transport/shared_data.hpp"

namespace pmix::actors {

const char* server_state::name = "pmix.server";

namespace {
// A group collective's answer: an InfoReply with the status and the info
// the completion recorded (`data`: a serialized InfoReply without status).
std::string group_reply_body(pmix_status_t status, std::string_view data) {
  wire::InfoReply r;
  if (!data.empty()) r.ParseFromArray(data.data(), static_cast<int>(data.size()));
  r.set_status(status);
  return r.SerializeAsString();
}

// The same locality for every tracker book.
fence_book::locality_fn locality_of(server_state* st) {
  return [st](const std::string& ns) -> const nspace_locality* {
    auto it = st->nspaces.find(ns);
    return it == st->nspaces.end() ? nullptr : &it->second.locality;
  };
}
}  // namespace

server_state::server_state()
    : fences(locality_of(this)),
      connects(locality_of(this), protocol::connect_procs_reply_body),
      disconnects(locality_of(this), protocol::connect_procs_reply_body),
      group_constructs(locality_of(this), group_reply_body),
      group_destructs(locality_of(this), group_reply_body) {
  fences.set_boards([this](const std::string& ns) -> transport::fence_board* {
    auto it = nspaces.find(ns);
    return it == nspaces.end() ? nullptr : it->second.board.get();
  });
}

bool server_state::may_see(uid_t uid, const std::string& from, const std::string& nspace) const {
  // Root sees every job, as its processes can read any user's memory.
  if (uid == 0 || nspace == from) return true;
  if (uid == unknown_user) return false;  // over TCP: only its own namespace
  if (auto it = nspaces.find(nspace); it != nspaces.end()) {
    const auto& e = it->second;
    if (e.job_user || !e.users.empty()) return (e.job_user && *e.job_user == uid) || e.users.count(uid) != 0;
  }
  if (auto s = spawned_by.find(nspace); s != spawned_by.end()) return s->second == uid;
  // A namespace whose user this server does not know (none of its
  // processes registered here, no PMIX_USERID): its host's, the server's.
  return ctx && uid == ctx->uid;
}

env_list client_environment(const server_context& ctx, const proc_id& proc) {
  env_list env;
  env.push_back("PMIX_NAMESPACE=" + proc.nspace);
  env.push_back("PMIX_RANK=" + std::to_string(proc.rank));
  // Our clients take our protocol's address from a variable of ours;
  // OpenPMIx's (every version reads PMIX_SERVER_URI41, then 4, 3, 21, 2)
  // name the listener for its protocol, with the modules it must use there
  // (issue 35: docs/hosts.md, "Mixed installs").
  env.push_back("PMIX_CXX_SERVER_URI=" + ctx.uri);
  const auto& theirs = ctx.openpmix_uri.empty() ? ctx.uri : ctx.openpmix_uri;
  for (const char* name : {"PMIX_SERVER_URI41=", "PMIX_SERVER_URI4=", "PMIX_SERVER_URI3=", "PMIX_SERVER_URI21=",
                           "PMIX_SERVER_URI2="})
    env.push_back(name + theirs);
  if (!ctx.openpmix_uri.empty()) {
    env.push_back("PMIX_SECURITY_MODE=native");
    env.push_back("PMIX_BFROP_BUFFER_TYPE=PMIX_BFROP_BUFFER_NON_DESC");
    env.push_back("PMIX_GDS_MODULE=hash");
  }
  env.push_back("PMIX_SERVER_NSPACE=" + ctx.server.nspace);
  env.push_back("PMIX_SERVER_RANK=" + std::to_string(ctx.server.rank));
  env.push_back("PMIX_SERVER_TMPDIR=" + ctx.tmpdir);
  env.push_back("PMIX_HOSTNAME=" + ctx.hostname);
  env.push_back(std::string{"PMIX_VERSION="} + protocol::abi_version);
  return env;
}

namespace {

using self_ptr = caf::stateful_actor<server_state>*;

using collective = server_state::collective;
constexpr collective all_collectives[] = {collective::fence, collective::connect, collective::disconnect,
                                          collective::group_construct, collective::group_destruct};

const char* name_of(collective kind) {
  switch (kind) {
    case collective::fence: return "fence";
    case collective::connect: return "connect";
    case collective::disconnect: return "disconnect";
    case collective::group_construct: return "group construct";
    case collective::group_destruct: return "group destruct";
  }
  return "collective";
}

bool is_group(collective kind) { return kind == collective::group_construct || kind == collective::group_destruct; }
void advance_group(self_ptr self, collective kind, fence_tracker& t);
void forget_group_infos(group_state& groups, const std::string& nspace);
void forget_group_members(group_state& groups, const std::string& nspace);
void member_died(self_ptr self, const proc_id& p);
bool excuse_optional(self_ptr self, fence_tracker& t);
caf::result<get_result> get_group_info(self_ptr self, const get_msg& msg, const info& qualifier);
bool translate_group_target(const server_state& st, get_msg& msg);
void invitee_gone(self_ptr self, const proc_id& p);

void fail_collective(self_ptr self, collective kind, std::uint64_t id, pmix_status_t status) {
  auto& st = self->state;
  if (kind == collective::group_construct)
    if (const auto* t = st.group_constructs.find(id)) st.groups.pending_info.erase(t->tag);
  st.book(kind).complete(id, fence_result{status, nullptr, nullptr});
}

// The first of `procs` in a namespace the caller (user `uid`, process
// `from`) may not see, logged as refusing `what`; null if it may see them
// all. Such a request is answered PMIX_ERR_NOT_FOUND, as for a namespace
// that does not exist: another user's job is not there for it.
const proc_id* unseen(const server_state& st, const char* what, const proc_id& from, uid_t uid,
                      const std::vector<proc_id>& procs) {
  for (const auto& p : procs) {
    if (st.may_see(uid, from.nspace, p.nspace)) continue;
    log::warning("server", what, " from ", to_string(from), " (uid ", uid, ") names ", to_string(p),
                 ", a process of another user's job: refused");
    return &p;
  }
  return nullptr;
}

// A group's name stands for its members wherever a namespace may (issue
// 34.2): {group, PMIX_RANK_WILDCARD} is every member of the group (a name
// that is also a namespace's stays the namespace's).
void expand_groups(const server_state& st, std::vector<proc_id>& procs) {
  if (st.groups.groups.empty()) return;
  auto group_of = [&st](const proc_id& p) {
    return p.rank == rank_wildcard && st.nspaces.count(p.nspace) == 0 ? st.groups.groups.find(p.nspace)
                                                                       : st.groups.groups.end();
  };
  if (std::none_of(procs.begin(), procs.end(),
                   [&](const proc_id& p) { return group_of(p) != st.groups.groups.end(); }))
    return;
  std::vector<proc_id> out;
  for (auto& p : procs) {
    auto g = group_of(p);
    if (g == st.groups.groups.end())
      out.push_back(std::move(p));
    else
      out.insert(out.end(), g->second.members.begin(), g->second.members.end());
  }
  procs = std::move(out);
}

void count_user(server_state::nspace_entry& e, uid_t uid) { ++e.users[uid]; }

void uncount_user(server_state::nspace_entry& e, uid_t uid) {
  auto it = e.users.find(uid);
  if (it != e.users.end() && --it->second == 0) e.users.erase(it);
}

// (collective_timeout_atom, kind, tracker id, deadline): a contribution's
// PMIX_TIMEOUT passed (the deadline, in steady-clock ticks, tells a timer
// that a shorter one replaced from the current one).
using collective_timeout_atom = caf::atom_constant<caf::atom("colltmo")>;

// A contribution with PMIX_TIMEOUT: the tracker fails with PMIX_ERR_TIMEOUT
// when the earliest one passes (each contributor's reply says so), unless it
// completed before. Call before advance_collective (which may complete it).
void time_collective(self_ptr self, collective kind, fence_tracker& t, const info_list& info) {
  const auto seconds = directives::timeout_seconds(info);
  if (seconds <= 0) return;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(seconds);
  if (t.deadline && *t.deadline <= deadline) return;
  t.deadline = deadline;
  self->delayed_send(self, std::chrono::seconds(seconds), collective_timeout_atom::value,
                     static_cast<std::uint8_t>(kind), t.id,
                     static_cast<std::int64_t>(deadline.time_since_epoch().count()));
}

void on_collective_timeout(self_ptr self, std::uint8_t which, std::uint64_t id, std::int64_t deadline) {
  auto& st = self->state;
  const auto kind = static_cast<collective>(which);
  auto* t = st.book(kind).find(id);
  // Done already, or this timer's deadline was replaced by an earlier one
  // (whose own timer comes; the clock CAF's timer reads may fire a little
  // early: the deadline itself is what counts).
  if (t == nullptr || !t->deadline || t->deadline->time_since_epoch().count() != deadline) return;
  std::string missing;
  for (std::size_t k = 0; k < t->expected.size() && k < 8; ++k)
    if (!t->arrived_flags[k]) missing += (missing.empty() ? "" : ", ") + to_string(t->expected[k]);
  log::warning("server", "a ", name_of(kind), " timed out (PMIX_TIMEOUT): ", t->arrived_count, " of ",
               t->expected.size(), " local participants came",
               missing.empty() ? std::string{t->host_called ? "; the host did not answer" : ""} : "; waiting for " + missing);
  // The host's answer, should it come, finds nothing.
  for (auto it = st.collective_upcalls.begin(); it != st.collective_upcalls.end();)
    it = it->second == std::make_pair(kind, id) ? st.collective_upcalls.erase(it) : std::next(it);
  st.book(kind).complete(id, fence_result{PMIX_ERR_TIMEOUT, nullptr, nullptr});
}

void fail_fence(self_ptr self, std::uint64_t id, pmix_status_t status) {
  fail_collective(self, collective::fence, id, status);
}

void complete_connect(self_ptr self, std::uint64_t id, const std::vector<proc_id>& procs);

// A collective that completes on this node, without the host, honours only
// the directives the library acts on: a required one it does not is
// PMIX_ERR_NOT_SUPPORTED (one that goes to the host is the host's to judge).
pmix_status_t check_local_directives(collective kind, const info_list& info) {
  if (kind == collective::fence) return directives::check("PMIx_Fence", info, {PMIX_COLLECT_DATA, PMIX_TIMEOUT});
  return directives::check(kind == collective::connect ? "PMIx_Connect" : "PMIx_Disconnect", info, {PMIX_TIMEOUT});
}

// A connect or disconnect whose local participants have all arrived. When
// every participant is local it completes here, as a local fence does (as
// OpenPMIx does: Open MPI's mpirun then sees no up-call); otherwise the host
// joins it, with its connect / disconnect up-call, once for the whole set.
void advance_connection(self_ptr self, collective kind, fence_tracker& t) {
  auto& st = self->state;
  t.host_called = true;
  if (t.all_local) {
    if (const auto rc = check_local_directives(kind, t.info); rc != PMIX_SUCCESS)
      return fail_collective(self, kind, t.id, rc);
    if (kind == collective::connect) return complete_connect(self, t.id, t.procs);
    return st.disconnects.complete(t.id, fence_result{PMIX_SUCCESS, nullptr, nullptr});
  }
  const auto upcall = st.next_upcall++;
  auto done = reply_to_actor(self->address(), st.ctx, upcall);
  const bool asked = kind == collective::connect ? st.ctx->host->connect(t.procs, t.info, std::move(done))
                                                 : st.ctx->host->disconnect(t.procs, t.info, std::move(done));
  if (asked) {
    st.collective_upcalls.emplace(upcall, std::make_pair(kind, t.id));
    return;
  }
  log::warning("server", "a ", name_of(kind), " spans other nodes but the host has no ", name_of(kind),
               " up-call");
  fail_collective(self, kind, t.id, PMIX_ERR_NOT_SUPPORTED);
}

// A tracker whose local participants have all arrived completes here or goes
// to the host.
void advance_collective(self_ptr self, collective kind, fence_tracker& t) {
  auto& st = self->state;
  // A local participant that already left can never contribute. A death
  // (PMIX_ERR_PROC_TERM_WO_SYNC) is reported before a finalize.
  // Runs on every contribution: it walks whichever is shorter, the missing
  // participants or the departed ranks (usually none), both in proc order,
  // so the same one is named either way.
  const proc_id* gone = nullptr;
  pmix_status_t reason = PMIX_SUCCESS;
  auto consider = [&](const proc_id& p, pmix_status_t why) {
    if (gone == nullptr || (reason != PMIX_ERR_PROC_TERM_WO_SYNC && why == PMIX_ERR_PROC_TERM_WO_SYNC)) {
      gone = &p;
      reason = why;
    }
  };
  const auto missing = t.expected.size() - t.arrived_count;
  if (st.departed.empty() || missing == 0) {
    // nobody can be gone
  } else if (st.departed.size() <= missing) {
    for (const auto& [p, why] : st.departed)
      if (t.waits_for(p)) consider(p, why);
  } else {
    for (std::size_t k = 0; k < t.expected.size(); ++k) {
      if (t.arrived_flags[k]) continue;
      auto d = st.departed.find(t.expected[k]);
      if (d != st.departed.end()) consider(d->first, d->second);
    }
  }
  if (gone != nullptr && kind == collective::group_construct && excuse_optional(self, t)) gone = nullptr;
  if (gone != nullptr) {
    log::warning("server", "a ", name_of(kind), " fails: participant ", to_string(*gone), " has left (",
                 PMIx_Error_string(reason), ")");
    return fail_collective(self, kind, t.id, reason);
  }
  if (!t.ready() || t.host_called) return;
  if (is_group(kind)) return advance_group(self, kind, t);
  if (kind != collective::fence) return advance_connection(self, kind, t);
  if (t.all_local) {
    if (const auto rc = check_local_directives(kind, t.info); rc != PMIX_SUCCESS)
      return fail_collective(self, kind, t.id, rc);
    st.fences.complete(t.id, fence_result{PMIX_SUCCESS,
                                          std::make_shared<const std::string>(std::move(t.data)), nullptr});
    return;
  }
  // A fence is a barrier whether or not it collects data. Slurm 22.05's
  // plugin runs its fence as a ring across nodes only when the info names
  // PMIX_COLLECT_DATA (whatever its value) and the data is not empty; its
  // other algorithm, a tree, completed on each node at once here (OpenPMIx
  // too), so Open MPI's ranks left MPI_Init's final barrier and sent to peers
  // still in MPI_Init, which crashed in Open MPI's TCP transport. So the key
  // is always given, with this fence's value, and a fence without data
  // carries one byte per node, which its result drops.
  if (find(t.info, PMIX_COLLECT_DATA) == nullptr)
    t.info.push_back(info{PMIX_COLLECT_DATA, value::boolean(t.collect), 0});
  if (!t.collect && t.data.empty()) t.data.assign(1, '\0');
  const auto upcall = st.next_upcall++;
  const bool asked = st.ctx->host->fence_nb(t.procs, t.info, t.data,
                                            reply_to_actor(self->address(), st.ctx, upcall));
  if (!asked) {
    log::warning("server", "fence spans other nodes but the host has no fence_nb");
    return fail_fence(self, t.id, PMIX_ERR_NOT_SUPPORTED);
  }
  t.host_called = true;
  st.collective_upcalls.emplace(upcall, std::make_pair(collective::fence, t.id));
}

void advance_fence(self_ptr self, fence_tracker& t) { advance_collective(self, collective::fence, t); }

// Every tracker of every collective still waiting for `p` moves on (it left).
void advance_waiting_for(self_ptr self, const proc_id& p) {
  for (auto kind : all_collectives) {
    auto& book = self->state.book(kind);
    for (auto id : book.waiting_for(p))
      if (auto* t = book.find(id)) advance_collective(self, kind, *t);
  }
}

// Every tracker naming a participant of `nspace` fails (it went away).
void fail_naming(self_ptr self, const std::string& nspace, pmix_status_t why = PMIX_ERR_NOT_FOUND) {
  for (auto kind : all_collectives)
    for (auto id : self->state.book(kind).naming(nspace)) fail_collective(self, kind, id, why);
}

// A connect completes with the job data of every participant's namespace
// this server knows (each client then reads the others' job data locally).
void complete_connect(self_ptr self, std::uint64_t id, const std::vector<proc_id>& procs) {
  auto& st = self->state;
  std::vector<caf::actor> known;
  std::vector<std::string> names;
  for (const auto& p : procs) {
    if (std::find(names.begin(), names.end(), p.nspace) != names.end()) continue;
    names.push_back(p.nspace);
    auto it = st.nspaces.find(p.nspace);
    if (it != st.nspaces.end() && !it->second.tool) known.push_back(it->second.actor);
  }
  if (known.empty()) return st.connects.complete(id, fence_result{PMIX_SUCCESS, nullptr, nullptr});
  auto jobs = std::make_shared<std::vector<std::shared_ptr<const std::string>>>(known.size());
  auto remaining = std::make_shared<std::size_t>(known.size());
  auto finish = [self, id, jobs] {
    std::string fields;
    for (const auto& j : *jobs)
      if (j) protocol::append_length_delimited(fields, 2, *j);
    self->state.connects.complete(
        id, fence_result{PMIX_SUCCESS, std::make_shared<const std::string>(std::move(fields)), nullptr});
  };
  for (std::size_t k = 0; k < known.size(); ++k)
    self->request(known[k], caf::infinite, job_blob_msg{})
        .then(
            [=](job_blob& b) {
              (*jobs)[k] = std::move(b.job);
              if (--*remaining == 0) finish();
            },
            [=](caf::error&) {
              if (--*remaining == 0) finish();
            });
}

caf::result<fence_result> on_connect_procs(self_ptr self, connect_procs_msg& msg) {
  auto& st = self->state;
  const auto kind = msg.disconnect ? collective::disconnect : collective::connect;
  auto rp = self->make_response_promise();
  expand_groups(st, msg.procs);
  if (unseen(st, name_of(kind), msg.from, msg.uid, msg.procs) != nullptr) {
    rp.deliver(fence_result{PMIX_ERR_NOT_FOUND, nullptr,
                            std::make_shared<const std::string>(
                                protocol::connect_procs_reply_body(PMIX_ERR_NOT_FOUND, {}))});
    return rp;
  }
  fence_msg as_fence;
  as_fence.from = msg.from;
  as_fence.procs = std::move(msg.procs);
  if (as_fence.procs.empty()) as_fence.procs.push_back(proc_id{msg.from.nspace, rank_wildcard});
  as_fence.info = std::move(msg.info);
  pmix_status_t status = PMIX_SUCCESS;
  auto& book = st.book(kind);
  auto* t = book.contribute(as_fence, [rp](const fence_result& r) mutable { rp.deliver(r); }, status);
  if (t == nullptr) {
    log::error("server", name_of(kind), " from ", to_string(msg.from), " refused: ", PMIx_Error_string(status));
    rp.deliver(fence_result{status, nullptr,
                            std::make_shared<const std::string>(protocol::connect_procs_reply_body(status, {}))});
    return rp;
  }
  time_collective(self, kind, *t, as_fence.info);
  advance_collective(self, kind, *t);
  return rp;
}

// A client asks for its namespace's fence board: made at the first request
// (a namespace whose clients never ask has none), sent to the asking peer
// ahead of its fence's reply (messages from one actor arrive in order).
void send_board(self_ptr self, const proc_id& from) {
  auto& st = self->state;
  auto it = st.nspaces.find(from.nspace);
  if (it == st.nspaces.end() || it->second.tool || it->second.board_refused) return;
  auto& entry = it->second;
  if (!entry.board) {
    const auto capacity = transport::fence_board_capacity();
    if (capacity > 0) entry.board = transport::fence_board::make(capacity);
    entry.board_refused = !entry.board;
    if (!entry.board) return;
  }
  self->send(caf::actor_cast<caf::actor>(self->current_sender()), fence_board_msg{entry.board->file()});
}

void on_fence(self_ptr self, fence_msg& msg) {
  auto& st = self->state;
  if (msg.board_request) send_board(self, msg.from);
  // The answer goes to the peer actor that sent the contribution (a
  // message, not a response: the peer sent, it did not request), and none
  // when the peer's client reads the reply on the board.
  auto answer = [self, peer = caf::actor_cast<caf::actor>(self->current_sender()), id = msg.answer_id,
                 all = msg.answer_on_board](const fence_result& r) {
    if (all || !r.on_board) self->send(peer, fence_answer_msg{id, r});
  };
  pmix_status_t status = PMIX_SUCCESS;
  fence_tracker* t = nullptr;
  expand_groups(st, msg.procs);
  if (unseen(st, "fence", msg.from, msg.uid, msg.procs) != nullptr)
    status = PMIX_ERR_NOT_FOUND;
  else
    t = st.fences.contribute(msg, answer, status);
  if (t == nullptr) {
    log::error("server", "fence from ", to_string(msg.from), " refused: ",
               PMIx_Error_string(status));
    answer(fence_result{status, nullptr, std::make_shared<const std::string>(protocol::fence_reply(status, {}))});
    return;
  }
  time_collective(self, collective::fence, *t, msg.info);
  advance_fence(self, *t);
}

// A collecting fence's data from across the nodes, kept for each namespace
// the fence covered whole (a fence over some ranks carries only theirs).
void keep_collected(server_state& st, const std::vector<proc_id>& procs,
                    const std::shared_ptr<const std::string>& data) {
  for (const auto& p : procs) {
    if (p.rank != rank_wildcard) continue;
    auto it = st.nspaces.find(p.nspace);
    if (it == st.nspaces.end() || it->second.tool) continue;
    it->second.collected = data;
    it->second.collected_index.clear();
    it->second.collected_indexed = false;
  }
}

// The RankData of `rank` in the namespace's collected fence data when it
// holds `key`; empty otherwise (not collected, not there, or not that key:
// the caller asks the host).
std::string_view collected_rank(server_state::nspace_entry& e, const std::string& nspace, rank_t rank,
                                const std::string& key) {
  if (!e.collected || key.empty()) return {};
  if (!e.collected_indexed) {
    e.collected_indexed = true;
    std::size_t pos = 0;
    std::string_view bytes, ns;
    rank_t number = 0;
    bool has_items = false;
    while (protocol::detail::next_rank(*e.collected, pos, bytes) == 1)
      if (protocol::detail::peek_rank(bytes, ns, number, has_items) && has_items && ns == nspace)
        e.collected_index.emplace_back(number, bytes);
    // Node after node, each in rank order, as a rule: sorted, the first of
    // a rank listed twice is kept.
    std::stable_sort(e.collected_index.begin(), e.collected_index.end(),
                     [](const auto& a, const auto& b) { return a.first < b.first; });
  }
  auto at = std::lower_bound(e.collected_index.begin(), e.collected_index.end(), rank,
                             [](const auto& a, rank_t r) { return a.first < r; });
  if (at == e.collected_index.end() || at->first != rank) return {};
  protocol::rank_data d;
  if (!protocol::decode(at->second, d)) return {};
  for (const auto& [scope, bytes] : d.items) {
    pmix::info item;
    if (protocol::decode_checked_info(bytes, item) && item.key == key) return at->second;
  }
  return {};
}

caf::result<get_result> on_get(self_ptr self, get_msg& msg) {
  auto& st = self->state;
  if (const auto* q = find(msg.info, PMIX_GROUP_CONTEXT_ID)) return get_group_info(self, msg, *q);
  if (!st.groups.groups.empty() && !translate_group_target(st, msg)) return get_result{PMIX_ERR_NOT_FOUND, {}};
  if (!st.may_see(msg.uid, msg.from.nspace, msg.target.nspace)) {
    log::warning("server", "get of ", to_string(msg.target), " from ", to_string(msg.from), " (uid ", msg.uid,
                 "): another user's job: refused");
    return get_result{PMIX_ERR_NOT_FOUND, {}};
  }
  auto it = st.nspaces.find(msg.target.nspace);
  // A client asks for a reserved key only of a namespace it has no job data
  // for (a job it spawned or connected to): the namespace's job data answers.
  const bool reserved = reserved_key(msg.key);
  if (reserved && it != st.nspaces.end() && !it->second.tool) {
    auto rp = self->make_response_promise();
    self->request(it->second.actor, caf::infinite, job_blob_msg{})
        .then([rp](job_blob& b) mutable { rp.deliver(get_result{PMIX_SUCCESS, {}, std::move(b.job)}); },
              [rp](caf::error&) mutable { rp.deliver(get_result{PMIX_ERR_NOT_FOUND, {}, nullptr}); });
    return rp;
  }
  // A rank the host deregistered, with no process or registration since:
  // nobody will commit its data (found by the fault plane, seed 1,
  // drop:init: a get for it waited for a process that had ended).
  if (auto d = st.departed.find(msg.target); d != st.departed.end() && d->second == PMIX_ERR_UNREACH) {
    auto rp = self->make_response_promise();
    rp.deliver(get_result{PMIX_ERR_NOT_FOUND, {}});
    return rp;
  }
  if (it != st.nspaces.end()) {
    const auto& loc = it->second.locality;
    const bool local =
        std::binary_search(loc.local_ranks.begin(), loc.local_ranks.end(), msg.target.rank);
    if (local) {
      auto rp = self->make_response_promise();
      rp.delegate(it->second.actor, std::move(msg));
      return rp;
    }
  }
  // A remote rank's key that the last collecting fence brought here (unless
  // the asker wants the host asked again).
  if (it != st.nspaces.end() && find(msg.info, PMIX_GET_REFRESH_CACHE) == nullptr) {
    if (const auto data = collected_rank(it->second, msg.target.nspace, msg.target.rank, msg.key); !data.empty()) {
      auto rp = self->make_response_promise();
      rp.deliver(get_result{PMIX_SUCCESS, std::string{data}});
      return rp;
    }
  }
  auto rp = self->make_response_promise();
  const auto upcall = st.next_upcall++;
  if (st.ctx->host->direct_modex(msg.target, msg.info,
                                 reply_to_actor(self->address(), st.ctx, upcall))) {
    st.dmodex_upcalls.emplace(upcall, server_state::pending_dmodex{rp, msg.asker, msg.request});
    return rp;
  }
  if (it != st.nspaces.end() && !it->second.locality.job_size) {
    // Placement unknown: the rank may still connect here.
    rp.delegate(it->second.actor, std::move(msg));
    return rp;
  }
  log::warning("server", "get of ", to_string(msg.target), "'s data from ", to_string(msg.from),
               ": the rank is not on this node and the host has no direct_modex");
  rp.deliver(get_result{PMIX_ERR_NOT_SUPPORTED, {}});
  return rp;
}

void on_rank_state(self_ptr self, const rank_state_msg& msg) {
  auto& st = self->state;
  // A rank of a namespace already deregistered (its report was on its way
  // while the namespace went): nothing can wait for it any more.
  auto entry = st.nspaces.find(msg.proc.nspace);
  if (entry == st.nspaces.end()) return;
  if (msg.live)
    entry->second.live[msg.proc.rank] = true;
  else
    entry->second.live.erase(msg.proc.rank);
  if (msg.live) {
    st.departed.erase(msg.proc);
    return;
  }
  // A rank whose process finalized may run again (the cycling guarantee of
  // spec 004, or a new process for the rank): collectives naming it wait
  // for that process. Only a death is remembered: a process that ended
  // without PMIx_Finalize can no longer contribute, so the collectives
  // waiting for the rank, and those that name it later, fail instead of
  // hanging, until a new process of the rank connects or the host
  // registers the rank again.
  if (!st.groups.invites.empty()) invitee_gone(self, msg.proc);
  if (msg.reason == PMIX_ERR_UNREACH) return;
  st.departed[msg.proc] = msg.reason;
  if (!st.groups.groups.empty()) member_died(self, msg.proc);
  advance_waiting_for(self, msg.proc);
}

void on_register_nspace(self_ptr self, register_nspace_msg& msg) {
  auto& st = self->state;
  if (auto it = st.nspaces.find(msg.nspace); it != st.nspaces.end() && !it->second.tool) {
    log::error("server", "namespace ", msg.nspace, " is already registered");
    return msg.done->deliver(PMIX_ERR_BAD_PARAM);
  }
  job_layout layout;
  std::string error;
  const auto rc = compute_layout(msg.reg, msg.nlocalprocs, st.ctx->hostname, layout, error);
  if (rc != PMIX_SUCCESS) {
    log::error("server", "namespace ", msg.nspace, " refused: ", error);
    return msg.done->deliver(rc);
  }
  // Resources the host registered: node-level data every job here carries.
  for (const auto& r : st.resources)
    if (find(layout.job_info, r.key) == nullptr) layout.job_info.push_back(r);
  nspace_locality loc{layout.local_ranks, layout.job_size};
  std::optional<uid_t> job_user;
  if (const auto* u = find(layout.job_info, PMIX_USERID); u != nullptr && u->val.as_uint())
    job_user = static_cast<uid_t>(*u->val.as_uint());
  rank_map<registration> registrations;
  if (auto early = st.early_registrations.find(msg.nspace); early != st.early_registrations.end()) {
    registrations = std::move(early->second);
    st.early_registrations.erase(early);
    for (auto r : registrations.ranks()) {
      if (loc.job_size && r >= *loc.job_size) {
        log::error("server", "register_client ", to_string(proc_id{msg.nspace, r}), " dropped: beyond the job size ",
                   *loc.job_size);
        registrations.erase(r);
        continue;
      }
      auto pos = std::lower_bound(loc.local_ranks.begin(), loc.local_ranks.end(), r);
      if (pos == loc.local_ranks.end() || *pos != r) loc.local_ranks.insert(pos, r);
    }
  }
  // (A tool namespace of that name is replaced: the host now owns the name.)
  // The namespace actor answers the host once it has built the job's data.
  auto actor = self->spawn<caf::linked>(nspace_actor, msg.nspace, msg.nlocalprocs,
                                        std::move(layout), false,
                                        caf::actor_cast<caf::actor>(self), st.ctx, msg.done,
                                        std::shared_ptr<const std::string>{});
  auto& entry = st.nspaces[msg.nspace] =
      server_state::nspace_entry{actor, std::move(loc), false, 0, std::move(registrations)};
  entry.nlocalprocs = msg.nlocalprocs;
  entry.job_user = job_user;
  for (auto r : entry.registrations.ranks()) count_user(entry, entry.registrations.find(r)->uid);
  // What waited for the namespace.
  if (auto early = st.early_job_info.find(msg.nspace); early != st.early_job_info.end()) {
    self->send(actor, extend_job_msg{msg.nspace, std::move(early->second), actors::make_reply<no_result>(
                                                                               [](pmix_status_t, no_result) {})});
    st.early_job_info.erase(early);
  }
  if (auto early = st.early_dmodex.find(msg.nspace); early != st.early_dmodex.end()) {
    auto waiting = std::move(early->second);
    st.early_dmodex.erase(early);
    for (auto& d : waiting) self->send(self, std::move(d));
  }
}

// A namespace actor failed (found by the fault plane, seed 7,
// kill:nspace:at=get:rank=0): its rank actors went with it and their peers
// closed their connections, so its clients learn it; the collectives naming
// its ranks fail. The host's namespace is not forgotten: a new actor takes
// over from what the server kept (registrations, job data, epilogs), serves
// the processes that connect again, and deregisters as usual. A tool's
// namespace simply ends.
void on_nspace_failed(self_ptr self, const caf::actor_addr& source) {
  auto& st = self->state;
  auto it = std::find_if(st.nspaces.begin(), st.nspaces.end(),
                         [&](const auto& n) { return n.second.actor.address() == source; });
  if (it == st.nspaces.end()) return;
  const auto name = it->first;
  log::error("server", "the actor of namespace ", name, " failed",
             it->second.tool ? "" : ": restarting it from the registration");
  fail_naming(self, name, PMIX_ERR_LOST_CONNECTION);
  if (it->second.tool) {
    st.nspaces.erase(it);
    for (auto d = st.departed.begin(); d != st.departed.end();)
      d = d->first.nspace == name ? st.departed.erase(d) : std::next(d);
    return;
  }
  // Its processes lost their connections: collectives that name them later
  // fail too, until a process of the rank connects again.
  for (auto rank : std::exchange(it->second.live, {}).ranks()) {
    const proc_id p{name, rank};
    if (!st.groups.invites.empty()) invitee_gone(self, p);
    st.departed[p] = PMIX_ERR_LOST_CONNECTION;
    advance_waiting_for(self, p);
  }
  auto& entry = it->second;
  job_layout layout;
  layout.job_size = entry.locality.job_size;
  entry.actor = self->spawn<caf::linked>(nspace_actor, name, entry.nlocalprocs, std::move(layout), false,
                                         caf::actor_cast<caf::actor>(self), st.ctx, reply_to<no_result>{},
                                         entry.job);
  for (const auto& e : entry.epilogs) self->request(entry.actor, caf::infinite, e).then([](pmix_status_t) {}, [](caf::error&) {});
}

// PMIx_server_setup_local_support: the namespace's job data grows.
void on_extend_job(self_ptr self, extend_job_msg& msg) {
  auto& st = self->state;
  auto it = st.nspaces.find(msg.nspace);
  if (it == st.nspaces.end()) {
    // Kept for the namespace; the host is answered now (it registers the
    // namespace after this call, often from the same thread).
    auto& kept = st.early_job_info[msg.nspace];
    kept.insert(kept.end(), msg.info.begin(), msg.info.end());
    msg.done->deliver(PMIX_SUCCESS);
    return;
  }
  self->send(it->second.actor, std::move(msg));
}

// PMIx_server_dmodex_request: a local process's committed data, for the
// host to send to the node that asked.
void on_dmodex_request(self_ptr self, dmodex_request_msg& msg) {
  auto& st = self->state;
  auto it = st.nspaces.find(msg.proc.nspace);
  if (it == st.nspaces.end() || it->second.tool) {
    log::debug("server", "dmodex_request for ", to_string(msg.proc), ": waiting for its namespace");
    st.early_dmodex[msg.proc.nspace].push_back(std::move(msg));
    return;
  }
  get_msg get;
  get.from = st.ctx->server;
  get.target = msg.proc;
  auto done = msg.done;
  self->request(it->second.actor, caf::infinite, std::move(get))
      .then([done](get_result& r) { done->deliver(r.status, std::move(r.data)); },
            [done](caf::error&) { done->deliver(PMIX_ERR_NOT_FOUND, {}); });
}

void on_deregister_nspace(self_ptr self, deregister_nspace_msg& msg) {
  auto& st = self->state;
  auto it = st.nspaces.find(msg.nspace);
  // Whatever waited for it waits no more.
  bool early = st.early_registrations.erase(msg.nspace) + st.early_job_info.erase(msg.nspace) > 0;
  if (auto d = st.early_dmodex.find(msg.nspace); d != st.early_dmodex.end()) {
    for (auto& waiting : d->second) waiting.done->deliver(PMIX_ERR_NOT_FOUND, {});
    st.early_dmodex.erase(d);
    early = true;
  }
  if (it == st.nspaces.end()) {
    if (early) return msg.done->deliver(PMIX_SUCCESS);
    log::warning("server", "deregister of unknown namespace ", msg.nspace);
    return msg.done->deliver(PMIX_ERR_NOT_FOUND);
  }
  auto actor = it->second.actor;
  st.nspaces.erase(it);
  fail_naming(self, msg.nspace);
  for (auto d = st.departed.begin(); d != st.departed.end();)
    d = d->first.nspace == msg.nspace ? st.departed.erase(d) : std::next(d);
  forget_group_infos(st.groups, msg.nspace);
  forget_group_members(st.groups, msg.nspace);
  st.iof.forget_nspace(msg.nspace);  // pulls of its output (its own processes' pulls go with their peers)
  // Still linked while it winds down (its epilogs may take a while): if the
  // server goes first (finalize), so does it.
  auto done = msg.done;
  self->request(actor, caf::infinite, deregister_msg{})
      .then([done](bool) { done->deliver(PMIX_SUCCESS); },
            [done](caf::error&) { done->deliver(PMIX_SUCCESS); });
}

// One PMIx_server_register_client: `entry` is the namespace's (null: not
// registered yet: the registration waits for it in `early`).
pmix_status_t register_rank(server_state::nspace_entry* entry, const std::string& nspace, rank_t rank,
                            const registration& reg,
                            std::map<std::string, rank_map<registration>>& early) {
  if (rank >= rank_valid_limit) {
    log::error("server", "register_client refused: ", to_string(proc_id{nspace, rank}), " is not a valid rank");
    return PMIX_ERR_BAD_PARAM;
  }
  // A rank registered for one user is not silently handed to another: the
  // host deregisters it first. The same user again updates it (a new
  // process for the rank).
  auto same_user = [&](const registration* had) {
    if (had == nullptr || (had->uid == reg.uid && had->gid == reg.gid)) return true;
    log::error("server", "register_client ", to_string(proc_id{nspace, rank}), " for uid ", reg.uid, " gid ",
               reg.gid, " refused: it is registered for uid ", had->uid, " gid ", had->gid,
               " (deregister it first)");
    return false;
  };
  if (entry == nullptr) {
    auto& kept = early[nspace];
    if (!same_user(kept.find(rank))) return PMIX_ERR_EXISTS;
    log::debug("server", "register_client ", to_string(proc_id{nspace, rank}),
               " before its namespace: kept until the namespace is registered");
    kept[rank] = reg;
    return PMIX_SUCCESS;
  }
  if (entry->locality.job_size && rank >= *entry->locality.job_size && !entry->tool) {
    log::error("server", "register_client refused: ", to_string(proc_id{nspace, rank}), " is beyond the job size ",
               *entry->locality.job_size);
    return PMIX_ERR_BAD_PARAM;
  }
  const auto* had = entry->registrations.find(rank);
  if (!same_user(had)) return PMIX_ERR_EXISTS;
  auto& locals = entry->locality.local_ranks;
  auto pos = std::lower_bound(locals.begin(), locals.end(), rank);
  if (pos == locals.end() || *pos != rank) locals.insert(pos, rank);
  if (had == nullptr) count_user(*entry, reg.uid);
  entry->registrations[rank] = reg;
  return PMIX_SUCCESS;
}

server_state::nspace_entry* find_nspace(self_ptr self, const std::string& nspace) {
  auto it = self->state.nspaces.find(nspace);
  return it == self->state.nspaces.end() ? nullptr : &it->second;
}

void on_register_client(self_ptr self, register_client_msg& msg) {
  const auto rc = register_rank(find_nspace(self, msg.proc.nspace), msg.proc.nspace, msg.proc.rank,
                                registration{msg.uid, msg.gid, msg.server_object}, self->state.early_registrations);
  // Registered again (a new process for a rank that died or was
  // deregistered): collectives wait for it again.
  if (rc == PMIX_SUCCESS) self->state.departed.erase(msg.proc);
  msg.done->deliver(rc);
}

void on_register_clients(self_ptr self, registration_batch& batch) {
  auto* entry = find_nspace(self, batch.nspace());
  for (std::size_t k = 0; k < batch.size(); ++k) {
    const auto& c = batch[k];
    const auto rc = register_rank(entry, batch.nspace(), c.rank, registration{c.uid, c.gid, c.server_object},
                                  self->state.early_registrations);
    if (rc == PMIX_SUCCESS && !self->state.departed.empty())
      self->state.departed.erase(proc_id{batch.nspace(), c.rank});
    batch.answer_next(rc);
  }
}

void on_deregister_client(self_ptr self, deregister_client_msg& msg) {
  auto& st = self->state;
  auto it = st.nspaces.find(msg.proc.nspace);
  if (it == st.nspaces.end()) {
    if (auto early = st.early_registrations.find(msg.proc.nspace);
        early != st.early_registrations.end() && early->second.erase(msg.proc.rank)) {
      if (early->second.size() == 0) st.early_registrations.erase(early);
      return msg.done->deliver(PMIX_SUCCESS);
    }
    log::warning("server", "deregister_client of ", to_string(msg.proc), ": unknown namespace");
    return msg.done->deliver(PMIX_ERR_NOT_FOUND);
  }
  if (const auto* had = it->second.registrations.find(msg.proc.rank)) uncount_user(it->second, had->uid);
  msg.registered = it->second.registrations.erase(msg.proc.rank);
  // The rank is gone for good: collectives still waiting for it fail.
  st.departed[msg.proc] = PMIX_ERR_UNREACH;
  advance_waiting_for(self, msg.proc);
  self->send(it->second.actor, std::move(msg));
}

// A pure tool goes to the namespace the server keeps for its identity,
// created on first use and removed when its last process leaves.
void route_tool(self_ptr self, connect_msg msg, caf::response_promise rp) {
  auto& st = self->state;
  auto it = st.nspaces.find(msg.proc.nspace);
  if (it == st.nspaces.end()) {
    auto actor = self->spawn<caf::linked>(nspace_actor, msg.proc.nspace, 0,
                                          job_layout{}, true, caf::actor_cast<caf::actor>(self),
                                          st.ctx, reply_to<no_result>{}, std::shared_ptr<const std::string>{});
    it = st.nspaces.emplace(msg.proc.nspace, server_state::nspace_entry{actor, {}, true, 0}).first;
  }
  it->second.users.emplace(msg.cred.uid, 1);  // its tools' users
  ++it->second.connects_sent;
  self->request(it->second.actor, caf::infinite, std::move(msg))
      .then([rp](connect_result& r) mutable { rp.deliver(std::move(r)); },
            [rp](caf::error&) mutable {
              rp.deliver(connect_result{PMIX_ERR_UNREACH, {}, {}, nullptr, {}});
            });
}

// Routes a connect whose identity is known: to a namespace the host
// registered (a client, or a registered client connecting as a tool), else
// (tools only) to a tool namespace.
void route_connect(self_ptr self, connect_msg msg, caf::response_promise rp) {
  auto& st = self->state;
  auto it = st.nspaces.find(msg.proc.nspace);
  if (it != st.nspaces.end() && !it->second.tool) {
    if (const auto* r = it->second.registrations.find(msg.proc.rank)) msg.reg = *r;
    rp.delegate(it->second.actor, std::move(msg));
    return;
  }
  if (msg.role == peer_role::tool) return route_tool(self, std::move(msg), std::move(rp));
  log::error("server", "connection from ", to_string(msg.proc), " (pid ", msg.cred.pid,
             "): namespace not registered");
  rp.deliver(connect_result{PMIX_ERR_NOT_FOUND, {}, {}, nullptr, {}});
}

caf::result<connect_result> on_connect(self_ptr self, connect_msg& msg) {
  auto& st = self->state;
  auto rp = self->make_response_promise();
  const bool needs_identity =
      msg.role == peer_role::tool &&
      (msg.proc.nspace.empty() || st.nspaces.count(msg.proc.nspace) == 0 ||
       st.nspaces.at(msg.proc.nspace).tool);
  if (!needs_identity) {
    route_connect(self, std::move(msg), std::move(rp));
    return rp;
  }
  // A pure tool (spec 000, 20.2.247.4.2): only with tool support, and from
  // another user (or over TCP, where the user is unknown) only when foreign
  // tools are allowed.
  if (!st.ctx->tool_support) {
    log::warning("server", "a tool (pid ", msg.cred.pid, ") was refused: PMIX_SERVER_TOOL_SUPPORT not set");
    rp.deliver(connect_result{PMIX_ERR_NOT_SUPPORTED, {}, {}, nullptr, {}});
    return rp;
  }
  if (msg.cred.uid != st.ctx->uid && !st.ctx->foreign_tools) {
    log::warning("server", "a tool of ",
                 msg.cred.uid == static_cast<uid_t>(-1) ? std::string{"an unknown user (TCP)"}
                                                        : "uid " + std::to_string(msg.cred.uid),
                 " was refused: PMIX_SERVER_ALLOW_FOREIGN_TOOLS not set");
    rp.deliver(connect_result{PMIX_ERR_NO_PERMISSIONS, {}, {}, nullptr, {}});
    return rp;
  }
  // A pure tool: the host names it if it wants to, else the server does.
  info_list directives = msg.info;
  directives.push_back({PMIX_USERID, value::unsigned_(PMIX_UINT32, msg.cred.uid), 0});
  directives.push_back({PMIX_GRPID, value::unsigned_(PMIX_UINT32, msg.cred.gid), 0});
  directives.push_back({PMIX_PROC_PID, value::integer(PMIX_PID, msg.cred.pid), 0});
  const auto upcall = st.next_upcall++;
  auto gate = st.ctx->gate;
  auto addr = self->address();
  const bool asked = st.ctx->host->tool_connected(directives, [gate, addr, upcall](pmix_status_t status,
                                                                              proc_id proc) {
    gate->send_if_open(addr, tool_assigned_msg{upcall, status, std::move(proc)});
  });
  if (asked) {
    st.tool_upcalls.emplace(upcall, server_state::pending_tool{std::move(msg), rp});
    return rp;
  }
  if (msg.proc.nspace.empty())
    msg.proc = proc_id{st.ctx->server.nspace + ".tool." + std::to_string(st.next_tool++), 0};
  route_connect(self, std::move(msg), std::move(rp));
  return rp;
}

void on_tool_assigned(self_ptr self, tool_assigned_msg& r) {
  auto& st = self->state;
  auto it = st.tool_upcalls.find(r.id);
  if (it == st.tool_upcalls.end()) return;
  auto pending = std::move(it->second);
  st.tool_upcalls.erase(it);
  if (r.status != PMIX_SUCCESS || r.proc.nspace.empty() || r.proc.rank >= rank_valid_limit) {
    log::warning("server", "the host refused a tool (pid ", pending.msg.cred.pid, "): ",
                 PMIx_Error_string(r.status == PMIX_SUCCESS ? PMIX_ERR_BAD_PARAM : r.status));
    pending.promise.deliver(connect_result{r.status == PMIX_SUCCESS ? PMIX_ERR_BAD_PARAM : r.status,
                                           {}, {}, nullptr, {}});
    return;
  }
  pending.msg.proc = std::move(r.proc);
  route_connect(self, std::move(pending.msg), std::move(pending.promise));
}

void on_tool_nspace_idle(self_ptr self, const tool_nspace_idle_msg& msg) {
  auto& st = self->state;
  auto it = st.nspaces.find(msg.nspace);
  // Not if a connect is still on its way to it.
  if (it == st.nspaces.end() || !it->second.tool || it->second.connects_sent != msg.epoch) return;
  auto actor = it->second.actor;
  st.nspaces.erase(it);
  fail_naming(self, msg.nspace);
  for (auto d = st.departed.begin(); d != st.departed.end();)
    d = d->first.nspace == msg.nspace ? st.departed.erase(d) : std::next(d);
  self->send(actor, deregister_msg{});
}

void on_upcall_result(self_ptr self, upcall_result& r) {
  auto& st = self->state;
  if (auto it = st.collective_upcalls.find(r.id); it != st.collective_upcalls.end()) {
    const auto [kind, tracker] = it->second;
    st.collective_upcalls.erase(it);
    if (kind == collective::fence) {
      // A fence that collects nothing returns nothing (the host carried our
      // one byte per node).
      const auto* t = st.fences.find(tracker);
      if (t != nullptr && !t->collect) r.data.clear();
      auto data = std::make_shared<const std::string>(std::move(r.data));
      if (t != nullptr && r.status == PMIX_SUCCESS && !data->empty()) keep_collected(st, t->procs, data);
      st.fences.complete(tracker, fence_result{r.status, std::move(data), nullptr});
    } else if (kind == collective::connect && r.status == PMIX_SUCCESS) {
      auto* t = st.connects.find(tracker);
      if (t != nullptr) complete_connect(self, tracker, t->procs);
    } else {
      fail_collective(self, kind, tracker, r.status);
    }
  } else if (auto d = st.dmodex_upcalls.find(r.id); d != st.dmodex_upcalls.end()) {
    auto rp = std::move(d->second.promise);
    st.dmodex_upcalls.erase(d);
    rp.deliver(get_result{r.status, std::move(r.data)});
  } else if (auto n = st.notify_upcalls.find(r.id); n != st.notify_upcalls.end()) {
    auto rp = std::move(n->second);
    st.notify_upcalls.erase(n);
    rp.deliver(r.status);
  } else if (auto i = st.iof_upcalls.find(r.id); i != st.iof_upcalls.end()) {
    auto [registration, rp] = std::move(i->second);
    st.iof_upcalls.erase(i);
    // A puller that left while its host decided (iof_forget_msg, below,
    // emptied its registration's peer) keeps nothing.
    if (r.status == PMIX_SUCCESS && registration.peer) st.iof.add(std::move(registration));
    rp.deliver(r.status);
  }
}

// PMIx_IOF_pull: the host is asked to forward the processes' output here
// (its iof_pull up-call); once it agrees, the puller gets what arrives.
caf::result<pmix_status_t> on_iof_pull(self_ptr self, iof_pull_msg& msg) {
  auto& st = self->state;
  auto rp = self->make_response_promise();
  if (unseen(st, "PMIx_IOF_pull", msg.from, msg.uid, msg.procs) != nullptr) {
    rp.deliver(pmix_status_t{PMIX_ERR_NOT_FOUND});
    return rp;
  }
  // Each pull is kept until its puller deregisters it or leaves, and every
  // output is framed once for each: a process holds at most
  // PMIX_CXX_MAX_REQUESTS of them, those its host still weighs included.
  std::size_t held = st.iof.count(msg.peer);
  for (const auto& [id, pending] : st.iof_upcalls) held += pending.first.peer == msg.peer ? 1 : 0;
  if (held >= st.ctx->max_requests) {
    log::error("server", "PMIx_IOF_pull: the process already holds ", held,
               " output registrations (PMIX_CXX_MAX_REQUESTS): refused");
    rp.deliver(pmix_status_t{PMIX_ERR_OUT_OF_RESOURCE});
    return rp;
  }
  const auto upcall = st.next_upcall++;
  const bool asked = st.ctx->host->iof_pull(msg.procs, msg.directives, msg.channels,
                                            reply_to_actor(self->address(), st.ctx, upcall));
  if (!asked) {
    log::debug("server", "PMIx_IOF_pull: the host has no iof_pull");
    rp.deliver(pmix_status_t{PMIX_ERR_NOT_SUPPORTED});
    return rp;
  }
  st.iof_upcalls.emplace(upcall, std::make_pair(iof_registration{std::move(msg.peer), msg.ref, std::move(msg.procs),
                                                                 msg.channels},
                                                rp));
  return rp;
}

// PMIx_server_IOF_deliver: one IofData per registration that wants it.
void on_iof_output(self_ptr self, const iof_output_msg& msg) {
  for (const auto* r : self->state.iof.wanting(msg.source, msg.channel)) {
    wire::Envelope e;
    auto* d = e.mutable_iof();
    d->set_ref(r->ref);
    protocol::to_wire(msg.source, d->mutable_source());
    d->set_channel(msg.channel);
    d->set_data(msg.data);
    protocol::to_wire(msg.info, d->mutable_info());
    self->send(r->peer, deliver_iof_msg{std::make_shared<const std::string>(protocol::to_frame(e))});
  }
}

// PMIx_server_collect_job_info: each known namespace's job-level store (as
// a registration), in the order asked; unknown namespaces are skipped.
void on_collect_job_info(self_ptr self, collect_job_info_msg& msg) {
  auto& st = self->state;
  std::vector<std::pair<std::string, caf::actor>> known;
  for (const auto& ns : msg.nspaces) {
    auto it = st.nspaces.find(ns);
    if (it != st.nspaces.end() && !it->second.tool) known.emplace_back(ns, it->second.actor);
  }
  auto done = msg.done;
  if (known.empty()) return done->deliver(PMIX_ERR_NOT_FOUND, {});
  auto results = std::make_shared<job_infos>(known.size());
  auto remaining = std::make_shared<std::size_t>(known.size());
  for (std::size_t k = 0; k < known.size(); ++k) {
    (*results)[k].first = known[k].first;
    self->request(known[k].second, caf::infinite, job_info_msg{})
        .then(
            [=](info_list& info) {
              (*results)[k].second = std::move(info);
              if (--*remaining == 0) done->deliver(PMIX_SUCCESS, std::move(*results));
            },
            [=](caf::error&) {
              if (--*remaining == 0) done->deliver(PMIX_SUCCESS, std::move(*results));
            });
  }
}

// Sends an event to the processes in its range on this node (docs/events.md):
// every namespace for this node and wider ranges, the source's namespace for
// PMIX_RANGE_NAMESPACE, the named processes for PMIX_RANGE_CUSTOM; nobody
// for PMIX_RANGE_RM and PMIX_RANGE_PROC_LOCAL.
void route_event(self_ptr self, const event& ev, const caf::actor& skip) {
  auto& st = self->state;
  if (ev.range == PMIX_RANGE_RM || ev.range == PMIX_RANGE_PROC_LOCAL) return;
  wire::Envelope e;
  e.set_id(0);
  auto* w = e.mutable_event();
  w->set_status(ev.status);
  protocol::to_wire(ev.source, w->mutable_source());
  w->set_range(ev.range);
  protocol::to_wire(ev.info, w->mutable_info());
  auto frame = std::make_shared<const std::string>(protocol::to_frame(e));
  // namespace -> ranks (empty: all)
  std::map<std::string, std::vector<rank_t>> targets;
  if (ev.range == PMIX_RANGE_NAMESPACE) {
    targets[ev.source.nspace];
  } else if (ev.range == PMIX_RANGE_CUSTOM) {
    std::map<std::string, bool> whole;
    for (const auto& p : custom_range(ev.info)) {
      if (p.rank == rank_wildcard) whole[p.nspace] = true;
      targets[p.nspace].push_back(p.rank);
    }
    for (auto& [ns, w] : whole) targets[ns].clear();
  } else {
    for (const auto& [ns, entry] : st.nspaces) targets[ns];
  }
  for (auto& [ns, ranks] : targets) {
    auto it = st.nspaces.find(ns);
    if (it == st.nspaces.end()) continue;
    self->send(it->second.actor, deliver_event_msg{frame, std::move(ranks), skip});
  }
}

caf::result<pmix_status_t> on_client_event(self_ptr self, client_event_msg& msg) {
  auto& st = self->state;
  route_event(self, msg.ev, msg.origin);
  // This node's ranges are served here; anything wider is the host's too.
  if (msg.ev.range == PMIX_RANGE_LOCAL || msg.ev.range == PMIX_RANGE_PROC_LOCAL)
    return pmix_status_t{PMIX_SUCCESS};
  auto rp = self->make_response_promise();
  const auto upcall = st.next_upcall++;
  const bool asked = st.ctx->host->notify_event(msg.ev.status, msg.ev.source, msg.ev.range,
                                                msg.ev.info,
                                                reply_to_actor(self->address(), st.ctx, upcall));
  if (asked) {
    st.notify_upcalls.emplace(upcall, rp);
    return rp;
  }
  if (msg.ev.range == PMIX_RANGE_RM) {
    log::warning("server", "event ", msg.ev.status, " from ", to_string(msg.ev.source),
                 " is for the host, which has no notify_event");
    rp.deliver(pmix_status_t{PMIX_ERR_NOT_SUPPORTED});
  } else {
    rp.deliver(pmix_status_t{PMIX_SUCCESS});
  }
  return rp;
}

void on_snapshot(self_ptr self, snapshot_msg& msg) {
  auto& st = self->state;
  auto snap = std::make_shared<server_snapshot>();
  snap->fences_in_flight = st.fences.size() + st.connects.size() + st.disconnects.size();
  snap->board_posts = st.fences.board_posts();
  snap->sensors = st.ctx->sensors->load(std::memory_order_relaxed);
  snap->iof_registrations = st.iof.size();
  snap->departed = st.departed.size();
  snap->dropped_sends = st.ctx->dropped_sends.load(std::memory_order_relaxed);
  snap->pending_upcalls = st.collective_upcalls.size() + st.dmodex_upcalls.size() +
                         st.tool_upcalls.size() + st.notify_upcalls.size() + st.iof_upcalls.size();
  auto done = msg.done;
  auto remaining = std::make_shared<std::size_t>(st.nspaces.size());
  if (*remaining == 0) return done->deliver(PMIX_SUCCESS, *snap);
  for (auto& [name, entry] : st.nspaces) {
    const std::vector<rank_t> registered = entry.registrations.ranks();
    self->request(entry.actor, caf::infinite, view_msg{})
        .then(
            [=](server_snapshot::nspace_view& v) {
              // Registered ranks without an actor are the server's to show.
              for (auto r : registered) {
                auto at = std::find_if(v.ranks.begin(), v.ranks.end(),
                                       [r](const server_snapshot::rank_view& x) { return x.rank == r; });
                if (at != v.ranks.end()) {
                  at->registered = true;
                } else {
                  server_snapshot::rank_view only;
                  only.rank = r;
                  only.registered = true;
                  v.ranks.push_back(only);
                }
              }
              snap->nspaces.push_back(std::move(v));
              if (--*remaining == 0) done->deliver(PMIX_SUCCESS, *snap);
            },
            [=](caf::error&) {
              if (--*remaining == 0) done->deliver(PMIX_SUCCESS, *snap);
            });
  }
}

// ---- groups (PMIx_Group_*) ----------------------------------------------------

fence_result group_answer(pmix_status_t status, const info_list& info = {}) {
  wire::InfoReply r;
  r.set_status(status);
  protocol::to_wire(info, r.mutable_info());
  return fence_result{status, nullptr, std::make_shared<const std::string>(r.SerializeAsString())};
}

value proc_array(const std::vector<proc_id>& procs) {
  array_value a{PMIX_PROC, {}};
  for (const auto& p : procs) a.elements.push_back(value::proc(p));
  return value::array(std::move(a));
}

// The group's results: its name, members and context ID (if it has one).
// A group's results: its context id first, when it has one (OpenPMIx
// returns it as the only result, and programs read results[0]), then its
// name and membership (what the Standard says a construct may return, for
// programs that look results up by key), then what the host added.
info_list group_results(const std::string& name, const group_record& g, info_list extra = {}) {
  info_list out;
  if (g.context_id) out.push_back({PMIX_GROUP_CONTEXT_ID, value::unsigned_(PMIX_SIZE, *g.context_id), 0});
  out.push_back({PMIX_GROUP_ID, value::string(name), 0});
  out.push_back({PMIX_GROUP_MEMBERSHIP, proc_array(g.members), 0});
  for (auto& i : extra)
    if (find(out, i.key) == nullptr) out.push_back(std::move(i));
  return out;
}

// An event from `source` to `procs` (this node's; the host is not told).
void notify_procs(self_ptr self, pmix_status_t status, const proc_id& source, const std::vector<proc_id>& procs,
                  info_list info) {
  if (procs.empty()) return;
  event ev;
  ev.status = status;
  ev.source = source;
  ev.range = PMIX_RANGE_CUSTOM;
  ev.info = std::move(info);
  ev.info.push_back({PMIX_EVENT_CUSTOM_RANGE, proc_array(procs), 0});
  route_event(self, ev, caf::actor{});
}

bool wants_context_id(const info_list& info) {
  const auto* i = find(info, PMIX_GROUP_ASSIGN_CONTEXT_ID);
  return i != nullptr && i->val.truthy();
}

bool flag_set(const info_list& info, std::string_view key) {
  const auto* i = find(info, key);
  return i != nullptr && i->val.truthy();
}

// The PMIX_GROUP_INFO a member gave (an array of pmix_info_t), if any.
info_list group_info_of(const info_list& directives) {
  info_list out;
  const auto* gi = find(directives, PMIX_GROUP_INFO);
  if (gi == nullptr) return out;
  const auto* a = gi->val.as_array();
  if (a == nullptr) {
    log::warning("server", "PMIX_GROUP_INFO is not an array of pmix_info_t: ignored");
    return out;
  }
  for (const auto& e : a->elements)
    if (const auto* i = e.as_info()) out.push_back(*i);
  return out;
}

// The local members' group info, for the host (PMIX_GROUP_ENDPT_DATA).
std::string encode_group_data(const member_infos& infos) {
  wire::GroupData d;
  for (const auto& [proc, list] : infos) {
    auto* m = d.add_members();
    protocol::to_wire(proc, m->mutable_proc());
    protocol::to_wire(list, m->mutable_info());
  }
  return d.SerializeAsString();
}

// Adds the members' group info the host returned (every node's blob,
// concatenated) to `infos`; a member's own entry here wins.
void decode_group_data(const std::string& bytes, member_infos& infos) {
  wire::GroupData d;
  if (!d.ParseFromString(bytes)) {
    log::error("server", "the host's PMIX_GROUP_ENDPT_DATA is not group data: ignored");
    return;
  }
  for (const auto& m : d.members()) {
    info_list list;
    std::string error;
    if (!protocol::from_wire(m.info(), list, &error)) {
      log::error("server", "unreadable group info from the host: ", error);
      continue;
    }
    infos.emplace(protocol::from_wire(m.proc()), std::move(list));
  }
}

// Keeps a group's member info under its context id (bounded: the oldest
// context ids go first).
void keep_group_infos(group_state& groups, std::uint64_t context_id, member_infos infos) {
  if (infos.empty()) return;
  groups.info_by_context[context_id] = std::move(infos);
  while (groups.info_by_context.size() > max_group_infos) {
    log::warning("server", "group info of context id ", groups.info_by_context.begin()->first,
                 " dropped: more than ", max_group_infos, " groups keep info");
    groups.info_by_context.erase(groups.info_by_context.begin());
  }
}

void forget_group_infos(group_state& groups, const std::string& nspace) {
  for (auto c = groups.info_by_context.begin(); c != groups.info_by_context.end();) {
    auto& members = c->second;
    for (auto m = members.begin(); m != members.end();)
      m = m->first.nspace == nspace ? members.erase(m) : std::next(m);
    c = members.empty() ? groups.info_by_context.erase(c) : std::next(c);
  }
}

// A deregistered namespace's processes leave every group (spec 004: nothing
// that names the namespace remains); a group left with no member goes, its
// name free again. (Destructs waiting for them fail with the namespace:
// fail_naming.)
void forget_group_members(group_state& groups, const std::string& nspace) {
  const auto of_it = [&](const proc_id& p) { return p.nspace == nspace; };
  for (auto g = groups.groups.begin(); g != groups.groups.end();) {
    auto& r = g->second;
    r.members.erase(std::remove_if(r.members.begin(), r.members.end(), of_it), r.members.end());
    r.constructed.erase(std::remove_if(r.constructed.begin(), r.constructed.end(), of_it), r.constructed.end());
    g = r.members.empty() ? groups.groups.erase(g) : std::next(g);
  }
  for (auto c = groups.pending_info.begin(); c != groups.pending_info.end();) {
    for (auto m = c->second.begin(); m != c->second.end();) m = of_it(m->first) ? c->second.erase(m) : std::next(m);
    c = c->second.empty() ? groups.pending_info.erase(c) : std::next(c);
  }
}

// PMIx_Get(member, key, {PMIX_GROUP_CONTEXT_ID}): what the member gave as
// PMIX_GROUP_INFO when the group of that context id was constructed.
caf::result<get_result> get_group_info(self_ptr self, const get_msg& msg, const info& qualifier) {
  auto& st = self->state;
  const auto ctx = qualifier.val.as_uint();
  if (!ctx) {
    log::error("server", "get from ", to_string(msg.from), ": PMIX_GROUP_CONTEXT_ID is not a number");
    return get_result{PMIX_ERR_BAD_PARAM, {}};
  }
  if (!st.may_see(msg.uid, msg.from.nspace, msg.target.nspace)) return get_result{PMIX_ERR_NOT_FOUND, {}};
  auto c = st.groups.info_by_context.find(*ctx);
  if (c == st.groups.info_by_context.end()) return get_result{PMIX_ERR_NOT_FOUND, {}};
  auto m = c->second.find(msg.target);
  if (m == c->second.end()) return get_result{PMIX_ERR_NOT_FOUND, {}};
  const auto* found = find(m->second, msg.key);
  if (found == nullptr) return get_result{PMIX_ERR_NOT_FOUND, {}};
  wire::RankData r;
  protocol::to_wire(msg.target, r.mutable_proc());
  auto* item = r.add_data();
  item->set_scope(PMIX_GLOBAL);
  protocol::to_wire(*found, item->mutable_info());
  return get_result{PMIX_SUCCESS, r.SerializeAsString()};
}

// A get of {group, r}: the group's r-th member (in the members' order).
// False when the group has no such member.
bool translate_group_target(const server_state& st, get_msg& msg) {
  if (st.nspaces.count(msg.target.nspace) != 0) return true;
  auto g = st.groups.groups.find(msg.target.nspace);
  if (g == st.groups.groups.end()) return true;
  const auto& members = g->second.constructed;
  if (msg.target.rank >= members.size() || members[msg.target.rank].rank == rank_wildcard) {
    log::error("server", "get from ", to_string(msg.from), ": group ", msg.target.nspace, " has no member ",
               msg.target.rank, " (", members.size(), " named one by one)");
    return false;
  }
  msg.target = members[msg.target.rank];
  return true;
}

// Tells the group's local members (but `except`) that `member` failed.
void notify_member_failed(self_ptr self, const std::string& name, const proc_id& member,
                          std::vector<proc_id> to) {
  to.erase(std::remove(to.begin(), to.end(), member), to.end());
  notify_procs(self, PMIX_GROUP_MEMBER_FAILED, member, to,
               {{PMIX_GROUP_ID, value::string(name), 0}, {PMIX_EVENT_AFFECTED_PROC, value::proc(member), 0}});
}

// A construct with PMIX_GROUP_OPTIONAL goes on without the members that
// ended before calling it (the members are told of each when it completes).
// False without the directive (the construct fails).
bool excuse_optional(self_ptr self, fence_tracker& t) {
  auto& st = self->state;
  if (!flag_set(t.info, PMIX_GROUP_OPTIONAL)) return false;
  for (std::size_t k = 0; k < t.expected.size(); ++k) {
    if (t.arrived_flags[k] || st.departed.count(t.expected[k]) == 0) continue;
    const auto gone = t.expected[k];
    log::info("server", "group ", t.tag, ": ", to_string(gone), " ended before joining; optional: going on");
    t.excuse(gone);
  }
  return true;
}

// A member died: each group of it that asked for PMIX_GROUP_NOTIFY_TERMINATION
// drops it and tells the others; a destruct under way no longer waits for it.
void member_died(self_ptr self, const proc_id& p) {
  auto& st = self->state;
  std::vector<std::uint64_t> moved;
  for (auto& [name, g] : st.groups.groups) {
    if (!g.notify_termination) continue;
    auto at = std::find(g.members.begin(), g.members.end(), p);
    if (at == g.members.end()) continue;
    g.members.erase(at);
    log::info("server", "group ", name, ": member ", to_string(p), " died; telling the others");
    notify_member_failed(self, name, p, g.members);
    for (auto id : st.group_destructs.waiting_for(p)) {
      auto* t = st.group_destructs.find(id);
      if (t == nullptr || t->tag != name) continue;
      t->excuse(p);
      moved.push_back(id);
    }
  }
  for (auto id : moved)
    if (auto* t = st.group_destructs.find(id)) advance_collective(self, collective::group_destruct, *t);
}

// A construct all of whose members have called (and the host, if asked,
// agreed): the group exists from now on.
void finish_construct(self_ptr self, std::uint64_t tracker, bool want_id, info_list host_info) {
  auto& st = self->state;
  auto* t = st.group_constructs.find(tracker);
  if (t == nullptr) return;
  group_record g;
  g.constructed = t->procs;
  for (const auto& p : t->procs)
    if (std::find(t->excused.begin(), t->excused.end(), p) == t->excused.end()) g.members.push_back(p);
  g.notify_termination = flag_set(t->info, PMIX_GROUP_NOTIFY_TERMINATION);
  if (const auto* given = find(host_info, PMIX_GROUP_CONTEXT_ID); given != nullptr && given->val.as_uint())
    g.context_id = *given->val.as_uint();
  else if (want_id)
    g.context_id = st.groups.next_context_id++;
  const auto name = t->tag;
  // The members' group info: the local ones' and what the host brought of
  // the others (not a result for the members).
  member_infos infos;
  if (auto p = st.groups.pending_info.find(name); p != st.groups.pending_info.end()) {
    infos = std::move(p->second);
    st.groups.pending_info.erase(p);
  }
  for (auto i = host_info.begin(); i != host_info.end();) {
    if (i->key != PMIX_GROUP_ENDPT_DATA) {
      ++i;
      continue;
    }
    if (const auto* bytes = i->val.as_string()) decode_group_data(*bytes, infos);
    i = host_info.erase(i);
  }
  if (g.context_id)
    keep_group_infos(st.groups, *g.context_id, std::move(infos));
  else if (!infos.empty())
    log::debug("server", "group ", name, ": PMIX_GROUP_INFO without a context id is not kept");
  auto results = group_results(name, g, std::move(host_info));
  for (const auto& gone : t->excused) notify_member_failed(self, name, gone, g.members);
  st.groups.groups[name] = std::move(g);
  wire::InfoReply body;
  protocol::to_wire(results, body.mutable_info());
  st.group_constructs.complete(
      tracker, fence_result{PMIX_SUCCESS, std::make_shared<const std::string>(body.SerializeAsString()), nullptr});
}

// Every local member of a construct or destruct has called: it completes
// here when all members are local (without the host, as OpenPMIx's server
// does for a group of its own clients), else the host's group up-call
// joins the other nodes.
void advance_group(self_ptr self, collective kind, fence_tracker& t) {
  auto& st = self->state;
  t.host_called = true;
  const bool construct = kind == collective::group_construct;
  const bool want_id = wants_context_id(t.info);
  if (t.all_local) {
    // What the server honours itself; the host judges the directives of a
    // group it joins.
    if (const auto rc = directives::check(construct ? "PMIx_Group_construct" : "PMIx_Group_destruct", t.info,
                                          supported::group);
        rc != PMIX_SUCCESS)
      return fail_collective(self, kind, t.id, rc);
    if (construct) return finish_construct(self, t.id, want_id, {});
    st.groups.groups.erase(t.tag);
    return st.group_destructs.complete(t.id, fence_result{PMIX_SUCCESS, nullptr, nullptr});
  }
  const auto tracker = t.id;
  info_list directives = t.info;
  if (construct)
    if (auto p = st.groups.pending_info.find(t.tag); p != st.groups.pending_info.end())
      directives.push_back(
          {PMIX_GROUP_ENDPT_DATA, value::bytes(PMIX_BYTE_OBJECT, encode_group_data(p->second)), 0});
  const bool asked = st.ctx->host->group(
      construct ? PMIX_GROUP_CONSTRUCT : PMIX_GROUP_DESTRUCT, t.tag, t.procs, directives,
      [addr = self->address(), gate = st.ctx->gate, tracker, construct](pmix_status_t status, info_list info,
                                                                      std::string) {
        gate->send_if_open(addr, group_upcall_done{tracker, construct, status, std::move(info)});
      });
  if (asked) return;
  log::warning("server", "a group ", construct ? "construct" : "destruct",
               " spans other nodes but the host has no group up-call");
  fail_collective(self, kind, tracker, PMIX_ERR_NOT_SUPPORTED);
}

void on_group_upcall_done(self_ptr self, group_upcall_done& r) {
  auto& st = self->state;
  const auto kind = r.construct ? collective::group_construct : collective::group_destruct;
  auto* t = st.book(kind).find(r.tracker);
  if (t == nullptr) return;
  if (r.status != PMIX_SUCCESS) return fail_collective(self, kind, r.tracker, r.status);
  if (r.construct) return finish_construct(self, r.tracker, wants_context_id(t->info), std::move(r.info));
  st.groups.groups.erase(t->tag);
  st.group_destructs.complete(r.tracker, fence_result{PMIX_SUCCESS, nullptr, nullptr});
}

// A process of this node that the server serves (invitations go to local
// processes only: see docs/architecture.md, "Groups").
bool served_here(const server_state& st, const proc_id& p) {
  auto it = st.nspaces.find(p.nspace);
  if (it == st.nspaces.end() || p.rank == rank_wildcard) return false;
  const auto& local = it->second.locality.local_ranks;
  return std::binary_search(local.begin(), local.end(), p.rank);
}

// Every invited process has answered: the leader and those that accepted
// form the group.
void finish_invite(self_ptr self, const std::string& name) {
  auto& st = self->state;
  auto it = st.groups.invites.find(name);
  if (it == st.groups.invites.end() || !it->second.invited.empty()) return;
  auto invite = std::move(it->second);
  st.groups.invites.erase(it);
  group_record g;
  g.members.push_back(invite.leader);
  g.members.insert(g.members.end(), invite.accepted.begin(), invite.accepted.end());
  g.constructed = g.members;
  if (invite.want_context_id) g.context_id = st.groups.next_context_id++;
  const auto results = group_results(name, g);
  const auto members = g.members;
  st.groups.groups[name] = std::move(g);
  const auto answer = group_answer(PMIX_SUCCESS, results);
  invite.leader_reply.deliver(answer);
  for (auto& rp : invite.accepted_replies) rp.deliver(answer);
  notify_procs(self, PMIX_GROUP_CONSTRUCT_COMPLETE, invite.leader, members, results);
}

// An invited process that can no longer answer declines.
void invitee_gone(self_ptr self, const proc_id& p) {
  auto& st = self->state;
  std::vector<std::string> touched;
  for (auto& [name, invite] : st.groups.invites) {
    auto at = std::find(invite.invited.begin(), invite.invited.end(), p);
    if (at == invite.invited.end()) continue;
    invite.invited.erase(at);
    notify_procs(self, PMIX_GROUP_INVITE_FAILED, p, {invite.leader}, {{PMIX_GROUP_ID, value::string(name), 0}});
    touched.push_back(name);
  }
  for (const auto& name : touched) finish_invite(self, name);
}

caf::result<fence_result> on_group(self_ptr self, group_msg& msg) {
  auto& st = self->state;
  if (unseen(st, "a group operation", msg.from, msg.uid, msg.procs) != nullptr ||
      (msg.leader && unseen(st, "a group operation", msg.from, msg.uid, {*msg.leader}) != nullptr))
    return group_answer(PMIX_ERR_NOT_FOUND);
  switch (static_cast<wire::GroupOp>(msg.op)) {
    case wire::GROUP_CONSTRUCT:
    case wire::GROUP_DESTRUCT: {
      const bool construct = msg.op == wire::GROUP_CONSTRUCT;
      const auto kind = construct ? collective::group_construct : collective::group_destruct;
      fence_msg f;
      f.from = msg.from;
      f.tag = msg.name;
      f.info = std::move(msg.directives);
      if (construct) {
        if (st.groups.groups.count(msg.name) != 0 || st.groups.invites.count(msg.name) != 0) {
          log::error("server", "group ", msg.name, " from ", to_string(msg.from), ": it exists already");
          return group_answer(PMIX_ERR_EXISTS);
        }
        f.procs = std::move(msg.procs);
      } else {
        auto g = st.groups.groups.find(msg.name);
        if (g == st.groups.groups.end()) return group_answer(PMIX_ERR_NOT_FOUND);
        f.procs = g->second.constructed;
      }
      auto rp = self->make_response_promise();
      pmix_status_t status = PMIX_SUCCESS;
      auto given = construct ? group_info_of(f.info) : info_list{};
      auto* t = st.book(kind).contribute(f, [rp](const fence_result& r) mutable { rp.deliver(r); }, status);
      if (t == nullptr) {
        log::error("server", name_of(kind), " of ", msg.name, " from ", to_string(msg.from),
                   " refused: ", PMIx_Error_string(status));
        rp.deliver(group_answer(status));
        return rp;
      }
      if (!given.empty()) st.groups.pending_info[msg.name][msg.from] = std::move(given);
      // A destruct waits for the members there are now: not for those that
      // left, or died where the group asked to be told.
      if (!construct) {
        const auto& g = st.groups.groups.at(msg.name);
        for (const auto& p : g.constructed)
          if (std::find(g.members.begin(), g.members.end(), p) == g.members.end()) t->excuse(p);
      }
      time_collective(self, kind, *t, f.info);
      advance_collective(self, kind, *t);
      return rp;
    }
    case wire::GROUP_INVITE: {
      if (st.groups.groups.count(msg.name) != 0 || st.groups.invites.count(msg.name) != 0)
        return group_answer(PMIX_ERR_EXISTS);
      if (const auto rc = directives::check("PMIx_Group_invite", msg.directives, supported::group);
          rc != PMIX_SUCCESS)
        return group_answer(rc);
      std::vector<proc_id> invited;
      for (const auto& p : msg.procs) {
        if (p == msg.from || std::find(invited.begin(), invited.end(), p) != invited.end()) continue;
        if (!served_here(st, p)) {
          log::warning("server", "group ", msg.name, ": ", to_string(p),
                       " is not a process of this node: invitations across nodes are not supported");
          return group_answer(PMIX_ERR_NOT_SUPPORTED);
        }
        invited.push_back(p);
      }
      if (invited.empty()) return group_answer(PMIX_ERR_BAD_PARAM);
      pending_invite invite;
      invite.leader = msg.from;
      invite.want_context_id = wants_context_id(msg.directives);
      invite.invited = invited;
      auto rp = self->make_response_promise();
      invite.leader_reply = rp;
      st.groups.invites.emplace(msg.name, std::move(invite));
      notify_procs(self, PMIX_GROUP_INVITED, msg.from, invited, {{PMIX_GROUP_ID, value::string(msg.name), 0}});
      return rp;
    }
    case wire::GROUP_JOIN: {
      auto it = st.groups.invites.find(msg.name);
      if (it == st.groups.invites.end()) return group_answer(PMIX_ERR_NOT_FOUND);
      auto& invite = it->second;
      auto at = std::find(invite.invited.begin(), invite.invited.end(), msg.from);
      if (at == invite.invited.end() || (msg.leader && *msg.leader != invite.leader))
        return group_answer(PMIX_ERR_BAD_PARAM);
      invite.invited.erase(at);
      notify_procs(self, msg.accept ? PMIX_GROUP_INVITE_ACCEPTED : PMIX_GROUP_INVITE_DECLINED, msg.from,
                   {invite.leader}, {{PMIX_GROUP_ID, value::string(msg.name), 0}});
      caf::result<fence_result> answer = group_answer(PMIX_SUCCESS);
      if (msg.accept) {
        auto rp = self->make_response_promise();
        invite.accepted.push_back(msg.from);
        invite.accepted_replies.push_back(rp);
        answer = rp;
      }
      finish_invite(self, msg.name);
      return answer;
    }
    case wire::GROUP_LEAVE: {
      auto g = st.groups.groups.find(msg.name);
      if (g == st.groups.groups.end()) return group_answer(PMIX_ERR_NOT_FOUND);
      auto& members = g->second.members;
      auto at = std::find(members.begin(), members.end(), msg.from);
      if (at == members.end()) return group_answer(PMIX_ERR_BAD_PARAM);
      members.erase(at);
      notify_procs(self, PMIX_GROUP_LEFT, msg.from, members, {{PMIX_GROUP_ID, value::string(msg.name), 0}});
      if (members.empty()) st.groups.groups.erase(g);
      return group_answer(PMIX_SUCCESS);
    }
    default:
      break;
  }
  return group_answer(PMIX_ERR_BAD_PARAM);
}

// ---- process sets, resources, inventory ---------------------------------------

// PMIx_server_define_process_set / _delete_process_set: kept here and told
// to every local client and tool.
void on_pset(self_ptr self, pset_msg& msg) {
  auto& st = self->state;
  event ev;
  ev.source = st.ctx->server;
  ev.range = PMIX_RANGE_LOCAL;
  ev.info.push_back({PMIX_PSET_NAME, value::string(msg.name), 0});
  if (msg.define) {
    if (st.psets.count(msg.name) != 0) {
      log::error("server", "process set ", msg.name, " exists already");
      return msg.done->deliver(PMIX_ERR_EXISTS);
    }
    ev.status = PMIX_PROCESS_SET_DEFINE;
    ev.info.push_back({PMIX_PSET_MEMBERS, proc_array(msg.members), 0});
    st.psets.emplace(msg.name, std::move(msg.members));
  } else {
    if (st.psets.erase(msg.name) == 0) {
      log::error("server", "process set ", msg.name, " to delete is not defined");
      return msg.done->deliver(PMIX_ERR_NOT_FOUND);
    }
    ev.status = PMIX_PROCESS_SET_DELETE;
  }
  route_event(self, ev, caf::actor{});
  msg.done->deliver(PMIX_SUCCESS);
}

// Whether a query's qualifiers name a namespace (PMIX_NSPACE, PMIX_PROCID)
// the asker may not see.
bool names_unseen(const server_state& st, const pset_query_msg& msg, const query& q) {
  for (const auto& i : q.qualifiers) {
    std::string ns;
    if (i.key == PMIX_NSPACE && i.val.as_string() != nullptr) ns = *i.val.as_string();
    else if (i.key == PMIX_PROCID && i.val.as_proc() != nullptr) ns = i.val.as_proc()->nspace;
    else continue;
    if (!st.may_see(msg.uid, msg.from.nspace, ns)) {
      log::warning("server", "a query from ", to_string(msg.from), " (uid ", msg.uid, ") names ", ns,
                   ", another user's job: refused");
      return true;
    }
  }
  return false;
}

query_plan on_pset_query(self_ptr self, const pset_query_msg& msg) {
  auto& st = self->state;
  query_plan plan;
  info_list& out = plan.answered;
  auto is_pset_key = [](const std::string& k) {
    return k == PMIX_QUERY_NUM_PSETS || k == PMIX_QUERY_PSET_NAMES || k == PMIX_QUERY_PSET_MEMBERSHIP;
  };
  // Process sets are the host's, not a user's: a member the asker may not
  // see is left out of a membership.
  auto seen_members = [&](const std::vector<proc_id>& members) {
    std::vector<proc_id> seen;
    for (const auto& p : members)
      if (st.may_see(msg.uid, msg.from.nspace, p.nspace)) seen.push_back(p);
    return seen;
  };
  for (const auto& q : msg.queries) {
    if (names_unseen(st, msg, q)) {
      ++plan.refused;
      continue;
    }
    query theirs{{}, q.qualifiers};
    for (const auto& k : q.keys) {
      if (!is_pset_key(k)) {
        theirs.keys.push_back(k);
        continue;
      }
      if (k == PMIX_QUERY_NUM_PSETS) {
        out.push_back({PMIX_QUERY_NUM_PSETS, value::unsigned_(PMIX_SIZE, st.psets.size()), 0});
      } else if (k == PMIX_QUERY_PSET_NAMES) {
        std::string names;
        for (const auto& [name, members] : st.psets) names += (names.empty() ? "" : ",") + name;
        out.push_back({PMIX_QUERY_PSET_NAMES, value::string(names), 0});
      } else if (k == PMIX_QUERY_PSET_MEMBERSHIP) {
        const auto* name = find(q.qualifiers, PMIX_PSET_NAME);
        const auto* text = name == nullptr ? nullptr : name->val.as_string();
        auto it = text == nullptr ? st.psets.end() : st.psets.find(*text);
        if (it != st.psets.end()) out.push_back({PMIX_QUERY_PSET_MEMBERSHIP, proc_array(seen_members(it->second)), 0});
      }
    }
    if (!theirs.keys.empty()) plan.for_host.push_back(std::move(theirs));
  }
  return plan;
}

// PMIx_server_register_resources / _deregister_resources: node-level data
// every job of this node carries, from now on and in the namespaces already
// registered (where the host's registration has the key, it wins).
void on_resources(self_ptr self, resources_msg& msg) {
  auto& st = self->state;
  info_list added, removed;  // removed: the values replaced or deregistered
  for (auto& i : msg.info) {
    auto at = std::find_if(st.resources.begin(), st.resources.end(), [&](const info& r) { return r.key == i.key; });
    if (at != st.resources.end()) {
      removed.push_back(std::move(*at));
      st.resources.erase(at);
    }
    if (msg.add) {
      st.resources.push_back(i);
      added.push_back(std::move(i));
    }
  }
  for (const auto& [name, entry] : st.nspaces) {
    if (entry.tool) continue;
    // In order: the old values go, then the new ones come.
    if (!removed.empty()) self->send(entry.actor, trim_job_msg{removed});
    if (added.empty()) continue;
    extend_job_msg extend{name, added, actors::make_reply<no_result>([](pmix_status_t, no_result) {})};
    extend.unless_present = true;
    self->send(entry.actor, std::move(extend));
  }
  msg.done->deliver(PMIX_SUCCESS);
}

// This node's inventory: its host name and the topology the server shares;
// or the one another node's server collected and the host delivered.
void on_collect_inventory(self_ptr self, collect_inventory_msg& msg) {
  auto& st = self->state;
  if (msg.host && *msg.host != st.ctx->hostname) {
    auto it = st.inventories.find(*msg.host);
    if (it == st.inventories.end()) return msg.done->deliver(PMIX_ERR_NOT_FOUND, info_list{});
    return msg.done->deliver(PMIX_SUCCESS, it->second);
  }
  info_list out{{PMIX_HOSTNAME, value::string(st.ctx->hostname), 0}};
  for (const auto& i : st.ctx->job_info)
    if (i.key == PMIX_HWLOC_XML_V2) out.push_back(i);
  msg.done->deliver(PMIX_SUCCESS, std::move(out));
}

}  // namespace

caf::behavior server_actor(caf::stateful_actor<server_state>* self, context_ptr ctx) {
  self->state.ctx = std::move(ctx);
  self->set_default_handler(caf::drop);
  // Children (namespaces, peers) are linked to us so that our exit at
  // finalize takes them down; a child's own failure must not take us down.
  self->set_exit_handler([=](caf::exit_msg& em) {
    if (em.reason == caf::exit_reason::normal) return;
    if (!em.source || em.reason == caf::exit_reason::user_shutdown) {
      self->quit(em.reason);
      return;
    }
    log::error("server", "an actor of the server failed: ", to_string(em.reason));
    on_nspace_failed(self, em.source);
  });
  // CAF tries the handlers in order: the per-request ones come first.
  return {
      [=](fence_msg& msg) { on_fence(self, msg); },
      [=](connect_procs_msg& msg) { return on_connect_procs(self, msg); },
      [=](get_msg& msg) { return on_get(self, msg); },
      [=](collective_timeout_atom, std::uint8_t kind, std::uint64_t id, std::int64_t deadline) {
        on_collective_timeout(self, kind, id, deadline);
      },
      [=](const get_cancel_msg& msg) {
        // A direct modex the host has not answered: its late answer finds
        // nothing; a get the namespace holds is its (or its rank's) to drop.
        auto& st = self->state;
        for (auto it = st.dmodex_upcalls.begin(); it != st.dmodex_upcalls.end();) {
          if (it->second.asker == msg.asker && (msg.request == 0 || it->second.request == msg.request)) {
            it->second.promise.deliver(get_result{PMIX_ERR_TIMEOUT, {}});
            it = st.dmodex_upcalls.erase(it);
          } else {
            ++it;
          }
        }
        if (auto it = st.nspaces.find(msg.target.nspace); it != st.nspaces.end()) self->send(it->second.actor, msg);
      },
      [=](register_nspace_msg& msg) { on_register_nspace(self, msg); },
      [=](deregister_nspace_msg& msg) { on_deregister_nspace(self, msg); },
      [=](register_client_msg& msg) { on_register_client(self, msg); },
      [=](register_clients_msg& msg) { on_register_clients(self, *msg.batch); },
      [=](deregister_client_msg& msg) { on_deregister_client(self, msg); },
      [=](setup_fork_msg& msg) {
        msg.done->deliver(PMIX_SUCCESS, client_environment(*self->state.ctx, msg.proc));
      },
      [=](connect_msg& msg) { return on_connect(self, msg); },
      [=](tool_assigned_msg& msg) { on_tool_assigned(self, msg); },
      [=](const tool_nspace_idle_msg& msg) { on_tool_nspace_idle(self, msg); },
      [=](register_epilog_msg& msg) -> caf::result<pmix_status_t> {
        auto it = self->state.nspaces.find(msg.nspace);
        if (it == self->state.nspaces.end()) return pmix_status_t{PMIX_ERR_NOT_FOUND};
        if (!it->second.tool) {
          // Kept to hand a restarted namespace actor: within the bound the
          // namespace's own epilog keeps (actors/epilog.hpp).
          const auto adds = epilog::weight(msg.directives);
          if (it->second.epilog_weight + adds > epilog::max_weight) {
            log::error("server", msg.nspace, ": cleanup refused: the job's registrations would weigh more than ",
                       epilog::max_weight, " bytes");
            return pmix_status_t{PMIX_ERR_OUT_OF_RESOURCE};
          }
          it->second.epilogs.push_back(msg);
          it->second.epilog_weight += adds;
        }
        auto rp = self->make_response_promise();
        rp.delegate(it->second.actor, std::move(msg));
        return rp;
      },
      [=](const rank_state_msg& msg) { on_rank_state(self, msg); },
      [=](nspace_job_msg& msg) {
        auto it = self->state.nspaces.find(msg.nspace);
        if (it != self->state.nspaces.end() && !it->second.tool) it->second.job = std::move(msg.job);
      },
      [=](upcall_result& r) { on_upcall_result(self, r); },
      [=](iof_pull_msg& msg) { return on_iof_pull(self, msg); },
      [=](const iof_deregister_msg& msg) -> pmix_status_t {
        return self->state.iof.remove(msg.peer, msg.ref) ? PMIX_SUCCESS : PMIX_ERR_NOT_FOUND;
      },
      [=](const iof_forget_msg& msg) {
        auto& st = self->state;
        st.iof.forget(msg.peer);
        for (auto& [id, pending] : st.iof_upcalls)
          if (pending.first.peer == msg.peer) pending.first.peer = nullptr;  // its host's answer adds nothing
      },
      [=](host_task_msg& msg) {
        if (msg.run) msg.run();
      },
      [=](const iof_output_msg& msg) { on_iof_output(self, msg); },
      [=](group_msg& msg) { return on_group(self, msg); },
      [=](pset_msg& msg) { on_pset(self, msg); },
      [=](const pset_query_msg& msg) { return on_pset_query(self, msg); },
      [=](const spawned_msg& msg) {
        auto& st = self->state;
        if (!st.spawned_by.emplace(msg.nspace, msg.uid).second) return;
        st.spawned_order.push_back(msg.nspace);
        if (st.spawned_order.size() > server_state::max_spawned) {
          st.spawned_by.erase(st.spawned_order.front());
          st.spawned_order.pop_front();
        }
      },
      [=](resources_msg& msg) { on_resources(self, msg); },
      [=](deliver_inventory_msg& msg) {
        self->state.inventories[msg.host] = std::move(msg.info);
        msg.done->deliver(PMIX_SUCCESS);
      },
      [=](collect_inventory_msg& msg) { on_collect_inventory(self, msg); },
      [=](group_upcall_done& r) { on_group_upcall_done(self, r); },
      [=](snapshot_msg& msg) { on_snapshot(self, msg); },
      [=](collect_job_info_msg& msg) { on_collect_job_info(self, msg); },
      [=](extend_job_msg& msg) { on_extend_job(self, msg); },
      [=](dmodex_request_msg& msg) { on_dmodex_request(self, msg); },
      [=](notify_msg& msg) {
        route_event(self, msg.ev, caf::actor{});
        msg.done->deliver(PMIX_SUCCESS);
      },
      [=](client_event_msg& msg) { return on_client_event(self, msg); },
      [=](task_msg& msg) {
        // A short-lived actor of its own: the task (user code) never runs
        // inside an actor that owns state. The task is a spawn argument, not
        // a capture: CAF 0.17.6's spawn of a function without arguments
        // binds a reference to `*args_` of a null shared_ptr<std::tuple<>>
        // (caf/detail/init_fun_factory.hpp), undefined behaviour that UBSan
        // aborts on; with one argument the tuple exists.
        self->spawn([](caf::event_based_actor*, std::function<void()> task) { task(); },
                    std::move(msg.task));
      },
  };
}

}  // namespace pmix::actors
