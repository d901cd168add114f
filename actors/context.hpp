// What every server actor may read: the server's identity and settings,
// fixed at PMIx_server_init, and the services actors use (host module, the
// up-call gate). Shared, never mutated after init.
#pragma once

#include <caf/actor_addr.hpp>
#include <caf/actor_cast.hpp>
#include <caf/message.hpp>
#include <caf/send.hpp>

#include <atomic>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <sys/types.h>

#include "actors/stdin_flow.hpp"
#include "common/job_budget.hpp"
#include "common/value.hpp"

namespace pmix::host {
class module;
}

namespace pmix::actors {
class cleaner;
class epilog;
}

namespace pmix::faults {
class plane;
}

namespace pmix::actors {

// Closed at finalize, before the actor system goes away: a host callback that
// arrives after that is dropped instead of touching a dead system.
//
// With PMIX_EXTERNAL_PROGRESS its mutex is also the lock every entry into the
// actor system takes (CAF's manual scheduler is single-threaded): recursive,
// because a host may complete an up-call inside it.
class upcall_gate {
 public:
  template <class F>
  void run_if_open(F&& f) {
    std::lock_guard<std::recursive_mutex> guard{mutex_};
    if (open_) f();
  }
  // A host callback's message to the actor that made the up-call (dropped if
  // the actor is gone or the gate closed). With one loop thread for sockets
  // and actors, the message is handed to that thread (`post`, set once at
  // init), which sends it: a host thread never waits for the loop. An
  // address given as an rvalue moves to that thread, which releases it.
  template <class... Ts>
  void send_if_open(caf::actor_addr addr, Ts&&... xs) {
    {
      // Its own lock, not the gate's (which the loop holds while it makes
      // up-calls): the poster only queues the message for the loop.
      std::lock_guard<std::mutex> guard{post_mutex_};
      if (post_) return post_(std::move(addr), caf::make_message(std::forward<Ts>(xs)...));
    }
    run_if_open([&] {
      if (auto target = caf::actor_cast<caf::actor>(addr)) caf::anon_send(target, std::forward<Ts>(xs)...);
    });
  }
  using poster = std::function<void(caf::actor_addr, caf::message)>;
  // Set at init; emptied when the runtime it posts to is gone (the gate
  // outlives it in the host's callbacks): a host answer after that finds
  // the gate closed and is dropped (lifecycle_test, "finalize ends a tool's
  // connection whose tool_connected the host never answered", which
  // answers late: a use of the freed runtime under ASan before).
  void on_send(poster p) {
    std::lock_guard<std::mutex> guard{post_mutex_};
    post_ = std::move(p);
  }
  void close() {
    std::lock_guard<std::recursive_mutex> guard{mutex_};
    open_ = false;
  }
  std::recursive_mutex& mutex() { return mutex_; }
  bool is_open() {
    std::lock_guard<std::recursive_mutex> guard{mutex_};
    return open_;
  }

 private:
  std::recursive_mutex mutex_;
  bool open_ = true;
  std::mutex post_mutex_;
  poster post_;
};

struct server_context {
  proc_id server;             // PMIX_SERVER_NSPACE / PMIX_SERVER_RANK
  std::string hostname;       // this node's name, as job maps name it
  std::string uri;            // what clients get in PMIX_SERVER_URI41
  std::string openpmix_uri;   // OpenPMIx's protocol, loopback TCP (empty: none)
  std::string tmpdir;         // PMIX_SERVER_TMPDIR
  bool allow_clones = false;  // PMIX_ALLOW_CLIENT_CLONES
  bool tool_support = false;  // PMIX_SERVER_TOOL_SUPPORT: tools may connect
  bool foreign_tools = false;  // PMIX_SERVER_ALLOW_FOREIGN_TOOLS
  bool iof_local_output = false;  // PMIX_IOF_LOCAL_OUTPUT
  uid_t uid = 0;               // the server's user: tools of others are foreign
  info_list job_info;          // added to every namespace's job data (topology)
  std::shared_ptr<host::module> host;
  std::shared_ptr<upcall_gate> gate = std::make_shared<upcall_gate>();
  // Runs epilogs off the actors' threads (actors/cleaner.hpp); without one
  // (actor tests) they run where they are asked for.
  std::shared_ptr<actors::cleaner> cleanup_worker;
  // Replies and events that reached a peer whose socket had closed (a
  // tombstone, or a process that died), dropped before any send: spec
  // 004's short-circuit of every send path. For introspection.
  mutable std::atomic<std::uint64_t> dropped_sends{0};
  // Heartbeat monitors (sensors) running for clients: spec 004 has a
  // deregistration restore the rank's. For introspection.
  std::shared_ptr<std::atomic<std::uint64_t>> sensors = std::make_shared<std::atomic<std::uint64_t>>(0);
  // The key of the credentials the server issues itself when the host does
  // not (actors/credential.hpp): random, for this server's lifetime.
  std::string credential_key;
  // The longest such a credential stays valid (seconds; its default life is
  // credential::default_lifetime_s, or PMIX_TIMEOUT up to this).
  std::int64_t max_credential_lifetime_s = 86400;
  // What one peer, and one job's peers together, may make the server hold
  // (docs/security.md, "Limits"; the output a peer has not read is bounded
  // by its connection).
  std::size_t max_commit = 64u << 20;          // committed bytes
  std::size_t max_requests = 16384;            // answers it may wait for at once
  std::size_t max_request_bytes = 16u << 20;   // what those requests weigh
  job_budget::limits job_limits{{std::size_t{1} << 30, 262144, 256u << 20, 256u << 20}};
  // The fault plane (faults/plane.hpp, docs/fault-injection.md): null
  // unless a plan was given, and every fault point asks that first.
  std::shared_ptr<faults::plane> faults;
  // Stdin the host stopped (PMIx_server_IOF_flow_control): the pushes held.
  std::shared_ptr<stdin_flow> stdin_control = std::make_shared<stdin_flow>();
};

// Runs `e` (once) off the actors' threads and tells `who` when it is done
// (epilog_done_msg), through the gate; inline, then told, without a cleaner.
void run_epilog(const server_context& ctx, epilog e, const caf::actor_addr& who);

using context_ptr = std::shared_ptr<const server_context>;

}  // namespace pmix::actors
