// The driver: one epoll thread running every simulated client's state
// machine over its own Unix socket to its node's server, and the in-process
// fabric that carries fences and direct modex between the nodes' hosts.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "tools/pmixsim/sim.hpp"

namespace pmixsim {

// What a run reports (docs/simulator.md, "Reading the figures").
struct result {
  std::string names;
  std::uint32_t clients = 0, nodes = 0;
  std::uint64_t seed = 0;
  double wall_s = 0;        // first connect to the last client's last step
  std::uint64_t ops = 0;    // steps that talked to a server
  std::uint64_t bytes_in = 0;  // what the clients received from the servers
  std::uint64_t bytes_shared = 0;  // what they mapped of the servers' shared data
  std::array<std::vector<std::uint32_t>, op_count> latency_us;  // per operation
  double memory_per_client = 0;  // server heap bytes per connected client
  std::vector<node_stats> baseline, connected, end;  // per node
  std::vector<std::uint32_t> per_node;  // clients of each node (tools and probes too)
  std::vector<std::uint32_t> counted_per_node;  // of them, the N clients (connected when memory is measured)
  bool spread = false;  // each node's clients ran in its server's process (--spread)
  std::uint64_t trace = 0;
  // Under --faults: the nodes' fault plane reports (plan, hashes, each
  // injected decision, violations), how many decisions were injected and
  // how many clients gave up on an error or a closed connection.
  std::vector<std::string> fault_report;
  std::uint64_t injected = 0, broken = 0;
  std::vector<std::string> failures;
  bool ok() const { return failures.empty(); }
};

// Hooks a fault plan (or a test) uses to change what clients see or do.
// Every hook runs on the driver's thread.
struct fault_hooks {
  virtual ~fault_hooks() = default;
  // A frame arrived for client `c`: how many times to deliver it (1: as is;
  // 0: drop it; 2: a duplicate).
  virtual int deliver(std::uint32_t c, std::uint8_t body_kind) { return 1; }
};

// Runs one plan to its end. Forks the nodes 1..K-1 and runs node 0 in a
// thread of this process.
result run(const plan& p, fault_hooks& hooks);

}  // namespace pmixsim
