// The fault plane without a server (faults/plane.hpp): the plan language,
// which point each rule hits, replay of seeded random plans, the ledger.
#include "faults/plane.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <thread>
#include <random>
#include <string>
#include <vector>

#include <unistd.h>

using namespace pmix::faults;

namespace {
std::shared_ptr<plane> make(const std::string& text, std::uint64_t seed = 0) {
  std::string error;
  auto p = plane::make(text, seed, error);
  REQUIRE_MESSAGE(static_cast<bool>(p), error);
  return p;
}
}  // namespace

TEST_SUITE("fault plane") {
  TEST_CASE("the issue's example plan parses, and prints back as explicit rules") {
    plan p;
    std::string error;
    REQUIRE(parse("drop:fence_contribution:rank=3:n=1; kill:peer:rank=5:at=fence", p, error));
    REQUIRE(p.rules.size() == 2);
    CHECK(p.rules[0].what == action::drop);
    CHECK(p.rules[0].step == "fence");
    CHECK(*p.rules[0].rank == 3);
    CHECK(p.rules[0].n == 1);
    CHECK(p.rules[1].what == action::kill);
    CHECK(p.rules[1].who == victim::peer);
    CHECK(p.rules[1].step == "fence");
    CHECK(format(p) == "drop:fence:rank=3:n=1; kill:peer:at=fence:rank=5");
  }

  TEST_CASE("bad plans are refused with a reason") {
    plan p;
    std::string error;
    for (const char* bad : {"", "explode:fence", "drop:nowhere", "fail:fence", "kill:fence", "drop:fence:rank=x",
                            "delay:fence:ms", "random:rate=2", "random:kinds=boom"}) {
      CHECK_MESSAGE(!parse(bad, p, error), bad);
      CHECK(!error.empty());
    }
  }

  TEST_CASE("selectors: step, rank, namespace and the n-th occurrence") {
    auto p = make("dup:fence:rank=1:n=2; fail:client_finalized:nspace=job");
    CHECK(!p->at(point_kind::message, "fence", "job", 0));
    CHECK(!p->at(point_kind::message, "fence", "job", 1));  // the first of rank 1
    CHECK(!p->at(point_kind::message, "get", "job", 1));
    CHECK(p->at(point_kind::message, "fence", "job", 1).what == action::dup);  // the second
    CHECK(!p->at(point_kind::message, "fence", "job", 1));  // only the second
    CHECK(!p->at(point_kind::upcall, "client_finalized", "other", 0));
    CHECK(p->at(point_kind::upcall, "client_finalized", "job", 0).what == action::fail);
    CHECK(!p->at(point_kind::message, "finalize", "job", 0));  // up-call faults only at up-calls
    const auto r = p->snapshot();
    // Each decision is the rule that replays it, occurrences counted per
    // (step, namespace, rank): client_finalized of job:0 is its first.
    CHECK(r.trace == std::vector<std::string>{"dup:fence:rank=1:nspace=job:n=2",
                                              "fail:client_finalized:rank=0:nspace=job:n=1:status=-1"});
  }

  TEST_CASE("two namespaces' rank 0 keep their own counts, in any order") {
    // A tool's rank 0 and the job's rank 0 (or two jobs') once shared one
    // count, so which of them took `n=2` changed with the order they came in.
    for (bool tool_first : {false, true}) {
      auto p = make("reorder:finalize:rank=0:n=2");
      if (tool_first) CHECK(!p->at(point_kind::message, "finalize", "srv.tool.0", 0));
      CHECK(!p->at(point_kind::message, "finalize", "job", 0));
      if (!tool_first) CHECK(!p->at(point_kind::message, "finalize", "srv.tool.0", 0));
      // The rule has no nspace: its own count is 2 now, and it fires.
      CHECK(p->at(point_kind::message, "finalize", "job", 0).what == action::reorder);
      CHECK(p->snapshot().trace == std::vector<std::string>{"reorder:finalize:rank=0:nspace=job:n=2"});
    }
    // Random plans draw per namespace: the same decisions whichever comes first.
    auto draw = [](bool tool_first) {
      auto p = make("random:rate=0.5", 3);
      for (int k = 0; k < 20; ++k) {
        p->at(point_kind::message, "fence", tool_first ? "srv.tool.0" : "job", 0);
        p->at(point_kind::message, "fence", tool_first ? "job" : "srv.tool.0", 0);
      }
      return p->snapshot().set_hash;
    };
    CHECK(draw(false) == draw(true));
  }

  TEST_CASE("a namespace named after this process's id is named the same from run to run") {
    const auto pid = std::to_string(::getpid());
    auto p = make("random:rate=1:kinds=delay; cut:init:nspace=pmixrun.{pid}");
    CHECK(p->stable_name("pmixrun." + pid) == "pmixrun.{pid}");
    CHECK(p->stable_name("pmixrun." + pid + ".tool.0") == "pmixrun.{pid}.tool.0");
    CHECK(p->stable_name("sim.main") == "sim.main");
    // A number that only contains the pid is kept.
    CHECK(p->stable_name("x." + pid + "7") == "x." + pid + "7");
    // The explicit rule's nspace= matches the stable form.
    CHECK(p->at(point_kind::message, "init", "pmixrun." + pid, 0).what == action::cut);
    // The trace names it in the stable form.
    const auto d = p->at(point_kind::message, "fence", "pmixrun." + pid, 2);
    CHECK(d.what == action::delay);
    const auto r = p->snapshot();
    REQUIRE(r.trace.size() == 2);
    CHECK(r.trace[0] == "cut:init:rank=0:nspace=pmixrun.{pid}:n=1");
    CHECK(r.trace[1].rfind("delay:fence:rank=2:nspace=pmixrun.{pid}:n=1:ms=", 0) == 0);
  }

  TEST_CASE("a point after a step's reply takes only cut and kill") {
    auto p = make("delay:*:rank=0; cut:init_ack:rank=0");
    CHECK(p->at(point_kind::message, "init_ack", "job", 0, after_step).what == action::cut);
  }

  TEST_CASE("replay: a seeded random plan decides the same whatever order the points come in") {
    const std::string text = "random:rate=0.3";
    std::vector<std::pair<std::string, std::uint32_t>> points;
    for (std::uint32_t rank = 0; rank < 8; ++rank)
      for (const char* step : {"init", "commit", "fence", "get", "fence", "finalize"}) points.push_back({step, rank});
    auto run = [&](std::uint64_t seed, bool shuffled) {
      auto order = points;
      if (shuffled) {
        // Ranks interleave differently; each rank's own order stays (as in a real job).
        std::mt19937 g(99);
        std::vector<std::vector<std::pair<std::string, std::uint32_t>>> per(8);
        for (auto& pt : order) per[pt.second].push_back(pt);
        order.clear();
        std::vector<std::size_t> next(8, 0);
        while (order.size() < points.size()) {
          const auto r = g() % 8;
          if (next[r] < per[r].size()) order.push_back(per[r][next[r]++]);
        }
      }
      auto p = make(text, seed);
      for (auto& [step, rank] : order) p->at(point_kind::message, step.c_str(), "job", rank);
      auto r = p->snapshot();
      std::sort(r.trace.begin(), r.trace.end());
      return std::make_pair(r.set_hash, r.trace);
    };
    const auto a = run(5, false), b = run(5, true), c = run(6, false);
    CHECK(!a.second.empty());
    CHECK(a == b);
    CHECK(a.first != c.first);
    // The trace replays as an explicit plan: the same decisions.
    std::string explicit_plan;
    for (const auto& t : a.second) explicit_plan += t + ";";
    auto p = make(explicit_plan, 1);
    for (auto& [step, rank] : points) p->at(point_kind::message, step.c_str(), "job", rank);
    CHECK(p->snapshot().set_hash == a.first);
  }

  TEST_CASE("the ledger: answered once, twice, or never") {
    auto p = make("dup:fence");
    p->request(1, 10);
    p->answer(1, 10);
    CHECK(p->snapshot().violations.empty());
    CHECK(p->snapshot().pending == 0);
    p->answer(1, 10);  // once more than asked
    CHECK(p->snapshot().violations.size() == 1);
    p->request(2, 11);
    CHECK(p->snapshot().pending == 1);  // silence so far
    p->closed(2);  // the end of the stream answers it
    CHECK(p->snapshot().pending == 0);
  }

  TEST_CASE("disarmed, nothing is injected") {
    auto p = make("cut:fence");
    p->disarm();
    CHECK(!p->at(point_kind::message, "fence", "job", 0));
  }

  TEST_CASE("late answers run on the timer thread; stop drops what is left") {
    auto p = make("late:fence_nb");
    std::atomic<int> ran{0};
    p->after(1, [&] { ++ran; });
    p->after(600000, [&] { ++ran; });
    for (int i = 0; i < 5000 && ran.load() == 0; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    p->stop();
    CHECK(ran.load() == 1);
  }
}
