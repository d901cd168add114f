// Runs the server's actors on a thread of ours (loop mode, and external
// progress): CAF's manual scheduler (test_coordinator) runs them, and its
// simulated clock (CAF's test_actor_clock) is made to follow real time, so
// delayed messages fire when they are due.
#pragma once

#include <caf/actor_clock.hpp>
#include <caf/actor_system.hpp>
#include <caf/scheduler/test_coordinator.hpp>

#include <chrono>

namespace pmix::server {

class actor_loop {
 public:
  actor_loop(caf::actor_system& system, caf::scheduler::test_coordinator& coordinator)
      : system_(&system), coordinator_(&coordinator) {}

  // Runs every actor that has work, up to 64 messages a turn each (as CAF's
  // workers do), until none has.
  void run_ready();

  // Moves the clock to the real time passed (delayed messages that came due
  // are delivered: their actors have work) and returns how long until the
  // next delayed message, in ms (-1: none pending; at most 60,000).
  int follow_clock();

  // Runs the actors and follows the clock until no actor has work, and
  // returns how long the thread may then sleep (as follow_clock). A delayed
  // message that came due while the actors ran is delivered and run before
  // it returns: returning with work queued would let the thread sleep with
  // nothing to wake it (found by the fault plane, seed 24 of the tool cell:
  // a held-back fence whose 20 ms flush came due in that window waited
  // until the next socket event, which never came).
  int settle();

  bool idle() const { return coordinator_->jobs.empty(); }

 private:
  caf::actor_system* system_;
  caf::scheduler::test_coordinator* coordinator_;
  bool clock_started_ = false;
  std::chrono::steady_clock::time_point clock_base_real_;
  caf::actor_clock::time_point clock_base_sim_;
};

}  // namespace pmix::server
