// Containers that cost one pointer until they hold something: for fields
// of the per-client actor states (one peer and one rank per connected
// client) that most clients never fill. An empty std::vector is 24 bytes and
// an empty std::map 48; these are 8 (docs/simulator.md, "Server memory").
#pragma once

#include <cstddef>
#include <iterator>
#include <map>
#include <memory>
#include <utility>
#include <vector>

namespace pmix {

// A vector made at its first element and freed when it is emptied (by
// erase or clear). Iterators are pointers: as a vector's, erase and
// insertion invalidate them.
template <class T>
class lazy_vector {
 public:
  using value_type = T;
  using iterator = T*;
  using const_iterator = const T*;
  using reverse_iterator = std::reverse_iterator<T*>;

  lazy_vector() = default;
  lazy_vector(lazy_vector&&) noexcept = default;
  lazy_vector& operator=(lazy_vector&&) noexcept = default;

  bool empty() const { return !v_ || v_->empty(); }
  std::size_t size() const { return v_ ? v_->size() : 0; }
  T* begin() { return v_ ? v_->data() : nullptr; }
  T* end() { return v_ ? v_->data() + v_->size() : nullptr; }
  const T* begin() const { return v_ ? v_->data() : nullptr; }
  const T* end() const { return v_ ? v_->data() + v_->size() : nullptr; }
  reverse_iterator rbegin() { return reverse_iterator{end()}; }
  reverse_iterator rend() { return reverse_iterator{begin()}; }
  T& back() { return v_->back(); }
  T& operator[](std::size_t k) { return (*v_)[k]; }

  void push_back(T x) { made().push_back(std::move(x)); }
  template <class... Args>
  T& emplace_back(Args&&... args) {
    return made().emplace_back(std::forward<Args>(args)...);
  }
  // Returns the element after the erased one (end() once emptied).
  T* erase(T* pos) {
    const auto k = pos - v_->data();
    v_->erase(v_->begin() + k);
    if (v_->empty()) {
      v_.reset();
      return nullptr;
    }
    return v_->data() + k;
  }
  void clear() { v_.reset(); }

 private:
  std::vector<T>& made() {
    if (!v_) v_ = std::make_unique<std::vector<T>>();
    return *v_;
  }
  std::unique_ptr<std::vector<T>> v_;
};

// A map made at its first insertion and kept (a client that asked once
// asks again: no allocation per request). What is not made yet answers as
// an empty map.
template <class K, class V>
class lazy_map {
 public:
  using map_type = std::map<K, V>;
  using key_type = K;
  using mapped_type = V;
  using iterator = typename map_type::iterator;

  bool empty() const { return !m_ || m_->empty(); }
  std::size_t size() const { return m_ ? m_->size() : 0; }
  iterator begin() { return m_ ? m_->begin() : none().begin(); }
  iterator end() { return m_ ? m_->end() : none().end(); }
  iterator find(const K& k) { return m_ ? m_->find(k) : none().end(); }
  std::size_t count(const K& k) const { return m_ ? m_->count(k) : 0; }
  template <class... Args>
  std::pair<iterator, bool> emplace(Args&&... args) {
    if (!m_) m_ = std::make_unique<map_type>();
    return m_->emplace(std::forward<Args>(args)...);
  }
  iterator erase(iterator it) { return m_->erase(it); }

 private:
  // The one empty map whose end() a map not made yet answers.
  static map_type& none() {
    static map_type empty;
    return empty;
  }
  std::unique_ptr<map_type> m_;
};

}  // namespace pmix
