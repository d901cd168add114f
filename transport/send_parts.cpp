#include "transport/send_parts.hpp"

#include <sys/socket.h>
#include <sys/uio.h>

namespace pmix::transport {

long send_parts(int fd, std::string_view head, std::string_view body, std::size_t done, int flags) {
  iovec parts[2];
  std::size_t count = 0;
  if (done < head.size()) parts[count++] = {const_cast<char*>(head.data() + done), head.size() - done};
  const std::size_t body_done = done > head.size() ? done - head.size() : 0;
  if (body_done < body.size()) parts[count++] = {const_cast<char*>(body.data() + body_done), body.size() - body_done};
  if (count == 0) return 0;
  msghdr m{};
  m.msg_iov = parts;
  m.msg_iovlen = count;
  return static_cast<long>(::sendmsg(fd, &m, flags));
}

}  // namespace pmix::transport
