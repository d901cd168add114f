// pmixd: the per-node daemon of multi-node pmixrun jobs (docs/multinode.md).
//
//   pmixd (--credentials DIR | --credentials-stdin) [--listen ADDR:PORT] [--name NODE]
//         [--port-file FILE] [--announce] [--lifeline] [--verbose]
//
//   --credentials DIR    the session key (DIR/cert.pem, DIR/key.pem, which only its
//                        owner may read): only peers that hold the same key get
//                        through (TLS, CAF's OpenSSL module, both sides verified)
//   --credentials-stdin  reads that key (certificate, then key, PEM) from stdin
//                        first, into a private directory of its own that it
//                        removes at its end: how pmixrun --hosts gives it
//   --listen     ADDR:PORT, default auto:0. auto: the cluster network's address of
//                this node: $SSH_CONNECTION's server address, else the address
//                NODE resolves to, else the first IPv4 address of an interface that
//                is up and not a loopback (each only if it is this node's and not a
//                loopback). 0.0.0.0 listens on every interface. Port 0: any free port
//   --announce   prints "pmixd-ready ADDR:PORT" on stdout once it listens (ADDR: the
//                listening address, or the first IPv4 address not of a loopback
//                interface when it listens on all): how pmixrun --hosts learns it
//   --lifeline   ends (as on SIGTERM) when its stdin reaches its end: the starter
//                (pmixrun --hosts, through ssh or another agent) holds the other end
//   pmixd credentials DIR       makes a fresh session key in DIR (a new directory,
//                               0700; the files 0600), for daemons started by hand
//                               and pmixrun --daemons ... --credentials DIR
//   pmixd launch ...            the launcher side, which pmixrun runs (launcher.hpp)
//
// Without credentials pmixd does not start: an unauthenticated daemon would
// run any job plan anyone who reaches its port sends it.
//
// A daemon hosts the PMIx server of its node (our libpmix.so.2, the standard
// server API), publishes its daemon actor (daemon.hpp) on a TCP port with
// CAF's middleman through CAF's OpenSSL module (TLS; credentials.hpp), and
// runs the local processes of the jobs launchers send it with pmixrun's
// launcher (tools/pmixrun/jobs.hpp: registration, fork, reaping), output
// forwarder (tools/pmixrun/iof.hpp, whose units go to the launcher) and
// input forwarder (tools/pmixrun/stdin.hpp: every process's stdin is a pipe
// that takes what is pushed to it, from this node or another). It runs until
// SIGINT or SIGTERM.
#include <arpa/inet.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netdb.h>
#include <netinet/in.h>
#include <pmix.h>
#include <pmix_server.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <caf/actor_system.hpp>
#include <caf/actor_system_config.hpp>
#include <caf/io/middleman.hpp>
#include <caf/openssl/publish.hpp>
#include <caf/send.hpp>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "caf_config.hpp"
#include "credentials.hpp"
#include "daemon.hpp"
#include "launcher.hpp"
#include "protocol.hpp"
#include "server_progress.hpp"
#include "sigpipe_calls.hpp"
#include "tls_guard.hpp"
#include "tools/pmixrun/host_thread.hpp"
#include "tools/pmixrun/info.hpp"
#include "tools/pmixrun/iof.hpp"
#include "tools/pmixrun/jobs.hpp"
#include "tools/pmixrun/stdin.hpp"

namespace {

using clock_type = std::chrono::steady_clock;

void usage(std::FILE* out = stderr) {
  std::fprintf(out,
               "usage: pmixd (--credentials DIR | --credentials-stdin) [--listen ADDR:PORT] [--name NODE]\n"
               "             [--port-file FILE] [--announce] [--lifeline] [--verbose]\n"
               "       pmixd credentials DIR\n"
               "       pmixd launch --daemons ADDR:PORT,... --credentials DIR [options] prog [args...]\n"
               "       pmixd launch --hosts HOST,... [options] prog [args...]\n");
}

std::string this_hostname() {
  char buf[HOST_NAME_MAX + 1] = {};
  ::gethostname(buf, sizeof buf - 1);
  return buf;
}

std::string make_session_dir() {
  const char* tmp = std::getenv("TMPDIR");
  std::string templ = std::string(tmp != nullptr && tmp[0] != '\0' ? tmp : "/tmp") + "/pmixd.XXXXXX";
  std::vector<char> buf(templ.begin(), templ.end());
  buf.push_back('\0');
  return ::mkdtemp(buf.data()) != nullptr ? std::string(buf.data()) : std::string();
}

// The first IPv4 address of an interface that is up and not a loopback, or
// empty.
std::string outward_address() {
  ifaddrs* list = nullptr;
  if (::getifaddrs(&list) != 0) return {};
  std::string out;
  for (ifaddrs* i = list; i != nullptr && out.empty(); i = i->ifa_next) {
    if (i->ifa_addr == nullptr || i->ifa_addr->sa_family != AF_INET) continue;
    if ((i->ifa_flags & IFF_UP) == 0 || (i->ifa_flags & IFF_LOOPBACK) != 0) continue;
    char buf[INET_ADDRSTRLEN];
    if (::inet_ntop(AF_INET, &reinterpret_cast<sockaddr_in*>(i->ifa_addr)->sin_addr, buf, sizeof buf) != nullptr)
      out = buf;
  }
  ::freeifaddrs(list);
  return out;
}

// `address` (IPv4, dotted) is one of this node's, and not a loopback.
bool local_outward(const std::string& address) {
  in_addr want;
  if (::inet_pton(AF_INET, address.c_str(), &want) != 1 || (ntohl(want.s_addr) >> 24) == 127) return false;
  ifaddrs* list = nullptr;
  if (::getifaddrs(&list) != 0) return false;
  bool found = false;
  for (ifaddrs* i = list; i != nullptr && !found; i = i->ifa_next) {
    if (i->ifa_addr == nullptr || i->ifa_addr->sa_family != AF_INET || (i->ifa_flags & IFF_LOOPBACK) != 0) continue;
    found = reinterpret_cast<sockaddr_in*>(i->ifa_addr)->sin_addr.s_addr == want.s_addr;
  }
  ::freeifaddrs(list);
  return found;
}

// --listen auto: the address of this node on the cluster's network, where
// that can be told (see the usage above), or empty.
std::string cluster_address(const std::string& name, std::string& how) {
  // ssh sets "client_ip client_port server_ip server_port": the address the
  // starter reached this node on.
  if (const char* ssh = std::getenv("SSH_CONNECTION"); ssh != nullptr) {
    char client[64], server[64];
    unsigned cport = 0, sport = 0;
    if (std::sscanf(ssh, "%63s %u %63s %u", client, &cport, server, &sport) == 4 && local_outward(server)) {
      how = "the address ssh reached";
      return server;
    }
  }
  addrinfo hints{};
  hints.ai_family = AF_INET;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  if (::getaddrinfo(name.c_str(), nullptr, &hints, &found) == 0) {
    std::string out;
    for (addrinfo* a = found; a != nullptr && out.empty(); a = a->ai_next) {
      char buf[INET_ADDRSTRLEN];
      if (::inet_ntop(AF_INET, &reinterpret_cast<sockaddr_in*>(a->ai_addr)->sin_addr, buf, sizeof buf) != nullptr &&
          local_outward(buf))
        out = buf;
    }
    ::freeaddrinfo(found);
    if (!out.empty()) {
      how = "the address of " + name;
      return out;
    }
  }
  how = "the first interface that is up and not a loopback";
  return outward_address();
}

// Runs the server (PMIX_CXX_PROGRESS_FD) on a thread of its own once CAF's
// multiplexer no longer does: while the jobs are finished and the server
// finalized at the end. Owns the descriptor.
class server_pump {
 public:
  explicit server_pump(int fd) : fd_(fd) {}
  ~server_pump() {
    stop();
    if (fd_ >= 0) ::close(fd_);
  }
  void start() {
    if (fd_ < 0 || thread_.joinable()) return;
    running_ = true;
    thread_ = std::thread([this] {
      while (running_) {
        pollfd p{fd_, POLLIN, 0};
        if (::poll(&p, 1, 20) > 0) PMIx_Progress();
      }
    });
  }
  void stop() {
    running_ = false;
    if (thread_.joinable()) thread_.join();
  }

 private:
  int fd_;
  std::atomic<bool> running_{false};
  std::thread thread_;
};

int run_daemon(int argc, char** argv) {
  using namespace pmixrun;
  std::string listen = "auto:0";
  std::string name = this_hostname();
  std::string credentials_dir;
  bool credentials_stdin = false;
  std::string port_file;
  bool verbose = false;
  bool announce = false;
  bool lifeline = false;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--listen" && i + 1 < argc) {
      listen = argv[++i];
    } else if (a == "--name" && i + 1 < argc) {
      name = argv[++i];
    } else if (a == "--port-file" && i + 1 < argc) {
      port_file = argv[++i];
    } else if (a == "--verbose" || a == "-v") {
      verbose = true;
    } else if (a == "--announce") {
      announce = true;
    } else if (a == "--lifeline") {
      lifeline = true;
    } else if (a == "--credentials" && i + 1 < argc) {
      credentials_dir = argv[++i];
    } else if (a == "--credentials-stdin") {
      credentials_stdin = true;
    } else if (a == "--help" || a == "-h") {
      usage(stdout);
      return 0;
    } else {
      usage();
      return 2;
    }
  }
  std::string listen_host;
  uint16_t listen_port = 0;
  if (listen.find(':') == std::string::npos) listen += ":0";
  if (listen.back() == '0' && listen[listen.size() - 2] == ':') {
    listen_host = listen.substr(0, listen.size() - 2);
  } else if (!pmixd::split_address(listen, listen_host, listen_port)) {
    std::fprintf(stderr, "pmixd: --listen takes ADDR:PORT\n");
    return 2;
  }
  if (name.empty() || name.size() > 200 || name.find_first_of(",;:") != std::string::npos) {
    std::fprintf(stderr, "pmixd: the node name must be 1 to 200 characters, without , ; or :\n");
    return 2;
  }
  if (credentials_dir.empty() == !credentials_stdin) {
    std::fprintf(stderr,
                 "pmixd: give the session key: --credentials DIR (made by `pmixd credentials DIR`) or "
                 "--credentials-stdin (as pmixrun --hosts does); pmixd does not listen unauthenticated\n");
    return 2;
  }
  pmixd::credentials creds;
  std::string creds_error;
  if (credentials_stdin ? !pmixd::receive_credentials(0, 30000, creds, creds_error)
                        : !pmixd::check_credentials(credentials_dir, creds, creds_error)) {
    std::fprintf(stderr, "pmixd: refusing to start: the session key %s: %s\n",
                 credentials_stdin ? "from stdin" : credentials_dir.c_str(), creds_error.c_str());
    return 2;
  }
  // As many descriptors as the hard limit allows (the ranks of its node,
  // the other daemons), before the TLS port's bounds read the limit.
  pmixrun::raise_descriptor_limit();
  // The TLS port's bounds, and the key in memory (tls_guard.hpp).
  std::string guard_error;
  if (!pmixd::tls_guard::configure_from_env(guard_error) || !pmixd::configure_peer_timeout(guard_error) ||
      !pmixd::tls_guard::hold(creds, guard_error)) {
    std::fprintf(stderr, "pmixd: refusing to start: %s\n", guard_error.c_str());
    pmixd::remove_credentials(credentials_stdin ? creds : pmixd::credentials{});
    return 2;
  }
  // The directory pmixd made for a key from stdin goes with it.
  struct received_key {
    pmixd::credentials c;
    ~received_key() { pmixd::remove_credentials(c); }
  } received{credentials_stdin ? creds : pmixd::credentials{}};
  if (listen_host == "auto") {
    std::string how;
    listen_host = cluster_address(name, how);
    if (listen_host.empty()) {
      std::fprintf(stderr, "pmixd: --listen auto: this node has no IPv4 address outside loopback; give --listen\n");
      return 2;
    }
    if (verbose)
      std::fprintf(stderr, "pmixd %s: listening on %s (%s)\n", name.c_str(), listen_host.c_str(), how.c_str());
  }

  // Signals as pmixrun takes them: synchronously, from a signalfd, blocked
  // in every thread (CAF's and the server's inherit the mask).
  const int sigfd = take_host_signals("pmixd");
  if (sigfd < 0) return 1;
  // With SIGPIPE blocked in every thread, CAF's OpenSSL module's SIGPIPE
  // guard costs no system call (sigpipe_calls.hpp).
  if (!pmixd::sigpipe_calls::take_over() && verbose)
    std::fprintf(stderr, "pmixd %s: CAF's SIGPIPE guard makes its system calls (a thread started early)\n",
                 name.c_str());

  // The PMIx server of this node, named after it.
  pmix_server_module_t module = pmixd::daemon_module();
  info_array dirs;
  dirs.add_string(PMIX_SERVER_NSPACE, "pmixd." + name);
  dirs.add_bool(PMIX_SERVER_TOOL_SUPPORT, true);
  dirs.add_bool(PMIX_IOF_LOCAL_OUTPUT, false);
  // PMIXD_SERVER_ON_MULTIPLEXER=1: the server's work runs on CAF's
  // multiplexer thread (server_progress.hpp), not on the library's own loop
  // thread. Fewer wake-ups per fence, but on a machine whose simulated nodes
  // share few CPUs it was slower (docs/multinode.md): not the default.
  int progress_fd = -1;
  const char* on_multiplexer = std::getenv("PMIXD_SERVER_ON_MULTIPLEXER");
  if (on_multiplexer != nullptr && std::string{on_multiplexer} == "1")
    dirs.add(PMIX_CXX_PROGRESS_FD, &progress_fd, PMIX_POINTER);
  auto rc = PMIx_server_init(&module, dirs.data(), dirs.size());
  if (rc != PMIX_SUCCESS) {
    std::fprintf(stderr, "pmixd: PMIx_server_init failed: %s\n", PMIx_Error_string(rc));
    return 1;
  }
  const std::string session_dir = make_session_dir();

  auto cfg = std::make_unique<caf::actor_system_config>();
  pmixd::configure(*cfg);
  pmixd::use_credentials(*cfg, creds);
  auto sys = std::make_unique<caf::actor_system>(*cfg);
  if (progress_fd >= 0 && !pmixd::drive_server(*sys, ::fcntl(progress_fd, F_DUPFD_CLOEXEC, 3))) {
    std::fprintf(stderr, "pmixd: CAF's multiplexer cannot run the PMIx server\n");
    sys.reset();
    PMIx_server_finalize();
    ::close(progress_fd);
    return 1;
  }
  if (progress_fd >= 0 && verbose)
    std::fprintf(stderr, "pmixd %s: the PMIx server runs on CAF's multiplexer thread\n", name.c_str());
  // After the actor system (its multiplexer) is gone: a thread of ours runs
  // the server until it is finalized.
  server_pump pump(progress_fd);
  caf::actor daemon;

  launcher::settings settings;
  settings.verbose = verbose;
  settings.cpus = static_cast<uint32_t>(std::max(1L, ::sysconf(_SC_NPROCESSORS_ONLN)));
  settings.universe_size = settings.cpus;
  settings.session_dir = session_dir;
  launcher* launched = nullptr;
  output_forwarder::settings iof_settings;
  iof_settings.write = false;
  iof_settings.closed = [&launched](const pmix_proc_t& p) { launched->output_closed(p); };
  iof_settings.sink = [&daemon](const pmix_proc_t& p, int channel, const std::string& unit) {
    caf::anon_send(daemon, pmixd::outputl_atom::value, std::string(p.nspace), static_cast<uint32_t>(p.rank),
                   static_cast<int32_t>(channel), unit);
  };
  output_forwarder iof(iof_settings);
  settings.output = [&iof](const job& j, pmix_rank_t rank, int out_fd, int err_fd) {
    iof.add(make_proc(j.nspace, rank), j.index, out_fd, err_fd);
  };
  // Input: every process's stdin is a pipe of its own, fed only by pushes
  // (PMIx_IOF_push, and pmixrun's --stdin through its launcher): pmixd's
  // own stdin is never read (with --lifeline it is the starter's pipe).
  stdin_forwarder input(stdin_forwarder::settings{});
  settings.input = [&input](const job& j, pmix_rank_t rank, int in_fd) {
    input.add(make_proc(j.nspace, rank), in_fd, false);
  };
  settings.proc_ended = [&daemon, &launched, &input](const pmix_proc_t& p) {
    input.process_ended(p);
    job* j = launched->find(p.nspace);
    const int status = j != nullptr && p.rank < j->procs.size() ? j->procs[p.rank].status : 0;
    caf::anon_send(daemon, pmixd::exitedl_atom::value, std::string(p.nspace), static_cast<uint32_t>(p.rank),
                   static_cast<int32_t>(status));
  };
  settings.job_ended = [&daemon](const std::string& nspace) {
    caf::anon_send(daemon, pmixd::jobdonel_atom::value, nspace);
  };
  launcher jobs(settings);
  launched = &jobs;

  pmixd::daemon_config dc;
  dc.name = name;
  dc.verbose = verbose;
  dc.hooks.start = [&jobs](const pmixd::job_plan& plan, std::function<void(pmix_status_t, std::string)> done) {
    post([&jobs, plan, done] {
      jobs.rearm();
      job_spec spec;
      for (const auto& a : plan.apps) {
        app_spec app;
        app.cmd = a.argv.empty() ? std::string() : a.argv.front();
        app.argv = a.argv;
        app.env = a.env;
        app.cwd = a.cwd;
        app.nprocs = a.nprocs;
        spec.apps.push_back(std::move(app));
      }
      spec.env = plan.env;
      spec.where.nodes = plan.nodes;
      spec.where.node_of = plan.node_of;
      spec.where.this_node = plan.this_node;
      if (!plan.parent.empty()) {
        const auto colon = plan.parent.rfind(':');
        spec.parent = make_proc(plan.parent.substr(0, colon),
                                static_cast<pmix_rank_t>(std::strtoul(plan.parent.c_str() + colon + 1, nullptr, 10)));
      }
      pmix_status_t rc = PMIX_SUCCESS;
      std::string error;
      job* j = jobs.start(plan.nspace, std::move(spec), !plan.parent.empty(), rc, error);
      if (j == nullptr && rc == PMIX_SUCCESS) rc = PMIX_ERR_JOB_FAILED_TO_LAUNCH;
      done(rc, error);
    });
  };
  dc.hooks.terminate = [&jobs](const std::string& why) {
    post([&jobs, why] { jobs.terminate(why); });
  };
  dc.hooks.push_stdin = [&jobs, &input](std::vector<pmix_proc_t> targets, std::string bytes, bool end,
                                        std::function<void(pmix_status_t, uint32_t)> done) {
    post([&jobs, &input, targets = std::move(targets), bytes = std::move(bytes), end, done = std::move(done)] {
      // Each target once, as one-node pmixrun resolves them.
      std::vector<pmix_proc_t> to;
      auto add = [&to](const pmix_proc_t& p) {
        for (const auto& q : to)
          if (same_proc(p, q)) return;
        to.push_back(p);
      };
      pmix_status_t rc = PMIX_SUCCESS;
      for (const auto& p : targets) {
        const job* j = jobs.find(std::string(p.nspace, strnlen(p.nspace, PMIX_MAX_NSLEN)));
        if (j == nullptr || j->finished || j->launch_failed ||
            (p.rank != PMIX_RANK_WILDCARD && (p.rank >= j->size || !j->spec.where.local(p.rank)))) {
          rc = PMIX_ERR_NOT_FOUND;
          break;
        }
        if (p.rank != PMIX_RANK_WILDCARD) {
          if (!input.open(p)) rc = PMIX_ERR_IOF_COMPLETE;
          add(p);
          continue;
        }
        for (const uint32_t r : j->local_ranks) {
          const pmix_proc_t one = make_proc(j->nspace, r);
          if (input.open(one)) add(one);
        }
      }
      if (rc != PMIX_SUCCESS) return done(rc, 0);
      if (to.empty()) return done(PMIX_SUCCESS, 0);
      const auto count = static_cast<uint32_t>(to.size());
      input.push(to, bytes, end, [done, count](pmix_status_t st) { done(st, count); });
    });
  };
  daemon = pmixd::spawn_daemon(*sys, dc);
  auto port =
      caf::openssl::publish(daemon, listen_port, listen_host == "0.0.0.0" ? nullptr : listen_host.c_str(), true);
  if (!port) {
    std::fprintf(stderr, "pmixd: cannot listen on %s: %s\n", listen.c_str(), sys->render(port.error()).c_str());
    caf::anon_send_exit(daemon, caf::exit_reason::user_shutdown);
    daemon = caf::actor{};
    pmixd::undrive_server(*sys);
    sys.reset();
    pump.start();
    pump.stop();
    PMIx_server_finalize();
    return 1;
  }
  pmixd::set_module_target(daemon);
  std::printf("pmixd: %s listening on %s:%u\n", name.c_str(), listen_host.c_str(), static_cast<unsigned>(*port));
  std::fflush(stdout);
  if (announce) {
    const std::string host = listen_host == "0.0.0.0" || listen_host.empty() ? outward_address() : listen_host;
    std::printf("pmixd-ready %s:%u\n", host.empty() ? "127.0.0.1" : host.c_str(), static_cast<unsigned>(*port));
    std::fflush(stdout);
  }
  if (!port_file.empty()) {
    const std::string tmp = port_file + ".tmp";
    if (FILE* f = std::fopen(tmp.c_str(), "w")) {
      std::fprintf(f, "%u\n", static_cast<unsigned>(*port));
      std::fclose(f);
      std::rename(tmp.c_str(), port_file.c_str());
    }
  }

  // The main loop: tasks of the actor, reaping, output, input; until a signal ends
  // the daemon and every local process has ended (SIGKILL 5 s after SIGTERM).
  int interrupts = 0;
  std::vector<pollfd> fds;
  for (;;) {
    run_posted();
    jobs.reap();
    auto now = clock_type::now();
    if (jobs.terminating() && jobs.live_processes() == 0 && iof.open()) iof.close_all();
    if (interrupts > 0 && !jobs.active()) break;
    jobs.tick(now, interrupts > 1);
    pmixd::expire_stores();
    pmixd::tls_guard::sweep();
    timespec tick{0, 200 * 1000 * 1000};
    fds.clear();
    fds.push_back(pollfd{sigfd, POLLIN, 0});
    fds.push_back(pollfd{lifeline ? 0 : -1, POLLIN, 0});
    iof.poll_set(fds);
    const std::size_t iof_fds = fds.size() - 2;
    input.poll_set(fds);
    if (::ppoll(fds.data(), fds.size(), &tick, nullptr) <= 0) continue;
    if (fds[0].revents != 0) {
      signalfd_siginfo si;
      while (::read(sigfd, &si, sizeof si) == static_cast<ssize_t>(sizeof si)) {
        if (si.ssi_signo != SIGINT && si.ssi_signo != SIGTERM) continue;
        if (++interrupts == 1) {
          if (verbose) std::fprintf(stderr, "pmixd %s: stopping\n", name.c_str());
          if (jobs.active()) jobs.terminate("pmixd is stopping");
        }
      }
    }
    if (fds[1].revents != 0) {
      char buf[256];
      const ssize_t n = ::read(0, buf, sizeof buf);
      if (n == 0 || (n < 0 && errno != EINTR && errno != EAGAIN)) {
        lifeline = false;  // watched no more
        if (++interrupts == 1) {
          if (verbose) std::fprintf(stderr, "pmixd %s: its starter is gone: stopping\n", name.c_str());
          if (jobs.active()) jobs.terminate("pmixd's starter is gone");
        }
      }
    }
    iof.handle(fds.data() + 2, iof_fds);
    input.handle(fds.data() + 2 + iof_fds, fds.size() - 2 - iof_fds);
  }
  // Pushes still waiting for a pipe fail while the actor can still answer them.
  input.close_all(PMIX_ERR_IOF_FAILURE);
  // Up-calls from now on are refused; the actor goes (the calls it still
  // holds are answered, PMIX_ERR_UNREACH), then the server.
  pmixd::clear_module_target();
  caf::anon_send_exit(daemon, caf::exit_reason::user_shutdown);
  daemon = caf::actor{};
  pmixd::undrive_server(*sys);
  sys.reset();
  pump.start();
  run_posted();
  pmixd::drop_stores();
  jobs.finish_all();
  stop_posting();
  pump.stop();
  PMIx_server_finalize();
  ::close(sigfd);
  if (!session_dir.empty()) ::rmdir(session_dir.c_str());
  return 0;
}

// pmixd credentials DIR: a fresh session key in a new private directory.
int make_credentials_dir(int argc, char** argv) {
  if (argc != 3) {
    usage();
    return 2;
  }
  const std::string dir = argv[2];
  if (::mkdir(dir.c_str(), 0700) != 0) {
    std::fprintf(stderr, "pmixd credentials: cannot make %s (it must not exist): %s\n", dir.c_str(),
                 std::strerror(errno));
    return 1;
  }
  ::chmod(dir.c_str(), 0700);  // whatever the umask
  pmixd::credentials c;
  std::string error;
  if (!pmixd::make_credentials(dir, c, error)) {
    std::fprintf(stderr, "pmixd credentials: %s\n", error.c_str());
    pmixd::remove_credentials(pmixd::credentials{dir, dir + "/cert.pem", dir + "/key.pem"});
    return 1;
  }
  std::printf("pmixd: a session key in %s (cert.pem, key.pem): give it to every pmixd (--credentials %s) and to "
              "pmixrun --daemons (--credentials %s)\n",
              dir.c_str(), dir.c_str(), dir.c_str());
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc > 1 && std::strcmp(argv[1], "credentials") == 0) return make_credentials_dir(argc, argv);
  if (argc > 1 && std::strcmp(argv[1], "launch") == 0) {
    caf::actor_system_config cfg;
    pmixd::configure(cfg);
    return pmixd::run_launcher(cfg, argc - 1, argv + 1);
  }
  return run_daemon(argc, argv);
}
