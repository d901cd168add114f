#include "server/server_runtime.hpp"

#include <pmix.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <unistd.h>

#include <cstdlib>

#include <caf/actor_registry.hpp>
#include <caf/atom.hpp>
#include <caf/event_based_actor.hpp>
#include <caf/execution_unit.hpp>
#include <caf/exit_reason.hpp>
#include <caf/logger.hpp>
#include <caf/resumable.hpp>
#include <caf/send.hpp>
#include <caf/stateful_actor.hpp>
#include <caf/thread_hook.hpp>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <atomic>
#include <chrono>
#include <future>
#include <mutex>
#include <system_error>
#include <thread>

#include "actors/cleaner.hpp"
#include "actors/credential.hpp"
#include "actors/messages.hpp"
#include "actors/peer_actor.hpp"
#include "actors/server_actor.hpp"
#include "common/log.hpp"
#include "common/progress.hpp"
#include "common/unique_fd.hpp"
#include "faults/check.hpp"
#include "faults/plane.hpp"
#include "protocol/codec.hpp"
#include "protocol/version.hpp"
#include "transport/tcp.hpp"

namespace pmix::server {
namespace {

// Every thread CAF starts is a library thread (spec 002) and, when asked,
// bound to the progress CPUs (PMIX_BIND_PROGRESS_THREAD).
struct progress_hook : caf::thread_hook {
  explicit progress_hook(std::shared_ptr<thread_binding> b) : binding(std::move(b)) {}
  void init(caf::actor_system&) override {}
  void thread_started() override {
    progress::enter();
    if (binding) binding->bind_this_thread();
  }
  void thread_terminates() override { progress::leave(); }
  std::shared_ptr<thread_binding> binding;
};

// mkdir -p, recording what it created (removed again at finalize, newest
// first). Mode 0700, or 0755 for foreign tools, subject to the umask; an
// existing directory is left as found.
bool make_dirs(const std::string& path, mode_t mode, std::vector<std::string>& created,
               std::string& error) {
  std::string partial;
  std::size_t pos = 0;
  while (pos != std::string::npos) {
    pos = path.find('/', pos + 1);
    partial = path.substr(0, pos);
    if (partial.empty()) continue;
    struct stat st;
    if (::stat(partial.c_str(), &st) == 0) {
      if (!S_ISDIR(st.st_mode)) {
        error = partial + " is not a directory";
        return false;
      }
      continue;
    }
    if (::mkdir(partial.c_str(), mode) != 0 && errno != EEXIST) {
      error = "cannot create " + partial + ": " + std::strerror(errno);
      return false;
    }
    created.push_back(partial);
  }
  return true;
}

// The socket lives in a directory of the server's own, made by mkdtemp(3)
// in the temporary directory (`<tmpdir>/pmix-cxx.<pid>.XXXXXX/sock`): nobody
// else can create, replace or remove anything in it. The directory is
// 0711: clients of other users (a root daemon launching a user's job) reach
// the socket by its name, but cannot list the directory; the socket is
// 0777, and who may connect is decided by the peer credentials against the
// host's registration (docs/security.md).
pmix_status_t open_unix_listener(const std::string& tmpdir, std::string& dir, std::string& path, int& fd,
                                 std::string& error) {
  const std::string pattern = tmpdir + "/pmix-cxx." + std::to_string(getpid()) + ".XXXXXX";
  const std::string name = "/sock";
  if (pattern.size() + name.size() >= sizeof(sockaddr_un::sun_path)) {
    error = "temporary directory '" + tmpdir + "' is too long for a socket path (" +
            std::to_string(sizeof(sockaddr_un::sun_path) - 1) + " bytes at most)";
    return PMIX_ERR_BAD_PARAM;
  }
  std::vector<char> buf(pattern.begin(), pattern.end());
  buf.push_back('\0');
  if (::mkdtemp(buf.data()) == nullptr) {
    error = "cannot create a directory in '" + tmpdir + "': " + std::strerror(errno);
    return PMIX_ERR_INIT;
  }
  dir = buf.data();
  if (::chmod(dir.c_str(), 0711) != 0) {
    error = "cannot set the mode of '" + dir + "': " + std::strerror(errno);
    return PMIX_ERR_INIT;
  }
  fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) {
    error = std::string{"socket: "} + std::strerror(errno);
    return PMIX_ERR_INIT;
  }
  const std::string candidate = dir + name;
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::strncpy(addr.sun_path, candidate.c_str(), sizeof addr.sun_path - 1);
  if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    error = "cannot create a socket in '" + dir + "': " + std::strerror(errno);
    return PMIX_ERR_INIT;
  }
  path = candidate;
  if (::chmod(path.c_str(), 0777) != 0 || ::listen(fd, SOMAXCONN) != 0) {
    error = "cannot listen on '" + path + "': " + std::strerror(errno);
    return PMIX_ERR_INIT;
  }
  return PMIX_SUCCESS;
}

}  // namespace

// Processes linked with OpenPMIx reach their server over TCP only, in
// OpenPMIx's protocol (issue 35): one listener on the loopback address for
// them. Without it (IPv4 disabled, no loopback) such processes are not
// served; ours are not affected.
void runtime::open_openpmix_listener(const settings& s) {
  if (s.disable_ipv4) return;
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) return;
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof a;
  if (::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 || ::listen(fd, SOMAXCONN) != 0 ||
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) != 0) {
    log::warning("server", "no listener for processes linked with OpenPMIx: ", std::strerror(errno));
    ::close(fd);
    return;
  }
  openpmix_listener_ = fd;
  openpmix_uri_ = s.server.nspace + "." + std::to_string(s.server.rank) + ";tcp4://127.0.0.1:" +
                  std::to_string(ntohs(a.sin_port));
  log::debug("server", "listening for OpenPMIx's protocol at ", openpmix_uri_);
}

pmix_status_t runtime::open_sockets(const settings& s, std::string& error) {
  const mode_t dir_mode = s.foreign_tools ? 0755 : 0700;
  if (!make_dirs(s.tmpdir, dir_mode, created_dirs_, error)) return PMIX_ERR_BAD_PARAM;
  int fd = -1;
  auto rc = open_unix_listener(s.tmpdir, socket_dir_, socket_path_, fd, error);
  if (fd >= 0) listeners_.push_back(fd);
  if (rc != PMIX_SUCCESS) return rc;
  const std::string local_uri =
      s.server.nspace + "." + std::to_string(s.server.rank) + ";uds://" + socket_path_;
  uri_ = local_uri;
  open_openpmix_listener(s);
  if (!s.tcp_requested) return PMIX_SUCCESS;

  transport::tcp_options o;
  o.remote = s.remote_connections;
  o.include = s.if_include;
  o.exclude = s.if_exclude;
  o.ipv4_ports = s.ipv4_ports;
  o.ipv6_ports = s.ipv6_ports;
  o.disable_ipv4 = s.disable_ipv4;
  o.disable_ipv6 = s.disable_ipv6;
  std::vector<transport::tcp_listener> tcp;
  rc = transport::open_listeners(o, tcp, error);
  if (rc != PMIX_SUCCESS) return rc;
  const std::string prefix = s.server.nspace + "." + std::to_string(s.server.rank) + ";";
  for (const auto& l : tcp) {
    listeners_.push_back(l.fd);
    log::info("server", "listening at ", l.uri, " (", l.device, ")");
  }
  if (s.remote_connections && !tcp.empty()) {
    // The URI names the first address; the others, and the local socket,
    // are the alternatives (PMIX_MYSERVER_ALT_URIS).
    uri_ = prefix + tcp[0].uri;
    for (std::size_t k = 1; k < tcp.size(); ++k) alt_uris_.push_back(prefix + tcp[k].uri);
    alt_uris_.push_back(local_uri);
  } else {
    for (const auto& l : tcp) alt_uris_.push_back(prefix + l.uri);
  }
  return PMIX_SUCCESS;
}

pmix_status_t runtime::write_rendezvous(const settings& s, std::string& error) {
  rendezvous_contents c;
  c.uri = uri_;
  c.version = protocol::abi_version;
  c.pid = getpid();
  c.alt_uris = alt_uris_;
  if (!openpmix_uri_.empty() && uri_.find(";uds://") != std::string::npos) {
    // OpenPMIx's tools read the first line only, and reach a server over
    // TCP only: the first line names a TCP listener (they all serve both
    // protocols), the loopback one unless the URI is a remote address
    // already; ours find our address among the others, and prefer a Unix
    // socket (api/tool_api.cpp).
    c.alt_uris.insert(c.alt_uris.begin(), c.uri);
    c.uri = openpmix_uri_;
  }
  const bool world = s.foreign_tools;
  std::vector<std::string> files;
  if (!s.launcher_rendezvous.empty()) files.push_back(s.launcher_rendezvous);
  if (s.scheduler || s.sys_controller) {
    // A scheduler or system controller writes only its own file.
    if (s.scheduler) files.push_back(s.system_tmpdir + "/pmix.sched." + s.hostname);
    if (s.sys_controller) files.push_back(s.system_tmpdir + "/pmix.sysctrlr." + s.hostname);
  } else if (s.tool_support) {
    if (s.system_support) files.push_back(s.system_tmpdir + "/pmix.sys." + s.hostname);
    if (s.session_support) files.push_back(s.tmpdir + "/pmix." + s.hostname + ".tool");
    files.push_back(s.tmpdir + "/pmix." + s.hostname + ".tool." + std::to_string(getpid()));
    files.push_back(s.tmpdir + "/pmix." + s.hostname + ".tool." + s.server.nspace);
  }
  for (const auto& f : files) {
    const auto rc = rendezvous_.write(f, c, world, error);
    if (rc == PMIX_ERR_NO_PERMISSIONS) {
      // Another user's file under our name: not ours to remove, and no tool
      // trusts it (docs/security.md, "Rendezvous files"). The server runs
      // without that file.
      log::error("server", "rendezvous file ", error);
      error.clear();
      continue;
    }
    if (rc != PMIX_SUCCESS) return rc;
  }
  return PMIX_SUCCESS;
}

pmix_status_t runtime::report_uri(const settings& s, std::string& error) {
  const auto& where = s.report_uri;
  if (where.empty()) return PMIX_SUCCESS;
  const std::string line = uri_ + "\n";
  if (where == "-" || where == "+") {
    std::FILE* f = where == "-" ? stdout : stderr;
    std::fputs(line.c_str(), f);
    std::fflush(f);
    return PMIX_SUCCESS;
  }
  if (where.find_first_not_of("0123456789") == std::string::npos) {
    const int fd = std::atoi(where.c_str());
    const auto n = ::write(fd, line.data(), line.size());
    ::close(fd);
    if (n != static_cast<ssize_t>(line.size())) {
      error = "PMIX_TCP_REPORT_URI: cannot write to descriptor " + where + ": " + std::strerror(errno);
      return PMIX_ERR_BAD_PARAM;
    }
    return PMIX_SUCCESS;
  }
  return rendezvous_.write_plain(where, line, error);
}

pmix_status_t runtime::start(const settings& s, const pmix_server_module_t* module,
                             host::attribute_answer_fn attributes, std::unique_ptr<runtime>& out,
                             std::string& error) {
  std::unique_ptr<runtime> rt{new runtime};
  unique_fd host_fd;  // PMIX_CXX_PROGRESS_FD's, the host's once init succeeds
  auto rc = rt->open_sockets(s, error);
  if (rc != PMIX_SUCCESS) return rc;

  if (!s.bind_cpus.empty()) {
    rc = thread_binding::create(s.bind_cpus, rt->binding_, error);
    if (rc != PMIX_SUCCESS && s.bind_required) return rc;
    if (rc != PMIX_SUCCESS) {
      log::warning("server", error, "; the progress threads stay unbound");
      rt->binding_.reset();
    } else if (!rt->binding_->missing().empty()) {
      error = "PMIX_BIND_PROGRESS_THREAD: CPUs " + rt->binding_->missing() + " are not available";
      if (s.bind_required) return PMIX_ERR_BAD_PARAM;
      log::warning("server", error, "; binding to the others");
    }
  }

  rt->host_ = std::make_shared<host::module>(module, attributes, s.module_slots);
  rt->host_->set_host_frees_fence_data(s.host_frees_fence_data);
  auto ctx = std::make_shared<actors::server_context>();
  ctx->server = s.server;
  ctx->hostname = s.hostname;
  ctx->tmpdir = s.tmpdir;
  ctx->allow_clones = s.allow_clones;
  ctx->tool_support = s.tool_support;
  ctx->foreign_tools = s.foreign_tools;
  ctx->iof_local_output = s.iof_local_output;
  ctx->uid = ::getuid();
  ctx->credential_key = actors::credential::new_key();
  ctx->max_credential_lifetime_s = s.max_credential_lifetime_s;
  ctx->max_commit = s.max_commit;
  ctx->max_requests = s.max_requests;
  ctx->max_request_bytes = s.max_request_bytes;
  ctx->job_limits.of[job_budget::committed] = s.max_commit_job;
  ctx->job_limits.of[job_budget::requests] = s.max_requests_job;
  ctx->job_limits.of[job_budget::request_bytes] = s.max_request_bytes_job;
  ctx->job_limits.of[job_budget::backlog] = s.max_send_backlog_job;
  ctx->uri = s.server.nspace + "." + std::to_string(s.server.rank) + ";uds://" + rt->socket_path_;
  ctx->openpmix_uri = rt->openpmix_uri_;
  ctx->host = rt->host_;
  ctx->cleanup_worker = std::make_shared<actors::cleaner>();
  rc = install_faults(*ctx, *rt->host_, s.faults, s.faults_seed, error);
  if (rc != PMIX_SUCCESS) return rc;
  if (s.share_topology) {
    std::string xml;
    rc = topology_xml(s.topology, xml, error);
    if (rc != PMIX_SUCCESS) return rc;
    // Beside the socket, in the server's own directory.
    rt->topology_file_ = rt->socket_dir_ + "/topology.xml";
    const int tfd = ::open(rt->topology_file_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0644);
    if (tfd < 0 || ::fchmod(tfd, 0644) != 0 ||
        ::write(tfd, xml.data(), xml.size()) != static_cast<ssize_t>(xml.size())) {
      error = "cannot write the topology file '" + rt->topology_file_ + "': " + std::strerror(errno);
      if (tfd >= 0) {
        ::close(tfd);
        ::unlink(rt->topology_file_.c_str());
      }
      rt->topology_file_.clear();
      return PMIX_ERR_INIT;
    }
    ::close(tfd);
    ctx->job_info.push_back(info{PMIX_HWLOC_XML_V2, value::string(std::move(xml)), 0});
    ctx->job_info.push_back(info{PMIX_TOPOLOGY_FILE, value::string(rt->topology_file_), 0});
  }
  rt->ctx_ = ctx;

  rt->external_ = s.external_progress;
  rt->hosted_ = s.progress_fd != nullptr;
  const char* loop_env = std::getenv("PMIX_CXX_LOOP");
  if (rt->hosted_ || (!rt->external_ && !(loop_env != nullptr && std::string{loop_env} == "0"))) {
    rt->loop_ = true;
    // The queue's storage is made here, for the few requests a loop turn
    // usually takes; a burst grows it, and gives it back once sent.
    for (auto* q : {&rt->inbox_, &rt->posted_}) q->reserve(64);
    rt->external_ = true;  // the manual scheduler, driven by our one loop thread
    rt->spin_ = s.loop_spin;
  }
  if (rt->external_) {
    // No threads of ours: CAF's manual scheduler runs inside PMIx_Progress.
    rt->cfg_.set("scheduler.policy", caf::atom("testing"));
  } else {
    rt->cfg_.set("scheduler.policy", caf::atom_from_string(s.scheduler_policy));
    rt->cfg_.set("scheduler.max-threads", s.threads);
    rt->cfg_.add_thread_hook<progress_hook>(rt->binding_);
  }
  rt->system_ = std::make_unique<caf::actor_system>(rt->cfg_);
  if (rt->external_) {
    rt->manual_ = &dynamic_cast<caf::scheduler::test_coordinator&>(rt->system_->scheduler());
    rt->actors_ = std::make_unique<actor_loop>(*rt->system_, *rt->manual_);
  }
  rt->root_ = rt->system_->spawn(actors::server_actor, actors::context_ptr{ctx});

  auto* system = rt->system_.get();
  auto root = rt->root_;
  actors::context_ptr actor_ctx = ctx;
  auto binding = rt->binding_;
  // Drop this thread's reference to CAF's logger, which every spawn on it
  // takes, after the last one: ~actor_system waits for that reference, so a
  // finalize on another thread hung while this (the host's) thread lived
  // (notes/caf-0.17.md 5.2; collect_test, "a call still queued ...").
  caf::logger::set_current_actor_system(nullptr);
  rt->io_ = std::make_unique<transport::io_thread>(
      [system, root, actor_ctx](std::shared_ptr<transport::connection> conn) {
        return actors::spawn_peer_actor(*system, std::move(conn), root, actor_ctx);
      },
      [binding] {
        if (binding) binding->bind_this_thread();
      },
      transport::limits{s.max_frame, s.max_handshake_frame, s.max_send_backlog, s.max_unauthenticated,
                        s.handshake_timeout_ms, s.handshake_grace_ms});
  {
    wire::Envelope busy;
    busy.set_id(0);
    busy.mutable_connect_reply()->set_status(PMIX_ERR_OUT_OF_RESOURCE);
    rt->io_->set_busy_frame(protocol::to_frame(busy));
  }
  // TCP listeners take OpenPMIx's protocol too (a tool linked with OpenPMIx
  // reads the first address of a rendezvous file, which may be one of
  // them); the Unix socket only ours (OpenPMIx 4.2 and later reach their
  // servers over TCP only).
  for (int fd : rt->listeners_) {
    sockaddr_storage a{};
    socklen_t len = sizeof a;
    if (::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) == 0 && a.ss_family != AF_UNIX)
      rt->io_->add_either_listener(fd);
    else
      rt->io_->add_listener(fd);
  }
  rt->listeners_.clear();
  if (rt->openpmix_listener_ >= 0) rt->io_->add_either_listener(std::exchange(rt->openpmix_listener_, -1));
  if (!(rt->external_ ? rt->io_->open() : rt->io_->start())) {
    const int err = errno;
    error = std::string{"cannot start the socket thread: "} + std::strerror(err);
    // No thread to be had (RLIMIT_NPROC, memory) is the system's resources.
    return err == EAGAIN || err == ENOMEM ? PMIX_ERR_OUT_OF_RESOURCE : PMIX_ERR_INIT;
  }
  {
    runtime* self = rt.get();
    host::set_release_runner([self](std::function<void()> task) { return self->defer(task); });
  }
  if (rt->hosted_) {
    // The host watches a descriptor of its own for the epoll set.
    host_fd = unique_fd{::fcntl(rt->io_->epoll_fd(), F_DUPFD_CLOEXEC, 3)};
    if (host_fd.get() < 0) {
      error = std::string{"PMIX_CXX_PROGRESS_FD: cannot duplicate the epoll descriptor: "} + std::strerror(errno);
      return PMIX_ERR_INIT;
    }
    runtime* self = rt.get();
    ctx->gate->on_send([self](caf::actor_addr to, caf::message m) { self->post(std::move(to), std::move(m)); });
    std::lock_guard<std::mutex> guard{rt->inbox_mutex_};
    rt->sleeping_ = true;  // until the host's first turn: a post makes the descriptor readable
  } else if (rt->loop_) {
    runtime* self = rt.get();
    ctx->gate->on_send([self](caf::actor_addr to, caf::message m) { self->post(std::move(to), std::move(m)); });
    // The loop binds itself first; init waits for that, so a refused
    // binding is known below.
    std::promise<void> bound;
    auto bound_done = bound.get_future();
    try {
      rt->loop_thread_ = std::thread([self, binding, &bound] {
        if (binding) binding->bind_this_thread();
        bound.set_value();
        self->loop();
      });
    } catch (const std::system_error& e) {
      // The system gives no thread (RLIMIT_NPROC, memory): a failure like
      // any other, undone by rt's destructor, not std::terminate in the
      // host's process.
      error = std::string{"cannot start the server's loop thread: "} + e.what();
      return PMIX_ERR_OUT_OF_RESOURCE;
    }
    bound_done.wait();
  }
  if (rt->binding_ && rt->binding_->failures() > 0 && s.bind_required && (!rt->external_ || rt->loop_)) {
    error = "PMIX_BIND_PROGRESS_THREAD: the system refused to bind the progress threads";
    return PMIX_ERR_BAD_PARAM;
  }

  if (s.singleton) {
    // The server serves a singleton (20.2.247.4.4): its namespace and rank
    // are known before it connects.
    auto status = std::make_shared<std::atomic<int>>(1);  // 1: not answered yet
    auto answer = [status](pmix_status_t st, actors::no_result) { status->store(st); };
    info_list job = {{PMIX_JOB_SIZE, value::unsigned_(PMIX_UINT32, s.singleton->rank + 1), 0},
                     {PMIX_LOCAL_PEERS, value::string(std::to_string(s.singleton->rank)), 0}};
    auto wait = [&] {
      rt->wait_until([&] { return status->load() != 1; },
                     [&] {
                       while (status->load() == 1) std::this_thread::sleep_for(std::chrono::microseconds(100));
                     });
      return static_cast<pmix_status_t>(status->load());
    };
    rt->tell(actors::register_nspace_msg{s.singleton->nspace, 1, std::move(job),
                                         actors::make_reply<actors::no_result>(answer)});
    rc = wait();
    if (rc == PMIX_SUCCESS) {
      status->store(1);
      rt->tell(actors::register_client_msg{*s.singleton, ::getuid(), ::getgid(), nullptr,
                                           actors::make_reply<actors::no_result>(answer)});
      rc = wait();
    }
    if (rc != PMIX_SUCCESS) {
      error = "PMIX_SINGLETON: cannot register " + to_string(*s.singleton);
      return rc;
    }
  }

  rc = rt->write_rendezvous(s, error);
  if (rc != PMIX_SUCCESS) return rc;
  rc = rt->report_uri(s, error);
  if (rc != PMIX_SUCCESS) return rc;
  log::info("server", "listening at ", ctx->uri);
  // The host's descriptor only once nothing can fail: a failed init leaves
  // the host nothing to close.
  if (rt->hosted_) *s.progress_fd = host_fd.release();
  out = std::move(rt);
  return PMIX_SUCCESS;
}

// One thread for sockets and actors: it waits without the lock, then
// handles what is ready and runs every actor job under it.
//
// Before it sleeps it polls a little (spin_), yielding its CPU between polls:
// clients answer within tens of µs (the next fence, the rest of a
// collective), and a request that comes within the spin costs no wake-up
// (25-40 µs on a VM). The yield leaves the CPU to any process that needs it,
// so on a node with more processes than CPUs the spin takes nothing from
// them; an idle server sleeps after one spin (docs/performance-history.md, "Third
// pass").
void runtime::loop() {
  progress::scope in_library;
  epoll_event events[64];
  while (!stopped_) {
    int n = 0;
    if (spin_.count() > 0) {
      const auto until = std::chrono::steady_clock::now() + spin_;
      while ((n = io_->wait(events, 64, 0)) == 0 && !inbox_ready_.load(std::memory_order_acquire) &&
             std::chrono::steady_clock::now() < until)
        ::sched_yield();
    }
    if (n == 0 && !inbox_ready_.load(std::memory_order_acquire)) {
      // Only a sleeping loop is woken by post() (an eventfd write per host
      // call cost more than the call's own work once the loop kept up).
      bool block;
      {
        std::lock_guard<std::mutex> inbox_guard{inbox_mutex_};
        block = inbox_.empty();
        sleeping_ = block;
      }
      if (block) n = io_->wait(events, 64, next_timeout_ms_);
    }
    std::lock_guard<std::recursive_mutex> guard{ctx_->gate->mutex()};
    if (stopped_) break;
    io_->handle(events, n);
    run_posted_and_actors();
  }
}

// The rest of a turn, after the sockets: what host threads posted, then
// every actor with work. On the thread running the turn, under the gate's
// lock.
void runtime::run_posted_and_actors() {
  {
    // The two vectors trade places and keep their capacity: a host that
    // posts thousands of calls in a burst does not grow a fresh one each
    // time (freeing those large blocks showed in the profiles).
    std::lock_guard<std::mutex> inbox_guard{inbox_mutex_};
    sleeping_ = false;
    inbox_ready_.store(false, std::memory_order_relaxed);
    posted_.swap(inbox_);
    posted_nspaces_.swap(inbox_nspaces_);
  }
  if (!posted_.empty()) {
    if (ctx_->gate->is_open()) send_posted();
    else drop_posted(posted_, posted_nspaces_);
  }
  posted_.clear();
  posted_nspaces_.clear();
  if (posted_.capacity() > 8192) {
    // After a burst of thousands of calls: the memory goes back, the
    // queue keeps its usual size.
    posted_ = std::vector<posted>();
    posted_.reserve(64);
  }
  next_timeout_ms_ = actors_->settle();
}

// One turn of the loop on the host's thread (PMIX_CXX_PROGRESS_FD): what
// the sockets have, what was posted, every actor with work; then what was
// posted meanwhile makes the descriptor readable again, and the next
// timeout is set on the timerfd.
void runtime::turn() {
  std::lock_guard<std::recursive_mutex> guard{ctx_->gate->mutex()};
  if (stopped_) return;
  progress::scope in_library;
  epoll_event events[64];
  io_->handle(events, io_->wait(events, 64, 0));
  run_posted_and_actors();
  bool again;
  {
    std::lock_guard<std::mutex> inbox_guard{inbox_mutex_};
    again = !inbox_.empty();
    sleeping_ = !again;  // from now on a post makes the descriptor readable
  }
  if (again) io_->wake();
  int due = io_->due_ms();
  if (next_timeout_ms_ >= 0 && (due < 0 || next_timeout_ms_ < due)) due = next_timeout_ms_;
  if (!io_->arm_timer(due)) log::error("server", "cannot set the progress timer: ", std::strerror(errno));
}

// Sends what host threads posted, in order; a run of registrations of one
// namespace goes as one message.
void runtime::send_posted() {
  for (std::size_t k = 0; k < posted_.size();) {
    auto& p = posted_[k];
    if (p.registers) {
      std::size_t end = k + 1;
      while (end < posted_.size() && posted_[end].registers && posted_[end].nspace == p.nspace) ++end;
      auto batch = std::make_shared<actors::registration_batch>(posted_nspaces_[p.nspace]);
      batch->reserve(end - k);
      for (std::size_t i = k; i < end; ++i) batch->add(posted_[i].registration);
      caf::anon_send(root_, actors::register_clients_msg{std::move(batch)});
      k = end;
      continue;
    }
    if (!p.to) {
      caf::anon_send(root_, std::move(p.message));
    } else if (auto target = caf::actor_cast<caf::actor>(p.to)) {
      caf::anon_send(target, std::move(p.message));
    }
    ++k;
  }
}

// What the loop did not send (finalize): messages are dropped (their reply
// channels answer PMIX_ERR_NOT_AVAILABLE), registrations answered so here.
void runtime::drop_posted(std::vector<posted>& entries, std::vector<std::string>& nspaces) {
  for (auto& p : entries) {
    // A host's release function still runs: the memory is the host's.
    if (!p.registers && p.message.match_elements<actors::host_task_msg>()) {
      auto& task = p.message.get_mutable_as<actors::host_task_msg>(0);
      if (task.run) task.run();
    }
    if (!p.registers) continue;
    actors::registration_batch lost{nspaces[p.nspace]};
    lost.add(p.registration);
  }
  entries.clear();
  nspaces.clear();
}

// The loop is woken under inbox_mutex_: the destructor closes the wake-up
// descriptor only after stop() has set loop_done_ under that mutex, so a
// wake-up can never write to a closed descriptor, or to another file that
// took its number.
bool runtime::post(caf::actor_addr to, caf::message m) {
  {
    std::lock_guard<std::mutex> guard{inbox_mutex_};
    // After the loop has stopped nobody would send it: dropped here, its
    // reply channel answers PMIX_ERR_NOT_AVAILABLE (actors/reply.hpp). The
    // address is kept for the destructor, which releases it on the thread
    // that takes the actors down, after joining the cleaner (no actor
    // handle is released on a thread that did not run or stop the actors).
    if (loop_done_) {
      late_.push_back(std::move(to));
      return false;
    }
    inbox_.push_back(posted{std::move(to), std::move(m)});
    inbox_ready_.store(true, std::memory_order_release);  // seen by a spinning loop
    if (sleeping_) io_->wake();
    sleeping_ = false;  // one wake-up is enough
  }
  return true;
}

bool runtime::defer(std::function<void()>& task) {
  if (stopped_.load()) return false;
  // Loop mode: never the gate's lock, which the loop holds while it makes
  // up-calls (a host calling back under a lock of its own would wait for a
  // loop that waits for that lock).
  if (loop_) return post({}, caf::make_message(actors::host_task_msg{std::move(task)}));
  bool taken = false;
  ctx_->gate->run_if_open([&] {
    caf::anon_send(root_, actors::host_task_msg{std::move(task)});
    taken = true;
  });
  return taken;
}

bool runtime::post_registration(const char* nspace, const actors::registration_batch::call& c) {
  if (!loop_) return false;
  {
    std::unique_lock<std::mutex> guard{inbox_mutex_};
    if (loop_done_) {
      guard.unlock();
      actors::registration_batch lost{nspace};  // answers PMIX_ERR_NOT_AVAILABLE
      lost.add(c);
      return true;
    }
    // Consecutive calls name the same namespace: its name is kept once.
    if (inbox_nspaces_.empty() || inbox_nspaces_.back() != nspace) inbox_nspaces_.emplace_back(nspace);
    inbox_.push_back(posted{{}, {}, true, c, static_cast<std::uint32_t>(inbox_nspaces_.size() - 1)});
    inbox_ready_.store(true, std::memory_order_release);
    if (sleeping_) io_->wake();  // under the mutex, as in post()
    sleeping_ = false;
  }
  return true;
}

void runtime::progress(int timeout_ms) {
  if (hosted_ && !stopped_) {
    if (timeout_ms > 0) {
      pollfd ready{io_->epoll_fd(), POLLIN, 0};
      ::poll(&ready, 1, timeout_ms);
    }
    return turn();
  }
  if (!external_ || loop_ || stopped_) return;
  std::lock_guard<std::recursive_mutex> guard{ctx_->gate->mutex()};
  progress::scope in_library;
  io_->step(timeout_ms);
  actors_->settle();
}

pmix_status_t install_faults(actors::server_context& ctx, host::module& host, const std::string& plan,
                             std::uint64_t seed, std::string& error) {
  if (plan.empty()) return PMIX_SUCCESS;
  std::string why;
  ctx.faults = faults::plane::make(plan, seed, why);
  if (!ctx.faults) {
    error = "fault plan '" + plan + "': " + why;
    return PMIX_ERR_BAD_PARAM;
  }
  host.set_faults(ctx.faults);
  log::warning("server", "fault plane armed: '", plan, "' seed ", seed);
  return PMIX_SUCCESS;
}

std::size_t runtime::actors_running() const {
  if (!system_) return 0;
  return system_->registry().running();
}

void runtime::remove_files() {
  if (files_removed_) return;
  files_removed_ = true;
  if (!topology_file_.empty()) ::unlink(topology_file_.c_str());
  if (!socket_path_.empty()) ::unlink(socket_path_.c_str());
  if (!socket_dir_.empty()) ::rmdir(socket_dir_.c_str());
  for (auto it = created_dirs_.rbegin(); it != created_dirs_.rend(); ++it) ::rmdir(it->c_str());
}

void runtime::stop() {
  if (stopped_.exchange(true)) return;
  host::set_release_runner({});  // late host releases run on threads of their own
  rendezvous_.remove_all();  // tools stop finding us first
  if (ctx_) ctx_->gate->close();
  if (ctx_ && ctx_->faults) ctx_->faults->stop();  // late host answers are dropped
  if (loop_ && loop_thread_.joinable()) {
    io_->wake();
    // The loop thread most often sleeps: while it wakes up and ends, this
    // thread removes the files. A client that comes now finds no socket.
    // (The listener's bound path keeps the directory until the listener is
    // closed: that close, not the rmdir, is where the file system frees it,
    // docs/performance-history.md, "Server init and finalize".)
    remove_files();
    loop_thread_.join();
  } else if (hosted_) {
    remove_files();
  }
  if (loop_ && ctx_) {
    // Hosted: no turn runs from here on (a host's turn that started has
    // ended; a later one sees stopped_).
    std::unique_lock<std::recursive_mutex> no_turn{ctx_->gate->mutex(), std::defer_lock};
    if (hosted_) no_turn.lock();
    // What was posted and not sent is dropped: its callers get
    // PMIX_ERR_NOT_AVAILABLE from the messages' reply channels.
    std::vector<posted> unsent;
    std::vector<std::string> unsent_nspaces;
    {
      std::lock_guard<std::mutex> guard{inbox_mutex_};
      loop_done_ = true;
      unsent.swap(inbox_);
      unsent_nspaces.swap(inbox_nspaces_);
    }
    drop_posted(unsent, unsent_nspaces);
  }
  if (external_ && system_) {
    // No threads: take the system down ourselves, in one last round.
    std::lock_guard<std::recursive_mutex> guard{ctx_->gate->mutex()};
    progress::scope in_library;
    if (io_) io_->stop();
    if (root_) caf::anon_send_exit(root_, caf::exit_reason::user_shutdown);
    manual_->run();
    return;
  }
  // The socket thread shuts the connections down while the actors exit;
  // the destructor joins it.
  if (io_) io_->request_stop();
  if (root_) caf::anon_send_exit(root_, caf::exit_reason::user_shutdown);
}

runtime::~runtime() {
  stop();
  // The socket thread (stopping since stop()) is joined before the actor
  // system goes: it still sends to actors while it shuts connections down.
  if (io_) io_->stop();
  root_ = nullptr;
  system_.reset();  // waits for every actor
  // Epilogs already given to the cleaner still run (their answers go
  // nowhere now); its thread is joined here, before anything it uses goes.
  if (ctx_) ctx_->cleanup_worker.reset();
  {
    std::vector<caf::actor_addr> late;
    {
      std::lock_guard<std::mutex> guard{inbox_mutex_};
      late.swap(late_);
    }
  }
  io_.reset();      // closes the listeners
  for (int fd : listeners_) ::close(fd);
  if (openpmix_listener_ >= 0) ::close(std::exchange(openpmix_listener_, -1));
  remove_files();  // unless stop() did
  // The gate lives on in the host's callbacks: it no longer posts to us.
  if (ctx_) ctx_->gate->on_send({});
}

}  // namespace pmix::server
