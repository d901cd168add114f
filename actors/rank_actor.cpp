#include "actors/rank_actor.hpp"

#include <algorithm>

#include <caf/system_messages.hpp>

#include "actors/shared_behavior.hpp"
#include "actors/upcall.hpp"
#include "server/host_module.hpp"
#include <pmix.h>

#include "common/log.hpp"

namespace pmix::actors {

const char* rank_state::name = "pmix.rank";

peer_ref* rank_state::find_peer(const caf::actor& a) {
  if (peerid && peerid->actor == a) return &*peerid;
  for (auto& p : displaced)
    if (p.actor == a) return &p;
  return nullptr;
}

int rank_state::live_unfinalized() const {
  int n = 0;
  if (peerid && !peerid->closed && !peerid->finalized) ++n;
  for (const auto& p : displaced)
    if (!p.closed && !p.finalized) ++n;
  return n;
}

rank_state::~rank_state() {
  if (me == nullptr || me->fail_state() == caf::exit_reason::normal) return;
  // What monitors would have sent, without one per peer and one for the
  // namespace in this actor's list: the namespace and every peer of the
  // rank learn of the failure (a peer closes its connection; one whose
  // connect this rank answered learns it even before that answer reaches
  // it: peer_actor.cpp, check_rank_failed).
  // The peers first: the namespace may hold an answer for one until it has
  // its own (the fault plane's connect_answer point).
  const caf::down_msg down{me->address(), me->fail_state()};
  if (peerid && peerid->actor) caf::anon_send(peerid->actor, down);
  for (const auto& p : displaced)
    if (p.actor) caf::anon_send(p.actor, down);
  if (nspace) caf::anon_send(nspace, down);
}

bool rank_state::finalized_rank() const {
  bool any = peerid && peerid->finalized;
  for (const auto& p : displaced) any = any || p.finalized;
  return !tool && any && live_unfinalized() == 0;
}

namespace {

using self_ptr = caf::stateful_actor<rank_state, lean_actor>*;

// Tells the namespace when the rank becomes finalized or stops being so.
void sync_finalized(self_ptr self) {
  auto& st = self->state;
  const bool now = st.finalized_rank();
  if (now == st.reported_finalized) return;
  st.reported_finalized = now;
  self->send(st.nspace, rank_finalized_msg{st.pname.rank, now});
}

void adjust_nfinalized(self_ptr self, int delta) {
  self->send(self->state.nspace, finalized_count_msg{delta});
}

// Frees a tombstone or stranded peer: the peer actor terminates and, if it was
// counted as finalized, nfinalized drops with it.
void release_peer(self_ptr self, const peer_ref& p) {
  self->send(p.actor, release_msg{});
  if (p.finalized) adjust_nfinalized(self, -1);
}

void forward_get(self_ptr self, const caf::actor& peer, get_msg msg, caf::response_promise rp) {
  self->request(peer, caf::infinite, std::move(msg))
      .then([rp](get_result& r) mutable { rp.deliver(std::move(r)); },
            [rp](caf::error&) mutable { rp.deliver(get_result{PMIX_ERR_NOT_FOUND, {}}); });
}

void report_state(self_ptr self, bool live, pmix_status_t reason) {
  auto& st = self->state;
  const rank_state_msg msg{st.pname, live, reason};
  self->send(st.server, msg);
  self->send(st.nspace, msg);
}

caf::result<connect_result> on_connect(self_ptr self, connect_msg& msg) {
  auto& st = self->state;
  // A peer that ends without being released (it failed) is seen as a
  // process gone (on_peer_down).
  if (msg.peer) self->monitor(msg.peer);
  st.gone = PMIX_SUCCESS;
  // The registration lives with the server actor (a registered rank costs
  // no actor until a process connects); the current one comes with every
  // connect. A rank of a job the host registered is served only while the
  // host has registered a process for it (PMIx_server_register_client, not
  // deregistered since): a process's credentials are checked against that
  // registration, whoever it claims to be, client or tool.
  if (!st.tool) {
    if (!msg.reg) {
      log::error("rank", to_string(st.pname), ": connection from pid ", msg.cred.pid, " uid ", msg.cred.uid,
                 " refused: no process of this rank is registered");
      st.registered = false;
      return connect_result{PMIX_ERR_NOT_FOUND, {}, {}, nullptr};
    }
    st.registered = true;
    st.uid = msg.reg->uid;
    st.gid = msg.reg->gid;
    st.server_object = msg.reg->server_object;
  }
  // A process over TCP from this host is known by its user (the kernel's
  // answer) and not its group, which it then takes from the registration
  // (peer_actor.cpp, on_connect).
  const bool group_unknown = msg.cred.socket_inode != 0 && msg.cred.pid == 0;
  if (st.registered && msg.cred.uid != 0 &&
      (msg.cred.uid != st.uid || (!group_unknown && msg.cred.gid != st.gid))) {
    log::error("rank", to_string(st.pname), ": connection from uid ", msg.cred.uid, " gid ",
               msg.cred.gid, " but the rank was registered for uid ", st.uid, " gid ", st.gid);
    return connect_result{PMIX_ERR_INVALID_CRED, {}, {}, nullptr};
  }
  // Tools may run several processes under one identity (siblings); a client
  // rank only with PMIX_ALLOW_CLIENT_CLONES.
  if (!st.tool && st.live_unfinalized() > 0 && !st.ctx->allow_clones) {
    log::error("rank", to_string(st.pname), ": a second live process (pid ", msg.cred.pid,
               ") connected; clones are refused unless PMIX_ALLOW_CLIENT_CLONES is set");
    return connect_result{PMIX_ERR_NOT_SUPPORTED, {}, {}, nullptr};
  }
  // Reclaim on reconnect (spec 004): a tombstone at peerid is freed before
  // the new peer takes the slot (with no live process left it is the
  // reclaim; with a live clone it would be stranded). A live peer there (a
  // clone's parent, or a finalize racing this connect) is displaced.
  if (st.peerid) {
    if (st.peerid->closed)
      release_peer(self, *st.peerid);
    else
      st.displaced.push_back(*st.peerid);
    st.peerid.reset();
  }
  st.peerid = peer_ref{msg.peer, false, false};
  if (++st.proc_cnt == 1) report_state(self, true, PMIX_SUCCESS);
  sync_finalized(self);
  // Requests that waited for a process of this rank go to the new peer.
  auto waiting = std::move(st.waiting_gets);
  st.waiting_gets.clear();
  for (auto& [get, rp] : waiting) forward_get(self, msg.peer, std::move(get), std::move(rp));

  auto rp = self->make_response_promise();
  const auto upcall = st.next_upcall++;
  // Pure tools were announced to the host through tool_connected instead.
  const bool asked =
      !st.tool && st.ctx->host->client_connected(st.pname, st.server_object, {},
                                                 reply_to_actor(self->address(), st.ctx, upcall));
  if (!asked) {
    connect_result r{PMIX_SUCCESS, caf::actor_cast<caf::actor>(self), {}, st.server_object, st.pname};
    if (st.registered) r.registered_gid = st.gid;
    rp.deliver(std::move(r));
    return rp;
  }
  st.upcalls.push_back(rank_state::pending_upcall{upcall, rp, msg.peer, true});
  return rp;
}

caf::result<pmix_status_t> on_peer_finalize(self_ptr self, const peer_finalize_msg& msg) {
  auto& st = self->state;
  auto* p = st.find_peer(msg.peer);
  if (p == nullptr || p->finalized) return pmix_status_t{PMIX_ERR_BAD_PARAM};
  p->finalized = true;  // nfinalized counts it from now until it is reclaimed
  adjust_nfinalized(self, +1);
  sync_finalized(self);
  auto rp = self->make_response_promise();
  const auto upcall = st.next_upcall++;
  const bool asked =
      !st.tool && st.ctx->host->client_finalized(st.pname, st.server_object,
                                                 reply_to_actor(self->address(), st.ctx, upcall));
  if (!asked) {
    rp.deliver(pmix_status_t{PMIX_SUCCESS});
    return rp;
  }
  st.upcalls.push_back(rank_state::pending_upcall{upcall, rp, {}, false});
  return rp;
}

void on_peer_lost(self_ptr self, const peer_lost_msg& msg) {
  auto& st = self->state;
  auto* p = st.find_peer(msg.peer);
  if (p == nullptr || p->closed) return;
  p->closed = true;
  --st.proc_cnt;
  const bool referenced = st.peerid && st.peerid->actor == msg.peer;
  if (referenced && !st.tool) {
    // Still the rank's referenced client peer: it stays as a tombstone and
    // nothing else changes (a collective or get may still resolve the rank
    // through it).
  } else if (referenced) {
    // A pure tool: freed at once; peerid moves to a live tool sibling of the
    // same identity if there is one, else it is unset (spec 004).
    release_peer(self, *st.peerid);
    st.peerid.reset();
    auto sibling = std::find_if(st.displaced.rbegin(), st.displaced.rend(),
                                [](const peer_ref& r) { return !r.closed; });
    if (sibling != st.displaced.rend()) {
      st.peerid = *sibling;
      st.displaced.erase(std::next(sibling).base());
    }
  } else {
    // Stranded: a newer peer owns the slot. Freed at once.
    auto it = std::find_if(st.displaced.begin(), st.displaced.end(),
                           [&](const peer_ref& r) { return r.actor == msg.peer; });
    release_peer(self, *it);
    st.displaced.erase(it);
  }
  // While the server finalizes (its gate closed first, then every
  // connection shut) a connection's end is the server's doing, not the
  // process's: a collective still open must not fail for the others as if a
  // process had died (PMIX_ERR_PROC_TERM_WO_SYNC, found in events_test_pool:
  // a fence waiting on the board got that instead of losing its server).
  if (st.proc_cnt == 0 && st.ctx->gate->is_open()) {
    const pmix_status_t reason = msg.finalized ? PMIX_ERR_UNREACH : PMIX_ERR_PROC_TERM_WO_SYNC;
    if (!msg.finalized)
      log::warning("rank", to_string(st.pname), " terminated without calling PMIx_Finalize");
    report_state(self, false, reason);
  }
  sync_finalized(self);
}

// A peer actor ended. Released peers are no longer referenced; one that
// failed (ended abnormally: found by the fault plane, kill:peer,
// docs/fault-injection.md) is taken as a process gone without its socket
// closing, and the dead actor is no longer kept, not even as a tombstone
// (there is nothing left to answer from).
void on_peer_down(self_ptr self, const caf::down_msg& dm) {
  auto& st = self->state;
  auto is_it = [&](const peer_ref& r) { return r.actor && r.actor.address() == dm.source; };
  auto find = [&]() -> peer_ref* {
    if (st.peerid && is_it(*st.peerid)) return &*st.peerid;
    auto it = std::find_if(st.displaced.begin(), st.displaced.end(), is_it);
    return it == st.displaced.end() ? nullptr : &*it;
  };
  peer_ref* p = find();
  if (p == nullptr) return;
  log::warning("rank", to_string(st.pname), ": its peer actor failed");
  if (!p->closed) on_peer_lost(self, peer_lost_msg{p->actor, p->finalized});
  p = find();
  if (p == nullptr) return;
  if (p->finalized) adjust_nfinalized(self, -1);
  if (st.peerid && is_it(*st.peerid)) {
    // A get must not wait for a process that is gone (found by the fault
    // plane, seed 7, kill:peer:at=init_ack:rank=2): answered as its dead
    // peer would have answered.
    st.gone = p->finalized ? PMIX_ERR_NOT_FOUND : PMIX_ERR_PROC_TERM_WO_SYNC;
    st.peerid.reset();
  } else {
    st.displaced.erase(std::find_if(st.displaced.begin(), st.displaced.end(), is_it));
  }
  sync_finalized(self);
}

// Frees every peer of the rank (deregistration) and answers whatever waits;
// `done` runs once every peer has answered, i.e. its epilog has run
// (spec 004: deregistration returns after the peers' epilogs).
void release_everything(self_ptr self, std::function<void()> done) {
  auto& st = self->state;
  std::vector<caf::actor> peers;
  if (st.peerid) peers.push_back(st.peerid->actor);
  for (const auto& p : st.displaced) peers.push_back(p.actor);
  st.peerid.reset();
  st.displaced.clear();
  sync_finalized(self);
  auto remaining = std::make_shared<std::size_t>(peers.size());
  auto finish = std::make_shared<std::function<void()>>(std::move(done));
  for (const auto& p : peers)
    self->request(p, caf::infinite, release_msg{})
        .then(
            [=](bool) {
              if (--*remaining == 0) (*finish)();
            },
            [=](caf::error&) {
              if (--*remaining == 0) (*finish)();
            });
  for (auto& [get, rp] : st.waiting_gets) rp.deliver(get_result{PMIX_ERR_NOT_FOUND, {}});
  st.waiting_gets.clear();
  for (auto& u : st.upcalls) {
    if (u.connect)
      u.promise.deliver(connect_result{PMIX_ERR_NOT_FOUND, {}, {}, nullptr});
    else
      u.promise.deliver(pmix_status_t{PMIX_SUCCESS});
  }
  st.upcalls.clear();
  if (peers.empty()) (*finish)();
}

}  // namespace

namespace {

// The rank actor: its behavior is built once and shared by every rank
// actor (actors/shared_behavior.hpp); its handlers find their actor with
// current().
class rank_actor_impl final : public shared_behavior_actor<rank_state> {
 public:
  rank_actor_impl(caf::actor_config& cfg, proc_id pname, bool tool, caf::actor nspace, caf::actor server,
                  context_ptr ctx)
      : shared_behavior_actor<rank_state>(cfg) {
    state.pname = std::move(pname);
    state.tool = tool;
    state.nspace = std::move(nspace);
    state.server = std::move(server);
    state.ctx = std::move(ctx);
  }

  caf::behavior make_behavior() override;
};

caf::stateful_actor<rank_state, lean_actor>* current() { return rank_actor_impl::current(); }

caf::behavior rank_behavior() {
  return {
      [](fault_kill_nspace_atom) {
        auto* self = current();
        // The namespace ends itself: it traps its rank actors' exits.
        if (self->state.nspace) self->send(self->state.nspace, fault_kill_nspace_atom::value);
      },
      [](connect_msg& msg) { return on_connect(current(), msg); },
      [](const peer_finalize_msg& msg) { return on_peer_finalize(current(), msg); },
      [](const peer_lost_msg& msg) { on_peer_lost(current(), msg); },
      [](get_msg& msg) -> caf::result<get_result> {
        auto* self = current();
        auto& st = self->state;
        auto rp = self->make_response_promise();
        if (st.peerid)
          forward_get(self, st.peerid->actor, std::move(msg), rp);
        else if (st.gone != PMIX_SUCCESS)
          rp.deliver(get_result{st.gone, {}});
        else
          st.waiting_gets.emplace_back(std::move(msg), rp);
        return rp;
      },
      [](const get_cancel_msg& msg) {
        auto* self = current();
        auto& st = self->state;
        auto& w = st.waiting_gets;
        for (auto it = w.begin(); it != w.end();) {
          if (it->first.asker == msg.asker && (msg.request == 0 || it->first.request == msg.request)) {
            it->second.deliver(get_result{PMIX_ERR_TIMEOUT, {}});
            it = w.erase(it);
          } else {
            ++it;
          }
        }
        // Forwarded gets wait at the peer they went to.
        if (st.peerid) self->send(st.peerid->actor, msg);
        for (const auto& p : st.displaced) self->send(p.actor, msg);
      },
      [](const upcall_result& r) {
        auto* self = current();
        auto& st = self->state;
        auto it = std::find_if(st.upcalls.begin(), st.upcalls.end(),
                               [&](const rank_state::pending_upcall& u) { return u.id == r.id; });
        if (it == st.upcalls.end()) return;
        auto pending = std::move(*it);
        st.upcalls.erase(it);
        if (pending.connect) {
          if (r.status != PMIX_SUCCESS) {
            log::warning("rank", to_string(st.pname), ": the host refused the connection: ",
                         PMIx_Error_string(r.status));
            // That process never joined: it no longer counts, so a later
            // process of the rank is not taken for a clone of it.
            if (auto* p = st.find_peer(pending.peer); p != nullptr && !p->closed) {
              p->closed = true;
              if (--st.proc_cnt == 0) report_state(self, false, r.status);
              sync_finalized(self);
            }
          }
          connect_result result{r.status, caf::actor_cast<caf::actor>(self), {}, st.server_object, st.pname};
          if (st.registered) result.registered_gid = st.gid;
          pending.promise.deliver(std::move(result));
        } else {
          pending.promise.deliver(r.status);
        }
      },
      [](const deliver_event_msg& msg) {
        auto* self = current();
        // Every live process of the rank (clones and tool siblings too).
        auto& st = self->state;
        if (st.peerid && !st.peerid->closed) self->send(st.peerid->actor, msg);
        for (const auto& p : st.displaced)
          if (!p.closed) self->send(p.actor, msg);
      },
      [](const view_msg&) {
        auto* self = current();
        auto& st = self->state;
        server_snapshot::rank_view v;
        v.rank = st.pname.rank;
        v.registered = st.registered;
        v.proc_cnt = st.proc_cnt;
        v.peers = (st.peerid ? 1 : 0) + static_cast<int>(st.displaced.size());
        v.tombstones = st.peerid && st.peerid->closed && st.peerid->finalized ? 1 : 0;
        v.has_peerid = st.peerid.has_value();
        v.dead = st.peerid && st.peerid->closed && !st.peerid->finalized ? 1 : 0;
        v.actor = true;
        v.waiting_gets = static_cast<int>(st.waiting_gets.size());
        return v;
      },
      [](const deregister_msg&) -> caf::result<bool> {
        auto* self = current();
        auto rp = self->make_response_promise();
        release_everything(self, [self, rp]() mutable {
          rp.deliver(true);
          self->quit();
        });
        return rp;
      },
  };
}

caf::behavior rank_actor_impl::make_behavior() {
  set_default_handler(caf::drop);
  set_down_handler([this](caf::down_msg& dm) { on_peer_down(this, dm); });
  static const caf::behavior shared = rank_behavior();
  return shared;
}

}  // namespace

caf::actor spawn_rank_actor(caf::local_actor* parent, proc_id pname, bool tool, caf::actor nspace,
                            caf::actor server, context_ptr ctx) {
  return parent->spawn<rank_actor_impl>(std::move(pname), tool, std::move(nspace), std::move(server),
                                        std::move(ctx));
}

}  // namespace pmix::actors
