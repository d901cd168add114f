// One actor per registered rank of a namespace: the spec's pmix_rank_info_t
// (004). It holds registration state (pname, uid/gid, server_object), the
// rank's `peerid` (the peer actor serving it, possibly a tombstone) and
// `proc_cnt` (its live processes, clones included), and it alone decides
// tombstone, reclaim and stranded-peer release: those are messages it
// handles one at a time, so no collective ever sees a half-changed rank.
#pragma once

#include <sys/types.h>

#include <caf/event_based_actor.hpp>
#include <caf/stateful_actor.hpp>
#include <optional>
#include <vector>

#include "actors/context.hpp"
#include "actors/messages.hpp"
#include "common/lazy.hpp"

namespace pmix::actors {

// A peer actor as its rank sees it.
// The actor is the spec's client-array slot (its connection id, which no
// one read, is no longer kept: 16 bytes, and the rank's state 8 less).
struct peer_ref {
  caf::actor actor;
  bool finalized = false;  // FINALIZE received
  bool closed = false;     // socket gone
};

struct rank_state {
  static const char* name;

  // Its last peer actor failed (on_peer_down) and is not kept: what a get
  // for the rank is answered until a process of it connects again
  // (PMIX_SUCCESS: none).
  pmix_status_t gone = PMIX_SUCCESS;
  // The small fields together, in 24 bytes: the state is 160 bytes, and
  // its actor's allocation 16 bytes less than at 176 (malloc's steps).
  int proc_cnt = 0;  // live processes of the rank
  uid_t uid = 0;
  gid_t gid = 0;
  bool registered = false;  // by PMIx_server_register_client (known from the first connect)
  bool tool = false;        // a rank of a tool namespace: its peers are pure tools
  bool reported_finalized = false;  // see finalized_rank()
  std::uint32_t next_upcall = 1;    // ids of its host up-calls (pending_upcall::id)

  proc_id pname;
  void* server_object = nullptr;
  caf::actor nspace;
  caf::actor server;
  context_ptr ctx;
  // The actor whose state this is (CAF hands it to the constructor): when
  // it fails, the destructor (which CAF 0.17 runs when the actor ends,
  // however) sends the namespace the down message a monitor would have,
  // without a monitor on every rank (an allocation each).
  caf::local_actor* me = nullptr;

  rank_state() = default;
  explicit rank_state(caf::local_actor* self) : me(self) {}
  rank_state(const rank_state&) = delete;
  rank_state& operator=(const rank_state&) = delete;
  ~rank_state();

  std::optional<peer_ref> peerid;  // the peer serving the rank (maybe a tombstone)
  // Older peers of the rank still alive (clones, racing finalize). This and
  // the two below are rarely filled: 8 bytes each until they are
  // (common/lazy.hpp).
  lazy_vector<peer_ref> displaced;

  // Direct-modex requests that arrived before any process connected (a
  // cancelled one is answered PMIX_ERR_TIMEOUT and dropped).
  lazy_vector<std::pair<get_msg, caf::response_promise>> waiting_gets;

  // Host up-calls in flight (client_connected, client_finalized), in the
  // order asked: a few at most, so a vector, freed when empty (a map is 48
  // bytes empty, and every rank has one).
  struct pending_upcall {
    std::uint64_t id = 0;
    caf::response_promise promise;  // the connect's or the finalize's reply
    caf::actor peer;                // a connect's peer
    bool connect = false;
  };
  lazy_vector<pending_upcall> upcalls;

  peer_ref* find_peer(const caf::actor& a);
  // Processes connected and not finalized.
  int live_unfinalized() const;
  // A process of the rank finalized and every live one has (what the
  // namespace's "all local processes finalized" counts); last told value.
  bool finalized_rank() const;
};

// `tool` marks a rank of a namespace the server made for a tool (spec 004:
// a pure tool is freed at socket close instead of tombstoned).
// Spawned by its namespace actor (`parent`).
caf::actor spawn_rank_actor(caf::local_actor* parent, proc_id pname, bool tool, caf::actor nspace,
                            caf::actor server, context_ptr ctx);

}  // namespace pmix::actors
