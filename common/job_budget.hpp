// What the processes of one job make the server hold together
// (docs/security.md, "Limits"): the data they committed, the requests they
// wait on (how many, and their bytes), and output they have not read. Each
// peer of the job takes its share before it holds more, and gives it back
// when it lets go; a share that would pass the job's limit is refused, and
// nothing is taken. Shared by a namespace's peers and their connections, on
// whatever thread each runs: counters of resources, not PMIx state.
#pragma once

#include <atomic>
#include <cstddef>

namespace pmix {

class job_budget {
 public:
  enum kind : int { committed, requests, request_bytes, backlog, kinds };
  struct limits {
    std::size_t of[kinds];
  };

  explicit job_budget(const limits& l) : limits_(l) {}
  job_budget(const job_budget&) = delete;
  job_budget& operator=(const job_budget&) = delete;

  // Takes `n` of `k`; false (nothing taken) if that would pass the limit.
  bool take(kind k, std::size_t n) {
    auto& held = held_[k];
    auto now = held.load(std::memory_order_relaxed);
    do {
      if (n > limits_.of[k] || now > limits_.of[k] - n) return false;
    } while (!held.compare_exchange_weak(now, now + n, std::memory_order_relaxed));
    return true;
  }
  // Takes `n` whatever the limit (what is held already when counting starts).
  void add(kind k, std::size_t n) { held_[k].fetch_add(n, std::memory_order_relaxed); }
  void give(kind k, std::size_t n) {
    if (n != 0) held_[k].fetch_sub(n, std::memory_order_relaxed);
  }
  std::size_t held(kind k) const { return held_[k].load(std::memory_order_relaxed); }
  std::size_t limit(kind k) const { return limits_.of[k]; }

 private:
  limits limits_;
  std::atomic<std::size_t> held_[kinds]{};
};

}  // namespace pmix
