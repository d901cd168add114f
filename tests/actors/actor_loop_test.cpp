// server/actor_loop: the thread that runs the server's actors (loop mode,
// external progress) must not go to sleep with an actor's work queued. A
// delayed message that comes due while the actors run is run before
// settle() returns, so the thread never sleeps on it (the fault plane's
// seed 24: a held-back fence's 20 ms flush came due in that window, and the
// loop slept until a socket event that never came).
#include "server/actor_loop.hpp"

#include <caf/actor_system_config.hpp>
#include <caf/atom.hpp>
#include <caf/event_based_actor.hpp>
#include <caf/send.hpp>

#include <doctest/doctest.h>

#include <chrono>
#include <memory>
#include <thread>

namespace {

using go_atom = caf::atom_constant<caf::atom("go")>;
using tick_atom = caf::atom_constant<caf::atom("tick")>;

// On `go`: asks for a tick in `delay`, then works (the thread is busy) for
// longer than that. On `tick`: counts it.
caf::behavior ticker(caf::event_based_actor* self, std::shared_ptr<int> ticks, std::chrono::milliseconds delay,
                     std::chrono::milliseconds busy) {
  return {
      [=](go_atom) {
        self->delayed_send(self, delay, tick_atom::value);
        const auto until = std::chrono::steady_clock::now() + busy;
        while (std::chrono::steady_clock::now() < until) std::this_thread::yield();
      },
      [=](tick_atom) { ++*ticks; },
  };
}

struct fixture {
  caf::actor_system_config cfg;
  std::unique_ptr<caf::actor_system> sys;
  caf::scheduler::test_coordinator* sched = nullptr;
  fixture() {
    cfg.set("scheduler.policy", caf::atom("testing"));
    sys = std::make_unique<caf::actor_system>(cfg);
    sched = &dynamic_cast<caf::scheduler::test_coordinator&>(sys->scheduler());
  }
};

}  // namespace

TEST_SUITE("actor loop") {
  TEST_CASE("a delayed message that comes due while the actors run is run before the loop may sleep") {
    fixture f;
    pmix::server::actor_loop loop{*f.sys, *f.sched};
    auto ticks = std::make_shared<int>(0);
    auto a = f.sys->spawn(ticker, ticks, std::chrono::milliseconds(1), std::chrono::milliseconds(30));
    loop.settle();  // the actor's start
    caf::anon_send(a, go_atom::value);
    // One pass, as the loop makes before it sleeps: the tick came due during
    // `go` (30 ms of work against 1 ms), so it must have run already.
    const int sleep = loop.settle();
    CHECK(*ticks == 1);
    CHECK(loop.idle());
    CHECK(sleep == -1);  // nothing else pending: the loop may sleep until woken
    caf::anon_send_exit(a, caf::exit_reason::user_shutdown);
    loop.settle();
  }

  TEST_CASE("a delayed message not due yet tells the loop how long it may sleep") {
    fixture f;
    pmix::server::actor_loop loop{*f.sys, *f.sched};
    auto ticks = std::make_shared<int>(0);
    auto a = f.sys->spawn(ticker, ticks, std::chrono::milliseconds(500), std::chrono::milliseconds(0));
    loop.settle();
    caf::anon_send(a, go_atom::value);
    const int sleep = loop.settle();
    CHECK(*ticks == 0);
    CHECK(loop.idle());
    CHECK(sleep > 0);
    CHECK(sleep <= 500);
    // Once it is due, the next pass runs it.
    std::this_thread::sleep_for(std::chrono::milliseconds(sleep + 5));
    CHECK(loop.settle() == -1);
    CHECK(*ticks == 1);
    caf::anon_send_exit(a, caf::exit_reason::user_shutdown);
    loop.settle();
  }
}
