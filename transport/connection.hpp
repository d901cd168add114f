// One accepted client/tool socket, shared by the I/O thread (reads) and the
// peer actor (writes). The descriptor is closed when the last owner lets go,
// so a write can never hit a recycled descriptor number.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <string_view>

#include "common/job_budget.hpp"

namespace pmix::transport {

// Who the peer is, from the kernel: SO_PEERCRED on a Unix socket; on TCP
// from this host the owner of the peer's socket (transport/peer_identity.hpp),
// whose gid and pid are found at the handshake; unknown (-1) from elsewhere.
struct peer_credentials {
  uid_t uid = static_cast<uid_t>(-1);
  gid_t gid = static_cast<gid_t>(-1);
  pid_t pid = 0;
  ino_t socket_inode = 0;  // TCP from this host: the peer's socket
};

class io_thread;
class shared_data;

// Bounds on what one peer can make the server hold (docs/security.md).
struct limits {
  // The largest frame of an authenticated peer, and of one that has not
  // completed its handshake yet.
  std::uint32_t max_frame = 64u << 20;
  std::uint32_t handshake_frame = 1u << 20;
  // Output a peer has not read, at most; beyond it the peer is disconnected.
  std::size_t max_send_backlog = 64u << 20;
  // Connections that have not completed their handshake: how many at once,
  // and for how long each.
  std::size_t max_unauthenticated = 128;
  std::uint32_t handshake_timeout_ms = 10000;
  // How long a connection may stay silent (no whole frame) before a newer
  // one may take its place when max_unauthenticated are in their handshake.
  std::uint32_t handshake_grace_ms = 200;
};

class connection {
 public:
  connection(std::uint64_t id, int fd, peer_credentials cred, io_thread* io,
             std::size_t max_send_backlog = limits{}.max_send_backlog);
  ~connection();
  connection(const connection&) = delete;
  connection& operator=(const connection&) = delete;

  std::uint64_t id() const { return id_; }
  int fd() const { return fd_; }
  const peer_credentials& credentials() const { return cred_; }

  // Called only by the owning peer actor. Writes what the socket takes now and
  // keeps the rest; when the socket becomes writable again the I/O thread tells
  // the actor (writable_atom) and it calls flush(). False once the connection
  // is broken.
  bool send(std::string_view frame);
  // The same for a frame in two parts (a peer's own prefix and a body shared
  // by many peers), written without joining them first.
  bool send(std::string_view head, std::string_view body);
  // The same, with `attach`'s descriptor passed along (SCM_RIGHTS) with the
  // frame's first byte, so the peer receives it with this frame, in order.
  // Only on a Unix socket (passes_descriptors()).
  bool send(std::string_view head, std::string_view body, std::shared_ptr<const shared_data> attach);
  bool passes_descriptors() const { return cred_.pid > 0; }
  // A connection of OpenPMIx's protocol (issue 35): set by the I/O thread
  // when its first frame is OpenPMIx's, before that frame is handed to
  // the peer actor.
  void set_openpmix() { openpmix_.store(true, std::memory_order_release); }
  bool openpmix() const { return openpmix_.load(std::memory_order_acquire); }
  bool flush();
  // The output its job's peers have not read, together, is also bounded:
  // this connection's counts there from now on (docs/security.md, "Limits").
  void set_budget(std::shared_ptr<job_budget> budget);
  bool has_pending_output() const { return pending_bytes_ > 0; }
  std::size_t pending_bytes() const { return pending_bytes_; }
  // Bytes ever copied into the queue of unsent output: each byte a peer
  // could not take at once is copied exactly once (tests).
  std::uint64_t bytes_queued() const { return bytes_queued_; }

  // The peer actor marks the connection authenticated once its handshake
  // succeeded (read by the I/O thread: larger frames, no handshake timeout).
  void authenticate() { authenticated_.store(true, std::memory_order_release); }
  bool authenticated() const { return authenticated_.load(std::memory_order_acquire); }

  // Ends the connection: the client sees EOF; the I/O thread then reports
  // closed_atom to the actor. Safe to call more than once.
  void shutdown();
  bool shut() const { return shut_.load(std::memory_order_acquire); }
  bool broken() const { return broken_; }

 private:
  std::uint64_t id_;
  int fd_;
  // The flags beside the descriptor: no padding (one per client).
  bool broken_ = false;
  std::atomic<bool> shut_{false};
  std::atomic<bool> authenticated_{false};
  std::atomic<bool> openpmix_{false};
  peer_credentials cred_;
  io_thread* io_;
  // Output the socket did not take yet, in order: whole frames (the first
  // possibly partly sent, `pending_offset_` bytes of it). Appending never
  // copies what is queued, and sending never copies at all.
  struct pending_frame {
    std::string bytes;
    std::shared_ptr<const shared_data> attach;  // not sent yet: goes with the first byte
  };
  // Made at the first frame that waits: libstdc++'s deque allocates about
  // 0.5 kB as soon as it exists (and is 80 bytes itself), and most
  // connections never queue (pmixsim: 9% of the server's memory per
  // connected client).
  std::unique_ptr<std::deque<pending_frame>> pending_;
  std::size_t pending_offset_ = 0;
  std::size_t pending_bytes_ = 0;
  std::size_t max_send_backlog_;
  std::shared_ptr<job_budget> budget_;  // holds pending_bytes_ of the job's backlog
  std::uint64_t bytes_queued_ = 0;

  bool send_rest(std::string_view head, std::string_view body, std::size_t done,
                 std::shared_ptr<const shared_data> attach);
  bool queue(std::string_view head, std::string_view body, std::size_t done,
             std::shared_ptr<const shared_data> attach = nullptr);
  // The peer would leave more than `limit` bytes unread (`what`): it is
  // disconnected, and its output dropped.
  void overflow(std::size_t would_be, const char* what, std::size_t limit);
};

}  // namespace pmix::transport
