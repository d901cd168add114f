#include "fence_trace.hpp"

#include <time.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <vector>

namespace pmixd::fence_trace {
namespace {

struct entry {
  std::int64_t ns;
  const char* stage;
  std::string key;
  std::int64_t node;
  std::int64_t round;
};

std::atomic<bool> on{false};
std::mutex mu;
std::vector<entry> kept;
std::string path;

}  // namespace

void open(const std::string& node) {
  const char* dir = std::getenv("PMIXD_FENCE_TRACE");
  if (dir == nullptr || *dir == '\0') return;
  path = std::string(dir) + "/pmixd." + node + "." + std::to_string(::getpid());
  kept.reserve(1 << 16);
  on = true;
  std::atexit(flush);
}

bool enabled() { return on.load(std::memory_order_relaxed); }

void mark(const char* stage, const std::string& key, std::int64_t node, std::int64_t round) {
  if (!enabled()) return;
  timespec t{};
  ::clock_gettime(CLOCK_MONOTONIC, &t);
  const std::int64_t ns = std::int64_t{t.tv_sec} * 1000000000 + t.tv_nsec;
  std::lock_guard<std::mutex> g{mu};
  kept.push_back(entry{ns, stage, key, node, round});
}

void flush() {
  if (!enabled()) return;
  std::lock_guard<std::mutex> g{mu};
  if (kept.empty()) return;
  std::FILE* f = std::fopen(path.c_str(), "a");
  if (f == nullptr) {
    std::fprintf(stderr, "pmixd: cannot write the fence trace %s\n", path.c_str());
    return;
  }
  for (const auto& e : kept)
    std::fprintf(f, "%lld %s %s %lld %lld\n", static_cast<long long>(e.ns), e.stage, e.key.empty() ? "-" : e.key.c_str(),
                 static_cast<long long>(e.node), static_cast<long long>(e.round));
  std::fclose(f);
  kept.clear();
}

}  // namespace pmixd::fence_trace
