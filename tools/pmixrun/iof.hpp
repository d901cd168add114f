// Output forwarding (IOF): the children's stdout and stderr, read by the host
// thread and passed on, as a resource manager does it.
//
// Every process writes its stdout and its stderr into a pipe of its own; the
// forwarder owns the read ends. The main loop polls them (poll_set, handle)
// with everything else it waits for, so all of this is host-thread state and
// needs no lock.
//
// What is read is cut into units of whole lines, per stream: the bytes up to
// the last newline read so far. The rest waits for its newline, for the
// stream's end, or until it reaches `line_max` bytes (a longer line is passed
// on in pieces). So a line written in pieces is never interleaved with the
// output of another process. Each unit is
//  - handed to the PMIx server with PMIx_server_IOF_deliver, as read (no tag),
//    for the processes and tools that asked for it. The bytes belong to the
//    delivery until the library's callback, which frees them and posts the
//    completion to the host thread (in_flight());
//  - unless `write` is false (the server writes, PMIX_IOF_LOCAL_OUTPUT),
//    written to pmixrun's own stdout or stderr: unchanged, or with `tag`
//    every line prefixed "[J,R]<stdout>:" / "[J,R]<stderr>:" (Open MPI's
//    `mpirun --tag-output`), and a final line without a newline given one.
//
// Writing never blocks the host thread on a full pipe or terminal: output
// waits in a queue per destination, written when poll reports it writable,
// at most PIPE_BUF bytes at a time (cut after a newline where possible).
// A destination (or the delivery) holding `backlog_max` bytes stops the
// reading of the pipes that feed it, so a slow reader of pmixrun's output
// slows the children down instead of filling pmixrun's memory. If a
// destination is gone (EPIPE), the pipes that feed it are closed, so their
// writers get SIGPIPE as they would have writing there themselves.
#pragma once

#include <pmix_common.h>
#include <poll.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace pmixrun {

class output_forwarder {
 public:
  struct settings {
    bool tag = false;     // --tag-output
    bool write = true;    // false with --iof-server-output: the server writes what it is given
    bool deliver = true;  // PMIx_server_IOF_deliver every unit (false: unit tests without a server)
    int out_fd = STDOUT_FILENO;
    int err_fd = STDERR_FILENO;
    std::size_t line_max = 64 * 1024;
    std::size_t backlog_max = 4 * 1024 * 1024;
    // Set: every unit goes here (channel 0 stdout, 1 stderr) instead of to
    // out_fd / err_fd (pmixd sends them to the node that launched the job).
    std::function<void(const pmix_proc_t&, int channel, const std::string& unit)> sink;
    // Both streams of a process have ended (end of file, or closed).
    std::function<void(const pmix_proc_t&)> closed;
  };

  explicit output_forwarder(settings s);
  ~output_forwarder();  // closes what is still open
  output_forwarder(const output_forwarder&) = delete;
  output_forwarder& operator=(const output_forwarder&) = delete;

  // Takes the read ends of the pipes of `source`'s stdout and stderr.
  // `job_index` is J of the tag.
  void add(const pmix_proc_t& source, uint32_t job_index, int out_fd, int err_fd);

  // Appends what to poll; handle() takes the results of exactly those
  // entries (fds[0..n) are the ones poll_set appended).
  void poll_set(std::vector<pollfd>& fds);
  void handle(const pollfd* fds, std::size_t n);

  // Some stream has not ended yet.
  bool open() const { return !streams_.empty(); }
  // Reads what the pipes hold now, passes it on, and closes them: output
  // written later is lost (its writer gets SIGPIPE). For the end of a run
  // whose processes have all ended while others keep the pipes open.
  void close_all();
  // Writes everything still queued, blocking (at the end of the run).
  void flush();

  // Deliveries the library has not called back yet.
  std::size_t in_flight() const { return in_flight_; }

  // Totals: bytes read from the pipes, bytes and calls of the deliveries the
  // server took, bytes pmixrun wrote itself.
  std::size_t bytes_read() const { return bytes_read_; }
  std::size_t bytes_delivered() const { return bytes_delivered_; }
  std::size_t deliveries() const { return deliveries_; }
  std::size_t bytes_written() const { return bytes_written_; }

 private:
  struct source;
  struct stream;
  struct destination {
    int fd = -1;
    bool regular = false;  // a file, or a device but a terminal: any write at once
    bool broken = false;   // EPIPE or another write error: output goes nowhere
    std::deque<std::string> queue;
    std::size_t offset = 0;  // into queue.front()
    std::size_t queued = 0;
  };
  struct delivery;

  bool paused(const stream& s) const;
  void read_stream(stream& s, bool drain);
  void pass_on(stream& s, std::string unit);
  void end(stream& s);
  void remove_ended();
  void deliver(const stream& s, const std::string& unit);
  void pump(destination& d, bool block);
  void broke(destination& d);
  static void delivered(pmix_status_t status, void* cbdata);

  settings settings_;
  destination dest_[2];  // stdout, stderr
  std::vector<std::unique_ptr<source>> sources_;
  std::vector<std::unique_ptr<stream>> streams_;  // the open ones
  std::vector<stream*> polled_;                   // poll_set's entries, in order
  std::vector<char> buffer_;
  std::size_t in_flight_ = 0;
  std::size_t in_flight_bytes_ = 0;
  std::size_t bytes_read_ = 0;
  std::size_t bytes_delivered_ = 0;
  std::size_t deliveries_ = 0;
  std::size_t bytes_written_ = 0;
  bool removal_due_ = false;
};

}  // namespace pmixrun
