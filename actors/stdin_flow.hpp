// Stdin flow control (OpenPMIx master's PMIx_server_IOF_flow_control): the
// host stops (XOFF) or resumes (XON) the stdin its producers push
// (PMIx_IOF_push). While a producer is stopped, its pushes are held
// unanswered, so that it pushes no more than the one it waits for and
// nothing piles up in the server; XON sends each held push back to its peer
// actor, which hands it to the host as usual. A host that answers a push
// with PMIX_ERR_IOF_XOFF stops that producer the same way (the push itself
// is taken). Shared by the peer actors and the host's calls: every method
// takes the one mutex. What one peer may have held is bounded as its
// requests waiting for an answer are (server_context::max_requests and
// max_request_bytes): a push beyond is refused.
#pragma once

#include <caf/actor_addr.hpp>
#include <pmix_common.h>

#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "common/value.hpp"

namespace pmix::actors {

class stdin_flow {
 public:
  // A push held while its producer is stopped: the peer actor it came to,
  // its request id and its HostRequest bytes.
  struct held {
    caf::actor_addr peer;
    std::uint64_t id = 0;
    std::string request;
    proc_id producer;
  };

  enum class hold { no, held, refused };

  // held (the push kept, its bytes made by `request()`) when `producer` is
  // stopped; refused when its peer holds `max_count` pushes or `max_bytes`
  // already; no when it is not stopped (nothing is made).
  template <class Request>
  hold hold_if_stopped(const proc_id& producer, caf::actor_addr peer, std::uint64_t id, Request&& request,
                       std::size_t max_count, std::size_t max_bytes) {
    std::lock_guard<std::mutex> guard{mutex_};
    if (!stopped_locked(producer)) return hold::no;
    std::string bytes = request();
    std::size_t count = 0, weight = bytes.size();
    for (const auto& h : held_)
      if (h.peer == peer) ++count, weight += h.request.size();
    if (count >= max_count || weight > max_bytes) return hold::refused;
    held_.push_back(held{std::move(peer), id, std::move(bytes), producer});
    return hold::held;
  }

  // XOFF: stops `producers` (none: every producer); XON: resumes them.
  // The last call that names a producer decides for it. Returns the pushes
  // no longer held, oldest first.
  std::vector<held> set(const std::optional<proc_id>& producers, bool xoff) {
    std::lock_guard<std::mutex> guard{mutex_};
    const proc_id pattern = producers.value_or(proc_id{"", PMIX_RANK_WILDCARD});
    // Rules this one covers say nothing any more: the rules stay as many
    // as the distinct patterns the host names.
    for (auto it = rules_.begin(); it != rules_.end();) {
      if (covers(pattern, it->pattern)) {
        it = rules_.erase(it);
      } else {
        ++it;
      }
    }
    if (xoff || !rules_.empty()) rules_.push_back(rule{pattern, xoff});
    std::vector<held> released, still;
    for (auto& h : held_) (stopped_locked(h.producer) ? still : released).push_back(std::move(h));
    held_ = std::move(still);
    return released;
  }

  // A peer ended: the pushes it held are dropped (nobody waits for them).
  void drop(const caf::actor_addr& peer) {
    std::lock_guard<std::mutex> guard{mutex_};
    std::vector<held> still;
    for (auto& h : held_)
      if (h.peer != peer) still.push_back(std::move(h));
    held_ = std::move(still);
  }

  std::size_t held_count() {
    std::lock_guard<std::mutex> guard{mutex_};
    return held_.size();
  }

  bool stopped(const proc_id& producer) {
    std::lock_guard<std::mutex> guard{mutex_};
    return stopped_locked(producer);
  }

 private:
  // Whether `pattern` (an empty namespace: every process; the wildcard
  // rank: its whole namespace) takes in `p`.
  static bool covers(const proc_id& pattern, const proc_id& p) {
    if (pattern.nspace.empty()) return true;
    return pattern.nspace == p.nspace && (pattern.rank == PMIX_RANK_WILDCARD || pattern.rank == p.rank);
  }
  bool stopped_locked(const proc_id& p) const {
    for (auto it = rules_.rbegin(); it != rules_.rend(); ++it)
      if (covers(it->pattern, p)) return it->xoff;
    return false;
  }

  struct rule {
    proc_id pattern;
    bool xoff = false;
  };

  std::mutex mutex_;
  std::vector<rule> rules_;
  std::vector<held> held_;
};

}  // namespace pmix::actors
