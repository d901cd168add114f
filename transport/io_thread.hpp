// The server's socket thread: one epoll loop that accepts connections on the
// listening sockets, reads the peer's credentials (SO_PEERCRED), splits the
// byte stream into frames and hands them to that connection's peer actor
// (the whole frames of one read in one message). It never parses a frame
// and never calls user code.
//
// A frame larger than the maximum closes that one connection (with a log line);
// other connections are untouched. docs/architecture.md has the flow.
#pragma once

#include <chrono>
#include <deque>
#include <optional>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <caf/actor.hpp>

struct epoll_event;

#include "protocol/framing.hpp"
#include "transport/connection.hpp"
#include "transport/slot_table.hpp"

namespace pmix::transport {

class io_thread {
 public:
  // Called on the I/O thread for every accepted connection; returns the actor
  // that will own it (a null handle refuses the connection).
  using acceptor = std::function<caf::actor(std::shared_ptr<connection>)>;

  // `on_start` runs first on the new thread (e.g. to bind it to CPUs).
  // `bounds`: frame sizes before and after a peer's handshake, its send
  // backlog, and how many connections may be in their handshake, for how
  // long (docs/security.md).
  io_thread(acceptor accept, std::function<void()> on_start = {}, limits bounds = {});
  ~io_thread();
  io_thread(const io_thread&) = delete;
  io_thread& operator=(const io_thread&) = delete;

  // Adds a bound, listening socket (the I/O thread owns and closes it).
  // Call before start().
  void add_listener(int fd);
  // A listener whose connections speak OpenPMIx's protocol or ours, as
  // each one's first frame shows (issue 35): every TCP listener, so that
  // any address a rendezvous file names serves tools of both libraries.
  void add_either_listener(int fd);

  // Starts the thread. False (errno kept) when epoll cannot be set up.
  bool start();
  // Without a thread (the host drives progress, PMIX_EXTERNAL_PROGRESS):
  // open() sets up, then each step() handles what is ready, waiting up to
  // `timeout_ms` (-1: until something is). Returns false once stopped.
  bool open();
  bool step(int timeout_ms);
  // step() in two halves, for a caller that holds a lock only while handling:
  // wait() blocks (no lock needed) and returns how many events it got;
  // handle() acts on them and returns false once stopped.
  int wait(struct epoll_event* events, int max, int timeout_ms);
  bool handle(const struct epoll_event* events, int n);
  // Thread-safe: makes the current or next wait() return.
  void wake();
  // The host's loop drives the server (PMIX_CXX_PROGRESS_FD): it watches
  // the epoll descriptor, so what the server must do later has to make
  // that descriptor readable. arm_timer(ms) sets a timerfd in the epoll set
  // to fire in `ms` (0: at once; -1: never); due_ms() is how soon the I/O
  // side's own deadlines (handshakes, resting listeners, the throttle) come
  // (-1: none), as wait() reckons before it sleeps.
  bool arm_timer(int ms);
  int due_ms();
  int epoll_fd() const { return epoll_fd_; }
  // Stops the thread, closes the listeners and shuts every connection down.
  // Afterwards want_write() is a no-op. Safe to call twice.
  void stop();
  // Tells the thread to stop (it shuts the connections down) without
  // waiting for it: stop() then only joins. Lets finalize overlap the
  // socket thread's exit with the actors'.
  void request_stop();

  // Thread-safe: ask to be told (writable_atom) when the connection can take
  // more output.
  void want_write(std::uint64_t connection_id);

  std::size_t connection_count() const;

 private:
  // One per connection (56 bytes, in slot_table): its descriptor is the
  // connection's, and when it was taken is its handshake deadline's
  // (handshakes_) less the timeout.
  struct entry {
    std::shared_ptr<connection> conn;  // null: a free or reserved slot
    caf::actor peer;
    protocol::frame_reader reader;
    bool counted_unauthenticated = true;  // in unauthenticated_ still
    bool heard = false;  // a whole frame came (its handshake is under way)
    std::uint32_t use = 0;  // the slot's use its id names (slot_table)
    bool live() const { return conn != nullptr; }
  };


  void run();
  void shut_all();
  void accept_from(int listener);
  void read_from(std::uint64_t id);
  // Hands the whole frames of `data` (after what the reader holds) to the
  // peer; false when one is over the limit (the connection is shut).
  bool split(entry& e, std::uint64_t id, std::string_view data, std::string& payload);
  // Sends the frames split so far (batch_) to the connection's peer actor:
  // one frame_atom for one, one frames_atom for more.
  void deliver(entry& e);
  void drop(std::uint64_t id, bool notify);
  // The whole frames of the read under way (read_from), not yet delivered;
  // kept between reads, so a read of one frame allocates nothing for it.
  std::vector<std::string> batch_;
  void drain_commands();
  // Connections still in their handshake past their time are closed;
  // returns the milliseconds until the next one is due (-1: none).
  int expire_handshakes();
  // The peer of `e` has authenticated since the I/O thread last looked.
  void note_authenticated(entry& e);
  // accept(2) failing for want of descriptors: the reserve descriptor makes
  // room to take the pending connection and close it at once, so it does
  // not stay queued (a level-triggered listener would spin).
  bool refuse_one(int listener, int error);
  // A listener that cannot take connections (no descriptor at all) rests
  // for 100 ms; resume_listeners() re-arms those due and returns the
  // milliseconds until the next one is (-1: none rests).
  void pause_listener(int listener);
  // The events a listener is watched for (0: none, it rests).
  void listen_for(int listener, std::uint32_t events);
  int resume_listeners();
  // With PMIX_CXX_MAX_UNAUTHENTICATED connections in their handshake, the
  // listeners stop taking more: further connections wait in the kernel's
  // listen queue (SOMAXCONN) instead of being refused, and are taken once
  // handshakes complete or time out. throttle_check() (each wait) counts
  // the handshakes done and re-arms the listeners; it returns how soon to
  // look again (-1: not throttled).
  void throttle();
  int throttle_check();
  bool throttled_ = false;
  // With the handshakes full, a connection that has sent no whole frame for
  // PMIX_CXX_HANDSHAKE_GRACE_MS since it was taken gives its place to the
  // next in the listen queue: idle connections cannot keep new jobs out
  // (1,100 of them held the places for their whole timeout, a queue of
  // them 10 s at a time). The oldest such connection, or none.
  std::optional<std::uint64_t> evictable(std::chrono::steady_clock::time_point now) const;
  // Milliseconds until the oldest silent connection may be evicted (-1:
  // none is silent).
  int until_evictable(std::chrono::steady_clock::time_point now) const;
  void evict(std::uint64_t id);
 public:
  // What an evicted connection is sent before it is closed (a ConnectReply
  // saying PMIX_ERR_OUT_OF_RESOURCE with id 0: our client tries again).
  void set_busy_frame(std::string frame) { busy_frame_ = std::move(frame); }

 private:
  std::string busy_frame_;
  std::uint64_t evicted_ = 0;  // since the last log line
  std::chrono::steady_clock::time_point evicted_logged_{};
  // One log line per burst of refusals, with how many.
  void note_refused(const char* why);

  acceptor accept_;
  std::function<void()> on_start_;
  limits limits_;
  std::size_t unauthenticated_ = 0;
  // (deadline, connection) in accept order: deadlines grow with it.
  std::deque<std::pair<std::chrono::steady_clock::time_point, std::uint64_t>> handshakes_;
  int reserve_fd_ = -1;
  std::deque<std::pair<std::chrono::steady_clock::time_point, int>> paused_;
  std::uint64_t refused_ = 0;  // since the last log line
  std::chrono::steady_clock::time_point refused_logged_{};
  int epoll_fd_ = -1;
  int wake_fd_ = -1;
  int timer_fd_ = -1;  // arm_timer's, made at its first call
  int timer_ms_ = -2;  // what it was last armed to (-2: never)
  std::vector<int> listeners_;
  std::vector<int> either_listeners_;  // also in listeners_
  slot_table<entry> entries_;  // by connection id; I/O thread only
  std::thread thread_;

  mutable std::mutex mutex_;  // guards the fields below
  std::vector<std::uint64_t> write_requests_;
  bool stopping_ = false;
  bool running_ = false;
  std::size_t connection_count_ = 0;
};

}  // namespace pmix::transport
