// A client's (or tool's) connection to its server: one Unix-domain socket and
// one progress thread that reads replies and runs completions. Light on
// purpose: no actor system in client processes (docs/architecture.md).
//
// Completions and posted tasks run on the progress thread inside a
// progress::scope, so a blocking PMIx call made from them gets
// PMIX_ERR_WOULD_BLOCK (spec 002).
//
// A thread blocked in a PMIx call reads its own reply (drive()): it takes
// the socket from the progress thread for the duration (removing it from
// the progress thread's epoll set, which needs no wake-up), so the reply
// costs one thread wake-up instead of two. Only completions of blocking
// calls run on that thread; everything else is handed to the progress
// thread. One mutex (read_mutex_) says who reads; a thread whose blocking
// call finds another reading waits for that reader to hand over (it may
// read and complete this call too), not for the socket. A fence over the whole
// namespace is the exception: its reply comes on the namespace's fence
// board (docs/wire-format.md), so its caller waits there (drive_board())
// and leaves the socket to the progress thread.
#pragma once

#include <pmix_common.h>
#include <pthread.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "protocol/framing.hpp"
#include "protocol/messages.hpp"

namespace pmix::transport {
struct board_header;
}

namespace pmix::client {

class connection {
 public:
  // Called once with the reply, or with an error status and a null envelope
  // when the connection is lost (PMIX_ERR_LOST_CONNECTION) or closed by us
  // (PMIX_ERR_NOT_AVAILABLE).
  using completion = std::function<void(pmix_status_t, protocol::envelope*)>;

  // Connects to the "uds://<path>" part of a server URI.
  static pmix_status_t open(const std::string& uri, std::unique_ptr<connection>& out);
  ~connection();
  connection(const connection&) = delete;
  connection& operator=(const connection&) = delete;

  // Before start(): sends a request (a `kind` body, protocol/messages.hpp)
  // and reads until its reply arrives.
  // PMIX_ERR_OUT_OF_RESOURCE: the server did not take the connection (its
  // handshake queue was full of silent connections, and it gave this one's
  // place to a newer one before reading anything): the caller may try
  // again with a new connection.
  pmix_status_t handshake(protocol::body kind, const std::string& message, protocol::envelope& reply);
  // OpenPMIx's protocol (issue 36; docs/wire-format.md, "Our client under
  // OpenPMIx's servers"). Before start(): sends the handshake `body` behind
  // its header (index and tag -1, the length, in this host's order), and
  // reads raw bytes of the answer (which is not framed).
  pmix_status_t openpmix_handshake(std::string_view body);
  pmix_status_t read_raw(std::size_t n, std::string& out);
  // From then on every frame is OpenPMIx's: `index` (the server's answer)
  // in the header of each, requests tagged from 101 on, and their replies
  // matched by tag. A message on tag 0 (an event) or 2 (output) is
  // unprompted (kind event or iof, its payload in `message`); other tags
  // below 100 are dropped. A request's `kind` is then ignored.
  void use_openpmix(std::uint32_t index);
  bool openpmix() const { return openpmix_; }
  // Before start(): what to do with a message the server sends unprompted
  // (id 0: an event), and once when the connection is lost. Both run on the
  // progress thread.
  void on_unprompted(std::function<void(protocol::envelope&)> f) { unprompted_ = std::move(f); }
  void on_lost(std::function<void()> f) { lost_hook_ = std::move(f); }
  // Starts the progress thread.
  pmix_status_t start();

  // Sends a message that gets no reply.
  pmix_status_t send(protocol::body kind, const std::string& message);
  // A commit held for the next frame (docs/wire-format.md, "A commit held
  // for the next frame"): while the server allows it (ConnectReply
  // .commit_hold), send_held() keeps the message and the next frame this
  // connection writes carries it in front, in the same write; the server's
  // commit_hold_end makes the connection send what it holds and hold
  // nothing more. Otherwise send_held() is send().
  void allow_hold(bool allowed);
  pmix_status_t send_held(protocol::body kind, const std::string& message);
  // Sends a request; `done` runs on the progress thread, or on the thread
  // that waits for it (drive()) when sent inside an answered_here scope.
  // `on_board`: the fence request of a board_plan whose `wait` held.
  pmix_status_t request(protocol::body kind, const std::string& message, completion done,
                        bool on_board = false);

  // The fence board (docs/wire-format.md, "Fence board"). For a blocking
  // fence over the client's whole namespace, before its request is built:
  // `wait` when the board is here and no other fence of this client waits
  // on it (the caller then sets FenceRequest.board_wait and passes
  // on_board to request(); this thread's drive() then waits on the board),
  // `request` when the board should be asked for (once per connection, at
  // the second such fence).
  struct board_plan {
    bool wait = false;
    bool request = false;
  };
  board_plan plan_board();
  // True once the server's board is mapped (tests).
  bool has_board() const;

  // While alive, the requests this thread sends are blocking ones: their
  // completions may run on this thread, inside drive().
  class answered_here {
   public:
    answered_here();
    ~answered_here();
    answered_here(const answered_here&) = delete;
    answered_here& operator=(const answered_here&) = delete;
  };
  // Reads and dispatches frames on this thread until `done()` holds (a
  // blocking caller waiting for its reply). Returns early, leaving the rest
  // to the progress thread, if the connection is lost or closing.
  void drive(const std::function<bool()>& done);
  // How long drive() polls the socket (yielding the CPU between polls)
  // before it sleeps in poll(2). A reply that comes within it costs no
  // wake-up (tens of µs on a VM); 0 sleeps at once. Set by the session: see
  // spin_budget().
  void set_spin(std::chrono::microseconds budget) { spin_ = budget; }
  // Whether the node has a CPU for each local process of this client's
  // namespace and one more for the server (see steps_aside()).
  // Set by the session.
  void set_cpu_to_spare(bool spare) { cpu_to_spare_.store(spare, std::memory_order_relaxed); }
  // Runs `task` on the progress thread (for completions known at once).
  void post(std::function<void()> task);

  // Ends the connection: pending requests complete with PMIX_ERR_NOT_AVAILABLE
  // and the progress thread exits. Called by the destructor.
  void close();
  // PMIx_Progress_thread_stop: the progress thread runs what was posted to
  // it (all of it when `flush`, none otherwise) and exits; the socket stays
  // open until close(). Pending requests then complete with
  // PMIX_ERR_NOT_AVAILABLE, and so do new ones. False (nothing done) on the
  // progress thread itself.
  bool stop_progress(bool flush);
  // Whether this is the connection's own progress thread.
  bool on_own_thread() const {
    return has_thread_.load(std::memory_order_relaxed) &&
           ::pthread_equal(thread_id_.load(std::memory_order_acquire), ::pthread_self()) != 0;
  }

  // In a forked child: forget the parent's socket and thread without touching
  // them (the child has no such thread; the socket stays the parent's).
  void abandon();

  bool lost() const;

 private:
  struct pending_request {
    completion done;
    bool here = false;  // a blocking call's: may complete on the waiting thread
  };

  connection(int fd, bool unix_socket) : fd_(fd), unix_(unix_socket) {}
  // `behind`: frames already wait in the reader (start()).
  void run(bool behind);
  // drive() of the thread whose fence waits on the board.
  void drive_board(const std::function<bool()>& done);
  // The pending request `id` is gone (answered, failed or unsent): a fence
  // on the board lets the board go, and its thread is woken if it sleeps.
  void board_request_ended(std::uint64_t id);
  void wake_board_waiter();
  void fail_all(pmix_status_t status);
  // Writes a frame (in two parts: a request's prefix and its message).
  pmix_status_t write_frame(std::string_view head, std::string_view body = {});
  // With read_mutex_ held: reads what the socket has and splits it into
  // frames. False when the connection is lost or a frame is malformed.
  bool read_frames(std::vector<protocol::envelope>& out, bool& lost);
  // Splits `data`, after what the reader holds, into frames (read_frames).
  bool split_frames(std::string_view data, std::string& payload, std::vector<protocol::envelope>& out,
                    bool& lost);
  // Runs one frame's completion (or the unprompted handler).
  void dispatch(protocol::envelope& e, bool on_progress_thread);
  void watch_socket(bool on);
  bool answers_blocking_call(std::uint64_t id);

  int fd_;
  bool unix_ = false;  // descriptors (and so a board) can come
  bool openpmix_ = false;
  std::uint32_t openpmix_index_ = 0;
  // The header of a request (ours, or OpenPMIx's with `id` as its tag).
  struct request_head {
    char bytes[25];
    std::size_t size = 0;
    std::string_view view() const { return {bytes, size}; }
  };
  request_head head_of(std::uint64_t id, protocol::body kind, std::size_t size) const;
  // OpenPMIx's frame (header included) as an envelope: false to drop it.
  bool openpmix_envelope(std::string&& frame, protocol::envelope& out);
  int wake_fd_ = -1;
  // Wakes a thread that reads its own reply (drive()) when its call may
  // have completed elsewhere: a task run on the progress thread, all
  // requests failed. It slept with a 100 ms timeout instead, and a node of
  // 1,024 processes waiting in one fence woke 10,000 times a second.
  int driver_wake_fd_ = -1;
  std::atomic<int> drivers_{0};
  void wake_drivers();
  int epoll_fd_ = -1;
  // The progress thread, started with pthread_create, not std::thread:
  // std::thread hands the new thread a heap object that the thread itself
  // frees, and glibc gives a thread its own malloc arena at its first
  // malloc or free (a 128 MiB reservation, trimmed and protected: mmap,
  // two munmaps and an mprotect, each page-table work with TLB shootdowns
  // in a process of two threads). With nothing allocated or freed on it,
  // the thread has none in most processes' lives.
  pthread_t thread_{};
  // thread_ is running or not joined yet (read by on_own_thread on any
  // thread, written by the thread that starts and joins it).
  std::atomic<bool> has_thread_{false};
  // pthread_self() of the progress thread, stored by the thread itself
  // before it runs anything (on_own_thread).
  std::atomic<pthread_t> thread_id_{};
  bool behind_ = false;  // start(): frames already wait in the reader
  static void* thread_main(void* self);
  // Waits for the progress thread to end (it was told to).
  void join_thread();
  std::mutex write_mutex_;
  // Under write_mutex_: the frames held for the next write, and whether
  // the server still lets this connection hold any.
  std::string held_;
  bool hold_allowed_ = false;
  // With write_mutex_ held: writes `held_` (emptied), `head` and `body` as
  // one stream of bytes.
  pmix_status_t write_locked(std::string_view head, std::string_view body);
  // Answers the server's commit_hold_end: what is held goes, and then
  // commit_hold_ended.
  void end_hold();
  std::chrono::microseconds spin_{0};
  std::mutex read_mutex_;  // held by whoever reads the socket (and owns reader_)
  // A thread whose blocking call finds another thread reading the socket
  // (that thread's own call, or the progress thread for a moment) sleeps
  // here rather than on read_mutex_: the reader may read and complete this
  // call long before its own ends (a fence that waits for other
  // processes). Whoever reads counts `handoffs_` up (handoff()) after it
  // ran completions and after it let the socket go, and wakes them; so does
  // wake_drivers().
  std::mutex handoff_mutex_;
  std::condition_variable handoff_cv_;
  std::uint64_t handoffs_ = 0;  // under handoff_mutex_
  std::uint64_t handoffs() {
    std::lock_guard<std::mutex> guard{handoff_mutex_};
    return handoffs_;
  }
  void handoff();
  // Under read_mutex_: a spin that ran out before the reply came makes the
  // next waits sleep at once, 1, 2, 4, ... up to 64 of them, and one that
  // catches its reply spins again every time (see drive()).
  unsigned spin_skip_ = 0, spin_backoff_ = 0;
  // Under read_mutex_: descriptors received (SCM_RIGHTS) and not yet taken
  // by the frame they came with (take_shared()), in order.
  std::deque<int> received_fds_;
  // recv() that also keeps the descriptors passed along.
  long receive(char* buf, std::size_t size);
  // Maps the shared data a frame says came with it. False: the frame
  // promised a descriptor that did not come, or one that is refused.
  bool take_shared(protocol::envelope& e);
  mutable std::mutex mutex_;  // guards the fields below
  // Requests in flight, by id: a handful at most, so a flat list (no
  // allocation per request once it has grown).
  std::vector<std::pair<std::uint64_t, pending_request>> pending_;
  // The entry for `id`, or pending_.end().
  std::vector<std::pair<std::uint64_t, pending_request>>::iterator find_pending(std::uint64_t id);
  // A vector, not a deque: the progress thread takes them all at once, and
  // an empty vector allocates nothing where libstdc++'s empty deque does.
  // The thread then allocates nothing in most processes' lives, so glibc
  // never makes it a malloc arena of its own (a 128 MiB reservation,
  // trimmed and protected: page-table work, with TLB shootdowns in a
  // process of two threads, at every process's PMIx_Finalize).
  std::vector<std::function<void()>> tasks_;
  std::function<void(protocol::envelope&)> unprompted_;
  std::function<void()> lost_hook_;
  std::uint64_t next_id_ = 1;
  // The fence board, under mutex_: the mapping (set once, by the reader of
  // the FenceBoard frame), whether it was asked for, and the fence waiting
  // on it (its request id, the thread that waits, and the generation the
  // board had before the request went out).
  std::shared_ptr<const void> board_owner_;
  const transport::board_header* board_ = nullptr;
  bool board_asked_ = false;
  unsigned whole_fences_ = 0;  // blocking fences planned before the board was asked for
  bool board_busy_ = false;
  std::uint64_t board_id_ = 0;
  std::thread::id board_thread_;
  std::uint32_t board_generation_ = 0;
  // Changed (and woken, a private futex) when the fence waiting on the board
  // completes by another way than the board: an answer on the socket, a lost
  // connection, close(). The waiting thread sleeps on it and the board's
  // generation at once (futex_waitv).
  std::atomic<std::uint32_t> board_wake_{0};
  // The board waiter's own poll back-off (as spin_skip_, spin_backoff_).
  unsigned board_skip_ = 0, board_backoff_ = 0;
  std::atomic<bool> cpu_to_spare_{false};
  // The board waiter's moves off the server's CPU: after each, the next
  // 1, 3, 7, ... up to 1,023 waits do not look.
  unsigned aside_skip_ = 0, aside_backoff_ = 0;
  // PMIx_Progress_thread_stop was called (written under mutex_; send reads it
  // without the lock).
  std::atomic<bool> stopping_{false};
  bool lost_ = false;
  protocol::frame_reader reader_;
};

// Whether a client about to wait on its fence board moves off its CPU
// first: when it runs on the CPU the server last posted from and the node
// has a CPU to spare. Two processes that poll on one CPU take turns through
// sched_yield (a 1-rank fence 23 µs instead of 10 on this project's VM), and
// stay together until the kernel's load balancing parts them, which took up
// to 1,200 fences there; a wake-up did not part them either. `my_cpu` and
// `server_cpu` are -1 when unknown.
bool steps_aside(int my_cpu, int server_cpu, bool cpu_to_spare);
// Moves the calling thread off `server_cpu` by taking that CPU out of its
// affinity for a moment, then gives the thread back its own set (the kernel
// leaves a running thread where it is when its set grows). False if the set
// has no other CPU or the kernel refuses.
bool step_aside(int server_cpu);

}  // namespace pmix::client
