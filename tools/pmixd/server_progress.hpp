// The node's PMIx server run on CAF's multiplexer thread, the thread that
// reads and writes the other daemons' messages and runs the daemon actor
// (a broker): pmixd starts the server with PMIX_CXX_PROGRESS_FD, and the
// multiplexer watches that descriptor beside its sockets and calls
// PMIx_Progress when it is readable. A rank's fence request then reaches
// the daemon actor, and the other nodes' answer reaches the rank, with no
// wake-up of another thread between (docs/multinode.md, "Where a fence's
// time goes").
#pragma once

#include <caf/actor_system.hpp>

namespace pmixd {

// Adds `fd` (which it then owns and closes) to the multiplexer of `sys`'s
// middleman. False (and `fd` closed) when that is not CAF's default
// multiplexer.
bool drive_server(caf::actor_system& sys, int fd);
// Takes it out again and waits until the multiplexer let go of it: before
// the actor system goes (its multiplexer runs as long as it watches a
// descriptor). A no-op when drive_server was not called or failed.
void undrive_server(caf::actor_system& sys);

}  // namespace pmixd
