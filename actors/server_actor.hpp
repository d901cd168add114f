// The root of the server's actor tree: one per PMIx_server_init cycle.
//
// It owns the namespace actors (by name), the fence trackers (collectives may
// span namespaces) and what it learns from rank actors about ranks that left.
// The C facade sends it one message per API call (actors/messages.hpp); peer
// actors send it their fence, get and connect requests, which it completes or
// routes to the namespace that owns the state.
#pragma once

#include <caf/event_based_actor.hpp>
#include <caf/stateful_actor.hpp>
#include <deque>
#include <map>
#include <optional>
#include <set>
#include <unordered_map>
#include <string>

#include "actors/context.hpp"
#include "actors/fence.hpp"
#include "actors/groups.hpp"
#include "actors/iof.hpp"
#include "actors/messages.hpp"
#include "common/rank_map.hpp"

namespace pmix::actors {

struct server_state {
  static const char* name;

  struct nspace_entry {
    caf::actor actor;
    nspace_locality locality;
    bool tool = false;               // made by the server for a tool
    std::uint64_t connects_sent = 0;  // tool namespaces: connects handed to it
    // PMIx_server_register_client: kept here, next to the locality it also
    // changes, and handed to the rank actor with each connect. A registered
    // rank costs a map entry, not an actor, until a process connects
    // (docs/spec-map.md).
    // (by rank position: a host registers thousands in a burst).
    rank_map<registration> registrations;
    // Whose job it is (docs/security.md, "What another user sees"): the
    // users its ranks are registered for (how many ranks each), the user its
    // registration names (PMIX_USERID), and for a tool's namespace the
    // tools' users.
    std::map<uid_t, std::size_t> users;
    std::optional<uid_t> job_user;
    // What a failed namespace actor is restarted from: its local process
    // count, its job data as last published (nspace_job_msg) and the
    // epilogs clients registered with it.
    int nlocalprocs = 0;
    std::shared_ptr<const std::string> job;
    std::vector<register_epilog_msg> epilogs;
    std::size_t epilog_weight = 0;  // theirs, by epilog::weight: at most epilog::max_weight
    // Ranks with a live process (rank_state_msg): lost if the actor fails.
    // (A rank_map: a job's ranks take a vector's bytes, not a set node each.)
    rank_map<bool> live;
    // Its fence board, made when a client first asks for it
    // (transport::fence_board; null: none yet, or refused).
    std::shared_ptr<transport::fence_board> board;
    bool board_refused = false;
    // The data of the last collecting fence over the whole namespace that
    // the host carried across nodes: a get of a remote rank's key is
    // answered from it, as OpenPMIx's server does from its store, instead of
    // a direct-modex up-call per get (processes linked with OpenPMIx ask
    // their server for every peer's key). `collected_index` (each rank's
    // RankData in `collected`, by rank) is built at the first such get.
    std::shared_ptr<const std::string> collected;
    std::vector<std::pair<rank_t, std::string_view>> collected_index;
    bool collected_indexed = false;
  };

  // A tool connect waiting for the host's tool_connected answer.
  struct pending_tool {
    connect_msg msg;
    caf::response_promise promise;
  };

  server_state();

  // The collectives the server tracks alike (actors/fence.hpp): fences,
  // and PMIx_Connect / PMIx_Disconnect over a set of processes.
  enum class collective { fence, connect, disconnect, group_construct, group_destruct };
  fence_book& book(collective kind) {
    switch (kind) {
      case collective::fence: return fences;
      case collective::connect: return connects;
      case collective::disconnect: return disconnects;
      case collective::group_construct: return group_constructs;
      case collective::group_destruct: return group_destructs;
    }
    return fences;
  }

  context_ptr ctx;
  std::map<std::string, nspace_entry> nspaces;
  // Registrations of clients whose namespace is not registered yet: hosts
  // may register a job's clients first (Open MPI's mpirun does, and waits
  // for each answer before it registers the namespace). They are answered
  // at once and join the namespace when it comes; deregistering the client
  // or the namespace, or finalize, drops them.
  std::map<std::string, rank_map<registration>> early_registrations;
  // Job data given with PMIx_server_setup_local_support before the
  // namespace was registered, and direct-modex requests of the host for a
  // namespace not registered yet: both wait for it.
  std::map<std::string, info_list> early_job_info;
  // PMIx_server_define_process_set: name -> members.
  std::map<std::string, std::vector<proc_id>> psets;
  // PMIx_server_register_resources: node-level information added to every
  // namespace's job data (the host's registration wins over it).
  info_list resources;
  // PMIx_server_deliver_inventory: other nodes' inventories by host name.
  std::map<std::string, info_list> inventories;
  std::map<std::string, std::vector<dmodex_request_msg>> early_dmodex;
  fence_book fences;
  fence_book connects;
  fence_book disconnects;
  fence_book group_constructs;  // tagged with the group's name
  fence_book group_destructs;
  group_state groups;
  // Ranks with no live process after having had one: why they are gone.
  std::map<proc_id, pmix_status_t> departed;
  // up-call -> the collective and its tracker
  std::map<std::uint64_t, std::pair<collective, std::uint64_t>> collective_upcalls;
  // up-call -> requester, and the get it answers (get_cancel_msg)
  struct pending_dmodex {
    caf::response_promise promise;
    caf::actor_addr asker;
    std::uint64_t request = 0;
  };
  std::map<std::uint64_t, pending_dmodex> dmodex_upcalls;
  std::map<std::uint64_t, pending_tool> tool_upcalls;                 // up-call -> connect
  std::map<std::uint64_t, caf::response_promise> notify_upcalls;      // up-call -> notifier
  // PMIx_IOF_pull: the registrations, and those waiting for the host's
  // iof_pull answer (up-call -> registration and puller).
  iof_book iof;
  std::map<std::uint64_t, std::pair<iof_registration, caf::response_promise>> iof_upcalls;
  std::uint64_t next_upcall = 1;
  std::uint64_t next_tool = 1;  // for the namespaces the server gives tools
  // Namespaces a process of this server spawned, and its user: that user's
  // to see, also where none of its processes is registered here. The
  // oldest are forgotten beyond max_spawned (spawns whose namespace this
  // server never registers would otherwise pile up).
  std::map<std::string, uid_t> spawned_by;
  std::deque<std::string> spawned_order;
  static constexpr std::size_t max_spawned = 4096;

  // Whether a process of user `uid` in namespace `from` may see what
  // namespace `nspace` holds (its job data, its processes' data, its
  // processes in a collective, their output).
  bool may_see(uid_t uid, const std::string& from, const std::string& nspace) const;
};

caf::behavior server_actor(caf::stateful_actor<server_state>* self, context_ptr ctx);

// The environment a client needs to find this server (PMIx_server_setup_fork).
env_list client_environment(const server_context& ctx, const proc_id& proc);

}  // namespace pmix::actors
