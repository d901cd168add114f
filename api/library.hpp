// The client library's process-wide state: the sessions shared by PMIx_Init
// and PMIx_tool_init, each with its own reference count (spec 004,
// "Tool-Side Teardown"), torn down when both counts are zero. A tool may hold
// several server connections, a session each (PMIx_tool_attach_to_server);
// the primary one serves the client calls (docs/architecture.md, "Tools").
#pragma once

#include <sys/types.h>

#include <atomic>
#include <cstdint>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <vector>

#include <pmix_server.h>

#include "client/session.hpp"

namespace pmix::api {

struct library {
  std::mutex mutex;  // serializes init and finalize
  int client_refs = 0;
  int tool_refs = 0;
  std::uint64_t cycle = 0;  // counts the init cycles (a finalize in between shows)
  pid_t pid = 0;  // the process that initialized: a forked child differs
  // The session the client calls use: the primary server's connection (one
  // of `connections`), or, when there is no primary server, one without a
  // server (PMIX_TOOL_DO_NOT_CONNECT, or the primary was disconnected).
  std::shared_ptr<client::session> session;
  // Every server connection of this init cycle, oldest first.
  std::vector<std::shared_ptr<client::session>> connections;
  // Notified (under `mutex`) when a connection is added.
  std::condition_variable connections_changed;
  // In a server process (PMIx_server_init .. the last PMIx_server_finalize):
  // the host's own store, used by the client calls when the process is not
  // also a client or tool (Open MPI's mpirun stores its URI with
  // PMIx_Store_internal right after PMIx_server_init).
  std::shared_ptr<client::session> server_self;
  // A tool's own host module (PMIx_tool_set_server_module), as far as
  // PMIx_tool_init's PMIX_CXX_SERVER_MODULE_SLOTS said it goes: its
  // allocate and resource_block serve this process's own requests.
  struct own_host {
    pmix_server_module_t module;
    pmix_proc_t self;  // the requestor the up-calls are given
  };
  std::shared_ptr<const own_host> tool_module;
  std::uint32_t tool_module_slots = 28;

  // In a forked child: drop the parent's sessions without touching them.
  void forget_if_forked();
  // Under `mutex`: true between init and the last finalize, in this process.
  bool initialized() const;
  // Under `mutex`: the live connection to `server` (null if none).
  std::shared_ptr<client::session> connection_to(const proc_id& server) const;
  // Under `mutex`, at the last finalize: every session of this cycle, the
  // current one first, leaving none.
  std::vector<std::shared_ptr<client::session>> take_sessions();
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
