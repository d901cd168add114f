// pmixsim: N simulated clients against real PMIx servers in one process
// (docs/simulator.md). The types every part shares: the plan of a run (what
// the nodes register, what each simulated client does), the control channel
// between the driver and the node servers, and the figures a run reports.
#pragma once

#include <pmix_common.h>

#include <cstdint>
#include <cstring>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace pmixsim {

// ---- The plan ----------------------------------------------------------------

// One namespace the nodes register: `ranks` ranks spread in blocks over the
// nodes (rank r runs on node r / ceil(ranks / nodes)).
struct nspace_plan {
  std::string name;
  std::uint32_t ranks = 0;
  std::uint32_t per_node(std::uint32_t nodes) const { return (ranks + nodes - 1) / nodes; }
  std::uint32_t node_of(std::uint32_t rank, std::uint32_t nodes) const { return rank / per_node(nodes); }
  // How many nodes host at least one rank.
  std::uint32_t nodes_used(std::uint32_t nodes) const {
    return ranks == 0 ? 0 : (ranks - 1) / per_node(nodes) + 1;
  }
};

// What one step of a simulated client does. A client runs its program one
// step at a time: a step that talks to the server sends one request and
// completes when its reply comes (checked against `expect`).
enum class op : std::uint8_t {
  connect,       // socket + ConnectRequest; arg: 1 = as a tool
  commit,        // CommitRequest of one key (no reply); arg: the round
  fence,         // FenceRequest over the namespace; arg: 1 = collect data
  get,           // GetRequest of a peer's key; arg: the round; the peer is seeded
  query,         // QueryRequest (PMIX_QUERY_NUM_PSETS)
  finalize,      // FinalizeRequest, then close
  crash,         // close the socket without a word
  connect_crash, // send a ConnectRequest and close without reading the answer
  arrive,        // count at gate `arg` (the gate's action runs at the last one)
  wait,          // wait for gate `arg` to open
};
const char* op_name(op o);
inline constexpr int op_count = 10;

struct step {
  op kind = op::connect;
  std::uint32_t arg = 0;
  pmix_status_t expect = PMIX_SUCCESS;
  // Another status accepted (1: none), recorded in the trace as `expect`:
  // a fence of a job with a dead and a deregistered rank gets either
  // (docs/simulator.md).
  pmix_status_t also = 1;
};
using program = std::vector<step>;

// A simulated process: which rank of which namespace it claims, which node's
// server it connects to, and its program (shared by many clients).
struct client_plan {
  std::uint32_t nspace = 0;  // index into plan::nspaces
  std::uint32_t rank = 0;
  std::uint32_t node = 0;
  std::uint32_t program = 0;  // index into plan::programs
  bool tool = false;
  bool counted = true;  // one of the N clients (tools, clones and probes are not)
  // Under --faults: a client of the probe namespace, run after the faults
  // with every node's fault plane disarmed; it must be served (its steps
  // may not fail, unlike the other clients').
  bool after_faults = false;
};

// A gate: opens when `expected` arrivals came and its action finished.
enum class gate_action : std::uint8_t {
  none,
  measure_memory,    // ask every node for its heap: the memory per connected client
  deregister_ranks,  // deregister plan::leavers, mark the namespace unreachable for fences
  deregister_victim, // deregister the victim namespace's clients and the namespace
  deregister_all,    // the end: deregister every client and namespace left (but the probe
                     // namespace); under --faults, then disarm every node's fault plane
  deregister_probe,  // under --faults: deregister the probe namespace
};
struct gate_plan {
  std::uint32_t expected = 0;
  gate_action action = gate_action::none;
};

struct options {
  std::vector<std::string> scenarios;
  std::uint32_t clients = 100;
  std::uint32_t nodes = 1;
  std::uint32_t rounds = 1;
  std::uint64_t seed = 1;
  std::uint32_t gets = 2;         // peers each client gets per fence round
  std::uint32_t crash_percent = 10;
  std::string csv, plot;
  std::vector<std::uint32_t> sweep;
  bool progress = false;  // a progress bar (stderr is a terminal)
  std::string inject;     // test-only broken behaviour (PMIXSIM_INJECT)
  std::string faults;     // the fault plan (--faults) every node's server gets
  std::uint32_t stuck_s = 30;  // a run with no step done for this long fails (--stuck-s)
  bool shrink = false;    // --shrink: a failing run under --faults reruns itself to a minimal plan
  // --spread: each node's simulated clients run in its server's process,
  // with their own descriptors (also when the driver's cannot hold them all).
  bool spread = false;
};

struct plan {
  options opt;
  std::vector<nspace_plan> nspaces;  // [0]: the main job
  std::vector<program> programs;
  std::vector<client_plan> clients;  // in client order (the trace's order)
  std::vector<gate_plan> gates;
  std::vector<std::uint32_t> leavers;  // ranks of nspaces[0] deregistered under load
  std::uint32_t victim = UINT32_MAX;   // index of the namespace deregistered under load
  std::uint32_t probe = UINT32_MAX;    // under --faults: index of the namespace served after the faults
  std::vector<std::uint32_t> launch_order;  // clients whose first step is a connect, seeded order
  std::string names;                   // the scenarios, as run
};

// Builds the plan of a run (scenario.cpp). False (and `error`) on an unknown
// scenario or impossible numbers.
bool build_plan(const options& o, plan& out, std::string& error);

// The peer whose key client (rank, round, k) gets: seeded, never itself.
std::uint32_t peer_of(std::uint64_t seed, std::uint32_t rank, std::uint32_t round, std::uint32_t k,
                      std::uint32_t ranks);
// The value rank `rank` commits in round `round`.
std::string value_of(std::uint32_t nspace, std::uint32_t rank, std::uint32_t round);

// ---- Control channel between the driver and a node's server -------------------
// Frames: u32 length (host order: both ends are this process or its fork),
// then a u8 kind and the fields.

enum class ctl : std::uint8_t {
  ready = 1,        // node -> driver: uri, stats
  fence = 2,        // node -> driver: id, nspace, data (the host's fence_nb)
  fence_done = 3,   // driver -> node: id, status, data
  dmodex = 4,       // node -> driver: id, nspace, rank (the host's direct_modex)
  dmodex_req = 5,   // driver -> node: id, nspace, rank (ask the owning node's server)
  dmodex_data = 6,  // node -> driver: id, status, data
  dmodex_done = 7,  // driver -> node: id, status, data
  deregister = 8,   // driver -> node: id, nspace, ranks (all: then the namespace too)
  stats = 9,        // driver -> node: id
  reply = 10,       // node -> driver: id, status, stats
  finalize = 11,    // driver -> node
  faults_report = 12,  // node -> driver (under --faults, after finalize): status, the checker's report
  disarm = 13,         // driver -> node: id (the fault plane stops; answered by a reply)
  // Between the driver and a node's client host (--spread: a node's
  // simulated clients in the process of its server, docs/simulator.md).
  host_start = 14,   // driver -> host: the node's socket path
  host_arrive = 15,  // host -> driver: a gate one of its clients arrived at
  host_break = 16,   // host -> driver: nspace, status (a client of it crashed or gave up)
  host_open = 17,    // driver -> host: a gate every client arrived at
  host_done = 18,    // host -> driver: its clients' results (driver.cpp, host_done)
  host_finish = 19,  // driver -> host: the run is over
};

struct node_stats {
  std::int64_t heap = 0;        // bytes the allocator handed out (mallinfo2)
  std::int64_t rss_kb = 0;      // RssAnon
  std::int64_t fds = 0;         // open descriptors of the node's process
  std::int64_t connected = 0;   // client_connected up-calls
  std::int64_t finalized = 0;   // client_finalized up-calls
  std::int64_t fences = 0;      // fence_nb up-calls
  std::int64_t dmodex = 0;      // direct_modex up-calls
};

class writer {
 public:
  explicit writer(ctl kind) { buf_.resize(4); u8(static_cast<std::uint8_t>(kind)); }
  writer& u8(std::uint8_t v) { return raw(&v, 1); }
  writer& u32(std::uint32_t v) { return raw(&v, 4); }
  writer& i64(std::int64_t v) { return raw(&v, 8); }
  writer& str(std::string_view s) { u32(static_cast<std::uint32_t>(s.size())); return raw(s.data(), s.size()); }
  writer& stats(const node_stats& s) {
    return i64(s.heap).i64(s.rss_kb).i64(s.fds).i64(s.connected).i64(s.finalized).i64(s.fences).i64(s.dmodex);
  }
  std::string done() {
    const auto n = static_cast<std::uint32_t>(buf_.size() - 4);
    std::memcpy(buf_.data(), &n, 4);
    return std::move(buf_);
  }

 private:
  writer& raw(const void* p, std::size_t n) { buf_.append(static_cast<const char*>(p), n); return *this; }
  std::string buf_;
};

class reader {
 public:
  explicit reader(std::string_view payload) : in_(payload) {}
  ctl kind() { return static_cast<ctl>(u8()); }
  std::uint8_t u8() { std::uint8_t v = 0; raw(&v, 1); return v; }
  std::uint32_t u32() { std::uint32_t v = 0; raw(&v, 4); return v; }
  std::int64_t i64() { std::int64_t v = 0; raw(&v, 8); return v; }
  std::string_view str() {
    const auto n = u32();
    if (n > in_.size()) { ok_ = false; n_ = 0; return {}; }
    auto s = in_.substr(0, n);
    in_.remove_prefix(n);
    return s;
  }
  node_stats stats() {
    node_stats s;
    s.heap = i64(); s.rss_kb = i64(); s.fds = i64(); s.connected = i64(); s.finalized = i64();
    s.fences = i64(); s.dmodex = i64();
    return s;
  }
  bool ok() const { return ok_; }

 private:
  void raw(void* p, std::size_t n) {
    if (n > in_.size()) { ok_ = false; return; }
    std::memcpy(p, in_.data(), n);
    in_.remove_prefix(n);
  }
  std::string_view in_;
  bool ok_ = true;
  std::size_t n_ = 0;
};

// Writes a whole frame (blocking). False when the other end is gone.
bool write_all(int fd, std::string_view bytes);
// Reads one whole frame's payload (blocking). False when the other end is gone.
bool read_frame(int fd, std::string& out);
// The whole frame at `pos` of `buf` (its payload), moving `pos` past it;
// false when `buf` holds only part of one from `pos` on.
bool take_frame(std::string_view buf, std::size_t& pos, std::string_view& payload);

// The server of one simulated node (node.cpp): PMIx_server_init with a host
// module whose fence_nb and direct_modex go to the driver over `ctl_fd`,
// the plan's registrations, then commands from the driver until finalize.
// Runs in a thread of the driver's process (node 0) or in a forked child.
int run_node(const plan& p, std::uint32_t node, int ctl_fd, const std::string& tmpdir);

node_stats own_stats();

}  // namespace pmixsim
