#include "transport/connection.hpp"

#include <sys/socket.h>
#include <sys/uio.h>
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
    iovec parts[2];
    int count = 0;
    if (done < head.size()) parts[count++] = {const_cast<char*>(head.data() + done), head.size() - done};
    const std::size_t body_done = done > head.size() ? done - head.size() : 0;
    if (body_done < body.size())
      parts[count++] = {const_cast<char*>(body.data() + body_done), body.size() - body_done};
    msghdr m{};
    m.msg_iov = parts;
    m.msg_iovlen = static_cast<std::size_t>(count);
    const auto n = ::sendmsg(fd_, &m, MSG_NOSIGNAL | MSG_DONTWAIT);
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
