// The process's own topology, for the topology, cpuset and locality calls
// (api/cpuset_api.cpp): loaded once, on first use, and kept for the life of
// the process (docs/local-functions.md, "Topology").
#pragma once

#include <string>

#include "api/hwloc_lazy.hpp"

namespace pmix::api {

// Where the process topology came from.
enum class topology_origin { none, server_xml, server_file, discovered };
const char* to_string(topology_origin origin);

// The topology (owned by the library: callers must not destroy it), or
// nullptr when hwloc cannot load one (logged). In a client or tool it is the
// one its server shares (the job's PMIX_HWLOC_XML_V2, else the file named by
// PMIX_TOPOLOGY_FILE); otherwise, or if that cannot be read, this node's,
// discovered with its important I/O devices.
hwloc_topology_t process_topology(const hwloc_calls& hw, topology_origin* origin = nullptr);

}  // namespace pmix::api
