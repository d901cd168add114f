// An actor kind whose behavior is built once per process and shared by
// every actor of the kind (issue 40, server memory per client).
//
// A CAF 0.17 behavior made of N handlers is one allocation of about 40
// bytes per handler (each handler's match case and its entry in the case
// table). Built in each actor, as handlers capturing `self` must be, the
// peer actor's 26 handlers cost every connection 0.93 kB and the rank
// actor's 10 another 0.45 kB: a quarter of what the server held per client.
// Here the handlers capture nothing and find their actor with current():
// the actor of this kind whose message this thread is handling, which
// consume() (where CAF 0.17 hands every message, response and system
// message of an actor to its behavior and handlers) sets around each one.
// A shared behavior is safe across threads: CAF only reads it while
// matching (its reference count is atomic).
#pragma once

#include <caf/mailbox_element.hpp>
#include <caf/stateful_actor.hpp>
#include <cstdlib>
#include <utility>

#include "common/log.hpp"

namespace pmix::actors {

template <class State>
class shared_behavior_actor : public caf::stateful_actor<State> {
 public:
  using super = caf::stateful_actor<State>;
  using pointer = caf::stateful_actor<State>*;

  explicit shared_behavior_actor(caf::actor_config& cfg) : super(cfg) {}

  // The actor whose message is being handled on this thread. Only valid in
  // one of the kind's shared handlers; anything else is a bug.
  static pointer current() noexcept {
    if (current_ == nullptr) {
      log::error("actors", State::name, ": a shared handler ran outside its actor's consume");
      std::abort();
    }
    return current_;
  }

  caf::invoke_message_result consume(caf::mailbox_element& x) override {
    struct restore {
      pointer previous;
      ~restore() { current_ = previous; }
    } guard{std::exchange(current_, this)};
    return super::consume(x);
  }

 private:
  static inline thread_local pointer current_ = nullptr;
};

}  // namespace pmix::actors
