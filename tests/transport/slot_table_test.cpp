// The I/O thread's table of connections by id (transport/slot_table.hpp):
// an id names one entry only, even once its slot serves another; ids are
// never the I/O thread's own tags (0, or bit 63); slots are reused.
#include "transport/slot_table.hpp"

#include <doctest/doctest.h>

#include <cstdint>
#include <memory>
#include <set>
#include <string>

namespace {

struct item {
  std::unique_ptr<std::string> name;  // null: not live
  std::uint32_t use = 0;
  bool live() const { return name != nullptr; }
};

item named(const char* n) { return item{std::make_unique<std::string>(n)}; }

}  // namespace

using pmix::transport::slot_table;

TEST_CASE("an erased entry's id finds nothing, though its slot serves a newer one") {
  slot_table<item> t;
  const auto a = t.reserve();
  t.place(a, named("a"));
  REQUIRE(t.find(a) != nullptr);
  CHECK(*t.find(a)->name == "a");
  t.erase(a);
  CHECK(t.find(a) == nullptr);
  const auto b = t.reserve();
  CHECK(static_cast<std::uint32_t>(b) == static_cast<std::uint32_t>(a));  // the same slot
  CHECK(b != a);
  CHECK(t.find(b) == nullptr);  // reserved, not placed yet
  t.place(b, named("b"));
  CHECK(t.find(a) == nullptr);  // a late event or write request for a
  REQUIRE(t.find(b) != nullptr);
  CHECK(*t.find(b)->name == "b");
  t.erase(a);  // a stale erase leaves b alone
  REQUIRE(t.find(b) != nullptr);
  CHECK(t.size() == 1);
  CHECK(t.slots() == 1);
}

TEST_CASE("a reserved id that is never placed is given back") {
  slot_table<item> t;
  const auto a = t.reserve();
  t.erase(a);
  CHECK(t.size() == 0);
  const auto b = t.reserve();
  CHECK(static_cast<std::uint32_t>(b) == static_cast<std::uint32_t>(a));
  CHECK(t.slots() == 1);
}

TEST_CASE("ids are never 0 nor have bit 63, also when the count of uses goes round") {
  slot_table<item> t{slot_table<item>::max_use - 2};
  std::set<std::uint64_t> seen;
  for (int k = 0; k < 6; ++k) {
    const auto id = t.reserve();
    CHECK(id != 0);
    CHECK((id >> 63) == 0);
    CHECK((id >> 32) >= 1);
    CHECK((id >> 32) <= slot_table<item>::max_use);
    CHECK(seen.insert(id).second);
    t.place(id, named("x"));
    t.erase(id);
  }
}

TEST_CASE("slots are reused: as many as were ever live at once") {
  slot_table<item> t;
  std::set<std::uint64_t> live;
  for (int round = 0; round < 100; ++round) {
    for (int k = 0; k < 10; ++k) {
      const auto id = t.reserve();
      t.place(id, named("c"));
      live.insert(id);
    }
    CHECK(t.size() == 10);
    const auto ids = t.ids();
    CHECK(std::set<std::uint64_t>(ids.begin(), ids.end()) == live);
    for (auto id : live) t.erase(id);
    for (auto id : live) CHECK(t.find(id) == nullptr);
    live.clear();
    CHECK(t.size() == 0);
  }
  CHECK(t.slots() == 10);
}
