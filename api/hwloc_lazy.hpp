// hwloc calls for the value helpers, resolved only when hwloc is already in
// the process. A pmix_topology_t / pmix_cpuset_t of source "hwloc" can only
// exist if someone loaded hwloc, so libpmix.so.2 need not link it: client
// processes that never touch topologies never load it (docs/architecture.md).
#pragma once

#include <hwloc.h>

namespace pmix::api {

struct hwloc_calls {
  int (*topology_dup)(hwloc_topology_t* out, hwloc_topology_t old);
  void (*topology_destroy)(hwloc_topology_t topology);
  hwloc_bitmap_t (*bitmap_dup)(hwloc_const_bitmap_t bitmap);
  void (*bitmap_free)(hwloc_bitmap_t bitmap);
};

// The calls of the hwloc library loaded in this process, or nullptr.
const hwloc_calls* loaded_hwloc();

}  // namespace pmix::api
