// One actor per registered namespace: the spec's pmix_namespace_t (004).
//
// It owns the job-scoped state: the job info and its layout, the serialized
// job data clients receive at connect, `nlocalprocs`, `nfinalized`,
// `local_app_fini_fired`, and the rank actors (`ranks`). It lives until
// PMIx_server_deregister_nspace.
#pragma once

#include <caf/event_based_actor.hpp>
#include <caf/stateful_actor.hpp>
#include <map>
#include <optional>
#include <memory>
#include <set>
#include <string>

#include "actors/context.hpp"
#include "actors/epilog.hpp"
#include "actors/job_layout.hpp"
#include "actors/messages.hpp"

namespace pmix::transport {
class shared_data;
}

namespace pmix::actors {

struct nspace_state {
  static const char* name;

  std::string nspace;
  int nlocalprocs = 0;
  int nfinalized = 0;
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
  std::map<rank_t, caf::actor> ranks;
  epilog cleanup;  // the namespace epilog: runs at deregistration
  // The deregistration waiting for the namespace epilog to finish.
  std::optional<caf::response_promise> deregistered;
  caf::actor server;
  context_ptr ctx;

  // A namespace the server made for a tool (not registered by the host). It
  // ends when none of its ranks has a live process (tool_nspace_idle_msg).
  bool tool = false;
  std::uint64_t epoch = 0;   // connects received
  int inflight = 0;          // connects received and not yet answered
  std::set<rank_t> live;     // ranks with a live process

  // The rank's actor, created on first use when `create` is set.
  caf::actor rank_actor_for(caf::stateful_actor<nspace_state>* self, rank_t r);
  // Fires the "all local processes finalized" step at most once.
  void check_all_finalized();
  // A tool namespace with no live process and no connect in progress tells
  // the server (which still checks that no connect is on its way here).
  void report_if_idle(caf::stateful_actor<nspace_state>* self);
};

// `ready` (may be null) is answered once the namespace's data is built: the
// host's PMIx_server_register_nspace completes then.
caf::behavior nspace_actor(caf::stateful_actor<nspace_state>* self, std::string nspace,
                           int nlocalprocs, job_layout layout, bool tool,
                           caf::actor server, context_ptr ctx, reply_to<no_result> ready);

}  // namespace pmix::actors
