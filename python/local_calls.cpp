#include "python/local_calls.hpp"

#include <pmix_server.h>

#include <cstdlib>
#include <cstring>
#include <string>

#include "python/values.hpp"

namespace pmixpy::local_calls {
namespace {

// A pmix_cpuset_t released with PMIx_Cpuset_destruct.
class owned_cpuset {
 public:
  owned_cpuset() { PMIX_CPUSET_CONSTRUCT(&cpuset_); }
  ~owned_cpuset() { PMIx_Cpuset_destruct(&cpuset_); }
  owned_cpuset(const owned_cpuset&) = delete;
  owned_cpuset& operator=(const owned_cpuset&) = delete;
  pmix_cpuset_t* get() { return &cpuset_; }

 private:
  pmix_cpuset_t cpuset_;
};

// The cpuset string of a cpuset dict (or of a str, taken as it is).
std::string cpuset_text(py::handle cpuset, const char* what) {
  if (PyUnicode_Check(cpuset.ptr()) || PyBytes_Check(cpuset.ptr())) return load_text(cpuset, what);
  if (!py::isinstance<py::dict>(cpuset))
    throw py::type_error(std::string{what} + ": expected a cpuset dict {'source': str, 'cpus': [str]}");
  auto d = py::reinterpret_borrow<py::dict>(cpuset);
  if (!d.contains("cpus"))
    throw py::type_error(std::string{what} +
                         ": 'cpus' missing: expected a cpuset dict {'source': str, 'cpus': [str]}");
  std::string text;
  py::object cpus = d["cpus"];
  if (PyUnicode_Check(cpus.ptr()) || PyBytes_Check(cpus.ptr())) {
    text = load_text(cpus, what);
  } else {
    for (auto part : as_list(cpus, what)) {
      if (!text.empty()) text += ',';
      text += load_text(part, what);
    }
  }
  if (text.find(':') == std::string::npos) {
    const auto source = d.contains("source") ? load_text(d["source"], what) : std::string{"hwloc"};
    text = source + ":" + text;
  }
  return text;
}

// A cpuset dict parsed into `out`: the C call's status.
pmix_status_t load_cpuset(py::handle cpuset, owned_cpuset& out, const char* what) {
  const auto text = cpuset_text(cpuset, what);
  py::gil_scoped_release nogil;
  return PMIx_Parse_cpuset_string(text.c_str(), out.get());
}

// The Python form of a cpuset: (rc, dict) from its string.
py::tuple unload_cpuset(pmix_cpuset_t& cpuset, py::object on_failure) {
  char* text = nullptr;
  pmix_status_t rc;
  {
    py::gil_scoped_release nogil;
    rc = PMIx_server_generate_cpuset_string(&cpuset, &text);
  }
  if (rc != PMIX_SUCCESS || text == nullptr) {
    std::free(text);
    return py::make_tuple(rc == PMIX_SUCCESS ? PMIX_ERROR : rc, on_failure);
  }
  py::list cpus;
  const std::string all{text};
  std::free(text);
  for (size_t start = 0;;) {
    const auto comma = all.find(',', start);
    cpus.append(unload_text(all.substr(start, comma - start).c_str()));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  py::dict out;
  out["source"] = unload_text(cpuset.source == nullptr ? "" : cpuset.source);
  out["cpus"] = cpus;
  return py::make_tuple(rc, out);
}

py::tuple rc_and_string(pmix_status_t rc, char* text) {
  py::object out = py::none();
  if (rc == PMIX_SUCCESS && text != nullptr) out = unload_text(text);
  std::free(text);
  return py::make_tuple(rc, out);
}

}  // namespace

pmix_status_t load_topology(pmix_topology_t& topo) {
  py::gil_scoped_release nogil;
  if (topo.topology != nullptr) PMIx_Topology_destruct(&topo);
  PMIX_TOPOLOGY_CONSTRUCT(&topo);
  return PMIx_Load_topology(&topo);
}

py::tuple get_relative_locality(py::handle locality1, py::handle locality2) {
  const auto first = load_text(locality1, "get_relative_locality loc1");
  const auto second = load_text(locality2, "get_relative_locality loc2");
  pmix_locality_t locality = 0;
  pmix_status_t rc;
  {
    py::gil_scoped_release nogil;
    rc = PMIx_Get_relative_locality(first.c_str(), second.c_str(), &locality);
  }
  py::list out;
  if (rc != PMIX_SUCCESS) return py::make_tuple(rc, out);
  // python3-pmix's order: each bit that is set, as its constant.
  for (const pmix_locality_t bit :
       {PMIX_LOCALITY_NONLOCAL, PMIX_LOCALITY_SHARE_HWTHREAD, PMIX_LOCALITY_SHARE_CORE,
        PMIX_LOCALITY_SHARE_L1CACHE, PMIX_LOCALITY_SHARE_L2CACHE, PMIX_LOCALITY_SHARE_L3CACHE,
        PMIX_LOCALITY_SHARE_PACKAGE, PMIX_LOCALITY_SHARE_NUMA, PMIX_LOCALITY_SHARE_NODE})
    if ((locality & bit) != 0) out.append(bit);
  if (py::len(out) == 0) out.append(PMIX_LOCALITY_NONLOCAL);
  return py::make_tuple(rc, out);
}

py::tuple parse_cpuset_string(py::handle text) {
  const auto s = load_text(text, "parse_cpuset_string csetstr");
  owned_cpuset cpuset;
  pmix_status_t rc;
  {
    py::gil_scoped_release nogil;
    rc = PMIx_Parse_cpuset_string(s.c_str(), cpuset.get());
  }
  if (rc != PMIX_SUCCESS) return py::make_tuple(rc, py::none());
  return unload_cpuset(*cpuset.get(), py::none());
}

py::tuple get_cpuset(int ref) {
  if (ref < 0 || ref > UINT8_MAX)
    throw py::value_error("get_cpuset ref: " + std::to_string(ref) + " is not a binding envelope");
  owned_cpuset cpuset;
  pmix_status_t rc;
  {
    py::gil_scoped_release nogil;
    rc = PMIx_Get_cpuset(cpuset.get(), static_cast<pmix_bind_envelope_t>(ref));
  }
  if (rc != PMIX_SUCCESS) return py::make_tuple(rc, py::dict());
  return unload_cpuset(*cpuset.get(), py::dict());
}

py::tuple compute_distances(pmix_topology_t& topo, py::handle cpuset, py::handle dicts) {
  owned_cpuset set;
  const bool given = !cpuset.is_none();
  if (given) {
    const auto rc = load_cpuset(cpuset, set, "compute_distances cpuset");
    if (rc != PMIX_SUCCESS) return py::make_tuple(rc, py::list());
  }
  info_array info{dicts, "compute_distances dicts"};
  if (topo.topology == nullptr) {
    const auto rc = load_topology(topo);
    if (rc != PMIX_SUCCESS) return py::make_tuple(rc, py::list());
  }
  pmix_device_distance_t* distances = nullptr;
  size_t ndist = 0;
  pmix_status_t rc;
  {
    py::gil_scoped_release nogil;
    rc = PMIx_Compute_distances(&topo, given ? set.get() : nullptr, info.data(), info.size(), &distances,
                                &ndist);
  }
  py::list out;
  for (size_t k = 0; k < ndist && distances != nullptr; ++k) {
    const auto& d = distances[k];
    py::dict entry;
    entry["uuid"] = unload_text(d.uuid == nullptr ? "" : d.uuid);
    entry["osname"] = unload_text(d.osname == nullptr ? "" : d.osname);
    entry["type"] = d.type;
    entry["mindist"] = d.mindist;
    entry["maxdist"] = d.maxdist;
    out.append(entry);
  }
  if (distances != nullptr) PMIX_DEVICE_DIST_FREE(distances, ndist);
  return py::make_tuple(rc, out);
}

py::tuple generate_cpuset_string(py::handle cpuset) {
  owned_cpuset set;
  auto rc = load_cpuset(cpuset, set, "generate_cpuset_string cpuset");
  if (rc != PMIX_SUCCESS) return py::make_tuple(rc, py::none());
  char* text = nullptr;
  {
    py::gil_scoped_release nogil;
    rc = PMIx_server_generate_cpuset_string(set.get(), &text);
  }
  return rc_and_string(rc, text);
}

py::tuple generate_locality_string(py::handle cpuset) {
  owned_cpuset set;
  auto rc = load_cpuset(cpuset, set, "generate_locality_string cpuset");
  if (rc != PMIX_SUCCESS) return py::make_tuple(rc, py::none());
  char* text = nullptr;
  {
    py::gil_scoped_release nogil;
    rc = PMIx_server_generate_locality_string(set.get(), &text);
  }
  return rc_and_string(rc, text);
}

}  // namespace pmixpy::local_calls
