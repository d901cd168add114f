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
  }
}
