#include "daemon.hpp"

#include <pmix.h>

#include <caf/actor_system.hpp>
#include <caf/event_based_actor.hpp>
#include <caf/stateful_actor.hpp>
#include <caf/io/broker.hpp>
#include <caf/io/middleman.hpp>
#include <caf/io/middleman_actor.hpp>
#include <caf/openssl/manager.hpp>
#include <caf/send.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <deque>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>
#include <mutex>
#include <set>

#include "caf_config.hpp"
#include "collective.hpp"
#include "fence_trace.hpp"
#include "liveness.hpp"
#include "tools/pmixrun/datastore.hpp"
#include "tools/pmixrun/upcalls.hpp"
#include "wire.hpp"
#include "tools/pmixrun/host_thread.hpp"

namespace pmixd {

// What an up-call leaves for the actor: its arguments and its callback.
struct upcall {
  std::vector<pmix_proc_t> procs;
  std::string data;
  pmix_modex_cbfunc_t modex_cb = nullptr;
  pmix_op_cbfunc_t op_cb = nullptr;
  pmix_lookup_cbfunc_t lookup_cb = nullptr;
  pmix_spawn_cbfunc_t spawn_cb = nullptr;
  // A group construct or destruct (the fence engine joins the nodes).
  pmix_info_cbfunc_t info_cb = nullptr;
  std::string group;
  bool construct = false;
  bool want_context_id = false;
  void answer_group(pmix_status_t st, const std::string& bytes);
  std::function<void(pmix_status_t, const std::string&)> done;  // a part of a larger call
  void* cbdata = nullptr;
  int status = 0;
  std::vector<app_plan> apps;  // spawn
  // A callback never called (the actor is gone) is called here.
  bool answered = false;
  void answer_modex(pmix_status_t st, const std::string& bytes);
  void answer_op(pmix_status_t st);
  // Whichever callback the call has: modex data, an op's status, a lookup's
  // packed pdata (wire.hpp), a spawn's namespace.
  void answer(pmix_status_t st, const std::string& bytes);
  void fail(pmix_status_t st) { answer(st, {}); }
  ~upcall();
};
using upcall_ptr = std::shared_ptr<upcall>;

}  // namespace pmixd

CAF_ALLOW_UNSAFE_MESSAGE_TYPE(pmixd::upcall_ptr)

namespace pmixd {
namespace {

using upfence_atom = caf::atom_constant<caf::atom("upfence")>;
using upgroup_atom = caf::atom_constant<caf::atom("upgroup")>;
using upmodex_atom = caf::atom_constant<caf::atom("upmodex")>;
using upabort_atom = caf::atom_constant<caf::atom("upabort")>;
using served_atom = caf::atom_constant<caf::atom("served")>;
using connected_atom = caf::atom_constant<caf::atom("connected")>;
using started_atom = caf::atom_constant<caf::atom("started")>;
using hello_atom = caf::atom_constant<caf::atom("hello")>;
using uppub_atom = caf::atom_constant<caf::atom("uppub")>;
using uplookup_atom = caf::atom_constant<caf::atom("uplookup")>;
using upunpub_atom = caf::atom_constant<caf::atom("upunpub")>;
using upnotify_atom = caf::atom_constant<caf::atom("upnotify")>;
using upspawn_atom = caf::atom_constant<caf::atom("upspawn")>;
using upiof_atom = caf::atom_constant<caf::atom("upiof")>;
using upstdin_atom = caf::atom_constant<caf::atom("upstdin")>;
using pushed_atom = caf::atom_constant<caf::atom("pushed")>;
using pushwait_atom = caf::atom_constant<caf::atom("pushwait")>;
using beattick_atom = caf::atom_constant<caf::atom("beattick")>;
using liveness_clock = std::chrono::steady_clock;

void release_string(void* cbdata) { delete static_cast<std::string*>(cbdata); }

std::string nspace_of(const pmix_proc_t& p) { return std::string(p.nspace, strnlen(p.nspace, PMIX_MAX_NSLEN)); }

std::string proc_text(const pmix_proc_t& p) {
  return nspace_of(p) + ":" + (p.rank == PMIX_RANK_WILDCARD ? std::string("*") : std::to_string(p.rank));
}

}  // namespace

void upcall::answer_modex(pmix_status_t st, const std::string& bytes) {
  if (answered || modex_cb == nullptr) return;
  answered = true;
  auto* copy = new std::string(bytes);
  modex_cb(st, copy->data(), copy->size(), cbdata, release_string, copy);
}

void upcall::answer_op(pmix_status_t st) {
  if (answered || op_cb == nullptr) return;
  answered = true;
  op_cb(st, cbdata);
}

// A group's blocks, one per node in node order: the node's context id
// proposal (8 bytes), the length of its server's group data (8 bytes), the
// data. The first node's proposal is the group's context id (the same on
// every node); the data of all nodes, concatenated, goes back to each
// server as PMIX_GROUP_ENDPT_DATA (our servers' group data concatenates).
std::string group_block(uint64_t proposal, const std::string& data) {
  std::string out(16, '\0');
  const uint64_t size = data.size();
  std::memcpy(&out[0], &proposal, 8);
  std::memcpy(&out[8], &size, 8);
  return out + data;
}

void upcall::answer_group(pmix_status_t st, const std::string& bytes) {
  answered = true;
  if (st != PMIX_SUCCESS || !construct) return info_cb(st, nullptr, 0, cbdata, nullptr, nullptr);
  uint64_t context_id = 0;
  std::string data;
  for (std::size_t at = 0; at + 16 <= bytes.size();) {
    uint64_t proposal, size;
    std::memcpy(&proposal, bytes.data() + at, 8);
    std::memcpy(&size, bytes.data() + at + 8, 8);
    if (size > bytes.size() - at - 16) return info_cb(PMIX_ERR_UNPACK_FAILURE, nullptr, 0, cbdata, nullptr, nullptr);
    if (at == 0) context_id = proposal;
    data.append(bytes, at + 16, size);
    at += 16 + size;
  }
  pmix_info_t out[2];
  std::size_t n = 0;
  if (want_context_id) PMIX_INFO_LOAD(&out[n++], PMIX_GROUP_CONTEXT_ID, &context_id, PMIX_SIZE);
  pmix_byte_object_t bo{data.data(), data.size()};
  if (!data.empty()) PMIX_INFO_LOAD(&out[n++], PMIX_GROUP_ENDPT_DATA, &bo, PMIX_BYTE_OBJECT);
  info_cb(PMIX_SUCCESS, n == 0 ? nullptr : out, n, cbdata, nullptr, nullptr);
  for (std::size_t k = 0; k < n; ++k) PMIX_INFO_DESTRUCT(&out[k]);
}

void upcall::answer(pmix_status_t st, const std::string& bytes) {
  if (answered) return;
  if (info_cb != nullptr) return answer_group(st, bytes);
  if (modex_cb != nullptr) return answer_modex(st, bytes);
  if (op_cb != nullptr) return answer_op(st);
  answered = true;
  if (done) return done(st, bytes);
  if (lookup_cb != nullptr) {
    pmix_pdata_t* pdata = nullptr;
    std::size_t n = 0;
    if (st == PMIX_SUCCESS && !unpack_pdata(bytes, pdata, n)) st = PMIX_ERR_UNPACK_FAILURE;
    lookup_cb(st, pdata, n, cbdata);
    if (pdata != nullptr) PMIX_PDATA_FREE(pdata, n);
    return;
  }
  if (spawn_cb != nullptr) {
    pmix_nspace_t ns;
    PMIX_LOAD_NSPACE(ns, st == PMIX_SUCCESS ? bytes.c_str() : "");
    spawn_cb(st, ns, cbdata);
  }
}

upcall::~upcall() { fail(PMIX_ERR_UNREACH); }

namespace {

// The jobs of one launcher (the first job and the ones spawned from it):
// their nodes, the daemons of those nodes, and the fences among them.
struct session {
  std::string name;  // the first job's namespace
  caf::actor launcher;
  std::vector<std::string> daemons;  // address of each node id
  std::vector<caf::actor> peers;     // by node id (this node: the daemon itself)
  uint32_t this_node = 0;
  fence_algorithm alg = fence_algorithm::tree;
  fence_engine fences{0};
  std::map<std::string, uint64_t> fence_seq;  // participants -> fences so far
  std::set<uint32_t> lost;
  // Output pulled by other nodes (PMIx_IOF_pull there): (nspace, rank or
  // wildcard) -> node -> channels.
  std::map<std::pair<std::string, uint32_t>, std::map<uint32_t, int32_t>> pulls;
  bool ready = false;               // every peer known: jobs start at once
  std::vector<job_plan> waiting;    // jobs waiting for the peers
  std::string failed;               // a peer that cannot be reached
};

struct job_entry {
  job_plan plan;
  std::string session;
  std::vector<uint32_t> nodes_used;  // ascending
};

// A call waiting for another node's answer; it fails when that node is lost.
struct pending_call {
  std::string session;
  uint32_t node;
  upcall_ptr call;
};

// Another node's push for processes of a job that has not started here yet
// (its plan and the push come over different connections): held until it
// has, 60 s at most, answered through `served` under `token`.
struct held_push {
  uint64_t token;
  std::vector<pmix_proc_t> targets;
  std::string bytes;
  bool end;
};

struct daemon_state {
  daemon_config cfg;
  std::map<std::string, session> sessions;
  std::map<std::string, job_entry> jobs;  // by nspace
  std::map<uint64_t, upcall_ptr> fence_calls;
  std::map<uint64_t, pending_call> remote_calls;     // by token
  std::map<uint64_t, caf::response_promise> served;  // requests of other nodes answered later
  std::map<std::string, caf::response_promise> starts;  // jobs being started, by nspace
  std::map<std::string, std::map<uint32_t, caf::actor>> hellos;  // before their session
  std::map<std::string, std::vector<held_push>> held_pushes;     // by the nspace not started yet
  std::deque<std::string> ended_jobs;                            // the last 1024 ended here, oldest first
  uint64_t next_token = 1;
  uint64_t group_proposals = 0;
  // The peers this daemon hears beats from: (session, node id), the
  // session's launcher as launcher_node.
  liveness<std::pair<std::string, uint32_t>> alive{beat_interval, peer_timeout()};
  static const char* name;
};
const char* daemon_state::name = "pmixd";

using self_ptr = caf::stateful_actor<daemon_state, caf::io::broker>*;

void note(self_ptr self, const std::string& what) {
  if (self->state.cfg.verbose) std::fprintf(stderr, "pmixd %s: %s\n", self->state.cfg.name.c_str(), what.c_str());
}

void warn(self_ptr self, const std::string& what) {
  std::fprintf(stderr, "pmixd %s: %s\n", self->state.cfg.name.c_str(), what.c_str());
}

void flush_fences(self_ptr self, session& s) {
  for (auto& m : s.fences.take_sends()) {
    if (m.to >= s.peers.size() || !s.peers[m.to]) continue;
    fence_trace::mark("send", m.key, m.to, m.round);
    self->send(s.peers[m.to], fence_atom::value, s.name, m.key, m.round, std::move(m.blocks));
  }
  for (auto& c : s.fences.take_completions()) {
    auto it = self->state.fence_calls.find(c.token);
    if (it == self->state.fence_calls.end()) continue;
    if (c.status != PMIX_SUCCESS)
      warn(self, std::string("a fence across nodes failed: ") + PMIx_Error_string(c.status));
    const bool traced = fence_trace::enabled() && it->second->modex_cb != nullptr;
    if (traced) fence_trace::mark("done", "-");
    it->second->answer(c.status, c.data);
    if (traced) fence_trace::mark("answered", "-");
    self->state.fence_calls.erase(it);
  }
}

// A node of session `s` is gone: its fences and modex requests fail.
void lose_node(self_ptr self, session& s, uint32_t node) {
  if (!s.lost.insert(node).second) return;
  warn(self, "node " + std::to_string(node) + " (" + s.daemons[node] + ") of " + s.name +
                 " is lost: operations that need it fail");
  s.fences.node_lost(node);
  flush_fences(self, s);
  std::vector<upcall_ptr> failed;
  auto& calls = self->state.remote_calls;
  for (auto it = calls.begin(); it != calls.end();) {
    if (it->second.session == s.name && it->second.node == node) {
      failed.push_back(std::move(it->second.call));
      it = calls.erase(it);
    } else {
      ++it;
    }
  }
  for (auto& call : failed) call->fail(PMIX_ERR_UNREACH);
}

// The nodes that run ranks of `procs`, or false if a namespace is unknown.
bool nodes_of(self_ptr self, const std::vector<pmix_proc_t>& procs, std::string& session_name,
              std::vector<uint32_t>& nodes) {
  std::set<uint32_t> out;
  for (const auto& p : procs) {
    auto it = self->state.jobs.find(nspace_of(p));
    if (it == self->state.jobs.end()) return false;
    const auto& j = it->second;
    if (!session_name.empty() && session_name != j.session) return false;
    session_name = j.session;
    if (p.rank == PMIX_RANK_WILDCARD) {
      out.insert(j.nodes_used.begin(), j.nodes_used.end());
    } else if (p.rank < j.plan.node_of.size()) {
      out.insert(j.plan.node_of[p.rank]);
    } else {
      return false;
    }
  }
  nodes.assign(out.begin(), out.end());
  return true;
}

void on_fence_upcall(self_ptr self, const upcall_ptr& call) {
  auto& st = self->state;
  std::string sname;
  std::vector<uint32_t> nodes;
  if (!nodes_of(self, call->procs, sname, nodes)) {
    warn(self, "a fence names a process of no job this node runs");
    return call->answer_modex(PMIX_ERR_NOT_FOUND, {});
  }
  auto& s = st.sessions[sname];
  std::vector<std::string> names;
  for (const auto& p : call->procs) names.push_back(proc_text(p));
  std::sort(names.begin(), names.end());
  std::string sig;
  for (const auto& n : names) sig += n + ",";
  const auto seq = s.fence_seq[sig]++;
  const auto token = st.next_token++;
  st.fence_calls.emplace(token, call);
  const auto key = sig + "#" + std::to_string(seq);
  fence_trace::mark("actor", key);
  s.fences.contribute(key, nodes, s.alg, std::move(call->data), token);
  flush_fences(self, s);
}

// PMIx_Group_construct / _destruct spanning nodes: a fence among the
// nodes of the members (the servers joined their own members first), keyed
// by the group's name and operation; see group_block for what it carries.
void on_group_upcall(self_ptr self, const upcall_ptr& call) {
  auto& st = self->state;
  std::string sname;
  std::vector<uint32_t> nodes;
  if (!nodes_of(self, call->procs, sname, nodes)) {
    warn(self, "group " + call->group + " names a process of no job this node runs");
    return call->fail(PMIX_ERR_NOT_FOUND);
  }
  auto& s = st.sessions[sname];
  const std::string sig = "group:" + call->group + (call->construct ? ":construct" : ":destruct");
  const auto seq = s.fence_seq[sig]++;
  const auto token = st.next_token++;
  st.fence_calls.emplace(token, call);
  // Unique in the session: this node's id above bit 40, its count below.
  const uint64_t proposal = (static_cast<uint64_t>(s.this_node) + 1) << 40 | ++st.group_proposals;
  s.fences.contribute(sig + "#" + std::to_string(seq), nodes, s.alg,
                      call->construct ? group_block(proposal, call->data) : std::string{}, token);
  flush_fences(self, s);
}

// Sends `xs` to node `node` of session `sname` and answers `call` with the
// reply (int32 status, string data); a lost node or an error: PMIX_ERR_UNREACH.
template <class... Ts>
void ask_node(self_ptr self, const std::string& sname, uint32_t node, const upcall_ptr& call,
              caf::duration timeout, Ts&&... xs) {
  auto& st = self->state;
  auto found = st.sessions.find(sname);
  if (found == st.sessions.end()) return call->fail(PMIX_ERR_NOT_FOUND);
  auto& s = found->second;
  if (s.lost.count(node) > 0 || node >= s.peers.size() || !s.peers[node]) return call->fail(PMIX_ERR_UNREACH);
  const auto token = st.next_token++;
  st.remote_calls.emplace(token, pending_call{sname, node, call});
  self->request(s.peers[node], timeout, std::forward<Ts>(xs)...)
      .then(
          [self, token](int32_t status, std::string& data) {
            auto it = self->state.remote_calls.find(token);
            if (it == self->state.remote_calls.end()) return;
            auto c = std::move(it->second.call);
            self->state.remote_calls.erase(it);
            c->answer(status, data);
          },
          [self, token](caf::error& e) {
            auto it = self->state.remote_calls.find(token);
            if (it == self->state.remote_calls.end()) return;
            warn(self, "a request to node " + std::to_string(it->second.node) +
                           " failed: " + self->system().render(e));
            auto c = std::move(it->second.call);
            self->state.remote_calls.erase(it);
            c->fail(PMIX_ERR_UNREACH);
          });
}

void on_modex_upcall(self_ptr self, const upcall_ptr& call) {
  auto& st = self->state;
  const auto& p = call->procs.front();
  auto it = st.jobs.find(nspace_of(p));
  if (it == st.jobs.end() || p.rank >= it->second.plan.node_of.size()) {
    warn(self, "direct modex for " + proc_text(p) + ": no job of this node has it");
    return call->answer_modex(PMIX_ERR_NOT_FOUND, {});
  }
  const uint32_t node = it->second.plan.node_of[p.rank];
  ask_node(self, it->second.session, node, call, caf::duration{std::chrono::seconds(60)}, modex_atom::value,
           nspace_of(p), static_cast<uint32_t>(p.rank));
}

// The session of the caller's job, or empty.
std::string session_of(self_ptr self, const pmix_proc_t& p) {
  auto it = self->state.jobs.find(nspace_of(p));
  return it == self->state.jobs.end() ? std::string() : it->second.session;
}

// PMIx_IOF_pull of processes of other nodes: each of their nodes sends this
// node what they write on the channels pulled (iofdata), which it hands to
// its server (PMIx_server_IOF_deliver), which passes it to the pullers. The
// puller hears PMIX_SUCCESS once every node has agreed; a lost node:
// PMIX_ERR_UNREACH. Output of this node's own processes reaches its server
// without asking.
void on_iof_upcall(self_ptr self, const upcall_ptr& call) {
  std::string sname;
  std::vector<uint32_t> nodes;
  if (!nodes_of(self, call->procs, sname, nodes)) return call->fail(PMIX_ERR_NOT_FOUND);
  auto& s = self->state.sessions[sname];
  struct tally {
    upcall_ptr call;
    std::size_t left = 0;
    pmix_status_t status = PMIX_SUCCESS;
  };
  auto t = std::make_shared<tally>();
  t->call = call;
  std::vector<std::pair<uint32_t, pmix_proc_t>> asks;
  for (const auto& p : call->procs) {
    std::vector<uint32_t> where;
    std::string ignored;
    nodes_of(self, {p}, ignored, where);
    for (auto n : where)
      if (n != s.this_node) asks.emplace_back(n, p);
  }
  t->left = asks.size();
  if (asks.empty()) return call->answer_op(PMIX_SUCCESS);
  for (const auto& [n, p] : asks) {
    auto part = std::make_shared<upcall>();
    part->done = [t](pmix_status_t st, const std::string&) {
      if (st != PMIX_SUCCESS && t->status == PMIX_SUCCESS) t->status = st;
      if (--t->left == 0) t->call->answer_op(t->status);
    };
    ask_node(self, sname, n, part, caf::duration{std::chrono::seconds(30)}, iofpull_atom::value, sname,
             nspace_of(p), static_cast<uint32_t>(p.rank), static_cast<int32_t>(call->status), call->data == "stop",
             s.this_node);
  }
}

// "nspace:rank" or "nspace:*" (proc_text) back into a proc; false if malformed.
bool parse_proc(const std::string& text, pmix_proc_t& out) {
  const auto colon = text.rfind(':');
  if (colon == std::string::npos || colon == 0 || colon > PMIX_MAX_NSLEN || colon + 1 >= text.size()) return false;
  const std::string rank = text.substr(colon + 1);
  char* end = nullptr;
  const unsigned long r = rank == "*" ? PMIX_RANK_WILDCARD : std::strtoul(rank.c_str(), &end, 10);
  if (rank != "*" && (*end != '\0' || r >= PMIX_RANK_VALID)) return false;
  PMIX_LOAD_PROCID(&out, text.substr(0, colon).c_str(), static_cast<pmix_rank_t>(r));
  return true;
}

// Pushes to this node's processes: the main thread's input forwarder takes
// them; `part` gets (status, count of processes) once their pipes took the
// bytes (pushed_atom). Kept with the remote calls, under this node's id.
void push_here(self_ptr self, const std::string& sname, uint32_t this_node, std::vector<pmix_proc_t> targets,
               const std::string& bytes, bool end, const upcall_ptr& part) {
  auto& st = self->state;
  const auto token = st.next_token++;
  st.remote_calls.emplace(token, pending_call{sname, this_node, part});
  caf::actor me = caf::actor_cast<caf::actor>(self);
  st.cfg.hooks.push_stdin(std::move(targets), bytes, end, [me, token](pmix_status_t rc, uint32_t count) {
    caf::anon_send(me, pushed_atom::value, token, static_cast<int32_t>(rc), std::to_string(count));
  });
}

// PMIx_IOF_push (stdin) to processes of this or other nodes: the bytes go to
// each target's node (stdin_atom; this node's straight to its forwarder),
// whose pmixd writes them into the targets' stdin pipes. The pusher hears
// PMIX_SUCCESS once every target's pipe took them, else the first failure
// of a node (PMIX_ERR_UNREACH: a lost node); PMIX_ERR_IOF_COMPLETE when no
// target's input was open. Pushes keep their order per target: one
// connection per pair of nodes, one queue per process.
void on_stdin_upcall(self_ptr self, const upcall_ptr& call) {
  std::string sname;
  std::map<uint32_t, std::vector<pmix_proc_t>> per_node;
  for (const auto& p : call->procs) {
    std::vector<uint32_t> where;
    if (!nodes_of(self, {p}, sname, where)) return call->fail(PMIX_ERR_NOT_FOUND);
    for (auto n : where) per_node[n].push_back(p);
  }
  auto found = self->state.sessions.find(sname);
  if (found == self->state.sessions.end() || per_node.empty()) return call->fail(PMIX_ERR_NOT_FOUND);
  const uint32_t here = found->second.this_node;
  const bool end = call->status != 0;
  note(self, "push of " + std::to_string(call->data.size()) + " bytes" + (end ? " and the end of input" : "") +
                 " to " + std::to_string(call->procs.size()) + " target(s) on " + std::to_string(per_node.size()) +
                 " node(s)");
  struct tally {
    upcall_ptr call;
    std::size_t left = 0;
    pmix_status_t status = PMIX_SUCCESS;
    unsigned long count = 0;
  };
  auto t = std::make_shared<tally>();
  t->call = call;
  t->left = per_node.size();
  for (auto& [n, targets] : per_node) {
    auto part = std::make_shared<upcall>();
    part->done = [t](pmix_status_t st, const std::string& count) {
      if (st != PMIX_SUCCESS && t->status == PMIX_SUCCESS) t->status = st;
      if (st == PMIX_SUCCESS) t->count += std::strtoul(count.c_str(), nullptr, 10);
      if (--t->left > 0) return;
      if (t->status == PMIX_SUCCESS && t->count == 0) t->status = PMIX_ERR_IOF_COMPLETE;
      t->call->answer_op(t->status);
    };
    if (n == here) {
      push_here(self, sname, here, targets, call->data, end, part);
      continue;
    }
    std::vector<std::string> names;
    for (const auto& p : targets) names.push_back(proc_text(p));
    // No deadline: a reader that does not read holds its pusher, as on one
    // node; the target node's loss ends the wait.
    ask_node(self, sname, n, part, caf::duration{caf::infinite}, stdin_atom::value, sname, names, call->data,
             end);
  }
}

void release_delivery(pmix_status_t, void* cbdata) { delete static_cast<std::string*>(cbdata); }

// Publish, lookup, unpublish: to the session's data store, on node 0.
template <class Atom>
void on_store_upcall(self_ptr self, Atom kind, const upcall_ptr& call, caf::duration timeout) {
  const std::string sname = session_of(self, call->procs.front());
  if (sname.empty()) {
    warn(self, proc_text(call->procs.front()) + " is of no job of this node");
    return call->fail(PMIX_ERR_NOT_FOUND);
  }
  ask_node(self, sname, 0, call, timeout, kind, sname, call->data);
}

// notify_event: every other node of the session delivers the event to its
// clients (PMIx_Notify_event there). The notifier hears PMIX_SUCCESS when
// every node has, else PMIX_ERR_UNREACH (the reachable ones still get it).
void on_notify_upcall(self_ptr self, const upcall_ptr& call) {
  const std::string sname = session_of(self, call->procs.front());
  auto it = self->state.sessions.find(sname);
  if (sname.empty() || it == self->state.sessions.end()) return call->answer_op(PMIX_SUCCESS);
  auto& s = it->second;
  struct tally {
    upcall_ptr call;
    std::size_t left = 0;
    pmix_status_t status = PMIX_SUCCESS;
  };
  auto t = std::make_shared<tally>();
  t->call = call;
  std::vector<uint32_t> others;
  for (uint32_t n = 0; n < s.peers.size(); ++n)
    if (n != s.this_node) others.push_back(n);
  t->left = others.size();
  if (others.empty()) return call->answer_op(PMIX_SUCCESS);
  for (auto n : others) {
    auto part = std::make_shared<upcall>();
    part->done = [t](pmix_status_t st, const std::string&) {
      if (st != PMIX_SUCCESS) t->status = PMIX_ERR_UNREACH;
      if (--t->left == 0) t->call->answer_op(t->status);
    };
    ask_node(self, sname, n, part, caf::duration{std::chrono::seconds(30)}, notify_atom::value, call->data);
  }
}

struct served_request {
  caf::actor daemon;
  uint64_t token;
};

void on_served(pmix_status_t status, char* data, size_t size, void* cbdata) {
  auto* r = static_cast<served_request*>(cbdata);
  caf::anon_send(r->daemon, served_atom::value, r->token, static_cast<int32_t>(status),
                 std::string(data != nullptr ? data : "", data != nullptr ? size : 0));
  delete r;
}

void on_served_op(pmix_status_t status, void* cbdata) { on_served(status, nullptr, 0, cbdata); }

void on_served_lookup(pmix_status_t status, pmix_pdata_t pdata[], size_t n, void* cbdata) {
  auto* r = static_cast<served_request*>(cbdata);
  caf::anon_send(r->daemon, served_atom::value, r->token, static_cast<int32_t>(status), pack_pdata(pdata, n));
  delete r;
}

// The data stores of the sessions whose node 0 this is, by session: host
// thread only (posted tasks).
std::map<std::string, std::unique_ptr<pmixrun::datastore>> stores;

pmixrun::datastore& store_of(const std::string& sname) {
  auto& slot = stores[sname];
  if (!slot) slot = std::make_unique<pmixrun::datastore>();
  return *slot;
}

// A request of another node answered later through `served`: its token.
uint64_t serve_later(self_ptr self, caf::response_promise rp) {
  const auto token = self->state.next_token++;
  self->state.served.emplace(token, std::move(rp));
  return token;
}

// Another node's push (held_push): to the main thread's input forwarder
// once every target's job has started here, else held until it has.
void serve_push(self_ptr self, held_push push) {
  auto& st = self->state;
  for (const auto& p : push.targets) {
    const std::string nspace = nspace_of(p);
    const bool started = st.jobs.count(nspace) > 0 && st.starts.count(nspace) == 0;
    if (started || std::find(st.ended_jobs.begin(), st.ended_jobs.end(), nspace) != st.ended_jobs.end()) continue;
    if (st.held_pushes[nspace].empty())
      self->delayed_send(self, std::chrono::seconds(60), pushwait_atom::value, nspace);
    st.held_pushes[nspace].push_back(std::move(push));
    return;
  }
  caf::actor me = caf::actor_cast<caf::actor>(self);
  st.cfg.hooks.push_stdin(std::move(push.targets), push.bytes, push.end, [me, token = push.token](pmix_status_t rc,
                                                                                                 uint32_t n) {
    caf::anon_send(me, served_atom::value, token, static_cast<int32_t>(rc), std::to_string(n));
  });
}

// The job `nspace` has started here (or failed to): the pushes held for it
// go on, in their order, or fail.
void release_pushes(self_ptr self, const std::string& nspace, pmix_status_t rc) {
  auto it = self->state.held_pushes.find(nspace);
  if (it == self->state.held_pushes.end()) return;
  auto pushes = std::move(it->second);
  self->state.held_pushes.erase(it);
  for (auto& push : pushes) {
    if (rc == PMIX_SUCCESS) {
      serve_push(self, std::move(push));
    } else {
      caf::anon_send(caf::actor_cast<caf::actor>(self), served_atom::value, push.token, static_cast<int32_t>(rc),
                     std::string("0"));
    }
  }
}

// Starts a job whose peers are all known (or that cannot get them).
void launch(self_ptr self, const job_plan& plan, const std::string& failed) {
  caf::actor me = caf::actor_cast<caf::actor>(self);
  if (!failed.empty()) {
    caf::anon_send(me, started_atom::value, plan.nspace, static_cast<int32_t>(PMIX_ERR_UNREACH), failed);
    return;
  }
  self->state.cfg.hooks.start(plan, [me, nspace = plan.nspace](pmix_status_t rc, std::string error) {
    caf::anon_send(me, started_atom::value, nspace, static_cast<int32_t>(rc), std::move(error));
  });
}

// A peer of session `s` is known: once all are, the waiting jobs start.
void peer_known(self_ptr self, session& s) {
  for (const auto& p : s.peers)
    if (!p && s.failed.empty()) return;
  auto waiting = std::move(s.waiting);
  s.waiting.clear();
  s.ready = true;
  for (const auto& plan : waiting) launch(self, plan, s.failed);
}

void add_peer(self_ptr self, session& s, uint32_t n, caf::actor peer) {
  if (n >= s.peers.size() || s.peers[n]) return;
  s.peers[n] = std::move(peer);
  self->monitor(s.peers[n]);
  peer_known(self, s);
}

// Connects to the daemon of node `n` of session `sname` and says hello.
// Through CAF's OpenSSL module: the other daemon must hold the session key
// too (credentials.hpp). The handshake may take as long as a loaded machine
// makes it, up to the request's 30 s (no middleman connection timeout:
// caf_config.hpp).
void connect_peer(self_ptr self, const std::string& sname, uint32_t n, const std::string& host, uint16_t port) {
  auto mm = self->system().openssl_manager().actor_handle();
  self->request(mm, std::chrono::seconds(30), caf::connect_atom::value, host, port)
      .then(
          [self, sname, n](const caf::node_id&, caf::strong_actor_ptr& ptr, const std::set<std::string>&) {
            auto it = self->state.sessions.find(sname);
            if (it == self->state.sessions.end() || !ptr) return;
            auto peer = caf::actor_cast<caf::actor>(ptr);
            self->send(peer, hello_atom::value, sname, it->second.this_node, caf::actor_cast<caf::actor>(self));
            add_peer(self, it->second, n, peer);
          },
          [self, sname, n](caf::error& e) {
            auto it = self->state.sessions.find(sname);
            if (it == self->state.sessions.end()) return;
            it->second.failed = "cannot reach the daemon of node " + std::to_string(n) + " (" +
                                it->second.daemons[n] + "): " + self->system().render(e);
            peer_known(self, it->second);
          });
}

// The session of a job: each node connects to the nodes of lower ids and
// introduces itself to them (hello); the nodes of higher ids come to it.
// One connection per pair: CAF's middleman drops one of two connections
// two nodes open to each other at once, and with it the proxies on it.
void begin_job(self_ptr self, job_plan plan) {
  auto& st = self->state;
  // A spawned job joins its parent's session.
  std::string sname = plan.parent.empty() ? plan.nspace : plan.parent.substr(0, plan.parent.rfind(':'));
  if (auto parent = st.jobs.find(sname); parent != st.jobs.end()) sname = parent->second.session;
  auto& s = st.sessions[sname];
  std::set<uint32_t> used(plan.node_of.begin(), plan.node_of.end());
  job_entry j;
  j.session = sname;
  j.nodes_used.assign(used.begin(), used.end());
  j.plan = plan;
  st.jobs[plan.nspace] = std::move(j);
  if (s.ready) return launch(self, plan, s.failed);
  s.waiting.push_back(plan);
  if (!s.name.empty()) return;
  s.name = sname;
  s.launcher = plan.launcher;
  s.daemons = plan.daemons;
  s.this_node = plan.this_node;
  s.fences = fence_engine{plan.this_node};
  if (!parse_algorithm(plan.fence, s.alg)) s.alg = fence_algorithm::tree;
  s.peers.assign(plan.daemons.size(), caf::actor{});
  s.peers[plan.this_node] = caf::actor_cast<caf::actor>(self);
  self->monitor(plan.launcher);
  st.alive.heard({sname, launcher_node}, liveness_clock::now());
  auto early = st.hellos.find(sname);
  if (early != st.hellos.end()) {
    auto hellos = std::move(early->second);
    st.hellos.erase(early);
    for (auto& [n, peer] : hellos) add_peer(self, s, n, peer);
  }
  for (uint32_t n = 0; n < plan.this_node; ++n) {
    std::string host;
    uint16_t port = 0;
    if (!split_address(plan.daemons[n], host, port)) {
      s.failed = "bad daemon address " + plan.daemons[n];
      peer_known(self, s);
      return;
    }
    connect_peer(self, sname, n, host, port);
  }
  peer_known(self, s);
}

void forget_session_if_done(self_ptr self, const std::string& sname) {
  auto& st = self->state;
  for (const auto& [ns, j] : st.jobs)
    if (j.session == sname) return;
  auto it = st.sessions.find(sname);
  if (it == st.sessions.end()) return;
  if (it->second.this_node == 0)
    pmixrun::post([sname] {
      auto store = stores.find(sname);
      if (store == stores.end()) return;
      store->second->cancel_all(PMIX_ERR_NOT_FOUND);
      stores.erase(store);
    });
  it->second.fences.forget("");
  flush_fences(self, it->second);
  for (auto& p : it->second.peers)
    if (p && p != caf::actor_cast<caf::actor>(self)) self->demonitor(p);
  self->demonitor(it->second.launcher);
  for (uint32_t n = 0; n < it->second.peers.size(); ++n) st.alive.forget({sname, n});
  st.alive.forget({sname, launcher_node});
  st.sessions.erase(it);
}

// Every second: a beat to each peer and launcher of each session, and the
// peers not heard from for peer_timeout() lost (liveness.hpp).
void beat(self_ptr self) {
  auto& st = self->state;
  for (auto& [name, s] : st.sessions) {
    for (uint32_t n = 0; n < s.peers.size(); ++n)
      if (n != s.this_node && s.peers[n] && s.lost.count(n) == 0)
        self->send(s.peers[n], beat_atom::value, name, s.this_node);
    if (s.launcher) self->send(s.launcher, beat_atom::value, name, s.this_node);
  }
  const std::string silent = " has not answered for " + std::to_string(peer_timeout().count()) + " s";
  for (const auto& [sname, node] : st.alive.check(liveness_clock::now())) {
    auto it = st.sessions.find(sname);
    if (it == st.sessions.end()) continue;
    if (node == launcher_node) {
      warn(self, "the launcher of " + sname + silent + ": ending its processes");
      st.cfg.hooks.terminate("the launcher does not answer");
    } else if (it->second.lost.count(node) == 0) {
      warn(self, "node " + std::to_string(node) + " (" + it->second.daemons[node] + ") of " + sname + silent);
      lose_node(self, it->second, node);
    }
  }
}

caf::behavior daemon_actor(self_ptr self, daemon_config cfg) {
  fence_trace::open(cfg.name);
  self->state.cfg = std::move(cfg);
  self->set_default_handler(caf::drop);
  self->delayed_send(self, beat_interval, beattick_atom::value);
  self->set_down_handler([self](caf::down_msg& dm) {
    auto& st = self->state;
    std::vector<std::string> launchers_gone;
    for (auto& [name, s] : st.sessions) {
      if (s.launcher.address() == dm.source) launchers_gone.push_back(name);
      for (uint32_t n = 0; n < s.peers.size(); ++n)
        if (s.peers[n] && s.peers[n].address() == dm.source) lose_node(self, s, n);
    }
    if (!launchers_gone.empty()) {
      warn(self, "the launcher of " + launchers_gone.front() + " is gone: ending its processes");
      st.cfg.hooks.terminate("the launcher is gone");
    }
  });
  return {
      [self](caf::get_atom) -> std::string { return self->state.cfg.name; },
      [self](job_atom, job_plan& plan) -> caf::result<int32_t, std::string> {
        auto rp = self->make_response_promise();
        if (self->state.jobs.count(plan.nspace) > 0) {
          rp.deliver(static_cast<int32_t>(PMIX_ERR_DUPLICATE_KEY), "job " + plan.nspace + " exists here");
          return rp;
        }
        note(self, "job " + plan.nspace + " of " + std::to_string(plan.size) + " ranks");
        self->state.starts.emplace(plan.nspace, rp);
        begin_job(self, std::move(plan));
        return rp;
      },
      [self](started_atom, const std::string& nspace, int32_t rc, std::string& error) {
        auto it = self->state.starts.find(nspace);
        if (it == self->state.starts.end()) return;
        if (rc != PMIX_SUCCESS) warn(self, "job " + nspace + " did not start: " + error);
        it->second.deliver(rc, std::move(error));
        self->state.starts.erase(it);
        release_pushes(self, nspace, rc == PMIX_SUCCESS ? PMIX_SUCCESS : PMIX_ERR_NOT_FOUND);
      },
      [self](beat_atom, const std::string& sname, uint32_t node) {
        // The launcher is watched from the job's plan on; another daemon
        // from its first beat, which it sends once it has the plan too (a
        // peer connected earlier is not judged on the time its plan took).
        auto& st = self->state;
        auto it = st.sessions.find(sname);
        if (it == st.sessions.end()) return;
        const auto& s = it->second;
        const bool peer = node < s.peers.size() && node != s.this_node && s.peers[node] && s.lost.count(node) == 0;
        if (peer || (node == launcher_node && st.alive.watched({sname, node})))
          st.alive.heard({sname, node}, liveness_clock::now());
      },
      [self](beattick_atom) {
        beat(self);
        self->delayed_send(self, beat_interval, beattick_atom::value);
      },
      [self](hello_atom, const std::string& sname, uint32_t node, caf::actor& peer) {
        auto it = self->state.sessions.find(sname);
        if (it == self->state.sessions.end()) {
          self->state.hellos[sname][node] = peer;
          return;
        }
        add_peer(self, it->second, node, peer);
      },
      [self](term_atom, const std::string& nspace, const std::string& why) {
        note(self, "terminate " + nspace + ": " + why);
        self->state.cfg.hooks.terminate(why);
      },
      [self](fence_atom, const std::string& sname, const std::string& key, uint32_t round, fence_blocks& blocks) {
        auto it = self->state.sessions.find(sname);
        if (it == self->state.sessions.end()) return;
        fence_trace::mark("recv", key, -1, round);
        it->second.fences.receive(key, round, std::move(blocks));
        flush_fences(self, it->second);
      },
      [self](modex_atom, const std::string& nspace, uint32_t rank) -> caf::result<int32_t, std::string> {
        auto rp = self->make_response_promise();
        const auto token = self->state.next_token++;
        self->state.served.emplace(token, rp);
        pmix_proc_t proc;
        PMIX_LOAD_PROCID(&proc, nspace.c_str(), rank);
        auto* r = new served_request{caf::actor_cast<caf::actor>(self), token};
        const auto rc = PMIx_server_dmodex_request(&proc, on_served, r);
        if (rc != PMIX_SUCCESS) {
          delete r;
          self->state.served.erase(token);
          rp.deliver(static_cast<int32_t>(rc), std::string());
        }
        return rp;
      },
      [self](served_atom, uint64_t token, int32_t status, std::string& data) {
        auto it = self->state.served.find(token);
        if (it == self->state.served.end()) return;
        it->second.deliver(status, std::move(data));
        self->state.served.erase(it);
      },
      [self](publish_atom, const std::string& sname, const std::string& bytes) -> caf::result<int32_t, std::string> {
        auto rp = self->make_response_promise();
        const uint64_t token = serve_later(self, rp);
        caf::actor me = caf::actor_cast<caf::actor>(self);
        const bool verbose = self->state.cfg.verbose;
        pmixrun::post([me, token, sname, bytes, verbose] {
          store_request req;
          const pmix_status_t rc =
              unpack_store_request(bytes, req)
                  ? pmixrun::store_publish(store_of(sname), req.proc, req.info.data(), req.info.size(), verbose)
                  : PMIX_ERR_UNPACK_FAILURE;
          caf::anon_send(me, served_atom::value, token, static_cast<int32_t>(rc), std::string());
        });
        return rp;
      },
      [self](lookup_atom, const std::string& sname, const std::string& bytes) -> caf::result<int32_t, std::string> {
        auto rp = self->make_response_promise();
        auto* r = new served_request{caf::actor_cast<caf::actor>(self), serve_later(self, rp)};
        const bool verbose = self->state.cfg.verbose;
        pmixrun::post([r, sname, bytes, verbose] {
          store_request req;
          if (!unpack_store_request(bytes, req)) return on_served_lookup(PMIX_ERR_UNPACK_FAILURE, nullptr, 0, r);
          pmixrun::store_lookup(store_of(sname), req.proc, req.keys, req.info.data(), req.info.size(), verbose,
                                on_served_lookup, r);
        });
        return rp;
      },
      [self](unpub_atom, const std::string& sname, const std::string& bytes) -> caf::result<int32_t, std::string> {
        auto rp = self->make_response_promise();
        const uint64_t token = serve_later(self, rp);
        caf::actor me = caf::actor_cast<caf::actor>(self);
        pmixrun::post([me, token, sname, bytes] {
          store_request req;
          const pmix_status_t rc =
              unpack_store_request(bytes, req)
                  ? pmixrun::store_unpublish(store_of(sname), req.proc, req.all_keys ? nullptr : &req.keys,
                                             req.info.data(), req.info.size())
                  : PMIX_ERR_UNPACK_FAILURE;
          caf::anon_send(me, served_atom::value, token, static_cast<int32_t>(rc), std::string());
        });
        return rp;
      },
      [self](procend_atom, const std::string& sname, const std::string& nspace, uint32_t rank) {
        pmixrun::post([sname, nspace, rank] {
          auto it = stores.find(sname);
          if (it != stores.end()) it->second->proc_ended(pmixrun::make_proc(nspace, rank));
        });
      },
      [self](notify_atom, const std::string& bytes) -> caf::result<int32_t, std::string> {
        auto rp = self->make_response_promise();
        event_message ev;
        if (!unpack_event(bytes, ev)) {
          rp.deliver(static_cast<int32_t>(PMIX_ERR_UNPACK_FAILURE), std::string());
          return rp;
        }
        auto* r = new served_request{caf::actor_cast<caf::actor>(self), serve_later(self, rp)};
        const auto rc =
            PMIx_Notify_event(ev.code, &ev.source, ev.range, ev.info.data(), ev.info.size(), on_served_op, r);
        if (rc != PMIX_SUCCESS) on_served_op(rc == PMIX_OPERATION_SUCCEEDED ? PMIX_SUCCESS : rc, r);
        return rp;
      },
      [self](uppub_atom, const upcall_ptr& call) {
        on_store_upcall(self, publish_atom::value, call, caf::duration{std::chrono::seconds(60)});
      },
      [self](uplookup_atom, const upcall_ptr& call) {
        // A lookup may wait for a publish (PMIX_WAIT): the store's deadline,
        // the requester's end or node 0's loss ends it.
        on_store_upcall(self, lookup_atom::value, call, caf::duration{caf::infinite});
      },
      [self](upunpub_atom, const upcall_ptr& call) {
        on_store_upcall(self, unpub_atom::value, call, caf::duration{std::chrono::seconds(60)});
      },
      [self](upnotify_atom, const upcall_ptr& call) { on_notify_upcall(self, call); },
      [self](upiof_atom, const upcall_ptr& call) { on_iof_upcall(self, call); },
      [self](upstdin_atom, const upcall_ptr& call) { on_stdin_upcall(self, call); },
      [self](pushed_atom, uint64_t token, int32_t status, const std::string& count) {
        auto it = self->state.remote_calls.find(token);
        if (it == self->state.remote_calls.end()) return;
        auto c = std::move(it->second.call);
        self->state.remote_calls.erase(it);
        c->answer(status, count);
      },
      [self](stdin_atom, const std::string&, const std::vector<std::string>& names, const std::string& bytes,
             bool end) -> caf::result<int32_t, std::string> {
        // Another node's push (or the launcher's --stdin) to processes of this one.
        std::vector<pmix_proc_t> targets;
        for (const auto& text : names) {
          pmix_proc_t p;
          if (!parse_proc(text, p)) return {static_cast<int32_t>(PMIX_ERR_BAD_PARAM), std::string()};
          targets.push_back(p);
        }
        auto rp = self->make_response_promise();
        serve_push(self, held_push{serve_later(self, rp), std::move(targets), bytes, end});
        return rp;
      },
      [self](pushwait_atom, const std::string& nspace) {
        if (self->state.held_pushes.count(nspace) == 0) return;
        warn(self, "pushed input for " + nspace + " waited 60 s for the job to start here");
        release_pushes(self, nspace, PMIX_ERR_NOT_FOUND);
      },
      [self](iofpull_atom, const std::string& sname, const std::string& nspace, uint32_t rank, int32_t channels,
             bool stop, uint32_t node) -> caf::result<int32_t, std::string> {
        auto it = self->state.sessions.find(sname);
        if (it == self->state.sessions.end() || self->state.jobs.count(nspace) == 0)
          return {static_cast<int32_t>(PMIX_ERR_NOT_FOUND), std::string("no such job here")};
        auto& subscribers = it->second.pulls[{nspace, rank}];
        if (stop) {
          subscribers.erase(node);
        } else {
          subscribers[node] |= channels;
        }
        return {static_cast<int32_t>(PMIX_SUCCESS), std::string()};
      },
      [self](iofdata_atom, const std::string& nspace, uint32_t rank, int32_t channel, const std::string& bytes) {
        pmix_proc_t source;
        PMIX_LOAD_PROCID(&source, nspace.c_str(), rank);
        auto* copy = new std::string(bytes);
        pmix_byte_object_t bo;
        bo.bytes = copy->data();
        bo.size = copy->size();
        const pmix_iof_channel_t ch = channel == 1 ? PMIX_FWD_STDERR_CHANNEL : PMIX_FWD_STDOUT_CHANNEL;
        if (PMIx_server_IOF_deliver(&source, ch, &bo, nullptr, 0, release_delivery, copy) != PMIX_SUCCESS)
          delete copy;
      },
      [self](upspawn_atom, const upcall_ptr& call) {
        // The launcher places the new job over the nodes and sends it to
        // every daemon; it answers once each has started its part.
        const auto& parent = call->procs.front();
        const std::string sname = session_of(self, parent);
        auto it = self->state.sessions.find(sname);
        if (sname.empty() || it == self->state.sessions.end()) return call->fail(PMIX_ERR_NOT_FOUND);
        self->request(it->second.launcher, std::chrono::seconds(90), spawn_atom::value, proc_text(parent), call->apps)
            .then(
                [self, call](int32_t status, std::string& text) {
                  if (status != PMIX_SUCCESS) warn(self, "spawn by " + proc_text(call->procs.front()) + ": " + text);
                  call->answer(status, text);
                },
                [self, call](caf::error& e) {
                  warn(self, "spawn by " + proc_text(call->procs.front()) +
                                 ": the launcher does not answer: " + self->system().render(e));
                  call->fail(PMIX_ERR_UNREACH);
                });
      },
      [self](upfence_atom, const upcall_ptr& call) { on_fence_upcall(self, call); },
      [self](upgroup_atom, const upcall_ptr& call) { on_group_upcall(self, call); },
      [self](upmodex_atom, const upcall_ptr& call) { on_modex_upcall(self, call); },
      [self](upabort_atom, const upcall_ptr& call) {
        const auto& p = call->procs.front();
        auto it = self->state.jobs.find(nspace_of(p));
        if (it != self->state.jobs.end()) {
          auto& s = self->state.sessions[it->second.session];
          self->send(s.launcher, abort_atom::value, nspace_of(p), static_cast<uint32_t>(p.rank),
                     static_cast<int32_t>(call->status), call->data);
        }
        call->answer_op(PMIX_SUCCESS);
      },
      [self](outputl_atom, const std::string& nspace, uint32_t rank, int32_t channel, std::string& bytes) {
        auto it = self->state.jobs.find(nspace);
        if (it == self->state.jobs.end()) return;
        auto& s = self->state.sessions[it->second.session];
        // To the nodes that pull it, then to the launcher.
        const int32_t flag = channel == 1 ? PMIX_FWD_STDERR_CHANNEL : PMIX_FWD_STDOUT_CHANNEL;
        std::set<uint32_t> to;
        for (uint32_t r : {rank, static_cast<uint32_t>(PMIX_RANK_WILDCARD)}) {
          auto pulled = s.pulls.find({nspace, r});
          if (pulled == s.pulls.end()) continue;
          for (const auto& [node, channels] : pulled->second)
            if ((channels & flag) != 0) to.insert(node);
        }
        for (auto node : to)
          if (node < s.peers.size() && s.peers[node] && s.lost.count(node) == 0)
            self->send(s.peers[node], iofdata_atom::value, nspace, rank, channel, bytes);
        self->send(s.launcher, output_atom::value, nspace, rank, channel, std::move(bytes));
      },
      [self](exitedl_atom, const std::string& nspace, uint32_t rank, int32_t status) {
        auto it = self->state.jobs.find(nspace);
        if (it == self->state.jobs.end()) return;
        auto& s = self->state.sessions[it->second.session];
        self->send(s.launcher, exited_atom::value, nspace, rank, status);
        // Node 0's data store forgets the process (PMIX_PERSIST_PROC, held lookups).
        if (!s.peers.empty() && s.peers[0] && s.lost.count(0) == 0)
          self->send(s.peers[0], procend_atom::value, s.name, nspace, rank);
      },
      [self](jobdonel_atom, const std::string& nspace) {
        auto& st = self->state;
        auto it = st.jobs.find(nspace);
        if (it == st.jobs.end()) return;
        const std::string sname = it->second.session;
        const uint32_t node = it->second.plan.this_node;
        self->send(st.sessions[sname].launcher, jobdone_atom::value, nspace, node);
        st.jobs.erase(it);
        // A push that comes now is not held for the job: it is refused.
        st.ended_jobs.push_back(nspace);
        if (st.ended_jobs.size() > 1024) st.ended_jobs.pop_front();
        forget_session_if_done(self, sname);
      },
  };
}

// The up-calls' target; set while the server runs.
std::mutex target_mutex;
caf::actor target;

caf::actor current_target() {
  std::lock_guard<std::mutex> g{target_mutex};
  return target;
}

pmix_status_t on_connected(const pmix_proc_t*, void*, pmix_op_cbfunc_t, void*) {
  return PMIX_OPERATION_SUCCEEDED;
}

pmix_status_t on_finalized(const pmix_proc_t*, void*, pmix_op_cbfunc_t, void*) {
  return PMIX_OPERATION_SUCCEEDED;
}

pmix_status_t on_fence(const pmix_proc_t procs[], size_t nprocs, const pmix_info_t[], size_t, char* data,
                       size_t ndata, pmix_modex_cbfunc_t cbfunc, void* cbdata) {
  fence_trace::mark("upcall", "-");
  auto t = current_target();
  if (!t) return PMIX_ERR_NOT_AVAILABLE;
  auto call = std::make_shared<upcall>();
  call->procs.assign(procs, procs + nprocs);
  call->data.assign(data != nullptr ? data : "", data != nullptr ? ndata : 0);
  call->modex_cb = cbfunc;
  call->cbdata = cbdata;
  caf::anon_send(t, upfence_atom::value, call);
  return PMIX_SUCCESS;
}

pmix_status_t on_group(pmix_group_operation_t op, char grp[], const pmix_proc_t procs[], size_t nprocs,
                       const pmix_info_t directives[], size_t ndirs, pmix_info_cbfunc_t cbfunc, void* cbdata) {
  if (op != PMIX_GROUP_CONSTRUCT && op != PMIX_GROUP_DESTRUCT) return PMIX_ERR_NOT_SUPPORTED;
  auto t = current_target();
  if (!t) return PMIX_ERR_NOT_AVAILABLE;
  auto call = std::make_shared<upcall>();
  call->procs.assign(procs, procs + nprocs);
  call->group = grp;
  call->construct = op == PMIX_GROUP_CONSTRUCT;
  for (size_t k = 0; k < ndirs; ++k) {
    if (PMIX_CHECK_KEY(&directives[k], PMIX_GROUP_ASSIGN_CONTEXT_ID))
      call->want_context_id = PMIX_INFO_TRUE(&directives[k]);
    if (PMIX_CHECK_KEY(&directives[k], PMIX_GROUP_ENDPT_DATA) && directives[k].value.type == PMIX_BYTE_OBJECT &&
        directives[k].value.data.bo.bytes != nullptr)
      call->data.assign(directives[k].value.data.bo.bytes, directives[k].value.data.bo.size);
  }
  call->info_cb = cbfunc;
  call->cbdata = cbdata;
  caf::anon_send(t, upgroup_atom::value, call);
  return PMIX_SUCCESS;
}

pmix_status_t on_direct_modex(const pmix_proc_t* proc, const pmix_info_t[], size_t, pmix_modex_cbfunc_t cbfunc,
                              void* cbdata) {
  auto t = current_target();
  if (!t) return PMIX_ERR_NOT_AVAILABLE;
  auto call = std::make_shared<upcall>();
  call->procs.push_back(*proc);
  call->modex_cb = cbfunc;
  call->cbdata = cbdata;
  caf::anon_send(t, upmodex_atom::value, call);
  return PMIX_SUCCESS;
}

pmix_status_t on_abort(const pmix_proc_t* proc, void*, int status, const char msg[], pmix_proc_t[], size_t,
                       pmix_op_cbfunc_t cbfunc, void* cbdata) {
  auto t = current_target();
  if (!t) return PMIX_ERR_NOT_AVAILABLE;
  auto call = std::make_shared<upcall>();
  call->procs.push_back(*proc);
  call->status = status;
  call->data = msg != nullptr ? msg : "";
  call->op_cb = cbfunc;
  call->cbdata = cbdata;
  caf::anon_send(t, upabort_atom::value, call);
  return PMIX_SUCCESS;
}

pmix_status_t on_publish(const pmix_proc_t* proc, const pmix_info_t info[], size_t ninfo, pmix_op_cbfunc_t cbfunc,
                         void* cbdata) {
  auto t = current_target();
  if (!t) return PMIX_ERR_NOT_AVAILABLE;
  auto call = std::make_shared<upcall>();
  call->procs.push_back(*proc);
  call->data = pack_store_request(*proc, nullptr, info, ninfo);
  if (call->data.empty()) return PMIX_ERR_PACK_FAILURE;
  call->op_cb = cbfunc;
  call->cbdata = cbdata;
  caf::anon_send(t, uppub_atom::value, call);
  return PMIX_SUCCESS;
}

pmix_status_t on_lookup(const pmix_proc_t* proc, char** keys, const pmix_info_t info[], size_t ninfo,
                        pmix_lookup_cbfunc_t cbfunc, void* cbdata) {
  auto t = current_target();
  if (!t) return PMIX_ERR_NOT_AVAILABLE;
  auto call = std::make_shared<upcall>();
  call->procs.push_back(*proc);
  const auto wanted = pmixrun::copy_argv(keys);
  call->data = pack_store_request(*proc, &wanted, info, ninfo);
  if (call->data.empty()) return PMIX_ERR_PACK_FAILURE;
  call->lookup_cb = cbfunc;
  call->cbdata = cbdata;
  caf::anon_send(t, uplookup_atom::value, call);
  return PMIX_SUCCESS;
}

pmix_status_t on_unpublish(const pmix_proc_t* proc, char** keys, const pmix_info_t info[], size_t ninfo,
                           pmix_op_cbfunc_t cbfunc, void* cbdata) {
  auto t = current_target();
  if (!t) return PMIX_ERR_NOT_AVAILABLE;
  auto call = std::make_shared<upcall>();
  call->procs.push_back(*proc);
  const auto wanted = pmixrun::copy_argv(keys);
  call->data = pack_store_request(*proc, keys == nullptr ? nullptr : &wanted, info, ninfo);
  if (call->data.empty()) return PMIX_ERR_PACK_FAILURE;
  call->op_cb = cbfunc;
  call->cbdata = cbdata;
  caf::anon_send(t, upunpub_atom::value, call);
  return PMIX_SUCCESS;
}

pmix_status_t on_notify(pmix_status_t code, const pmix_proc_t* source, pmix_data_range_t range, pmix_info_t info[],
                        size_t ninfo, pmix_op_cbfunc_t cbfunc, void* cbdata) {
  auto t = current_target();
  if (!t) return PMIX_ERR_NOT_AVAILABLE;
  auto call = std::make_shared<upcall>();
  call->procs.push_back(*source);
  call->data = pack_event(code, *source, range, info, ninfo);
  if (call->data.empty()) return PMIX_ERR_PACK_FAILURE;
  call->op_cb = cbfunc;
  call->cbdata = cbdata;
  caf::anon_send(t, upnotify_atom::value, call);
  return PMIX_SUCCESS;
}

pmix_status_t on_spawn(const pmix_proc_t* proc, const pmix_info_t job_info[], size_t ninfo, const pmix_app_t apps[],
                       size_t napps, pmix_spawn_cbfunc_t cbfunc, void* cbdata) {
  auto t = current_target();
  if (!t) return PMIX_ERR_NOT_AVAILABLE;
  if (napps == 0 || apps == nullptr) return PMIX_ERR_BAD_PARAM;
  auto call = std::make_shared<upcall>();
  call->procs.push_back(*proc);
  std::string job_wdir;
  if (const pmix_info_t* i = pmixrun::find_info(job_info, ninfo, PMIX_WDIR))
    if (i->value.type == PMIX_STRING && i->value.data.string != nullptr) job_wdir = i->value.data.string;
  for (std::size_t a = 0; a < napps; ++a) {
    const pmix_app_t& in = apps[a];
    if (in.maxprocs < 1) return PMIX_ERR_BAD_PARAM;
    app_plan app;
    app.argv = pmixrun::copy_argv(in.argv);
    if (in.cmd != nullptr && in.cmd[0] != '\0') {
      if (app.argv.empty()) app.argv.emplace_back(in.cmd);
      else app.argv.front() = in.cmd;
    }
    if (app.argv.empty()) return PMIX_ERR_BAD_PARAM;
    app.env = pmixrun::copy_argv(in.env);
    if (in.cwd != nullptr && in.cwd[0] != '\0') {
      app.cwd = in.cwd;
    } else if (const pmix_info_t* i = pmixrun::find_info(in.info, in.ninfo, PMIX_WDIR);
               i != nullptr && i->value.type == PMIX_STRING && i->value.data.string != nullptr) {
      app.cwd = i->value.data.string;
    } else {
      app.cwd = job_wdir;
    }
    app.nprocs = static_cast<uint32_t>(in.maxprocs);
    call->apps.push_back(std::move(app));
  }
  call->spawn_cb = cbfunc;
  call->cbdata = cbdata;
  caf::anon_send(t, upspawn_atom::value, call);
  return PMIX_SUCCESS;
}

pmix_status_t on_push_stdin(const pmix_proc_t*, const pmix_proc_t targets[], size_t ntargets,
                            const pmix_info_t directives[], size_t ndirs, const pmix_byte_object_t* bo,
                            pmix_op_cbfunc_t cbfunc, void* cbdata) {
  auto t = current_target();
  if (!t) return PMIX_ERR_NOT_AVAILABLE;
  if (targets == nullptr || ntargets == 0) return PMIX_ERR_BAD_PARAM;
  auto call = std::make_shared<upcall>();
  call->procs.assign(targets, targets + ntargets);
  if (bo != nullptr && bo->bytes != nullptr) call->data.assign(bo->bytes, bo->size);
  // No bytes, an empty payload or PMIX_IOF_COMPLETE: the end of the input.
  call->status = call->data.empty() || pmixrun::flag(directives, ndirs, PMIX_IOF_COMPLETE) ? 1 : 0;
  call->op_cb = cbfunc;
  call->cbdata = cbdata;
  caf::anon_send(t, upstdin_atom::value, call);
  return PMIX_SUCCESS;
}

pmix_status_t on_iof_pull(const pmix_proc_t procs[], size_t nprocs, const pmix_info_t directives[], size_t ndirs,
                          pmix_iof_channel_t channels, pmix_op_cbfunc_t cbfunc, void* cbdata) {
  auto t = current_target();
  if (!t) return PMIX_ERR_NOT_AVAILABLE;
  if (procs == nullptr || nprocs == 0) return PMIX_ERR_BAD_PARAM;
  const bool stop = pmixrun::flag(directives, ndirs, PMIX_IOF_STOP);
  if (!stop && (channels & (PMIX_FWD_STDOUT_CHANNEL | PMIX_FWD_STDERR_CHANNEL)) == 0)
    return PMIX_ERR_NOT_SUPPORTED;  // only stdout and stderr are forwarded
  auto call = std::make_shared<upcall>();
  call->procs.assign(procs, procs + nprocs);
  call->status = static_cast<int>(channels);
  call->data = stop ? "stop" : "";
  call->op_cb = cbfunc;
  call->cbdata = cbdata;
  caf::anon_send(t, upiof_atom::value, call);
  return PMIX_SUCCESS;
}

}  // namespace

// A broker: the daemon actor runs on the middleman's multiplexer thread,
// where (with middleman.workers = 0, pmixd.cpp's configure) the messages of
// other daemons are delivered and its own are written, with no thread
// wake-up between (docs/multinode.md, "Where a fence's time goes"). It
// never blocks: what must wait goes to the main thread (the hooks) or to
// the server library (its calls here only queue).
caf::actor spawn_daemon(caf::actor_system& sys, daemon_config cfg) {
  return sys.middleman().spawn_broker(daemon_actor, std::move(cfg));
}

pmix_server_module_t daemon_module() {
  pmix_server_module_t m;
  std::memset(&m, 0, sizeof m);
  m.client_connected = on_connected;
  m.client_finalized = on_finalized;
  m.abort = on_abort;
  m.fence_nb = on_fence;
  m.direct_modex = on_direct_modex;
  m.group = on_group;
  m.publish = on_publish;
  m.lookup = on_lookup;
  m.unpublish = on_unpublish;
  m.notify_event = on_notify;
  m.spawn = on_spawn;
  m.iof_pull = on_iof_pull;
  m.push_stdin = on_push_stdin;
  return m;
}

void expire_stores() {
  const auto now = pmixrun::datastore::clock::now();
  for (auto& [name, store] : stores) store->expire(now);
}

void drop_stores() {
  for (auto& [name, store] : stores) store->cancel_all(PMIX_ERR_NOT_FOUND);
  stores.clear();
}

void set_module_target(caf::actor daemon) {
  std::lock_guard<std::mutex> g{target_mutex};
  target = std::move(daemon);
}

void clear_module_target() {
  std::lock_guard<std::mutex> g{target_mutex};
  target = caf::actor{};
}

bool split_address(const std::string& text, std::string& host, uint16_t& port) {
  const auto colon = text.rfind(':');
  if (colon == std::string::npos || colon == 0 || colon + 1 >= text.size()) return false;
  char* end = nullptr;
  const long v = std::strtol(text.c_str() + colon + 1, &end, 10);
  if (*end != '\0' || v <= 0 || v > 65535) return false;
  host = text.substr(0, colon);
  port = static_cast<uint16_t>(v);
  return true;
}

}  // namespace pmixd
