// A map from a namespace's ranks to values, for the tables kept per rank
// (the server's registrations, a client's fence stamps): a job's ranks are
// dense (0..n-1), so they are positions of a vector, and the rare rank far
// beyond the others goes to a hash map. A host that registers 10,000 clients,
// or a collecting fence over 10,000 ranks, then costs one growing vector, not
// 10,000 hash-map nodes.
#pragma once

#include <algorithm>
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
    if (dense(r)) {
      if (r >= slots_.size()) grow(static_cast<std::size_t>(r) + 1);
      auto& slot = slots_[r];
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
    }
    return it->second;
  }
  const T* find(rank_t r) const {
    if (r < slots_.size()) return slots_[r] ? &*slots_[r] : nullptr;
    auto it = sparse_.find(r);
    return it == sparse_.end() ? nullptr : &it->second;
  }
  T* find(rank_t r) { return const_cast<T*>(static_cast<const rank_map&>(*this).find(r)); }
  bool contains(rank_t r) const { return find(r) != nullptr; }
  // f(rank, value&) for each entry: the vector's in rank order, then those
  // kept apart, in no order. f must not add or remove entries.
  template <class F>
  void for_each(F&& f) {
    for (std::size_t r = 0; r < slots_.size(); ++r)
      if (slots_[r]) f(static_cast<rank_t>(r), *slots_[r]);
    for (auto& [r, v] : sparse_) f(r, v);
  }
  void clear() { *this = rank_map{}; }
  // True if `r` was there.
  bool erase(rank_t r) {
    if (r < slots_.size()) {
      if (!slots_[r]) return false;
      slots_[r].reset();
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
    for (std::size_t r = 0; r < slots_.size(); ++r)
      if (slots_[r]) out.push_back(static_cast<rank_t>(r));
    std::vector<rank_t> far;
    for (const auto& kv : sparse_) far.push_back(kv.first);
    std::sort(far.begin(), far.end());
    out.insert(out.end(), far.begin(), far.end());
    return out;
  }

 private:
  // A rank goes into the vector while that keeps it at most about twice as
  // long as there are entries (plus some room for a job's first ranks).
  bool dense(rank_t r) const { return r < slots_.size() || r < 2 * count_ + 4096; }

  // Every rank below slots_.size() lives in the vector (find, erase and
  // ranks rely on it): ranks kept apart while the vector was shorter move
  // into it as it reaches them. sparse_min_ is a lower bound of the ranks
  // kept apart, so a growth that reaches none of them costs no scan; a
  // block of ranks far from 0 registered in order moves in one scan.
  void grow(std::size_t n) {
    slots_.resize(n);
    if (sparse_.empty() || sparse_min_ >= n) return;
    rank_t lowest = static_cast<rank_t>(-1);
    for (auto it = sparse_.begin(); it != sparse_.end();) {
      if (it->first < n) {
        slots_[it->first].emplace(std::move(it->second));
        it = sparse_.erase(it);
      } else {
        lowest = std::min(lowest, it->first);
        ++it;
      }
    }
    sparse_min_ = lowest;
  }

  std::vector<std::optional<T>> slots_;
  std::unordered_map<rank_t, T> sparse_;
  rank_t sparse_min_ = static_cast<rank_t>(-1);
  std::size_t count_ = 0;
};

}  // namespace pmix
