#include "transport/connection.hpp"

#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "common/log.hpp"
#include "transport/io_thread.hpp"
#include "transport/send_parts.hpp"
#include "transport/shared_data.hpp"

namespace pmix::transport {

connection::connection(std::uint64_t id, int fd, peer_credentials cred, io_thread* io,
                       std::size_t max_send_backlog)
    : id_(id), fd_(fd), cred_(cred), io_(io), max_send_backlog_(max_send_backlog) {}

connection::~connection() {
  if (budget_) budget_->give(job_budget::backlog, pending_bytes_);
  ::close(fd_);
}

void connection::set_budget(std::shared_ptr<job_budget> budget) {
  if (budget_) budget_->give(job_budget::backlog, pending_bytes_);
  budget_ = std::move(budget);
  if (budget_) budget_->add(job_budget::backlog, pending_bytes_);
}

bool connection::send(std::string_view frame) { return send(frame, {}); }

void connection::overflow(std::size_t would_be, const char* what, std::size_t limit) {
  log::error("io", "connection ", id_, " (pid ", cred_.pid, ", uid ", cred_.uid, ") would leave ", would_be,
             " bytes of output unread, over the limit of ", limit, " (", what, "): closing that connection");
  broken_ = true;
  if (budget_) budget_->give(job_budget::backlog, pending_bytes_);
  pending_.reset();
  pending_offset_ = pending_bytes_ = 0;
  shutdown();
}

// Keeps what is left of head+body after `done` bytes were sent: one copy.
bool connection::queue(std::string_view head, std::string_view body, std::size_t done,
                       std::shared_ptr<const shared_data> attach) {
  const std::size_t total = head.size() + body.size();
  if (pending_bytes_ + (total - done) > max_send_backlog_) {
    overflow(pending_bytes_ + (total - done), "PMIX_CXX_MAX_SEND_BACKLOG", max_send_backlog_);
    return false;
  }
  if (budget_ && !budget_->take(job_budget::backlog, total - done)) {
    overflow(budget_->held(job_budget::backlog) + (total - done),
             "PMIX_CXX_MAX_SEND_BACKLOG_JOB, for the peers of its job together", budget_->limit(job_budget::backlog));
    return false;
  }
  std::string rest;
  rest.reserve(total - done);
  if (done < head.size()) {
    rest.append(head.data() + done, head.size() - done);
    rest.append(body.data(), body.size());
  } else {
    rest.append(body.data() + (done - head.size()), total - done);
  }
  bytes_queued_ += rest.size();
  pending_bytes_ += rest.size();
  if (!pending_) pending_ = std::make_unique<std::deque<pending_frame>>();
  pending_->push_back(pending_frame{std::move(rest), std::move(attach)});
  return true;
}

namespace {
// sendmsg of `parts` with `fd` passed along (SCM_RIGHTS).
long send_with_descriptor(int socket, iovec* parts, std::size_t count, int fd) {
  msghdr m{};
  m.msg_iov = parts;
  m.msg_iovlen = count;
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))] = {};
  m.msg_control = control;
  m.msg_controllen = sizeof control;
  cmsghdr* c = CMSG_FIRSTHDR(&m);
  c->cmsg_level = SOL_SOCKET;
  c->cmsg_type = SCM_RIGHTS;
  c->cmsg_len = CMSG_LEN(sizeof(int));
  std::memcpy(CMSG_DATA(c), &fd, sizeof fd);
  return static_cast<long>(::sendmsg(socket, &m, MSG_NOSIGNAL | MSG_DONTWAIT));
}
}  // namespace

bool connection::send(std::string_view head, std::string_view body, std::shared_ptr<const shared_data> attach) {
  if (!attach) return send(head, body);
  if (broken_) return false;
  if (pending_bytes_ > 0) return queue(head, body, 0, std::move(attach));
  iovec parts[2] = {{const_cast<char*>(head.data()), head.size()}, {const_cast<char*>(body.data()), body.size()}};
  long n;
  do {
    n = send_with_descriptor(fd_, parts, body.empty() ? 1 : 2, attach->fd());
  } while (n < 0 && errno == EINTR);
  std::size_t done = 0;
  if (n > 0) {
    done = static_cast<std::size_t>(n);
    attach.reset();  // went with the first byte
  } else if (!(errno == EAGAIN || errno == EWOULDBLOCK)) {
    broken_ = true;
    return false;
  }
  // The rest (without the descriptor, once it went) as any frame.
  return send_rest(head, body, done, std::move(attach));
}

bool connection::send(std::string_view head, std::string_view body) {
  if (broken_) return false;
  if (pending_bytes_ > 0) return queue(head, body, 0);  // after what waits, in order
  return send_rest(head, body, 0, nullptr);
}

bool connection::send_rest(std::string_view head, std::string_view body, std::size_t done,
                           std::shared_ptr<const shared_data> attach) {
  // Both parts in one system call; what the socket does not take is kept.
  const std::size_t total = head.size() + body.size();
  while (done < total && !attach) {
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
    if (!queue(head, body, done, std::move(attach))) return false;
    io_->want_write(id_);
  }
  return true;
}

bool connection::flush() {
  if (broken_) return false;
  while (pending_bytes_ > 0) {
    // Up to 64 queued frames in one system call, from where the first stopped.
    // A frame with a descriptor to pass starts a call of its own (the
    // descriptor goes with the call's first byte), and ends the one before.
    iovec parts[64];
    int count = 0;
    std::size_t offset = pending_offset_;
    auto& queued = *pending_;  // bytes are pending: the queue exists
    const shared_data* attach = queued.front().attach.get();
    for (auto it = queued.begin(); it != queued.end() && count < 64; ++it, offset = 0) {
      if (count > 0 && it->attach) break;
      parts[count++] = {const_cast<char*>(it->bytes.data() + offset), it->bytes.size() - offset};
    }
    long n;
    if (attach != nullptr) {
      n = send_with_descriptor(fd_, parts, static_cast<std::size_t>(count), attach->fd());
    } else {
      msghdr m{};
      m.msg_iov = parts;
      m.msg_iovlen = static_cast<std::size_t>(count);
      n = ::sendmsg(fd_, &m, MSG_NOSIGNAL | MSG_DONTWAIT);
    }
    if (n < 0) {
      if (errno == EINTR) continue;
      if (errno == EAGAIN || errno == EWOULDBLOCK) {
        io_->want_write(id_);
        return true;
      }
      broken_ = true;
      return false;
    }
    auto left = static_cast<std::size_t>(n);
    pending_bytes_ -= left;
    if (budget_) budget_->give(job_budget::backlog, left);
    if (left > 0) queued.front().attach.reset();  // went with the first byte
    while (left > 0) {
      const auto rest = queued.front().bytes.size() - pending_offset_;
      if (left < rest) {
        pending_offset_ += left;
        break;
      }
      left -= rest;
      queued.pop_front();
      pending_offset_ = 0;
    }
  }
  return true;
}

void connection::shutdown() {
  if (!shut_.exchange(true)) ::shutdown(fd_, SHUT_RDWR);
}

}  // namespace pmix::transport
