// The library's own log: one line per event on stderr, prefixed with the
// process id and the component. CAF's logging is compiled out in Debian's build.
//
// Verbosity comes from the environment variable PMIX_CXX_VERBOSE (0 = errors
// only, 1 = warnings, the default, 2 = info, 3 = debug), read once per process.
#pragma once

#include <charconv>
#include <string>
#include <string_view>
#include <type_traits>

namespace pmix::log {

enum class level { error = 0, warning = 1, info = 2, debug = 3 };

bool enabled(level l);
// Writes one line; control characters (and backslashes) in `text` are
// escaped as \xNN (\\): whatever a client sent cannot break a line or reach
// a terminal as an escape sequence.
void write(level l, std::string_view component, const std::string& text);
// `text` as write() prints it.
std::string escaped(const std::string& text);

// A line's parts appended as an ostream would print them with its default
// flags (numbers in decimal, bool as 1/0, a double as %g, a pointer in hex),
// without an ostream: the client library then carries none of the C++
// streams and locales, whose tables every process linking it would
// relocate and whose constructors it would run at start-up
// (docs/performance.md, "Client start-up cost").
namespace detail {
void append_double(std::string& out, double value);
void append_pointer(std::string& out, const void* value);

inline void append(std::string& out, std::string_view text) { out.append(text); }
inline void append(std::string& out, const std::string& text) { out.append(text); }
inline void append(std::string& out, const char* text) {
  out.append(text != nullptr ? text : "(null)");
}
inline void append(std::string& out, char c) { out.push_back(c); }
inline void append(std::string& out, signed char c) { out.push_back(static_cast<char>(c)); }
inline void append(std::string& out, unsigned char c) { out.push_back(static_cast<char>(c)); }
inline void append(std::string& out, bool value) { out.push_back(value ? '1' : '0'); }
inline void append(std::string& out, const void* value) { append_pointer(out, value); }
template <class T>
void append(std::string& out, const T& value) {
  if constexpr (std::is_enum_v<T>) {
    append(out, static_cast<std::underlying_type_t<T>>(value));
  } else if constexpr (std::is_floating_point_v<T>) {
    append_double(out, static_cast<double>(value));
  } else if constexpr (std::is_array_v<T> || std::is_pointer_v<T>) {
    using element = std::remove_cv_t<std::remove_pointer_t<std::decay_t<T>>>;
    if constexpr (std::is_same_v<element, char>) {
      append(out, static_cast<const char*>(value));  // a C string, as an ostream prints it
    } else {
      append_pointer(out, static_cast<const void*>(value));
    }
  } else {
    static_assert(std::is_integral_v<T>, "a log line's part is text, a number or a pointer");
    char digits[24];
    const auto end = std::to_chars(digits, digits + sizeof digits, value).ptr;
    out.append(digits, end);
  }
}
}  // namespace detail

// The parts as one line's text (before escaping).
template <class... Ts>
std::string format(const Ts&... parts) {
  std::string out;
  (detail::append(out, parts), ...);
  return out;
}

template <class... Ts>
void emit(level l, std::string_view component, const Ts&... parts) {
  if (!enabled(l)) return;
  write(l, component, format(parts...));
}

template <class... Ts>
void error(std::string_view component, const Ts&... parts) {
  emit(level::error, component, parts...);
}
template <class... Ts>
void warning(std::string_view component, const Ts&... parts) {
  emit(level::warning, component, parts...);
}
template <class... Ts>
void info(std::string_view component, const Ts&... parts) {
  emit(level::info, component, parts...);
}
template <class... Ts>
void debug(std::string_view component, const Ts&... parts) {
  emit(level::debug, component, parts...);
}

}  // namespace pmix::log
