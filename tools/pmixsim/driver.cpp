#include "tools/pmixsim/driver.hpp"

#include <fcntl.h>
#include <pmix.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <deque>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <sstream>
#include <thread>

#include "protocol/messages.hpp"
#include "protocol/version.hpp"
#include "transport/shared_data.hpp"

namespace pmixsim {
namespace {

using clock_type = std::chrono::steady_clock;
namespace proto = pmix::protocol;

std::uint64_t now_us() {
  return static_cast<std::uint64_t>(
      std::chrono::duration_cast<std::chrono::microseconds>(clock_type::now().time_since_epoch()).count());
}

constexpr std::uint64_t fnv_offset = 0xcbf29ce484222325ull;
std::uint64_t fnv(std::uint64_t h, std::uint64_t v) {
  for (int k = 0; k < 8; ++k) {
    h ^= (v >> (8 * k)) & 0xff;
    h *= 0x100000001b3ull;
  }
  return h;
}

// One simulated client's live state. Kept small and allocated before the
// servers start: the server's memory is measured around it.
struct client_state {
  int fd = -1;
  std::uint32_t pc = 0;
  std::uint64_t next_id = 1;
  std::uint64_t awaiting = 0;  // the outstanding request's id
  std::uint64_t started = 0;   // when it was sent (µs)
  std::uint64_t hash = fnv_offset;
  std::uint32_t launch = 0;    // position in the launch order
  bool done = false;
  bool writable_wait = false;
  // Under --faults: an operation ended with an unexpected status or a
  // closed connection; the client talks to no server any more (as a real
  // process would give up) but still arrives at and waits for its gates.
  bool broken = false;
  // Under --faults: the server closed the connection while the client had
  // nothing outstanding. It learns so at its next step that talks to the
  // server (and gives up there), as a process learns at its next call: when
  // the end of the stream is read does not enter the trace.
  bool lost = false;
  std::string steps;  // what entered the hash, with PMIXSIM_TRACE
  std::string in;   // a frame split across reads
  std::string out;  // bytes the socket did not take yet
  // Descriptors of shared data (docs/wire-format.md) that came with bytes
  // read and wait for the frame announcing them, in order.
  // (A vector: empty, it allocates nothing; 100,000 deques would be 57 MB.)
  std::vector<int> fds;
};

// The epoll tags: clients by index, control channels above: the nodes'
// servers' channels, then the client hosts' (--spread), by node.
constexpr std::uint64_t ctl_tag = 1ull << 40;
constexpr std::uint64_t host_tag = 1ull << 41;

struct node_link {
  int fd = -1;
  pid_t pid = -1;  // 0: in this process
  std::string uri;
  std::string in, out;
  bool waiting = false;  // out waits for the channel to drain (EPOLLOUT)
  bool dirty = false;    // out waits for the loop's next flush
};

class driver {
 public:
  driver(const plan& p, fault_hooks& hooks) : p_(p), hooks_(hooks) {}
  result go();
  // --spread: this process drives no client; each node's clients run in a
  // client host, a child that also runs the node's server (go_host).
  result go_spread();
  int go_host(std::uint32_t node, int ctl_fd, int coord_fd, const std::string& dir);

 private:
  // ---- clients ----
  void advance(std::uint32_t c);
  bool open_socket(std::uint32_t c);
  void send(std::uint32_t c, std::string frame);
  void request(std::uint32_t c, proto::body kind, const std::string& message);
  void readable(std::uint32_t c);
  void writable(std::uint32_t c);
  void frame(std::uint32_t c, std::string payload);
  void completed(std::uint32_t c, pmix_status_t status, std::uint64_t arg = 0);
  void close_client(std::uint32_t c);
  void fail(std::uint32_t c, const std::string& what);
  const step& current(std::uint32_t c) const { return p_.programs[p_.clients[c].program][cs(c).pc]; }
  std::size_t program_size(std::uint32_t c) const { return p_.programs[p_.clients[c].program].size(); }
  void record(std::uint32_t c, op o, std::uint64_t arg, pmix_status_t st) {
    // Under faults which error a failed step gets may depend on timing
    // (a collective names whichever participant it found gone first): the
    // trace keeps success or failure.
    if (faulted_ && st != PMIX_SUCCESS) st = PMIX_ERROR;
    auto& h = cs(c).hash;
    if (trace_steps_)
      cs(c).steps += std::string{op_name(o)} + ":" + std::to_string(arg) + ":" + std::to_string(st) + " ";
    h = fnv(fnv(fnv(h, static_cast<std::uint64_t>(o)), arg), static_cast<std::uint32_t>(st));
  }
  // ---- gates ----
  void arrive(std::uint32_t g);
  void open_gate(std::uint32_t g);
  // ---- the client hosts (--spread) ----
  enum class role { all, coordinator, host };
  role role_ = role::all;
  std::uint32_t host_node_ = 0;     // host: its node
  node_link coord_;                  // host: its channel to the driver
  std::vector<node_link> hosts_;     // coordinator: each node's client host
  std::vector<std::uint64_t> hashes_;      // coordinator: each client's trace hash
  std::vector<std::string> host_steps_;    // coordinator: each host's traced steps
  void prepare();
  bool make_tmpdir();
  pid_t fork_node(std::uint32_t n, const std::vector<int>& others,
                  const std::function<int(const std::string& dir)>& body);
  void accept_at_once(std::uint64_t count);
  bool set_descriptor_limit(std::uint64_t count, std::uint64_t want);
  void start_hosts();
  bool read_ready();
  void watch(const node_link& l, std::uint64_t tag);
  void link_send(node_link& l, std::uint64_t tag, std::string frame);
  void link_writable(node_link& l, std::uint64_t tag);
  // Frames sent in one turn of a loop go out in one write per channel
  // (flush_links, before the loop waits again).
  void link_flush(node_link& l, std::uint64_t tag);
  node_link& link_of(std::uint64_t tag);
  void flush_links();
  int wait_events(std::vector<epoll_event>& events, int timeout_ms);
  std::vector<std::uint64_t> dirty_;
  bool link_read(node_link& l, const std::function<void(std::string_view)>& on_message);
  void host_message(std::uint32_t n, std::string_view payload);
  void coord_message(std::string_view payload);
  std::string host_results();
  void check_end();
  void run_clients();
  bool dispatch(const epoll_event& e);
  // ---- nodes and the fabric ----
  void start_nodes();
  void node_send(std::uint32_t n, std::string frame);
  void node_message(std::uint32_t n, std::string_view payload);
  void call_nodes(std::function<std::string(std::uint32_t id)> make,
                  std::function<void(pmix_status_t, std::vector<node_stats>)> done);
  void break_nspace(std::uint32_t ns, pmix_status_t st);
  void finish_nodes();

  const plan& p_;
  fault_hooks& hooks_;
  result r_;
  int epoll_ = -1;
  // The clients this process drives (all, or a host's node's), in client
  // order, and their states: st_[k] is mine_[k]'s; slot_ maps a client to
  // k in a host (empty: k is the client).
  std::vector<client_state> st_;
  std::vector<std::uint32_t> mine_;
  std::vector<std::uint32_t> slot_;
  static constexpr std::uint32_t no_slot = ~std::uint32_t{0};
  client_state& cs(std::uint32_t c) { return st_[slot_.empty() ? c : slot_[c]]; }
  const client_state& cs(std::uint32_t c) const { return st_[slot_.empty() ? c : slot_[c]]; }
  client_state* find_state(std::uint32_t c) {
    if (slot_.empty()) return c < st_.size() ? &st_[c] : nullptr;
    return slot_[c] == no_slot ? nullptr : &st_[slot_[c]];
  }
  std::vector<node_link> nodes_;
  std::thread node0_;
  bool node0_forked_ = false;  // node 0's server in a child (descriptor limit)
  std::string tmpdir_;
  std::vector<std::uint32_t> retry_;  // clients whose connect found the backlog full
  std::vector<std::uint32_t> arrived_;
  std::vector<bool> open_;
  std::vector<std::vector<std::uint32_t>> waiting_;
  std::uint32_t running_ = 0;  // clients not done
  std::uint64_t steps_done_ = 0, steps_total_ = 0;
  std::vector<std::int64_t> expect_connected_, expect_finalized_, maybe_connected_;
  const bool faulted_ = !p_.opt.faults.empty();
  // PMIXSIM_TRACE=1: each client's traced steps (operation:argument:status)
  // are printed at the end, to find where two runs' hashes part.
  const bool trace_steps_ = std::getenv("PMIXSIM_TRACE") != nullptr;
  std::vector<std::int64_t> broken_on_;  // per node: clients broken under faults
  void give_up(std::uint32_t c, pmix_status_t status);
  // The fabric.
  struct fence_book {
    std::vector<std::pair<std::uint32_t, std::string>> contributions;  // per node: id, data
    std::vector<bool> arrived;
    std::uint32_t count = 0;
  };
  std::map<std::string, fence_book> fences_;
  std::vector<pmix_status_t> broken_;  // per namespace: the status its inter-node fences get
  std::map<std::uint32_t, std::pair<std::uint32_t, std::uint32_t>> dmodex_;  // ask -> node, its id
  std::uint32_t next_ask_ = 1;
  struct call {
    std::uint32_t left;
    pmix_status_t status;
    std::vector<node_stats> stats;
    std::function<void(pmix_status_t, std::vector<node_stats>)> done;
  };
  std::map<std::uint32_t, call> calls_;  // by the first node's id
  std::map<std::uint32_t, std::uint32_t> call_of_;  // id -> call key
  std::uint32_t next_call_ = 1;
  std::uint32_t pending_actions_ = 0;
  std::string scratch_;
  std::deque<int> incoming_;  // descriptors one read brought
  // The clients whose replies are decoded whole (the job's data, a fence's
  // every rank): each such check reads O(N), so at most about 8 a run (32
  // were still a third of a 100,000-client run's time).
  bool spot_checked(std::uint32_t c) const {
    return c % std::max<std::size_t>(997, p_.clients.size() / 8) == 0;
  }
};


void driver::start_nodes() {
  if (!make_tmpdir()) return;
  const auto k = p_.opt.nodes;
  nodes_.resize(k);
  // The children first, while this process has no thread of its own (a
  // fork while node 0's thread is inside PMIx_server_init would copy its
  // locks held); then node 0's thread, unless it is a child too.
  std::vector<int> theirs(k, -1);
  for (std::uint32_t n = 0; n < k; ++n) {
    int sv[2];
    if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) {
      r_.failures.push_back("socketpair failed");
      return;
    }
    nodes_[n].fd = sv[0];
    theirs[n] = sv[1];
  }
  for (std::uint32_t n = 0; n < k; ++n) {
    if (n == 0 && !node0_forked_) continue;
    std::vector<int> others;
    for (std::uint32_t m = 0; m < k; ++m) {
      others.push_back(nodes_[m].fd);
      if (m != n) others.push_back(theirs[m]);
    }
    nodes_[n].pid = fork_node(n, others, [&](const std::string& dir) { return run_node(p_, n, theirs[n], dir); });
    ::close(theirs[n]);
  }
  if (!node0_forked_) {
    ::mkdir((tmpdir_ + "/n0").c_str(), 0700);
    const int fd = theirs[0];
    nodes_[0].pid = 0;
    node0_ = std::thread([this, fd] {
      run_node(p_, 0, fd, tmpdir_ + "/n0");
      ::close(fd);
    });
  }
}

// Forks node n's process, its folder made first: the child closes `others`
// (every channel end but its own) and this process's epoll, runs `body`
// and exits with its status.
pid_t driver::fork_node(std::uint32_t n, const std::vector<int>& others,
                        const std::function<int(const std::string& dir)>& body) {
  const std::string dir = tmpdir_ + "/n" + std::to_string(n);
  ::mkdir(dir.c_str(), 0700);
  const pid_t pid = ::fork();
  if (pid == 0) {
    for (const int fd : others) ::close(fd);
    ::close(epoll_);
    std::_Exit(body(dir));
  }
  return pid;
}

bool driver::make_tmpdir() {
  char dir[] = "/tmp/pmixsim.XXXXXX";
  if (::mkdtemp(dir) == nullptr) {
    r_.failures.push_back("cannot create a temporary directory");
    return false;
  }
  tmpdir_ = dir;
  return true;
}

// The servers this process starts must accept all of its `count` clients
// at once, and keep connections whose answer is still queued behind the
// others' (the default 10 s closes them at 10,000 clients: docs/simulator.md).
void driver::accept_at_once(std::uint64_t count) {
  const std::string unauth = std::to_string(count + 16);
  ::setenv("PMIX_CXX_MAX_UNAUTHENTICATED", unauth.c_str(), 1);
  if (std::getenv("PMIX_CXX_HANDSHAKE_TIMEOUT_MS") == nullptr) ::setenv("PMIX_CXX_HANDSHAKE_TIMEOUT_MS", "600000", 1);
}

// What every role allocates first: per client, per gate, per node.
void driver::prepare() {
  r_.names = p_.names;
  r_.clients = p_.opt.clients;
  r_.nodes = p_.opt.nodes;
  r_.seed = p_.opt.seed;
  r_.spread = role_ != role::all;
  r_.per_node.assign(p_.opt.nodes, 0);
  r_.counted_per_node.assign(p_.opt.nodes, 0);
  for (const auto& c : p_.clients) {
    ++r_.per_node[c.node];
    if (c.counted) ++r_.counted_per_node[c.node];
  }
  const auto count = p_.clients.size();
  arrived_.assign(p_.gates.size(), 0);
  open_.assign(p_.gates.size(), false);
  waiting_.resize(p_.gates.size());
  broken_.assign(p_.nspaces.size(), PMIX_SUCCESS);
  expect_connected_.assign(p_.opt.nodes, 0);
  expect_finalized_.assign(p_.opt.nodes, 0);
  broken_on_.assign(p_.opt.nodes, 0);
  maybe_connected_.assign(p_.opt.nodes, 0);
  if (role_ == role::coordinator) return;
  // Everything per client is allocated before the servers start: a client
  // host keeps the state of its own node's clients only (16 hosts of a
  // 100,000-client run each built 100,000 states: 1 s of its CPU).
  mine_.clear();
  slot_.clear();
  if (role_ == role::host) slot_.assign(count, no_slot);
  for (std::uint32_t c = 0; c < count; ++c) {
    if (role_ == role::host && p_.clients[c].node != host_node_) continue;
    if (role_ == role::host) slot_[c] = static_cast<std::uint32_t>(mine_.size());
    mine_.push_back(c);
  }
  st_.resize(mine_.size());
  for (std::uint32_t k = 0; k < p_.launch_order.size(); ++k)
    if (auto* s = find_state(p_.launch_order[k])) s->launch = k;
  for (std::uint32_t g = 0; g < p_.gates.size(); ++g) waiting_[g].reserve(p_.gates[g].expected + 8);
  const auto mine = role_ == role::host ? r_.per_node[host_node_] : count;
  retry_.reserve(mine);
  for (auto& l : r_.latency_us) l.reserve(mine * 2);
  for (const auto& c : p_.clients) steps_total_ += p_.programs[c.program].size();
  scratch_.resize(1 << 20);
}

// Raises this process's descriptor limit to `want` (its hard limit too when
// allowed). False, with the run's failure naming the limit, when not even
// `count` clients fit.
bool driver::set_descriptor_limit(std::uint64_t count, std::uint64_t want) {
  rlimit lim{};
  ::getrlimit(RLIMIT_NOFILE, &lim);
  if (lim.rlim_cur >= want) return true;
  rlimit raised = lim;
  raised.rlim_cur = want;
  if (raised.rlim_max < want) raised.rlim_max = want;
  if (::setrlimit(RLIMIT_NOFILE, &raised) == 0) return true;
  lim.rlim_cur = lim.rlim_max;
  ::setrlimit(RLIMIT_NOFILE, &lim);
  if (lim.rlim_cur >= count + 1024) return true;
  // The run names the machine's limit: every simulated client is a
  // descriptor of the process that drives it (docs/simulator.md).
  const auto fit = lim.rlim_cur > 1024 ? lim.rlim_cur - 1024 : 0;
  r_.failures.push_back("RLIMIT_NOFILE (" + std::to_string(lim.rlim_cur) + ") is too small for " +
                        std::to_string(count) + " clients: each is a descriptor of this process, and " +
                        std::to_string(fit) + " fit (1,024 are kept for the servers' channels)" +
                        (role_ == role::host ? " (node " + std::to_string(host_node_) + "'s client host)" : ""));
  return false;
}

// Each node's first frame: its server's status, socket path and baseline.
bool driver::read_ready() {
  r_.baseline.resize(nodes_.size());
  for (std::uint32_t n = 0; n < nodes_.size(); ++n) {
    std::string frame;
    if (!read_frame(nodes_[n].fd, frame)) {
      r_.failures.push_back("node " + std::to_string(n) + " did not start");
      continue;
    }
    reader in{frame};
    in.kind();
    const auto rc = static_cast<pmix_status_t>(in.u32());
    nodes_[n].uri = std::string{in.str()};
    r_.baseline[n] = in.stats();
    if (rc != PMIX_SUCCESS)
      r_.failures.push_back("node " + std::to_string(n) + ": server start failed: " + PMIx_Error_string(rc));
  }
  return r_.ok();
}

void driver::watch(const node_link& l, std::uint64_t tag) {
  ::fcntl(l.fd, F_SETFL, ::fcntl(l.fd, F_GETFL) | O_NONBLOCK);
  epoll_event ev{};
  ev.events = EPOLLIN;
  ev.data.u64 = tag;
  ::epoll_ctl(epoll_, EPOLL_CTL_ADD, l.fd, &ev);
}

result driver::go() {
  prepare();
  const auto count = p_.clients.size();
  running_ = static_cast<std::uint32_t>(count);

  // Two descriptors per client in this process (its socket, and the
  // server's end when node 0 serves it), plus room. When the hard limit
  // cannot hold both ends (and cannot be raised), node 0's server runs in a
  // child process too (docs/simulator.md).
  rlimit lim{};
  ::getrlimit(RLIMIT_NOFILE, &lim);
  if (lim.rlim_cur < 2 * count + 1024) {
    if (!set_descriptor_limit(count, 2 * count + 1024)) return r_;
    ::getrlimit(RLIMIT_NOFILE, &lim);
    node0_forked_ = lim.rlim_cur < 2 * count + 1024;
  }
  accept_at_once(count);

  // Made before the servers start, so that their descriptor counts (the
  // check that nothing is left open) include it from the start.
  epoll_ = ::epoll_create1(EPOLL_CLOEXEC);
  start_nodes();
  if (!r_.ok()) return r_;
  if (!read_ready()) {
    finish_nodes();
    return r_;
  }
  for (std::uint32_t n = 0; n < nodes_.size(); ++n) watch(nodes_[n], ctl_tag + n);
  run_clients();
  check_end();
  for (auto c : mine_)
    if (cs(c).fd >= 0) ::close(cs(c).fd);
  finish_nodes();
  return r_;
}

// The clients' loop (this process's clients: all of them, or one node's in
// a client host), with the control channels beside them.
void driver::run_clients() {
  const auto start = clock_type::now();
  const auto mine = [this](std::uint32_t c) { return role_ != role::host || p_.clients[c].node == host_node_; };
  // Clients that begin by waiting at a gate take their place first; then
  // every connect goes out at once, in the seeded launch order.
  for (auto c : mine_)
    if (p_.programs[p_.clients[c].program].front().kind != op::connect) advance(c);
  for (auto c : p_.launch_order)
    if (mine(c)) advance(c);
  std::vector<epoll_event> events(1024);
  auto last_progress = clock_type::now();
  auto last_bar = last_progress;
  std::uint64_t last_steps = 0;
  while (running_ > 0 || pending_actions_ > 0) {
    const int got = wait_events(events, retry_.empty() ? 100 : 1);
    for (int k = 0; k < got; ++k)
      if (!dispatch(events[k])) {
        const auto c = static_cast<std::uint32_t>(events[k].data.u64);
        const auto ev = events[k].events;
        if ((ev & EPOLLOUT) && cs(c).fd >= 0) writable(c);
        if ((ev & (EPOLLIN | EPOLLHUP | EPOLLERR | EPOLLRDHUP)) && cs(c).fd >= 0) readable(c);
      }
    if (!retry_.empty()) {
      std::vector<std::uint32_t> again;
      again.swap(retry_);
      for (auto c : again) advance(c);
    }
    const auto now = clock_type::now();
    if (steps_done_ != last_steps) {
      last_steps = steps_done_;
      last_progress = now;
    } else if (now - last_progress > std::chrono::seconds(p_.opt.stuck_s)) {
      std::uint32_t stuck = 0, first = 0;
      for (auto c : mine_)
        if (!cs(c).done && stuck++ == 0) first = c;
      // (None may be left: the run then waits on a gate's action.)
      r_.failures.push_back("stuck for " + std::to_string(p_.opt.stuck_s) + " s: " + std::to_string(stuck) +
                            " clients not done" +
                            (stuck == 0 ? std::string{}
                                        : ", the first (client " + std::to_string(first) + ") at step " +
                                              std::to_string(cs(first).pc) + " (" + op_name(current(first).kind) +
                                              ")"));
      break;
    }
    if (p_.opt.progress && role_ == role::all && now - last_bar > std::chrono::milliseconds(100)) {
      last_bar = now;
      const int width = 40;
      const int filled = static_cast<int>(width * steps_done_ / std::max<std::uint64_t>(1, steps_total_));
      std::fprintf(stderr, "\r[%s%s] %3d%% %llu/%llu steps", std::string(filled, '#').c_str(),
                   std::string(width - filled, '.').c_str(), static_cast<int>(100 * steps_done_ / steps_total_),
                   static_cast<unsigned long long>(steps_done_), static_cast<unsigned long long>(steps_total_));
    }
  }
  r_.wall_s = std::chrono::duration<double>(clock_type::now() - start).count();
  if (p_.opt.progress && role_ == role::all) std::fprintf(stderr, "\r%60s\r", "");
}

// A control channel's event (true), or a client's (false).
bool driver::dispatch(const epoll_event& e) {
  const auto tag = e.data.u64;
  if (tag < ctl_tag) return false;
  const bool out = (e.events & EPOLLOUT) != 0;
  const bool in = (e.events & (EPOLLIN | EPOLLHUP | EPOLLERR)) != 0;
  // A channel that ends stops the run: its process is gone.
  auto serve = [&](node_link& l, const std::string& who, const std::function<void(std::string_view)>& on_message) {
    if (out) link_writable(l, tag);
    if (!in || link_read(l, on_message)) return;
    r_.failures.push_back(who + " went away");
    ::epoll_ctl(epoll_, EPOLL_CTL_DEL, l.fd, nullptr);
    running_ = 0;
    pending_actions_ = 0;
  };
  if (tag >= host_tag && role_ == role::host) {
    serve(coord_, "the driver", [this](std::string_view m) { coord_message(m); });
  } else if (tag >= host_tag) {
    const auto n = static_cast<std::uint32_t>(tag - host_tag);
    serve(hosts_[n], "node " + std::to_string(n) + "'s client host", [this, n](std::string_view m) { host_message(n, m); });
  } else {
    const auto n = static_cast<std::uint32_t>(tag - ctl_tag);
    serve(nodes_[n], "node " + std::to_string(n) + "'s server", [this, n](std::string_view m) { node_message(n, m); });
  }
  return true;
}

// The trace and the end's checks: every client's sequence combined in client
// order; the servers' counters exact and nothing left open.
void driver::check_end() {
  if (trace_steps_ && role_ == role::all)
    for (auto c : mine_) std::fprintf(stderr, "client %u: %s\n", c, cs(c).steps.c_str());
  if (trace_steps_ && role_ == role::coordinator)
    for (const auto& s : host_steps_) std::fputs(s.c_str(), stderr);
  std::uint64_t h = fnv_offset;
  for (std::uint32_t c = 0; c < p_.clients.size(); ++c)
    h = fnv(fnv(h, c), role_ == role::coordinator ? hashes_[c] : cs(c).hash);
  r_.trace = h;
  if (!r_.ok()) return;
  // Every connection the servers took is closed again (their descriptors
  // back to the start's), and every connect and finalize reached the host
  // once.
  std::vector<epoll_event> events(64);
  for (int attempt = 0; attempt < 100; ++attempt) {
    bool done = false;
    call_nodes([](std::uint32_t id) { return writer{ctl::stats}.u32(id).done(); },
               [&](pmix_status_t, std::vector<node_stats> s) {
                 r_.end = std::move(s);
                 done = true;
               });
    while (!done && r_.ok()) {
      const int got = wait_events(events, 100);
      for (int k = 0; k < got; ++k) dispatch(events[k]);
    }
    if (!done) return;
    bool settled = true;
    for (std::uint32_t n = 0; n < r_.end.size(); ++n) settled = settled && r_.end[n].fds == r_.baseline[n].fds;
    if (settled) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  for (std::uint32_t n = 0; n < r_.end.size(); ++n) {
    const auto& e = r_.end[n];
    const auto tag = "node " + std::to_string(n) + ": ";
    if (e.fds != r_.baseline[n].fds)
      r_.failures.push_back(tag + std::to_string(e.fds - r_.baseline[n].fds) + " descriptors left open");
    // Under faults a broken client's connect or finalize may have
    // reached the host while its answer was lost.
    const auto lost = broken_on_[n];
    if (e.connected < expect_connected_[n] || e.connected > expect_connected_[n] + maybe_connected_[n] + lost)
      r_.failures.push_back(tag + "client_connected called " + std::to_string(e.connected) + " times, expected " +
                            std::to_string(expect_connected_[n]) +
                            (maybe_connected_[n] > 0 ? " (+ up to " + std::to_string(maybe_connected_[n]) + ")" : ""));
    if (e.finalized < expect_finalized_[n] || e.finalized > expect_finalized_[n] + lost)
      r_.failures.push_back(tag + "client_finalized called " + std::to_string(e.finalized) + " times, expected " +
                            std::to_string(expect_finalized_[n]));
  }
}

// ---- the client hosts (--spread) ------------------------------------------------

result driver::go_spread() {
  role_ = role::coordinator;
  prepare();
  hashes_.assign(p_.clients.size(), fnv_offset);
  // Each host holds two descriptors per client of its node.
  const std::uint64_t most = *std::max_element(r_.per_node.begin(), r_.per_node.end());
  rlimit lim{};
  ::getrlimit(RLIMIT_NOFILE, &lim);
  if (lim.rlim_max < 2 * most + 1024) {
    r_.failures.push_back("RLIMIT_NOFILE (" + std::to_string(lim.rlim_max) + ") is too small for " +
                          std::to_string(most) + " clients on one node: each client host holds two descriptors "
                          "for each of its node's clients, and " +
                          std::to_string(lim.rlim_max > 1024 ? (lim.rlim_max - 1024) / 2 : 0) + " fit");
    return r_;
  }
  epoll_ = ::epoll_create1(EPOLL_CLOEXEC);
  start_hosts();
  if (!r_.ok() || !read_ready()) {
    for (auto& h : hosts_)
      if (h.fd >= 0) write_all(h.fd, writer{ctl::host_finish}.done());
    finish_nodes();
    return r_;
  }
  const auto start = clock_type::now();
  for (std::uint32_t n = 0; n < nodes_.size(); ++n) {
    write_all(hosts_[n].fd, writer{ctl::host_start}.str(nodes_[n].uri).done());
    watch(nodes_[n], ctl_tag + n);
    watch(hosts_[n], host_tag + n);
  }
  running_ = static_cast<std::uint32_t>(hosts_.size());
  std::vector<epoll_event> events(256);
  auto last_heard = clock_type::now();
  while (running_ > 0 || pending_actions_ > 0) {
    const int got = wait_events(events, 100);
    for (int k = 0; k < got; ++k) dispatch(events[k]);
    if (got > 0) last_heard = clock_type::now();
    // Each host fails its own stuck clients; a host that says nothing at
    // all for longer is stuck itself.
    if (clock_type::now() - last_heard > std::chrono::seconds(p_.opt.stuck_s + 30)) {
      r_.failures.push_back("stuck: no client host said anything for " + std::to_string(p_.opt.stuck_s + 30) + " s");
      break;
    }
  }
  r_.wall_s = std::chrono::duration<double>(clock_type::now() - start).count();
  check_end();
  for (auto& h : hosts_) {
    ::fcntl(h.fd, F_SETFL, ::fcntl(h.fd, F_GETFL) & ~O_NONBLOCK);
    write_all(h.fd, h.out);
    write_all(h.fd, writer{ctl::host_finish}.done());
  }
  finish_nodes();
  for (auto& h : hosts_)
    if (h.fd >= 0) ::close(h.fd);
  return r_;
}

void driver::start_hosts() {
  if (!make_tmpdir()) return;
  const auto k = p_.opt.nodes;
  nodes_.resize(k);
  hosts_.resize(k);
  std::vector<int> server_end(k, -1), host_end(k, -1);
  for (std::uint32_t n = 0; n < k; ++n) {
    int a[2], b[2];
    if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, a) != 0 ||
        ::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, b) != 0) {
      r_.failures.push_back("socketpair failed");
      return;
    }
    nodes_[n].fd = a[0];
    server_end[n] = a[1];
    hosts_[n].fd = b[0];
    host_end[n] = b[1];
  }
  for (std::uint32_t n = 0; n < k; ++n) {
    std::vector<int> others;
    for (std::uint32_t m = 0; m < k; ++m) {
      others.push_back(nodes_[m].fd);
      others.push_back(hosts_[m].fd);
      if (m != n) others.push_back(server_end[m]), others.push_back(host_end[m]);
    }
    nodes_[n].pid = fork_node(n, others, [&](const std::string& dir) {
      driver host{p_, hooks_};
      return host.go_host(n, server_end[n], host_end[n], dir);
    });
    ::close(server_end[n]);
    ::close(host_end[n]);
  }
}

// A node's client host: its server in a thread (its control channel goes
// to the driver, as a forked node's does) and its clients in this thread;
// gates and crashes go to the driver, which opens the gates.
int driver::go_host(std::uint32_t node, int ctl_fd, int coord_fd, const std::string& dir) {
  role_ = role::host;
  host_node_ = node;
  coord_.fd = coord_fd;
  prepare();
  for (const auto& c : p_.clients) running_ += c.node == node ? 1 : 0;
  if (!set_descriptor_limit(running_, 2 * std::uint64_t{running_} + 1024)) running_ = 0;
  accept_at_once(running_);
  epoll_ = ::epoll_create1(EPOLL_CLOEXEC);
  // The server starts after everything above exists (its descriptor and
  // memory baselines do not count them).
  node0_ = std::thread([this, node, ctl_fd, dir] {
    run_node(p_, node, ctl_fd, dir);
    ::close(ctl_fd);
  });
  std::string frame;
  if (read_frame(coord_.fd, frame)) {
    reader in{frame};
    if (in.kind() == ctl::host_start) {
      nodes_.resize(p_.opt.nodes);
      nodes_[node].uri = std::string{in.str()};
      watch(coord_, host_tag);
      if (running_ > 0) run_clients();
    }
  }
  for (auto c : mine_)
    if (cs(c).fd >= 0) close_client(c);
  ::fcntl(coord_.fd, F_SETFL, ::fcntl(coord_.fd, F_GETFL) & ~O_NONBLOCK);
  write_all(coord_.fd, coord_.out);
  write_all(coord_.fd, host_results());
  // Until the driver says the run is over (the gates opened after this
  // host's clients ended may still matter to the others).
  while (read_frame(coord_.fd, frame)) {
    reader in{frame};
    if (in.kind() == ctl::host_finish) break;
  }
  if (node0_.joinable()) node0_.join();
  ::close(epoll_);
  ::close(coord_.fd);
  return 0;
}

// What a host's clients did, for the driver's result.
std::string driver::host_results() {
  writer w{ctl::host_done};
  w.u32(static_cast<std::uint32_t>(r_.failures.size()));
  for (const auto& f : r_.failures) w.str(f);
  w.i64(static_cast<std::int64_t>(r_.ops)).i64(static_cast<std::int64_t>(r_.bytes_in));
  w.i64(static_cast<std::int64_t>(r_.bytes_shared)).i64(static_cast<std::int64_t>(r_.broken));
  w.i64(expect_connected_[host_node_]).i64(expect_finalized_[host_node_]);
  w.i64(maybe_connected_[host_node_]).i64(broken_on_[host_node_]);
  for (const auto& l : r_.latency_us) {
    w.u32(static_cast<std::uint32_t>(l.size()));
    for (auto v : l) w.u32(v);
  }
  std::uint32_t mine = 0;
  for (const auto& c : p_.clients) mine += c.node == host_node_ ? 1 : 0;
  w.u32(mine);
  std::string steps;
  for (auto c : mine_) {
    if (p_.clients[c].node != host_node_) continue;
    w.u32(c).i64(static_cast<std::int64_t>(cs(c).hash));
    if (trace_steps_) steps += "client " + std::to_string(c) + ": " + cs(c).steps + "\n";
  }
  w.str(steps);
  return w.done();
}

void driver::host_message(std::uint32_t n, std::string_view payload) {
  reader in{payload};
  switch (in.kind()) {
    case ctl::host_arrive:
      arrive(in.u32());
      return;
    case ctl::host_break: {
      const auto ns = in.u32();
      break_nspace(ns, static_cast<pmix_status_t>(in.u32()));
      return;
    }
    case ctl::host_done: {
      for (auto k = in.u32(); k > 0 && in.ok(); --k) {
        std::string f{in.str()};
        if (r_.failures.size() < 20) r_.failures.push_back("node " + std::to_string(n) + ": " + f);
        else if (r_.failures.size() == 20) r_.failures.push_back("... (more failures not listed)");
      }
      r_.ops += static_cast<std::uint64_t>(in.i64());
      r_.bytes_in += static_cast<std::uint64_t>(in.i64());
      r_.bytes_shared += static_cast<std::uint64_t>(in.i64());
      r_.broken += static_cast<std::uint64_t>(in.i64());
      expect_connected_[n] = in.i64();
      expect_finalized_[n] = in.i64();
      maybe_connected_[n] = in.i64();
      broken_on_[n] = in.i64();
      for (auto& l : r_.latency_us)
        for (auto k = in.u32(); k > 0 && in.ok(); --k) l.push_back(in.u32());
      for (auto k = in.u32(); k > 0 && in.ok(); --k) {
        const auto c = in.u32();
        const auto h = static_cast<std::uint64_t>(in.i64());
        if (c < hashes_.size()) hashes_[c] = h;
      }
      host_steps_.emplace_back(in.str());
      if (!in.ok()) r_.failures.push_back("node " + std::to_string(n) + "'s client host sent a malformed result");
      --running_;
      return;
    }
    default:
      return;
  }
}

void driver::coord_message(std::string_view payload) {
  reader in{payload};
  if (in.kind() == ctl::host_open) open_gate(in.u32());
}

// ---- control channels ------------------------------------------------------------

void driver::link_send(node_link& l, std::uint64_t tag, std::string frame) {
  if (l.out.empty())
    l.out = std::move(frame);
  else
    l.out += frame;
  if (l.waiting || l.dirty) return;
  l.dirty = true;
  dirty_.push_back(tag);
}

node_link& driver::link_of(std::uint64_t tag) {
  if (tag >= host_tag) return role_ == role::host ? coord_ : hosts_[tag - host_tag];
  return nodes_[tag - ctl_tag];
}

void driver::flush_links() {
  // link_flush sends nothing new: the list does not change under it.
  for (auto tag : dirty_) {
    auto& l = link_of(tag);
    l.dirty = false;
    if (!l.waiting) link_flush(l, tag);
  }
  dirty_.clear();
}

int driver::wait_events(std::vector<epoll_event>& events, int timeout_ms) {
  flush_links();
  return ::epoll_wait(epoll_, events.data(), static_cast<int>(events.size()), timeout_ms);
}

// Writes what the channel takes; the rest waits for EPOLLOUT.
void driver::link_flush(node_link& l, std::uint64_t tag) {
  std::size_t done = 0;
  while (done < l.out.size()) {
    const auto k = ::write(l.fd, l.out.data() + done, l.out.size() - done);
    if (k > 0) {
      done += static_cast<std::size_t>(k);
      continue;
    }
    if (k < 0 && errno == EINTR) continue;
    break;
  }
  l.out.erase(0, done);
  if (l.out.empty()) return;
  l.waiting = true;
  epoll_event ev{};
  ev.events = EPOLLIN | EPOLLOUT;
  ev.data.u64 = tag;
  ::epoll_ctl(epoll_, EPOLL_CTL_MOD, l.fd, &ev);
}

void driver::link_writable(node_link& l, std::uint64_t tag) {
  if (!l.waiting) return;
  l.waiting = false;
  epoll_event ev{};
  ev.events = EPOLLIN;
  ev.data.u64 = tag;
  ::epoll_ctl(epoll_, EPOLL_CTL_MOD, l.fd, &ev);
  link_flush(l, tag);
}

// Reads what the channel has and hands on each whole frame; false once the
// other end is gone.
bool driver::link_read(node_link& l, const std::function<void(std::string_view)>& on_message) {
  char buf[65536];
  bool open = true;
  for (;;) {
    const auto k = ::read(l.fd, buf, sizeof buf);
    if (k < 0 && errno == EINTR) continue;
    if (k < 0) break;
    if (k == 0) {
      open = false;
      break;
    }
    l.in.append(buf, static_cast<std::size_t>(k));
    // A short read took all there was; the (level-triggered) epoll says
    // when more comes.
    if (static_cast<std::size_t>(k) < sizeof buf) break;
  }
  std::size_t pos = 0;
  std::string_view payload;
  while (take_frame(l.in, pos, payload)) on_message(payload);
  l.in.erase(0, pos);
  return open;
}

void driver::finish_nodes() {
  for (std::uint32_t n = 0; n < nodes_.size(); ++n) {
    if (nodes_[n].fd < 0) continue;
    ::fcntl(nodes_[n].fd, F_SETFL, ::fcntl(nodes_[n].fd, F_GETFL) & ~O_NONBLOCK);
    write_all(nodes_[n].fd, nodes_[n].out);
    write_all(nodes_[n].fd, writer{ctl::finalize}.done());
  }
  if (faulted_) {
    // Each node's fault plane report: its set hash joins the run's, its
    // violations are the run's failures.
    for (std::uint32_t n = 0; n < nodes_.size(); ++n) {
      std::string frame;
      bool got = false;
      while (nodes_[n].fd >= 0 && read_frame(nodes_[n].fd, frame)) {
        reader in{frame};
        if (in.kind() != ctl::faults_report) continue;
        const auto st = static_cast<pmix_status_t>(in.u32());
        const std::string report{in.str()};
        got = true;
        std::stringstream lines{report};
        std::string line;
        bool violated = false;
        while (std::getline(lines, line)) {
          if (line.empty()) continue;
          r_.fault_report.push_back("node " + std::to_string(n) + ": " + line);
          if (line.rfind("violation ", 0) == 0) {
            violated = true;
            r_.failures.push_back("node " + std::to_string(n) + ": fault plane " + line);
          }
          if (line.rfind("injected ", 0) == 0) ++r_.injected;
          // The set hash: the decisions whatever their order (the
          // plane's trace hash follows the order, which the server's
          // threads may change from run to run).
          const auto at = line.find("set hash ");
          if (at != std::string::npos) r_.trace = fnv(r_.trace, std::strtoull(line.c_str() + at + 9, nullptr, 16));
        }
        if (st != PMIX_SUCCESS && !violated)
          r_.failures.push_back("node " + std::to_string(n) + ": fault plane check: " + PMIx_Error_string(st));
        break;
      }
      if (!got) r_.failures.push_back("node " + std::to_string(n) + ": no fault plane report");
    }
  }
  if (node0_.joinable()) node0_.join();
  for (std::uint32_t n = 0; n < nodes_.size(); ++n) {
    if (nodes_[n].pid > 0) {
      int status = 0;
      ::waitpid(nodes_[n].pid, &status, 0);
      if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
        r_.failures.push_back("node " + std::to_string(n) + "'s server process did not end cleanly");
    }
    if (nodes_[n].fd >= 0) ::close(nodes_[n].fd);
    nodes_[n].fd = -1;
  }
  if (epoll_ >= 0) ::close(epoll_);
  epoll_ = -1;
  if (!tmpdir_.empty()) {
    const std::string cmd = "rm -rf '" + tmpdir_ + "'";
    [[maybe_unused]] int rc = std::system(cmd.c_str());
  }
}

// ---- clients ------------------------------------------------------------------

void driver::fail(std::uint32_t c, const std::string& what) {
  const auto& who = p_.clients[c];
  std::string name = who.tool ? "tool " + std::to_string(who.rank)
                              : p_.nspaces[who.nspace].name + ":" + std::to_string(who.rank);
  if (r_.failures.size() < 20)
    r_.failures.push_back("client " + std::to_string(c) + " (" + name + ") step " + std::to_string(cs(c).pc) + " " +
                          op_name(current(c).kind) + ": " + what);
  else if (r_.failures.size() == 20)
    r_.failures.push_back("... (more failures not listed)");
}

bool driver::open_socket(std::uint32_t c) {
  auto& s = cs(c);
  const auto& path = nodes_[p_.clients[c].node].uri;
  const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) {
    fail(c, std::string{"socket: "} + std::strerror(errno));
    return false;
  }
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::snprintf(addr.sun_path, sizeof addr.sun_path, "%s", path.c_str());
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    const int e = errno;
    ::close(fd);
    if (e == EAGAIN) {
      retry_.push_back(c);  // the listen backlog is full: again next turn
      return false;
    }
    fail(c, std::string{"connect: "} + std::strerror(e));
    return false;
  }
  s.fd = fd;
  epoll_event ev{};
  ev.events = EPOLLIN | EPOLLRDHUP;
  ev.data.u64 = c;
  ::epoll_ctl(epoll_, EPOLL_CTL_ADD, fd, &ev);
  return true;
}

void driver::send(std::uint32_t c, std::string frame) {
  auto& s = cs(c);
  if (!s.out.empty()) {
    s.out += frame;
    return;
  }
  std::size_t done = 0;
  while (done < frame.size()) {
    const auto n = ::send(s.fd, frame.data() + done, frame.size() - done, MSG_NOSIGNAL);
    if (n > 0) {
      done += static_cast<std::size_t>(n);
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) break;
    return;  // the reader sees the loss
  }
  if (done < frame.size()) {
    s.out.assign(frame, done, std::string::npos);
    epoll_event ev{};
    ev.events = EPOLLIN | EPOLLRDHUP | EPOLLOUT;
    ev.data.u64 = c;
    ::epoll_ctl(epoll_, EPOLL_CTL_MOD, s.fd, &ev);
    s.writable_wait = true;
  }
}

void driver::writable(std::uint32_t c) {
  auto& s = cs(c);
  std::string rest;
  rest.swap(s.out);
  s.writable_wait = false;
  epoll_event ev{};
  ev.events = EPOLLIN | EPOLLRDHUP;
  ev.data.u64 = c;
  ::epoll_ctl(epoll_, EPOLL_CTL_MOD, s.fd, &ev);
  send(c, std::move(rest));
}

void driver::request(std::uint32_t c, proto::body kind, const std::string& message) {
  auto& s = cs(c);
  s.awaiting = s.next_id++;
  s.started = now_us();
  send(c, proto::to_frame(s.awaiting, kind, message));
}

void driver::close_client(std::uint32_t c) {
  auto& s = cs(c);
  if (s.fd < 0) return;
  ::epoll_ctl(epoll_, EPOLL_CTL_DEL, s.fd, nullptr);
  ::close(s.fd);
  s.fd = -1;
  std::string{}.swap(s.in);
  std::string{}.swap(s.out);
  for (int fd : s.fds) ::close(fd);
  std::vector<int>{}.swap(s.fds);
}

void driver::advance(std::uint32_t c) {
  auto& s = cs(c);
  const auto& who = p_.clients[c];
  const auto& ns = p_.nspaces[who.nspace];
  while (!s.done && s.awaiting == 0) {
    if (s.pc >= program_size(c)) {
      if (s.lost && !s.broken) {
        // Lost with nothing left to do: not in the trace (whether the end
        // of the stream came first is timing), but counted as given up.
        s.broken = true;
        ++broken_on_[who.node];
        ++r_.broken;
      }
      close_client(c);
      s.done = true;
      --running_;
      return;
    }
    const step& st = current(c);
    if (s.broken && st.kind != op::arrive && st.kind != op::wait) {
      record(c, st.kind, 0, PMIX_ERR_UNREACH);
      ++s.pc;
      ++steps_done_;
      continue;
    }
    if (s.lost && st.kind != op::arrive && st.kind != op::wait && st.kind != op::crash) {
      // A commit has no answer: it goes nowhere, as into a socket whose
      // end is not read yet. Any other step finds the connection gone.
      if (st.kind == op::commit) {
        record(c, st.kind, st.arg, PMIX_SUCCESS);
      } else {
        give_up(c, PMIX_ERR_LOST_CONNECTION);
      }
      ++s.pc;
      ++steps_done_;
      continue;
    }
    switch (st.kind) {
      case op::connect:
      case op::connect_crash: {
        if (s.fd >= 0) close_client(c);
        if (!open_socket(c)) {
          if (!r_.ok() && retry_.empty()) return;  // failed (recorded)
          return;
        }
        const bool tool = st.kind == op::connect && st.arg == 1;
        // A tool names itself (as PMIX_TOOL_NSPACE / PMIX_TOOL_RANK do):
        // "sim.tool.<t>" rank 0, so the fault plane counts each tool's
        // steps apart whatever order the tools connect in.
        const pmix::proc_id proc{tool ? "sim.tool." + std::to_string(who.rank) : ns.name, tool ? 0 : who.rank};
        const auto msg = proto::connect_request(pmix::protocol::wire_version,
                                                tool ? proto::role::tool : proto::role::client, proc,
                                                static_cast<std::int32_t>(getpid()), proto::library_version, {});
        if (st.kind == op::connect) {
          request(c, proto::body::connect, msg);
          return;
        }
        // Dies mid-init: the connect goes out, the process is gone.
        send(c, proto::to_frame(s.next_id++, proto::body::connect, msg));
        close_client(c);
        // Whether the host hears of this process depends on whether the
        // server's loop read the connect before it saw the stream end.
        ++maybe_connected_[who.node];
        break_nspace(who.nspace, PMIX_ERR_PROC_TERM_WO_SYNC);
        record(c, st.kind, 0, PMIX_SUCCESS);
        break;
      }
      case op::commit: {
        std::vector<proto::scoped_info> data(1);
        data[0].scope = PMIX_GLOBAL;
        data[0].item = pmix::info{"sim.r" + std::to_string(st.arg), pmix::value::string(value_of(who.nspace, who.rank, st.arg)), 0};
        send(c, proto::to_frame(0, proto::body::commit, proto::commit_request(data)));
        record(c, st.kind, st.arg, PMIX_SUCCESS);
        break;
      }
      case op::fence:
        request(c, proto::body::fence, proto::fence_request({}, {}, st.arg == 1));
        return;
      case op::get: {
        const auto round = st.arg >> 8, k = st.arg & 0xff;
        const auto peer = peer_of(p_.opt.seed, who.rank, round, k, ns.ranks);
        request(c, proto::body::get,
                proto::get_request(pmix::proc_id{ns.name, peer}, "sim.r" + std::to_string(round), {}));
        return;
      }
      case op::query: {
        std::vector<pmix::query> q(1);
        q[0].keys.push_back(PMIX_QUERY_NUM_PSETS);
        request(c, proto::body::query, proto::query_request(q));
        return;
      }
      case op::finalize:
        request(c, proto::body::finalize, proto::finalize_request({}));
        return;
      case op::crash:
        close_client(c);
        break_nspace(who.nspace, PMIX_ERR_PROC_TERM_WO_SYNC);
        record(c, st.kind, 0, PMIX_SUCCESS);
        break;
      case op::arrive:
        record(c, st.kind, st.arg, PMIX_SUCCESS);
        ++s.pc;
        ++steps_done_;
        arrive(st.arg);
        continue;
      case op::wait:
        if (!open_[st.arg]) {
          waiting_[st.arg].push_back(c);
          return;
        }
        record(c, st.kind, st.arg, PMIX_SUCCESS);
        break;
    }
    ++s.pc;
    ++steps_done_;
  }
}

void driver::readable(std::uint32_t c) {
  auto& s = cs(c);
  for (;;) {
    // As the client library reads: descriptors of shared data come along.
    const auto n = pmix::transport::receive_with_descriptors(s.fd, scratch_.data(), scratch_.size(), incoming_);
    s.fds.insert(s.fds.end(), incoming_.begin(), incoming_.end());
    incoming_.clear();
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return;
    if (n <= 0 && faulted_ && !s.done && !p_.clients[c].after_faults) {
      // Under faults a closed connection is an answer.
      close_client(c);
      if (s.awaiting != 0) {
        r_.latency_us[static_cast<int>(current(c).kind)].push_back(static_cast<std::uint32_t>(now_us() - s.started));
        ++r_.ops;
        s.awaiting = 0;
        give_up(c, PMIX_ERR_LOST_CONNECTION);
        ++s.pc;
        ++steps_done_;
        advance(c);
      } else {
        s.lost = true;
      }
      return;
    }
    if (n <= 0) {
      const bool expected = s.awaiting == 0;
      close_client(c);
      if (!expected) fail(c, "the server closed the connection");
      s.awaiting = 0;
      if (!expected) {
        // The client cannot go on: it is counted as done.
        s.done = true;
        --running_;
      }
      return;
    }
    // Whole frames straight from the buffer; a split one waits in `in`.
    r_.bytes_in += static_cast<std::uint64_t>(n);
    std::string_view bytes{scratch_.data(), static_cast<std::size_t>(n)};
    std::string joined;
    if (!s.in.empty()) {
      joined = std::move(s.in);
      joined.append(bytes);
      s.in.clear();
      bytes = joined;
    }
    while (bytes.size() >= 4) {
      const auto len = static_cast<std::uint32_t>(static_cast<unsigned char>(bytes[0])) << 24 |
                       static_cast<std::uint32_t>(static_cast<unsigned char>(bytes[1])) << 16 |
                       static_cast<std::uint32_t>(static_cast<unsigned char>(bytes[2])) << 8 |
                       static_cast<std::uint32_t>(static_cast<unsigned char>(bytes[3]));
      if (bytes.size() < 4 + std::size_t{len}) break;
      std::string payload{bytes.substr(4, len)};
      bytes.remove_prefix(4 + std::size_t{len});
      frame(c, std::move(payload));
      if (s.fd < 0) return;
    }
    if (!bytes.empty()) s.in.assign(bytes);
    if (static_cast<std::size_t>(n) < scratch_.size()) return;
  }
}

void driver::frame(std::uint32_t c, std::string payload) {
  auto& s = cs(c);
  proto::envelope e;
  if (!proto::parse_envelope(std::move(payload), e)) return fail(c, "malformed frame from the server");
  // Shared data it announces: mapped (and checked) as the client library
  // does, for the spot checks below.
  if (const auto size = proto::shared_size(e.kind, e.message); size > 0) {
    if (s.fds.empty()) return fail(c, "shared data announced without its descriptor");
    const int fd = s.fds.front();
    s.fds.erase(s.fds.begin());
    e.shared_owner = pmix::transport::map_shared(fd, size, e.shared);
    if (!e.shared_owner) return fail(c, "shared data refused");
    r_.bytes_shared += size;
  }
  if (e.id == 0) return;  // an event: nothing to check
  const int times = hooks_.deliver(c, static_cast<std::uint8_t>(e.kind));
  for (int t = 0; t < times && s.fd >= 0; ++t) {
    if (e.id != s.awaiting) {
      // Under faults a duplicated reply is the injected fault; the client
      // library drops a reply to no outstanding request.
      if (faulted_) continue;
      fail(c, "a reply (id " + std::to_string(e.id) + ", kind " + std::to_string(static_cast<int>(e.kind)) +
                  ") to no outstanding request");
      continue;
    }
    const step& st = current(c);
    pmix_status_t status = PMIX_ERR_UNPACK_FAILURE;
    std::uint64_t arg = 0;
    switch (st.kind) {
      case op::connect: {
        proto::connect_reply r;
        if (e.kind == proto::body::connect_reply && proto::decode(e.message, r)) status = r.status;
        if (status == PMIX_SUCCESS && !p_.clients[c].tool) {
          // Spot checks of the job data: the size the host registered.
          if (spot_checked(c)) {
            proto::job_info job;
            if (!proto::decode(r.job_shared > 0 ? e.shared : r.job, job) ||
                job.nspace != p_.nspaces[p_.clients[c].nspace].name)
              status = PMIX_ERR_UNPACK_FAILURE;
          }
        }
        arg = s.launch;
        const auto node = p_.clients[c].node;
        if (status == PMIX_SUCCESS && !p_.clients[c].tool) ++expect_connected_[node];
        break;
      }
      case op::fence: {
        proto::status_reply r;
        if (e.kind == proto::body::fence_reply && proto::decode(e.message, e.kind, r)) status = r.status;
        if (status == PMIX_SUCCESS && st.arg == 1 && spot_checked(c)) {
          // Spot check: every rank's data came.
          std::uint32_t ranks = 0;
          if (!proto::for_each_rank(r.shared > 0 ? e.shared : r.data,
                                    [&](const proto::rank_data&) { return ++ranks, true; }) ||
              ranks != p_.nspaces[p_.clients[c].nspace].ranks)
            status = PMIX_ERR_UNPACK_FAILURE;
        }
        break;
      }
      case op::get: {
        proto::status_reply r;
        if (e.kind == proto::body::get_reply && proto::decode(e.message, e.kind, r)) status = r.status;
        const auto round = st.arg >> 8, k = st.arg & 0xff;
        const auto& who = p_.clients[c];
        const auto peer = peer_of(p_.opt.seed, who.rank, round, k, p_.nspaces[who.nspace].ranks);
        arg = peer;
        if (status == PMIX_SUCCESS) {
          // The value must be the one the peer committed.
          proto::rank_data d;
          bool found = false;
          if (r.has_data && proto::decode(r.data, d))
            for (const auto& [scope, bytes] : d.items) {
              pmix::info item;
              if (proto::decode_checked_info(bytes, item) && item.key == "sim.r" + std::to_string(round)) {
                const auto* v = item.val.as_string();
                found = v != nullptr && *v == value_of(who.nspace, peer, round);
              }
            }
          if (!found) status = PMIX_ERR_BAD_PARAM;
        }
        break;
      }
      case op::query: {
        proto::info_reply r;
        if (e.kind == proto::body::info_reply && proto::decode(e.message, r)) status = r.status;
        break;
      }
      case op::finalize: {
        proto::status_reply r;
        if (e.kind == proto::body::status_reply && proto::decode(e.message, e.kind, r)) status = r.status;
        if (status == PMIX_SUCCESS && !p_.clients[c].tool) ++expect_finalized_[p_.clients[c].node];
        break;
      }
      default:
        break;
    }
    completed(c, status, arg);
  }
}

void driver::give_up(std::uint32_t c, pmix_status_t status) {
  auto& s = cs(c);
  if (s.broken) return;
  s.broken = true;
  ++broken_on_[p_.clients[c].node];
  ++r_.broken;
  record(c, current(c).kind, 1, status);
  // The process is gone, as a crashed one: the fences of its namespace
  // across nodes fail (the host's resource manager would tell them).
  if (!p_.clients[c].tool) break_nspace(p_.clients[c].nspace, PMIX_ERR_PROC_TERM_WO_SYNC);
}

void driver::completed(std::uint32_t c, pmix_status_t status, std::uint64_t arg) {
  auto& s = cs(c);
  const step& st = current(c);
  r_.latency_us[static_cast<int>(st.kind)].push_back(static_cast<std::uint32_t>(now_us() - s.started));
  ++r_.ops;
  if (status == st.also) status = st.expect;
  // Under faults an expected failure may come as another error.
  if (faulted_ && st.expect != PMIX_SUCCESS && status != PMIX_SUCCESS) status = st.expect;
  record(c, st.kind, arg, status);
  s.awaiting = 0;
  if (faulted_ && status != st.expect && !p_.clients[c].after_faults) {
    // Under faults any answer is one; the client gives up.
    close_client(c);
    give_up(c, status);
    ++s.pc;
    ++steps_done_;
    advance(c);
    return;
  }
  if (status != st.expect)
    fail(c, std::string{"status "} + PMIx_Error_string(status) + ", expected " + PMIx_Error_string(st.expect));
  s.awaiting = 0;
  if (st.kind == op::finalize || (st.kind == op::connect && status != PMIX_SUCCESS)) close_client(c);
  ++s.pc;
  ++steps_done_;
  advance(c);
}

// ---- gates --------------------------------------------------------------------

void driver::arrive(std::uint32_t g) {
  // A client host's arrivals are counted by the driver, which opens the gate.
  if (role_ == role::host) return link_send(coord_, host_tag, writer{ctl::host_arrive}.u32(g).done());
  if (++arrived_[g] != p_.gates[g].expected) return;
  if (std::getenv("PMIXSIM_DEBUG")) std::fprintf(stderr, "gate %u opens (action %d)\n", g, static_cast<int>(p_.gates[g].action));
  const auto action = p_.gates[g].action;
  auto opened = [this, g](pmix_status_t st, std::vector<node_stats>) {
    --pending_actions_;
    if (st != PMIX_SUCCESS) r_.failures.push_back(std::string{"deregistration failed: "} + PMIx_Error_string(st));
    open_gate(g);
  };
  auto deregister = [this](const std::string& ns, const std::vector<std::uint32_t>& ranks) {
    return [ns, ranks](std::uint32_t id) {
      writer w{ctl::deregister};
      w.u32(id).str(ns).u32(static_cast<std::uint32_t>(ranks.size()));
      for (auto r : ranks) w.u32(r);
      return w.done();
    };
  };
  ++pending_actions_;
  switch (action) {
    case gate_action::none:
      --pending_actions_;
      return open_gate(g);
    case gate_action::measure_memory:
      return call_nodes([](std::uint32_t id) { return writer{ctl::stats}.u32(id).done(); },
                        [this, g](pmix_status_t, std::vector<node_stats> s) {
                          --pending_actions_;
                          r_.connected = std::move(s);
                          std::int64_t delta = 0;
                          for (std::uint32_t n = 0; n < r_.connected.size(); ++n)
                            delta += r_.connected[n].heap - r_.baseline[n].heap;
                          r_.memory_per_client = static_cast<double>(delta) / p_.gates[g].expected;
                          open_gate(g);
                        });
    case gate_action::deregister_ranks:
      return call_nodes(deregister(p_.nspaces[0].name, p_.leavers), [this, opened](pmix_status_t st, auto s) {
        break_nspace(0, PMIX_ERR_UNREACH);
        opened(st, std::move(s));
      });
    case gate_action::deregister_victim:
      return call_nodes(deregister(p_.nspaces[p_.victim].name, {}), opened);
    case gate_action::deregister_probe:
      return call_nodes(deregister(p_.nspaces[p_.probe].name, {}), opened);
    case gate_action::deregister_all: {
      // Every namespace but the victim (already gone) and the probe
      // namespace (served next), one after the other; under faults, then
      // every node's fault plane is disarmed for the probe.
      auto left = std::make_shared<std::vector<std::uint32_t>>();
      for (std::uint32_t k = 0; k < p_.nspaces.size(); ++k)
        if (k != p_.victim && k != p_.probe) left->push_back(k);
      auto next = std::make_shared<std::function<void(pmix_status_t, std::vector<node_stats>)>>();
      *next = [this, left, next, opened, deregister](pmix_status_t st, std::vector<node_stats> s) {
        if (left->empty() || st != PMIX_SUCCESS) {
          if (st == PMIX_SUCCESS && faulted_)
            call_nodes([](std::uint32_t id) { return writer{ctl::disarm}.u32(id).done(); },
                       [this, opened](pmix_status_t disarmed, std::vector<node_stats> s2) {
                         if (disarmed != PMIX_SUCCESS)
                           r_.failures.push_back(std::string{"disarming the fault planes failed: "} +
                                                 PMIx_Error_string(disarmed));
                         opened(PMIX_SUCCESS, std::move(s2));
                       });
          else
            opened(st, std::move(s));
          *next = nullptr;  // breaks the cycle
          return;
        }
        const auto k = left->front();
        left->erase(left->begin());
        call_nodes(deregister(p_.nspaces[k].name, {}), *next);
      };
      return (*next)(PMIX_SUCCESS, {});
    }
  }
}

void driver::open_gate(std::uint32_t g) {
  open_[g] = true;
  if (role_ == role::coordinator) {
    for (std::uint32_t n = 0; n < hosts_.size(); ++n) link_send(hosts_[n], host_tag + n, writer{ctl::host_open}.u32(g).done());
    return;
  }
  std::vector<std::uint32_t> waiting;
  waiting.swap(waiting_[g]);
  for (auto c : waiting) advance(c);
}

// ---- nodes and the fabric -------------------------------------------------------

void driver::call_nodes(std::function<std::string(std::uint32_t)> make,
                        std::function<void(pmix_status_t, std::vector<node_stats>)> done) {
  const auto key = next_call_;
  calls_[key] = call{static_cast<std::uint32_t>(nodes_.size()), PMIX_SUCCESS,
                     std::vector<node_stats>(nodes_.size()), std::move(done)};
  for (std::uint32_t n = 0; n < nodes_.size(); ++n) {
    const auto id = next_call_++;
    call_of_[id] = key;
    node_send(n, make(id));
  }
}

void driver::node_send(std::uint32_t n, std::string frame) { link_send(nodes_[n], ctl_tag + n, std::move(frame)); }

void driver::break_nspace(std::uint32_t ns, pmix_status_t st) {
  // The first reason stays, as the server's answer does (docs/simulator.md).
  if (broken_[ns] != PMIX_SUCCESS) return;
  broken_[ns] = st;
  // The inter-node fences are the driver's.
  if (role_ == role::host)
    return link_send(coord_, host_tag, writer{ctl::host_break}.u32(ns).u32(static_cast<std::uint32_t>(st)).done());
  const auto& name = p_.nspaces[ns].name;
  for (auto it = fences_.begin(); it != fences_.end();) {
    if (it->first.compare(0, name.size() + 1, name + ":") != 0) {
      ++it;
      continue;
    }
    for (std::uint32_t n = 0; n < nodes_.size(); ++n)
      if (it->second.arrived[n])
        node_send(n, writer{ctl::fence_done}.u32(it->second.contributions[n].first).u32(static_cast<std::uint32_t>(st)).str({}).done());
    it = fences_.erase(it);
  }
}

void driver::node_message(std::uint32_t n, std::string_view payload) {
  reader in{payload};
  switch (in.kind()) {
    case ctl::fence: {
      const auto id = in.u32();
      const std::string signature{in.str()};
      const auto data = in.str();
      // The namespace of the fence's participants (one namespace here).
      std::uint32_t ns = 0;
      for (std::uint32_t k = 0; k < p_.nspaces.size(); ++k)
        if (signature.compare(0, p_.nspaces[k].name.size() + 1, p_.nspaces[k].name + ":") == 0) ns = k;
      if (broken_[ns] != PMIX_SUCCESS) {
        node_send(n, writer{ctl::fence_done}.u32(id).u32(static_cast<std::uint32_t>(broken_[ns])).str({}).done());
        return;
      }
      auto& book = fences_[signature];
      if (book.arrived.empty()) {
        book.arrived.assign(nodes_.size(), false);
        book.contributions.resize(nodes_.size());
      }
      if (book.arrived[n]) {
        r_.failures.push_back("node " + std::to_string(n) + " contributed twice to fence " + signature);
        return;
      }
      book.arrived[n] = true;
      book.contributions[n] = {id, std::string{data}};
      if (++book.count < p_.nspaces[ns].nodes_used(p_.opt.nodes)) return;
      // Every node's data, in node order: each node gets the same bytes.
      std::string all;
      for (const auto& [ignored, d] : book.contributions) all += d;
      for (std::uint32_t m = 0; m < nodes_.size(); ++m)
        if (book.arrived[m])
          node_send(m, writer{ctl::fence_done}.u32(book.contributions[m].first).u32(PMIX_SUCCESS).str(all).done());
      fences_.erase(signature);
      return;
    }
    case ctl::dmodex: {
      const auto id = in.u32();
      const std::string name{in.str()};
      const auto rank = in.u32();
      std::uint32_t owner = 0;
      for (const auto& ns : p_.nspaces)
        if (ns.name == name) owner = ns.node_of(rank, p_.opt.nodes);
      const auto ask = next_ask_++;
      dmodex_[ask] = {n, id};
      node_send(owner, writer{ctl::dmodex_req}.u32(ask).str(name).u32(rank).done());
      return;
    }
    case ctl::dmodex_data: {
      const auto ask = in.u32();
      const auto st = in.u32();
      const auto data = in.str();
      auto it = dmodex_.find(ask);
      if (it == dmodex_.end()) return;
      node_send(it->second.first, writer{ctl::dmodex_done}.u32(it->second.second).u32(st).str(data).done());
      dmodex_.erase(it);
      return;
    }
    case ctl::reply: {
      const auto id = in.u32();
      const auto st = static_cast<pmix_status_t>(in.u32());
      const auto stats = in.stats();
      if (std::getenv("PMIXSIM_DEBUG")) std::fprintf(stderr, "reply %u from node %u: %d\n", id, n, st);
      auto it = call_of_.find(id);
      if (it == call_of_.end()) return;
      auto& cl = calls_[it->second];
      const auto key = it->second;
      call_of_.erase(it);
      cl.stats[n] = stats;
      if (st != PMIX_SUCCESS && cl.status == PMIX_SUCCESS) cl.status = st;
      if (--cl.left > 0) return;
      auto done = std::move(cl.done);
      auto status = cl.status;
      auto all = std::move(cl.stats);
      calls_.erase(key);
      done(status, std::move(all));
      return;
    }
    default:
      return;
  }
}

}  // namespace

result run(const plan& p, fault_hooks& hooks) {
  driver d{p, hooks};
  // Across nodes, each node's clients go to its server's process when asked
  // or when this process cannot hold a descriptor for every client.
  rlimit lim{};
  ::getrlimit(RLIMIT_NOFILE, &lim);
  if (p.opt.nodes > 1 && (p.opt.spread || lim.rlim_max < p.clients.size() + 1024)) return d.go_spread();
  return d.go();
}

}  // namespace pmixsim
