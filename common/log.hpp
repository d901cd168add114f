// The library's own log: one line per event on stderr, prefixed with the
// process id and the component. CAF's logging is compiled out in Debian's build.
//
// Verbosity comes from the environment variable PMIX_CXX_VERBOSE (0 = errors
// only, 1 = warnings, the default, 2 = info, 3 = debug), read once per process.
#pragma once

#include <sstream>
#include <string>
#include <string_view>

namespace pmix::log {

enum class level { error = 0, warning = 1, info = 2, debug = 3 };

bool enabled(level l);
// Writes one line; control characters (and backslashes) in `text` are
// escaped as \xNN (\\): whatever a client sent cannot break a line or reach
// a terminal as an escape sequence.
void write(level l, std::string_view component, const std::string& text);
// `text` as write() prints it.
std::string escaped(const std::string& text);

template <class... Ts>
void emit(level l, std::string_view component, const Ts&... parts) {
  if (!enabled(l)) return;
  std::ostringstream out;
  (out << ... << parts);
  write(l, component, out.str());
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
