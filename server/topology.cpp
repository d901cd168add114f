#include "server/topology.hpp"

#include <dlfcn.h>
#include <hwloc.h>
#include <hwloc/export.h>

namespace pmix::server {
namespace {

// The runtime is loaded RTLD_LOCAL, and hwloc with it: hwloc's plugins (PCI
// discovery, the libxml parser) then cannot find hwloc's symbols and are
// skipped. Making hwloc global, as linking it would, before the first
// topology is built lets them load.
void make_hwloc_global() {
  static const bool done = dlopen("libhwloc.so.15", RTLD_NOW | RTLD_NOLOAD | RTLD_GLOBAL) != nullptr;
  (void)done;
}

}  // namespace

pmix_status_t thread_binding::create(const std::string& cpus, std::shared_ptr<thread_binding>& out,
                                     std::string& error) {
  make_hwloc_global();
  std::shared_ptr<thread_binding> b{new thread_binding};
  hwloc_topology_t topo = nullptr;
  if (hwloc_topology_init(&topo) != 0 || hwloc_topology_load(topo) != 0) {
    if (topo != nullptr) hwloc_topology_destroy(topo);
    error = "hwloc cannot read this node's topology";
    return PMIX_ERR_INIT;
  }
  b->topology_ = topo;
  hwloc_bitmap_t set = hwloc_bitmap_alloc();
  b->cpuset_ = set;
  if (hwloc_bitmap_list_sscanf(set, cpus.c_str()) != 0 || hwloc_bitmap_iszero(set)) {
    error = "PMIX_BIND_PROGRESS_THREAD: cannot read the CPU list '" + cpus + "'";
    return PMIX_ERR_BAD_PARAM;
  }
  // Bind to the CPUs of the list this node has; name the others.
  hwloc_bitmap_t missing = hwloc_bitmap_dup(set);
  hwloc_bitmap_andnot(missing, missing, hwloc_topology_get_allowed_cpuset(topo));
  if (!hwloc_bitmap_iszero(missing)) {
    char* text = nullptr;
    hwloc_bitmap_list_asprintf(&text, missing);
    b->missing_ = text == nullptr ? "?" : text;
    std::free(text);
  }
  hwloc_bitmap_free(missing);
  hwloc_bitmap_and(set, set, hwloc_topology_get_allowed_cpuset(topo));
  if (hwloc_bitmap_iszero(set)) {
    error = "PMIX_BIND_PROGRESS_THREAD: none of the CPUs " + cpus + " is available on this node";
    return PMIX_ERR_BAD_PARAM;
  }
  out = std::move(b);
  return PMIX_SUCCESS;
}

thread_binding::~thread_binding() {
  if (cpuset_ != nullptr) hwloc_bitmap_free(static_cast<hwloc_bitmap_t>(cpuset_));
  if (topology_ != nullptr) hwloc_topology_destroy(static_cast<hwloc_topology_t>(topology_));
}

bool thread_binding::bind_this_thread() {
  if (hwloc_set_cpubind(static_cast<hwloc_topology_t>(topology_),
                        static_cast<hwloc_const_bitmap_t>(cpuset_), HWLOC_CPUBIND_THREAD) == 0)
    return true;
  ++failures_;
  return false;
}

pmix_status_t topology_xml(const pmix_topology_t* given, std::string& xml, std::string& error) {
  make_hwloc_global();
  hwloc_topology_t topo = nullptr;
  bool owned = false;
  if (given != nullptr) {
    topo = static_cast<hwloc_topology_t>(given->topology);
  } else {
    // With the important I/O devices (network, GPUs, fabrics, as OpenPMIx
    // shares them): clients compute device distances from this topology.
    if (hwloc_topology_init(&topo) != 0 ||
        hwloc_topology_set_io_types_filter(topo, HWLOC_TYPE_FILTER_KEEP_IMPORTANT) != 0 ||
        hwloc_topology_load(topo) != 0) {
      if (topo != nullptr) hwloc_topology_destroy(topo);
      error = "hwloc cannot read this node's topology";
      return PMIX_ERR_INIT;
    }
    owned = true;
  }
  char* buffer = nullptr;
  int length = 0;
  const int rc = hwloc_topology_export_xmlbuffer(topo, &buffer, &length, 0);
  if (rc == 0 && buffer != nullptr) {
    xml.assign(buffer, length > 0 ? static_cast<std::size_t>(length - 1) : 0);
    hwloc_free_xmlbuffer(topo, buffer);
  }
  if (owned) hwloc_topology_destroy(topo);
  if (rc != 0) {
    error = "hwloc cannot export the topology as XML";
    return PMIX_ERR_INIT;
  }
  return PMIX_SUCCESS;
}

}  // namespace pmix::server
