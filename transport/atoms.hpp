// Signals between the I/O thread and a connection's peer actor.
#pragma once

#include <caf/allowed_unsafe_message_type.hpp>
#include <caf/atom.hpp>
#include <string>
#include <vector>

namespace pmix::transport {

// (frame_atom, std::string payload): one complete frame arrived.
using frame_atom = caf::atom_constant<caf::atom("frame")>;
// (frames_atom, frames_msg): the complete frames one read brought, in
// order, when it brought more than one (a client's held commit and the
// fence it precedes): one message for the peer actor instead of one each.
using frames_atom = caf::atom_constant<caf::atom("frames")>;
struct frames_msg {
  std::vector<std::string> frames;
};
// (closed_atom): the socket reached EOF or was shut down; no more frames.
using closed_atom = caf::atom_constant<caf::atom("closed")>;
// (writable_atom): the socket can take more output; call connection::flush().
using writable_atom = caf::atom_constant<caf::atom("writable")>;

}  // namespace pmix::transport

CAF_ALLOW_UNSAFE_MESSAGE_TYPE(pmix::transport::frames_msg)
