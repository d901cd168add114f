// A frame in two parts (a prefix of the sender's own and a body shared by
// many sends) written without joining them first: used by the server's
// connections and by the client's.
#pragma once

#include <cstddef>
#include <string_view>

namespace pmix::transport {

// One sendmsg(2) of what is left of `head` followed by `body`, of which the
// first `done` bytes are sent already. Returns the bytes it wrote, or -1
// with errno set (EINTR, EAGAIN and the rest are the caller's to handle).
long send_parts(int fd, std::string_view head, std::string_view body, std::size_t done, int flags);

}  // namespace pmix::transport
