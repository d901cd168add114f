#include "transport/connection.hpp"

#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>

#include "common/log.hpp"
#include "transport/io_thread.hpp"

namespace pmix::transport {

connection::connection(std::uint64_t id, int fd, peer_credentials cred, io_thread* io)
    : id_(id), fd_(fd), cred_(cred), io_(io) {}

connection::~connection() { ::close(fd_); }

namespace {
// Writes as much as the socket takes; returns bytes written or -1 on a broken
// connection.
long write_some(int fd, const char* data, std::size_t size) {
  std::size_t done = 0;
  while (done < size) {
    const auto n = ::send(fd, data + done, size - done, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n > 0) {
      done += static_cast<std::size_t>(n);
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) break;
    return -1;
  }
  return static_cast<long>(done);
}
}  // namespace

bool connection::send(std::string_view frame) {
  if (broken_) return false;
  if (!pending_.empty()) {
    pending_.append(frame.data(), frame.size());
    return true;
  }
  const long n = write_some(fd_, frame.data(), frame.size());
  if (n < 0) {
    broken_ = true;
    return false;
  }
  if (static_cast<std::size_t>(n) < frame.size()) {
    pending_.assign(frame.data() + n, frame.size() - static_cast<std::size_t>(n));
    io_->want_write(id_);
  }
  return true;
}

bool connection::flush() {
  if (broken_) return false;
  if (pending_.empty()) return true;
  const long n = write_some(fd_, pending_.data(), pending_.size());
  if (n < 0) {
    broken_ = true;
    pending_.clear();
    return false;
  }
  pending_.erase(0, static_cast<std::size_t>(n));
  if (!pending_.empty()) io_->want_write(id_);
  return true;
}

void connection::shutdown() {
  if (!shut_.exchange(true)) ::shutdown(fd_, SHUT_RDWR);
}

}  // namespace pmix::transport
