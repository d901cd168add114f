// parse_proc_map grows its vectors geometrically: a list of N single ranks
// ("0,1,2,...") or of N one-rank nodes ("0;1;2;...") costs O(log N)
// reallocations, not one per term. Before, each term reserved exactly one
// more element, so every term reallocated and copied the whole vector:
// O(N^2) bytes moved (a client of a job with 8,192 local peers spent a
// quarter of its PMIx_Init there). Counted here by the allocations the parse
// makes (this binary replaces the global operator new to count them).
#include <doctest/doctest.h>

#include <atomic>
#include <cstdlib>
#include <new>
#include <string>

#include "common/regex/regex.hpp"

namespace {
std::atomic<long> allocations{0};
}

void* operator new(std::size_t n) {
  allocations.fetch_add(1, std::memory_order_relaxed);
  if (void* p = std::malloc(n == 0 ? 1 : n)) return p;
  throw std::bad_alloc{};
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }

namespace {

std::string joined(int n, char sep) {
  std::string s;
  for (int r = 0; r < n; ++r) {
    if (r > 0) s += sep;
    s += std::to_string(r);
  }
  return s;
}

long allocations_of_parse(const std::string& text, std::size_t& nodes, std::size_t& ranks) {
  pmix::regex::parse_limits limits;
  limits.max_ranks = text.size() + 1;
  limits.max_nodes = text.size() + 1;
  const long before = allocations.load();
  auto parsed = pmix::regex::parse_proc_map(text, limits);
  const long made = allocations.load() - before;
  REQUIRE(parsed.ok());
  nodes = parsed.value().size();
  ranks = 0;
  for (const auto& n : parsed.value()) ranks += n.size();
  return made;
}

}  // namespace

TEST_CASE("a list of 10,000 ranks on one node: a few reallocations, not one per rank") {
  std::size_t nodes = 0, ranks = 0;
  const long made = allocations_of_parse(joined(10000, ','), nodes, ranks);
  CHECK(nodes == 1);
  CHECK(ranks == 10000);
  // Geometric growth: about log2(10,000) = 14 for the ranks, a few more.
  CHECK(made <= 64);
}

TEST_CASE("10,000 nodes of one rank each: one allocation per node and a few more") {
  std::size_t nodes = 0, ranks = 0;
  const long made = allocations_of_parse(joined(10000, ';'), nodes, ranks);
  CHECK(nodes == 10000);
  CHECK(ranks == 10000);
  // Each node's own vector is one allocation; the list of nodes grows
  // geometrically.
  CHECK(made <= 10000 + 64);
}

TEST_CASE("ranges and compact maps still parse to the same ranks") {
  std::size_t nodes = 0, ranks = 0;
  allocations_of_parse("0-3,8,10-11;4-7", nodes, ranks);
  CHECK(nodes == 2);
  CHECK(ranks == 11);
  auto parsed = pmix::regex::parse_proc_map("0-3,8,10-11;4-7");
  REQUIRE(parsed.ok());
  CHECK(parsed.value()[0] == std::vector<std::uint32_t>{0, 1, 2, 3, 8, 10, 11});
  CHECK(parsed.value()[1] == std::vector<std::uint32_t>{4, 5, 6, 7});
}
