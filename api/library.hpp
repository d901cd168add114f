// The client library's process-wide state: one session shared by PMIx_Init
// and PMIx_tool_init, each with its own reference count (spec 004,
// "Tool-Side Teardown"). The session is torn down when both counts are zero.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <condition_variable>
#include <memory>
#include <mutex>

#include "client/session.hpp"

namespace pmix::api {

struct library {
  std::mutex mutex;  // serializes init and finalize
  int client_refs = 0;
  int tool_refs = 0;
  pid_t pid = 0;  // the process that initialized: a forked child differs
  std::shared_ptr<client::session> session;
  // In a server process (PMIx_server_init .. the last PMIx_server_finalize):
  // the host's own store, used by the client calls when the process is not
  // also a client or tool (Open MPI's mpirun stores its URI with
  // PMIx_Store_internal right after PMIx_server_init).
  std::shared_ptr<client::session> server_self;

  // In a forked child: drop the parent's session without touching it.
  void forget_if_forked();
};

library& lib();

// The current session (the client's or tool's, else the server process's
// own store), or null (not initialized, or a forked child that has
// not initialized yet).
std::shared_ptr<client::session> current_session();

// Waits on a user thread for a completion that runs on a library thread.
struct waiter {
  std::mutex m;
  std::condition_variable cv;
  // Set (under m, after status) by finish(): is_done() reads it without the
  // lock, as a thread reading its own reply asks after every frame.
  std::atomic<bool> done{false};
  pmix_status_t status = PMIX_ERR_NOT_AVAILABLE;

  void finish(pmix_status_t st);
  bool is_done();
  pmix_status_t wait();
};

// Runs a session call that completes through a done_fn, and waits for it,
// reading the reply on this thread (client::connection::drive).
template <class Start>
pmix_status_t wait_for(const std::shared_ptr<client::session>& s, Start start) {
  auto w = std::make_shared<waiter>();
  pmix_status_t rc;
  {
    client::connection::answered_here blocking;
    rc = start([w](pmix_status_t st) { w->finish(st); });
  }
  if (rc == PMIX_OPERATION_SUCCEEDED) return PMIX_SUCCESS;
  if (rc != PMIX_SUCCESS) return rc;
  s->drive([&w] { return w->is_done(); });
  return w->wait();
}

}  // namespace pmix::api
