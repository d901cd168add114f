#include "api/local_topology.hpp"

#include <pmix.h>

#include <mutex>

#include "api/library.hpp"
#include "common/log.hpp"

namespace pmix::api {
namespace {

// What the server shares with the caller's job, if the caller is a client
// or a tool with a session: from its local store only, never asking.
void shared_topology(std::string& xml, std::string& file) {
  auto s = current_session();
  if (!s) return;
  const proc_id job{s->self().nspace, rank_wildcard};
  value v;
  using lookup = client::session::lookup;
  if (s->resolve_local(job, PMIX_HWLOC_XML_V2, true, v) == lookup::found && v.as_string() != nullptr &&
      !v.as_string()->empty()) {
    xml = *v.as_string();
    return;
  }
  v = value{};
  if (s->resolve_local(job, PMIX_TOPOLOGY_FILE, true, v) == lookup::found && v.as_string() != nullptr)
    file = *v.as_string();
}

// A loaded topology, from XML (a buffer or a file) or by discovery; nullptr
// when hwloc refuses.
hwloc_topology_t load(const hwloc_calls& hw, const std::string& xml, const std::string& file) {
  hwloc_topology_t t = nullptr;
  if (hw.topology_init(&t) != 0) return nullptr;
  const bool imported = !xml.empty() || !file.empty();
  // Imported: keep every I/O object the exporter kept; discovered: the
  // important ones (PCI devices with OS devices: network, GPUs, fabrics).
  hw.topology_set_io_types_filter(t,
                                  imported ? HWLOC_TYPE_FILTER_KEEP_ALL : HWLOC_TYPE_FILTER_KEEP_IMPORTANT);
  int rc = 0;
  if (!xml.empty()) {
    rc = hw.topology_set_xmlbuffer(t, xml.c_str(), static_cast<int>(xml.size() + 1));
  } else if (!file.empty()) {
    rc = hw.topology_set_xml(t, file.c_str());
  }
  if (rc == 0) rc = hw.topology_load(t);
  if (rc != 0) {
    hw.topology_destroy(t);
    return nullptr;
  }
  return t;
}

}  // namespace

const char* to_string(topology_origin origin) {
  switch (origin) {
    case topology_origin::server_xml: return "the server's PMIX_HWLOC_XML_V2";
    case topology_origin::server_file: return "the server's PMIX_TOPOLOGY_FILE";
    case topology_origin::discovered: return "discovery";
    default: return "nowhere";
  }
}

hwloc_topology_t process_topology(const hwloc_calls& hw, topology_origin* origin) {
  static std::mutex mutex;
  static hwloc_topology_t topology = nullptr;
  static topology_origin from = topology_origin::none;
  std::lock_guard<std::mutex> guard{mutex};
  if (topology == nullptr) {
    std::string xml, file;
    shared_topology(xml, file);
    if (!xml.empty() || !file.empty()) {
      topology = load(hw, xml, file);
      if (topology != nullptr) {
        from = xml.empty() ? topology_origin::server_file : topology_origin::server_xml;
      } else {
        log::warning("topology", "cannot read the topology the server shares (",
                     xml.empty() ? file : std::string{"PMIX_HWLOC_XML_V2"}, "): discovering this node's");
      }
    }
    if (topology == nullptr) {
      topology = load(hw, {}, {});
      from = topology_origin::discovered;
    }
    if (topology == nullptr) {
      log::error("topology", "hwloc cannot read this node's topology");
      from = topology_origin::none;
    } else {
      log::info("topology", "process topology from ", to_string(from));
    }
  }
  if (origin != nullptr) *origin = from;
  return topology;
}

}  // namespace pmix::api
