#include "jobs.hpp"

#include <fcntl.h>
#include <ftw.h>
#include <pmix.h>
#include <pmix_server.h>
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>

#include "info.hpp"

extern char** environ;

namespace pmixrun {
namespace {

std::string hostname() {
  char buf[HOST_NAME_MAX + 1] = {};
  ::gethostname(buf, sizeof buf - 1);
  return buf;
}

// Waits for `count` op callbacks. Heap-allocated: if the library never calls
// back, the waiter is leaked rather than written after it is gone.
class countdown {
 public:
  explicit countdown(std::size_t count) : left_(count) {}
  static void done(pmix_status_t, void* cbdata) {
    auto* self = static_cast<countdown*>(cbdata);
    std::lock_guard<std::mutex> guard{self->mutex_};
    if (self->left_ > 0 && --self->left_ == 0) self->cv_.notify_all();
  }
  // Some calls did not take their callback (they failed at once).
  void skip(std::size_t n) {
    for (std::size_t k = 0; k < n; ++k) done(PMIX_SUCCESS, this);
  }
  bool wait(double seconds) {
    std::unique_lock<std::mutex> lock{mutex_};
    return cv_.wait_for(lock, std::chrono::duration<double>(seconds),
                        [this] { return left_ == 0; });
  }

 private:
  std::mutex mutex_;
  std::condition_variable cv_;
  std::size_t left_;
};

// "NAME=value" entries: later entries replace earlier ones of the same name.
void set_env(std::vector<std::string>& env, const std::string& entry) {
  const auto eq = entry.find('=');
  const std::string name = entry.substr(0, eq == std::string::npos ? entry.size() : eq + 1);
  for (auto& e : env)
    if (e.compare(0, name.size(), name) == 0) {
      e = entry;
      return;
    }
  env.push_back(entry);
}

const char* get_env(const std::vector<std::string>& env, const std::string& name) {
  for (const auto& e : env)
    if (e.size() > name.size() && e.compare(0, name.size(), name) == 0 && e[name.size()] == '=')
      return e.c_str() + name.size() + 1;
  return nullptr;
}

bool is_executable_file(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) && ::access(path.c_str(), X_OK) == 0;
}

// The file exec will run for `cmd` (relative paths against `cwd`, bare names
// searched in `path`), or empty with errno set.
std::string resolve_program(const std::string& cmd, const std::string& cwd, const char* path) {
  if (cmd.empty()) {
    errno = ENOENT;
    return {};
  }
  if (cmd.find('/') != std::string::npos) {
    const std::string full = cmd[0] == '/' || cwd.empty() ? cmd : cwd + "/" + cmd;
    if (is_executable_file(full)) return full;
    if (errno == 0) errno = EACCES;
    return {};
  }
  std::string dirs = path != nullptr ? path : "/usr/local/bin:/usr/bin:/bin";
  std::size_t start = 0;
  int err = ENOENT;
  for (;;) {
    const auto colon = dirs.find(':', start);
    std::string dir =
        dirs.substr(start, colon == std::string::npos ? std::string::npos : colon - start);
    if (dir.empty()) dir = ".";
    if (dir[0] != '/' && !cwd.empty()) dir = cwd + "/" + dir;
    const std::string full = dir + "/" + cmd;
    if (is_executable_file(full)) return full;
    if (errno == EACCES) err = EACCES;
    if (colon == std::string::npos) break;
    start = colon + 1;
  }
  errno = err;
  return {};
}

int remove_entry(const char* path, const struct stat*, int, struct FTW*) { return ::remove(path); }

void remove_tree(const std::string& dir) {
  if (!dir.empty()) ::nftw(dir.c_str(), remove_entry, 16, FTW_DEPTH | FTW_PHYS);
}

// Why a process could not be started.
struct exec_failure {
  int stage;  // 0: chdir, 1: exec
  int err;
};

// The pipes of a child: [0] its stdout, [1] its stderr, [2] its stdin; each
// {read end, write end}, close-on-exec, or -1. The child keeps the write
// ends of its output pipes and the read end of its input pipe; pmixrun the
// others.
struct child_pipes {
  int fds[3][2] = {{-1, -1}, {-1, -1}, {-1, -1}};
  bool open(bool output, bool input, std::string& error) {
    for (int k = 0; k < 3; ++k) {
      if (k < 2 ? !output : !input) continue;
      if (::pipe2(fds[k], O_CLOEXEC) != 0) {
        error = std::string("cannot make a pipe for a process: ") + std::strerror(errno);
        close_all();
        return false;
      }
    }
    return true;
  }
  int child_end(int k) const { return fds[k][k < 2 ? 1 : 0]; }
  int parent_end(int k) const { return fds[k][k < 2 ? 0 : 1]; }
  void close_child_ends() {
    for (int k = 0; k < 3; ++k) {
      int& fd = fds[k][k < 2 ? 1 : 0];
      if (fd >= 0) {
        ::close(fd);
        fd = -1;
      }
    }
  }
  void close_all() {
    for (auto& p : fds)
      for (int& fd : p)
        if (fd >= 0) {
          ::close(fd);
          fd = -1;
        }
  }
};

// Starts `file` with posix_spawn: the child shares this process's memory
// until it execs (glibc clones with CLONE_VM | CLONE_VFORK), so none of the
// launcher's page tables are copied and none of its pages become
// copy-on-write, a cost that a fork paid per process and that grew with
// the launcher's own memory (its server, CAF; docs/performance.md). Returns
// the pid once the exec succeeded; on failure -1, with `failure` set (the
// child, if one was made, is reaped already). The child's stdout, stderr and
// stdin are its ends of those `pipes` that are open (pmixrun keeps 0, 1 and
// 2 open, so pipes never take those numbers); its signal mask is empty.
pid_t spawn_process(const std::string& file, const std::vector<std::string>& argv, char** env,
                const std::string& cwd, const child_pipes& pipes,
                std::optional<exec_failure>& failure) {
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawnattr_t attr;
  ::posix_spawn_file_actions_init(&actions);
  ::posix_spawnattr_init(&attr);
  sigset_t none;
  sigemptyset(&none);
  ::posix_spawnattr_setsigmask(&attr, &none);
  ::posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK);
  // dup2 clears close-on-exec on the copies; the originals close at exec.
  const int standard[3] = {STDOUT_FILENO, STDERR_FILENO, STDIN_FILENO};
  for (int k = 0; k < 3; ++k)
    if (pipes.child_end(k) >= 0) ::posix_spawn_file_actions_adddup2(&actions, pipes.child_end(k), standard[k]);
  if (!cwd.empty()) ::posix_spawn_file_actions_addchdir_np(&actions, cwd.c_str());
  pid_t pid = -1;
  const int err = ::posix_spawn(&pid, file.c_str(), &actions, &attr, args.data(), env);
  ::posix_spawn_file_actions_destroy(&actions);
  ::posix_spawnattr_destroy(&attr);
  if (err == 0) return pid;
  // posix_spawn does not say which step failed: a directory the child
  // could not enter is named in the message.
  struct stat st{};
  const bool dir_ok = cwd.empty() || (::stat(cwd.c_str(), &st) == 0 && S_ISDIR(st.st_mode) &&
                                      ::access(cwd.c_str(), X_OK) == 0);
  failure = exec_failure{dir_ok ? 1 : 0, err};
  return -1;
}

}  // namespace

uint32_t job::app_of(uint32_t rank) const {
  uint32_t a = 0;
  while (a + 1 < app_first.size() && app_first[a + 1] <= rank) ++a;
  return a;
}

launcher::launcher(settings s) : settings_(std::move(s)) {}

std::string launcher::next_spawn_nspace() {
  const std::string base =
      jobs_.empty() ? "pmixrun." + std::to_string(::getpid()) : jobs_.front()->nspace;
  std::string ns;
  do {
    ns = base + "." + std::to_string(++spawn_count_);
  } while (find(ns) != nullptr);
  return ns;
}

job* launcher::find(const std::string& nspace) {
  for (auto& j : jobs_)
    if (j->nspace == nspace) return j.get();
  return nullptr;
}

uint32_t launcher::live_processes() const {
  uint32_t n = 0;
  for (const auto& j : jobs_) n += j->running;
  return n;
}

bool launcher::active() const {
  for (const auto& j : jobs_)
    if (j->running > 0 || j->open_outputs > 0) return true;
  return false;
}

pmix_status_t launcher::register_job(job& j, std::string& error) {
  const placement& where = j.spec.where;
  const std::string host = where.spans_nodes() ? where.nodes[where.this_node] : hostname();
  const uint32_t n = j.size;
  // The node names and, per node, its ranks "0,1,...": the input forms of
  // PMIx_generate_regex and PMIx_generate_ppn (nodes separated by ';';
  // OpenPMIx reads "0-3" as one rank named "0-3"). This node's list is
  // also PMIX_LOCAL_PEERS.
  std::string names = host;
  std::vector<std::string> node_ranks(where.spans_nodes() ? where.nodes.size() : 1);
  if (where.spans_nodes()) {
    names.clear();
    for (const auto& name : where.nodes) names += (names.empty() ? "" : ",") + name;
  }
  for (uint32_t r = 0; r < n; ++r) {
    std::string& list = node_ranks[where.spans_nodes() ? where.node_of[r] : 0];
    list += (list.empty() ? "" : ",") + std::to_string(r);
  }
  std::string ppn;
  for (std::size_t k = 0; k < node_ranks.size(); ++k) ppn += (k == 0 ? "" : ";") + node_ranks[k];
  const std::string peers = node_ranks[where.spans_nodes() ? where.this_node : 0];
  const uint32_t local_count = static_cast<uint32_t>(j.local_ranks.size());
  char* node_map = nullptr;
  char* proc_map = nullptr;
  pmix_status_t rc = PMIx_generate_regex(names.c_str(), &node_map);
  if (rc != PMIX_SUCCESS) {
    error = std::string("PMIx_generate_regex: ") + PMIx_Error_string(rc);
    return rc;
  }
  rc = PMIx_generate_ppn(ppn.c_str(), &proc_map);
  if (rc != PMIX_SUCCESS) {
    std::free(node_map);
    error = std::string("PMIx_generate_ppn: ") + PMIx_Error_string(rc);
    return rc;
  }
  // Each rank's local rank: its position among the ranks of its node.
  std::vector<uint16_t> local_rank(n);
  {
    std::vector<uint16_t> next(node_ranks.size(), 0);
    for (uint32_t r = 0; r < n; ++r) local_rank[r] = next[where.spans_nodes() ? where.node_of[r] : 0]++;
  }

  // Job-level data, as Open MPI's mpirun and PRRTE register it for a job on
  // one node (what Open MPI's ess/pmi reads is marked).
  info_array info;
  info.add_string(PMIX_JOBID, j.nspace);
  info.add_u32(PMIX_NPROC_OFFSET, j.offset);
  info.add_u32(PMIX_JOB_SIZE, n);                                      // ess/pmi
  info.add_u32(PMIX_MAX_PROCS, n);                                     // ess/pmi
  info.add_u32(PMIX_UNIV_SIZE, std::max(settings_.universe_size, n));  // ess/pmi: MPI_UNIVERSE_SIZE
  info.add_u32(PMIX_JOB_NUM_APPS, static_cast<uint32_t>(j.spec.apps.size()));
  info.add_u32(PMIX_NUM_NODES, static_cast<uint32_t>(node_ranks.size()));  // ess/pmi
  info.add_string(PMIX_NODE_MAP, node_map);
  info.add_string(PMIX_PROC_MAP, proc_map);
  std::free(node_map);
  std::free(proc_map);
  info.add_u32(PMIX_NODEID, where.this_node);
  info.add_u32(PMIX_NODE_SIZE, live_processes() + local_count);
  info.add_u32(PMIX_LOCAL_SIZE, local_count);  // ess/pmi
  info.add_string(PMIX_LOCAL_PEERS, peers);    // ess/pmi
  if (local_count > 0) info.add_rank(PMIX_LOCALLDR, j.local_ranks.front());
  if (j.spec.apps.size() == 1) info.add_u32(PMIX_APPNUM, 0);
  info.add_bool(PMIX_SPAWNED, j.spec.parent.has_value());
  if (j.spec.parent) info.add(PMIX_PARENT_ID, &*j.spec.parent, PMIX_PROC);
  if (!j.dir.empty()) {
    // Open MPI puts its session directories here and, with RMCLEAN, leaves
    // their removal to us (we remove j.dir when the job is finished).
    info.add_string(PMIX_TMPDIR, j.dir);     // ess/pmi
    info.add_string(PMIX_NSDIR, j.dir);      // ess/pmi
    info.add_bool(PMIX_TDIR_RMCLEAN, true);  // ess/pmi
  }
  for (uint32_t a = 0; a < j.spec.apps.size(); ++a) {
    const app_spec& app = j.spec.apps[a];
    info_array items;
    items.add_u32(PMIX_APPNUM, a);
    items.add_u32(PMIX_APP_SIZE, app.nprocs);
    items.add_rank(PMIX_APPLDR, j.app_first[a]);
    if (!app.cwd.empty()) items.add_string(PMIX_WDIR, app.cwd);
    std::string argv;
    for (const auto& s : app.argv) argv += (argv.empty() ? "" : " ") + s;
    items.add_string(PMIX_APP_ARGV, argv);
    info.add_array(PMIX_APP_INFO_ARRAY, items);
  }
  // Per-rank data: PMIX_PROC_DATA arrays led by PMIX_RANK.
  for (uint32_t r = 0; r < n; ++r) {
    const uint32_t a = j.app_of(r);
    info_array items;
    items.add_rank(PMIX_RANK, r);
    items.add_rank(PMIX_GLOBAL_RANK, j.offset + r);
    items.add_u32(PMIX_APPNUM, a);  // ess/pmi
    items.add_rank(PMIX_APP_RANK, r - j.app_first[a]);
    items.add_rank(PMIX_APPLDR, j.app_first[a]);
    items.add_u16(PMIX_LOCAL_RANK, local_rank[r]);  // ess/pmi
    // ess/pmi; unique on the node, across jobs
    items.add_u16(PMIX_NODE_RANK, static_cast<uint16_t>(j.offset + local_rank[r]));
    const uint32_t node = where.spans_nodes() ? where.node_of[r] : 0;
    items.add_u32(PMIX_NODEID, node);
    items.add_string(PMIX_HOSTNAME, where.spans_nodes() ? where.nodes[node] : host);  // ess/pmi
    info.add_array(PMIX_PROC_DATA, items);
  }
  rc = PMIx_server_register_nspace(j.nspace.c_str(), static_cast<int>(n), info.data(), info.size(),
                                   nullptr, nullptr);
  if (rc != PMIX_SUCCESS && rc != PMIX_OPERATION_SUCCEEDED) {
    error = std::string("registering the namespace failed: ") + PMIx_Error_string(rc);
    return rc;
  }
  for (const uint32_t r : j.local_ranks) {
    const pmix_proc_t proc = make_proc(j.nspace, r);
    rc = PMIx_server_register_client(&proc, ::getuid(), ::getgid(), nullptr, nullptr, nullptr);
    if (rc != PMIX_SUCCESS && rc != PMIX_OPERATION_SUCCEEDED) {
      error = "registering rank " + std::to_string(r) + " failed: " + PMIx_Error_string(rc);
      return rc;
    }
    ++j.registered_clients;
  }
  return PMIX_SUCCESS;
}

job* launcher::start(const std::string& nspace, job_spec spec, bool spawned, pmix_status_t& rc,
                     std::string& error) {
  rc = PMIX_SUCCESS;
  auto owned = std::make_unique<job>();
  job& j = *owned;
  j.nspace = nspace;
  j.spec = std::move(spec);
  for (auto& app : j.spec.apps) {
    if (app.argv.empty()) app.argv.push_back(app.cmd);
    j.app_first.push_back(j.size);
    j.size += app.nprocs;
  }
  if (j.spec.apps.empty() || j.size == 0) {
    rc = PMIX_ERR_BAD_PARAM;
    error = "no processes to start";
    return nullptr;
  }
  const placement& where = j.spec.where;
  if (where.spans_nodes() &&
      (where.node_of.size() != j.size || where.this_node >= where.nodes.size() ||
       std::any_of(where.node_of.begin(), where.node_of.end(),
                   [&](uint32_t node) { return node >= where.nodes.size(); }))) {
    rc = PMIX_ERR_BAD_PARAM;
    error = "the placement does not match the job";
    return nullptr;
  }
  for (uint32_t r = 0; r < j.size; ++r)
    if (where.local(r)) j.local_ranks.push_back(r);

  // Each app's environment and program, checked before anything is
  // registered: a program that cannot run fails the launch at once.
  const uint32_t total = live_processes() + static_cast<uint32_t>(j.local_ranks.size());
  std::vector<std::vector<std::string>> envs;
  std::vector<std::string> files;
  for (const auto& app : j.spec.apps) {
    std::vector<std::string> env;
    for (char** e = environ; e != nullptr && *e != nullptr; ++e) env.emplace_back(*e);
    for (const auto& e : j.spec.env) set_env(env, e);
    for (const auto& e : app.env) set_env(env, e);
    // Open MPI 4.1 direct launch (README of tools/pmixrun): without an ORTE
    // daemon, Open MPI's "orte" schizo component declares every rank a
    // singleton; excluding it lets ess/pmi take the PMIx client path.
    if (get_env(env, "OMPI_MCA_schizo") == nullptr) env.emplace_back("OMPI_MCA_schizo=^orte");
    // More processes than cores: ranks must yield while they poll (mpirun
    // sets the same for an oversubscribed job).
    if (total > settings_.cpus && get_env(env, "OMPI_MCA_mpi_yield_when_idle") == nullptr)
      env.emplace_back("OMPI_MCA_mpi_yield_when_idle=1");
    if (!app.cwd.empty()) {
      struct stat st;
      if (::stat(app.cwd.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
        rc = PMIX_ERR_JOB_FAILED_TO_LAUNCH;
        error = "cannot run " + app.cmd + ": working directory " + app.cwd + ": " +
                std::strerror(errno != 0 ? errno : ENOTDIR);
        return nullptr;
      }
    }
    errno = 0;
    std::string file = resolve_program(app.cmd, app.cwd, get_env(env, "PATH"));
    if (file.empty()) {
      rc = PMIX_ERR_JOB_FAILED_TO_LAUNCH;
      error = "cannot run " + app.cmd + ": " + std::strerror(errno);
      return nullptr;
    }
    envs.push_back(std::move(env));
    files.push_back(std::move(file));
  }

  j.offset = next_offset_;
  // The spawn's k: next_spawn_nspace() named it "<first nspace>.k".
  j.index = spawned ? static_cast<uint32_t>(spawn_count_) + 1 : 1;
  if (!settings_.session_dir.empty()) {
    j.dir = settings_.session_dir + "/" + nspace;
    if (::mkdir(j.dir.c_str(), 0700) != 0 && errno != EEXIST) j.dir.clear();
  }
  j.procs.assign(j.size, process{});
  jobs_.push_back(std::move(owned));
  rc = register_job(j, error);
  if (rc != PMIX_SUCCESS) {
    finish(j);
    jobs_.pop_back();
    return nullptr;
  }
  next_offset_ += j.size;

  bool exec_failed = false;
  for (const uint32_t r : j.local_ranks) {
    const uint32_t a = j.app_of(r);
    const app_spec& app = j.spec.apps[a];
    const pmix_proc_t proc = make_proc(nspace, r);
    char** env = nullptr;
    for (const auto& e : envs[a]) PMIX_ARGV_APPEND(rc, env, e.c_str());
    rc = PMIx_server_setup_fork(&proc, &env);
    if (rc != PMIX_SUCCESS) {
      PMIX_ARGV_FREE(env);
      error = "setup_fork for rank " + std::to_string(r) + " failed: " + PMIx_Error_string(rc);
      break;
    }
    child_pipes pipes;
    const bool forward = static_cast<bool>(settings_.output);
    const bool feed = static_cast<bool>(settings_.input);
    if (!pipes.open(forward, feed, error)) {
      PMIX_ARGV_FREE(env);
      rc = PMIX_ERR_OUT_OF_RESOURCE;
      break;
    }
    std::optional<exec_failure> failure;
    const pid_t pid = spawn_process(files[a], app.argv, env, app.cwd, pipes, failure);
    PMIX_ARGV_FREE(env);
    pipes.close_child_ends();
    if (pid > 0) {
      j.procs[r].pid = pid;
      ++j.running;
      if (forward) {
        j.procs[r].output_open = true;
        ++j.open_outputs;
        settings_.output(j, r, pipes.parent_end(0), pipes.parent_end(1));
      }
      if (feed) settings_.input(j, r, pipes.parent_end(2));
    } else {
      pipes.close_all();
    }
    if (failure) {
      exec_failed = true;
      rc = PMIX_ERR_JOB_FAILED_TO_LAUNCH;
      error = "cannot run " + app.cmd + (failure->stage == 0 ? " in " + app.cwd : std::string()) +
              ": " + std::strerror(failure->err);
      break;
    }
  }
  if (rc != PMIX_SUCCESS) {
    // A spawn that fails is the spawner's business; the first job failing
    // to start fails pmixrun (127, as a shell reports a program it cannot run).
    j.launch_failed = spawned;
    if (!spawned) {
      if (!first_failure_) first_failure_ = exec_failed ? 127 : 1;
      terminate("");
    }
    for (auto& p : j.procs)
      if (p.running()) ::kill(p.pid, SIGKILL);
    finish_if_done(j);
    return &j;
  }
  // A job of several nodes may have no rank here: it is done at once.
  if (j.local_ranks.empty()) finish_if_done(j);
  if (settings_.verbose)
    std::fprintf(stderr, "pmixrun: started %s: %u process%s%s%s\n", nspace.c_str(), j.size,
                 j.size == 1 ? "" : "es", j.spec.parent ? ", spawned by " : "",
                 j.spec.parent ? to_string(*j.spec.parent).c_str() : "");
  return &j;
}

void launcher::failed(job& j, uint32_t rank, int status) {
  if (j.launch_failed) return;
  const int code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  if (!first_failure_) first_failure_ = code;
  if (terminating_ || abort_status_ || settings_.keep_going) return;
  char why[160];
  std::snprintf(why, sizeof why, "rank %u of %s %s %d", rank, j.nspace.c_str(),
                WIFEXITED(status) ? "exited with status" : "was killed by signal",
                WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
  terminate(why);
}

void launcher::reap() {
  for (;;) {
    int status = 0;
    const pid_t pid = ::waitpid(-1, &status, WNOHANG);
    if (pid <= 0) return;
    for (auto& jp : jobs_) {
      job& j = *jp;
      for (uint32_t r = 0; r < j.procs.size(); ++r) {
        process& p = j.procs[r];
        if (p.pid != pid || p.ended) continue;
        p.ended = true;
        p.status = status;
        --j.running;
        if (!p.succeeded()) failed(j, r, status);
        if (!p.connected && r < j.registered_clients) forget(j, r);
        if (settings_.proc_ended) settings_.proc_ended(make_proc(j.nspace, r));
        finish_if_done(j);
      }
    }
  }
}

// A process that ended without the server knowing it (it never connected,
// or its connect was lost: found by the fault plane, seed 1, drop:init) is
// deregistered at once, so collectives waiting for it fail instead of
// waiting for the job's end; one that connected is known to the server
// through its socket.
void launcher::forget(job& j, uint32_t rank) {
  j.procs[rank].deregistered = true;
  const pmix_proc_t proc = make_proc(j.nspace, rank);
  if (settings_.verbose)
    std::fprintf(stderr, "pmixrun: %s ended unknown to the server: deregistered\n", to_string(proc).c_str());
  PMIx_server_deregister_client(&proc, [](pmix_status_t, void*) {}, nullptr);
}

void launcher::output_closed(const pmix_proc_t& proc) {
  job* j = find(std::string(proc.nspace, strnlen(proc.nspace, PMIX_MAX_NSLEN)));
  if (j == nullptr || proc.rank >= j->procs.size()) return;
  process& p = j->procs[proc.rank];
  if (!p.output_open) return;
  p.output_open = false;
  --j->open_outputs;
  finish_if_done(*j);
}

void launcher::finish_if_done(job& j) {
  if (j.running == 0 && j.open_outputs == 0) finish(j);
}

void launcher::finish(job& j) {
  if (j.finished) return;
  j.finished = true;
  if (settings_.job_ended) settings_.job_ended(j.nspace);
  // Deregister as a resource manager does at job end: every client, then
  // the namespace; wait for the library's callbacks (bounded).
  auto* clients = new countdown(j.registered_clients);
  for (uint32_t k = 0; k < j.registered_clients; ++k) {
    const uint32_t r = j.local_ranks[k];
    if (r < j.procs.size() && j.procs[r].deregistered) {
      clients->skip(1);
      continue;
    }
    const pmix_proc_t proc = make_proc(j.nspace, r);
    PMIx_server_deregister_client(&proc, countdown::done, clients);
  }
  if (clients->wait(10)) {
    delete clients;
  } else {
    std::fprintf(stderr, "pmixrun: deregistering the clients of %s did not complete\n",
                 j.nspace.c_str());
  }
  auto* ns = new countdown(1);
  PMIx_server_deregister_nspace(j.nspace.c_str(), countdown::done, ns);
  if (ns->wait(10)) {
    delete ns;
  } else {
    std::fprintf(stderr, "pmixrun: deregistering %s did not complete\n", j.nspace.c_str());
  }
  remove_tree(j.dir);
  if (settings_.verbose) std::fprintf(stderr, "pmixrun: %s finished\n", j.nspace.c_str());
}

void launcher::finish_all() {
  for (auto& j : jobs_) finish(*j);
}

void launcher::terminate(const std::string& why) {
  if (terminating_) return;
  terminating_ = true;
  terminate_time_ = clock::now();
  if (!why.empty()) std::fprintf(stderr, "pmixrun: %s: terminating the job\n", why.c_str());
  for (auto& j : jobs_)
    for (auto& p : j->procs)
      if (p.running()) ::kill(p.pid, SIGTERM);
}

std::optional<launcher::clock::time_point> launcher::kill_time() const {
  if (!terminating_ || killed_) return std::nullopt;
  return terminate_time_ + std::chrono::duration_cast<clock::duration>(
                               std::chrono::duration<double>(settings_.grace_seconds));
}

void launcher::tick(clock::time_point now, bool now_or_never) {
  if (!terminating_ || killed_) return;
  if (!now_or_never && now < *kill_time()) return;
  killed_ = true;
  for (auto& j : jobs_)
    for (auto& p : j->procs)
      if (p.running()) ::kill(p.pid, SIGKILL);
}

bool launcher::rearm() {
  if (live_processes() > 0) return !terminating_;
  terminating_ = false;
  killed_ = false;
  return true;
}

void launcher::record_abort(const pmix_proc_t& proc, int status) {
  if (abort_status_) return;
  abort_status_ = status == 0 ? 1 : status;
  terminate("");
}

int launcher::exit_code() const {
  if (abort_status_) return *abort_status_;
  if (first_failure_) return *first_failure_;
  return 0;
}

}  // namespace pmixrun
