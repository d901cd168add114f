// pmixd's fences across nodes as plain state (tools/pmixd/collective.hpp):
// several fence_engines, one per node, joined by a simulated network that
// delivers their messages in FIFO, reversed or shuffled order. Both
// algorithms, node counts that are and are not powers of two, fences among
// some of the nodes, messages before the node's own contribution, a node
// lost mid-collective, a repeated key, and a forgotten job.
#include <doctest/doctest.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "tools/pmixd/collective.hpp"
#include "tools/pmixd/liveness.hpp"

using pmixd::fence_algorithm;
using pmixd::fence_engine;

namespace {

enum class order { fifo, lifo, shuffled };

struct network {
  struct message {
    uint32_t from;
    fence_engine::send s;
  };
  std::vector<fence_engine> nodes;
  std::vector<message> in_flight;
  std::map<uint32_t, std::vector<fence_engine::completion>> done;  // by node
  std::size_t messages = 0;
  std::mt19937 rng;

  explicit network(uint32_t n, unsigned seed = 1) : rng(seed) {
    for (uint32_t k = 0; k < n; ++k) nodes.emplace_back(k);
  }

  void collect(uint32_t k) {
    for (auto& s : nodes[k].take_sends()) {
      in_flight.push_back(message{k, std::move(s)});
      ++messages;
    }
    for (auto& c : nodes[k].take_completions()) done[k].push_back(std::move(c));
  }

  void contribute(uint32_t k, const std::string& key, const std::vector<uint32_t>& members, fence_algorithm alg,
                  const std::string& data, uint64_t token) {
    nodes[k].contribute(key, members, alg, data, token);
    collect(k);
  }

  // Delivers until nothing is in flight; messages to a node in `dead` are dropped.
  void run(order how, const std::vector<uint32_t>& dead = {}) {
    while (!in_flight.empty()) {
      std::size_t at = 0;
      if (how == order::lifo) at = in_flight.size() - 1;
      if (how == order::shuffled) at = std::uniform_int_distribution<std::size_t>(0, in_flight.size() - 1)(rng);
      message m = std::move(in_flight[at]);
      in_flight.erase(in_flight.begin() + static_cast<std::ptrdiff_t>(at));
      if (std::find(dead.begin(), dead.end(), m.s.to) != dead.end()) continue;
      REQUIRE(m.s.to < nodes.size());
      nodes[m.s.to].receive(m.s.key, m.s.round, std::move(m.s.blocks));
      collect(m.s.to);
    }
  }
};

std::string blob(uint32_t node) { return "<" + std::to_string(node) + ">"; }

std::string all_blobs(const std::vector<uint32_t>& members) {
  std::string out;
  for (auto n : members) out += blob(n);
  return out;
}

uint32_t log2_ceil(std::size_t m) {
  uint32_t r = 0;
  while ((std::size_t{1} << r) < m) ++r;
  return r;
}

std::vector<uint32_t> first_nodes(uint32_t m) {
  std::vector<uint32_t> v(m);
  for (uint32_t k = 0; k < m; ++k) v[k] = k;
  return v;
}

}  // namespace

TEST_SUITE("fence_engine") {
  TEST_CASE("every node of 1 to 9 ends with every blob in node order, both algorithms, any delivery order") {
    for (auto alg : {fence_algorithm::tree, fence_algorithm::doubling}) {
      for (uint32_t m = 1; m <= 9; ++m) {
        for (auto how : {order::fifo, order::lifo, order::shuffled}) {
          CAPTURE(m);
          CAPTURE(static_cast<int>(alg));
          CAPTURE(static_cast<int>(how));
          network net(m, m * 7 + 1);
          const auto members = first_nodes(m);
          // Contributions interleaved with deliveries: some messages come
          // before the receiver's own contribution.
          for (uint32_t k = m; k-- > 0;) {
            net.contribute(k, "f#0", members, alg, blob(k), 100 + k);
            if (k % 2 == 0) net.run(how);
          }
          net.run(how);
          for (uint32_t k = 0; k < m; ++k) {
            REQUIRE(net.done[k].size() == 1);
            CHECK(net.done[k][0].token == 100 + k);
            CHECK(net.done[k][0].status == PMIX_SUCCESS);
            CHECK(net.done[k][0].data == all_blobs(members));
            CHECK(net.nodes[k].pending() == 0);
          }
          const std::size_t want =
              m == 1 ? 0 : (alg == fence_algorithm::tree ? 2 * (m - 1) : m * log2_ceil(m));
          CHECK(net.messages == want);
        }
      }
    }
  }

  TEST_CASE("a fence among some of the nodes (1, 3, 4 of 5) involves only them") {
    for (auto alg : {fence_algorithm::tree, fence_algorithm::doubling}) {
      network net(5);
      const std::vector<uint32_t> members{1, 3, 4};
      for (auto k : members) net.contribute(k, "sub#0", members, alg, blob(k), k);
      net.run(order::shuffled);
      for (auto k : members) {
        REQUIRE(net.done[k].size() == 1);
        CHECK(net.done[k][0].data == "<1><3><4>");
      }
      CHECK(net.done.count(0) == 0);
      CHECK(net.done.count(2) == 0);
      CHECK(net.nodes[0].pending() == 0);
      CHECK(net.nodes[2].pending() == 0);
    }
  }

  TEST_CASE("consecutive fences of the same nodes, interleaved, keep their data apart") {
    for (auto alg : {fence_algorithm::tree, fence_algorithm::doubling}) {
      network net(3, 11);
      const auto members = first_nodes(3);
      for (uint32_t k = 0; k < 3; ++k) {
        net.contribute(k, "f#0", members, alg, "a" + blob(k), 10 * k);
        net.contribute(k, "f#1", members, alg, "b" + blob(k), 10 * k + 1);
      }
      net.run(order::shuffled);
      for (uint32_t k = 0; k < 3; ++k) {
        REQUIRE(net.done[k].size() == 2);
        for (const auto& c : net.done[k]) {
          CHECK(c.status == PMIX_SUCCESS);
          CHECK(c.data == (c.token % 10 == 0 ? "a<0>a<1>a<2>" : "b<0>b<1>b<2>"));
        }
      }
    }
  }

  TEST_CASE("a node lost mid-collective fails the fence at every other node, and later fences with it at once") {
    for (auto alg : {fence_algorithm::tree, fence_algorithm::doubling}) {
      for (uint32_t m : {3u, 5u}) {
        CAPTURE(m);
        network net(m, 5);
        const auto members = first_nodes(m);
        const uint32_t dead = m - 1;  // never contributes
        for (uint32_t k = 0; k < dead; ++k) net.contribute(k, "f#0", members, alg, blob(k), k);
        net.run(order::fifo, {dead});
        for (uint32_t k = 0; k < dead; ++k) CHECK(net.done[k].empty());
        for (uint32_t k = 0; k < dead; ++k) {
          net.nodes[k].node_lost(dead);
          net.collect(k);
          REQUIRE(net.done[k].size() == 1);
          CHECK(net.done[k][0].status == PMIX_ERR_UNREACH);
          CHECK(net.done[k][0].token == k);
          CHECK(net.nodes[k].pending() == 0);
          CHECK(net.nodes[k].lost(dead));
        }
        // A later fence that includes the lost node fails at once; one
        // without it still completes.
        net.contribute(0, "f#1", members, alg, blob(0), 77);
        REQUIRE(net.done[0].size() == 2);
        CHECK(net.done[0][1].status == PMIX_ERR_UNREACH);
        std::vector<uint32_t> rest(members.begin(), members.end() - 1);
        for (auto k : rest) net.contribute(k, "g#0", rest, alg, blob(k), 200 + k);
        net.run(order::shuffled, {dead});
        for (auto k : rest) {
          REQUIRE(net.done[k].size() >= 2);
          CHECK(net.done[k].back().status == PMIX_SUCCESS);
          CHECK(net.done[k].back().data == all_blobs(rest));
        }
      }
    }
  }

  TEST_CASE("a node lost before any message fails only the fences it is in") {
    network net(4);
    net.nodes[1].node_lost(3);
    net.contribute(1, "x#0", {1, 3}, fence_algorithm::tree, blob(1), 1);
    REQUIRE(net.done[1].size() == 1);
    CHECK(net.done[1][0].status == PMIX_ERR_UNREACH);
    CHECK(net.in_flight.empty());
  }

  TEST_CASE("the same key contributed twice fails the second, the first still completes") {
    network net(2);
    net.contribute(0, "k#0", {0, 1}, fence_algorithm::tree, blob(0), 1);
    net.contribute(0, "k#0", {0, 1}, fence_algorithm::tree, blob(0), 2);
    REQUIRE(net.done[0].size() == 1);
    CHECK(net.done[0][0].token == 2);
    CHECK(net.done[0][0].status == PMIX_ERR_BAD_PARAM);
    net.contribute(1, "k#0", {0, 1}, fence_algorithm::tree, blob(1), 3);
    net.run(order::fifo);
    REQUIRE(net.done[0].size() == 2);
    CHECK(net.done[0][1].token == 1);
    CHECK(net.done[0][1].data == "<0><1>");
  }

  TEST_CASE("forget ends the fences of a job with PMIX_ERR_JOB_TERMINATED") {
    network net(3);
    net.contribute(0, "job1:*,#0", {0, 1, 2}, fence_algorithm::doubling, blob(0), 5);
    net.contribute(0, "job2:*,#0", {0, 1, 2}, fence_algorithm::doubling, blob(0), 6);
    net.nodes[0].forget("job1");
    net.collect(0);
    REQUIRE(net.done[0].size() == 1);
    CHECK(net.done[0][0].token == 5);
    CHECK(net.done[0][0].status == PMIX_ERR_JOB_TERMINATED);
    CHECK(net.nodes[0].pending() == 1);
  }

  TEST_CASE("algorithm names") {
    fence_algorithm a = fence_algorithm::tree;
    CHECK(pmixd::parse_algorithm("doubling", a));
    CHECK(a == fence_algorithm::doubling);
    CHECK(pmixd::parse_algorithm("tree", a));
    CHECK(a == fence_algorithm::tree);
    CHECK_FALSE(pmixd::parse_algorithm("ring", a));
  }
}

// tools/pmixd/liveness.hpp: which peers have stopped answering, on a clock
// the test moves by hand (checks every second, timeout 10 s).
TEST_SUITE("liveness") {
  using watch = pmixd::liveness<uint32_t>;
  using std::chrono::milliseconds;
  using std::chrono::seconds;

  TEST_CASE("a peer is lost once, after more than the timeout of silence") {
    watch w(seconds(1), seconds(10));
    const auto t0 = watch::clock::time_point{} + seconds(1000);
    w.heard(1, t0);
    w.heard(2, t0);
    std::vector<uint32_t> lost;
    for (int s = 1; s <= 10; ++s) {
      if (s % 3 == 0) w.heard(2, t0 + seconds(s));  // peer 2 keeps beating
      auto silent = w.check(t0 + seconds(s));
      lost.insert(lost.end(), silent.begin(), silent.end());
    }
    CHECK(lost.empty());  // exactly 10 s is not more than the timeout
    CHECK(w.check(t0 + seconds(10) + milliseconds(900)) == std::vector<uint32_t>{1});
    CHECK_FALSE(w.watched(1));
    CHECK(w.watched(2));
    CHECK(w.check(t0 + seconds(11) + milliseconds(800)).empty());  // lost once only
  }

  TEST_CASE("a peer heard now and then is never lost") {
    watch w(seconds(1), seconds(10));
    const auto t0 = watch::clock::time_point{} + seconds(1000);
    w.heard(7, t0);
    for (int s = 1; s <= 100; ++s) {
      if (s % 9 == 0) w.heard(7, t0 + seconds(s));
      CHECK(w.check(t0 + seconds(s)).empty());
    }
  }

  TEST_CASE("a check that comes late does not count the time this process did not run") {
    watch w(seconds(1), seconds(10));
    const auto t0 = watch::clock::time_point{} + seconds(1000);
    w.heard(1, t0);
    w.heard(2, t0);
    CHECK(w.check(t0 + seconds(1)).empty());
    // This process did not run for 29 s: its check comes 30 s after the one
    // before, and peer 1's beats may be unread in its socket. Of those 30 s
    // one counts: 2 s of silence so far.
    CHECK(w.check(t0 + seconds(31)).empty());
    CHECK(w.watched(1));
    w.heard(2, t0 + seconds(31));  // peer 2's beat was waiting
    for (int s = 32; s <= 39; ++s) CHECK(w.check(t0 + seconds(s)).empty());
    CHECK(w.check(t0 + seconds(40)) == std::vector<uint32_t>{1});  // 11 s watched
    CHECK(w.watched(2));
  }

  TEST_CASE("a peer heard after the check before is not made more silent than it is") {
    watch w(seconds(1), seconds(10));
    const auto t0 = watch::clock::time_point{} + seconds(1000);
    CHECK(w.check(t0).empty());
    w.heard(1, t0 + seconds(20));  // heard while the next check was late
    CHECK(w.check(t0 + seconds(21)).empty());
    for (int s = 22; s <= 31; ++s) CHECK(w.check(t0 + seconds(s)).empty());
    CHECK(w.check(t0 + seconds(32)) == std::vector<uint32_t>{1});
  }

  TEST_CASE("a check at most twice the interval after the one before is not late") {
    watch w(seconds(1), seconds(10));
    const auto t0 = watch::clock::time_point{} + seconds(1000);
    w.heard(1, t0);
    auto t = t0;
    for (int k = 0; k < 5; ++k) {
      t += seconds(2);
      CHECK(w.check(t).empty());
    }
    CHECK(w.check(t + seconds(2)) == std::vector<uint32_t>{1});  // 12 s of silence
  }

  TEST_CASE("a forgotten peer, and one never heard, are not watched") {
    watch w(seconds(1), seconds(10));
    const auto t0 = watch::clock::time_point{} + seconds(1000);
    w.heard(1, t0);
    w.forget(1);
    CHECK_FALSE(w.watched(1));
    CHECK_FALSE(w.watched(5));
    CHECK(w.check(t0 + seconds(1)).empty());
    CHECK(w.check(t0 + seconds(2)).empty());
    CHECK(w.check(t0 + seconds(60)).empty());
  }
}
