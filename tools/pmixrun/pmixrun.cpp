// pmixrun: the reference launcher. A one-node PMIx host written only against
// the public server API (pmix_server.h), the way a resource manager uses it:
//
//   pmixrun [-n N] [--nspace NAME] [--timeout SECONDS] [--stdin RANK|all|none] [--tag-output]
//           [--iof-server-output] [--system-server] [--quiet] [--verbose] prog [args...]
//
// It starts a PMIx server, registers one namespace with realistic job data
// (jobs.hpp), registers and forks N clients with the environment
// PMIx_server_setup_fork gives, and hosts what the clients ask for
// (upcalls.hpp): publish / lookup / unpublish, spawn of further jobs,
// connect / disconnect, log, abort, groups, allocation requests, and a tool's
// or process's pull of the output and push of input. Every child's stdin is a
// pipe (stdin.hpp) fed with pmixrun's own stdin (rank 0 of the first job, or
// as --stdin says) and with what PMIx_IOF_push sends it; its stdout and
// stderr are pipes that pmixrun reads and forwards (iof.hpp):
// to its own stdout and stderr (--tag-output: each line prefixed as
// `mpirun --tag-output` does) and to the server (PMIx_server_IOF_deliver),
// which with --iof-server-output is the one that writes them.
//
// It waits for every process of every job (spawned ones too, within the
// same --timeout) and for the end of their output, and forwards their
// status: non-zero if any process fails, is killed or aborts (then every job
// is terminated). It ends with a one-line summary.
//
// Structure: this file (options, the main loop), host_thread (up-calls post
// tasks to the main thread), upcalls (the server module), jobs (registration,
// launch, reaping), iof (output forwarding), stdin (input forwarding),
// datastore (published data), info (PMIx value helpers).
#include <fcntl.h>
#include <pmix.h>
#include <pmix_server.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "datastore.hpp"
#include "faults.hpp"
#include "host_thread.hpp"
#include "info.hpp"
#include "iof.hpp"
#include "jobs.hpp"
#include "stdin.hpp"
#include "upcalls.hpp"

namespace {

using clock_type = std::chrono::steady_clock;

void usage(std::FILE* out = stderr) {
  std::fprintf(out,
               "usage: pmixrun [-n|-np N] [--nspace NAME] [--timeout SECONDS] [--stdin RANK|all|none]\n"
               "               [--tag-output] [--iof-server-output] [--system-server] [-q|--quiet]\n"
               "               [-v|--verbose] [--faults PLAN [--seed S] [--shrink]] prog [args...]\n"
               "       pmixrun --daemons ADDR:PORT,... --credentials DIR [-n N] [--map-by slot|node]\n"
               "               [--fence tree|doubling] [--nspace NAME] [--env NAME=VALUE]... [--timeout SECONDS]\n"
               "               [--stdin RANK|all|none] [--quiet] [--verbose] prog [args...]\n"
               "       pmixrun --hosts HOST,... [--launch-agent 'CMD {host}'] [--pmixd PATH] [the options of\n"
               "               --daemons] prog [args...]   (agent default: $PMIXRUN_RSH, else ssh; a fresh\n"
               "               session key unless --credentials DIR)\n");
}

// A job across nodes (--daemons, --hosts) is pmixd's launcher's: pmixrun runs
// `pmixd launch` with the same arguments (docs/multinode.md). pmixd is
// $PMIXD, else next to pmixrun, else ../pmixd/pmixd from pmixrun's folder
// (the build tree), else found in PATH. Returns only if the exec failed.
int run_across_nodes(int argc, char** argv) {
  std::vector<std::string> candidates;
  if (const char* env = std::getenv("PMIXD"); env != nullptr && *env != '\0') candidates.emplace_back(env);
  char self[PATH_MAX];
  const ssize_t len = ::readlink("/proc/self/exe", self, sizeof self - 1);
  if (len > 0) {
    self[len] = '\0';
    std::string dir(self);
    dir = dir.substr(0, dir.rfind('/'));
    candidates.push_back(dir + "/pmixd");
    candidates.push_back(dir + "/../pmixd/pmixd");
  }
  std::vector<char*> args;
  args.push_back(const_cast<char*>("pmixd"));
  args.push_back(const_cast<char*>("launch"));
  for (int k = 1; k < argc; ++k) args.push_back(argv[k]);
  args.push_back(nullptr);
  for (const auto& c : candidates)
    if (::access(c.c_str(), X_OK) == 0) {
      ::execv(c.c_str(), args.data());
      std::fprintf(stderr, "pmixrun: cannot run %s: %s\n", c.c_str(), std::strerror(errno));
      return 127;
    }
  ::execvp("pmixd", args.data());
  std::fprintf(stderr, "pmixrun: --daemons needs pmixd (set PMIXD, or put it next to pmixrun or in PATH): %s\n",
               std::strerror(errno));
  return 127;
}

uint32_t cpu_count() {
  cpu_set_t set;
  if (::sched_getaffinity(0, sizeof set, &set) == 0) {
    const int n = CPU_COUNT(&set);
    if (n > 0) return static_cast<uint32_t>(n);
  }
  const long n = ::sysconf(_SC_NPROCESSORS_ONLN);
  return n > 0 ? static_cast<uint32_t>(n) : 1;
}

// A private directory for the jobs' session directories, or empty.
std::string make_session_dir() {
  const char* tmp = std::getenv("TMPDIR");
  std::string templ =
      std::string(tmp != nullptr && tmp[0] != '\0' ? tmp : "/tmp") + "/pmixrun.XXXXXX";
  std::vector<char> buf(templ.begin(), templ.end());
  buf.push_back('\0');
  return ::mkdtemp(buf.data()) != nullptr ? std::string(buf.data()) : std::string();
}

// Descriptors 0, 1 and 2 open (on /dev/null if they were closed), so that
// no pipe of pmixrun's takes one of their numbers.
void keep_standard_fds_open() {
  for (int fd = 0; fd <= 2; ++fd) {
    if (::fcntl(fd, F_GETFD) >= 0 || errno != EBADF) continue;
    const int null = ::open("/dev/null", fd == 0 ? O_RDONLY : O_WRONLY);
    if (null >= 0 && null != fd) {
      ::dup2(null, fd);
      ::close(null);
    }
  }
}

// The lines of a text (the fault plane's reports).
std::vector<std::string> split_lines(const std::string& text) {
  std::vector<std::string> out;
  std::size_t b = 0;
  while (b < text.size()) {
    auto e = text.find('\n', b);
    if (e == std::string::npos) e = text.size();
    out.push_back(text.substr(b, e - b));
    b = e + 1;
  }
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace pmixrun;
  if (argc == 2 && std::strcmp(argv[1], "--probe-client") == 0) return probe_client();
  for (int k = 1; k < argc && argv[k][0] == '-' && std::strcmp(argv[k], "--") != 0; ++k) {
    const std::string a = argv[k];
    if (a == "--help" || a == "-h") {
      usage(stdout);
      return 0;
    }
    if (a == "--daemons" || a == "--hosts") return run_across_nodes(argc, argv);
    if (a == "-n" || a == "-np" || a == "--nspace" || a == "--timeout" || a == "--stdin" || a == "--map-by" ||
        a == "--fence" || a == "--env" || a == "--launch-agent" || a == "--pmixd" || a == "--credentials" ||
        a == "--faults" || a == "--seed")
      ++k;
  }
  uint32_t n = 1;
  // --faults: our server's fault plane (docs/fault-injection.md).
  std::string faults_plan;
  std::string faults_seed = "0";
  bool shrink_plan = false;
  std::vector<std::string> plain_args{argv[0]};  // the command without --faults/--seed/--shrink
  std::string nspace = "pmixrun." + std::to_string(getpid());
  double timeout = 0;
  bool quiet = false;
  bool verbose = false;
  bool tag_output = false;
  bool server_output = false;
  bool system_server = false;
  // Which processes of the first job read pmixrun's stdin: one rank (0, as
  // mpirun), every rank (-1) or none (-2).
  long stdin_rank = 0;
  int i = 1;
  for (; i < argc && argv[i][0] == '-'; ++i) {
    const std::string a = argv[i];
    if ((a == "-n" || a == "-np") && i + 1 < argc) {
      const long v = std::atol(argv[++i]);
      if (v < 1 || v > 100000) {
        std::fprintf(stderr, "pmixrun: -n must be between 1 and 100000\n");
        return 2;
      }
      n = static_cast<uint32_t>(v);
    } else if (a == "--nspace" && i + 1 < argc) {
      nspace = argv[++i];
      if (nspace.empty() || nspace.size() > PMIX_MAX_NSLEN - 8) {
        std::fprintf(stderr, "pmixrun: --nspace must have 1 to %d characters\n",
                     PMIX_MAX_NSLEN - 8);
        return 2;
      }
    } else if (a == "--stdin" && i + 1 < argc) {
      const std::string v = argv[++i];
      char* end = nullptr;
      stdin_rank = v == "all" ? -1 : v == "none" ? -2 : std::strtol(v.c_str(), &end, 10);
      if (stdin_rank >= 0 && (v.empty() || *end != '\0')) {
        std::fprintf(stderr, "pmixrun: --stdin takes a rank, all or none\n");
        return 2;
      }
    } else if (a == "--timeout" && i + 1 < argc) {
      timeout = std::atof(argv[++i]);
    } else if (a == "--faults" && i + 1 < argc) {
      faults_plan = argv[++i];
      continue;
    } else if (a == "--seed" && i + 1 < argc) {
      faults_seed = argv[++i];
      if (faults_seed.empty() || faults_seed.find_first_not_of("0123456789") != std::string::npos) {
        std::fprintf(stderr, "pmixrun: --seed takes an unsigned number\n");
        return 2;
      }
      continue;
    } else if (a == "--shrink") {
      shrink_plan = true;
      continue;
    } else if (a == "--quiet" || a == "-q") {
      quiet = true;
    } else if (a == "--verbose" || a == "-v") {
      verbose = true;
    } else if (a == "--tag-output") {
      tag_output = true;
    } else if (a == "--iof-server-output") {
      server_output = true;
    } else if (a == "--system-server") {
      system_server = true;
    } else if (a == "--") {
      ++i;
      break;
    } else {
      usage();
      return 2;
    }
  }
  if (i >= argc) {
    usage();
    return 2;
  }
  for (int k = 1; k < argc; ++k) {
    const std::string a = argv[k];
    if (k < i && (a == "--faults" || a == "--seed")) {
      ++k;
      continue;
    }
    if (k < i && (a == "--shrink" || a == "--quiet" || a == "-q")) continue;
    plain_args.push_back(a);
  }
  const bool faulted = !faults_plan.empty();
  // Under faults every process runs to its own end, within a bound.
  if (faulted && timeout <= 0) timeout = 60;
  if (stdin_rank >= static_cast<long>(n)) {
    std::fprintf(stderr, "pmixrun: --stdin %ld: the job has ranks 0 to %u\n", stdin_rank, n - 1);
    return 2;
  }
  if (tag_output && server_output) {
    std::fprintf(stderr,
                 "pmixrun: --tag-output and --iof-server-output exclude each other (with "
                 "--iof-server-output the server writes the output as it is delivered)\n");
    return 2;
  }
  const auto start = clock_type::now();
  keep_standard_fds_open();
  if (const auto fds = raise_descriptor_limit(); fds < descriptors_for(n))
    std::fprintf(stderr,
                 "pmixrun: warning: %u processes need about %lu descriptors here, and this process may "
                 "have %lu (RLIMIT_NOFILE's hard limit: ulimit -Hn): the job may not start whole\n",
                 n, descriptors_for(n), fds);
  // SIGCHLD, SIGINT and SIGTERM are taken synchronously by the main loop
  // (through a signalfd it polls with the output pipes), and SIGUSR1 wakes
  // it for posted tasks. SIGPIPE is blocked too: a write to a closed pipe
  // gives EPIPE instead. Blocked before any thread starts, so every thread
  // inherits the mask; the children get an empty mask back.
  const int sigfd = take_host_signals("pmixrun");
  if (sigfd < 0) return 1;

  const std::string session_dir = make_session_dir();
  const uint32_t cpus = cpu_count();
  datastore store;
  launcher::settings settings;
  settings.verbose = verbose;
  settings.keep_going = faulted;
  settings.cpus = cpus;
  settings.universe_size = std::max(cpus, n);
  settings.session_dir = session_dir;
  // Input forwarding: pmixrun's stdin to the --stdin processes of the first
  // job, and pushed input to any process.
  stdin_forwarder input(stdin_forwarder::settings{});
  settings.input = [&input, stdin_rank](const job& j, pmix_rank_t rank, int in_fd) {
    const bool first_job = !j.spec.parent.has_value();
    input.add(make_proc(j.nspace, rank), in_fd,
              first_job && (stdin_rank == -1 || stdin_rank == static_cast<long>(rank)));
  };
  settings.proc_ended = [&store, &input](const pmix_proc_t& p) {
    store.proc_ended(p);
    input.process_ended(p);
  };
  // Under faults: the invariants once each job's processes have ended.
  std::string faults_report;
  bool invariants_held = true;
  settings.job_ended = [&store, faulted, &faults_report, &invariants_held](const std::string& ns) {
    store.job_ended(ns);
    groups_job_ended(ns);
    if (!faulted) return;
    std::string report;
    if (!faults_check(ns, 2000, report)) invariants_held = false;
    // The plane's plan and trace are printed once, at the end.
    for (const auto& line : split_lines(report)) {
      if (line.rfind("violation ", 0) == 0) faults_report += "violation at the end of " + ns + ": " + line.substr(10) + "\n";
    }
  };
  // Output forwarding: the forwarder tells the launcher when a process's
  // output has ended (a job ends after its output).
  launcher* launched = nullptr;
  output_forwarder::settings iof_settings;
  iof_settings.tag = tag_output;
  iof_settings.write = !server_output;
  iof_settings.closed = [&launched](const pmix_proc_t& p) { launched->output_closed(p); };
  output_forwarder iof(iof_settings);
  settings.output = [&iof](const job& j, pmix_rank_t rank, int out_fd, int err_fd) {
    iof.add(make_proc(j.nspace, rank), j.index, out_fd, err_fd);
  };
  launcher jobs(settings);
  launched = &jobs;
  host_context ctx;
  ctx.jobs = &jobs;
  ctx.store = &store;
  ctx.known_nspace = [&jobs](const std::string& ns) { return jobs.find(ns) != nullptr; };
  ctx.input = &input;
  ctx.cpus = cpus;
  if (timeout > 0)
    ctx.deadline = start + std::chrono::duration_cast<clock_type::duration>(
                               std::chrono::duration<double>(timeout));
  ctx.verbose = verbose;

  pmix_server_module_t module = host_module(ctx);
  info_array dirs;
  // Tools (pps, pquery, pevent: docs/tools.md) find pmixrun by its PID or
  // this namespace, which the PID keeps apart from another pmixrun's, and
  // with --system-server as the node's system server (one per node).
  dirs.add_string(PMIX_SERVER_NSPACE, "pmixrun-server." + std::to_string(::getpid()));
  dirs.add_bool(PMIX_SERVER_TOOL_SUPPORT, true);
  if (system_server) dirs.add_bool(PMIX_SERVER_SYSTEM_SUPPORT, true);
  // Always said: whether the server writes the output pmixrun delivers.
  dirs.add_bool(PMIX_IOF_LOCAL_OUTPUT, server_output);
  // OpenPMIx 4.2 sets up the server's own output channels only for a
  // gateway server (as PRRTE's master is); without them a local write
  // crashes it.
  if (server_output) dirs.add_bool(PMIX_SERVER_GATEWAY, true);
  if (faulted) {
    dirs.add_string("pmix.cxx.faults", faults_plan);
    dirs.add_u64("pmix.cxx.faults.seed", std::strtoull(faults_seed.c_str(), nullptr, 10));
  }
  auto rc = PMIx_server_init(&module, dirs.data(), dirs.size());
  if (rc != PMIX_SUCCESS) {
    std::fprintf(stderr, "pmixrun: PMIx_server_init failed: %s\n", PMIx_Error_string(rc));
    if (!session_dir.empty()) ::rmdir(session_dir.c_str());
    return 1;
  }
  if (faulted && !faults_available()) {
    std::fprintf(stderr, "pmixrun: --faults needs the PMIx-CXX server library\n");
    PMIx_server_finalize();
    if (!session_dir.empty()) ::rmdir(session_dir.c_str());
    return 2;
  }
  rc = register_attributes();
  if (rc != PMIX_SUCCESS)
    std::fprintf(stderr, "pmixrun: PMIx_Register_attributes failed: %s\n", PMIx_Error_string(rc));

  job_spec spec;
  app_spec app;
  app.cmd = argv[i];
  for (int k = i; k < argc; ++k) app.argv.emplace_back(argv[k]);
  app.nprocs = n;
  spec.apps.push_back(std::move(app));
  std::string error;
  job* first = jobs.start(nspace, std::move(spec), false, rc, error);
  if (first == nullptr) {
    std::fprintf(stderr, "pmixrun: %s\n", error.c_str());
    stop_posting();
    PMIx_server_finalize();
    if (!session_dir.empty()) ::rmdir(session_dir.c_str());
    return rc == PMIX_ERR_JOB_FAILED_TO_LAUNCH ? 127 : 1;
  }
  if (rc != PMIX_SUCCESS) std::fprintf(stderr, "pmixrun: %s\n", error.c_str());

  // The main loop: run the up-calls' tasks, reap children, expire held
  // lookups, enforce the timeout; sleep in ppoll on the signalfd and the
  // output pipes until a child changes state or writes, a task is posted, a
  // signal arrives, pmixrun's stdout or stderr takes more, or a deadline
  // comes.
  int interrupts = 0;
  bool timed_out = false;
  std::optional<clock_type::time_point> delivery_deadline;
  std::vector<pollfd> fds;
  auto run_jobs = [&] {
  for (;;) {
    run_posted();
    jobs.reap();
    auto now = clock_type::now();
    store.expire(now);
    // Ending (a failure, an abort, an interrupt, the timeout) and every
    // process is reaped: output pipes that something else still holds open
    // (a process's own children) are not waited for.
    if (jobs.terminating() && jobs.live_processes() == 0 && iof.open()) iof.close_all();
    if (!jobs.active()) {
      // A task posted just now may still start a job (a spawn).
      if (run_posted() > 0 && jobs.active()) continue;
      // Output the library has not called back for (with
      // --iof-server-output: may not have written yet): wait, 10 s at most.
      if (iof.in_flight() == 0) break;
      if (!delivery_deadline) delivery_deadline = now + std::chrono::seconds(10);
      if (now >= *delivery_deadline) {
        std::fprintf(stderr, "pmixrun: the PMIx server did not complete %zu output deliveries\n",
                     iof.in_flight());
        break;
      }
    }
    const double elapsed = std::chrono::duration<double>(now - start).count();
    if (timeout > 0 && elapsed > timeout && !timed_out) {
      timed_out = true;
      jobs.terminate("timeout");
    }
    jobs.tick(now, interrupts > 1);
    auto wake = now + std::chrono::seconds(1);
    if (auto d = store.next_deadline(); d && *d < wake) wake = *d;
    if (auto k = jobs.kill_time(); k && *k < wake) wake = *k;
    if (delivery_deadline && *delivery_deadline < wake) wake = *delivery_deadline;
    if (timeout > 0 && !timed_out) {
      const auto limit = start + std::chrono::duration_cast<clock_type::duration>(
                                     std::chrono::duration<double>(timeout));
      if (limit < wake) wake = limit;
    }
    const auto ns_left = std::chrono::duration_cast<std::chrono::nanoseconds>(wake - now).count();
    timespec tick{0, 0};
    if (ns_left > 0) {
      tick.tv_sec = static_cast<time_t>(ns_left / 1000000000);
      tick.tv_nsec = static_cast<long>(ns_left % 1000000000) + 1000000;  // +1 ms: past the deadline
      if (tick.tv_nsec >= 1000000000) {
        tick.tv_sec += 1;
        tick.tv_nsec -= 1000000000;
      }
    }
    fds.clear();
    fds.push_back(pollfd{sigfd, POLLIN, 0});
    iof.poll_set(fds);
    const std::size_t iof_fds = fds.size() - 1;
    input.poll_set(fds);
    if (::ppoll(fds.data(), fds.size(), &tick, nullptr) <= 0) continue;
    if (fds[0].revents != 0) {
      signalfd_siginfo si;
      while (::read(sigfd, &si, sizeof si) == static_cast<ssize_t>(sizeof si)) {
        if (si.ssi_signo != SIGINT && si.ssi_signo != SIGTERM) continue;
        if (++interrupts == 1) jobs.terminate("interrupted");
      }
    }
    iof.handle(fds.data() + 1, iof_fds);
    input.handle(fds.data() + 1 + iof_fds, fds.size() - 1 - iof_fds);
  }
  };
  run_jobs();
  bool probe_ok = true;
  if (faulted && !jobs.terminating()) {
    // The server must still serve a new client: one probe process, with
    // the plane disarmed.
    faults_disarm();
    job_spec probe;
    app_spec app;
    app.cmd = "/proc/self/exe";
    app.argv = {"pmixrun", "--probe-client"};
    app.nprocs = 1;
    probe.apps.push_back(std::move(app));
    job* probe_job = jobs.start(nspace + ".probe", std::move(probe), false, rc, error);
    if (probe_job == nullptr) {
      std::fprintf(stderr, "pmixrun: faults: the probe client did not start: %s\n", error.c_str());
      probe_ok = false;
    } else {
      delivery_deadline.reset();
      run_jobs();
      probe_ok = probe_job->procs.size() == 1 && probe_job->procs[0].succeeded();
    }
  }
  // What pmixrun's stdout or stderr has not taken yet, before the summary.
  iof.flush();
  if (verbose)
    std::fprintf(stderr,
                 "pmixrun: output: %zu bytes read, %zu bytes delivered to the server in %zu "
                 "calls, %zu bytes written by pmixrun\n",
                 iof.bytes_read(), iof.bytes_delivered(), iof.deliveries(), iof.bytes_written());
  if (verbose)
    std::fprintf(stderr,
                 "pmixrun: input: %zu bytes read from stdin, %zu bytes pushed, %zu bytes written "
                 "to the processes\n",
                 input.bytes_read(), input.bytes_pushed(), input.bytes_written());

  // Every process has ended: refuse further spawns, answer what is still
  // held, deregister, finish.
  jobs.terminate("");
  run_posted();
  store.cancel_all(PMIX_ERR_NOT_FOUND);
  input.close_all(PMIX_ERR_IOF_FAILURE);
  jobs.finish_all();
  std::vector<std::string> fault_trace;
  if (faulted) {
    std::string report;
    if (!faults_check("", 2000, report)) invariants_held = false;
    if (timed_out) {
      invariants_held = false;
      faults_report += "violation the job did not end within the timeout: some operation was never answered\n";
    }
    if (!probe_ok) {
      invariants_held = false;
      faults_report += "violation a new client was not served after the faults\n";
    }
    std::string head;
    for (const auto& line : split_lines(report)) {
      if (line.rfind("injected ", 0) == 0) fault_trace.push_back(line.substr(9));
      if (line.rfind("violation ", 0) == 0) faults_report += line + "\n";
      else if (!line.empty()) head += line + "\n";
    }
    faults_report.insert(0, head);
  }
  stop_posting();
  PMIx_server_finalize();
  ::close(sigfd);
  if (!session_dir.empty()) ::rmdir(session_dir.c_str());

  int exit_code = jobs.exit_code();

  if (exit_code == 0 && interrupts > 0) exit_code = 130;
  if (exit_code == 0 && timed_out) exit_code = 1;

  // The summary: the first job, then the spawned ones together.
  uint32_t ok = 0;
  for (const auto& p : first->procs) ok += p.succeeded() ? 1 : 0;
  uint32_t spawned_jobs = 0, spawned_procs = 0, spawned_ok = 0, spawn_failures = 0;
  for (const auto& j : jobs.jobs()) {
    if (j.get() == first) continue;
    if (j->launch_failed) {
      ++spawn_failures;
      continue;
    }
    ++spawned_jobs;
    spawned_procs += j->size;
    for (const auto& p : j->procs) spawned_ok += p.succeeded() ? 1 : 0;
  }
  std::string spawned;
  if (spawned_jobs > 0)
    spawned = ", and " + std::to_string(spawned_ok) + " of " + std::to_string(spawned_procs) +
              " processes of " + std::to_string(spawned_jobs) + " spawned job" +
              (spawned_jobs == 1 ? "" : "s");
  if (spawn_failures > 0)
    spawned += " (" + std::to_string(spawn_failures) + " spawn" + (spawn_failures == 1 ? "" : "s") +
               " failed to launch)";
  const double elapsed = std::chrono::duration<double>(clock_type::now() - start).count();
  if (!quiet || exit_code != 0)
    std::fprintf(stderr,
                 "pmixrun: %u of %u processes of %s succeeded (%d connected, %d finalized%s)%s in "
                 "%.2f s; exit status %d\n",
                 ok, first->size, first->nspace.c_str(), first->connected, first->finalized,
                 jobs.aborted() ? ", job aborted" : "", spawned.c_str(), elapsed, exit_code);
  if (faulted) {
    // The job's own status under faults is reported above; pmixrun's is
    // the invariants': 0 held, 3 violated.
    for (const auto& line : split_lines(faults_report))
      std::fprintf(stderr, "pmixrun: faults: %s\n", line.c_str());
    std::string replay;
    for (std::size_t k = 0; k < plain_args.size(); ++k) {
      replay += (k == 0 ? "" : " ") + plain_args[k];
      if (k == 0) replay += " --faults '" + faults_plan + "' --seed " + faults_seed;
    }
    if (!invariants_held) {
      std::fprintf(stderr, "pmixrun: faults: replay: %s\n", replay.c_str());
      if (shrink_plan && !fault_trace.empty()) {
        const auto minimal = shrink(fault_trace, faults_seed, plain_args);
        std::fprintf(stderr, "pmixrun: faults: minimal plan: '%s'\n", minimal.c_str());
      }
    }
    std::fprintf(stderr, "pmixrun: faults: %s\n", invariants_held ? "ok" : "FAILED");
    exit_code = invariants_held ? 0 : 3;
  }
  return exit_code;
}
