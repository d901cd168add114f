// A client's (or tool's) connection to its server: one Unix-domain socket and
// one progress thread that reads replies and runs completions. Light on
// purpose: no actor system in client processes (docs/architecture.md).
//
// Completions and posted tasks run on the progress thread inside a
// progress::scope, so a blocking PMIx call made from them gets
// PMIX_ERR_WOULD_BLOCK (spec 002).
#pragma once

#include <pmix_common.h>

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>

#include "protocol/framing.hpp"
#include "protocol/pmix.pb.h"

namespace pmix::client {

class connection {
 public:
  // Called once with the reply, or with an error status and a null envelope
  // when the connection is lost (PMIX_ERR_LOST_CONNECTION) or closed by us
  // (PMIX_ERR_NOT_AVAILABLE).
  using completion = std::function<void(pmix_status_t, wire::Envelope*)>;

  // Connects to the "uds://<path>" part of a server URI.
  static pmix_status_t open(const std::string& uri, std::unique_ptr<connection>& out);
  ~connection();
  connection(const connection&) = delete;
  connection& operator=(const connection&) = delete;

  // Before start(): sends `request` and reads until its reply arrives.
  pmix_status_t handshake(wire::Envelope& request, wire::Envelope& reply);
  // Before start(): what to do with a message the server sends unprompted
  // (id 0: an event), and once when the connection is lost. Both run on the
  // progress thread.
  void on_unprompted(std::function<void(wire::Envelope&)> f) { unprompted_ = std::move(f); }
  void on_lost(std::function<void()> f) { lost_hook_ = std::move(f); }
  // Starts the progress thread.
  pmix_status_t start();

  // Sends a message that gets no reply.
  pmix_status_t send(wire::Envelope& e);
  // Sends a request; `done` runs on the progress thread.
  pmix_status_t request(wire::Envelope& e, completion done);
  // Runs `task` on the progress thread (for completions known at once).
  void post(std::function<void()> task);

  // Ends the connection: pending requests complete with PMIX_ERR_NOT_AVAILABLE
  // and the progress thread exits. Called by the destructor.
  void close();

  // In a forked child: forget the parent's socket and thread without touching
  // them (the child has no such thread; the socket stays the parent's).
  void abandon();

  bool lost() const;

 private:
  explicit connection(int fd);
  void run();
  void fail_all(pmix_status_t status);
  pmix_status_t write_frame(const std::string& frame);

  int fd_;
  int wake_fd_ = -1;
  std::thread thread_;
  std::mutex write_mutex_;
  mutable std::mutex mutex_;  // guards the fields below
  std::unordered_map<std::uint64_t, completion> pending_;
  std::deque<std::function<void()>> tasks_;
  std::function<void(wire::Envelope&)> unprompted_;
  std::function<void()> lost_hook_;
  std::uint64_t next_id_ = 1;
  bool stopping_ = false;
  bool lost_ = false;
  protocol::frame_reader reader_;
};

}  // namespace pmix::client
