// The server of one simulated node: the real library (PMIx_server_init and
// its actors, sockets and loop thread), with a host module whose inter-node
// up-calls (fence_nb, direct_modex) go to the driver's in-process fabric over
// the control channel. docs/simulator.md.
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <malloc.h>
#include <pmix.h>
#include <pmix_server.h>
#include <unistd.h>

#include <atomic>
#include <condition_variable>
#include <cstdio>
#include <cstring>
#include <cstdlib>
#include <map>
#include <set>
#include <thread>
#include <mutex>

#include "api/server_runtime_abi.h"
#include "tools/pmixsim/sim.hpp"

namespace pmixsim {

bool write_all(int fd, std::string_view bytes) {
  while (!bytes.empty()) {
    const auto n = ::write(fd, bytes.data(), bytes.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    bytes.remove_prefix(static_cast<std::size_t>(n));
  }
  return true;
}

bool read_frame(int fd, std::string& out) {
  std::uint32_t n = 0;
  std::size_t got = 0;
  while (got < 4) {
    const auto r = ::read(fd, reinterpret_cast<char*>(&n) + got, 4 - got);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return false;
    got += static_cast<std::size_t>(r);
  }
  out.resize(n);
  got = 0;
  while (got < n) {
    const auto r = ::read(fd, out.data() + got, n - got);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return false;
    got += static_cast<std::size_t>(r);
  }
  return true;
}

bool take_frame(std::string_view buf, std::size_t& pos, std::string_view& payload) {
  if (buf.size() - pos < 4) return false;
  std::uint32_t n = 0;
  std::memcpy(&n, buf.data() + pos, 4);
  if (buf.size() - pos - 4 < n) return false;
  payload = buf.substr(pos + 4, n);
  pos += 4 + n;
  return true;
}

node_stats own_stats() {
  node_stats s;
  const struct mallinfo2 m = mallinfo2();
  s.heap = static_cast<std::int64_t>(m.uordblks + m.hblkhd);
  if (std::FILE* f = std::fopen("/proc/self/status", "r")) {
    char line[256];
    while (std::fgets(line, sizeof line, f) != nullptr)
      if (std::strncmp(line, "RssAnon:", 8) == 0) s.rss_kb = std::strtol(line + 8, nullptr, 10);
    std::fclose(f);
  }
  if (DIR* d = ::opendir("/proc/self/fd")) {
    while (const dirent* e = ::readdir(d))
      if (e->d_name[0] != '.') ++s.fds;
    ::closedir(d);
    --s.fds;  // the directory's own descriptor
  }
  return s;
}

namespace {

// The node's state the up-calls reach (one server per process: one node).
struct node_state {
  int ctl = -1;
  std::mutex mutex;
  std::uint32_t next_id = 1;
  std::map<std::uint32_t, std::pair<pmix_modex_cbfunc_t, void*>> pending;  // fences and direct modex
  std::atomic<std::int64_t> connected{0}, finalized{0}, fences{0}, dmodex{0};

  // The frames for the driver (the server's up-calls come on its threads,
  // answers on this loop's): a writer thread sends what gathered while it
  // wrote the last, one write for a burst of direct-modex requests.
  std::mutex out_mutex;
  std::condition_variable out_ready;
  std::string out;
  bool out_closing = false;
  std::thread out_writer;
  void send(std::string frame) {
    std::lock_guard<std::mutex> guard{out_mutex};
    const bool was_empty = out.empty();
    out += frame;
    if (was_empty) out_ready.notify_one();
  }
  void start_writer() {
    out_closing = false;
    out_writer = std::thread([this] {
      std::string batch;
      for (;;) {
        {
          std::unique_lock<std::mutex> guard{out_mutex};
          out_ready.wait(guard, [this] { return !out.empty() || out_closing; });
          if (out.empty()) return;
          batch.swap(out);
        }
        write_all(ctl, batch);
        batch.clear();
      }
    });
  }
  // Sends what is left, then ends the writer.
  void stop_writer() {
    {
      std::lock_guard<std::mutex> guard{out_mutex};
      out_closing = true;
    }
    out_ready.notify_one();
    if (out_writer.joinable()) out_writer.join();
  }
  std::uint32_t remember(pmix_modex_cbfunc_t cb, void* cbdata) {
    std::lock_guard<std::mutex> guard{mutex};
    const auto id = next_id++;
    pending.emplace(id, std::make_pair(cb, cbdata));
    return id;
  }
  void complete(std::uint32_t id, pmix_status_t st, std::string_view data) {
    std::pair<pmix_modex_cbfunc_t, void*> p{nullptr, nullptr};
    {
      std::lock_guard<std::mutex> guard{mutex};
      auto it = pending.find(id);
      if (it == pending.end()) return;
      p = it->second;
      pending.erase(it);
    }
    // The data stays valid until the server releases it.
    auto* copy = new std::string(data);
    p.first(st, copy->data(), copy->size(), p.second,
            [](void* d) { delete static_cast<std::string*>(d); }, copy);
  }
};
node_state* the_node = nullptr;
// Ranks deregistered before (under load) are not deregistered again.
std::set<std::pair<std::string, std::uint32_t>> gone;

node_stats stats_now() {
  auto s = own_stats();
  s.connected = the_node->connected.load();
  s.finalized = the_node->finalized.load();
  s.fences = the_node->fences.load();
  s.dmodex = the_node->dmodex.load();
  return s;
}

pmix_status_t on_connected(const pmix_proc_t*, void*, pmix_op_cbfunc_t, void*) {
  ++the_node->connected;
  return PMIX_OPERATION_SUCCEEDED;
}
pmix_status_t on_finalized(const pmix_proc_t*, void*, pmix_op_cbfunc_t, void*) {
  ++the_node->finalized;
  return PMIX_OPERATION_SUCCEEDED;
}
pmix_status_t on_abort(const pmix_proc_t*, void*, int, const char*, pmix_proc_t[], size_t, pmix_op_cbfunc_t,
                       void*) {
  return PMIX_OPERATION_SUCCEEDED;
}

// The inter-node part of a fence: this node's contribution goes to the
// fabric, which answers once every node of the namespace contributed.
pmix_status_t on_fence(const pmix_proc_t procs[], size_t nprocs, const pmix_info_t[], size_t, char* data,
                       size_t ndata, pmix_modex_cbfunc_t cbfunc, void* cbdata) {
  ++the_node->fences;
  std::string signature;
  for (size_t k = 0; k < nprocs; ++k) {
    signature += procs[k].nspace;
    signature += ':';
    signature += procs[k].rank == PMIX_RANK_WILDCARD ? std::string{"*"} : std::to_string(procs[k].rank);
    signature += ';';
  }
  const auto id = the_node->remember(cbfunc, cbdata);
  the_node->send(writer{ctl::fence}.u32(id).str(signature).str({data, ndata}).done());
  return PMIX_SUCCESS;
}

pmix_status_t on_direct_modex(const pmix_proc_t* proc, const pmix_info_t[], size_t, pmix_modex_cbfunc_t cbfunc,
                              void* cbdata) {
  ++the_node->dmodex;
  const auto id = the_node->remember(cbfunc, cbdata);
  the_node->send(writer{ctl::dmodex}.u32(id).str(proc->nspace).u32(proc->rank).done());
  return PMIX_SUCCESS;
}

struct waiter {
  std::mutex m;
  std::condition_variable cv;
  int pending = 0;
  pmix_status_t status = PMIX_SUCCESS;
  void done(pmix_status_t st) {
    std::lock_guard<std::mutex> g{m};
    if (st != PMIX_SUCCESS && status == PMIX_SUCCESS) status = st;
    if (--pending == 0) cv.notify_all();
  }
  pmix_status_t wait() {
    std::unique_lock<std::mutex> g{m};
    cv.wait(g, [&] { return pending == 0; });
    return status;
  }
};
void op_done(pmix_status_t st, void* cbdata) { static_cast<waiter*>(cbdata)->done(st); }

void set_proc(pmix_proc_t& p, const std::string& nspace, pmix_rank_t rank) {
  std::memset(&p, 0, sizeof p);
  std::snprintf(p.nspace, sizeof p.nspace, "%s", nspace.c_str());
  p.rank = rank;
}

pmix_status_t register_nspace(const plan& p, const nspace_plan& ns, std::uint32_t node) {
  const auto nodes = p.opt.nodes;
  const auto per = ns.per_node(nodes);
  const auto first = std::min(ns.ranks, node * per), last = std::min(ns.ranks, first + per);
  std::string hosts, ppn;
  for (std::uint32_t n = 0; n < ns.nodes_used(nodes); ++n) {
    if (n > 0) hosts += ',', ppn += ';';
    hosts += "simnode" + std::to_string(n);
    const auto a = n * per, b = std::min(ns.ranks, a + per);
    ppn += std::to_string(a);
    if (b - a > 1) ppn += "-" + std::to_string(b - 1);
  }
  char* node_map = nullptr;
  char* proc_map = nullptr;
  if (PMIx_generate_regex(hosts.c_str(), &node_map) != PMIX_SUCCESS ||
      PMIx_generate_ppn(ppn.c_str(), &proc_map) != PMIX_SUCCESS)
    return PMIX_ERR_BAD_PARAM;
  pmix_info_t info[4];
  std::uint32_t size = ns.ranks, nlocal = last - first;
  PMIx_Info_load(&info[0], PMIX_JOB_SIZE, &size, PMIX_UINT32);
  PMIx_Info_load(&info[1], PMIX_UNIV_SIZE, &size, PMIX_UINT32);
  PMIx_Info_load(&info[2], PMIX_NODE_MAP, node_map, PMIX_STRING);
  PMIx_Info_load(&info[3], PMIX_PROC_MAP, proc_map, PMIX_STRING);
  std::free(node_map);
  std::free(proc_map);
  waiter w;
  w.pending = 1;
  auto rc = PMIx_server_register_nspace(ns.name.c_str(), static_cast<int>(nlocal), info, 4, op_done, &w);
  if (rc == PMIX_SUCCESS) rc = w.wait();
  for (auto& i : info) PMIX_INFO_DESTRUCT(&i);
  if (rc != PMIX_SUCCESS) return rc;
  waiter c;
  c.pending = static_cast<int>(nlocal);
  for (std::uint32_t r = first; r < last; ++r) {
    pmix_proc_t proc;
    set_proc(proc, ns.name, r);
    if (PMIx_server_register_client(&proc, ::getuid(), ::getgid(), nullptr, op_done, &c) != PMIX_SUCCESS)
      c.done(PMIX_ERR_BAD_PARAM);
  }
  return nlocal == 0 ? PMIX_SUCCESS : c.wait();
}

// Deregisters `ranks` of `nspace` that live on this node (all of them and
// the namespace when `ranks` is empty).
pmix_status_t deregister(const plan& p, std::uint32_t node, const std::string& nspace,
                         const std::vector<std::uint32_t>& ranks) {
  const nspace_plan* ns = nullptr;
  for (const auto& n : p.nspaces)
    if (n.name == nspace) ns = &n;
  if (ns == nullptr) return PMIX_ERR_NOT_FOUND;
  std::vector<std::uint32_t> mine;
  if (ranks.empty()) {
    for (std::uint32_t r = 0; r < ns->ranks; ++r)
      if (ns->node_of(r, p.opt.nodes) == node && gone.count({nspace, r}) == 0) mine.push_back(r);
  } else {
    for (auto r : ranks)
      if (ns->node_of(r, p.opt.nodes) == node) mine.push_back(r);
  }
  for (auto r : mine) gone.insert({nspace, r});
  waiter w;
  w.pending = static_cast<int>(mine.size()) + 1;
  for (auto r : mine) {
    pmix_proc_t proc;
    set_proc(proc, nspace, r);
    PMIx_server_deregister_client(&proc, op_done, &w);
  }
  if (ranks.empty())
    PMIx_server_deregister_nspace(nspace.c_str(), op_done, &w);
  else
    w.done(PMIX_SUCCESS);
  return w.wait();
}

// The control channel's frames, read as many at a time as have come (one
// read for a burst of dmodex requests, not two per frame).
class frame_source {
 public:
  explicit frame_source(int fd) : fd_(fd) {}
  // The next frame's payload, valid until the next call.
  bool next(std::string_view& out) {
    for (;;) {
      if (take_frame(buf_, pos_, out)) return true;
      buf_.erase(0, pos_);
      pos_ = 0;
      char chunk[65536];
      const auto r = ::read(fd_, chunk, sizeof chunk);
      if (r < 0 && errno == EINTR) continue;
      if (r <= 0) return false;
      buf_.append(chunk, static_cast<std::size_t>(r));
    }
  }

 private:
  int fd_;
  std::string buf_;
  std::size_t pos_ = 0;
};

struct dmodex_ask {
  node_state* node;
  std::uint32_t id;
};
void dmodex_answered(pmix_status_t st, char* data, size_t ndata, void* cbdata) {
  auto* ask = static_cast<dmodex_ask*>(cbdata);
  ask->node->send(writer{ctl::dmodex_data}.u32(ask->id).u32(static_cast<std::uint32_t>(st)).str({data, ndata}).done());
  delete ask;
}


}  // namespace

// Our server runtime's table (as pmixrun reaches it), null if this is not
// our library.
static const pmix_cxx_server_runtime_t* runtime_table() {
  void* h = ::dlopen(PMIX_CXX_SERVER_LIBRARY, RTLD_NOW | RTLD_NOLOAD);
  auto fn = h == nullptr ? nullptr
                         : reinterpret_cast<pmix_cxx_server_runtime_fn>(::dlsym(h, PMIX_CXX_SERVER_RUNTIME_SYMBOL));
  const auto* t = fn == nullptr ? nullptr : fn();
  return t == nullptr || t->version != PMIX_CXX_SERVER_RUNTIME_VERSION ? nullptr : t;
}

// The fault plane's checker: PMIX_SUCCESS when every invariant held.
static pmix_status_t faults_check(std::string& report) {
  const auto* t = runtime_table();
  if (t == nullptr) {
    report = "violation the invariant checker is not available in this PMIx library\n";
    return PMIX_ERR_NOT_SUPPORTED;
  }
  char* text = nullptr;
  const auto rc = t->faults_check(nullptr, 2000, &text);
  report = text != nullptr ? text : "";
  std::free(text);
  if (rc != PMIX_SUCCESS && rc != PMIX_ERROR)
    report += std::string{"violation the checker failed: "} + PMIx_Error_string(rc) + "\n";
  return rc;
}

int run_node(const plan& p, std::uint32_t node, int ctl_fd, const std::string& tmpdir) {
  // One run after another in this process (--sweep): each starts afresh.
  static node_state state;
  state.ctl = ctl_fd;
  state.next_id = 1;
  state.pending.clear();
  state.connected = state.finalized = state.fences = state.dmodex = 0;
  gone.clear();
  the_node = &state;
  state.start_writer();
  struct writer_stop {
    node_state& s;
    ~writer_stop() { s.stop_writer(); }
  } stop_at_return{state};
  pmix_server_module_t module{};
  module.client_connected = on_connected;
  module.client_finalized = on_finalized;
  module.abort = on_abort;
  module.fence_nb = on_fence;
  module.direct_modex = on_direct_modex;

  const std::string host = "simnode" + std::to_string(node);
  const std::string server_ns = "pmixsim-server-" + std::to_string(node);
  bool yes = true;
  pmix_info_t info[7];
  PMIx_Info_load(&info[0], PMIX_SERVER_TMPDIR, tmpdir.c_str(), PMIX_STRING);
  PMIx_Info_load(&info[1], PMIX_HOSTNAME, host.c_str(), PMIX_STRING);
  PMIx_Info_load(&info[2], PMIX_SERVER_NSPACE, server_ns.c_str(), PMIX_STRING);
  PMIx_Info_load(&info[3], PMIX_SERVER_TOOL_SUPPORT, &yes, PMIX_BOOL);
  PMIx_Info_load(&info[4], PMIX_ALLOW_CLIENT_CLONES, &yes, PMIX_BOOL);
  // Under --faults: the plan and seed, as pmixrun passes them
  // (docs/fault-injection.md); every node's server gets the same.
  std::size_t ninfo = 5;
  std::uint64_t seed = p.opt.seed;
  if (!p.opt.faults.empty()) {
    PMIx_Info_load(&info[ninfo++], "pmix.cxx.faults", p.opt.faults.c_str(), PMIX_STRING);
    PMIx_Info_load(&info[ninfo++], "pmix.cxx.faults.seed", &seed, PMIX_UINT64);
  }
  auto rc = PMIx_server_init(&module, info, ninfo);
  for (std::size_t k = 0; k < ninfo; ++k) PMIX_INFO_DESTRUCT(&info[k]);
  std::string uri;
  if (rc == PMIX_SUCCESS)
    for (const auto& ns : p.nspaces)
      if ((rc = register_nspace(p, ns, node)) != PMIX_SUCCESS) break;
  if (rc == PMIX_SUCCESS) {
    // The URI a client of this node is given (PMIX_CXX_SERVER_URI).
    pmix_proc_t proc;
    set_proc(proc, p.nspaces[0].name, node * p.nspaces[0].per_node(p.opt.nodes));
    char** env = nullptr;
    rc = PMIx_server_setup_fork(&proc, &env);
    for (char** e = env; e != nullptr && *e != nullptr; ++e) {
      if (std::strncmp(*e, "PMIX_CXX_SERVER_URI=", 20) == 0) {
        uri = *e + 20;
        const auto pos = uri.find("uds://");
        uri = pos == std::string::npos ? std::string{} : uri.substr(pos + 6);
      }
      std::free(*e);
    }
    std::free(env);
    if (uri.empty() && rc == PMIX_SUCCESS) rc = PMIX_ERR_NOT_FOUND;
  }
  state.send(writer{ctl::ready}.u32(static_cast<std::uint32_t>(rc)).str(uri).stats(stats_now()).done());
  if (rc != PMIX_SUCCESS) return 1;

  std::string_view frame;
  frame_source source{ctl_fd};
  while (source.next(frame)) {
    reader in{frame};
    const auto kind = in.kind();
    if (kind == ctl::finalize) break;
    if (kind == ctl::fence_done || kind == ctl::dmodex_done) {
      const auto id = in.u32();
      const auto st = static_cast<pmix_status_t>(in.u32());
      const auto data = in.str();
      state.complete(id, st, data);
    } else if (kind == ctl::dmodex_req) {
      const auto id = in.u32();
      const std::string ns{in.str()};
      const auto rank = in.u32();
      pmix_proc_t proc;
      set_proc(proc, ns, rank);
      auto* ask = new dmodex_ask{&state, id};
      const auto st = PMIx_server_dmodex_request(&proc, dmodex_answered, ask);
      if (st != PMIX_SUCCESS) dmodex_answered(st, nullptr, 0, ask);
    } else if (kind == ctl::deregister) {
      const auto id = in.u32();
      const std::string ns{in.str()};
      std::vector<std::uint32_t> ranks(in.u32());
      for (auto& r : ranks) r = in.u32();
      const auto st = deregister(p, node, ns, ranks);
      state.send(writer{ctl::reply}.u32(id).u32(static_cast<std::uint32_t>(st)).stats(stats_now()).done());
    } else if (kind == ctl::disarm) {
      // The faults stop here; the probe that follows must be served.
      const auto id = in.u32();
      const auto* t = runtime_table();
      const auto st = t == nullptr ? PMIX_ERR_NOT_SUPPORTED : t->faults_disarm();
      state.send(writer{ctl::reply}.u32(id).u32(static_cast<std::uint32_t>(st)).stats(stats_now()).done());
    } else if (kind == ctl::stats) {
      const auto id = in.u32();
      malloc_trim(0);
      state.send(writer{ctl::reply}.u32(id).u32(PMIX_SUCCESS).stats(stats_now()).done());
    }
  }
  if (!p.opt.faults.empty()) {
    // The fault plane's invariants, once every namespace is gone; the
    // report (plan, hashes, decisions, violations) goes to the driver.
    std::string report;
    const auto st = faults_check(report);
    state.send(writer{ctl::faults_report}.u32(static_cast<std::uint32_t>(st)).str(report).done());
  }
  rc = PMIx_server_finalize();
  return rc == PMIX_SUCCESS ? 0 : 1;
}

}  // namespace pmixsim
