#include "api/hwloc_lazy.hpp"

#include <dlfcn.h>

#include <mutex>

namespace pmix::api {
namespace {

bool resolve(void* handle, hwloc_calls& out) {
  out.topology_dup = reinterpret_cast<decltype(out.topology_dup)>(dlsym(handle, "hwloc_topology_dup"));
  out.topology_destroy =
      reinterpret_cast<decltype(out.topology_destroy)>(dlsym(handle, "hwloc_topology_destroy"));
  out.bitmap_dup = reinterpret_cast<decltype(out.bitmap_dup)>(dlsym(handle, "hwloc_bitmap_dup"));
  out.bitmap_free = reinterpret_cast<decltype(out.bitmap_free)>(dlsym(handle, "hwloc_bitmap_free"));
  return out.topology_dup != nullptr && out.topology_destroy != nullptr &&
         out.bitmap_dup != nullptr && out.bitmap_free != nullptr;
}

}  // namespace

const hwloc_calls* loaded_hwloc() {
  static std::mutex mutex;
  static hwloc_calls calls{};
  static bool found = false;
  std::lock_guard<std::mutex> guard{mutex};
  if (found) return &calls;
  // Global scope first (a host linked with hwloc), then a copy loaded
  // privately (e.g. by our server runtime): RTLD_NOLOAD never loads it.
  if (resolve(RTLD_DEFAULT, calls)) {
    found = true;
  } else if (void* h = dlopen("libhwloc.so.15", RTLD_NOW | RTLD_NOLOAD)) {
    found = resolve(h, calls);
  }
  return found ? &calls : nullptr;
}

}  // namespace pmix::api
