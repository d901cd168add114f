// One accepted client/tool socket, shared by the I/O thread (reads) and the
// peer actor (writes). The descriptor is closed when the last owner lets go,
// so a write can never hit a recycled descriptor number.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <cstdint>
#include <string>
#include <string_view>

namespace pmix::transport {

struct peer_credentials {
  uid_t uid = static_cast<uid_t>(-1);
  gid_t gid = static_cast<gid_t>(-1);
  pid_t pid = 0;
};

class io_thread;

class connection {
 public:
  connection(std::uint64_t id, int fd, peer_credentials cred, io_thread* io);
  ~connection();
  connection(const connection&) = delete;
  connection& operator=(const connection&) = delete;

  std::uint64_t id() const { return id_; }
  const peer_credentials& credentials() const { return cred_; }

  // Called only by the owning peer actor. Writes what the socket takes now and
  // keeps the rest; when the socket becomes writable again the I/O thread tells
  // the actor (writable_atom) and it calls flush(). False once the connection
  // is broken.
  bool send(std::string_view frame);
  // The same for a frame in two parts (a peer's own prefix and a body shared
  // by many peers), written without joining them first.
  bool send(std::string_view head, std::string_view body);
  bool flush();
  bool has_pending_output() const { return !pending_.empty(); }

  // Ends the connection: the client sees EOF; the I/O thread then reports
  // closed_atom to the actor. Safe to call more than once.
  void shutdown();
  bool broken() const { return broken_; }

 private:
  std::uint64_t id_;
  int fd_;
  peer_credentials cred_;
  io_thread* io_;
  std::string pending_;
  bool broken_ = false;
  std::atomic<bool> shut_{false};
};

}  // namespace pmix::transport
