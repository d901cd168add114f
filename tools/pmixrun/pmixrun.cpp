// pmixrun: the reference launcher. A small PMIx host written only against the
// public server API (pmix_server.h), the way a resource manager uses it:
//
//   pmixrun [-n N] [--nspace NAME] [--timeout SECONDS] [--quiet] prog [args...]
//
// It starts a PMIx server, registers one namespace with realistic job data
// (node and proc maps, per-rank data), registers and forks N clients with the
// environment PMIx_server_setup_fork gives, waits for them and forwards their
// exit status: non-zero if any client fails, is killed or aborts (then the
// rest of the job is terminated). It ends with a one-line summary.
#include <pmix.h>
#include <pmix_server.h>
#include <pthread.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <csignal>
#include <chrono>
#include <climits>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace {

struct job {
  std::string nspace;
  std::vector<pid_t> pids;
  std::vector<int> status;  // wait status per rank, -1 while running
  std::mutex mutex;
  std::atomic<int> abort_status{0};
  std::atomic<bool> aborted{false};
  std::atomic<int> connected{0};
  std::atomic<int> finalized{0};
};

job the_job;
volatile sig_atomic_t interrupted = 0;

void kill_job(int sig) {
  std::lock_guard<std::mutex> guard{the_job.mutex};
  for (std::size_t r = 0; r < the_job.pids.size(); ++r)
    if (the_job.status[r] < 0 && the_job.pids[r] > 0) ::kill(the_job.pids[r], sig);
}

// ---- the host module ------------------------------------------------------

pmix_status_t on_connected(const pmix_proc_t*, void*, pmix_op_cbfunc_t, void*) {
  ++the_job.connected;
  return PMIX_OPERATION_SUCCEEDED;
}

pmix_status_t on_finalized(const pmix_proc_t*, void*, pmix_op_cbfunc_t, void*) {
  ++the_job.finalized;
  return PMIX_OPERATION_SUCCEEDED;
}

pmix_status_t on_abort(const pmix_proc_t* proc, void*, int status, const char msg[], pmix_proc_t[],
                       size_t, pmix_op_cbfunc_t cbfunc, void* cbdata) {
  std::fprintf(stderr, "pmixrun: rank %u of %s called PMIx_Abort(%d): %s\n", proc->rank,
               proc->nspace, status, msg == nullptr ? "" : msg);
  the_job.abort_status = status == 0 ? 1 : status;
  the_job.aborted = true;
  // Let the caller go, then end the job.
  if (cbfunc != nullptr) cbfunc(PMIX_SUCCESS, cbdata);
  kill_job(SIGTERM);
  return PMIX_SUCCESS;
}

// A single-node host: every fence is local, so the server never calls this;
// it answers as a one-node RM would (its own data is all the data).
pmix_status_t on_fence(const pmix_proc_t[], size_t, const pmix_info_t[], size_t, char* data,
                       size_t ndata, pmix_modex_cbfunc_t cbfunc, void* cbdata) {
  if (cbfunc != nullptr) cbfunc(PMIX_SUCCESS, data, ndata, cbdata, nullptr, nullptr);
  return PMIX_SUCCESS;
}

void op_done(pmix_status_t, void* cbdata) {
  static_cast<std::atomic<bool>*>(cbdata)->store(true);
}

// ---- job data -----------------------------------------------------------------

std::string hostname() {
  char buf[HOST_NAME_MAX + 1] = {};
  ::gethostname(buf, sizeof buf - 1);
  return buf;
}

void add(std::vector<pmix_info_t>& v, const char* key, const void* data, pmix_data_type_t type) {
  v.emplace_back();
  PMIX_INFO_LOAD(&v.back(), key, data, type);
}

pmix_status_t register_job(const std::string& nspace, uint32_t n) {
  const std::string host = hostname();
  char* node_map = nullptr;
  char* proc_map = nullptr;
  auto rc = PMIx_generate_regex(host.c_str(), &node_map);
  if (rc != PMIX_SUCCESS) return rc;
  const std::string ranks = n == 1 ? "0" : "0-" + std::to_string(n - 1);
  rc = PMIx_generate_ppn(ranks.c_str(), &proc_map);
  if (rc != PMIX_SUCCESS) return rc;

  std::vector<pmix_info_t> info;
  info.reserve(16);
  uint32_t one = 1, zero = 0;
  add(info, PMIX_JOB_SIZE, &n, PMIX_UINT32);
  add(info, PMIX_UNIV_SIZE, &n, PMIX_UINT32);
  add(info, PMIX_MAX_PROCS, &n, PMIX_UINT32);
  add(info, PMIX_LOCAL_SIZE, &n, PMIX_UINT32);
  add(info, PMIX_NUM_NODES, &one, PMIX_UINT32);
  add(info, PMIX_APPNUM, &zero, PMIX_UINT32);
  add(info, PMIX_JOBID, nspace.c_str(), PMIX_STRING);
  add(info, PMIX_NODE_MAP, node_map, PMIX_STRING);
  add(info, PMIX_PROC_MAP, proc_map, PMIX_STRING);
  std::free(node_map);
  std::free(proc_map);

  // Per-rank data, as an RM registers it: PMIX_PROC_DATA arrays led by PMIX_RANK.
  for (uint32_t r = 0; r < n; ++r) {
    pmix_data_array_t* darray = nullptr;
    PMIX_DATA_ARRAY_CREATE(darray, 5, PMIX_INFO);
    auto* items = static_cast<pmix_info_t*>(darray->array);
    uint16_t local = static_cast<uint16_t>(r);
    PMIX_INFO_LOAD(&items[0], PMIX_RANK, &r, PMIX_PROC_RANK);
    PMIX_INFO_LOAD(&items[1], PMIX_LOCAL_RANK, &local, PMIX_UINT16);
    PMIX_INFO_LOAD(&items[2], PMIX_NODE_RANK, &local, PMIX_UINT16);
    PMIX_INFO_LOAD(&items[3], PMIX_APPNUM, &zero, PMIX_UINT32);
    PMIX_INFO_LOAD(&items[4], PMIX_HOSTNAME, host.c_str(), PMIX_STRING);
    info.emplace_back();
    PMIX_INFO_LOAD(&info.back(), PMIX_PROC_DATA, darray, PMIX_DATA_ARRAY);
    PMIX_DATA_ARRAY_FREE(darray);
  }
  rc = PMIx_server_register_nspace(nspace.c_str(), static_cast<int>(n), info.data(), info.size(),
                                   nullptr, nullptr);
  for (auto& i : info) PMIX_INFO_DESTRUCT(&i);
  return rc;
}

void usage() {
  std::fprintf(stderr,
               "usage: pmixrun [-n N] [--nspace NAME] [--timeout SECONDS] [--quiet] prog [args...]\n");
}

}  // namespace

int main(int argc, char** argv) {
  uint32_t n = 1;
  std::string nspace = "pmixrun." + std::to_string(getpid());
  double timeout = 0;
  bool quiet = false;
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
    } else if (a == "--timeout" && i + 1 < argc) {
      timeout = std::atof(argv[++i]);
    } else if (a == "--quiet" || a == "-q") {
      quiet = true;
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
  const auto start = std::chrono::steady_clock::now();
  // SIGCHLD, SIGINT and SIGTERM are taken synchronously by the wait loop.
  // Blocked before any thread starts, so every thread inherits the mask; the
  // children get the default mask back before exec.
  sigset_t waited;
  sigemptyset(&waited);
  sigaddset(&waited, SIGCHLD);
  sigaddset(&waited, SIGINT);
  sigaddset(&waited, SIGTERM);
  ::pthread_sigmask(SIG_BLOCK, &waited, nullptr);

  pmix_server_module_t module;
  std::memset(&module, 0, sizeof module);
  module.client_connected = on_connected;
  module.client_finalized = on_finalized;
  module.abort = on_abort;
  module.fence_nb = on_fence;
  pmix_info_t dirs[1];
  PMIX_INFO_LOAD(&dirs[0], PMIX_SERVER_NSPACE, "pmixrun-server", PMIX_STRING);
  auto rc = PMIx_server_init(&module, dirs, 1);
  PMIX_INFO_DESTRUCT(&dirs[0]);
  if (rc != PMIX_SUCCESS) {
    std::fprintf(stderr, "pmixrun: PMIx_server_init failed: %s\n", PMIx_Error_string(rc));
    return 1;
  }
  the_job.nspace = nspace;
  rc = register_job(nspace, n);
  if (rc != PMIX_SUCCESS) {
    std::fprintf(stderr, "pmixrun: registering the job failed: %s\n", PMIx_Error_string(rc));
    PMIx_server_finalize();
    return 1;
  }
  the_job.pids.assign(n, 0);
  the_job.status.assign(n, -1);
  for (uint32_t r = 0; r < n; ++r) {
    pmix_proc_t proc;
    PMIX_LOAD_PROCID(&proc, nspace.c_str(), r);
    rc = PMIx_server_register_client(&proc, getuid(), getgid(), nullptr, nullptr, nullptr);
    if (rc != PMIX_SUCCESS) {
      std::fprintf(stderr, "pmixrun: registering rank %u failed: %s\n", r, PMIx_Error_string(rc));
      PMIx_server_finalize();
      return 1;
    }
  }
  for (uint32_t r = 0; r < n; ++r) {
    pmix_proc_t proc;
    PMIX_LOAD_PROCID(&proc, nspace.c_str(), r);
    char** env = nullptr;
    // Start from our own environment, then add what the client needs.
    for (char** e = environ; *e != nullptr; ++e) PMIX_ARGV_APPEND(rc, env, *e);
    rc = PMIx_server_setup_fork(&proc, &env);
    if (rc != PMIX_SUCCESS) {
      std::fprintf(stderr, "pmixrun: setup_fork for rank %u failed: %s\n", r, PMIx_Error_string(rc));
      kill_job(SIGKILL);
      break;
    }
    std::fflush(nullptr);
    const pid_t pid = ::fork();
    if (pid == 0) {
      ::pthread_sigmask(SIG_UNBLOCK, &waited, nullptr);
      ::execvpe(argv[i], argv + i, env);
      std::fprintf(stderr, "pmixrun: cannot run %s: %s\n", argv[i], std::strerror(errno));
      ::_exit(127);
    }
    PMIX_ARGV_FREE(env);
    std::lock_guard<std::mutex> guard{the_job.mutex};
    the_job.pids[r] = pid;
  }

  // Wait for every client; the first failure ends the rest of the job. The
  // loop sleeps in sigtimedwait, so an idle launcher costs no CPU.
  uint32_t running = n;
  bool terminating = false;
  while (running > 0) {
    int status = 0;
    const pid_t pid = ::waitpid(-1, &status, WNOHANG);
    if (pid > 0) {
      std::lock_guard<std::mutex> guard{the_job.mutex};
      for (uint32_t r = 0; r < n; ++r)
        if (the_job.pids[r] == pid && the_job.status[r] < 0) {
          the_job.status[r] = status;
          --running;
          const bool failed = !WIFEXITED(status) || WEXITSTATUS(status) != 0;
          if (failed && !terminating && !the_job.aborted) {
            std::fprintf(stderr, "pmixrun: rank %u %s %d: terminating the job\n", r,
                         WIFEXITED(status) ? "exited with status" : "was killed by signal",
                         WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
            terminating = true;
            for (uint32_t k = 0; k < n; ++k)
              if (the_job.status[k] < 0 && the_job.pids[k] > 0) ::kill(the_job.pids[k], SIGTERM);
          }
        }
      continue;
    }
    const double elapsed =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if ((interrupted || (timeout > 0 && elapsed > timeout)) && !terminating) {
      std::fprintf(stderr, "pmixrun: %s: terminating the job\n",
                   interrupted ? "interrupted" : "timeout");
      terminating = true;
      kill_job(SIGTERM);
    }
    if (terminating && timeout > 0 && elapsed > timeout + 5) kill_job(SIGKILL);
    // Sleep until a child changes state, a signal arrives, or a second passes.
    timespec tick{1, 0};
    const int sig = ::sigtimedwait(&waited, nullptr, &tick);
    if (sig == SIGINT || sig == SIGTERM) interrupted = 1;
  }

  int exit_code = 0;
  uint32_t ok = 0;
  for (uint32_t r = 0; r < n; ++r) {
    const int s = the_job.status[r];
    if (WIFEXITED(s) && WEXITSTATUS(s) == 0) {
      ++ok;
    } else if (exit_code == 0) {
      exit_code = WIFEXITED(s) ? WEXITSTATUS(s) : 128 + WTERMSIG(s);
    }
  }
  if (the_job.aborted) exit_code = the_job.abort_status;
  if (interrupted && exit_code == 0) exit_code = 130;

  std::atomic<bool> done{false};
  for (uint32_t r = 0; r < n; ++r) {
    pmix_proc_t proc;
    PMIX_LOAD_PROCID(&proc, nspace.c_str(), r);
    PMIx_server_deregister_client(&proc, nullptr, nullptr);
  }
  PMIx_server_deregister_nspace(nspace.c_str(), op_done, &done);
  while (!done) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  PMIx_server_finalize();

  const double elapsed =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (!quiet || exit_code != 0)
    std::fprintf(stderr,
                 "pmixrun: %u of %u processes of %s succeeded (%d connected, %d finalized%s) in "
                 "%.2f s; exit status %d\n",
                 ok, n, nspace.c_str(), the_job.connected.load(), the_job.finalized.load(),
                 the_job.aborted ? ", job aborted" : "", elapsed, exit_code);
  return exit_code;
}
