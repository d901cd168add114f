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

// PMIX_CXX_LOG_FILE: where the lines go instead of stderr (appended), for a
// server inside a host whose stderr goes nowhere (slurmstepd's).
std::FILE* sink() {
  static std::FILE* const file = [] {
    const char* path = std::getenv("PMIX_CXX_LOG_FILE");
    std::FILE* f = path == nullptr || *path == '\0' ? nullptr : std::fopen(path, "ae");
    if (f != nullptr) std::setvbuf(f, nullptr, _IOLBF, 0);
    return f != nullptr ? f : stderr;
  }();
  return file;
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

namespace detail {

void append_double(std::string& out, double value) {
  char text[32];
  const int n = std::snprintf(text, sizeof text, "%g", value);
  if (n > 0) out.append(text, static_cast<std::size_t>(n) < sizeof text ? n : sizeof text - 1);
}

void append_pointer(std::string& out, const void* value) {
  if (value == nullptr) {
    out.push_back('0');
    return;
  }
  char text[24];
  const int n = std::snprintf(text, sizeof text, "%p", value);
  if (n > 0) out.append(text, static_cast<std::size_t>(n));
}

}  // namespace detail

bool enabled(level l) { return static_cast<int>(l) <= threshold(); }

std::string escaped(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  static constexpr char hex[] = "0123456789abcdef";
  for (unsigned char c : text) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c < 0x20 || c == 0x7f) {
      out += "\\x";
      out += hex[c >> 4];
      out += hex[c & 0xf];
    } else {
      out += static_cast<char>(c);
    }
  }
  return out;
}

void write(level l, std::string_view component, const std::string& text) {
  // Client-supplied strings (namespaces, keys, messages) end up in log
  // lines: control characters are escaped, so a client can neither break a
  // line nor send escape sequences to a terminal (issue 14.6).
  const auto line = escaped(text);
  // One fprintf per line keeps lines from different threads whole.
  std::fprintf(sink(), "[pmix %d] %s %.*s: %s\n", static_cast<int>(getpid()), name(l),
               static_cast<int>(component.size()), component.data(), line.c_str());
}

}  // namespace pmix::log
