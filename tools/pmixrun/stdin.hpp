// Standard input of the processes (IOF towards them), as a resource manager
// does it.
//
// Every process's stdin is the read end of a pipe of its own; the forwarder
// owns the write ends (close-on-exec, non-blocking), so all of this is
// host-thread state and needs no lock. Two kinds of input reach a process:
//  - pmixrun's own stdin, for the processes added `from_source` (--stdin:
//    rank 0 of the first job by default, every rank of it, or none). The
//    forwarder reads it only while one of them still takes input and none
//    holds `backlog_max` bytes unwritten, and never while pmixrun is in the
//    background of its terminal (a read would stop it with SIGTTIN). When it
//    ends, their pipes close once what waits for them is written;
//  - pushes (PMIx_IOF_push, through the push_stdin up-call) to any process,
//    queued after what waits for it already. A push that ends the input
//    closes the pipe once everything before it is written; after that the
//    process's stdin takes nothing more.
//
// Writes never block the host thread: what a pipe does not take at once
// waits in the process's queue and is written when poll says the pipe has
// room. A push completes (its callback) once every target's pipe has taken
// its bytes (PMIX_SUCCESS) or ended first (PMIX_ERR_IOF_FAILURE: the process
// exited or closed its stdin, EPIPE), so a pusher that waits for each push
// goes no faster than its readers.
#pragma once

#include <pmix_common.h>
#include <poll.h>
#include <unistd.h>

#include <cstddef>
#include <deque>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace pmixrun {

class stdin_forwarder {
 public:
  struct settings {
    int source_fd = STDIN_FILENO;  // pmixrun's stdin
    std::size_t read_max = 64 * 1024;
    std::size_t backlog_max = 4 * 1024 * 1024;
  };
  using done_fn = std::function<void(pmix_status_t)>;

  explicit stdin_forwarder(settings s);
  ~stdin_forwarder();  // closes what is still open
  stdin_forwarder(const stdin_forwarder&) = delete;
  stdin_forwarder& operator=(const stdin_forwarder&) = delete;

  // Takes the write end of `proc`'s stdin pipe. With `from_source`,
  // pmixrun's stdin is copied there too.
  void add(const pmix_proc_t& proc, int fd, bool from_source);

  // Whether `proc`'s stdin still takes input: added, its input not ended,
  // the process not ended.
  bool open(const pmix_proc_t& proc) const;

  // Queues `bytes` (may be empty) for each target, every one of which must
  // be open(); with `end`, each target's pipe closes once they are written.
  // `done` is called once, on this thread, when every target is settled:
  // PMIX_SUCCESS when each pipe took the bytes (and, with `end`, was
  // closed), PMIX_ERR_IOF_FAILURE when a target ended first. It may be
  // called before push returns.
  void push(const std::vector<pmix_proc_t>& targets, const std::string& bytes, bool end,
            done_fn done);

  // `proc` has ended: its pipe closes, and what waited for it fails.
  void process_ended(const pmix_proc_t& proc);

  // Appends what to poll; handle() takes the results of exactly those
  // entries (fds[0..n) are the ones poll_set appended).
  void poll_set(std::vector<pollfd>& fds);
  void handle(const pollfd* fds, std::size_t n);

  // At the end of the run: stops reading pmixrun's stdin, closes every
  // pipe, and completes every push still waiting with `status`.
  void close_all(pmix_status_t status);

  // Totals: bytes read from pmixrun's stdin, bytes pushed (accepted), bytes
  // written into the pipes.
  std::size_t bytes_read() const { return bytes_read_; }
  std::size_t bytes_pushed() const { return bytes_pushed_; }
  std::size_t bytes_written() const { return bytes_written_; }

 private:
  struct pending;  // one push, until every target took its bytes
  struct chunk {
    std::string bytes;
    bool end = false;                  // close the pipe once `bytes` are written
    std::shared_ptr<pending> from;     // nullptr: read from pmixrun's stdin
  };
  struct target {
    pmix_proc_t proc;
    int fd = -1;  // -1 once closed
    bool from_source = false;
    bool ending = false;  // an end is queued: takes nothing more
    std::deque<chunk> queue;
    std::size_t offset = 0;  // into queue.front().bytes
    std::size_t queued = 0;
  };

  target* find(const pmix_proc_t& proc);
  const target* find(const pmix_proc_t& proc) const;
  bool reading_source() const;
  void read_source();
  void pump(target& t);
  void close(target& t, pmix_status_t status);
  static void finished(chunk& c, pmix_status_t status);

  settings settings_;
  std::vector<std::unique_ptr<target>> targets_;
  std::vector<target*> polled_;  // poll_set's entries, in order (nullptr: the source)
  bool source_open_ = true;
  std::vector<char> buffer_;
  std::size_t bytes_read_ = 0;
  std::size_t bytes_pushed_ = 0;
  std::size_t bytes_written_ = 0;
};

}  // namespace pmixrun
