#include "transport/io_thread.hpp"

#include <algorithm>

#include <fcntl.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include <caf/send.hpp>
#include <cerrno>
#include <cstring>
#include <system_error>

#include "common/log.hpp"
#include "common/progress.hpp"
#include "transport/atoms.hpp"
#include "transport/peer_identity.hpp"

namespace pmix::transport {
namespace {

constexpr std::uint64_t wake_tag = 0;
constexpr std::uint64_t listener_tag = std::uint64_t{1} << 63;
constexpr std::uint64_t timer_tag = listener_tag | 0xffffffffu;  // no listener has descriptor -1
constexpr std::size_t read_chunk = 64 * 1024;
// At most this many frames go to a peer actor in one message, so that one
// client's burst of small frames is still handled in turns with the others.
constexpr std::size_t most_batched = 64;

}  // namespace

io_thread::io_thread(acceptor accept, std::function<void()> on_start, limits bounds)
    : accept_(std::move(accept)), on_start_(std::move(on_start)), limits_(bounds) {}

io_thread::~io_thread() {
  stop();
  for (int fd : listeners_) ::close(fd);
  listeners_.clear();
  if (reserve_fd_ >= 0) ::close(reserve_fd_);
}

void io_thread::add_listener(int fd) { listeners_.push_back(fd); }

void io_thread::add_either_listener(int fd) {
  listeners_.push_back(fd);
  either_listeners_.push_back(fd);
}

bool io_thread::open() {
  reserve_fd_ = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
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
  try {
    thread_ = std::thread([this] { run(); });
  } catch (const std::system_error& e) {
    errno = e.code().value();  // the caller reports it (EAGAIN: no thread to be had)
    return false;
  }
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
  if (timer_fd_ >= 0) ::close(timer_fd_);
  wake_fd_ = epoll_fd_ = timer_fd_ = -1;
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
  for (auto id : entries_.ids()) {
    entries_.find(id)->conn->shutdown();
    drop(id, true);
  }
}

bool io_thread::step(int timeout_ms) {
  epoll_event events[64];
  return handle(events, wait(events, 64, timeout_ms));
}

int io_thread::wait(epoll_event* events, int max, int timeout_ms) {
  // Wake up in time to close a connection whose handshake is overdue, and
  // to take connections again on a listener that rests.
  for (const int due : {expire_handshakes(), resume_listeners(), throttle_check()})
    if (due >= 0 && (timeout_ms < 0 || due < timeout_ms)) timeout_ms = due;
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

int io_thread::due_ms() {
  int due = -1;
  for (const int d : {expire_handshakes(), resume_listeners(), throttle_check()})
    if (d >= 0 && (due < 0 || d < due)) due = d;
  return due;
}

bool io_thread::arm_timer(int ms) {
  if (ms == timer_ms_ && ms != 0) return true;  // the same deadline, within a millisecond
  if (timer_fd_ < 0) {
    if (ms < 0) return true;
    timer_fd_ = ::timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
    if (timer_fd_ < 0) return false;
    epoll_event ev{};
    ev.events = EPOLLIN;
    ev.data.u64 = timer_tag;
    if (::epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, timer_fd_, &ev) != 0) {
      ::close(timer_fd_);
      timer_fd_ = -1;
      return false;
    }
  }
  itimerspec when{};
  if (ms == 0) {
    when.it_value.tv_nsec = 1;  // at once (an all-zero value disarms)
  } else if (ms > 0) {
    when.it_value.tv_sec = ms / 1000;
    when.it_value.tv_nsec = static_cast<long>(ms % 1000) * 1000000L;
  }
  timer_ms_ = ms;
  return ::timerfd_settime(timer_fd_, 0, &when, nullptr) == 0;
}

bool io_thread::handle(const epoll_event* events, int n) {
  if (n < 0) return false;
  expire_handshakes();
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
    } else if (tag == timer_tag) {
      std::uint64_t count;
      [[maybe_unused]] auto r = ::read(timer_fd_, &count, sizeof count);
      timer_ms_ = -2;  // fired: the next arm_timer sets it again
    } else if ((tag & listener_tag) != 0) {
      accept_from(static_cast<int>(tag & 0xffffffffu));
    } else {
      auto* it = entries_.find(tag);
      if (it == nullptr) continue;
      if ((events[i].events & EPOLLOUT) != 0) {
        epoll_event ev{};
        ev.events = EPOLLIN | EPOLLRDHUP;
        ev.data.u64 = tag;
        ::epoll_ctl(epoll_fd_, EPOLL_CTL_MOD, it->conn->fd(), &ev);
        caf::anon_send(it->peer, writable_atom::value);
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
    auto* it = entries_.find(id);
    if (it == nullptr) continue;
    epoll_event ev{};
    ev.events = EPOLLIN | EPOLLRDHUP | EPOLLOUT;
    ev.data.u64 = id;
    ::epoll_ctl(epoll_fd_, EPOLL_CTL_MOD, it->conn->fd(), &ev);
  }
}

void io_thread::note_refused(const char* why) {
  ++refused_;
  const auto now = std::chrono::steady_clock::now();
  if (now - refused_logged_ < std::chrono::seconds(1)) return;  // counted for the next report
  log::warning("io", "refusing connections: ", why, " (", refused_, refused_ == 1 ? " connection" : " connections",
               " since the last report)");
  refused_ = 0;
  refused_logged_ = now;
}

bool io_thread::refuse_one(int listener, int error) {
  // Room for one descriptor: take the waiting connection and close it.
  if (reserve_fd_ >= 0) {
    ::close(reserve_fd_);
    reserve_fd_ = -1;
  }
  const int fd = ::accept4(listener, nullptr, nullptr, SOCK_CLOEXEC);
  if (fd >= 0) ::close(fd);
  reserve_fd_ = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  note_refused(error == EMFILE ? "this process is out of file descriptors (EMFILE)"
                               : "the system is out of file descriptors (ENFILE)");
  if (fd >= 0) return true;
  // Not even that (the reserve was gone): the listener rests a while rather
  // than spin on a connection it cannot take.
  pause_listener(listener);
  return false;
}

void io_thread::listen_for(int listener, std::uint32_t events) {
  epoll_event ev{};
  ev.events = events;
  ev.data.u64 = listener_tag | static_cast<std::uint32_t>(listener);
  ::epoll_ctl(epoll_fd_, EPOLL_CTL_MOD, listener, &ev);
}

void io_thread::pause_listener(int listener) {
  listen_for(listener, 0);
  paused_.emplace_back(std::chrono::steady_clock::now() + std::chrono::milliseconds(100), listener);
}

int io_thread::resume_listeners() {
  if (paused_.empty()) return -1;
  const auto now = std::chrono::steady_clock::now();
  while (!paused_.empty() && paused_.front().first <= now) {
    // A throttled one is re-armed by throttle_check.
    listen_for(paused_.front().second, throttled_ ? 0u : static_cast<std::uint32_t>(EPOLLIN));
    paused_.pop_front();
  }
  if (paused_.empty()) return -1;
  return static_cast<int>(
      std::chrono::duration_cast<std::chrono::milliseconds>(paused_.front().first - now).count() + 1);
}

void io_thread::throttle() {
  if (throttled_) return;
  throttled_ = true;
  log::info("io", unauthenticated_, " connections are in their handshake (PMIX_CXX_MAX_UNAUTHENTICATED): ",
            "new ones wait in the listen queue until some complete it");
  for (int fd : listeners_) listen_for(fd, 0);
}

int io_thread::throttle_check() {
  if (!throttled_) return -1;
  for (const auto& h : handshakes_)
    if (auto* it = entries_.find(h.second); it != nullptr) note_authenticated(*it);
  if (unauthenticated_ >= limits_.max_unauthenticated) {
    // A peer's handshake ends on another thread: look again soon, or when
    // a silent connection may give its place (then listen again).
    const auto now = std::chrono::steady_clock::now();
    if (!evictable(now)) {
      const int due = until_evictable(now);
      return due < 0 ? 10 : std::min(due, 10);
    }
  }
  throttled_ = false;
  for (int fd : listeners_) {
    if (std::any_of(paused_.begin(), paused_.end(), [fd](const auto& p) { return p.second == fd; })) continue;
    listen_for(fd, EPOLLIN);
  }
  return -1;
}

std::optional<std::uint64_t> io_thread::evictable(std::chrono::steady_clock::time_point now) const {
  const auto grace = std::chrono::milliseconds(limits_.handshake_grace_ms);
  const auto timeout = std::chrono::milliseconds(limits_.handshake_timeout_ms);
  for (const auto& h : handshakes_) {  // oldest first
    auto* it = entries_.find(h.second);
    if (it == nullptr || !it->counted_unauthenticated || it->heard ||
        it->conn->authenticated())
      continue;
    if (now - (h.first - timeout) < grace) return std::nullopt;  // the rest are younger
    int unread = 0;
    if (::ioctl(it->conn->fd(), FIONREAD, &unread) == 0 && unread > 0) continue;  // its frame is coming
    return h.second;
  }
  return std::nullopt;
}

int io_thread::until_evictable(std::chrono::steady_clock::time_point now) const {
  const auto grace = std::chrono::milliseconds(limits_.handshake_grace_ms);
  const auto timeout = std::chrono::milliseconds(limits_.handshake_timeout_ms);
  for (const auto& h : handshakes_) {
    auto* it = entries_.find(h.second);
    if (it == nullptr || !it->counted_unauthenticated || it->heard) continue;
    const auto left = h.first - timeout + grace - now;
    return left.count() <= 0 ? 0
                             : static_cast<int>(std::chrono::duration_cast<std::chrono::milliseconds>(left).count() + 1);
  }
  return -1;
}

void io_thread::evict(std::uint64_t id) {
  auto* it = entries_.find(id);
  if (it == nullptr) return;
  ++evicted_;
  const auto now = std::chrono::steady_clock::now();
  if (now - evicted_logged_ >= std::chrono::seconds(1)) {
    log::warning("io", limits_.max_unauthenticated, " connections in their handshake (PMIX_CXX_MAX_UNAUTHENTICATED): ",
                 evicted_, evicted_ == 1 ? " connection" : " connections", " silent for ", limits_.handshake_grace_ms,
                 " ms or more (PMIX_CXX_HANDSHAKE_GRACE_MS) closed for newer ones; the last from pid ",
                 it->conn->credentials().pid, ", uid ", it->conn->credentials().uid);
    evicted_ = 0;
    evicted_logged_ = now;
  }
  if (!busy_frame_.empty() && !it->conn->openpmix())
    [[maybe_unused]] auto sent = ::send(it->conn->fd(), busy_frame_.data(), busy_frame_.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
  it->conn->shutdown();
  drop(id, true);
}

void io_thread::accept_from(int listener) {
  for (;;) {
    std::optional<std::uint64_t> victim;
    if (unauthenticated_ >= limits_.max_unauthenticated) {
      // A silent connection gives its place; else the rest wait in the
      // listen queue (not refused: a node's ranks all connect at once,
      // hundreds of them).
      victim = evictable(std::chrono::steady_clock::now());
      if (!victim) {
        throttle();
        return;
      }
    }
    const int fd = ::accept4(listener, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0) {
      if (errno == EINTR) continue;
      if (errno == EMFILE || errno == ENFILE) {
        if (refuse_one(listener, errno)) continue;  // the next one too, until the queue is empty
        return;
      }
      if (errno != EAGAIN && errno != EWOULDBLOCK) note_refused(std::strerror(errno));
      return;
    }
    if (victim) evict(*victim);  // only once there is one to take its place
    peer_credentials cred;
    ucred uc{};
    socklen_t len = sizeof uc;
    // On TCP the kernel answers SO_PEERCRED with nobody's ids (-1).
    if (::getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &uc, &len) == 0 && uc.uid != static_cast<uid_t>(-1)) {
      cred.uid = uc.uid;
      cred.gid = uc.gid;
      cred.pid = uc.pid;
    } else if (const auto tcp = local_tcp_peer(fd)) {
      cred.uid = tcp->uid;
      cred.socket_inode = tcp->inode;
    }
    const auto id = entries_.reserve();
    auto conn = std::make_shared<connection>(id, fd, cred, this, limits_.max_send_backlog);
    const bool either =
        std::find(either_listeners_.begin(), either_listeners_.end(), listener) != either_listeners_.end();
    auto peer = accept_(conn);
    if (!peer) {
      entries_.erase(id);
      conn->shutdown();
      continue;  // conn's destructor closes fd
    }
    epoll_event ev{};
    ev.events = EPOLLIN | EPOLLRDHUP;
    ev.data.u64 = id;
    if (::epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, fd, &ev) != 0) {
      log::error("io", "epoll_ctl failed: ", std::strerror(errno));
      entries_.erase(id);
      conn->shutdown();
      caf::anon_send(peer, closed_atom::value);
      continue;
    }
    entries_.place(id, entry{std::move(conn), std::move(peer), protocol::frame_reader{limits_.handshake_frame}});
    if (either) entries_.find(id)->reader.use_either_framing();
    ++unauthenticated_;
    // Its deadline also says when it was taken (evictable).
    handshakes_.emplace_back(std::chrono::steady_clock::now() +
                                 std::chrono::milliseconds(limits_.handshake_timeout_ms),
                             id);
    std::lock_guard<std::mutex> guard{mutex_};
    ++connection_count_;
  }
}

void io_thread::note_authenticated(entry& e) {
  if (!e.counted_unauthenticated || !e.conn->authenticated()) return;
  e.counted_unauthenticated = false;
  --unauthenticated_;
  e.reader.set_max(limits_.max_frame);
}

int io_thread::expire_handshakes() {
  if (handshakes_.empty()) return -1;
  const auto now = std::chrono::steady_clock::now();
  while (!handshakes_.empty()) {
    const auto [deadline, id] = handshakes_.front();
    auto* it = entries_.find(id);
    if (it != nullptr) note_authenticated(*it);
    const bool pending = it != nullptr && it->counted_unauthenticated;
    if (!pending) {
      handshakes_.pop_front();
      continue;
    }
    if (deadline > now)
      return static_cast<int>(
          std::chrono::duration_cast<std::chrono::milliseconds>(deadline - now).count() + 1);
    // A connection that sent a whole frame waits for the server, not the
    // other way round: on a node starting thousands of processes at once,
    // the server's own backlog of handshakes passed 10 s and it closed
    // clients that had done their part (2,048 at once on 2 CPUs). Nor is one
    // whose bytes the server has not read yet (its thread was starved) idle.
    // Either keeps its handshake place (the cap bounds them; a handshake the
    // server refuses closes it) and is looked at again a timeout later.
    int unread = 0;
    if (it->heard || (::ioctl(it->conn->fd(), FIONREAD, &unread) == 0 && unread > 0)) {
      handshakes_.pop_front();
      handshakes_.emplace_back(now + std::chrono::milliseconds(limits_.handshake_timeout_ms), id);
      continue;
    }
    log::warning("io", "connection ", id, " (pid ", it->conn->credentials().pid, ", uid ",
                 it->conn->credentials().uid, ") did not complete its handshake within ",
                 limits_.handshake_timeout_ms, " ms (PMIX_CXX_HANDSHAKE_TIMEOUT_MS): closing it");
    handshakes_.pop_front();
    it->conn->shutdown();
    drop(id, true);
  }
  return -1;
}

void io_thread::read_from(std::uint64_t id) {
  auto* it = entries_.find(id);
  if (it == nullptr) return;
  auto& e = *it;
  note_authenticated(e);
  char buf[read_chunk];
  std::string payload;
  bool eof = false;
  // Read until EAGAIN so a level-triggered wakeup is not wasted. Whole
  // frames are taken from each read directly; only a partial one is kept
  // by the reader.
  for (int round = 0; round < 16; ++round) {
    const auto n = ::recv(e.conn->fd(), buf, sizeof buf, 0);
    if (n > 0) {
      if (!split(e, id, std::string_view{buf, static_cast<std::size_t>(n)}, payload)) {
        eof = true;
        break;
      }
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
  // The frames read go before the end of the connection (drop's closed_atom).
  deliver(e);
  e.reader.release_if_drained();
  if (eof) drop(id, true);
}

void io_thread::deliver(entry& e) {
  if (batch_.size() == 1)
    caf::anon_send(e.peer, frame_atom::value, std::move(batch_.front()));
  else if (batch_.size() > 1)
    caf::anon_send(e.peer, frames_atom::value, frames_msg{std::move(batch_)});
  batch_.clear();
}

bool io_thread::split(entry& e, std::uint64_t id, std::string_view data, std::string& payload) {
  for (;;) {
    const auto st = e.reader.next_from(data, payload);
    if (st == protocol::frame_reader::status::need_more) return true;
    if (st == protocol::frame_reader::status::complete) {
      if (e.reader.openpmix() && !e.conn->openpmix()) e.conn->set_openpmix();
      e.heard = true;
      batch_.push_back(std::move(payload));
      payload = std::string{};
      if (batch_.size() == most_batched) deliver(e);
      continue;
    }
    log::error("io", "connection ", id, " (pid ", e.conn->credentials().pid, ") sent a frame of ",
               e.reader.rejected_length(), " bytes, over the limit of ",
               e.counted_unauthenticated ? limits_.handshake_frame : limits_.max_frame,
               e.counted_unauthenticated ? " before its handshake (PMIX_CXX_MAX_HANDSHAKE_FRAME)" : "",
               ": closing that connection");
    e.conn->shutdown();
    return false;
  }
}

void io_thread::drop(std::uint64_t id, bool notify) {
  auto* it = entries_.find(id);
  if (it == nullptr) return;
  ::epoll_ctl(epoll_fd_, EPOLL_CTL_DEL, it->conn->fd(), nullptr);
  if (notify) caf::anon_send(it->peer, closed_atom::value);
  if (it->counted_unauthenticated) --unauthenticated_;
  entries_.erase(id);
  std::lock_guard<std::mutex> guard{mutex_};
  --connection_count_;
}

}  // namespace pmix::transport
