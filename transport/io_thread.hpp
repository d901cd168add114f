// The server's socket thread: one epoll loop that accepts connections on the
// listening sockets, reads the peer's credentials (SO_PEERCRED), splits the
// byte stream into frames and hands each frame to that connection's peer
// actor. It never parses a frame and never calls user code.
//
// A frame larger than the maximum closes that one connection (with a log line);
// other connections are untouched. docs/architecture.md has the flow.
#pragma once

#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include <caf/actor.hpp>

struct epoll_event;

#include "protocol/framing.hpp"
#include "transport/connection.hpp"

namespace pmix::transport {

class io_thread {
 public:
  // Called on the I/O thread for every accepted connection; returns the actor
  // that will own it (a null handle refuses the connection).
  using acceptor = std::function<caf::actor(std::shared_ptr<connection>)>;

  // `on_start` runs first on the new thread (e.g. to bind it to CPUs).
  io_thread(acceptor accept, std::function<void()> on_start = {},
            std::uint32_t max_frame_size = protocol::default_max_frame_size);
  ~io_thread();
  io_thread(const io_thread&) = delete;
  io_thread& operator=(const io_thread&) = delete;

  // Adds a bound, listening socket (the I/O thread owns and closes it).
  // Call before start().
  void add_listener(int fd);

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
  struct entry {
    std::shared_ptr<connection> conn;
    caf::actor peer;
    protocol::frame_reader reader;
    int fd;
  };

  void run();
  void shut_all();
  void accept_from(int listener);
  void read_from(std::uint64_t id);
  void drop(std::uint64_t id, bool notify);
  void drain_commands();

  acceptor accept_;
  std::function<void()> on_start_;
  std::uint32_t max_frame_size_;
  int epoll_fd_ = -1;
  int wake_fd_ = -1;
  std::vector<int> listeners_;
  std::unordered_map<std::uint64_t, entry> entries_;  // I/O thread only
  std::uint64_t next_id_ = 1;
  std::thread thread_;

  mutable std::mutex mutex_;  // guards the fields below
  std::vector<std::uint64_t> write_requests_;
  bool stopping_ = false;
  bool running_ = false;
  std::size_t connection_count_ = 0;
};

}  // namespace pmix::transport
