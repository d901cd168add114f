#include "client/connection.hpp"

#include <fcntl.h>
#include <linux/futex.h>
#include <poll.h>
#include <sched.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <ctime>
#include <utility>

#include "common/fork_park.hpp"
#include "common/log.hpp"
#include "common/progress.hpp"
#include "protocol/openpmix.hpp"
#include "transport/send_parts.hpp"
#include "transport/shared_data.hpp"
#include "transport/tcp.hpp"

namespace pmix::client {

namespace {
thread_local int answered_here_depth = 0;

// futex_waitv(2) (Linux 5.16): a thread waiting on the fence board sleeps on
// the board's generation (shared with the server) and on its connection's
// own word at once. Without it the board is not used.
bool can_wait_on_board() {
  // A wait on a word that does not hold the expected value returns EAGAIN at
  // once where the call works; a kernel without it says ENOSYS, a seccomp
  // filter that refuses it EPERM.
  static const bool yes = [] {
    std::uint32_t word = 1;
    futex_waitv w{};
    w.val = 0;
    w.uaddr = reinterpret_cast<std::uintptr_t>(&word);
    w.flags = FUTEX_32 | FUTEX_PRIVATE_FLAG;
    const long r = ::syscall(SYS_futex_waitv, &w, 1, 0, nullptr, 0);
    return r < 0 && errno == EAGAIN;
  }();
  return yes;
}

// Sleeps until `*shared` is not `expected`, or `*own` is not `seen`, or for
// at most `guard` (a wake that came before the sleep is not lost: the
// kernel compares both words first; the timeout only guards against a wake
// missed, as drive()'s poll does: see wake_guard). It was 100 ms: a fence of
// 1,024 local processes, 0.3 s on 2 vCPUs, woke every waiter three times for
// nothing (20-40% more CPU than answering each by socket, and slower).
// False when the guard ran out.
bool sleep_on_board(const std::uint32_t* shared, std::uint32_t expected, const std::atomic<std::uint32_t>* own,
                    std::uint32_t seen, std::chrono::milliseconds guard) {
  futex_waitv w[2]{};
  w[0].val = expected;
  w[0].uaddr = reinterpret_cast<std::uintptr_t>(shared);
  w[0].flags = FUTEX_32;
  w[1].val = seen;
  w[1].uaddr = reinterpret_cast<std::uintptr_t>(own);
  w[1].flags = FUTEX_32 | FUTEX_PRIVATE_FLAG;
  timespec until{};
  ::clock_gettime(CLOCK_MONOTONIC, &until);
  until.tv_sec += guard.count() / 1000;
  until.tv_nsec += (guard.count() % 1000) * 1000000;
  if (until.tv_nsec >= 1000000000) {
    ++until.tv_sec;
    until.tv_nsec -= 1000000000;
  }
  if (::syscall(SYS_futex_waitv, w, 2, 0, &until, CLOCK_MONOTONIC) < 0) {
    if (errno == ETIMEDOUT) return false;
    if (errno != EAGAIN && errno != EINTR) {
      // Never a busy loop, whatever the kernel says.
      log::debug("client", "futex_waitv: ", std::strerror(errno));
      const timespec pause{0, 1000 * 1000};
      ::nanosleep(&pause, nullptr);
    }
  }
  return true;
}

// How long a blocked call sleeps before it looks again although nothing
// woke it: the socket and the wake-ups it sleeps on are level-triggered, so
// this only guards against a wake-up missed. It starts at 1 s and doubles
// with each expiry up to 32 s: a fence that waits seconds for thousands of
// processes to start woke every waiter every second, and at 1,024 and 2,048
// processes started at once on 2 vCPUs those wake-ups were 12% and 6% of
// the processes' CPU (docs/performance.md, "Waking a blocked call").
struct wake_guard {
  std::chrono::milliseconds next{1000};
  bool expired = false;  // once it ran out, the wait does not poll again
  void ran_out() {
    expired = true;
    next = std::min(2 * next, std::chrono::milliseconds{32000});
  }
};
}  // namespace

bool steps_aside(int my_cpu, int server_cpu, bool cpu_to_spare) {
  return cpu_to_spare && my_cpu >= 0 && my_cpu == server_cpu;
}

bool step_aside(int server_cpu) {
  cpu_set_t mine;
  CPU_ZERO(&mine);
  if (server_cpu < 0 || server_cpu >= CPU_SETSIZE || ::sched_getaffinity(0, sizeof mine, &mine) != 0 ||
      !CPU_ISSET(server_cpu, &mine) || CPU_COUNT(&mine) < 2)
    return false;
  cpu_set_t others = mine;
  CPU_CLR(server_cpu, &others);
  // The kernel moves this thread at once; the caller's own set comes back.
  if (::sched_setaffinity(0, sizeof others, &others) != 0) return false;
  if (::sched_setaffinity(0, sizeof mine, &mine) != 0)
    log::warning("client", "could not restore this thread's CPU affinity: ", std::strerror(errno));
  return true;
}

connection::answered_here::answered_here() { ++answered_here_depth; }
connection::answered_here::~answered_here() { --answered_here_depth; }

connection::~connection() { close(); }

pmix_status_t connection::open(const std::string& uri, std::unique_ptr<connection>& out) {
  if (uri.find("tcp4://") != std::string::npos || uri.find("tcp6://") != std::string::npos) {
    sockaddr_storage addr{};
    socklen_t len = 0;
    if (!transport::parse_tcp_uri(uri, addr, len)) {
      log::error("client", "server URI '", uri, "' is not a valid TCP address");
      return PMIX_ERR_BAD_PARAM;
    }
    const int fd = ::socket(addr.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return PMIX_ERR_UNREACH;
    if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), len) != 0) {
      log::debug("client", "cannot connect to the server at '", uri, "': ", std::strerror(errno));
      ::close(fd);
      return PMIX_ERR_UNREACH;
    }
    const int one = 1;
    ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    out.reset(new connection(fd, false));
    return PMIX_SUCCESS;
  }
  const auto pos = uri.find("uds://");
  if (pos == std::string::npos) {
    log::error("client", "server URI '", uri, "' names no transport this library speaks");
    return PMIX_ERR_NOT_SUPPORTED;
  }
  const auto path = uri.substr(pos + 6);
  sockaddr_un addr{};
  if (path.empty() || path.size() >= sizeof addr.sun_path) {
    log::error("client", "server socket path '", path, "' is invalid");
    return PMIX_ERR_BAD_PARAM;
  }
  const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return PMIX_ERR_UNREACH;
  addr.sun_family = AF_UNIX;
  std::memcpy(addr.sun_path, path.data(), path.size());
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    log::debug("client", "cannot connect to the server at '", path, "': ", std::strerror(errno));
    ::close(fd);
    return PMIX_ERR_UNREACH;
  }
  out.reset(new connection(fd, true));
  return PMIX_SUCCESS;
}

pmix_status_t connection::write_frame(std::string_view head, std::string_view body) {
  std::lock_guard<std::mutex> guard{write_mutex_};
  return write_locked(head, body);
}

pmix_status_t connection::write_locked(std::string_view head, std::string_view body) {
  // Held frames go in front, in the same system call (one wake-up of the
  // server for both, and for a commit held until its fence one sendmsg
  // instead of two).
  std::string with_held;
  if (!held_.empty()) {
    with_held = std::move(held_);
    held_.clear();
    with_held.append(head);
    head = with_held;
  }
  std::size_t done = 0;
  const std::size_t total = head.size() + body.size();
  while (done < total) {
    const auto n = transport::send_parts(fd_, head, body, done, MSG_NOSIGNAL);
    if (n > 0) {
      done += static_cast<std::size_t>(n);
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      pollfd p{fd_, POLLOUT, 0};
      ::poll(&p, 1, -1);
      continue;
    }
    return PMIX_ERR_LOST_CONNECTION;
  }
  return PMIX_SUCCESS;
}

pmix_status_t connection::openpmix_handshake(std::string_view body) {
  // OpenPMIx's peers read this header as the sender wrote it (in memory
  // order): index -1, tag -1, the length, 4 bytes of padding.
  char head[16];
  const std::int32_t index = -1;
  const std::uint32_t tag = 0xffffffffu, length = static_cast<std::uint32_t>(body.size()), pad = 0;
  std::memcpy(head, &index, 4);
  std::memcpy(head + 4, &tag, 4);
  std::memcpy(head + 8, &length, 4);
  std::memcpy(head + 12, &pad, 4);
  return write_frame(std::string_view{head, sizeof head}, body);
}

pmix_status_t connection::read_raw(std::size_t n, std::string& out) {
  out.resize(n);
  std::size_t got = 0;
  while (got < n) {
    const auto r = ::recv(fd_, out.data() + got, n - got, 0);
    if (r > 0) {
      got += static_cast<std::size_t>(r);
    } else if (r < 0 && errno == EINTR) {
      continue;
    } else {
      log::error("client", "the server closed the connection during the handshake",
                 r < 0 ? std::string{": "} + std::strerror(errno) : std::string{});
      return PMIX_ERR_LOST_CONNECTION;
    }
  }
  return PMIX_SUCCESS;
}

void connection::use_openpmix(std::uint32_t index) {
  openpmix_ = true;
  openpmix_index_ = index;
  next_id_ = 101;  // OpenPMIx's first request tag
  reader_.use_openpmix_framing(false);
}

connection::request_head connection::head_of(std::uint64_t id, protocol::body kind, std::size_t size) const {
  request_head h;
  if (openpmix_) {
    char header[openpmix::header_size];
    openpmix::message_header(header, openpmix_index_, static_cast<std::uint32_t>(id), static_cast<std::uint32_t>(size));
    std::memcpy(h.bytes, header, sizeof header);
    h.size = sizeof header;
    return h;
  }
  const protocol::frame_prefix prefix{id, kind, size};
  const auto v = prefix.view();
  std::memcpy(h.bytes, v.data(), v.size());
  h.size = v.size();
  return h;
}

bool connection::openpmix_envelope(std::string&& frame, protocol::envelope& out) {
  const std::uint32_t tag = openpmix::get_be32(frame.data() + 4);
  if (tag == 0 || tag == 2) {
    out.id = 0;
    out.kind = tag == 0 ? protocol::body::event : protocol::body::iof;
  } else if (tag >= 100) {
    out.id = tag;
    out.kind = protocol::body::none;
  } else {
    // A heartbeat's answer, or a tag we never use.
    log::debug("client", "dropping a message on OpenPMIx tag ", tag);
    return false;
  }
  out.bytes = std::move(frame);
  out.message = std::string_view{out.bytes}.substr(openpmix::header_size);
  return true;
}

pmix_status_t connection::handshake(protocol::body kind, const std::string& message,
                                    protocol::envelope& reply) {
  const auto id = next_id_++;
  const protocol::frame_prefix prefix{id, kind, message.size()};
  // A server that turned this connection away may have closed it already:
  // what it said is still there to read (a busy answer: try again).
  const auto rc = write_frame(prefix.view(), message);
  const int write_errno = errno;
  char buf[16384];
  std::string payload;
  for (;;) {
    const auto st = reader_.next(payload);
    if (st == protocol::frame_reader::status::complete) {
      if (!protocol::parse_envelope(std::move(payload), reply)) {
        log::error("client", "the server's answer to connect is malformed");
        return PMIX_ERR_UNPACK_FAILURE;
      }
      // Id 0, before the server read anything: it did not take us.
      protocol::connect_reply busy;
      if (reply.id == 0 && reply.kind == protocol::body::connect_reply && protocol::decode(reply.message, busy) &&
          busy.status == PMIX_ERR_OUT_OF_RESOURCE) {
        log::debug("client", "the server is busy with other connections: it did not take this one");
        return PMIX_ERR_OUT_OF_RESOURCE;
      }
      if (reply.id != id || !take_shared(reply)) {
        log::error("client", "the server's answer to connect is malformed");
        return PMIX_ERR_UNPACK_FAILURE;
      }
      return PMIX_SUCCESS;
    }
    if (st == protocol::frame_reader::status::too_large) return PMIX_ERR_UNPACK_FAILURE;
    const auto n = receive(buf, sizeof buf);
    if (n > 0) {
      reader_.feed(buf, static_cast<std::size_t>(n));
    } else if (n < 0 && errno == EINTR) {
      continue;
    } else if (rc != PMIX_SUCCESS) {
      log::error("client", "cannot send the connect request: ", std::strerror(write_errno));
      return rc;
    } else {
      // The caller says so (a tool may then try OpenPMIx's protocol).
      log::debug("client", "the server closed the connection during the handshake",
                 n < 0 ? std::string{": "} + std::strerror(errno) : std::string{});
      return PMIX_ERR_LOST_CONNECTION;
    }
  }
}

pmix_status_t connection::start() {
  wake_fd_ = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  driver_wake_fd_ = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  epoll_fd_ = ::epoll_create1(EPOLL_CLOEXEC);
  if (wake_fd_ < 0 || driver_wake_fd_ < 0 || epoll_fd_ < 0) return PMIX_ERR_OUT_OF_RESOURCE;
  // From now on two threads may read (one at a time): reads never block.
  ::fcntl(fd_, F_SETFL, ::fcntl(fd_, F_GETFL) | O_NONBLOCK);
  epoll_event ev{};
  ev.events = EPOLLIN;
  ev.data.fd = wake_fd_;
  ::epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, wake_fd_, &ev);
  ev.data.fd = fd_;
  ::epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, fd_, &ev);
  // What the handshake's read took behind its reply (the server's
  // commit_hold_end or an event, sent right after it) is in the reader, not
  // on the socket: epoll would not say so, and the progress thread's first
  // round reads it without waiting.
  behind_ = reader_.buffered() > 0;
  has_thread_ = true;
  if (const int rc = ::pthread_create(&thread_, nullptr, &connection::thread_main, this); rc != 0) {
    has_thread_ = false;
    log::error("client", "cannot start the progress thread: ", std::strerror(rc));
    return PMIX_ERR_OUT_OF_RESOURCE;
  }
  return PMIX_SUCCESS;
}

void connection::join_thread() {
  if (::pthread_equal(thread_, ::pthread_self()) != 0) {
    // As std::thread::join would refuse it (callers keep this from the
    // progress thread: session::~session hands itself to another thread).
    log::error("client", "the progress thread cannot wait for itself to end");
    return;
  }
  ::pthread_join(thread_, nullptr);
  has_thread_ = false;
  thread_id_.store(pthread_t{}, std::memory_order_relaxed);
}

void* connection::thread_main(void* self) {
  auto* c = static_cast<connection*>(self);
  c->thread_id_.store(::pthread_self(), std::memory_order_release);
  c->run(c->behind_);
  return nullptr;
}

// Turns the progress thread's interest in the socket on or off. The socket
// stays in the epoll set (added once, at start): a change of its event mask
// costs a third of a removal and a new entry, and a blocking call makes two
// changes. Neither needs the progress thread to wake: epoll_ctl acts on the
// set while it sleeps, and interest turned on while the socket is readable
// wakes it at once. Off, the kernel still reports a hang-up (epoll always
// does); the progress thread then waits on the read lock until the caller
// that drives the socket lets it go, and sees the end of the stream itself.
void connection::watch_socket(bool on) {
  epoll_event ev{};
  ev.events = on ? static_cast<std::uint32_t>(EPOLLIN) : 0u;
  ev.data.fd = fd_;
  ::epoll_ctl(epoll_fd_, EPOLL_CTL_MOD, fd_, &ev);
}

pmix_status_t connection::send(protocol::body kind, const std::string& message) {
  if (stopping_.load(std::memory_order_acquire)) return PMIX_ERR_NOT_AVAILABLE;  // PMIx_Progress_thread_stop
  std::uint64_t id = 0;
  if (openpmix_) {
    // OpenPMIx's peers tag every message; one that gets no answer (an
    // events deregistration) takes a tag no reply is waited on.
    std::lock_guard<std::mutex> guard{mutex_};
    id = next_id_++;
  }
  const auto head = head_of(id, kind, message.size());
  return write_frame(head.view(), message);
}

void connection::allow_hold(bool allowed) {
  std::lock_guard<std::mutex> guard{write_mutex_};
  hold_allowed_ = allowed;
}

pmix_status_t connection::send_held(protocol::body kind, const std::string& message) {
  // More than this stays held no longer: one frame of it is written now.
  constexpr std::size_t most_held = 64 * 1024;
  {
    // A connection known to be gone says so now, as a write would.
    std::lock_guard<std::mutex> guard{mutex_};
    if (lost_) return PMIX_ERR_LOST_CONNECTION;
  }
  const protocol::frame_prefix prefix{0, kind, message.size()};
  std::lock_guard<std::mutex> guard{write_mutex_};
  if (!hold_allowed_ || held_.size() + prefix.view().size() + message.size() > most_held)
    return write_locked(prefix.view(), message);
  held_.append(prefix.view());
  held_.append(message);
  return PMIX_SUCCESS;
}

void connection::end_hold() {
  const protocol::frame_prefix prefix{0, protocol::body::commit_hold_ended, 0};
  std::lock_guard<std::mutex> guard{write_mutex_};
  hold_allowed_ = false;
  if (write_locked(prefix.view(), {}) != PMIX_SUCCESS)
    log::debug("client", "could not answer the server's commit_hold_end: the connection is going");
}

std::vector<std::pair<std::uint64_t, connection::pending_request>>::iterator connection::find_pending(
    std::uint64_t id) {
  return std::find_if(pending_.begin(), pending_.end(), [id](const auto& p) { return p.first == id; });
}

pmix_status_t connection::request(protocol::body kind, const std::string& message, completion done,
                                  bool on_board) {
  std::uint64_t id;
  {
    std::lock_guard<std::mutex> guard{mutex_};
    if (lost_ || stopping_) {
      if (on_board) board_busy_ = false;
      return lost_ ? PMIX_ERR_LOST_CONNECTION : PMIX_ERR_NOT_AVAILABLE;
    }
    id = next_id_++;
    // OpenPMIx's tags are 32-bit, and wrap to 100 (its first is 101).
    if (openpmix_ && next_id_ > 0xffffffffu) next_id_ = 101;
    pending_.emplace_back(id, pending_request{std::move(done), answered_here_depth > 0});
    if (on_board) board_id_ = id;
  }
  const auto head = head_of(id, kind, message.size());
  auto rc = write_frame(head.view(), message);
  if (rc != PMIX_SUCCESS) {
    {
      std::lock_guard<std::mutex> guard{mutex_};
      auto it = find_pending(id);  // the reader may have failed it already
      if (it != pending_.end()) pending_.erase(it);
    }
    board_request_ended(id);
  }
  return rc;
}

connection::board_plan connection::plan_board() {
  board_plan plan;
  if (!unix_ || answered_here_depth == 0 || !can_wait_on_board()) return plan;
  std::lock_guard<std::mutex> guard{mutex_};
  if (board_ != nullptr) {
    if (board_busy_) return plan;  // another thread's fence waits there
    board_busy_ = true;
    board_id_ = 0;
    board_thread_ = std::this_thread::get_id();
    // Read before the request goes out: the post this fence waits for
    // cannot happen before the server has it.
    board_generation_ = transport::board_generation(board_);
    plan.wait = true;
  } else if (!board_asked_ && ++whole_fences_ >= 2) {
    // Asked for at the second such fence, not the first: a process that
    // fences once (MPI_Init's exchange, then finalize) never maps the board
    // it would not use (the descriptor, its checks, a 1 MiB mapping and its
    // unmapping cost 0.27 ms of each such process's CPU here).
    board_asked_ = true;
    plan.request = true;
  }
  return plan;
}

bool connection::has_board() const {
  std::lock_guard<std::mutex> guard{mutex_};
  return board_ != nullptr;
}

void connection::board_request_ended(std::uint64_t id) {
  {
    std::lock_guard<std::mutex> guard{mutex_};
    if (!board_busy_ || board_id_ != id) return;
    board_busy_ = false;
    board_id_ = 0;
  }
  wake_board_waiter();
}

void connection::wake_board_waiter() {
  board_wake_.fetch_add(1, std::memory_order_release);
  ::syscall(SYS_futex, &board_wake_, FUTEX_WAKE_PRIVATE, 1, nullptr, nullptr, 0);
}

void connection::post(std::function<void()> task) {
  {
    std::lock_guard<std::mutex> guard{mutex_};
    tasks_.push_back(std::move(task));
  }
  const std::uint64_t one = 1;
  [[maybe_unused]] auto n = ::write(wake_fd_, &one, sizeof one);
}

bool connection::lost() const {
  std::lock_guard<std::mutex> guard{mutex_};
  return lost_;
}

long connection::receive(char* buf, std::size_t size) {
  return transport::receive_with_descriptors(fd_, buf, size, received_fds_);
}

bool connection::take_shared(protocol::envelope& e) {
  const auto size = protocol::shared_size(e.kind, e.message);
  if (size == 0) return true;
  if (received_fds_.empty()) {
    log::error("client", "the server announced shared data without its descriptor");
    return false;
  }
  const int fd = received_fds_.front();
  received_fds_.pop_front();
  if (e.kind == protocol::body::fence_board) {
    // Kept by the connection; one that is refused (logged) leaves the
    // fences answering by socket.
    const transport::board_header* header = nullptr;
    auto owner = transport::map_board(fd, size, header);
    std::lock_guard<std::mutex> guard{mutex_};
    if (owner && board_ == nullptr) {
      board_owner_ = std::move(owner);
      board_ = header;
    }
    return true;
  }
  e.shared_owner = transport::map_shared(fd, size, e.shared);
  return e.shared_owner != nullptr;
}

bool connection::read_frames(std::vector<protocol::envelope>& out, bool& lost) {
  char buf[65536];
  std::string payload;
  // Frames that came in the handshake's read, behind its reply, wait in the
  // reader: taken first, in order.
  if (reader_.buffered() > 0 && !split_frames({}, payload, out, lost)) return false;
  for (;;) {
    const auto got = receive(buf, sizeof buf);
    if (got < 0 && errno == EINTR) continue;
    if (got < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return true;
    if (got <= 0) {
      lost = true;
      return false;
    }
    if (openpmix_ && !unix_) {
      // An OpenPMIx server answers a commit, which we do not wait for, and
      // its socket holds the next answer (the fence's) until that one is
      // acknowledged: a delayed acknowledgement cost every fence 40 ms.
      // Acknowledge at once (the kernel turns this off again by itself).
      const int one = 1;
      ::setsockopt(fd_, IPPROTO_TCP, TCP_QUICKACK, &one, sizeof one);
    }
    if (!split_frames({buf, static_cast<std::size_t>(got)}, payload, out, lost)) return false;
    if (static_cast<std::size_t>(got) < sizeof buf) return true;  // drained
  }
}

bool connection::split_frames(std::string_view data, std::string& payload, std::vector<protocol::envelope>& out,
                              bool& lost) {
  for (;;) {
    const auto st = reader_.next_from(data, payload);
    if (st == protocol::frame_reader::status::need_more) return true;
    if (openpmix_ && st == protocol::frame_reader::status::complete) {
      out.emplace_back();
      if (!openpmix_envelope(std::move(payload), out.back())) out.pop_back();
      continue;
    }
    out.emplace_back();
    if (st == protocol::frame_reader::status::too_large ||
        !protocol::parse_envelope(std::move(payload), out.back()) || !take_shared(out.back())) {
      out.pop_back();
      log::error("client", "malformed frame from the server: closing the connection");
      ::shutdown(fd_, SHUT_RDWR);
      lost = true;
      return false;
    }
  }
}

bool connection::answers_blocking_call(std::uint64_t id) {
  std::lock_guard<std::mutex> guard{mutex_};
  auto it = find_pending(id);
  return it != pending_.end() && it->second.here;
}

void connection::dispatch(protocol::envelope& e, bool on_progress_thread) {
  if (e.id == 0) {
    if (e.kind == protocol::body::fence_board) return;  // taken by take_shared
    if (e.kind == protocol::body::commit_hold_end) return end_hold();
    if (unprompted_) unprompted_(e);  // events: their handlers are posted, never run here
    return;
  }
  pending_request req;
  bool board = false;
  {
    std::lock_guard<std::mutex> guard{mutex_};
    auto it = find_pending(e.id);
    if (it == pending_.end()) return;
    req = std::move(it->second);
    // Order does not matter: the last entry takes its place.
    if (it + 1 != pending_.end()) *it = std::move(pending_.back());
    pending_.pop_back();
    if (board_busy_ && board_id_ == e.id) {
      board = true;
      board_busy_ = false;
      board_id_ = 0;
    }
  }
  if (on_progress_thread || req.here) {
    req.done(PMIX_SUCCESS, &e);
    // A fence that waited on the board and was answered by socket: its
    // thread sleeps on the board and on board_wake_.
    if (board && on_progress_thread) wake_board_waiter();
    return;
  }
  // Another thread's non-blocking call: its callback belongs on the
  // progress thread.
  auto frame = std::make_shared<protocol::envelope>(std::move(e));
  post([done = std::move(req.done), frame] { done(PMIX_SUCCESS, frame.get()); });
}

void connection::drive_board(const std::function<bool()>& done) {
  progress::scope in_library;
  const transport::board_header* board;
  std::uint32_t generation;
  std::uint64_t id;
  {
    std::lock_guard<std::mutex> guard{mutex_};
    board = board_;
    generation = board_generation_;
    id = board_id_;
  }
  const auto* word = &board->generation;
  // The socket stays with the progress thread: anything else that comes
  // (events, or this fence's answer if the server gives it there, or the end
  // of the stream) is its, and it wakes this thread through board_wake_.
  wake_guard guard;
  for (;;) {
    const auto seen = board_wake_.load(std::memory_order_acquire);
    if (done()) return;
    const auto now = transport::board_generation(board);
    if (now != generation) {
      protocol::envelope e;
      e.id = id;
      e.kind = protocol::body::fence_reply;
      if (!transport::board_read(board, now, e.bytes)) {
        log::error("client", "the fence board changed while its reply was read: this fence fails");
        e.bytes = std::string{"\x08\x01", 2};  // FenceReply{status: zigzag(-1) = PMIX_ERROR}
      }
      e.message = e.bytes;
      dispatch(e, false);
      if (!done()) {
        // Already answered on another way (it left pending_): wait for that.
        generation = now;
      }
      continue;
    }
    // As drive(): poll first (yielding), then sleep, with the same back-off;
    // but not on the server's CPU when another is free.
    bool changed = false;
    const bool polls = spin_.count() > 0 && !guard.expired;  // a client that never polls has nothing to move for
    if (polls && aside_skip_ > 0) {
      --aside_skip_;
    } else if (polls) {
      const int server_cpu = transport::board_poster_cpu(board);
      if (steps_aside(::sched_getcpu(), server_cpu, cpu_to_spare_.load(std::memory_order_relaxed))) {
        step_aside(server_cpu);
        aside_skip_ = aside_backoff_;
        aside_backoff_ = std::min(2 * aside_backoff_ + 1, 1023u);
      }
    }
    if (polls && board_skip_ > 0) {
      --board_skip_;
    } else if (polls) {
      const auto until = std::chrono::steady_clock::now() + spin_;
      while (!(changed = transport::board_generation(board) != generation ||
                         board_wake_.load(std::memory_order_acquire) != seen) &&
             std::chrono::steady_clock::now() < until)
        ::sched_yield();
      if (!changed) {
        board_backoff_ = board_backoff_ == 0 ? 1 : std::min(2 * board_backoff_, 64u);
        board_skip_ = board_backoff_;
      } else {
        board_backoff_ = 0;
      }
    }
    if (!changed && !sleep_on_board(word, generation, &board_wake_, seen, guard.next)) guard.ran_out();
  }
}

void connection::drive(const std::function<bool()>& done) {
  bool on_board;
  {
    std::lock_guard<std::mutex> guard{mutex_};
    on_board = board_busy_ && board_thread_ == std::this_thread::get_id();
  }
  if (on_board) return drive_board(done);
  progress::scope in_library;
  struct driving {
    std::atomic<int>& count;
    explicit driving(std::atomic<int>& c) : count(c) { count.fetch_add(1, std::memory_order_acq_rel); }
    ~driving() { count.fetch_sub(1, std::memory_order_acq_rel); }
  } counted{drivers_};
  // Letting the socket go wakes the threads that wait for it (handoff()).
  struct reading_turn {
    connection& c;
    ~reading_turn() {
      c.read_mutex_.unlock();
      c.handoff();
    }
  };
  while (!done()) {
    // Read before trying the socket: a reader that lets it go after this
    // counts past `seen`, so the wait below cannot miss it.
    const std::uint64_t seen = handoffs();
    if (!read_mutex_.try_lock()) {
      // Another thread reads: it completes this call if the reply comes.
      if (done()) return;
      std::unique_lock<std::mutex> waiting{handoff_mutex_};
      handoff_cv_.wait(waiting, [&] { return handoffs_ != seen; });
      continue;
    }
    reading_turn turn{*this};
    if (done()) return;
    {
      std::lock_guard<std::mutex> guard{mutex_};
      if (lost_ || stopping_) return;
    }
    watch_socket(false);
    std::vector<protocol::envelope> frames;
    bool lost = false;
    wake_guard guard;
    while (!done() && !lost) {
      pollfd p{fd_, POLLIN, 0};
      int r = 0;
      // The spin pays only when the reply comes within it: a wait that
      // outlasts it (a fence of more processes than the node has CPUs)
      // burned the whole budget in every waiting process, CPU the server
      // needed (64-process data fences 1.4-1.7x slower, their p90 2-4x).
      // After a spin that ran out, the next waits sleep at once, for 1, 2,
      // 4, ... up to 64 waits, and then one tries again.
      if (guard.expired) {
        // A long wait: it sleeps again at once.
      } else if (spin_.count() > 0 && spin_skip_ > 0) {
        --spin_skip_;
      } else if (spin_.count() > 0) {
        const auto until = std::chrono::steady_clock::now() + spin_;
        while ((r = ::poll(&p, 1, 0)) == 0 && std::chrono::steady_clock::now() < until) ::sched_yield();
        if (r == 0) {
          spin_backoff_ = spin_backoff_ == 0 ? 1 : std::min(2 * spin_backoff_, 64u);
          spin_skip_ = spin_backoff_;
        } else {
          spin_backoff_ = 0;
        }
      }
      if (r == 0) {
        // Until the reply comes, or the call may have completed elsewhere
        // (driver_wake_fd_); the timeout only guards against a wake-up
        // missed (wake_guard).
        pollfd both[2] = {{fd_, POLLIN, 0}, {driver_wake_fd_, POLLIN, 0}};
        r = ::poll(both, driver_wake_fd_ >= 0 ? 2 : 1, static_cast<int>(guard.next.count()));
        if (r == 0) guard.ran_out();
        if (r > 0 && (both[1].revents & POLLIN) != 0) {
          std::uint64_t count;
          [[maybe_unused]] auto n = ::read(driver_wake_fd_, &count, sizeof count);
        }
        if (r > 0 && both[0].revents == 0) continue;  // only woken: look at `done`
      }
      if (r < 0 && errno != EINTR) break;
      if (r <= 0) continue;
      frames.clear();
      read_frames(frames, lost);
      for (auto& f : frames) dispatch(f, false);
      // Other threads' blocking calls among them: their threads return.
      if (!frames.empty()) handoff();
    }
    // The socket goes back to the progress thread; a loss is reported by it
    // (it sees the end of the stream too) with the usual completions.
    watch_socket(true);
    if (lost) return;
  }
}

void connection::run(bool behind) {
  progress::scope in_library;
  std::vector<protocol::envelope> frames;
  std::vector<protocol::envelope*> later;  // frames dispatched after the socket is let go
  for (;;) {
    epoll_event events[2];
    const int n = std::exchange(behind, false) ? 0 : ::epoll_wait(epoll_fd_, events, 2, -1);
    if (n < 0) continue;  // EINTR
    bool socket_ready = n == 0;
    bool woken = false;
    for (int k = 0; k < n; ++k) {
      if (events[k].data.fd == wake_fd_) woken = true;
      else socket_ready = true;
    }
    if (woken) {
      std::uint64_t count;
      [[maybe_unused]] auto r = ::read(wake_fd_, &count, sizeof count);
      std::vector<std::function<void()>> tasks;
      bool stop;
      {
        std::lock_guard<std::mutex> guard{mutex_};
        tasks.swap(tasks_);
        stop = stopping_;
      }
      for (auto& t : tasks) t();
      if (!tasks.empty()) wake_drivers();
      if (stop) return;
    }
    if (!socket_ready) continue;
    bool lost = false;
    frames.clear();
    later.clear();
    bool gone = false;
    {
      std::lock_guard<std::mutex> reading{read_mutex_};
      gone = lost_;
      if (!gone) read_frames(frames, lost);
      if (lost) {
        // Never again: the stream has ended, and a hang-up would be
        // reported for as long as the socket is in the set.
        ::epoll_ctl(epoll_fd_, EPOLL_CTL_DEL, fd_, nullptr);
        std::lock_guard<std::mutex> guard{mutex_};
        lost_ = true;
      }
      // Replies to blocking calls complete before the socket is let go: a
      // caller that takes it over next must find its reply already done.
      for (auto& f : frames) {
        if (f.id != 0 && answers_blocking_call(f.id)) dispatch(f, true);
        else later.push_back(&f);
      }
    }
    handoff();  // the socket was let go, and blocking calls may have completed
    if (gone) continue;
    for (auto* f : later) dispatch(*f, true);
    if (lost) {
      log::error("client", "lost the connection to the server");
      fail_all(PMIX_ERR_LOST_CONNECTION);
      if (lost_hook_) lost_hook_();
    }
  }
}

void connection::fail_all(pmix_status_t status) {
  std::vector<std::pair<std::uint64_t, pending_request>> pending;
  bool board;
  {
    std::lock_guard<std::mutex> guard{mutex_};
    if (status == PMIX_ERR_LOST_CONNECTION) lost_ = true;
    pending.swap(pending_);
    board = board_busy_;
    board_busy_ = false;
    board_id_ = 0;
  }
  for (auto& [id, req] : pending) req.done(status, nullptr);
  if (board) wake_board_waiter();
  wake_drivers();
}

void connection::wake_drivers() {
  if (driver_wake_fd_ < 0 || drivers_.load(std::memory_order_acquire) == 0) return;
  const std::uint64_t one = 1;
  [[maybe_unused]] auto n = ::write(driver_wake_fd_, &one, sizeof one);
  handoff();
}

void connection::handoff() {
  {
    std::lock_guard<std::mutex> guard{handoff_mutex_};
    ++handoffs_;
  }
  handoff_cv_.notify_all();
}

void connection::close() {
  if (fd_ < 0) return;
  if (has_thread_) {
    {
      std::lock_guard<std::mutex> guard{mutex_};
      stopping_ = true;
    }
    const std::uint64_t one = 1;
    [[maybe_unused]] auto n = ::write(wake_fd_, &one, sizeof one);
    join_thread();
  }
  ::close(fd_);
  fd_ = -1;
  for (int fd : received_fds_) ::close(fd);  // came with frames never read
  received_fds_.clear();
  if (wake_fd_ >= 0) ::close(wake_fd_);
  wake_fd_ = -1;
  if (driver_wake_fd_ >= 0) ::close(driver_wake_fd_);
  driver_wake_fd_ = -1;
  if (epoll_fd_ >= 0) ::close(epoll_fd_);
  epoll_fd_ = -1;
  fail_all(PMIX_ERR_NOT_AVAILABLE);
}

bool connection::stop_progress(bool flush) {
  if (on_own_thread()) return false;
  if (has_thread_) {
    {
      std::lock_guard<std::mutex> guard{mutex_};
      stopping_ = true;
      if (!flush) tasks_.clear();
    }
    const std::uint64_t one = 1;
    [[maybe_unused]] auto n = ::write(wake_fd_, &one, sizeof one);
    join_thread();
  }
  fail_all(PMIX_ERR_NOT_AVAILABLE);
  return true;
}

void connection::abandon() {
  // Only async-signal-safe calls: this runs in a pthread_atfork handler.
  if (fd_ >= 0) ::close(fd_);
  if (wake_fd_ >= 0) ::close(wake_fd_);
  if (driver_wake_fd_ >= 0) ::close(driver_wake_fd_);
  if (epoll_fd_ >= 0) ::close(epoll_fd_);
  fd_ = wake_fd_ = driver_wake_fd_ = epoll_fd_ = -1;
  // The thread object names a thread of the parent process: never join or
  // destroy it here.
  has_thread_ = false;
  thread_id_.store(pthread_t{}, std::memory_order_relaxed);
  // A parent thread may have held these at fork time.
  new (&mutex_) std::mutex();
  new (&write_mutex_) std::mutex();
  new (&read_mutex_) std::mutex();
  new (&handoff_mutex_) std::mutex();
  new (&handoff_cv_) std::condition_variable();
  // The parent's pending completions are left alone (leaked, parked so that
  // they stay reachable: common/fork_park.hpp): running their destructors
  // could touch the parent's waiters.
  fork_park::park(pending_);
  fork_park::park(tasks_);
  fork_park::park(unprompted_);
  fork_park::park(lost_hook_);
  fork_park::park(board_owner_);
  new (&board_owner_) std::shared_ptr<const void>();
  board_ = nullptr;
  board_asked_ = board_busy_ = false;
  whole_fences_ = 0;
  board_id_ = 0;
  new (&pending_) std::vector<std::pair<std::uint64_t, pending_request>>();
  new (&tasks_) std::vector<std::function<void()>>();
  new (&unprompted_) std::function<void(protocol::envelope&)>();
  new (&lost_hook_) std::function<void()>();
}

}  // namespace pmix::client
