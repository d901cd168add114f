// The scenarios: what each simulated client does, as a program of steps,
// and the gates that order them (docs/simulator.md, "Scenarios").
#include <algorithm>
#include <map>
#include <random>

#include "tools/pmixsim/sim.hpp"

namespace pmixsim {

const char* op_name(op o) {
  static const char* names[op_count] = {"connect", "commit", "fence", "get", "query",
                                        "finalize", "crash", "connect_crash", "arrive", "wait"};
  return names[static_cast<int>(o)];
}

namespace {

std::uint64_t mix(std::uint64_t x) {  // splitmix64's finalizer
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

// A seeded choice of `count` of `ranks` ranks (sorted).
std::vector<std::uint32_t> choose(std::mt19937_64& rng, std::uint32_t ranks, std::uint32_t count,
                                  const std::vector<bool>& excluded) {
  std::vector<std::uint32_t> pool;
  for (std::uint32_t r = 0; r < ranks; ++r)
    if (!excluded[r]) pool.push_back(r);
  std::shuffle(pool.begin(), pool.end(), rng);
  pool.resize(std::min<std::size_t>(count, pool.size()));
  std::sort(pool.begin(), pool.end());
  return pool;
}

}  // namespace

std::uint32_t peer_of(std::uint64_t seed, std::uint32_t rank, std::uint32_t round, std::uint32_t k,
                      std::uint32_t ranks) {
  if (ranks < 2) return rank;
  const auto h = mix(seed ^ mix((std::uint64_t{rank} << 32) ^ (std::uint64_t{round} << 8) ^ k));
  return static_cast<std::uint32_t>((rank + 1 + h % (ranks - 1)) % ranks);
}

std::string value_of(std::uint32_t nspace, std::uint32_t rank, std::uint32_t round) {
  return "v" + std::to_string(nspace) + "." + std::to_string(rank) + "." + std::to_string(round);
}

bool build_plan(const options& o, plan& p, std::string& error) {
  p = plan{};
  p.opt = o;
  const std::vector<std::string> known = {"startup", "fence", "cycle", "tools", "crash", "dereg", "mixed"};
  std::mt19937_64 rng{o.seed};
  std::vector<std::string> order, terminal;
  for (const auto& s : o.scenarios) {
    if (std::find(known.begin(), known.end(), s) == known.end()) {
      error = "unknown scenario '" + s + "' (startup, fence, cycle, tools, crash, dereg, mixed)";
      return false;
    }
    if (!p.names.empty()) p.names += ',';
    p.names += s;
    if (s == "mixed") {
      // A seeded mix of all: the others in a seeded order, the two that end
      // the job's collectives last.
      std::vector<std::string> mixed = {"fence", "cycle", "tools"};
      std::shuffle(mixed.begin(), mixed.end(), rng);
      order.insert(order.end(), mixed.begin(), mixed.end());
      terminal.push_back("dereg");
      terminal.push_back("crash");
    } else if (s == "crash" || s == "dereg") {
      terminal.push_back(s);
    } else {
      order.push_back(s);
    }
  }
  // dereg then crash, each once: after them the job's fences fail.
  for (const char* t : {"dereg", "crash"})
    if (std::find(terminal.begin(), terminal.end(), t) != terminal.end()) order.push_back(t);
  if (order.empty()) {
    error = "no scenario given (--scenario NAME[,NAME...])";
    return false;
  }
  const auto n = o.clients, nodes = o.nodes;
  if (n < 1 || nodes < 1 || n < nodes) {
    error = "--clients must be at least 1 and at least --nodes";
    return false;
  }
  const auto gets = std::min(o.gets, n - 1);
  p.nspaces.push_back({"sim.main", n});
  const nspace_plan main_ns = p.nspaces[0];  // a copy: the vector grows
  const bool wants_dereg = std::find(order.begin(), order.end(), "dereg") != order.end();
  std::uint32_t victim_size = 0;
  if (wants_dereg) {
    victim_size = std::max<std::uint32_t>(nodes, n / 10);
    p.victim = 1;
    p.nspaces.push_back({"sim.victim", victim_size});
  }

  auto gate = [&](std::uint32_t expected, gate_action a = gate_action::none) {
    p.gates.push_back({expected, a});
    return static_cast<std::uint32_t>(p.gates.size() - 1);
  };
  std::vector<program> progs(n);  // the main job's clients, by rank
  std::vector<bool> live(n, true);
  struct extra {
    client_plan who;
    program prog;
  };
  std::vector<extra> extras;  // tools, clones, the victim job, probes
  pmix_status_t fence_status = PMIX_SUCCESS, fence_also = 1;
  std::uint32_t victim_gate = 0;  // (dereg) opens once the victim job is deregistered
  std::uint32_t round = 0;
  auto live_count = [&] { return static_cast<std::uint32_t>(std::count(live.begin(), live.end(), true)); };
  auto barrier = [&] {
    const auto g = gate(live_count());
    for (std::uint32_t r = 0; r < n; ++r)
      if (live[r]) progs[r].push_back({op::arrive, g}), progs[r].push_back({op::wait, g});
  };
  auto fence_round = [&](std::uint32_t r) {
    auto& prog = progs[r];
    prog.push_back({op::commit, round});
    prog.push_back({op::fence, 1, fence_status, fence_also});
    if (fence_status == PMIX_SUCCESS)
      for (std::uint32_t k = 0; k < gets; ++k) prog.push_back({op::get, round << 8 | k});
  };

  for (std::uint32_t r = 0; r < n; ++r) progs[r].push_back({op::connect, 0});
  {
    // Every client connected and initialized: the server's memory per
    // connected client is measured here.
    const auto g = gate(n, gate_action::measure_memory);
    for (auto& prog : progs) prog.push_back({op::arrive, g}), prog.push_back({op::wait, g});
  }
  for (const auto& s : order) {
    if (s == "startup") continue;  // the connect and the gate above
    if (s == "fence") {
      for (std::uint32_t k = 0; k < o.rounds; ++k, ++round)
        for (std::uint32_t r = 0; r < n; ++r)
          if (live[r]) fence_round(r);
      barrier();
    } else if (s == "cycle") {
      // A quarter of the ranks get a clone that connects while the rank's
      // process is live; then every rank cycles finalize/init.
      std::vector<bool> none(n, false);
      const auto bearers = choose(rng, n, std::max<std::uint32_t>(1, n / 4), none);
      const auto start = gate(static_cast<std::uint32_t>(bearers.size()));
      const auto done = gate(static_cast<std::uint32_t>(bearers.size()));
      for (auto r : bearers) {
        progs[r].push_back({op::arrive, start});
        progs[r].push_back({op::wait, done});
        extra e;
        e.who = {0, r, main_ns.node_of(r, nodes), 0, false, false};
        e.prog = {{op::wait, start}, {op::connect, 0}, {op::finalize, 0}, {op::arrive, done}};
        extras.push_back(std::move(e));
      }
      for (std::uint32_t k = 0; k < o.rounds; ++k)
        for (std::uint32_t r = 0; r < n; ++r)
          progs[r].push_back({op::finalize, 0}), progs[r].push_back({op::connect, 0});
      barrier();
    } else if (s == "tools") {
      // Tools attach, query and detach while the job fences.
      const auto tools = std::max<std::uint32_t>(1, n / 16);
      const auto start = gate(1), done = gate(tools);
      progs[0].push_back({op::arrive, start});
      for (std::uint32_t r = 0; r < n; ++r) fence_round(r);
      ++round;
      for (std::uint32_t r = 0; r < n; ++r) progs[r].push_back({op::wait, done});
      for (std::uint32_t t = 0; t < tools; ++t) {
        extra e;
        e.who = {0, t, t % nodes, 0, true, false};
        e.prog = {{op::wait, start}, {op::connect, 1}, {op::query, 0}, {op::finalize, 0}, {op::arrive, done}};
        extras.push_back(std::move(e));
      }
      barrier();
    } else if (s == "dereg") {
      // Under load (fence rounds of the main job): the victim job's clients
      // init, commit and finalize, and are deregistered with their
      // namespace; a probe then finds them gone. Then a share of the main
      // job's ranks finalize and are deregistered: the rest's fence fails.
      const auto victim_done = gate(victim_size, gate_action::deregister_victim);
      victim_gate = victim_done;
      const nspace_plan victim = p.nspaces[1];
      for (std::uint32_t r = 0; r < victim_size; ++r) {
        extra e;
        e.who = {1, r, victim.node_of(r, nodes), 0, false, false};
        e.prog = {{op::connect, 0}, {op::commit, 0}, {op::finalize, 0}, {op::arrive, victim_done}};
        extras.push_back(std::move(e));
      }
      extra probe;
      probe.who = {1, 0, 0, 0, false, false};
      probe.prog = {{op::wait, victim_done}, {op::connect, 0, PMIX_ERR_NOT_FOUND}};
      extras.push_back(std::move(probe));
      for (std::uint32_t k = 0; k < o.rounds; ++k, ++round)
        for (std::uint32_t r = 0; r < n; ++r)
          if (live[r]) fence_round(r);
      barrier();
      if (live_count() >= 2) {
        std::vector<bool> gone(n);
        for (std::uint32_t r = 0; r < n; ++r) gone[r] = !live[r];
        p.leavers = choose(rng, n, std::max<std::uint32_t>(1, live_count() / 8), gone);
        const auto left = gate(static_cast<std::uint32_t>(p.leavers.size()), gate_action::deregister_ranks);
        for (auto r : p.leavers) {
          progs[r].push_back({op::finalize, 0});
          progs[r].push_back({op::arrive, left});
          live[r] = false;
        }
        if (fence_status == PMIX_SUCCESS) fence_status = PMIX_ERR_UNREACH;
        // The rest go on once the leavers are deregistered: their fence
        // fails for it, or (under faults) may fail earlier, and the host
        // must not deregister the whole job before it deregistered those.
        for (std::uint32_t r = 0; r < n; ++r)
          if (live[r]) fence_round(r), progs[r].push_back({op::wait, left});
        ++round;
        barrier();
      }
    } else if (s == "crash") {
      // A share of the live ranks vanish: half mid-init (a new process of
      // the rank sends its connect and dies), half mid-fence (they never
      // contribute). The rest's fence fails with PMIX_ERR_PROC_TERM_WO_SYNC.
      if (live_count() >= 2) {
        std::vector<bool> gone(n);
        for (std::uint32_t r = 0; r < n; ++r) gone[r] = !live[r];
        const auto share = std::clamp<std::uint32_t>(live_count() * o.crash_percent / 100, 1, live_count() - 1);
        auto crashers = choose(rng, n, share, gone);
        std::shuffle(crashers.begin(), crashers.end(), rng);
        for (std::size_t k = 0; k < crashers.size(); ++k) {
          const auto r = crashers[k];
          if (k % 2 == 0) {
            progs[r].push_back({op::finalize, 0});
            progs[r].push_back({op::connect_crash, 0});
          } else {
            progs[r].push_back({op::crash, 0});
          }
          live[r] = false;
        }
        // After a deregistration the fence stays PMIX_ERR_UNREACH (what
        // the server answers; docs/simulator.md).
        if (fence_status == PMIX_SUCCESS)
          fence_status = PMIX_ERR_PROC_TERM_WO_SYNC;
        else
          fence_also = PMIX_ERR_PROC_TERM_WO_SYNC;
        for (std::uint32_t r = 0; r < n; ++r)
          if (live[r]) fence_round(r);
        ++round;
        barrier();
      }
    }
  }
  // The end: every live process finalizes; the host deregisters everything;
  // probes find each namespace gone.
  const auto end = gate(live_count(), gate_action::deregister_all);
  for (std::uint32_t r = 0; r < n; ++r)
    if (live[r]) progs[r].push_back({op::finalize, 0}), progs[r].push_back({op::arrive, end});
  // Under faults, once the planes are disarmed (the end gate's action): a
  // new job with one process per node inits, commits, fences with data
  // across the nodes, gets a peer's value and finalizes. Every step must
  // succeed: the servers still serve after what the faults did.
  std::uint32_t probe_done = 0;
  if (!o.faults.empty()) {
    p.probe = static_cast<std::uint32_t>(p.nspaces.size());
    p.nspaces.push_back({"sim.probe", nodes});
    probe_done = gate(nodes, gate_action::deregister_probe);
    for (std::uint32_t r = 0; r < nodes; ++r) {
      extra e;
      e.who = {p.probe, r, r, 0, false, false, true};
      e.prog = {{op::wait, end},  {op::connect, 0},         {op::commit, round},
                {op::fence, 1},   {op::get, round << 8 | 0}, {op::finalize, 0},
                {op::arrive, probe_done}};
      extras.push_back(std::move(e));
    }
  }
  for (std::uint32_t k = 0; k < p.nspaces.size(); ++k) {
    extra probe;
    probe.who = {k, 0, 0, 0, false, false};
    probe.prog = {{op::wait, end}, {op::connect, 0, PMIX_ERR_NOT_FOUND}};
    // The victim job goes at its own gate, which the end does not wait for;
    // so does the probe namespace.
    if (wants_dereg && k == p.victim) probe.prog.insert(probe.prog.begin(), {op::wait, victim_gate});
    if (k == p.probe) probe.prog.insert(probe.prog.begin(), {op::wait, probe_done});
    extras.push_back(std::move(probe));
  }

  // Clients in order: the main job by rank, then the others as made.
  std::map<program, std::uint32_t, bool (*)(const program&, const program&)> known_programs{
      [](const program& a, const program& b) {
        return std::lexicographical_compare(a.begin(), a.end(), b.begin(), b.end(), [](const step& x, const step& y) {
          return std::tie(x.kind, x.arg, x.expect, x.also) < std::tie(y.kind, y.arg, y.expect, y.also);
        });
      }};
  auto intern = [&](program&& prog) {
    auto it = known_programs.find(prog);
    if (it != known_programs.end()) return it->second;
    const auto idx = static_cast<std::uint32_t>(p.programs.size());
    p.programs.push_back(prog);
    known_programs.emplace(std::move(prog), idx);
    return idx;
  };
  for (std::uint32_t r = 0; r < n; ++r)
    p.clients.push_back({0, r, main_ns.node_of(r, nodes), intern(std::move(progs[r])), false, true});
  for (auto& e : extras) {
    e.who.program = intern(std::move(e.prog));
    p.clients.push_back(e.who);
  }
  for (std::uint32_t c = 0; c < p.clients.size(); ++c)
    if (p.programs[p.clients[c].program].front().kind == op::connect) p.launch_order.push_back(c);
  std::shuffle(p.launch_order.begin(), p.launch_order.end(), rng);
  return true;
}

}  // namespace pmixsim
