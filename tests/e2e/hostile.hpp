// What the tests of hostile users share (tests/e2e/security_test.cpp,
// tests/e2e/isolation_test.cpp): raw connections to a server, stderr
// captured, environment set for a scope.
#pragma once

#include <pmix_common.h>

#include <string>

namespace pmix::test {

// This process's stderr goes to a file while the object lives.
class capture_stderr {
 public:
  explicit capture_stderr(const std::string& path);
  ~capture_stderr();
  capture_stderr(const capture_stderr&) = delete;
  capture_stderr& operator=(const capture_stderr&) = delete;

 private:
  int saved_;
};

// Sets an environment variable for a scope (read at PMIx_server_init).
struct scoped_env {
  std::string name;
  scoped_env(std::string n, const std::string& v);
  ~scoped_env();
};

// A raw connection to the Unix socket a URI names ("...;uds://<path>") or
// its loopback TCP address ("...;tcp4://127.0.0.1:<port>"), or
// at a path, with a receive guard of 60 s against hangs; -1 if it cannot be
// made.
int connect_raw(const std::string& uri);

// True when the server closed the connection (EOF or reset), false when the
// guard ran out first.
bool closed_by_server(int fd);

void send_all(int fd, const std::string& bytes);

// The frame of a connect request for `p`, in our wire format.
std::string connect_frame(const pmix_proc_t& p);

// A raw connection to the server at server_uri() authenticated as `p`
// (the test process's own credentials): its connect reply read, -1 if
// refused.
int raw_client(const pmix_proc_t& p);

// Sends a FinalizeRequest on a raw client's connection and reads the
// status reply (PMIX_ERR_UNREACH if the connection ends first). The
// connection stays open: the process is finalizing (spec 004's state
// between FINALIZE_CMD and the socket's drop).
pmix_status_t raw_finalize(int fd);

// The frame of a CommitRequest of one PMIX_STRING item (scope
// PMIX_GLOBAL). `value_in_two_parts`: the Info's Value comes twice, its type
// in the first and its payload in the second, which protobuf merges into one
// (a frame the server leaves to protobuf: protocol::read_request).
std::string commit_frame(const std::string& key, const std::string& text, bool value_in_two_parts = false);

// The frame of a FenceRequest over the peer's whole namespace.
std::string fence_frame(std::uint64_t id, bool collect);

// Sends `frames` on a raw client's connection and reads the status of the
// next reply (a StatusReply or FenceReply; PMIX_ERR_UNREACH if the
// connection ends first).
pmix_status_t raw_exchange(int fd, const std::string& frames);

}  // namespace pmix::test
