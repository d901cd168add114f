#include "server/actor_loop.hpp"

#include <caf/execution_unit.hpp>
#include <caf/resumable.hpp>

#include <algorithm>

namespace pmix::server {
namespace {

// Where an actor that gives up its turn is queued again: the coordinator's
// job queue, as CAF's own workers do.
class loop_unit : public caf::execution_unit {
 public:
  loop_unit(caf::actor_system* system, caf::scheduler::test_coordinator* coordinator)
      : caf::execution_unit(system), coordinator_(coordinator) {}
  void exec_later(caf::resumable* job) override {
    static_cast<caf::scheduler::abstract_coordinator*>(coordinator_)->enqueue(job);
  }

 private:
  caf::scheduler::test_coordinator* coordinator_;
};

}  // namespace

// The manual scheduler's run() resumes an actor for one message at a time
// (it was made for tests that step through messages): a burst of 10,000 host
// calls to one actor then paid a full resume each. This runs every ready
// actor the way CAF's workers do, up to a number of messages per turn, and
// queues it again behind the others if it has more.
void actor_loop::run_ready() {
  constexpr std::size_t max_throughput = 64;
  loop_unit unit{system_, coordinator_};
  auto& jobs = coordinator_->jobs;
  while (!jobs.empty()) {
    auto* job = jobs.front();
    jobs.pop_front();
    switch (job->resume(&unit, max_throughput)) {
      case caf::resumable::resume_later:
        jobs.push_back(job);
        break;
      case caf::resumable::awaiting_message:
      case caf::resumable::done:
        caf::intrusive_ptr_release(job);
        break;
      case caf::resumable::shutdown_execution_unit:
        break;
    }
  }
}

int actor_loop::follow_clock() {
  auto& clock = coordinator_->clock();
  const auto real = std::chrono::steady_clock::now();
  if (!clock_started_) {
    clock_started_ = true;
    clock_base_real_ = real;
    clock_base_sim_ = clock.current_time;
  }
  const auto target = clock_base_sim_ + (real - clock_base_real_);
  if (target > clock.current_time) coordinator_->advance_time(target - clock.current_time);
  if (!clock.has_pending_timeout()) return -1;
  const auto next = clock.schedule().begin()->first;
  if (next <= clock.current_time) return 0;
  const auto wait = std::chrono::ceil<std::chrono::milliseconds>(next - clock.current_time).count();
  return static_cast<int>(std::min<decltype(wait)>(wait, 60000));
}

int actor_loop::settle() {
  for (;;) {
    follow_clock();
    run_ready();
    const int next = follow_clock();
    if (idle()) return next;
  }
}

}  // namespace pmix::server
