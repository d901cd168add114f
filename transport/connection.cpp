#include "transport/connection.hpp"

#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>

#include "common/log.hpp"
#include "transport/io_thread.hpp"
#include "transport/send_parts.hpp"

namespace pmix::transport {

connection::connection(std::uint64_t id, int fd, peer_credentials cred, io_thread* io)
    : id_(id), fd_(fd), cred_(cred), io_(io) {}

connection::~connection() { ::close(fd_); }

bool connection::send(std::string_view frame) { return send(frame, {}); }

bool connection::send(std::string_view head, std::string_view body) {
  if (broken_) return false;
  if (!pending_.empty()) {
    pending_.append(head.data(), head.size());
    pending_.append(body.data(), body.size());
    return true;
  }
  // Both parts in one system call; what the socket does not take is kept.
  std::size_t done = 0;
  const std::size_t total = head.size() + body.size();
  while (done < total) {
    const auto n = send_parts(fd_, head, body, done, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n > 0) {
      done += static_cast<std::size_t>(n);
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) break;
    broken_ = true;
    return false;
  }
  if (done < total) {
    if (done < head.size()) {
      pending_.assign(head.data() + done, head.size() - done);
      pending_.append(body.data(), body.size());
    } else {
      pending_.assign(body.data() + (done - head.size()), total - done);
    }
    io_->want_write(id_);
  }
  return true;
}

bool connection::flush() {
  if (broken_) return false;
  if (pending_.empty()) return true;
  std::string rest = std::move(pending_);
  pending_.clear();
  return send(rest, {});  // keeps what the socket still does not take
}

void connection::shutdown() {
  if (!shut_.exchange(true)) ::shutdown(fd_, SHUT_RDWR);
}

}  // namespace pmix::transport
