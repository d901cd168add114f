// lean_actor::quitting(): what a handler of several requests in one message
// (the peer actor's frames_atom) checks between them, so that a request
// after one that made the actor quit is not handled, as CAF would not
// deliver the next message.
#include <doctest/doctest.h>

#include <caf/actor_system.hpp>
#include <caf/actor_system_config.hpp>
#include <caf/atom.hpp>
#include <caf/scheduler/test_coordinator.hpp>
#include <caf/scoped_actor.hpp>
#include <chrono>
#include <utility>

#include "actors/shared_behavior.hpp"

namespace {

using go_atom = caf::atom_constant<caf::atom("go")>;
using stay_atom = caf::atom_constant<caf::atom("stay")>;

class probe final : public pmix::actors::lean_actor {
 public:
  probe(caf::actor_config& cfg, caf::actor reporter) : lean_actor(cfg), reporter_(std::move(reporter)) {}

 protected:
  caf::behavior make_behavior() override {
    return {
        [this](stay_atom) { send(reporter_, quitting(), quitting()); },
        [this](go_atom) {
          const bool before = quitting();
          quit();
          send(reporter_, before, quitting());
        },
    };
  }

 private:
  caf::actor reporter_;
};

// What the probe says to `request`: quitting() before and after handling it
// (both false when it never answers, with a failed check). CAF's test
// scheduler runs the probe on this thread (Debian's CAF is not built for
// ThreadSanitizer, which would not see its queues order the threads).
template <class Atom>
std::pair<bool, bool> ask(caf::scheduler::test_coordinator& sched, caf::scoped_actor& self, const caf::actor& p,
                          Atom request) {
  std::pair<bool, bool> said{false, false};
  bool answered = false;
  self->send(p, request);
  sched.run();
  self->receive([&](bool before, bool after) { said = {before, after}, answered = true; },
                caf::after(std::chrono::seconds(0)) >> [] {});
  CHECK(answered);
  return said;
}

}  // namespace

TEST_CASE("lean_actor::quitting: false while the actor runs, true right after it quits") {
  caf::actor_system_config cfg;
  cfg.set("scheduler.policy", caf::atom("testing"));
  caf::actor_system sys{cfg};
  auto& sched = dynamic_cast<caf::scheduler::test_coordinator&>(sys.scheduler());
  caf::scoped_actor self{sys};
  auto p = sys.spawn<probe>(caf::actor_cast<caf::actor>(self));
  sched.run();
  CHECK(ask(sched, self, p, stay_atom::value) == std::pair{false, false});
  CHECK(ask(sched, self, p, go_atom::value) == std::pair{false, true});
}
