#include "launcher.hpp"

#include <pmix.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#include <caf/actor_system.hpp>
#include <caf/actor_system_config.hpp>
#include <caf/event_based_actor.hpp>
#include <caf/stateful_actor.hpp>
#include <caf/io/middleman.hpp>
#include <caf/openssl/manager.hpp>
#include <caf/scoped_actor.hpp>
#include <caf/send.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <future>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "caf_config.hpp"
#include "credentials.hpp"
#include "liveness.hpp"
#include "protocol.hpp"
#include "tls_guard.hpp"

namespace pmixd {
namespace {

using clock_type = std::chrono::steady_clock;
using timeout_atom = caf::atom_constant<caf::atom("timeout")>;
using giveup_atom = caf::atom_constant<caf::atom("giveup")>;
using lost_atom = caf::atom_constant<caf::atom("lost")>;
using stdinl_atom = caf::atom_constant<caf::atom("stdinl")>;
using beattick_atom = caf::atom_constant<caf::atom("beattick")>;

struct options {
  std::vector<std::string> daemons;
  std::vector<std::string> hosts;  // --hosts: daemons started here through the launch agent
  std::string agent;               // --launch-agent, else $PMIXRUN_RSH, else "ssh"
  std::string pmixd;               // --pmixd: the daemon's path on the hosts (default: this one's)
  std::string credentials;         // --credentials DIR: the session key (--hosts: made here if not given)
  uint32_t n = 1;
  bool by_node = false;
  std::string fence = "tree";
  std::string nspace;
  std::vector<std::string> env;
  double timeout = 0;
  long stdin_rank = 0;  // which ranks of the job get pmixrun's stdin: one, every one (-1), none (-2)
  bool quiet = false;
  bool verbose = false;
  std::vector<std::string> argv;
};

std::vector<std::string> split(const std::string& text, char sep) {
  std::vector<std::string> out;
  std::size_t start = 0;
  for (;;) {
    const auto at = text.find(sep, start);
    out.push_back(text.substr(start, at == std::string::npos ? std::string::npos : at - start));
    if (at == std::string::npos) return out;
    start = at + 1;
  }
}

// pmixrun's stdin, read on the main thread while the actor forwards it
// (--stdin): read only once every node runs the job, while less than
// `backlog_max` bytes wait for the targets' pipes, and until no target
// takes input any more.
struct stdin_feed {
  static constexpr std::size_t backlog_max = 4 * 1024 * 1024;
  std::atomic<bool> ready{false};
  std::atomic<bool> stopped{false};
  std::atomic<std::size_t> in_flight{0};
};

struct launcher_state {
  options opt;
  std::vector<caf::actor> daemons;
  std::vector<std::string> names;
  std::vector<uint32_t> node_of;
  std::set<std::pair<std::string, uint32_t>> outstanding;  // (nspace, node) not ended yet
  std::set<uint32_t> lost;
  uint32_t started_nodes = 0;
  uint32_t succeeded = 0;
  uint32_t ended = 0;
  bool terminating = false;
  bool losing = false;  // a node was lost: the others end within 1 s, or are terminated
  bool timed_out = false;
  bool finished = false;
  std::optional<int> first_failure;
  // When first_failure is a process's exit status, when it came.
  std::optional<clock_type::time_point> process_failed_at;
  std::optional<int> abort_status;
  uint32_t spawns = 0;  // jobs spawned: "<nspace>.<k>"
  clock_type::time_point start;
  std::shared_ptr<std::promise<int>> result;
  std::shared_ptr<stdin_feed> input;
  liveness<uint32_t> alive{beat_interval, peer_timeout()};  // the daemons' beats, by node
  static const char* name;
};
const char* launcher_state::name = "pmixd-launcher";

using self_ptr = caf::stateful_actor<launcher_state>*;

void finish(self_ptr self) {
  auto& st = self->state;
  if (st.finished) return;
  st.finished = true;
  int code = 0;
  if (st.abort_status) {
    code = *st.abort_status;
  } else if (st.first_failure) {
    code = *st.first_failure;
  } else if (!st.lost.empty() || st.timed_out || st.ended < st.opt.n) {
    code = 1;
  }
  std::fflush(stdout);
  const double elapsed = std::chrono::duration<double>(clock_type::now() - st.start).count();
  if (!st.opt.quiet || code != 0)
    std::fprintf(stderr, "pmixrun: %u of %u processes of %s succeeded on %zu nodes%s%s in %.2f s; exit status %d\n",
                 st.succeeded, st.opt.n, st.opt.nspace.c_str(), st.daemons.size(),
                 st.lost.empty() ? "" : (" (" + std::to_string(st.lost.size()) + " lost)").c_str(),
                 st.abort_status ? ", job aborted" : "", elapsed, code);
  st.result->set_value(code);
  self->quit();
}

void terminate(self_ptr self, const std::string& why) {
  auto& st = self->state;
  if (st.terminating) return;
  st.terminating = true;
  if (!why.empty()) std::fprintf(stderr, "pmixrun: %s: terminating the job\n", why.c_str());
  for (uint32_t n = 0; n < st.daemons.size(); ++n)
    if (st.lost.count(n) == 0) self->send(st.daemons[n], term_atom::value, st.opt.nspace, why);
  // Every node has 15 s to report the end of its processes (pmixd gives
  // them 5 s after SIGTERM before SIGKILL).
  self->delayed_send(self, std::chrono::seconds(15), giveup_atom::value);
}

void check_done(self_ptr self) {
  if (self->state.outstanding.empty() && self->state.started_nodes == self->state.daemons.size()) finish(self);
}

// Ranks onto k nodes: by slot, node i gets ranks [i*n/k, (i+1)*n/k); by
// node, round robin.
std::vector<uint32_t> map_ranks(uint32_t n, uint32_t k, bool by_node) {
  std::vector<uint32_t> node_of;
  for (uint32_t r = 0; r < n; ++r) {
    if (by_node) {
      node_of.push_back(r % k);
    } else {
      uint32_t node = 0;
      while (node + 1 < k && static_cast<uint64_t>(node + 1) * n / k <= r) ++node;
      node_of.push_back(node);
    }
  }
  return node_of;
}

// A job spawned by `parent`: placed over every node like the first job, sent
// to every daemon; `rp` gets (status, namespace or error) once each node
// has started its part.
void spawn_job(self_ptr self, const std::string& parent, std::vector<app_plan> apps, caf::response_promise rp) {
  auto& st = self->state;
  if (st.terminating || st.finished) {
    rp.deliver(static_cast<int32_t>(PMIX_ERR_JOB_CANCELED), std::string("the job is terminating"));
    return;
  }
  if (!st.lost.empty()) {
    const uint32_t n = *st.lost.begin();
    std::fprintf(stderr, "pmixrun: spawn by %s refused: node %s is lost\n", parent.c_str(), st.names[n].c_str());
    rp.deliver(static_cast<int32_t>(PMIX_ERR_UNREACH), "node " + st.names[n] + " is lost");
    return;
  }
  uint64_t size = 0;
  for (const auto& a : apps) size += a.nprocs;
  if (apps.empty() || size == 0 || size > 100000) {
    rp.deliver(static_cast<int32_t>(PMIX_ERR_BAD_PARAM), std::string("1 to 100000 processes"));
    return;
  }
  job_plan plan;
  plan.nspace = st.opt.nspace + "." + std::to_string(++st.spawns);
  plan.apps = std::move(apps);
  plan.env = st.opt.env;
  plan.size = static_cast<uint32_t>(size);
  plan.nodes = st.names;
  plan.daemons = st.opt.daemons;
  plan.node_of = map_ranks(plan.size, static_cast<uint32_t>(st.daemons.size()), st.opt.by_node);
  plan.fence = st.opt.fence;
  plan.parent = parent;
  plan.launcher = caf::actor_cast<caf::actor>(self);
  if (st.opt.verbose)
    std::fprintf(stderr, "pmixrun: %s spawns %s (%u processes)\n", parent.c_str(), plan.nspace.c_str(), plan.size);
  struct tally {
    caf::response_promise rp;
    std::size_t left;
    int32_t status = PMIX_SUCCESS;
    std::string error;
  };
  auto t = std::make_shared<tally>(tally{std::move(rp), st.daemons.size()});
  const std::string nspace = plan.nspace;
  auto finish_one = [self, t, nspace](int32_t rc, const std::string& error) {
    if (rc != PMIX_SUCCESS && t->status == PMIX_SUCCESS) {
      t->status = rc;
      t->error = error;
    }
    if (--t->left > 0) return;
    if (t->status != PMIX_SUCCESS) {
      // Part of the job may run: the whole run ends, as a failure.
      auto& st = self->state;
      if (!st.first_failure) st.first_failure = 1;
      terminate(self, "spawn of " + nspace + " failed: " + t->error);
      t->rp.deliver(t->status, t->error);
      return;
    }
    t->rp.deliver(static_cast<int32_t>(PMIX_SUCCESS), nspace);
  };
  for (uint32_t n = 0; n < st.daemons.size(); ++n) {
    plan.this_node = n;
    st.outstanding.emplace(plan.nspace, n);
    self->request(st.daemons[n], std::chrono::seconds(60), job_atom::value, plan)
        .then([finish_one, self, n](int32_t rc, std::string& error) {
                finish_one(rc, "node " + self->state.names[n] + ": " + error);
              },
              [finish_one, self, n, nspace](caf::error& e) {
                self->state.outstanding.erase({nspace, n});
                finish_one(PMIX_ERR_UNREACH, "node " + self->state.names[n] + ": " + self->system().render(e));
                check_done(self);
              });
  }
}

void send_plans(self_ptr self) {
  auto& st = self->state;
  job_plan plan;
  plan.nspace = st.opt.nspace;
  app_plan app;
  app.argv = st.opt.argv;
  char cwd[PATH_MAX];
  if (::getcwd(cwd, sizeof cwd) != nullptr) app.cwd = cwd;
  app.nprocs = st.opt.n;
  plan.apps.push_back(std::move(app));
  plan.env = st.opt.env;
  plan.size = st.opt.n;
  plan.nodes = st.names;
  plan.daemons = st.opt.daemons;
  plan.node_of = st.node_of;
  plan.fence = st.opt.fence;
  plan.launcher = caf::actor_cast<caf::actor>(self);
  for (uint32_t n = 0; n < st.daemons.size(); ++n) {
    plan.this_node = n;
    st.outstanding.emplace(plan.nspace, n);
    self->request(st.daemons[n], std::chrono::seconds(60), job_atom::value, plan)
        .then(
            [self, n](int32_t rc, std::string& error) {
              auto& st = self->state;
              ++st.started_nodes;
              if (rc != PMIX_SUCCESS) {
                if (!st.first_failure) st.first_failure = rc == PMIX_ERR_JOB_FAILED_TO_LAUNCH ? 127 : 1;
                terminate(self, "node " + st.names[n] + ": " + (error.empty() ? std::string(PMIx_Error_string(rc)) : error));
              }
              if (st.started_nodes == st.daemons.size() && !st.terminating) st.input->ready = true;
              check_done(self);
            },
            [self, n](caf::error& e) {
              auto& st = self->state;
              ++st.started_nodes;
              if (!st.first_failure) st.first_failure = 1;
              st.outstanding.erase({st.opt.nspace, n});
              terminate(self, "node " + st.names[n] + " did not take the job: " + self->system().render(e));
              check_done(self);
            });
  }
}

// A chunk of pmixrun's stdin (empty with `end`: its end) to the --stdin
// ranks of the first job: to the rank's node, or every node with a wildcard
// (each node takes the ranks it runs whose input is open). Once no target
// takes input, the main thread stops reading.
void forward_stdin(self_ptr self, std::string bytes, bool end) {
  auto& st = self->state;
  const std::size_t size = bytes.size();
  if (st.input->stopped || st.terminating) {
    st.input->in_flight -= size;
    return;
  }
  std::set<uint32_t> nodes;
  std::string target = st.opt.nspace + ":";
  if (st.opt.stdin_rank >= 0) {
    nodes.insert(st.node_of[static_cast<std::size_t>(st.opt.stdin_rank)]);
    target += std::to_string(st.opt.stdin_rank);
  } else {
    nodes.insert(st.node_of.begin(), st.node_of.end());
    target += "*";
  }
  struct tally {
    std::size_t left = 0;
    unsigned long taken = 0;  // processes whose pipes took the chunk
  };
  auto t = std::make_shared<tally>();
  t->left = nodes.size();
  auto settle = [self, t, size](int32_t status, const std::string& count) {
    if (status == PMIX_SUCCESS) t->taken += std::strtoul(count.c_str(), nullptr, 10);
    if (--t->left > 0) return;
    auto& st = self->state;
    st.input->in_flight -= size;
    if (t->taken == 0 && !st.input->stopped) {
      st.input->stopped = true;
      if (st.opt.verbose) std::fprintf(stderr, "pmixrun: no process takes stdin any more\n");
    }
  };
  for (const uint32_t n : nodes) {
    if (st.lost.count(n) > 0) {
      settle(PMIX_ERR_UNREACH, {});
      continue;
    }
    self->request(st.daemons[n], caf::infinite, stdin_atom::value, st.opt.nspace, std::vector<std::string>{target},
                  bytes, end)
        .then([settle](int32_t status, std::string& count) { settle(status, count); },
              [settle](caf::error&) { settle(PMIX_ERR_UNREACH, {}); });
  }
}

// Daemon `n` is lost (`why`): the operations that need it fail, and the job
// ends.
void lose_daemon(self_ptr self, uint32_t n, const char* why) {
  auto& st = self->state;
  if (st.lost.count(n) > 0) return;
  st.lost.insert(n);
  st.alive.forget(n);
  for (auto it = st.outstanding.begin(); it != st.outstanding.end();)
    it = it->second == n ? st.outstanding.erase(it) : std::next(it);
  std::fprintf(stderr, "pmixrun: node %s (%s) is lost: %s; the operations that need it fail, and the job ends\n",
               st.names[n].c_str(), st.opt.daemons[n].c_str(), why);
  // The loss is the job's failure unless one came before it. A process
  // that failed less than a second before failed of it: the daemons see
  // the loss on their own connections, and a process whose fence one of
  // them failed could end, and its end reach us, before our connection
  // told us (multinode16_test, "a node of 16 killed mid-fence": the job
  // ended with that process's status, 3). The other processes have 1 s
  // to see their failed operations and end themselves; then they are
  // terminated.
  if (!st.first_failure ||
      (st.process_failed_at && clock_type::now() - *st.process_failed_at < std::chrono::seconds(1)))
    st.first_failure = 1;
  st.losing = true;
  self->delayed_send(self, std::chrono::seconds(1), lost_atom::value, n);
  check_done(self);
}

// Every second: a beat to each daemon not lost, and the daemons not heard
// from for peer_timeout() lost (liveness.hpp).
void beat(self_ptr self) {
  auto& st = self->state;
  for (uint32_t n = 0; n < st.daemons.size(); ++n)
    if (st.lost.count(n) == 0) self->send(st.daemons[n], beat_atom::value, st.opt.nspace, launcher_node);
  const std::string why = "its pmixd has not answered for " + std::to_string(peer_timeout().count()) + " s";
  for (uint32_t n : st.alive.check(clock_type::now())) lose_daemon(self, n, why.c_str());
}

caf::behavior launcher_actor(self_ptr self, options opt, std::vector<caf::actor> daemons,
                             std::shared_ptr<std::promise<int>> result, std::shared_ptr<stdin_feed> input) {
  auto& st = self->state;
  st.opt = std::move(opt);
  st.daemons = std::move(daemons);
  st.result = std::move(result);
  st.input = std::move(input);
  st.start = clock_type::now();
  st.names.resize(st.daemons.size());
  const uint32_t k = static_cast<uint32_t>(st.daemons.size());
  st.node_of = map_ranks(st.opt.n, k, st.opt.by_node);
  self->set_default_handler(caf::drop);
  for (auto& d : st.daemons) self->monitor(d);
  self->delayed_send(self, beat_interval, beattick_atom::value);
  self->set_down_handler([self](caf::down_msg& dm) {
    auto& st = self->state;
    for (uint32_t n = 0; n < st.daemons.size(); ++n)
      if (st.daemons[n].address() == dm.source) lose_daemon(self, n, "its pmixd is gone");
  });
  // Names first, then the plans.
  auto named = std::make_shared<uint32_t>(0);
  for (uint32_t n = 0; n < k; ++n)
    self->request(st.daemons[n], std::chrono::seconds(10), caf::get_atom::value)
        .then(
            [self, n, named](std::string& name) {
              self->state.names[n] = name;
              if (++*named == self->state.daemons.size()) send_plans(self);
            },
            [self, n](caf::error& e) {
              std::fprintf(stderr, "pmixrun: the daemon at %s does not answer: %s\n",
                           self->state.opt.daemons[n].c_str(), self->system().render(e).c_str());
              self->state.first_failure = 1;
              finish(self);
            });
  if (st.opt.timeout > 0)
    self->delayed_send(self, std::chrono::duration_cast<caf::timespan>(std::chrono::duration<double>(st.opt.timeout)),
                       timeout_atom::value);
  return {
      [self](output_atom, const std::string&, uint32_t, int32_t channel, const std::string& bytes) {
        FILE* out = channel == 1 ? stderr : stdout;
        std::fwrite(bytes.data(), 1, bytes.size(), out);
        std::fflush(out);
      },
      [self](exited_atom, const std::string& nspace, uint32_t rank, int32_t status) {
        auto& st = self->state;
        const bool first_job = nspace == st.opt.nspace;
        if (first_job) ++st.ended;
        if (WIFEXITED(status) && WEXITSTATUS(status) == 0) {
          if (first_job) ++st.succeeded;
          return;
        }
        const int code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
        if (!st.first_failure) {
          st.first_failure = code;
          st.process_failed_at = clock_type::now();
        }
        if (st.terminating || st.losing) return;
        terminate(self, "rank " + std::to_string(rank) + " of " + nspace +
                            (first_job ? " on node " + st.names[st.node_of[rank]] : std::string()) +
                            (WIFEXITED(status) ? " exited with status " + std::to_string(WEXITSTATUS(status))
                                               : " was killed by signal " + std::to_string(WTERMSIG(status))));
      },
      [self](abort_atom, const std::string& nspace, uint32_t rank, int32_t status, const std::string& msg) {
        auto& st = self->state;
        std::fprintf(stderr, "pmixrun: rank %u of %s aborted with status %d%s%s\n", rank, nspace.c_str(), status,
                     msg.empty() ? "" : ": ", msg.c_str());
        if (!st.abort_status) st.abort_status = status == 0 ? 1 : status;
        terminate(self, "");
      },
      [self](jobdone_atom, const std::string& nspace, uint32_t node) {
        self->state.outstanding.erase({nspace, node});
        check_done(self);
      },
      [self](spawn_atom, const std::string& parent, std::vector<app_plan>& apps) -> caf::result<int32_t, std::string> {
        auto rp = self->make_response_promise();
        spawn_job(self, parent, std::move(apps), rp);
        return rp;
      },
      [self](stdinl_atom, std::string& bytes, bool end) { forward_stdin(self, std::move(bytes), end); },
      [self](beat_atom, const std::string& sname, uint32_t node) {
        auto& st = self->state;
        // A daemon is watched from its first beat on: it beats once it has
        // the job's plan (until then the bounds on the names and the job's
        // start hold).
        if (sname == st.opt.nspace && node < st.daemons.size() && st.lost.count(node) == 0)
          st.alive.heard(node, clock_type::now());
      },
      [self](beattick_atom) {
        if (self->state.finished) return;
        beat(self);
        self->delayed_send(self, beat_interval, beattick_atom::value);
      },
      [self](timeout_atom) {
        if (self->state.finished) return;
        self->state.timed_out = true;
        terminate(self, "timeout");
      },
      [self](lost_atom, uint32_t n) {
        if (!self->state.finished) terminate(self, "node " + self->state.names[n] + " is lost");
      },
      [self](giveup_atom) {
        auto& st = self->state;
        if (st.finished) return;
        std::fprintf(stderr, "pmixrun: %zu node%s did not report the end of the job in 15 s; giving up\n",
                     st.outstanding.size(), st.outstanding.size() == 1 ? "" : "s");
        if (!st.first_failure) st.first_failure = 1;
        finish(self);
      },
  };
}

// A daemon this launcher started on a host (--hosts): the agent's process,
// the write end of its stdin, which the daemon watches (--lifeline: it ends
// when that closes), and where it listens.
struct started_daemon {
  std::string host;
  pid_t pid = -1;
  int lifeline = -1;
  std::string address;
};

std::string shell_quote(const std::string& text) {
  std::string out = "'";
  for (char c : text) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

// The agent's command for `host`: every {host} replaced, else the host
// appended as one more word (as `ssh HOST`).
std::string agent_command(const std::string& agent, const std::string& host) {
  std::string out = agent;
  bool replaced = false;
  for (std::size_t at; (at = out.find("{host}")) != std::string::npos; replaced = true) out.replace(at, 6, host);
  return replaced ? out : out + " " + shell_quote(host);
}

// All of `text` to the pipe `fd`; false if the reader is gone (no SIGPIPE:
// it is blocked meanwhile, and a pending one taken).
bool write_to_pipe(int fd, const std::string& text) {
  sigset_t pipe_set, saved;
  sigemptyset(&pipe_set);
  sigaddset(&pipe_set, SIGPIPE);
  ::pthread_sigmask(SIG_BLOCK, &pipe_set, &saved);
  std::size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    done += static_cast<std::size_t>(n);
  }
  timespec zero{0, 0};
  ::sigtimedwait(&pipe_set, nullptr, &zero);
  ::pthread_sigmask(SIG_SETMASK, &saved, nullptr);
  return done == text.size();
}

// Starts a pmixd on every host through the agent, gives it the session key
// on its stdin (`key_text`: --credentials-stdin, so that the key is on no
// command line and in no file another user can read) and reads the address
// each announces ("pmixd-ready ADDR:PORT" on its stdout), within 30 s in all.
// The daemon listens on its node's cluster address (pmixd --listen auto).
// False (with a message) if one does not start; those started are in `out`.
bool start_daemons(const options& opt, const std::string& key_text, std::vector<started_daemon>& out) {
  const auto deadline = clock_type::now() + std::chrono::seconds(30);
  std::vector<int> readers;
  for (const auto& host : opt.hosts) {
    const std::string cmd = agent_command(opt.agent, host) + " " + shell_quote(opt.pmixd) + " --name " +
                            shell_quote(host) + " --credentials-stdin --announce --lifeline";
    if (opt.verbose) std::fprintf(stderr, "pmixrun: starting %s\n", cmd.c_str());
    int in[2], outp[2];
    if (::pipe2(in, O_CLOEXEC) != 0 || ::pipe2(outp, O_CLOEXEC) != 0) {
      std::perror("pmixrun: pipe");
      return false;
    }
    const pid_t pid = ::fork();
    if (pid < 0) {
      std::perror("pmixrun: fork");
      return false;
    }
    if (pid == 0) {
      for (const int sig : {SIGINT, SIGTERM, SIGHUP}) ::signal(sig, SIG_DFL);  // the key is the parent's
      ::dup2(in[0], 0);
      ::dup2(outp[1], 1);
      ::setpgid(0, 0);  // a ^C at the terminal is the launcher's to handle
      ::execl("/bin/sh", "sh", "-c", cmd.c_str(), static_cast<char*>(nullptr));
      ::_exit(127);
    }
    ::close(in[0]);
    ::close(outp[1]);
    if (!write_to_pipe(in[1], key_text))
      std::fprintf(stderr, "pmixrun: cannot give the session key to the pmixd on %s: its agent is gone\n",
                   host.c_str());
    started_daemon d;
    d.host = host;
    d.pid = pid;
    d.lifeline = in[1];
    out.push_back(d);
    readers.push_back(outp[0]);
  }
  bool ok = true;
  for (std::size_t k = 0; k < out.size(); ++k) {
    std::string text;
    char buf[256];
    for (;;) {
      const auto nl = text.find('\n');
      if (nl != std::string::npos) {
        const std::string line = text.substr(0, nl);
        text.erase(0, nl + 1);
        if (line.rfind("pmixd-ready ", 0) == 0) {
          out[k].address = line.substr(12);
          if (opt.verbose)
            std::fprintf(stderr, "pmixrun: the pmixd on %s listens on %s\n", out[k].host.c_str(),
                         out[k].address.c_str());
          break;
        }
        continue;
      }
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - clock_type::now()).count();
      pollfd p{readers[k], POLLIN, 0};
      if (left <= 0 || ::poll(&p, 1, static_cast<int>(left)) <= 0) break;
      const ssize_t n = ::read(readers[k], buf, sizeof buf);
      if (n <= 0) break;
      text.append(buf, static_cast<std::size_t>(n));
    }
    ::close(readers[k]);
    if (out[k].address.empty()) {
      std::fprintf(stderr, "pmixrun: the pmixd on %s did not start (%s)\n", out[k].host.c_str(),
                   agent_command(opt.agent, out[k].host).c_str());
      ok = false;
    }
  }
  return ok;
}

// Ends the daemons started here: their lifelines close, then they have 10 s
// to end their processes and go before they are killed.
void stop_daemons(std::vector<started_daemon>& daemons) {
  for (auto& d : daemons)
    if (d.lifeline >= 0) ::close(d.lifeline);
  const auto deadline = clock_type::now() + std::chrono::seconds(10);
  for (auto& d : daemons) {
    while (d.pid > 0) {
      int status = 0;
      const pid_t r = ::waitpid(d.pid, &status, WNOHANG);
      if (r == d.pid || (r < 0 && errno != EINTR)) break;
      if (clock_type::now() >= deadline) {
        ::kill(-d.pid, SIGKILL);
        ::kill(d.pid, SIGKILL);
        ::waitpid(d.pid, &status, 0);
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
  }
}

// The key directory this run made (directory, certificate, key), removed
// when a signal ends the launcher (SIGINT at the terminal); it ends by that
// signal then, as it did before.
char made_key[3][PATH_MAX];

void remove_key_and_end(int sig) {
  ::unlink(made_key[2]);
  ::unlink(made_key[1]);
  ::rmdir(made_key[0]);
  ::signal(sig, SIG_DFL);
  ::raise(sig);
}

void remove_key_on_signals(const pmixd::credentials& c) {
  const std::string* parts[3] = {&c.dir, &c.cert, &c.key};
  for (int k = 0; k < 3; ++k) std::snprintf(made_key[k], sizeof made_key[k], "%s", parts[k]->c_str());
  for (const int sig : {SIGINT, SIGTERM, SIGHUP}) ::signal(sig, remove_key_and_end);
}

void usage(std::FILE* out = stderr) {
  std::fprintf(out,
               "usage: pmixd launch --daemons ADDR:PORT,... --credentials DIR [-n N] [--map-by slot|node]\n"
               "                    [--fence tree|doubling]\n"
               "                    [--nspace NAME] [--env NAME=VALUE]... [--timeout SECONDS]\n"
               "                    [--stdin RANK|all|none] [--quiet]\n"
               "                    [--verbose] prog [args...]\n"
               "       pmixd launch --hosts HOST,... [--launch-agent 'CMD {host}'] [--pmixd PATH]\n"
               "                    [--credentials DIR] [options]\n"
               "                    prog [args...]\n");
}

int run_job(caf::actor_system_config& cfg, const options& opt);

}  // namespace

int run_launcher(caf::actor_system_config& cfg, int argc, char** argv) {
  if (std::string error; !configure_peer_timeout(error)) {
    std::fprintf(stderr, "pmixrun: %s\n", error.c_str());
    return 2;
  }
  options opt;
  opt.nspace = "pmixrun." + std::to_string(::getpid()) + "." + std::to_string(::time(nullptr) % 100000);
  int i = 1;
  for (; i < argc && argv[i][0] == '-'; ++i) {
    const std::string a = argv[i];
    const bool has = i + 1 < argc;
    if (a == "--daemons" && has) {
      opt.daemons = split(argv[++i], ',');
    } else if (a == "--hosts" && has) {
      opt.hosts = split(argv[++i], ',');
    } else if (a == "--launch-agent" && has) {
      opt.agent = argv[++i];
    } else if (a == "--pmixd" && has) {
      opt.pmixd = argv[++i];
    } else if (a == "--credentials" && has) {
      opt.credentials = argv[++i];
    } else if ((a == "-n" || a == "-np") && has) {
      const long v = std::atol(argv[++i]);
      if (v < 1 || v > 100000) {
        std::fprintf(stderr, "pmixrun: -n must be between 1 and 100000\n");
        return 2;
      }
      opt.n = static_cast<uint32_t>(v);
    } else if (a == "--map-by" && has) {
      const std::string v = argv[++i];
      if (v != "node" && v != "slot") {
        std::fprintf(stderr, "pmixrun: --map-by takes node or slot\n");
        return 2;
      }
      opt.by_node = v == "node";
    } else if (a == "--fence" && has) {
      opt.fence = argv[++i];
      if (opt.fence != "tree" && opt.fence != "doubling") {
        std::fprintf(stderr, "pmixrun: --fence takes tree or doubling\n");
        return 2;
      }
    } else if (a == "--nspace" && has) {
      opt.nspace = argv[++i];
      if (opt.nspace.empty() || opt.nspace.size() > PMIX_MAX_NSLEN - 8) {
        std::fprintf(stderr, "pmixrun: --nspace must have 1 to %d characters\n", PMIX_MAX_NSLEN - 8);
        return 2;
      }
    } else if (a == "--env" && has) {
      opt.env.push_back(argv[++i]);
      if (opt.env.back().find('=') == std::string::npos) {
        std::fprintf(stderr, "pmixrun: --env takes NAME=VALUE\n");
        return 2;
      }
    } else if (a == "--timeout" && has) {
      opt.timeout = std::atof(argv[++i]);
    } else if (a == "--stdin" && has) {
      const std::string v = argv[++i];
      char* end = nullptr;
      opt.stdin_rank = v == "all" ? -1 : v == "none" ? -2 : std::strtol(v.c_str(), &end, 10);
      if (opt.stdin_rank >= 0 ? v.empty() || *end != '\0' : opt.stdin_rank < -2 || (v != "all" && v != "none")) {
        std::fprintf(stderr, "pmixrun: --stdin takes a rank, all or none\n");
        return 2;
      }
    } else if (a == "--quiet" || a == "-q") {
      opt.quiet = true;
    } else if (a == "--verbose" || a == "-v") {
      opt.verbose = true;
    } else if (a == "--help" || a == "-h") {
      usage(stdout);
      return 0;
    } else if (a == "--") {
      ++i;
      break;
    } else {
      usage();
      return 2;
    }
  }
  if (i >= argc || opt.daemons.empty() == opt.hosts.empty()) {
    usage();
    return 2;
  }
  for (int k = i; k < argc; ++k) opt.argv.emplace_back(argv[k]);
  if (opt.stdin_rank >= static_cast<long>(opt.n)) {
    std::fprintf(stderr, "pmixrun: --stdin %ld: the job has ranks 0 to %u\n", opt.stdin_rank, opt.n - 1);
    return 2;
  }
  // The session key: the given one, or (--hosts) a fresh one in a private
  // directory of this run, removed at its end.
  if (opt.credentials.empty() && opt.hosts.empty()) {
    std::fprintf(stderr,
                 "pmixrun: --daemons needs --credentials DIR: the session key the daemons were started with "
                 "(pmixd credentials DIR makes one)\n");
    return 2;
  }
  pmixd::credentials creds;
  bool made_here = false;
  std::string creds_error;
  if (!opt.credentials.empty()) {
    if (!pmixd::check_credentials(opt.credentials, creds, creds_error)) {
      std::fprintf(stderr, "pmixrun: --credentials %s: %s\n", opt.credentials.c_str(), creds_error.c_str());
      return 2;
    }
  } else {
    const std::string dir = pmixd::make_private_dir("pmixrun-credentials");
    if (dir.empty() || !pmixd::make_credentials(dir, creds, creds_error)) {
      std::fprintf(stderr, "pmixrun: cannot make the session key: %s\n",
                   dir.empty() ? std::strerror(errno) : creds_error.c_str());
      if (!dir.empty()) pmixd::remove_credentials(pmixd::credentials{dir, dir + "/cert.pem", dir + "/key.pem"});
      return 1;
    }
    made_here = true;
    remove_key_on_signals(creds);
  }
  struct key_owner {
    pmixd::credentials c;
    ~key_owner() { pmixd::remove_credentials(c); }
  } owner{made_here ? creds : pmixd::credentials{}};
  pmixd::use_credentials(cfg, creds);
  // The contexts CAF makes for each connection take the key from memory
  // (tls_guard.hpp).
  if (std::string error; !pmixd::tls_guard::hold(creds, error)) {
    std::fprintf(stderr, "pmixrun: %s\n", error.c_str());
    return 1;
  }
  std::vector<started_daemon> started;
  if (!opt.hosts.empty()) {
    for (const auto& h : opt.hosts)
      if (h.empty()) {
        std::fprintf(stderr, "pmixrun: --hosts has an empty name\n");
        return 2;
      }
    if (opt.agent.empty()) {
      const char* rsh = std::getenv("PMIXRUN_RSH");
      opt.agent = rsh != nullptr && *rsh != '\0' ? rsh : "ssh";
    }
    if (opt.pmixd.empty()) {
      char self[PATH_MAX];
      const ssize_t len = ::readlink("/proc/self/exe", self, sizeof self - 1);
      if (len <= 0) {
        std::fprintf(stderr, "pmixrun: cannot find pmixd's own path; give --pmixd\n");
        return 1;
      }
      opt.pmixd.assign(self, static_cast<std::size_t>(len));
    }
    std::string key_text;
    if (!pmixd::read_credentials_text(creds, key_text, creds_error)) {
      std::fprintf(stderr, "pmixrun: %s\n", creds_error.c_str());
      return 1;
    }
    const bool ok = start_daemons(opt, key_text, started);
    for (const auto& d : started) opt.daemons.push_back(d.address);
    if (!ok) {
      stop_daemons(started);
      return 1;
    }
  }
  const int code = run_job(cfg, opt);
  stop_daemons(started);
  return code;
}

namespace {

// pmixrun runs in the background of the terminal its stdin is: reading it
// would stop it (SIGTTIN).
bool in_background(int fd) {
  if (::isatty(fd) == 0) return false;
  const pid_t foreground = ::tcgetpgrp(fd);
  return foreground != -1 && foreground != ::getpgrp();
}

// Until the job is over: pmixrun's stdin, chunk by chunk, to the launcher
// actor (forward_stdin), while `input` allows it; its end too.
void read_stdin(const caf::actor& launcher, stdin_feed& input, bool reading, std::future<int>& done) {
  std::vector<char> buffer(64 * 1024);
  while (done.wait_for(std::chrono::seconds(0)) != std::future_status::ready) {
    if (!reading || input.stopped || !input.ready || input.in_flight >= stdin_feed::backlog_max ||
        in_background(STDIN_FILENO)) {
      done.wait_for(std::chrono::milliseconds(100));
      continue;
    }
    pollfd p{STDIN_FILENO, POLLIN, 0};
    if (::poll(&p, 1, 100) <= 0) continue;
    const ssize_t n = ::read(STDIN_FILENO, buffer.data(), buffer.size());
    if (n < 0 && (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK)) continue;
    const bool end = n <= 0;
    if (end) reading = false;
    std::string bytes = end ? std::string() : std::string(buffer.data(), static_cast<std::size_t>(n));
    input.in_flight += bytes.size();
    caf::anon_send(launcher, stdinl_atom::value, std::move(bytes), end);
  }
}

int run_job(caf::actor_system_config& cfg, const options& opt) {
  for (const auto& d : opt.daemons) {
    std::string host;
    uint16_t port = 0;
    if (!split_address(d, host, port)) {
      std::fprintf(stderr, "pmixrun: --daemons: %s is not ADDR:PORT\n", d.c_str());
      return 2;
    }
  }

  int code = 1;
  {
    caf::actor_system sys{cfg};
    // Reach every daemon through CAF's OpenSSL module (TLS, each side proves
    // it holds the session key); a daemon still starting gets 10 s.
    std::vector<caf::actor> daemons;
    const auto deadline = clock_type::now() + std::chrono::seconds(10);
    {
      caf::scoped_actor self{sys};
      auto mm = sys.openssl_manager().actor_handle();
      for (const auto& d : opt.daemons) {
        std::string host;
        uint16_t port = 0;
        split_address(d, host, port);
        for (;;) {
          caf::actor found;
          std::string why;
          const auto left =
              std::max(std::chrono::duration_cast<std::chrono::milliseconds>(deadline - clock_type::now()),
                       std::chrono::milliseconds(500));
          self->request(mm, left, caf::connect_atom::value, host, port)
              .receive(
                  [&](const caf::node_id&, caf::strong_actor_ptr& ptr, const std::set<std::string>&) {
                    if (ptr)
                      found = caf::actor_cast<caf::actor>(ptr);
                    else
                      why = "no daemon is published at that port";
                  },
                  [&](caf::error& e) { why = sys.render(e); });
          if (found) {
            daemons.push_back(found);
            break;
          }
          if (clock_type::now() >= deadline) {
            std::fprintf(stderr,
                         "pmixrun: cannot reach the daemon at %s: %s (it must run with the same session key)\n",
                         d.c_str(), why.c_str());
            return 1;
          }
          std::this_thread::sleep_for(std::chrono::milliseconds(200));
        }
      }
    }
    auto result = std::make_shared<std::promise<int>>();
    auto done = result->get_future();
    auto input = std::make_shared<stdin_feed>();
    caf::actor launcher = sys.spawn(launcher_actor, opt, std::move(daemons), result, input);
    read_stdin(launcher, *input, opt.stdin_rank != -2, done);
    launcher = caf::actor{};
    code = done.get();
  }
  return code;
}

}  // namespace

}  // namespace pmixd
