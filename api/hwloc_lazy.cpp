#include "api/hwloc_lazy.hpp"

#include <dlfcn.h>
#include <strings.h>

#include <mutex>
#include <string>

namespace pmix::api {
namespace {

constexpr const char* kLibrary = "libhwloc.so.15";

template <class Fn>
bool bind(void* handle, const char* name, Fn& out) {
  out = reinterpret_cast<Fn>(dlsym(handle, name));
  return out != nullptr;
}

// Every call, from `handle`; false if one is missing or the library is not
// hwloc 2 (whose object and bitmap layouts this code was compiled against).
bool resolve(void* handle, hwloc_calls& c) {
  bool ok = bind(handle, "hwloc_get_api_version", c.get_api_version);
  if (!ok || (c.get_api_version() >> 16) != (HWLOC_API_VERSION >> 16)) return false;
  ok = bind(handle, "hwloc_topology_init", c.topology_init) &&
       bind(handle, "hwloc_topology_load", c.topology_load) &&
       bind(handle, "hwloc_topology_dup", c.topology_dup) &&
       bind(handle, "hwloc_topology_destroy", c.topology_destroy) &&
       bind(handle, "hwloc_topology_set_xmlbuffer", c.topology_set_xmlbuffer) &&
       bind(handle, "hwloc_topology_set_xml", c.topology_set_xml) &&
       bind(handle, "hwloc_topology_set_io_types_filter", c.topology_set_io_types_filter) &&
       bind(handle, "hwloc_topology_get_depth", c.topology_get_depth) &&
       bind(handle, "hwloc_get_type_depth", c.get_type_depth) &&
       bind(handle, "hwloc_get_depth_type", c.get_depth_type) &&
       bind(handle, "hwloc_get_nbobjs_by_depth", c.get_nbobjs_by_depth) &&
       bind(handle, "hwloc_get_obj_by_depth", c.get_obj_by_depth) &&
       bind(handle, "hwloc_obj_type_string", c.obj_type_string);
  ok = ok && bind(handle, "hwloc_bitmap_alloc", c.bitmap_alloc) &&
       bind(handle, "hwloc_bitmap_dup", c.bitmap_dup) && bind(handle, "hwloc_bitmap_free", c.bitmap_free) &&
       bind(handle, "hwloc_bitmap_list_asprintf", c.bitmap_list_asprintf) &&
       bind(handle, "hwloc_bitmap_list_sscanf", c.bitmap_list_sscanf) &&
       bind(handle, "hwloc_bitmap_zero", c.bitmap_zero) && bind(handle, "hwloc_bitmap_set", c.bitmap_set) &&
       bind(handle, "hwloc_bitmap_iszero", c.bitmap_iszero) &&
       bind(handle, "hwloc_bitmap_isfull", c.bitmap_isfull) &&
       bind(handle, "hwloc_bitmap_intersects", c.bitmap_intersects) &&
       bind(handle, "hwloc_bitmap_isincluded", c.bitmap_isincluded) &&
       bind(handle, "hwloc_bitmap_next", c.bitmap_next);
  return ok;
}

struct resolver {
  std::mutex mutex;
  hwloc_calls calls{};
  bool found = false;
  bool load_failed = false;  // not retried
  std::string error;         // why it failed
  bool global = false;       // made global for hwloc's plugins

  const hwloc_calls* get(bool load) {
    std::lock_guard<std::mutex> guard{mutex};
    if (!found) {
      // Global scope first (a host linked with hwloc), then a copy loaded
      // privately (e.g. by our server runtime): RTLD_NOLOAD never loads it.
      if (resolve(RTLD_DEFAULT, calls)) {
        found = true;
      } else if (void* h = dlopen(kLibrary, RTLD_NOW | RTLD_NOLOAD)) {
        found = resolve(h, calls);
      }
    }
    if (!found && load && !load_failed) {
      void* h = dlopen(kLibrary, RTLD_NOW | RTLD_GLOBAL);
      found = h != nullptr && resolve(h, calls);
      if (!found) {
        load_failed = true;
        const char* why = h == nullptr ? dlerror() : "not hwloc 2";
        error = std::string{"cannot load "} + kLibrary + " (" + (why == nullptr ? "?" : why) + ")";
      }
    }
    // Whoever loads it, hwloc's plugins (PCI discovery, the libxml parser)
    // find hwloc's symbols only in the global scope, as linking hwloc puts
    // them: a private copy is made global before a topology is built.
    if (found && load && !global) {
      dlopen(kLibrary, RTLD_NOW | RTLD_NOLOAD | RTLD_GLOBAL);
      global = true;
    }
    return found ? &calls : nullptr;
  }
};

resolver& the_resolver() {
  static resolver r;
  return r;
}

}  // namespace

const hwloc_calls* loaded_hwloc() { return the_resolver().get(false); }

const hwloc_calls* load_hwloc() { return the_resolver().get(true); }

std::string hwloc_load_error() {
  auto& r = the_resolver();
  std::lock_guard<std::mutex> guard{r.mutex};
  return r.error;
}

bool is_hwloc_source(const char* source) { return source != nullptr && strncasecmp(source, "hwloc", 5) == 0; }

}  // namespace pmix::api
