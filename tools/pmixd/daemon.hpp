// The daemon actor of pmixd: one per node, published on the node's TCP port
// (CAF's middleman). It receives jobs from a launcher (pmixd launch, which
// pmixrun runs), connects to the other nodes' daemons, plays this node's
// part in fences across nodes (collective.hpp), serves and asks for direct
// modex, sends publish / lookup / unpublish to the session's data store on
// node 0 (which it is for its own sessions), events to every other node,
// output pulls to the pulled processes' nodes, pushed stdin to the
// targets' nodes (whose pmixd writes it into their pipes), abort and spawn and the
// processes' output and ends to the launcher, and watches every peer: a
// peer that goes away fails every operation that needs it
// (PMIX_ERR_UNREACH). docs/multinode.md.
//
// The processes themselves are the main thread's (the launcher of
// tools/pmixrun/jobs.hpp): the actor posts tasks to it (host_thread.hpp),
// and the main thread sends what happens back as local messages.
#pragma once

#include <pmix_server.h>

#include <caf/actor.hpp>
#include <caf/fwd.hpp>

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "protocol.hpp"
#include "tools/pmixrun/jobs.hpp"

namespace pmixd {

// What the actor needs of the main thread. Each function runs a task there.
struct node_hooks {
  // Starts the job's local processes; `done(status, error)` is called on
  // the main thread.
  std::function<void(const job_plan&, std::function<void(pmix_status_t, std::string)>)> start;
  // Ends every local process (SIGTERM, then SIGKILL).
  std::function<void(const std::string& why)> terminate;
  // Queues `bytes` for the stdin of local processes (tools/pmixrun/stdin.hpp):
  // named ranks of this node, or a wildcard (every local rank of that job
  // whose input is open); `end` ends their input once written.
  // `done(status, count)` is called on the main thread once every target's
  // pipe took the bytes: count is how many processes that was (0 for a
  // wildcard with no open rank here). PMIX_ERR_NOT_FOUND: an unknown or
  // ended job, a rank not of this node; PMIX_ERR_IOF_COMPLETE: a named
  // rank's input has ended (nothing is pushed); PMIX_ERR_IOF_FAILURE: a
  // target ended before its pipe took the bytes.
  std::function<void(std::vector<pmix_proc_t> targets, std::string bytes, bool end,
                     std::function<void(pmix_status_t, uint32_t)> done)>
      push_stdin;
};

struct daemon_config {
  std::string name;     // this node's name
  std::string address;  // the address:port it is published at
  bool verbose = false;
  node_hooks hooks;
};

caf::actor spawn_daemon(caf::actor_system& sys, daemon_config cfg);

// The server module whose up-calls go to `daemon` (set before init).
pmix_server_module_t daemon_module();
void set_module_target(caf::actor daemon);
void clear_module_target();

// The data stores this node holds for its sessions (node 0 of each),
// host thread only: fails the held lookups whose PMIX_TIMEOUT has passed;
// at shutdown, fails every held lookup and drops the stores.
void expire_stores();
void drop_stores();

// Local messages the main thread sends the daemon actor.
using exitedl_atom = caf::atom_constant<caf::atom("exitedl")>;    // nspace, rank, wait status
using jobdonel_atom = caf::atom_constant<caf::atom("jobdonel")>;  // nspace
using outputl_atom = caf::atom_constant<caf::atom("outputl")>;    // nspace, rank, channel, bytes

}  // namespace pmixd
