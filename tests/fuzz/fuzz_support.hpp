// Shared by the fuzz targets (tests/fuzz/*_fuzz.cpp): a check that stops the
// run with a message (libFuzzer counts the abort as a crash and saves the
// input; the regression tests fail), a reader of the fuzzer's bytes, and a
// deep comparison of the library's values. No fuzzer headers: the same
// sources build with gcc for the regression tests (regression_main.cpp).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <string_view>

#include "common/value.hpp"

// An invariant of the library that the input broke: report and abort.
#define FUZZ_CHECK(cond)                                                                    \
  do {                                                                                      \
    if (!(cond)) {                                                                          \
      std::fprintf(stderr, "FUZZ_CHECK failed at %s:%d: %s\n", __FILE__, __LINE__, #cond); \
      std::abort();                                                                         \
    }                                                                                       \
  } while (0)

namespace pmix::fuzz {

// Takes bytes off the front of the fuzzer's input.
class input {
 public:
  input(const std::uint8_t* data, std::size_t size)
      : p_(reinterpret_cast<const char*>(data)), left_(size) {}

  std::size_t left() const { return left_; }
  std::uint8_t byte() {
    if (left_ == 0) return 0;
    --left_;
    return static_cast<std::uint8_t>(*p_++);
  }
  // Up to n bytes.
  std::string_view bytes(std::size_t n) {
    if (n > left_) n = left_;
    std::string_view out{p_, n};
    p_ += n;
    left_ -= n;
    return out;
  }
  std::string_view rest() { return bytes(left_); }

 private:
  const char* p_;
  std::size_t left_;
};

bool same(const value& a, const value& b);

inline bool same(const info& a, const info& b) {
  return a.key == b.key && a.flags == b.flags && same(a.val, b.val);
}

inline bool same(const info_list& a, const info_list& b) {
  if (a.size() != b.size()) return false;
  for (std::size_t k = 0; k < a.size(); ++k)
    if (!same(a[k], b[k])) return false;
  return true;
}

// Equal types and payloads; doubles compared bit for bit (NaN equals itself).
inline bool same(const value& a, const value& b) {
  if (a.type != b.type || a.data.index() != b.data.index()) return false;
  if (const auto* x = std::get_if<double>(&a.data)) {
    const double y = std::get<double>(b.data);
    return std::memcmp(x, &y, sizeof y) == 0;
  }
  if (const auto* x = std::get_if<timeval_value>(&a.data)) {
    const auto& y = std::get<timeval_value>(b.data);
    return x->sec == y.sec && x->usec == y.usec;
  }
  if (const auto* x = std::get_if<std::shared_ptr<const envar_value>>(&a.data)) {
    const auto& y = std::get<std::shared_ptr<const envar_value>>(b.data);
    return (*x)->name == y->name && (*x)->value == y->value && (*x)->separator == y->separator;
  }
  if (const auto* x = std::get_if<std::shared_ptr<const proc_info_value>>(&a.data)) {
    const auto& p = **x;
    const auto& q = *std::get<std::shared_ptr<const proc_info_value>>(b.data);
    return p.proc == q.proc && p.hostname == q.hostname && p.executable == q.executable &&
           p.pid == q.pid && p.exit_code == q.exit_code && p.state == q.state;
  }
  if (const auto* x = std::get_if<std::shared_ptr<const array_value>>(&a.data)) {
    const auto& p = **x;
    const auto& q = *std::get<std::shared_ptr<const array_value>>(b.data);
    if (p.type != q.type || p.elements.size() != q.elements.size()) return false;
    for (std::size_t k = 0; k < p.elements.size(); ++k)
      if (!same(p.elements[k], q.elements[k])) return false;
    return true;
  }
  if (const auto* x = std::get_if<std::shared_ptr<const info>>(&a.data))
    return same(**x, *std::get<std::shared_ptr<const info>>(b.data));
  if (const auto* x = std::get_if<bool>(&a.data)) return *x == std::get<bool>(b.data);
  if (const auto* x = std::get_if<std::int64_t>(&a.data)) return *x == std::get<std::int64_t>(b.data);
  if (const auto* x = std::get_if<std::uint64_t>(&a.data)) return *x == std::get<std::uint64_t>(b.data);
  if (const auto* x = std::get_if<std::string>(&a.data)) return *x == std::get<std::string>(b.data);
  if (const auto* x = std::get_if<proc_id>(&a.data)) return *x == std::get<proc_id>(b.data);
  return true;  // std::monostate
}

}  // namespace pmix::fuzz
