// Runs epilogs off the threads that run actors (issue 14.2): removing a
// directory of 200,000 files takes seconds, which would stall every job of
// the node if the loop thread did it. One thread, started on first use,
// runs the epilogs in order; the actor that asked is told when its epilog
// is done (epilog_done_msg, through the up-call gate). Destroyed after the
// actor system, it finishes what it was given first.
#pragma once

#include <caf/actor_addr.hpp>
#include <caf/allowed_unsafe_message_type.hpp>

#include <condition_variable>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>

#include "actors/epilog.hpp"

namespace pmix::actors {

class upcall_gate;

// The answer to run_epilog: the epilog has run (what it removed is logged).
struct epilog_done_msg {
  std::size_t removed = 0;
};

class cleaner {
 public:
  cleaner() = default;
  ~cleaner();
  cleaner(const cleaner&) = delete;
  cleaner& operator=(const cleaner&) = delete;

  void submit(std::function<void()> job);

 private:
  void work();

  std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<std::function<void()>> jobs_;
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace pmix::actors

CAF_ALLOW_UNSAFE_MESSAGE_TYPE(pmix::actors::epilog_done_msg)
