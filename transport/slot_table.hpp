// Entries by a 64-bit id in reused slots: the I/O thread's table of its
// connections (issue 40: 56 bytes a connection, where a hash map's node and
// bucket took about 88).
#pragma once

#include <cstdint>
#include <deque>
#include <utility>
#include <vector>

namespace pmix::transport {

// An id is the slot's index in its low 32 bits and the slot's use above
// them. Uses are counted across all slots, from 1 to 2^31 - 1 and round
// again, so no id is 0 (the I/O thread's wake-up tag) nor has bit 63 (its
// listeners' tag), and an id whose entry was erased finds nothing though
// its slot serves another. Slots stay where they are (a deque's chunks) and
// are reused: the table keeps as many as were ever placed at once.
//
// T is default-constructible and movable, with a `std::uint32_t use` member
// (kept in T's own padding) and `bool live() const`: a placed entry is live,
// a default-constructed one is not.
template <class T>
class slot_table {
 public:
  static constexpr std::uint32_t max_use = 0x7fffffffu;

  // `last_use`: where the count of uses starts (a test starts it near the
  // end, to see it go round).
  explicit slot_table(std::uint32_t last_use = 0) : last_use_(last_use) {}

  // An id for a new entry, not found until place()d; erase() gives it back.
  std::uint64_t reserve() {
    std::uint32_t slot;
    if (free_.empty()) {
      slot = static_cast<std::uint32_t>(slots_.size());
      slots_.emplace_back();
    } else {
      slot = free_.back();
      free_.pop_back();
    }
    last_use_ = last_use_ % max_use + 1;
    slots_[slot].use = last_use_;
    return (std::uint64_t{last_use_} << 32) | slot;
  }

  // `value` must be live; the id must be one reserve() gave, not yet placed.
  void place(std::uint64_t id, T value) {
    auto& s = slots_[static_cast<std::uint32_t>(id)];
    value.use = s.use;
    s = std::move(value);
    ++live_;
  }

  T* find(std::uint64_t id) {
    const auto slot = static_cast<std::uint32_t>(id);
    if (slot >= slots_.size()) return nullptr;
    auto& s = slots_[slot];
    return s.live() && s.use == static_cast<std::uint32_t>(id >> 32) ? &s : nullptr;
  }
  const T* find(std::uint64_t id) const { return const_cast<slot_table*>(this)->find(id); }

  // A placed or reserved id; any other is ignored.
  void erase(std::uint64_t id) {
    const auto slot = static_cast<std::uint32_t>(id);
    if (slot >= slots_.size() || slots_[slot].use != static_cast<std::uint32_t>(id >> 32)) return;
    if (slots_[slot].live()) --live_;
    T fresh;  // use 0: free
    slots_[slot] = std::move(fresh);
    free_.push_back(slot);
  }

  std::size_t size() const { return live_; }    // placed entries
  std::size_t slots() const { return slots_.size(); }

  std::vector<std::uint64_t> ids() const {  // of the placed entries
    std::vector<std::uint64_t> out;
    out.reserve(live_);
    for (std::uint32_t k = 0; k < slots_.size(); ++k)
      if (slots_[k].live()) out.push_back((std::uint64_t{slots_[k].use} << 32) | k);
    return out;
  }

 private:
  std::deque<T> slots_;
  std::vector<std::uint32_t> free_;
  std::uint32_t last_use_;
  std::size_t live_ = 0;
};

}  // namespace pmix::transport
