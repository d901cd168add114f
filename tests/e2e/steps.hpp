// Shared by the command-line driven test clients (script_client,
// event_client): each argument is a step, its fields separated by ':'.
#pragma once

#include <string>
#include <vector>

namespace pmix::test {

inline std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::size_t start = 0;
  for (;;) {
    const auto pos = s.find(sep, start);
    out.push_back(s.substr(start, pos - start));
    if (pos == std::string::npos) return out;
    start = pos + 1;
  }
}

}  // namespace pmix::test
