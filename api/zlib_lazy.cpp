#include "api/zlib_lazy.hpp"

#include <dlfcn.h>

#include <mutex>

#include "common/log.hpp"

namespace pmix::api {
namespace {

constexpr const char* kLibrary = "libz.so.1";

template <class Fn>
bool bind(void* handle, const char* name, Fn& out) {
  out = reinterpret_cast<Fn>(dlsym(handle, name));
  return out != nullptr;
}

}  // namespace

const zlib_calls* load_zlib() {
  static std::mutex mutex;
  static zlib_calls calls{};
  static bool found = false;
  static bool failed = false;  // logged once, not retried
  std::lock_guard<std::mutex> guard{mutex};
  if (found) return &calls;
  if (failed) return nullptr;
  void* h = dlopen(kLibrary, RTLD_NOW | RTLD_LOCAL);
  found = h != nullptr && bind(h, "compressBound", calls.compress_bound) &&
          bind(h, "compress2", calls.compress2) && bind(h, "uncompress", calls.uncompress);
  if (!found) {
    failed = true;
    const char* why = h == nullptr ? dlerror() : "a call is missing";
    log::error("compress", "cannot load ", kLibrary, " (", why == nullptr ? "?" : why,
               "): PMIx_Data_compress and PMIx_Data_decompress answer false");
  }
  return found ? &calls : nullptr;
}

}  // namespace pmix::api
