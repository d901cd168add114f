// One actor per client/tool connection: the spec's pmix_peer_t (004).
//
// It parses the connection's frames, dispatches each request to the actor
// that owns the state it concerns (style.md #10), and is the only writer of
// its socket. It holds the client-scoped state: the `finalized` flag and the
// data the client committed. After the socket closes it stays alive as a
// tombstone while its rank actor keeps it at `peerid` (so a PMIx_Get for the
// rank still resolves), until the rank actor releases it.
//
// States (spec 004, "Peer states"): handshake -> active -> finalizing
// (FINALIZE seen, socket open) -> tombstone (socket closed, kept at peerid).
#pragma once

#include <caf/event_based_actor.hpp>
#include <caf/stateful_actor.hpp>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "actors/context.hpp"
#include "actors/epilog.hpp"
#include "actors/openpmix_job.hpp"
#include "actors/messages.hpp"
#include "common/lazy.hpp"
#include "common/job_budget.hpp"
#include "protocol/pmix.pb.h"
#include "transport/connection.hpp"

namespace pmix::actors {

struct peer_state {
  static const char* name;

  // The enums are bytes and the small fields sit together: no padding
  // between them (24 bytes of every peer were).
  enum class phase : std::uint8_t { handshake, connecting, refused, active, finalizing, tombstone };
  enum class hold_phase : std::uint8_t { none, allowed, ending };      // see `hold`
  enum class cleanup_phase : std::uint8_t { idle, running, done };     // see `cleanup_state`

  std::shared_ptr<transport::connection> conn;  // null once the socket is gone
  context_ptr ctx;
  caf::actor server;
  caf::actor rank;  // the rank actor, after the handshake
  // The actor whose state this is (CAF hands it to the constructor): the
  // destructor, which CAF 0.17 runs when the actor ends however it ends,
  // reads its address and its exit reason.
  caf::local_actor* me = nullptr;
  proc_id proc;
  peer_role role = peer_role::client;
  phase state = phase::handshake;
  bool finalized = false;  // the spec's peer->finalized
  // Its rank failed before the answer to its connect named the rank (the
  // rank's down message came first: peer_actor.cpp, the down handler).
  bool rank_failed = false;
  bool has_committed = false;  // see `committed`
  bool board_asked = false;    // see `board_sent`
  bool board_sent = false;
  bool offers_hold = false;    // see `hold`
  hold_phase hold = hold_phase::none;
  cleanup_phase cleanup_state = cleanup_phase::idle;
  bool holding = false;  // the fault plane holds a frame (rare_state::held_frame)
  uid_t owner = 0;  // the client's uid (SO_PEERCRED, or the kernel's owner of its TCP socket)
  int iof_pulls = 0;  // PMIx_IOF_pull registrations the server keeps for us
  void* server_object = nullptr;

  // Committed data (PMIx_Commit), by key: each item's serialized canonical
  // wire::ScopedInfo (its scope and info).
  std::map<std::string, std::string> committed;
  std::shared_ptr<const std::string> committed_blob;  // serialized wire::RankData cache

  // The namespace's fence board (FenceRequest.board_request, board_wait):
  // asked for once per connection (board_asked); a fence may be answered
  // there only once the board went to the client (board_sent).

  // Direct-modex requests waiting for this peer's first commit, or for the
  // end of its commit hold: who asked (a get its asker cancels is answered
  // PMIX_ERR_TIMEOUT and dropped: get_cancel_msg).
  struct waiting_get {
    caf::actor_addr asker;
    std::uint64_t request = 0;
    caf::response_promise promise;
  };
  lazy_vector<waiting_get> waiting_gets;  // 8 bytes while empty (common/lazy.hpp)

  // What this peer asked for on its client's behalf and waits for, by the
  // client's request id: gets (their target), lookups and queries (the
  // host's). Answered, timed out (PMIX_TIMEOUT) or, at the connection's
  // end, cancelled; an answer for an id no longer here is dropped.
  // Each counted against the limits with its bytes (request_bytes; the
  // job's share in `budget`).
  struct pending_get {
    proc_id target;
    std::size_t bytes = 0;
  };
  // (Lookups and queries: in rare_state.)
  lazy_map<std::uint64_t, pending_get> gets_out;  // made at the first get
  std::size_t request_bytes = 0;
  std::size_t requests_out() const;

  // What the client's committed data weighs (keys and items as kept), held
  // against PMIX_CXX_MAX_COMMIT and its job's share.
  std::size_t committed_bytes = 0;
  // What the processes of this peer's job hold together (from its
  // namespace at connect); this peer's share goes back when it ends.
  std::shared_ptr<job_budget> budget;

  peer_state() = default;
  explicit peer_state(caf::local_actor* self) : me(self) {}
  peer_state(const peer_state&) = delete;
  peer_state& operator=(const peer_state&) = delete;
  ~peer_state();
  // A client may hold a commit until its next frame (ConnectReply
  // .commit_hold, docs/wire-format.md): allowed from its connect on, until
  // another process needs its data (a get): then the peer sends
  // commit_hold_end and answers gets once commit_hold_ended has come, after
  // whatever the client held.
  // Only a client that offered it (ConnectRequest.commit_hold) holds: a
  // client speaking the wire itself (pmixsim, tests) would never answer.
  // (hold, offers_hold: with the small fields above.)

  // Its epilog (rare_state::cleanup) runs off the actors' threads
  // (actors/cleaner.hpp) once the process is gone: not yet, running, or
  // done. A release (deregistration) waits for it.
  // (The epilog and the release requests waiting for it: in rare_state.)
  // (cleanup_state: with the small fields above.)
  // Its credentials (those of the connection, with the gid and pid of a
  // TCP peer of this host filled in at the handshake).
  transport::peer_credentials cred;

  // PMIx_Process_monitor of this process's heartbeat, served by the server
  // itself (actors/peer_requests.cpp): a check every `seconds`; after
  // `drops` checks without a beat, `error` is raised once as an event.
  struct heartbeat_monitor {
    std::string id;  // PMIX_MONITOR_ID
    std::uint32_t seconds = 0;
    std::uint32_t drops = 1;
    std::uint32_t missed = 0;
    bool beat = false;
    bool alerted = false;
    pmix_status_t error = PMIX_MONITOR_HEARTBEAT_ALERT;
    std::uint64_t generation = 0;  // a stale timer finds another generation
    std::shared_ptr<void> sensor;  // counted in the context's `sensors` while it lives
  };
  // A process linked with OpenPMIx (issue 35): its frames are translated
  // into ours on the way in, and our replies into its on the way out
  // (actors/peer_actor.cpp, "OpenPMIx's protocol").
  bool openpmix = false;
  std::uint8_t openpmix_buffer = 1;  // openpmix::buffer_type
  std::uint8_t openpmix_kind = 0;    // its handshake's process type: 0 a client, else a tool or launcher
  std::uint32_t openpmix_major = 4;  // its OpenPMIx version's major number (5.x's group messages differ)
  // (Its job and forms: in rare_state.)
  std::uint64_t next_upcall = 1;

  // What few peers use, made at its first use so that a plain client's
  // peer does not carry it (issue 40: about 0.4 kB of every connection):
  // lookups, queries and host up-calls in flight, its epilog, a heartbeat
  // monitor, the fault plane's held frame, an OpenPMIx process's job.
  struct rare_state {
    std::map<std::uint64_t, std::size_t> lookups_out;  // (see gets_out)
    std::map<std::uint64_t, std::size_t> queries_out;
    // Host up-calls in flight: up-call id -> envelope id to answer.
    std::map<std::uint64_t, std::uint64_t> upcalls;
    // Its epilog (what the client asked to have removed when it ends), and
    // release requests waiting for it to run.
    epilog cleanup;
    std::vector<caf::response_promise> released;
    std::optional<heartbeat_monitor> heartbeat;
    std::uint64_t heartbeat_generation = 0;
    // The fault plane: a message held back by a `reorder` fault, handled
    // after the connection's next one.
    std::string held_frame;
    // An OpenPMIx process: its serialized JobInfo, for PMIX_REQ_CMD; that
    // job's own data (kept at PMIX_REQ_CMD: OpenPMIx's store files it under
    // the namespace, so a get naming a rank does not find it there and
    // asks; it is answered from here); requests whose answer its client
    // reads in a form of its own (credentials, IOF pulls, groups): request
    // tag -> (command, the IOF pull's handler id), taken out when answered.
    std::shared_ptr<const std::string> openpmix_job;
    // Its job data in OpenPMIx's form (payload and job level): a client's
    // is its namespace's, shared with the namespace's other such clients
    // (then `openpmix_job` stays empty); a tool's is made at PMIX_REQ_CMD.
    std::shared_ptr<const openpmix_job_form> openpmix_form;
    const info_list& job_level() const {
      static const info_list none;
      return openpmix_form ? openpmix_form->job_level : none;
    }
    std::map<std::uint32_t, std::pair<std::uint8_t, std::uint64_t>> openpmix_forms;
  };
  rare_state& rare() {
    if (!rare_) rare_ = std::make_unique<rare_state>();
    return *rare_;
  }
  rare_state* rare_if() { return rare_.get(); }
  std::unique_ptr<rare_state> rare_;

  // Serialized wire::RankData of what was committed (cached), and the same
  // as the shared cache entry (handed to a fence without a copy).
  const std::shared_ptr<const std::string>& rank_blob();
  const std::string& rank_data() { return *rank_blob(); }
};

// Linked to nothing: at finalize its rank's end ends it (peer_actor.cpp,
// make_behavior). Every peer actor shares one behavior
// (actors/shared_behavior.hpp).
caf::actor spawn_peer_actor(caf::actor_system& system, std::shared_ptr<transport::connection> conn,
                            caf::actor server, context_ptr ctx);

}  // namespace pmix::actors
