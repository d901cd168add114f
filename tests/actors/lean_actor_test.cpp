// lean_actor::quitting(): what a handler of several requests in one message
// (the peer actor's frames_atom) checks between them, so that a request
// after one that made the actor quit is not handled, as CAF would not
// deliver the next message.
#include <doctest/doctest.h>

#include <caf/actor_system.hpp>
#include <caf/actor_system_config.hpp>
#include <caf/atom.hpp>
#include <caf/scoped_actor.hpp>
#include <chrono>

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

}  // namespace

TEST_CASE("lean_actor::quitting: false while the actor runs, true right after it quits") {
  caf::actor_system_config cfg;
  caf::actor_system sys{cfg};
  caf::scoped_actor self{sys};
  auto p = sys.spawn<probe>(caf::actor_cast<caf::actor>(self));
  bool before = true, after = true, answered = false;
  self->send(p, stay_atom::value);
  self->receive([&](bool b, bool a) { before = b, after = a, answered = true; },
                caf::after(std::chrono::seconds(30)) >> [] {});
  REQUIRE(answered);
  CHECK_FALSE(before);
  CHECK_FALSE(after);
  answered = false;
  self->send(p, go_atom::value);
  self->receive([&](bool b, bool a) { before = b, after = a, answered = true; },
                caf::after(std::chrono::seconds(30)) >> [] {});
  REQUIRE(answered);
  CHECK_FALSE(before);
  CHECK(after);
}
