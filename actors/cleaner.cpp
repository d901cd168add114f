#include "actors/cleaner.hpp"

#include <system_error>

#include "actors/context.hpp"
#include "common/log.hpp"

namespace pmix::actors {

void run_epilog(const server_context& ctx, epilog e, const caf::actor_addr& who) {
  if (e.empty()) {  // nothing to remove: no need to leave the actor's thread
    ctx.gate->send_if_open(who, epilog_done_msg{0});
    return;
  }
  // The job hands its address on (moved) with its answer: in loop mode the
  // loop thread, not the cleaner, releases it, so an actor's control block
  // is only ever released on the thread that runs the actor.
  // (An init-capture: a plain capture of `who` would be const, and copied.)
  auto job = [e = std::move(e), gate = ctx.gate, addr = who]() mutable {
    const auto removed = e.run();
    gate->send_if_open(std::move(addr), epilog_done_msg{removed});
  };
  if (ctx.cleanup_worker) return ctx.cleanup_worker->submit(std::move(job));
  job();
}

cleaner::~cleaner() {
  {
    std::lock_guard<std::mutex> guard{mutex_};
    stopping_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void cleaner::submit(std::function<void()> job) {
  {
    std::lock_guard<std::mutex> guard{mutex_};
    bool running = thread_.joinable();
    if (!running) {
      try {
        thread_ = std::thread([this] { work(); });
        running = true;
      } catch (const std::system_error& e) {
        // No thread to be had (RLIMIT_NPROC, memory): the job runs here,
        // on the actor's thread, rather than an exception ending the actor
        // with its epilog never run. The next job tries again.
        log::warning("cleaner", "cannot start the cleanup thread (", e.what(), "): running an epilog in place");
      }
    }
    if (running) {
      jobs_.push_back(std::move(job));
      job = nullptr;
    }
  }
  if (job) return job();
  wake_.notify_one();
}

void cleaner::work() {
  for (;;) {
    std::function<void()> job;
    {
      std::unique_lock<std::mutex> guard{mutex_};
      wake_.wait(guard, [this] { return stopping_ || !jobs_.empty(); });
      if (jobs_.empty()) return;  // stopping, and everything done
      job = std::move(jobs_.front());
      jobs_.pop_front();
    }
    job();
  }
}

}  // namespace pmix::actors
