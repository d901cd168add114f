#include "api/server_runtime.hpp"

#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <caf/actor_registry.hpp>
#include <caf/atom.hpp>
#include <caf/event_based_actor.hpp>
#include <caf/exit_reason.hpp>
#include <caf/logger.hpp>
#include <caf/send.hpp>
#include <caf/stateful_actor.hpp>
#include <caf/thread_hook.hpp>
#include <cerrno>
#include <cstring>

#include "actors/peer_actor.hpp"
#include "actors/server_actor.hpp"
#include "common/log.hpp"
#include "common/progress.hpp"

namespace pmix::server {
namespace {

// Marks every thread CAF starts as a library thread (spec 002).
struct progress_hook : caf::thread_hook {
  void init(caf::actor_system&) override {}
  void thread_started() override { progress::enter(); }
  void thread_terminates() override { progress::leave(); }
};

// Creates the listening Unix socket in a fresh private directory.
pmix_status_t open_listener(const std::string& tmpdir, std::string& dir, std::string& path,
                            int& fd) {
  std::string pattern = tmpdir + "/pmix-cxx." + std::to_string(getpid()) + ".XXXXXX";
  const std::string socket_name = "/server.sock";
  if (pattern.size() + socket_name.size() >= sizeof(sockaddr_un::sun_path)) {
    log::error("server", "temporary directory '", tmpdir, "' is too long for a socket path (",
               sizeof(sockaddr_un::sun_path) - 1, " bytes at most)");
    return PMIX_ERR_BAD_PARAM;
  }
  std::vector<char> buf(pattern.begin(), pattern.end());
  buf.push_back('\0');
  if (::mkdtemp(buf.data()) == nullptr) {
    log::error("server", "cannot create a directory in '", tmpdir, "': ", std::strerror(errno));
    return PMIX_ERR_INIT;
  }
  dir = buf.data();
  // Clients of other users (a root daemon launching a user's job) must reach
  // the socket; who may connect is decided by the peer credentials instead.
  ::chmod(dir.c_str(), 0711);
  path = dir + socket_name;
  fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) {
    ::rmdir(dir.c_str());
    return PMIX_ERR_INIT;
  }
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::strncpy(addr.sun_path, path.c_str(), sizeof addr.sun_path - 1);
  if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
      ::chmod(path.c_str(), 0777) != 0 || ::listen(fd, SOMAXCONN) != 0) {
    log::error("server", "cannot listen on '", path, "': ", std::strerror(errno));
    ::close(fd);
    ::unlink(path.c_str());
    ::rmdir(dir.c_str());
    return PMIX_ERR_INIT;
  }
  return PMIX_SUCCESS;
}

}  // namespace

pmix_status_t runtime::start(const settings& s, const pmix_server_module_t* module,
                             std::unique_ptr<runtime>& out) {
  std::unique_ptr<runtime> rt{new runtime};
  int listener = -1;
  auto rc = open_listener(s.tmpdir, rt->socket_dir_, rt->socket_path_, listener);
  if (rc != PMIX_SUCCESS) return rc;

  rt->host_ = std::make_shared<host::module>(module);
  auto ctx = std::make_shared<actors::server_context>();
  ctx->server = s.server;
  ctx->hostname = s.hostname;
  ctx->tmpdir = s.tmpdir;
  ctx->allow_clones = s.allow_clones;
  ctx->uri = s.server.nspace + "." + std::to_string(s.server.rank) + ";uds://" + rt->socket_path_;
  ctx->host = rt->host_;
  rt->ctx_ = ctx;

  rt->cfg_.set("scheduler.policy", caf::atom_from_string(s.scheduler_policy));
  rt->cfg_.set("scheduler.max-threads", s.threads);
  rt->cfg_.add_thread_hook<progress_hook>();
  rt->system_ = std::make_unique<caf::actor_system>(rt->cfg_);
  rt->root_ = rt->system_->spawn(actors::server_actor, actors::context_ptr{ctx});
  // Drop this thread's reference to CAF's logger, or ~actor_system would
  // wait for this (user) thread to exit (notes/caf-0.17.md 5.2).
  caf::logger::set_current_actor_system(nullptr);

  auto* system = rt->system_.get();
  auto root = rt->root_;
  actors::context_ptr actor_ctx = ctx;
  rt->io_ = std::make_unique<transport::io_thread>(
      [system, root, actor_ctx](std::shared_ptr<transport::connection> conn) {
        return caf::actor{system->spawn(actors::peer_actor, std::move(conn), root, actor_ctx)};
      });
  rt->io_->add_listener(listener);
  if (!rt->io_->start()) {
    log::error("server", "cannot start the socket thread: ", std::strerror(errno));
    return PMIX_ERR_INIT;  // rt's destructor unwinds everything
  }
  log::info("server", "listening at ", ctx->uri);
  out = std::move(rt);
  return PMIX_SUCCESS;
}

std::size_t runtime::actors_running() const {
  return system_ ? system_->registry().running() : 0;
}

runtime::~runtime() {
  if (ctx_) ctx_->gate->close();
  if (io_) io_->stop();
  if (root_) caf::anon_send_exit(root_, caf::exit_reason::user_shutdown);
  root_ = nullptr;
  system_.reset();  // waits for every actor
  io_.reset();
  if (!socket_path_.empty()) ::unlink(socket_path_.c_str());
  if (!socket_dir_.empty()) ::rmdir(socket_dir_.c_str());
}

}  // namespace pmix::server
