// Shared by the command-line driven test clients (script_client,
// event_client): each argument is a step, its fields separated by ':'.
#pragma once

#include <pmix_common.h>

#include <condition_variable>
#include <mutex>
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

// A non-blocking call's answer, waited for on the main thread.
struct answer {
  std::mutex m;
  std::condition_variable cv;
  bool done = false;
  pmix_status_t rc = PMIX_SUCCESS;
  std::string text;
  void finish(pmix_status_t st, std::string t) {
    std::lock_guard<std::mutex> g{m};
    rc = st;
    text = std::move(t);
    done = true;
    cv.notify_all();
  }
  pmix_status_t wait(pmix_status_t started) {
    if (started != PMIX_SUCCESS) return started;
    std::unique_lock<std::mutex> g{m};
    cv.wait(g, [&] { return done; });
    return rc;
  }
};

}  // namespace pmix::test
