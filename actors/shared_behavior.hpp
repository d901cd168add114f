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

#include <caf/actor_traits.hpp>
#include <caf/event_based_actor.hpp>
#include <caf/group.hpp>
#include <caf/mailbox_element.hpp>
#include <caf/mixin/behavior_changer.hpp>
#include <caf/mixin/requester.hpp>
#include <caf/mixin/sender.hpp>
#include <caf/scheduled_actor.hpp>
#include <caf/stateful_actor.hpp>
#include <cstdlib>
#include <unordered_set>
#include <utility>

#include "common/log.hpp"

namespace pmix::actors {
class lean_actor;
}  // namespace pmix::actors

template <>
class caf::behavior_type_of<pmix::actors::lean_actor> {
 public:
  using type = caf::behavior;
};

namespace pmix::actors {

// CAF 0.17's event_based_actor without its group subscriber mixin: an
// unordered_set of joined groups, 56 bytes in every actor, which no peer or
// rank actor uses (they never join a group). The rest is what
// event_based_actor is: sending, requests, become/unbecome, a dynamically
// typed handle, and a behavior from make_behavior() when it starts.
class lean_actor : public caf::extend<caf::scheduled_actor, lean_actor>::with<caf::mixin::sender, caf::mixin::requester,
                                                                             caf::mixin::behavior_changer>,
                   public caf::dynamically_typed_actor_base {
 public:
  using signatures = caf::none_t;
  using behavior_type = caf::behavior;

  explicit lean_actor(caf::actor_config& cfg) : extended_base(cfg) {}

  // True once the actor has quit (CAF 0.17.6's quit() sets the first flag):
  // what a handler of several requests in one message checks between them,
  // as CAF would before the next message.
  bool quitting() const { return getf(is_shutting_down_flag | is_terminated_flag); }

  void initialize() override {
    extended_base::initialize();
    setf(is_initialized_flag);
    if (auto bhvr = make_behavior()) become(std::move(bhvr));
  }

 protected:
  virtual caf::behavior make_behavior() = 0;
};

static_assert(sizeof(lean_actor) + sizeof(std::unordered_set<caf::group>) <= sizeof(caf::event_based_actor),
              "lean_actor is meant to be event_based_actor without its group subscriptions");

template <class State>
class shared_behavior_actor : public caf::stateful_actor<State, lean_actor> {
 public:
  using super = caf::stateful_actor<State, lean_actor>;
  using pointer = super*;

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
