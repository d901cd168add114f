#include "common/log.hpp"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>

namespace pmix::log {
namespace {

int threshold() {
  static const int value = [] {
    const char* env = std::getenv("PMIX_CXX_VERBOSE");
    if (env == nullptr || *env == '\0') return static_cast<int>(level::warning);
    return std::atoi(env);
  }();
  return value;
}

const char* name(level l) {
  switch (l) {
    case level::error: return "error";
    case level::warning: return "warning";
    case level::info: return "info";
    case level::debug: return "debug";
  }
  return "?";
}

}  // namespace

bool enabled(level l) { return static_cast<int>(l) <= threshold(); }

void write(level l, std::string_view component, const std::string& text) {
  // One fprintf per line keeps lines from different threads whole.
  std::fprintf(stderr, "[pmix %d] %s %.*s: %s\n", static_cast<int>(getpid()), name(l),
               static_cast<int>(component.size()), component.data(), text.c_str());
}

}  // namespace pmix::log
