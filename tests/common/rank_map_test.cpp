// Per-rank tables (common/rank_map.hpp).
#include "common/rank_map.hpp"

#include <doctest/doctest.h>

#include <map>
#include <random>
#include <vector>

using pmix::rank_t;
using pmix::rank_map;

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
    for (int step = 0; step < 20000; ++step) {
      const auto pick = random() % 10;
      const rank_t r = pick < 2 ? specials[random() % 5] : static_cast<rank_t>(random() % (pick < 9 ? 3000 : 500000));
      if (random() % 4 == 0) {
        CHECK(m.erase(r) == (model.erase(r) > 0));
      } else {
        const int v = static_cast<int>(random());
        m[r] = v;
        model[r] = v;
      }
    }
    CHECK(m.size() == model.size());
    std::vector<rank_t> expected;
    for (const auto& [r, v] : model) {
      expected.push_back(r);
      REQUIRE(m.find(r) != nullptr);
      CHECK(*m.find(r) == v);
    }
    CHECK(m.ranks() == expected);  // in order, dense and sparse alike
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
