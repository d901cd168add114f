// Signals between the I/O thread and a connection's peer actor.
#pragma once

#include <caf/atom.hpp>

namespace pmix::transport {

// (frame_atom, std::string payload): one complete frame arrived.
using frame_atom = caf::atom_constant<caf::atom("frame")>;
// (closed_atom): the socket reached EOF or was shut down; no more frames.
using closed_atom = caf::atom_constant<caf::atom("closed")>;
// (writable_atom): the socket can take more output; call connection::flush().
using writable_atom = caf::atom_constant<caf::atom("writable")>;

}  // namespace pmix::transport
