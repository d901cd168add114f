// The server library's singleton for one PMIx_server_init..finalize cycle:
// the CAF actor system, the root (server) actor, the socket thread and the
// rendezvous socket. A new one per cycle; finalize destroys all of it.
#pragma once

#include <caf/actor.hpp>
#include <caf/actor_system.hpp>
#include <caf/actor_system_config.hpp>
#include <memory>
#include <string>

#include "actors/context.hpp"
#include "api/host_module.hpp"
#include "transport/io_thread.hpp"

namespace pmix::server {

// Settings taken from the directives and the environment at init.
struct settings {
  proc_id server;
  std::string hostname;
  std::string tmpdir;
  bool allow_clones = false;
  std::string scheduler_policy = "sharing";  // PMIX_CXX_SCHEDULER (sharing|stealing)
  std::size_t threads = 2;                   // PMIX_CXX_THREADS
};

class runtime {
 public:
  // Brings everything up; on error nothing is left behind (spec 000).
  static pmix_status_t start(const settings& s, const pmix_server_module_t* module,
                             std::unique_ptr<runtime>& out);
  ~runtime();  // the full teardown

  const actors::server_context& context() const { return *ctx_; }
  host::module& host() { return *host_; }
  const caf::actor& root() const { return root_; }
  std::size_t connection_count() const { return io_ ? io_->connection_count() : 0; }
  std::size_t actors_running() const;

 private:
  runtime() = default;

  caf::actor_system_config cfg_;  // declared first: destroyed last
  std::unique_ptr<caf::actor_system> system_;
  caf::actor root_;
  std::shared_ptr<host::module> host_;
  std::shared_ptr<actors::server_context> ctx_;
  std::unique_ptr<transport::io_thread> io_;
  std::string socket_dir_;
  std::string socket_path_;
};

}  // namespace pmix::server
