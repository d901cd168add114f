// hwloc for libpmix.so.2, resolved at run time: the library never links it,
// so client processes that never touch topologies never load it
// (docs/architecture.md, docs/local-functions.md).
//
// - loaded_hwloc(): the calls of an hwloc already in the process, or nullptr.
//   Enough to release or copy a pmix_topology_t / pmix_cpuset_t of source
//   "hwloc": such an object can only exist if someone loaded hwloc.
// - load_hwloc(): the same, loading libhwloc.so.15 first if needed (into the
//   global scope, as linking it would: hwloc's plugins need that). Only the
//   topology, cpuset and locality calls (api/cpuset_api.cpp) use it.
//
// Both check that the library found has hwloc 2's API (the struct layouts
// this code reads), and cache the answer once it is positive. Code that uses
// these pointers must not call hwloc's inline helpers from <hwloc.h>, which
// would reference hwloc's symbols directly (the link, with -z defs, fails).
#pragma once

#include <hwloc.h>

#include <string>

namespace pmix::api {

struct hwloc_calls {
  unsigned (*get_api_version)();
  // topologies
  int (*topology_init)(hwloc_topology_t* out);
  int (*topology_load)(hwloc_topology_t topology);
  int (*topology_dup)(hwloc_topology_t* out, hwloc_topology_t old);
  void (*topology_destroy)(hwloc_topology_t topology);
  int (*topology_set_xmlbuffer)(hwloc_topology_t topology, const char* buffer, int size);
  int (*topology_set_xml)(hwloc_topology_t topology, const char* path);
  int (*topology_set_io_types_filter)(hwloc_topology_t topology, enum hwloc_type_filter_e filter);
  int (*topology_get_depth)(hwloc_topology_t topology);
  int (*get_type_depth)(hwloc_topology_t topology, hwloc_obj_type_t type);
  hwloc_obj_type_t (*get_depth_type)(hwloc_topology_t topology, int depth);
  unsigned (*get_nbobjs_by_depth)(hwloc_topology_t topology, int depth);
  hwloc_obj_t (*get_obj_by_depth)(hwloc_topology_t topology, int depth, unsigned index);
  const char* (*obj_type_string)(hwloc_obj_type_t type);
  // bitmaps
  hwloc_bitmap_t (*bitmap_alloc)();
  hwloc_bitmap_t (*bitmap_dup)(hwloc_const_bitmap_t bitmap);
  void (*bitmap_free)(hwloc_bitmap_t bitmap);
  int (*bitmap_list_asprintf)(char** out, hwloc_const_bitmap_t bitmap);
  int (*bitmap_list_sscanf)(hwloc_bitmap_t bitmap, const char* text);
  void (*bitmap_zero)(hwloc_bitmap_t bitmap);
  int (*bitmap_set)(hwloc_bitmap_t bitmap, unsigned id);
  int (*bitmap_iszero)(hwloc_const_bitmap_t bitmap);
  int (*bitmap_isfull)(hwloc_const_bitmap_t bitmap);
  int (*bitmap_intersects)(hwloc_const_bitmap_t a, hwloc_const_bitmap_t b);
  int (*bitmap_isincluded)(hwloc_const_bitmap_t sub, hwloc_const_bitmap_t super);
  int (*bitmap_next)(hwloc_const_bitmap_t bitmap, int prev);
};

// The calls of the hwloc library loaded in this process, or nullptr.
const hwloc_calls* loaded_hwloc();

// The same, loading libhwloc.so.15 (RTLD_GLOBAL) when the process has none,
// or making a private copy global; nullptr if it cannot be loaded (not
// retried; hwloc_load_error() says why).
const hwloc_calls* load_hwloc();
std::string hwloc_load_error();

// Whether `source` names hwloc ("hwloc", "hwloc:2.9.0", any case).
bool is_hwloc_source(const char* source);

}  // namespace pmix::api
