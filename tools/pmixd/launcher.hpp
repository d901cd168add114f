// The launcher side of a multi-node job: `pmixd launch`, which pmixrun runs
// for --daemons (docs/multinode.md).
//
//   pmixd launch --daemons ADDR:PORT,... --credentials DIR [-n N] [--map-by slot|node]
//                [--fence tree|doubling] [--nspace NAME] [--env NAME=VALUE]...
//                [--timeout SECONDS] [--stdin RANK|all|none] [--quiet] [--verbose]
//                prog [args...]
//   pmixd launch --hosts HOST,... [--launch-agent 'CMD {host}'] [--pmixd PATH]
//                [--credentials DIR] [the options above] prog [args...]
//
// With --hosts it starts the daemons itself and hands each the session key
// on its stdin (a fresh key in a private directory unless --credentials).
// It connects to every daemon (CAF remote actors, over TLS with the session
// key: credentials.hpp), maps the ranks onto the
// nodes (slot: consecutive ranks fill each node in turn, as many per node
// as evenly as possible; node: round robin), sends every daemon the job
// plan with the real node and proc maps, writes the processes' output as it
// arrives, forwards its own stdin to the --stdin ranks (rank 0 by default,
// as one-node pmixrun: through the ranks' daemons into their stdin pipes),
// and applies the failure policy across nodes: the first process
// that fails or aborts, a lost node (its daemon is gone) or the timeout
// terminates the job on every node. The exit status is the abort's, else
// the first failure's, else 1 for a lost node or a timeout, else 0. Every
// wait is bounded: 10 s to reach the daemons, and once the job is being
// terminated, 15 s for the nodes to report its end.
#pragma once

#include <caf/fwd.hpp>

namespace pmixd {

int run_launcher(caf::actor_system_config& cfg, int argc, char** argv);

}  // namespace pmixd
