// The fault plane's invariant checker (issue 18, docs/fault-injection.md):
// what must hold of the server's state once a job's processes have all
// ended, and once every namespace has been deregistered, whatever faults
// were injected. Reads the server actor's snapshot (actors::server_snapshot)
// and the plane's answer ledger; changes nothing.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "actors/messages.hpp"
#include "faults/plane.hpp"

namespace pmix::faults {

struct observed {
  actors::server_snapshot snapshot;
  std::size_t connections = 0;     // open connections (the socket thread's count)
  std::size_t actors_running = 0;  // actors alive in the server's actor system
  std::optional<plane::report> ledger;
};

// After every process of `nspace` has ended (before its deregistration):
// no rank holds a live process, at most one finalized object per rank,
// the counters within their bounds, "all finalized" fired at most once,
// every actor accounted for (no orphaned peer or rank actor), every
// request answered. Each violation is one line.
std::vector<std::string> check_job_ended(const observed& o, const std::string& nspace);

// After every namespace was deregistered: nothing left but the server
// actor; no connection, fence, up-call or departed rank remembered; every
// request answered exactly once.
std::vector<std::string> check_all_deregistered(const observed& o);

// Actors the snapshot accounts for: the server actor, each namespace,
// each rank actor and each peer a rank still holds.
std::size_t accounted_actors(const actors::server_snapshot& s);

}  // namespace pmix::faults
