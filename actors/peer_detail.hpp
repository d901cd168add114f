// The peer actor's parts shared by its source files (actors/peer_actor.cpp,
// actors/peer_requests.cpp). Not an interface for other actors.
#pragma once

#include <caf/message_handler.hpp>
#include <caf/stateful_actor.hpp>

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>

#include "common/log.hpp"

#include "actors/peer_actor.hpp"
#include "actors/shared_behavior.hpp"

namespace pmix::actors::peer {

using self_ptr = caf::stateful_actor<peer_state, lean_actor>*;

// Whether the connection is still there to write to (spec 004's
// short-circuit: a reply for a closed peer is dropped and counted).
bool can_send(self_ptr self);
void send_envelope(self_ptr self, const wire::Envelope& e,
                   std::shared_ptr<const transport::shared_data> attach = nullptr);
void send_status(self_ptr self, std::uint64_t id, pmix_status_t status);
void send_info_reply(self_ptr self, std::uint64_t id, pmix_status_t status, const info_list& info,
                     const std::string& data = {});
// Output (our IofData frame) for a process linked with OpenPMIx, in its form.
void deliver_openpmix_iof(self_ptr self, const std::string& frame);
// The fault plane's answer ledger: a reply with this id was written.
void answered(self_ptr self, std::uint64_t id);
// A request this connection must not send: logged, the connection ends.
void protocol_error(self_ptr self, const std::string& what);

// A host up-call's callback that passes its answer on once: a host that
// calls back twice (the fault plane's `twice:query`, found with seed 10 of
// the tool-attach random cell) would have the client answered twice. The
// second answer is logged and dropped. (Up-calls answered with a status
// only go through the actors' up-call tables, which forget an answer's id
// once used.)
template <class F>
auto answer_once(const char* upcall, F f) {
  return [upcall, f = std::move(f), taken = std::make_shared<std::atomic<bool>>(false)](auto&&... answer) mutable {
    if (taken->exchange(true)) {
      log::warning("peer", "the host answered a ", upcall, " up-call twice: the second answer is dropped");
      return;
    }
    f(std::forward<decltype(answer)>(answer)...);
  };
}

// A HostRequest (pmix.proto): PMIx_Allocation_request, _Process_monitor,
// _Get_credential, _Validate_credential, _IOF_push, _Fabric_*; answered by
// an InfoReply. The server serves heartbeats and credentials itself when
// its host does not.
void on_host_request(self_ptr self, std::uint64_t id, const wire::HostRequest& req);
// (host_done_atom, envelope id, status, info, data): the host's answer.
using host_done_atom = caf::atom_constant<caf::atom("hostdone")>;
// (beat_check_atom, generation): time to look for a heartbeat.
using beat_check_atom = caf::atom_constant<caf::atom("beatcheck")>;
// The messages those requests bring back to the peer, handled in
// peer_actor's own behavior (one behavior per peer: a second one, joined
// with or_else, cost every connection about 0.2 kB): the heartbeat timer
// and output pushed to it. The host's answers come as host_done_atom and
// are answered with send_info_reply.
void check_heartbeat(self_ptr self, std::uint64_t generation);
void on_deliver_iof(self_ptr self, const deliver_iof_msg& msg);

// PMIx_Group_*: the server actor keeps groups and invitations; answered by
// an InfoReply.
void on_group_request(self_ptr self, std::uint64_t id, const wire::GroupRequest& req);

}  // namespace pmix::actors::peer
