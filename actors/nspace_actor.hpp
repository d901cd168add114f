// One actor per registered namespace: the spec's pmix_namespace_t (004).
//
// It owns the job-scoped state: the job info and its layout, the serialized
// job data clients receive at connect, `nlocalprocs`, `nfinalized`,
// `local_app_fini_fired`, and the rank actors (`ranks`). It lives until
// PMIx_server_deregister_nspace.
#pragma once

#include <caf/event_based_actor.hpp>
#include <caf/stateful_actor.hpp>
#include <functional>
#include <map>
#include <optional>
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "actors/context.hpp"
#include "actors/epilog.hpp"
#include "actors/job_layout.hpp"
#include "actors/messages.hpp"
#include "actors/openpmix_job.hpp"
#include "common/rank_map.hpp"

namespace pmix::transport {
class shared_data;
}

namespace pmix::actors {

struct nspace_state {
  static const char* name;

  std::string nspace;
  int nlocalprocs = 0;
  int nfinalized = 0;
  // Ranks that are finalized (rank_finalized_msg): "all local processes
  // finalized" is when there are nlocalprocs of them. nfinalized counts
  // finalized peers, so a clone that finalized while its parent lives would
  // make it equal nlocalprocs too early (docs/spec-map.md says this reading).
  rank_map<bool> finalized_ranks;
  bool local_app_fini_fired = false;
  int local_app_fini_runs = 0;  // for introspection: how often the step ran
  job_layout layout;
  // The job-level store, serialized (wire::JobInfo): sent to every client
  // at connect, and what PMIx_server_collect_job_info packs.
  std::shared_ptr<const std::string> job;
  // `job` as shared data for clients on Unix sockets, made at the first
  // connect that needs it when `job` is large; `job_shared_of` is the `job`
  // it was made from (the job data changes with pset and resource updates).
  std::shared_ptr<const transport::shared_data> job_shared;
  std::shared_ptr<const std::string> job_shared_of;
  // The job data in the form processes linked with OpenPMIx read, by
  // openpmix::buffer_type (1, 2), made at the first such connect of `job`
  // (`openpmix_of`) and shared by every one after it.
  std::shared_ptr<const openpmix_job_form> openpmix_forms[2];
  std::shared_ptr<const std::string> openpmix_of;
  // A rank actor, and whether it has a live process (rank_state_msg): in
  // its slot of `ranks`, not in a set of its own (a node per connected
  // client).
  struct rank_entry {
    caf::actor actor;
    bool live = false;
  };
  // What must be settled when this actor fails, shared with the functor
  // attached at start (CAF 0.17 runs it after the state is gone):
  // - the rank actors, neither linked nor monitored: CAF 0.17 keeps an
  //   actor's links and monitors in one list that it scans to remove one, so
  //   N links made unlinking them all O(N^2) (pmixsim's 10,000-rank
  //   teardown), and a monitor is an allocation per rank. A rank that fails
  //   sends a down message of its own (rank_state's destructor); the ranks go
  //   with a namespace that fails, sent an exit by the functor;
  // - the promises of requests handed to a rank actor and not answered yet,
  //   by number: a rank actor that fails does not answer the promises it
  //   holds and CAF 0.17 drops them, nor are this actor's answered when it
  //   fails. on_rank_failed answers a failed rank's gets (tests/faults
  //   matrix_test, kill:rank:at=get); the functor answers all of them when
  //   the namespace fails (matrix_test kill:nspace:at=fence: a process still
  //   in PMIx_Init was never answered).
  struct held_state {
    rank_map<rank_entry> ranks;
    std::map<std::uint64_t, std::pair<rank_t, caf::response_promise>> gets;
    std::map<std::uint64_t, caf::response_promise> connects;
  };
  std::shared_ptr<held_state> held = std::make_shared<held_state>();
  rank_map<rank_entry>& ranks = held->ranks;
  // What each rank actor added to nfinalized: taken back if it fails.
  std::map<caf::actor_addr, int> finalized_by;
  // Ranks whose actor failed with a live process (and, after a restart,
  // every rank): a get for one is answered PMIX_ERR_LOST_CONNECTION instead
  // of waiting for a process, until a process of the rank connects again.
  std::set<rank_t> lost;
  std::uint64_t next_request = 0;  // numbers the entries of held->gets and held->connects
  // What waits for a rank actor's down message (the fault plane's
  // connect_answer point: the answer to a connect of a rank it killed).
  std::vector<std::pair<caf::actor_addr, std::function<void()>>> after_down;
  bool all_lost = false;
  bool is_lost(rank_t r) const { return !ranks.contains(r) && (all_lost || lost.count(r) != 0); }
  epilog cleanup;  // the namespace epilog: runs at deregistration
  // The deregistration waiting for the namespace epilog to finish.
  std::optional<caf::response_promise> deregistered;
  caf::actor server;
  context_ptr ctx;
  // What this job's processes make the server hold together (made at
  // start; each peer gets it at connect).
  std::shared_ptr<job_budget> budget;

  // A namespace the server made for a tool (not registered by the host). It
  // ends when none of its ranks has a live process (tool_nspace_idle_msg).
  bool tool = false;
  std::uint64_t epoch = 0;   // connects received
  int inflight = 0;          // connects received and not yet answered
  std::size_t nlive = 0;     // ranks with a live process (rank_entry::live)
  // A rank's process is live or not (its actor's report).
  void set_live(rank_t rank, bool live);

  // The rank's actor, created on first use when `create` is set.
  caf::actor rank_actor_for(caf::stateful_actor<nspace_state>* self, rank_t r);
  // Fires the "all local processes finalized" step at most once.
  void check_all_finalized();
  // A tool namespace with no live process and no connect in progress tells
  // the server (which still checks that no connect is on its way here).
  void report_if_idle(caf::stateful_actor<nspace_state>* self);
  // A rank actor ended abnormally: the namespace lives on without it (its
  // peers close their connections), and a rank it held live is reported
  // gone with PMIX_ERR_LOST_CONNECTION, so collectives waiting for it fail.
  void on_rank_failed(caf::stateful_actor<nspace_state>* self, rank_t rank);
};

// `ready` (may be null) is answered once the namespace's data is built: the
// host's PMIx_server_register_nspace completes then. `job`, when given, is
// the job data already built (a restart after a failure: `layout` then only
// gives the job size). Every change of the job data is sent to `server`
// (nspace_job_msg), which restarts a failed namespace actor from it.
caf::behavior nspace_actor(caf::stateful_actor<nspace_state>* self, std::string nspace,
                           int nlocalprocs, job_layout layout, bool tool,
                           caf::actor server, context_ptr ctx, reply_to<no_result> ready,
                           std::shared_ptr<const std::string> job);

}  // namespace pmix::actors
