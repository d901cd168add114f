// A map from a namespace's ranks to values, for the tables kept per rank
// (the server's registrations, live and finalized ranks and rank actors, a
// client's fence stamps): a job's ranks are dense, so they are positions of
// a vector, and the rare rank far from the others goes to a hash map. A host
// that registers 10,000 clients, or a collecting fence over 10,000 ranks,
// then costs one growing vector, not 10,000 hash-map nodes.
//
// The vector covers the ranks [base, base + its length): on node 15 of a
// job of 16 x 6,250 the ranks are 93,750-99,999, and start there. Ranks
// that do not fit (the vector would grow to more than about twice the
// entries, plus room for a block's first ranks) are kept apart; whenever
// their number doubles the map looks whether all of them and the vector
// now fit in one vector, and moves them in if so (a block whose first ranks
// came far apart, or in any order).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <unordered_map>
#include <utility>
#include <vector>

#include "common/value.hpp"

namespace pmix {

template <class T>
class rank_map {
 public:
  // The value for `r`, made (default) if absent.
  T& operator[](rank_t r) {
    if (!in_span(r) && fits(r)) widen(r);
    if (in_span(r)) {
      auto& slot = slots_[r - base_];
      if (!slot) {
        slot.emplace();
        ++count_;
      }
      return *slot;
    }
    auto [it, added] = sparse_.try_emplace(r);
    if (added) {
      ++count_;
      sparse_min_ = std::min(sparse_min_, r);
      sparse_max_ = std::max(sparse_max_, r);
      if (sparse_.size() >= next_gather_) {
        next_gather_ = 2 * sparse_.size();
        if (gather()) return *find(r);
      }
    }
    return it->second;
  }
  const T* find(rank_t r) const {
    if (in_span(r)) return slots_[r - base_] ? &*slots_[r - base_] : nullptr;
    auto it = sparse_.find(r);
    return it == sparse_.end() ? nullptr : &it->second;
  }
  T* find(rank_t r) { return const_cast<T*>(static_cast<const rank_map&>(*this).find(r)); }
  bool contains(rank_t r) const { return find(r) != nullptr; }
  // True if `r` was there.
  bool erase(rank_t r) {
    if (in_span(r)) {
      auto& slot = slots_[r - base_];
      if (!slot) return false;
      slot.reset();
      --count_;
      return true;
    }
    if (sparse_.erase(r) == 0) return false;
    --count_;
    return true;
  }
  std::size_t size() const { return count_; }
  // The ranks present, in order.
  std::vector<rank_t> ranks() const {
    std::vector<rank_t> out;
    out.reserve(count_);
    for (const auto& kv : sparse_) out.push_back(kv.first);
    std::sort(out.begin(), out.end());
    const auto below = std::partition_point(out.begin(), out.end(), [&](rank_t r) { return r < base_; });
    std::vector<rank_t> dense;
    dense.reserve(count_ - sparse_.size());
    for (std::size_t i = 0; i < slots_.size(); ++i)
      if (slots_[i]) dense.push_back(static_cast<rank_t>(base_ + i));
    out.insert(below, dense.begin(), dense.end());
    return out;
  }
  // f(rank, value&) for each entry: the vector's in rank order, then those
  // kept apart, in no order. f must not add or remove entries.
  template <class F>
  void for_each(F&& f) {
    for (std::size_t i = 0; i < slots_.size(); ++i)
      if (slots_[i]) f(static_cast<rank_t>(base_ + i), *slots_[i]);
    for (auto& [r, v] : sparse_) f(r, v);
  }
  void clear() { *this = rank_map{}; }
  // How many entries are kept apart from the vector (for tests).
  std::size_t kept_apart() const { return sparse_.size(); }
  // How long the vector is (for tests: at most about twice the entries).
  std::size_t span() const { return slots_.size(); }

 private:
  static constexpr std::uint64_t room = 4096;

  bool in_span(rank_t r) const { return r >= base_ && r - base_ < slots_.size(); }
  // The vector may stretch to take `r` if it then stays at most about
  // twice as long as there are entries (plus room for a block's first
  // ranks). An empty one starts at 0, for a job's first ranks.
  bool fits(rank_t r) const {
    const std::uint64_t lo = slots_.empty() ? 0 : std::min<std::uint64_t>(base_, r);
    const std::uint64_t hi = std::max<std::uint64_t>(slots_.empty() ? 0 : base_ + slots_.size(),
                                                     static_cast<std::uint64_t>(r) + 1);
    return hi - lo <= 2 * static_cast<std::uint64_t>(count_) + room;
  }
  void widen(rank_t r) {
    if (slots_.empty()) base_ = 0;
    if (r >= base_) {
      slots_.resize(static_cast<std::size_t>(r - base_) + 1);  // the vector's own growth is geometric
    } else {
      // Below: as much room again as the vector has (not below 0), so
      // ranks coming in descending order move it a logarithmic number of
      // times.
      const std::size_t extra =
          std::min<std::size_t>(base_, std::max<std::size_t>(base_ - r, slots_.size()));
      // A new vector with the old slots moved to its end (what inserting
      // `extra` empty slots at the front does; GCC 12 warned of a
      // maybe-uninitialized copy in vector::insert's temporary there).
      std::vector<std::optional<T>> grown(extra + slots_.size());
      std::move(slots_.begin(), slots_.end(), grown.begin() + static_cast<std::ptrdiff_t>(extra));
      slots_.swap(grown);
      base_ -= static_cast<rank_t>(extra);
    }
    absorb();
  }
  // Every rank within the vector's span lives in the vector (find, erase
  // and ranks rely on it): those kept apart move in when it reaches them.
  void absorb() {
    if (sparse_.empty() || sparse_max_ < base_ ||
        static_cast<std::uint64_t>(sparse_min_) >= static_cast<std::uint64_t>(base_) + slots_.size())
      return;
    rank_t lowest = static_cast<rank_t>(-1), highest = 0;
    for (auto it = sparse_.begin(); it != sparse_.end();) {
      if (in_span(it->first)) {
        slots_[it->first - base_].emplace(std::move(it->second));
        it = sparse_.erase(it);
      } else {
        lowest = std::min(lowest, it->first);
        highest = std::max(highest, it->first);
        ++it;
      }
    }
    sparse_min_ = lowest;
    sparse_max_ = highest;
  }
  // All entries into one vector, if they fit in one (twice the entries
  // plus room). True if it did.
  bool gather() {
    rank_t lo = sparse_min_, hi = sparse_max_;
    for (std::size_t i = 0; i < slots_.size(); ++i)
      if (slots_[i]) {
        lo = std::min(lo, static_cast<rank_t>(base_ + i));
        break;
      }
    for (std::size_t i = slots_.size(); i-- > 0;)
      if (slots_[i]) {
        hi = std::max(hi, static_cast<rank_t>(base_ + i));
        break;
      }
    if (static_cast<std::uint64_t>(hi) - lo + 1 > 2 * static_cast<std::uint64_t>(count_) + room) return false;
    std::vector<std::optional<T>> slots(static_cast<std::size_t>(hi - lo) + 1);
    for (std::size_t i = 0; i < slots_.size(); ++i)
      if (slots_[i]) slots[base_ + i - lo] = std::move(slots_[i]);
    for (auto& [r, v] : sparse_) slots[r - lo].emplace(std::move(v));
    slots_ = std::move(slots);
    base_ = lo;
    sparse_.clear();
    sparse_min_ = static_cast<rank_t>(-1);
    sparse_max_ = 0;
    return true;
  }

  std::vector<std::optional<T>> slots_;
  rank_t base_ = 0;
  std::unordered_map<rank_t, T> sparse_;
  // Bounds of the ranks kept apart (after erasures, still bounds).
  rank_t sparse_min_ = static_cast<rank_t>(-1);
  rank_t sparse_max_ = 0;
  std::size_t next_gather_ = 64;
  std::size_t count_ = 0;
};

}  // namespace pmix
