// Fences across nodes: the part of a collective each pmixd plays, as plain
// state (no actors, no sockets), so that both algorithms are tested alone
// (tests/tools/pmixd_units_test.cpp).
//
// A fence is named by a key every participating node derives the same way
// (the participants and how many fences of the same participants came
// before: collectives are ordered). Each node contributes its server's blob
// (the fence_nb up-call's data); every node ends with the blobs of all
// participating nodes appended in node order, which is the fence's data
// (docs/wire-format.md: our blobs concatenate).
//
//  tree      the first participating node gathers every node's blob, then
//            sends the whole to every other one: 2 steps, 2 (m - 1) messages.
//  doubling  dissemination with distances 1, 2, 4, ...: in round k node i
//            sends everything it holds to node i + 2^k (mod m) and waits for
//            node i - 2^k; ceil(log2 m) rounds, m per round, any m.
//
// Messages that arrive before the node's own contribution wait for it. A
// node that is lost fails every fence it takes part in, now and later, with
// PMIX_ERR_UNREACH. Completions and messages to send are queued; the caller
// (the daemon actor) takes them after each call.
#pragma once

#include <pmix_common.h>

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

namespace pmixd {

enum class fence_algorithm { tree, doubling };

// Parses "tree" / "doubling"; false for anything else.
bool parse_algorithm(const std::string& name, fence_algorithm& out);

// Node id -> blob. Keys are the node id zero-padded to 8 digits, so the
// map's order is the node order.
using fence_blocks = std::map<std::string, std::string>;
std::string block_key(uint32_t node);

class fence_engine {
 public:
  struct send {
    uint32_t to;
    std::string key;
    uint32_t round;
    fence_blocks blocks;
  };
  struct completion {
    uint64_t token;  // the contribution's
    pmix_status_t status;
    std::string data;
  };

  explicit fence_engine(uint32_t me) : me_(me) {}

  // This node's contribution to fence `key` among `nodes` (ascending,
  // including this node). `token` comes back with the completion.
  void contribute(const std::string& key, std::vector<uint32_t> nodes, fence_algorithm alg,
                  std::string data, uint64_t token);
  // A message from another node.
  void receive(const std::string& key, uint32_t round, fence_blocks blocks);
  // `node` is gone: every fence it takes part in fails.
  void node_lost(uint32_t node);
  // Forgets the fences whose key starts with `prefix` (a job that ended).
  void forget(const std::string& prefix);

  std::vector<send> take_sends() { return std::move(sends_); }
  std::vector<completion> take_completions() { return std::move(completions_); }
  std::size_t pending() const { return fences_.size(); }
  bool lost(uint32_t node) const { return lost_.count(node) > 0; }

 private:
  struct fence {
    bool contributed = false;
    std::vector<uint32_t> nodes;
    fence_algorithm alg = fence_algorithm::tree;
    uint64_t token = 0;
    fence_blocks blocks;
    std::map<uint32_t, fence_blocks> early;  // by round, not merged yet
    uint32_t round = 0;                      // doubling: the next round to receive
  };
  void advance(const std::string& key, fence& f);
  void complete(const std::string& key, fence& f, pmix_status_t status);
  uint32_t position(const fence& f) const;

  uint32_t me_;
  std::map<std::string, fence> fences_;
  std::set<uint32_t> lost_;
  std::vector<send> sends_;
  std::vector<completion> completions_;
};

}  // namespace pmixd
