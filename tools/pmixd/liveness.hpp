// Which peers have stopped answering (docs/multinode.md, "Failures").
//
// Daemons and their launcher send each other a beat every second, and each
// watches the peers it is connected to: a peer that nothing has been heard
// from for `timeout` is lost, as a closed connection makes it. This replaces
// CAF 0.17's middleman heartbeat, whose connection timeout also dropped
// every connection this side opened whose handshake was still running at a
// heartbeat tick (the BASP broker gives such a connection a last-seen time of
// zero): on a loaded machine, where a TLS handshake can take longer than the
// one-second tick, a daemon failed to reach its peers ten times in a row and
// the job failed with connection_timeout (multinode16_test, four runs side by
// side). Here a connection waits for its handshake, and a peer is watched
// once it beats (a daemon once it has the job's plan; the launcher from the
// plan on).
//
// A check that comes late, more than twice the interval after the one
// before, does not count the time this process itself was not running
// (stopped, starved of CPU) as the peers' silence: their beats may be
// waiting unread in its sockets. Every peer's silence is shortened by the
// check's delay, so a peer is judged only on time this process watched.
#pragma once

#include <algorithm>
#include <chrono>
#include <map>
#include <vector>

namespace pmixd {

template <class Key>
class liveness {
 public:
  using clock = std::chrono::steady_clock;

  liveness(clock::duration interval, clock::duration timeout) : interval_(interval), timeout_(timeout) {}

  // Watches `peer` from `now` on, or notes that it was heard.
  void heard(const Key& peer, clock::time_point now) { last_[peer] = now; }

  // Stops watching `peer`.
  void forget(const Key& peer) { last_.erase(peer); }

  bool watched(const Key& peer) const { return last_.count(peer) > 0; }

  // Called every `interval`: the peers silent for longer than `timeout`
  // while this process watched, which are no longer watched.
  std::vector<Key> check(clock::time_point now) {
    std::vector<Key> silent;
    const auto delay = checked_ && now - last_check_ > 2 * interval_ ? now - last_check_ - interval_
                                                                     : clock::duration::zero();
    checked_ = true;
    last_check_ = now;
    for (auto it = last_.begin(); it != last_.end();) {
      it->second = std::min(now, it->second + delay);
      if (now - it->second > timeout_) {
        silent.push_back(it->first);
        it = last_.erase(it);
      } else {
        ++it;
      }
    }
    return silent;
  }

 private:
  clock::duration interval_;
  clock::duration timeout_;
  std::map<Key, clock::time_point> last_;
  bool checked_ = false;
  clock::time_point last_check_{};
};

}  // namespace pmixd
