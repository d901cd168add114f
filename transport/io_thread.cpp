#include "transport/io_thread.hpp"

#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <caf/send.hpp>
#include <cerrno>
#include <cstring>

#include "common/log.hpp"
#include "common/progress.hpp"
#include "transport/atoms.hpp"

namespace pmix::transport {
namespace {

constexpr std::uint64_t wake_tag = 0;
constexpr std::uint64_t listener_tag = std::uint64_t{1} << 63;
constexpr std::size_t read_chunk = 64 * 1024;

}  // namespace

io_thread::io_thread(acceptor accept, std::function<void()> on_start, std::uint32_t max_frame_size)
    : accept_(std::move(accept)), on_start_(std::move(on_start)), max_frame_size_(max_frame_size) {}

io_thread::~io_thread() {
  stop();
  for (int fd : listeners_) ::close(fd);
  listeners_.clear();
}

void io_thread::add_listener(int fd) { listeners_.push_back(fd); }

bool io_thread::open() {
  epoll_fd_ = ::epoll_create1(EPOLL_CLOEXEC);
  if (epoll_fd_ < 0) return false;
  wake_fd_ = ::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  if (wake_fd_ < 0) {
    ::close(epoll_fd_);
    epoll_fd_ = -1;
    return false;
  }
  epoll_event ev{};
  ev.events = EPOLLIN;
  ev.data.u64 = wake_tag;
  ::epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, wake_fd_, &ev);
  for (int fd : listeners_) {
    ev.events = EPOLLIN;
    ev.data.u64 = listener_tag | static_cast<std::uint32_t>(fd);
    ::epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, fd, &ev);
  }
  std::lock_guard<std::mutex> guard{mutex_};
  running_ = true;
  return true;
}

bool io_thread::start() {
  if (!open()) return false;
  thread_ = std::thread([this] { run(); });
  return true;
}

void io_thread::request_stop() {
  {
    std::lock_guard<std::mutex> guard{mutex_};
    if (!running_ || stopping_) return;
    stopping_ = true;
  }
  const std::uint64_t one = 1;
  [[maybe_unused]] auto n = ::write(wake_fd_, &one, sizeof one);
}

void io_thread::stop() {
  {
    std::lock_guard<std::mutex> guard{mutex_};
    if (!running_) return;
  }
  request_stop();
  if (thread_.joinable()) {
    thread_.join();
  } else {
    shut_all();  // driven by step(): no thread to do it
  }
  ::close(wake_fd_);
  ::close(epoll_fd_);
  wake_fd_ = epoll_fd_ = -1;
  for (int fd : listeners_) ::close(fd);
  listeners_.clear();
  std::lock_guard<std::mutex> guard{mutex_};
  running_ = false;
}

void io_thread::want_write(std::uint64_t connection_id) {
  std::lock_guard<std::mutex> guard{mutex_};
  if (!running_ || stopping_) return;
  write_requests_.push_back(connection_id);
  const std::uint64_t one = 1;
  [[maybe_unused]] auto n = ::write(wake_fd_, &one, sizeof one);
}

std::size_t io_thread::connection_count() const {
  std::lock_guard<std::mutex> guard{mutex_};
  return connection_count_;
}

void io_thread::run() {
  progress::scope in_library;
  if (on_start_) on_start_();
  while (step(-1)) {
  }
  shut_all();
}

void io_thread::shut_all() {
  // Shut every connection down: clients see EOF, actors get closed_atom.
  std::vector<std::uint64_t> ids;
  ids.reserve(entries_.size());
  for (auto& kv : entries_) ids.push_back(kv.first);
  for (auto id : ids) {
    entries_[id].conn->shutdown();
    drop(id, true);
  }
}

bool io_thread::step(int timeout_ms) {
  epoll_event events[64];
  return handle(events, wait(events, 64, timeout_ms));
}

int io_thread::wait(epoll_event* events, int max, int timeout_ms) {
  const int n = ::epoll_wait(epoll_fd_, events, max, timeout_ms);
  if (n < 0 && errno != EINTR) {
    log::error("io", "epoll_wait failed: ", std::strerror(errno));
    return -1;
  }
  return n < 0 ? 0 : n;
}

void io_thread::wake() {
  const std::uint64_t one = 1;
  [[maybe_unused]] auto n = ::write(wake_fd_, &one, sizeof one);
}

bool io_thread::handle(const epoll_event* events, int n) {
  if (n < 0) return false;
  bool stop_now = false;
  for (int i = 0; i < n; ++i) {
    const auto tag = events[i].data.u64;
    if (tag == wake_tag) {
      std::uint64_t count;
      [[maybe_unused]] auto r = ::read(wake_fd_, &count, sizeof count);
      {
        std::lock_guard<std::mutex> guard{mutex_};
        stop_now = stopping_;
      }
      drain_commands();
    } else if ((tag & listener_tag) != 0) {
      accept_from(static_cast<int>(tag & 0xffffffffu));
    } else {
      auto it = entries_.find(tag);
      if (it == entries_.end()) continue;
      if ((events[i].events & EPOLLOUT) != 0) {
        epoll_event ev{};
        ev.events = EPOLLIN | EPOLLRDHUP;
        ev.data.u64 = tag;
        ::epoll_ctl(epoll_fd_, EPOLL_CTL_MOD, it->second.fd, &ev);
        caf::anon_send(it->second.peer, writable_atom::value);
      }
      if ((events[i].events & (EPOLLIN | EPOLLRDHUP | EPOLLHUP | EPOLLERR)) != 0) read_from(tag);
    }
  }
  return !stop_now;
}

void io_thread::drain_commands() {
  std::vector<std::uint64_t> requests;
  {
    std::lock_guard<std::mutex> guard{mutex_};
    requests.swap(write_requests_);
  }
  for (auto id : requests) {
    auto it = entries_.find(id);
    if (it == entries_.end()) continue;
    epoll_event ev{};
    ev.events = EPOLLIN | EPOLLRDHUP | EPOLLOUT;
    ev.data.u64 = id;
    ::epoll_ctl(epoll_fd_, EPOLL_CTL_MOD, it->second.fd, &ev);
  }
}

void io_thread::accept_from(int listener) {
  for (;;) {
    const int fd = ::accept4(listener, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0) {
      if (errno == EINTR) continue;
      if (errno != EAGAIN && errno != EWOULDBLOCK)
        log::warning("io", "accept failed: ", std::strerror(errno));
      return;
    }
    peer_credentials cred;
    ucred uc{};
    socklen_t len = sizeof uc;
    if (::getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &uc, &len) == 0) {
      cred.uid = uc.uid;
      cred.gid = uc.gid;
      cred.pid = uc.pid;
    }
    const auto id = next_id_++;
    auto conn = std::make_shared<connection>(id, fd, cred, this);
    auto peer = accept_(conn);
    if (!peer) {
      conn->shutdown();
      continue;  // conn's destructor closes fd
    }
    epoll_event ev{};
    ev.events = EPOLLIN | EPOLLRDHUP;
    ev.data.u64 = id;
    if (::epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, fd, &ev) != 0) {
      log::error("io", "epoll_ctl failed: ", std::strerror(errno));
      conn->shutdown();
      caf::anon_send(peer, closed_atom::value);
      continue;
    }
    entries_.emplace(id, entry{std::move(conn), std::move(peer),
                               protocol::frame_reader{max_frame_size_}, fd});
    std::lock_guard<std::mutex> guard{mutex_};
    ++connection_count_;
  }
}

void io_thread::read_from(std::uint64_t id) {
  auto it = entries_.find(id);
  if (it == entries_.end()) return;
  auto& e = it->second;
  char buf[read_chunk];
  bool eof = false;
  // Read until EAGAIN so a level-triggered wakeup is not wasted.
  for (int round = 0; round < 16; ++round) {
    const auto n = ::recv(e.fd, buf, sizeof buf, 0);
    if (n > 0) {
      e.reader.feed(buf, static_cast<std::size_t>(n));
      if (static_cast<std::size_t>(n) < sizeof buf) break;
      continue;
    }
    if (n == 0) {
      eof = true;
      break;
    }
    if (errno == EINTR) continue;
    if (errno != EAGAIN && errno != EWOULDBLOCK) eof = true;
    break;
  }
  std::string payload;
  for (;;) {
    const auto st = e.reader.next(payload);
    if (st == protocol::frame_reader::status::complete) {
      caf::anon_send(e.peer, frame_atom::value, std::move(payload));
      payload = std::string{};
      continue;
    }
    if (st == protocol::frame_reader::status::too_large) {
      log::error("io", "connection ", id, " (pid ", e.conn->credentials().pid,
                 ") sent a frame of ", e.reader.rejected_length(), " bytes, over the limit of ",
                 max_frame_size_, ": closing that connection");
      e.conn->shutdown();
      eof = true;
    }
    break;
  }
  if (eof) drop(id, true);
}

void io_thread::drop(std::uint64_t id, bool notify) {
  auto it = entries_.find(id);
  if (it == entries_.end()) return;
  ::epoll_ctl(epoll_fd_, EPOLL_CTL_DEL, it->second.fd, nullptr);
  if (notify) caf::anon_send(it->second.peer, closed_atom::value);
  entries_.erase(it);
  std::lock_guard<std::mutex> guard{mutex_};
  --connection_count_;
}

}  // namespace pmix::transport
