// Per-rank tables (common/rank_map.hpp).
#include "common/rank_map.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <map>
#include <random>
#include <vector>

using pmix::rank_t;
using pmix::rank_map;

namespace {

// `steps` random inserts and erasures (one in `erase_one_in`) of the ranks
// `draw` gives, on the map and on a std::map alike.
template <class Draw>
void mutate(rank_map<int>& m, std::map<rank_t, int>& model, int steps, unsigned erase_one_in, std::mt19937& random,
            Draw draw) {
  for (int step = 0; step < steps; ++step) {
    const rank_t r = draw();
    if (random() % erase_one_in == 0) {
      CHECK(m.erase(r) == (model.erase(r) > 0));
    } else {
      const int v = static_cast<int>(random());
      m[r] = v;
      model[r] = v;
    }
  }
}

// The map holds what the model does: its size, each value, and its ranks in
// order (dense and sparse alike).
void check_same(const rank_map<int>& m, const std::map<rank_t, int>& model) {
  REQUIRE(m.size() == model.size());
  std::vector<rank_t> expected;
  for (const auto& [r, v] : model) {
    expected.push_back(r);
    REQUIRE(m.find(r) != nullptr);
    CHECK(*m.find(r) == v);
  }
  CHECK(m.ranks() == expected);
}

}  // namespace

TEST_SUITE("rank_map") {
  TEST_CASE("dense ranks: insert, find, overwrite, erase") {
    rank_map<int> m;
    CHECK(m.size() == 0);
    CHECK(m.find(0) == nullptr);
    for (rank_t r = 0; r < 10000; ++r) m[r] = static_cast<int>(r) * 2;
    CHECK(m.size() == 10000);
    REQUIRE(m.find(1234) != nullptr);
    CHECK(*m.find(1234) == 2468);
    m[1234] = 7;  // the same entry
    CHECK(m.size() == 10000);
    CHECK(*m.find(1234) == 7);
    CHECK(m.erase(1234));
    CHECK_FALSE(m.erase(1234));
    CHECK(m.find(1234) == nullptr);
    CHECK(m.size() == 9999);
    CHECK(m.find(10000) == nullptr);
  }

  TEST_CASE("ranks far apart, special ranks and a random mix agree with std::map") {
    rank_map<int> m;
    std::map<rank_t, int> model;
    std::mt19937 random{42};
    const rank_t specials[] = {0xfffffffeu, 0xfffffffdu, 4000000000u, 70000, 5};
    mutate(m, model, 20000, 4, random, [&] {
      const auto pick = random() % 10;
      return pick < 2 ? specials[random() % 5] : static_cast<rank_t>(random() % (pick < 9 ? 3000 : 500000));
    });
    check_same(m, model);
    // for_each visits each entry once, with its value (dense and sparse),
    // and may change the values.
    std::map<rank_t, int> seen;
    m.for_each([&](rank_t r, int& v) {
      CHECK(seen.emplace(r, v).second);
      ++v;
    });
    CHECK(seen == model);
    for (const auto& [r, v] : model) {
      CHECK(m.contains(r));
      CHECK(*m.find(r) == v + 1);
    }
    CHECK_FALSE(m.contains(3000));
    m.clear();
    CHECK(m.size() == 0);
    CHECK_FALSE(m.contains(5));
    CHECK_FALSE(m.contains(0xfffffffeu));
    int visited = 0;
    m.for_each([&](rank_t, int&) { ++visited; });
    CHECK(visited == 0);
  }

  // Issue 40: one node of a large job registers its block of ranks, which
  // starts far from 0 (ranks 4400-4799 of 16 nodes x 400). The first ones
  // were kept apart, the later ones grew the vector over them, and those
  // kept apart were lost: their processes were refused at connect.
  TEST_CASE("a block of ranks far from 0, in order: every one is found") {
    for (const rank_t first : {4400u, 5000u, 100000u, 4096u, 4097u}) {
      CAPTURE(first);
      rank_map<int> m;
      std::map<rank_t, int> model;
      for (rank_t r = first; r < first + 6250; ++r) {
        m[r] = static_cast<int>(r);
        model[r] = static_cast<int>(r);
      }
      CHECK(m.size() == 6250);
      std::size_t missing = 0;
      for (const auto& [r, v] : model)
        if (m.find(r) == nullptr || *m.find(r) != v) ++missing;
      CHECK(missing == 0);
      std::vector<rank_t> expected;
      for (const auto& kv : model) expected.push_back(kv.first);
      CHECK(m.ranks() == expected);
      // erase and insert again across the old boundary
      CHECK(m.erase(first));
      CHECK_FALSE(m.erase(first));
      m[first] = 1;
      REQUIRE(m.find(first) != nullptr);
      CHECK(*m.find(first) == 1);
      CHECK(m.size() == 6250);
    }
  }

  // A node's block of ranks far from 0 (node 15 of 16 x 6,250: ranks
  // 93,750-99,999) ends in the vector whatever order its ranks come in:
  // before, every one of them was kept apart, a hash-map node each.
  TEST_CASE("a block far from 0 in any order ends in the vector, at most about twice as long") {
    const rank_t first = 93750, n = 6250;
    std::vector<rank_t> order(n);
    for (rank_t i = 0; i < n; ++i) order[i] = first + i;
    std::mt19937 random{7};
    for (int pass = 0; pass < 3; ++pass) {
      CAPTURE(pass);
      if (pass == 1) std::reverse(order.begin(), order.end());
      if (pass == 2) std::shuffle(order.begin(), order.end(), random);
      rank_map<int> m;
      for (auto r : order) m[r] = static_cast<int>(r);
      CHECK(m.size() == n);
      CHECK(m.kept_apart() == 0);
      CHECK(m.span() <= 2 * std::size_t{n} + 4096);
      std::vector<rank_t> expected(order);
      std::sort(expected.begin(), expected.end());
      CHECK(m.ranks() == expected);
      for (auto r : order) {
        REQUIRE(m.find(r) != nullptr);
        CHECK(*m.find(r) == static_cast<int>(r));
      }
      CHECK(m.find(first - 1) == nullptr);
      CHECK(m.find(first + n) == nullptr);
    }
  }

  // The vector moved (its base), widened both ways and gathered, under
  // inserts and erasures: always what a std::map says.
  TEST_CASE("a far block, ranks near 0 and special ranks at random agree with std::map") {
    std::mt19937 random{11};
    for (int run = 0; run < 4; ++run) {
      rank_map<int> m;
      std::map<rank_t, int> model;
      mutate(m, model, 30000, 5, random, [&] {
        const auto pick = random() % 20;
        return pick == 0   ? 0xfffffffeu - static_cast<rank_t>(random() % 3)
               : pick < 3  ? static_cast<rank_t>(random() % 200)
               : pick < 5  ? static_cast<rank_t>(50000 + random() % 100000)
                           : static_cast<rank_t>(90000 + random() % 8000);
      });
      check_same(m, model);
      std::map<rank_t, int> seen;
      m.for_each([&](rank_t r, int& v) { CHECK(seen.emplace(r, v).second); });
      CHECK(seen == model);
      for (rank_t r = 89990; r < 98010; ++r) CHECK(m.contains(r) == (model.count(r) != 0));
    }
  }

  // A job's ranks after one far rank came first (a get of the last rank
  // before the fence brings all): the far one does not anchor the vector
  // and keep the rest apart; it may stay apart itself.
  TEST_CASE("one far rank first, then 0..n-1: the rest in the vector") {
    rank_map<int> m;
    m[99999] = 1;
    for (rank_t r = 0; r < 99999; ++r) m[r] = 0;
    CHECK(m.size() == 100000);
    CHECK(m.kept_apart() <= 1);
    CHECK(m.span() <= 100000);
    REQUIRE(m.find(99999) != nullptr);
    CHECK(*m.find(99999) == 1);
  }

  TEST_CASE("ranks kept apart, then the vector grown past some of them by another rank") {
    rank_map<int> m;
    m[9000] = 1;    // apart
    m[20000] = 2;   // apart
    for (rank_t r = 0; r < 3000; ++r) m[r] = 0;  // the vector grows toward both
    m[9500] = 3;    // grows the vector past 9000, not 20000
    REQUIRE(m.find(9000) != nullptr);
    CHECK(*m.find(9000) == 1);
    REQUIRE(m.find(20000) != nullptr);
    CHECK(*m.find(20000) == 2);
    CHECK(m.size() == 3003);
    CHECK(m.erase(9000));
    CHECK(m.find(9000) == nullptr);
    CHECK(m.size() == 3002);
  }
}
