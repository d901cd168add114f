// Jobs: a namespace registered with the PMIx server and its processes.
//
// The launcher registers a job the way a resource manager does (namespace
// with full job data, then each client), starts its processes (posix_spawn)
// with the environment PMIx_server_setup_fork gives, reaps them, and, once every
// process of a job has ended and its output too (when it is forwarded),
// deregisters its clients and its namespace and removes its session
// directory.
//
// Failure policy: the first process of any job that exits non-zero or is
// killed, while no termination is under way, terminates every job (SIGTERM,
// then SIGKILL after a grace period); its status becomes pmixrun's exit
// status. An abort (PMIx_Abort) does the same with the abort's status. A
// spawned job that could not be started is reported to its spawner and does
// not count.
//
// Host thread only (host_thread.hpp).
#pragma once

#include <pmix_common.h>
#include <sys/types.h>
#include <sys/wait.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace pmixrun {

struct app_spec {
  std::string cmd;                // the program; searched in PATH when it has no '/'
  std::vector<std::string> argv;  // argv[0] included; empty means { cmd }
  std::vector<std::string> env;   // NAME=value entries on top of pmixrun's environment
  std::string cwd;                // empty: pmixrun's working directory
  uint32_t nprocs = 1;
};

// Where the ranks of a job run, for a host of several nodes (pmixd): the
// node names by node id, and each rank's node. Empty: one node, this one.
struct placement {
  std::vector<std::string> nodes;
  std::vector<uint32_t> node_of;  // by rank
  uint32_t this_node = 0;
  bool spans_nodes() const { return !nodes.empty(); }
  bool local(uint32_t rank) const { return nodes.empty() || node_of[rank] == this_node; }
};

struct job_spec {
  std::vector<app_spec> apps;         // ranks are consecutive over the apps, app by app
  std::optional<pmix_proc_t> parent;  // the spawning process, for spawned jobs
  placement where;                    // empty: every rank on this node
  std::vector<std::string> env;       // NAME=value entries for every app, below the apps' own
};

struct process {
  pid_t pid = 0;  // 0: never started
  bool ended = false;
  int status = 0;            // wait status, once ended
  bool output_open = false;  // its stdout/stderr pipes are forwarded and not at their end yet
  bool connected = false;     // the server reported it (client_connected)
  bool deregistered = false;  // ended unknown to the server: deregistered at once
  bool running() const { return pid > 0 && !ended; }
  bool succeeded() const { return ended && WIFEXITED(status) && WEXITSTATUS(status) == 0; }
};

struct job {
  std::string nspace;
  uint32_t index = 1;  // J of the output tag: 1, then k + 1 for the spawned job "<nspace>.k"
  job_spec spec;
  uint32_t size = 0;
  uint32_t offset = 0;              // global rank of rank 0 (PMIX_NPROC_OFFSET)
  std::vector<uint32_t> app_first;  // first rank of each app
  std::vector<process> procs;
  uint32_t running = 0;        // started and not reaped
  uint32_t open_outputs = 0;   // processes whose output has not ended
  bool launch_failed = false;  // a spawn that could not start: not in the exit status
  bool finished = false;       // deregistered
  uint32_t registered_clients = 0;  // the first this many of local_ranks
  std::vector<uint32_t> local_ranks;  // the ranks this node runs, ascending
  int connected = 0;
  int finalized = 0;
  std::string dir;  // session directory (PMIX_NSDIR), removed with the job

  uint32_t app_of(uint32_t rank) const;
};

class launcher {
 public:
  using clock = std::chrono::steady_clock;

  struct settings {
    bool verbose = false;
    // A failing process does not end the others (--faults: each runs to its
    // own end, within the timeout).
    bool keep_going = false;
    uint32_t cpus = 1;           // oversubscribed when more processes than this run
    uint32_t universe_size = 1;  // PMIX_UNIV_SIZE of every job
    std::string session_dir;     // where job directories go; empty: none
    double grace_seconds = 5;    // SIGTERM to SIGKILL
    std::function<void(const pmix_proc_t&)> proc_ended;  // each process, when reaped
    std::function<void(const std::string&)> job_ended;   // each job, before deregistration
    // Set: every process's stdout and stderr are pipes, whose read ends
    // (close-on-exec) are handed over here, once the process is started;
    // output_closed() says when both have ended. A job ends (job_ended,
    // deregistration) once its processes are reaped and their output has
    // ended. Unset: the processes inherit pmixrun's stdout and stderr.
    std::function<void(const job&, pmix_rank_t rank, int out_fd, int err_fd)> output;
    // Set: every process's stdin is a pipe, whose write end (close-on-exec)
    // is handed over here once the process is started. Unset: the
    // processes inherit pmixrun's stdin.
    std::function<void(const job&, pmix_rank_t rank, int in_fd)> input;
  };

  explicit launcher(settings s);

  // Registers a job and starts its processes. On PMIX_SUCCESS every process
  // was exec'd. Otherwise `error` says why and nothing of the job keeps
  // running (processes already started are killed, and the job is
  // deregistered once they are reaped). A job whose registration failed is
  // dropped (the result is nullptr).
  job* start(const std::string& nspace, job_spec spec, bool spawned, pmix_status_t& rc,
             std::string& error);

  // A fresh namespace for a spawned job: "<first job's nspace>.<k>".
  std::string next_spawn_nspace();

  // Collects every child that ended (waitpid WNOHANG), applies the failure
  // policy, and finishes the jobs that are done.
  void reap();

  // Ends every job: SIGTERM now, SIGKILL after the grace period (see tick).
  void terminate(const std::string& why);
  // Escalates a termination whose grace period has passed (at once with
  // `now_or_never`: a second interrupt).
  void tick(clock::time_point now, bool now_or_never = false);
  // When tick() will escalate, if it has yet to.
  std::optional<clock::time_point> kill_time() const;
  bool terminating() const { return terminating_; }
  // A new run on a launcher that lives on (pmixd): a termination that is
  // over (no process of it is live) is forgotten. False if one is live.
  bool rearm();

  void record_abort(const pmix_proc_t& proc, int status);

  // Both output pipes of `proc` have ended (settings::output).
  void output_closed(const pmix_proc_t& proc);

  // Any process still running, or whose output has not ended.
  bool active() const;
  job* find(const std::string& nspace);
  std::vector<std::unique_ptr<job>>& jobs() { return jobs_; }
  uint32_t live_processes() const;

  // pmixrun's exit status: the abort's, else the first failure's, else 0.
  int exit_code() const;
  bool aborted() const { return abort_status_.has_value(); }

  // Deregisters every job not finished yet (at shutdown).
  void finish_all();

 private:
  pmix_status_t register_job(job& j, std::string& error);
  void finish(job& j);
  void finish_if_done(job& j);
  void failed(job& j, uint32_t rank, int status);
  void forget(job& j, uint32_t rank);

  settings settings_;
  std::vector<std::unique_ptr<job>> jobs_;
  uint32_t next_offset_ = 0;
  int spawn_count_ = 0;
  bool terminating_ = false;
  bool killed_ = false;
  clock::time_point terminate_time_{};
  std::optional<int> first_failure_;
  std::optional<int> abort_status_;
};

}  // namespace pmixrun
