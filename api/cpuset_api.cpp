// Cpusets, topologies and locality, computed in the calling process:
// PMIx_Get_cpuset, PMIx_Parse_cpuset_string, PMIx_Cpuset_destruct (and the
// cpuset arrays), PMIx_server_generate_cpuset,
// PMIx_Load_topology, PMIx_Get_relative_locality, PMIx_Compute_distances(_nb),
// PMIx_server_generate_cpuset_string and PMIx_server_generate_locality_string.
// hwloc is loaded on the first call that needs it (api/hwloc_lazy.hpp);
// formats and choices: docs/local-functions.md.
#include <dirent.h>
#include <pmix.h>
#include <pmix_server.h>
#include <sched.h>
#include <strings.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "api/hwloc_lazy.hpp"
#include "api/library.hpp"
#include "api/local_topology.hpp"
#include "api/server_stub.hpp"
#include "api/values_copy.hpp"
#include "common/log.hpp"
#include "common/progress.hpp"

namespace pmix::api {
namespace {

// hwloc, loaded on the first call that needs it; nullptr (and a log line
// naming the call) when it cannot be.
const hwloc_calls* need_hwloc(const char* call) {
  const auto* hw = load_hwloc();
  if (hw == nullptr) log::error("api", call, ": ", hwloc_load_error(), ": not supported without hwloc");
  return hw;
}

// ----- Bindings --------------------------------------------------------------

// The CPUs thread `tid` (0: the calling thread) may run on, into `out`.
bool add_affinity(const hwloc_calls& hw, pid_t tid, hwloc_bitmap_t out) {
  long cpus = sysconf(_SC_NPROCESSORS_CONF);
  std::size_t count = cpus > 1024 ? static_cast<std::size_t>(cpus) : 1024;
  for (int attempt = 0; attempt < 8; ++attempt, count *= 2) {
    cpu_set_t* set = CPU_ALLOC(count);
    if (set == nullptr) return false;
    const std::size_t bytes = CPU_ALLOC_SIZE(count);
    if (sched_getaffinity(tid, bytes, set) == 0) {
      for (std::size_t c = 0; c < count; ++c)
        if (CPU_ISSET_S(c, bytes, set)) hw.bitmap_set(out, static_cast<unsigned>(c));
      CPU_FREE(set);
      return true;
    }
    const int error = errno;
    CPU_FREE(set);
    if (error != EINVAL) return false;  // EINVAL: the kernel's mask is larger
  }
  return false;
}

// The binding of the process (the union of its threads') or of the calling
// thread, as an hwloc bitmap the caller frees; nullptr on failure.
hwloc_bitmap_t binding(const hwloc_calls& hw, pmix_bind_envelope_t ref) {
  hwloc_bitmap_t set = hw.bitmap_alloc();
  if (set == nullptr) return nullptr;
  bool ok = false;
  if (ref == PMIX_CPUBIND_THREAD) {
    ok = add_affinity(hw, 0, set);
  } else if (DIR* tasks = opendir("/proc/self/task")) {
    while (dirent* e = readdir(tasks)) {
      const long tid = std::strtol(e->d_name, nullptr, 10);
      // A thread that ended since the listing is simply not counted.
      if (tid > 0 && add_affinity(hw, static_cast<pid_t>(tid), set)) ok = true;
    }
    closedir(tasks);
  }
  if (!ok) ok = add_affinity(hw, 0, set);  // no /proc: the calling thread
  if (!ok) {
    hw.bitmap_free(set);
    return nullptr;
  }
  return set;
}

char* dup_text(const std::string& s) { return values::dup_string(s.c_str()); }

// ----- Locality strings --------------------------------------------------------

// The tokens of a locality string, in the order OpenPMIx writes them, and
// the bit each contributes to a relative locality.
struct level {
  const char* prefix;
  pmix_locality_t bit;
};
constexpr level kLevels[] = {
    {"NM", PMIX_LOCALITY_SHARE_NUMA},     {"SK", PMIX_LOCALITY_SHARE_PACKAGE},
    {"L3", PMIX_LOCALITY_SHARE_L3CACHE},  {"L2", PMIX_LOCALITY_SHARE_L2CACHE},
    {"L1", PMIX_LOCALITY_SHARE_L1CACHE},  {"CR", PMIX_LOCALITY_SHARE_CORE},
    {"HT", PMIX_LOCALITY_SHARE_HWTHREAD},
};

const char* prefix_of(hwloc_obj_type_t type) {
  switch (type) {
    case HWLOC_OBJ_PACKAGE: return "SK";
    case HWLOC_OBJ_L3CACHE: return "L3";
    case HWLOC_OBJ_L2CACHE: return "L2";
    case HWLOC_OBJ_L1CACHE: return "L1";
    case HWLOC_OBJ_CORE: return "CR";
    case HWLOC_OBJ_PU: return "HT";
    case HWLOC_OBJ_NUMANODE: return "NM";
    default: return nullptr;
  }
}

// "<prefix><indices>" of the objects at `depth` that share a CPU with
// `cpus` (logical indices, as an hwloc list), or "" when none does.
std::string token(const hwloc_calls& hw, hwloc_topology_t topo, int depth, const char* prefix,
                  hwloc_const_bitmap_t cpus) {
  hwloc_bitmap_t hits = hw.bitmap_alloc();
  const unsigned width = hw.get_nbobjs_by_depth(topo, depth);
  for (unsigned w = 0; w < width; ++w) {
    hwloc_obj_t obj = hw.get_obj_by_depth(topo, depth, w);
    if (obj != nullptr && obj->cpuset != nullptr && hw.bitmap_intersects(obj->cpuset, cpus))
      hw.bitmap_set(hits, w);
  }
  std::string out;
  char* list = nullptr;
  if (!hw.bitmap_iszero(hits) && hw.bitmap_list_asprintf(&list, hits) >= 0 && list != nullptr)
    out = prefix + std::string{list};
  std::free(list);
  hw.bitmap_free(hits);
  return out;
}

std::string locality_of(const hwloc_calls& hw, hwloc_topology_t topo, hwloc_const_bitmap_t cpus) {
  std::string out;
  auto add = [&out](const std::string& t) {
    if (!t.empty()) out += (out.empty() ? "" : ":") + t;
  };
  const int depth = hw.topology_get_depth(topo);
  for (int d = 1; d < depth; ++d) {
    const char* prefix = prefix_of(hw.get_depth_type(topo, d));
    if (prefix != nullptr) add(token(hw, topo, d, prefix, cpus));
  }
  add(token(hw, topo, HWLOC_TYPE_DEPTH_NUMANODE, "NM", cpus));
  return out;
}

// A list of indices ("0-3,5"), as closed intervals; false if malformed.
using intervals = std::vector<std::pair<unsigned long, unsigned long>>;

bool parse_number(std::string_view& s, unsigned long& out) {
  std::size_t k = 0;
  out = 0;
  while (k < s.size() && s[k] >= '0' && s[k] <= '9') {
    if (out > (ULONG_MAX - 9) / 10) return false;
    out = out * 10 + static_cast<unsigned long>(s[k] - '0');
    ++k;
  }
  s.remove_prefix(k);
  return k > 0;
}

bool parse_list(std::string_view s, intervals& out) {
  out.clear();
  while (!s.empty()) {
    unsigned long first = 0;
    unsigned long last = 0;
    if (!parse_number(s, first)) return false;
    last = first;
    if (!s.empty() && s.front() == '-') {
      s.remove_prefix(1);
      if (!parse_number(s, last) || last < first) return false;
    }
    out.emplace_back(first, last);
    if (!s.empty()) {
      if (s.front() != ',') return false;
      s.remove_prefix(1);
      if (s.empty()) return false;
    }
  }
  return true;
}

bool intersect(const intervals& a, const intervals& b) {
  for (const auto& x : a)
    for (const auto& y : b)
      if (x.first <= y.second && y.first <= x.second) return true;
  return false;
}

struct locality_token {
  const level* kind;
  intervals where;
};

// The tokens of a locality string, with or without OpenPMIx's "hwloc:"
// prefix; false (and `error`) if one is not "<level><list>".
bool parse_locality(const char* text, std::vector<locality_token>& out, std::string& error) {
  std::string_view s{text};
  if (s.size() >= 6 && strncasecmp(text, "hwloc:", 6) == 0) s.remove_prefix(6);
  while (!s.empty()) {
    const auto colon = s.find(':');
    const std::string_view t = s.substr(0, colon);
    s = colon == std::string_view::npos ? std::string_view{} : s.substr(colon + 1);
    if (t.empty()) continue;
    const level* kind = nullptr;
    for (const auto& l : kLevels)
      if (t.size() > 2 && t.compare(0, 2, l.prefix) == 0) kind = &l;
    locality_token tok{kind, {}};
    if (kind == nullptr || !parse_list(t.substr(2), tok.where)) {
      error = std::string{t};
      return false;
    }
    out.push_back(std::move(tok));
  }
  return true;
}

// ----- Device distances --------------------------------------------------------

const char* info_value(hwloc_obj_t obj, const char* name) {
  for (unsigned k = 0; k < obj->infos_count; ++k)
    if (obj->infos[k].name != nullptr && strcasecmp(obj->infos[k].name, name) == 0)
      return obj->infos[k].value;
  return nullptr;
}

std::size_t count_colons(const char* s) {
  std::size_t n = 0;
  for (; *s != '\0'; ++s) n += *s == ':' ? 1 : 0;
  return n;
}

// The device's identifier in OpenPMIx's forms, or "" for a device that has
// none (it is then not reported).
std::string device_uuid(hwloc_obj_t dev, pmix_device_type_t type) {
  if (type == PMIX_DEVTYPE_NETWORK) {
    const char* address = info_value(dev, "Address");
    if (address == nullptr) return {};
    const auto colons = count_colons(address);
    if (colons == 5) return std::string{"ipv4://"} + address;
    if (colons == 19) return std::string{"ipv6://"} + address;
    return {};
  }
  if (type == PMIX_DEVTYPE_OPENFABRICS) {
    const char* node = info_value(dev, "NodeGUID");
    const char* image = info_value(dev, "SysImageGUID");
    if (node == nullptr || image == nullptr) return {};
    return std::string{"fab://"} + node + "::" + image;
  }
  if (type == PMIX_DEVTYPE_GPU) {
    char host[256] = {};
    if (gethostname(host, sizeof host - 1) != 0) std::strcpy(host, "localhost");
    return std::string{"gpu://"} + host + "::" + dev->name;
  }
  return {};
}

pmix_device_type_t device_type(hwloc_obj_t dev) {
  switch (dev->attr->osdev.type) {
    case HWLOC_OBJ_OSDEV_NETWORK: return PMIX_DEVTYPE_NETWORK;
    case HWLOC_OBJ_OSDEV_OPENFABRICS: return PMIX_DEVTYPE_OPENFABRICS;
    case HWLOC_OBJ_OSDEV_GPU:
      // "cardN" is the auxiliary node of a GPU also listed by its real name.
      return dev->name != nullptr && strncasecmp(dev->name, "card", 4) == 0 ? 0 : PMIX_DEVTYPE_GPU;
    default: return 0;  // block, DMA and coprocessor devices: no distance form
  }
}

hwloc_obj_t common_ancestor(hwloc_obj_t a, hwloc_obj_t b) {
  while (a != nullptr && b != nullptr && a != b) {
    if (a->depth > b->depth) {
      a = a->parent;
    } else if (b->depth > a->depth) {
      b = b->parent;
    } else {
      a = a->parent;
      b = b->parent;
    }
  }
  return a == b ? a : nullptr;
}

struct distance_request {
  pmix_device_type_t types = 0;
  std::vector<std::string> ids;
};

pmix_status_t read_request(const pmix_info_t info[], size_t ninfo, distance_request& out) {
  if (ninfo > 0 && info == nullptr) return PMIX_ERR_BAD_PARAM;
  for (size_t k = 0; k < ninfo; ++k) {
    if (PMIX_CHECK_KEY(&info[k], PMIX_DEVICE_TYPE)) {
      if (info[k].value.type != PMIX_DEVTYPE) return PMIX_ERR_TYPE_MISMATCH;
      out.types |= info[k].value.data.devtype;
    } else if (PMIX_CHECK_KEY(&info[k], PMIX_DEVICE_ID)) {
      if (info[k].value.type != PMIX_STRING || info[k].value.data.string == nullptr)
        return PMIX_ERR_TYPE_MISMATCH;
      out.ids.emplace_back(info[k].value.data.string);
    }
  }
  // No type named: every type with a distance form.
  if (out.types == 0) out.types = PMIX_DEVTYPE_NETWORK | PMIX_DEVTYPE_OPENFABRICS | PMIX_DEVTYPE_GPU;
  return PMIX_SUCCESS;
}

// The smallest object holding every CPU of `cpus`, or nullptr when only the
// whole machine does.
hwloc_obj_t smallest_holder(const hwloc_calls& hw, hwloc_topology_t topo, hwloc_const_bitmap_t cpus) {
  const int depth = hw.topology_get_depth(topo);
  hwloc_obj_t where = nullptr;
  for (int d = 1; d < depth; ++d) {
    hwloc_obj_t found = nullptr;
    const unsigned width = hw.get_nbobjs_by_depth(topo, d);
    for (unsigned w = 0; w < width && found == nullptr; ++w) {
      hwloc_obj_t obj = hw.get_obj_by_depth(topo, d, w);
      if (obj != nullptr && obj->cpuset != nullptr && hw.bitmap_isincluded(cpus, obj->cpuset)) found = obj;
    }
    if (found == nullptr) break;
    where = found;
  }
  return where;
}

// The entry for one device, or false when it is not one the request names.
bool device_entry(hwloc_obj_t dev, pmix_device_type_t type, hwloc_obj_t where, int depth,
                  const distance_request& req, pmix_device_distance_t& out) {
  const std::string uuid = device_uuid(dev, type);
  if (uuid.empty()) return false;
  if (!req.ids.empty()) {
    bool named = false;
    for (const auto& id : req.ids)
      named = named || strcasecmp(id.c_str(), dev->name) == 0 || strcasecmp(id.c_str(), uuid.c_str()) == 0;
    if (!named) return false;
  }
  // I/O objects have no cpuset: measure from the normal object they hang off.
  hwloc_obj_t anchor = dev;
  while (anchor != nullptr && anchor->cpuset == nullptr) anchor = anchor->parent;
  hwloc_obj_t ancestor = anchor == nullptr ? nullptr : common_ancestor(where, anchor);
  if (ancestor == nullptr) return false;
  // The deeper the shared object, the closer; sharing only the machine puts
  // a device beyond every level the cpuset's own object spans.
  const unsigned dist = ancestor->depth == 0 ? static_cast<unsigned>(where->depth + depth)
                                             : static_cast<unsigned>(depth - ancestor->depth);
  PMIX_DEVICE_DIST_CONSTRUCT(&out);
  out.uuid = dup_text(uuid);
  out.osname = values::dup_string(dev->name);
  out.type = type;
  out.mindist = dist;
  out.maxdist = dist;
  return true;
}

// The distances from `cpus` to the devices of `topo`, computed as OpenPMIx
// 4.2.2 does (docs/local-functions.md, "Device distances").
pmix_status_t distances(const hwloc_calls& hw, hwloc_topology_t topo, hwloc_const_bitmap_t cpus,
                        const distance_request& req, std::vector<pmix_device_distance_t>& out) {
  hwloc_obj_t where = smallest_holder(hw, topo, cpus);
  if (where == nullptr) {
    log::warning("topology", "PMIx_Compute_distances: only the whole machine holds the cpuset");
    return PMIX_ERR_NOT_AVAILABLE;
  }
  const int depth = hw.topology_get_depth(topo);
  const unsigned ndev = hw.get_nbobjs_by_depth(topo, HWLOC_TYPE_DEPTH_OS_DEVICE);
  // By type (GPUs, network, fabrics, as OpenPMIx lists them), then in the
  // topology's order.
  for (const pmix_device_type_t type : {PMIX_DEVTYPE_GPU, PMIX_DEVTYPE_NETWORK, PMIX_DEVTYPE_OPENFABRICS}) {
    if ((req.types & type) == 0) continue;
    for (unsigned k = 0; k < ndev; ++k) {
      hwloc_obj_t dev = hw.get_obj_by_depth(topo, HWLOC_TYPE_DEPTH_OS_DEVICE, k);
      pmix_device_distance_t d;
      if (dev != nullptr && dev->name != nullptr && device_type(dev) == type &&
          device_entry(dev, type, where, depth, req, d))
        out.push_back(d);
    }
  }
  return out.empty() ? PMIX_ERR_NOT_FOUND : PMIX_SUCCESS;
}

pmix_device_distance_t* to_array(std::vector<pmix_device_distance_t>& list) {
  if (list.empty()) return nullptr;
  auto* array =
      static_cast<pmix_device_distance_t*>(std::calloc(list.size(), sizeof(pmix_device_distance_t)));
  if (array != nullptr) std::memcpy(array, list.data(), list.size() * sizeof(pmix_device_distance_t));
  return array;
}

void free_list(std::vector<pmix_device_distance_t>& list) {
  for (auto& d : list) PMIX_DEVICE_DIST_DESTRUCT(&d);
  list.clear();
}

// Validates the arguments and computes; the common part of both forms.
pmix_status_t compute(const char* call, pmix_topology_t* topo, pmix_cpuset_t* cpuset,
                      const pmix_info_t info[], size_t ninfo, std::vector<pmix_device_distance_t>& out) {
  distance_request req;
  if (const auto rc = read_request(info, ninfo, req); rc != PMIX_SUCCESS) {
    log::error("api", call, ": bad directives (", PMIx_Error_string(rc), ")");
    return rc;
  }
  if ((topo != nullptr && topo->source == nullptr) || (cpuset != nullptr && cpuset->source == nullptr)) {
    log::error("api", call, ": a ", topo != nullptr && topo->source == nullptr ? "topology" : "cpuset",
               " without a source");
    return PMIX_ERR_BAD_PARAM;
  }
  if ((topo != nullptr && !is_hwloc_source(topo->source)) ||
      (cpuset != nullptr && !is_hwloc_source(cpuset->source))) {
    log::warning("api", call, ": only hwloc topologies and cpusets are supported");
    return PMIX_ERR_NOT_SUPPORTED;
  }
  if ((topo != nullptr && topo->topology == nullptr) || (cpuset != nullptr && cpuset->bitmap == nullptr)) {
    log::error("api", call, ": an empty ",
               topo != nullptr && topo->topology == nullptr ? "topology" : "cpuset");
    return PMIX_ERR_BAD_PARAM;
  }
  const auto* hw = need_hwloc(call);
  if (hw == nullptr) return PMIX_ERR_NOT_SUPPORTED;
  hwloc_topology_t t =
      topo != nullptr ? static_cast<hwloc_topology_t>(topo->topology) : process_topology(*hw);
  if (t == nullptr) return PMIX_ERR_NOT_AVAILABLE;
  std::unique_ptr<hwloc_bitmap_s, void (*)(hwloc_bitmap_t)> own{nullptr, hw->bitmap_free};
  hwloc_const_bitmap_t cpus = nullptr;
  if (cpuset != nullptr) {
    cpus = static_cast<hwloc_const_bitmap_t>(cpuset->bitmap);
  } else {
    own.reset(binding(*hw, PMIX_CPUBIND_PROCESS));
    cpus = own.get();
  }
  if (cpus == nullptr || hw->bitmap_iszero(cpus)) {
    log::error("api", call, ": the cpuset is empty");
    return PMIX_ERR_BAD_PARAM;
  }
  return distances(*hw, t, cpus, req, out);
}

void release_distances(void* cbdata) {
  auto* list = static_cast<std::vector<pmix_device_distance_t>*>(cbdata);
  free_list(*list);
  delete list;
}

void run_posted(void* arg) {
  std::unique_ptr<std::function<void()>> task{static_cast<std::function<void()>*>(arg)};
  (*task)();
}

// Runs `task` on a library thread: the server runtime's in a server, the
// progress thread in a client or tool; inline (marked as a library thread)
// in a process that has neither.
void deliver_on_library_thread(std::function<void()> task) {
  if (const auto* rt = server_runtime(false); rt != nullptr && rt->running(nullptr) != 0) {
    auto* t = new std::function<void()>(std::move(task));
    if (rt->post(run_posted, t) == PMIX_SUCCESS) return;
    task = std::move(*t);
    delete t;
  } else if (auto s = current_session()) {
    s->post(std::move(task));
    return;
  }
  progress::scope in_callback;
  task();
}


// "<source>:<cpu list>" into *cpuset, for `caller` (named in the log).
pmix_status_t parse_cpuset(const char* cpuset_string, pmix_cpuset_t* cpuset, const char* caller) {
  if (cpuset_string == nullptr || cpuset == nullptr) {
    log::error("api", caller, ": NULL ", cpuset == nullptr ? "cpuset" : "string");
    return PMIX_ERR_BAD_PARAM;
  }
  const char* colon = std::strchr(cpuset_string, ':');
  if (colon == nullptr) {
    log::error("api", caller, ": '", cpuset_string, "' is not <source>:<cpus>");
    return PMIX_ERR_BAD_PARAM;
  }
  if (colon - cpuset_string != 5 || strncasecmp(cpuset_string, "hwloc", 5) != 0) {
    log::warning("api", caller, ": source of '", cpuset_string,
                 "' is not supported (only hwloc)");
    return PMIX_ERR_NOT_SUPPORTED;
  }
  intervals check;
  if (!parse_list(colon + 1, check)) {
    log::error("api", caller, ": '", colon + 1, "' is not a CPU list");
    return PMIX_ERR_BAD_PARAM;
  }
  const auto* hw = need_hwloc(caller);
  if (hw == nullptr) return PMIX_ERR_NOT_SUPPORTED;
  hwloc_bitmap_t set = hw->bitmap_alloc();
  char* source = values::dup_string("hwloc");
  if (set == nullptr || source == nullptr || hw->bitmap_list_sscanf(set, colon + 1) != 0) {
    if (set != nullptr) hw->bitmap_free(set);
    std::free(source);
    return set == nullptr || source == nullptr ? PMIX_ERR_NOMEM : PMIX_ERR_BAD_PARAM;
  }
  cpuset->source = source;
  cpuset->bitmap = set;
  return PMIX_SUCCESS;
}

}  // namespace
}  // namespace pmix::api

using namespace pmix;
using pmix::api::hwloc_calls;

extern "C" {

PMIX_EXPORT pmix_status_t PMIx_Get_cpuset(pmix_cpuset_t* cpuset, pmix_bind_envelope_t ref) {
  if (cpuset == nullptr) {
    log::error("api", "PMIx_Get_cpuset: NULL cpuset");
    return PMIX_ERR_BAD_PARAM;
  }
  if (ref != PMIX_CPUBIND_PROCESS && ref != PMIX_CPUBIND_THREAD) {
    log::error("api", "PMIx_Get_cpuset: unknown envelope ", unsigned{ref});
    return PMIX_ERR_BAD_PARAM;
  }
  if (cpuset->source != nullptr && !api::is_hwloc_source(cpuset->source)) {
    log::warning("api", "PMIx_Get_cpuset: source '", cpuset->source, "' is not supported (only hwloc)");
    return PMIX_ERR_NOT_SUPPORTED;
  }
  const auto* hw = api::need_hwloc("PMIx_Get_cpuset");
  if (hw == nullptr) return PMIX_ERR_NOT_SUPPORTED;
  hwloc_bitmap_t set = api::binding(*hw, ref);
  if (set == nullptr) {
    log::error("api", "PMIx_Get_cpuset: cannot read the binding (", std::strerror(errno), ")");
    return PMIX_ERR_NOT_AVAILABLE;
  }
  if (cpuset->source == nullptr) {
    cpuset->source = values::dup_string("hwloc");
    if (cpuset->source == nullptr) {
      hw->bitmap_free(set);
      return PMIX_ERR_NOMEM;
    }
  }
  cpuset->bitmap = set;
  return PMIX_SUCCESS;
}

PMIX_EXPORT void PMIx_Cpuset_destruct(pmix_cpuset_t* cpuset) {
  if (cpuset == nullptr || !api::is_hwloc_source(cpuset->source)) return;  // not ours to release
  if (cpuset->bitmap != nullptr) {
    // A bitmap of source hwloc exists only if hwloc was loaded.
    if (const auto* hw = api::loaded_hwloc()) hw->bitmap_free(static_cast<hwloc_bitmap_t>(cpuset->bitmap));
  }
  std::free(cpuset->source);
  cpuset->source = nullptr;
  cpuset->bitmap = nullptr;
}

PMIX_EXPORT pmix_status_t PMIx_Parse_cpuset_string(const char* cpuset_string, pmix_cpuset_t* cpuset) {
  return api::parse_cpuset(cpuset_string, cpuset, "PMIx_Parse_cpuset_string");
}

// The server's name for the same parse (OpenPMIx 6.0; OpenPMIx answers a
// source other than hwloc with an internal code, we with
// PMIX_ERR_NOT_SUPPORTED, as PMIx_Parse_cpuset_string does).
PMIX_EXPORT pmix_status_t PMIx_server_generate_cpuset(const char* cpuset_string, pmix_cpuset_t* cpuset) {
  return api::parse_cpuset(cpuset_string, cpuset, "PMIx_server_generate_cpuset");
}

// Cpuset arrays (OpenPMIx 4.2.9): _free destructs each, as above.
PMIX_EXPORT void PMIx_Cpuset_construct(pmix_cpuset_t* c) { PMIX_CPUSET_CONSTRUCT(c); }
PMIX_EXPORT pmix_cpuset_t* PMIx_Cpuset_create(size_t n) {
  pmix_cpuset_t* c;
  PMIX_CPUSET_CREATE(c, n);
  return c;
}
PMIX_EXPORT void PMIx_Cpuset_free(pmix_cpuset_t* c, size_t n) {
  for (size_t k = 0; c != nullptr && k < n; ++k) PMIx_Cpuset_destruct(&c[k]);
  std::free(c);
}

PMIX_EXPORT pmix_status_t PMIx_server_generate_cpuset_string(const pmix_cpuset_t* cpuset,
                                                             char** cpuset_string) {
  if (cpuset_string == nullptr) {
    log::error("api", "PMIx_server_generate_cpuset_string: NULL output");
    return PMIX_ERR_BAD_PARAM;
  }
  *cpuset_string = nullptr;
  if (cpuset == nullptr || cpuset->bitmap == nullptr) {
    log::error("api",
               "PMIx_server_generate_cpuset_string: ", cpuset == nullptr ? "NULL cpuset" : "empty cpuset");
    return PMIX_ERR_BAD_PARAM;
  }
  const hwloc_calls* hw = api::is_hwloc_source(cpuset->source) ? api::loaded_hwloc() : nullptr;
  if (hw == nullptr) {
    log::warning("api", "PMIx_server_generate_cpuset_string: source '",
                 cpuset->source == nullptr ? "(null)" : cpuset->source, "' is not supported (only hwloc)");
    return PMIX_ERR_NOT_SUPPORTED;
  }
  char* list = nullptr;
  if (hw->bitmap_list_asprintf(&list, static_cast<hwloc_const_bitmap_t>(cpuset->bitmap)) < 0 ||
      list == nullptr)
    return PMIX_ERR_NOMEM;
  *cpuset_string = api::dup_text(std::string{"hwloc:"} + list);
  std::free(list);
  return *cpuset_string == nullptr ? PMIX_ERR_NOMEM : PMIX_SUCCESS;
}

PMIX_EXPORT pmix_status_t PMIx_server_generate_locality_string(const pmix_cpuset_t* cpuset, char** locality) {
  if (cpuset == nullptr || locality == nullptr) {
    log::error("api", "PMIx_server_generate_locality_string: NULL ", cpuset == nullptr ? "cpuset" : "output");
    return PMIX_ERR_BAD_PARAM;
  }
  *locality = nullptr;
  if (!api::is_hwloc_source(cpuset->source)) {
    log::warning("api", "PMIx_server_generate_locality_string: source '",
                 cpuset->source == nullptr ? "(null)" : cpuset->source, "' is not supported (only hwloc)");
    return PMIX_ERR_NOT_SUPPORTED;
  }
  const auto* hw = api::need_hwloc("PMIx_server_generate_locality_string");
  if (hw == nullptr) return PMIX_ERR_NOT_SUPPORTED;
  // An unbound process (no bitmap, or every CPU) has no locality: NULL.
  const auto cpus = static_cast<hwloc_const_bitmap_t>(cpuset->bitmap);
  if (cpus == nullptr || hw->bitmap_isfull(cpus)) return PMIX_SUCCESS;
  hwloc_topology_t topo = api::process_topology(*hw);
  if (topo == nullptr) return PMIX_ERR_NOT_AVAILABLE;
  const std::string text = api::locality_of(*hw, topo, cpus);
  if (text.empty()) return PMIX_SUCCESS;  // none of its CPUs is on this node
  *locality = api::dup_text(text);
  return *locality == nullptr ? PMIX_ERR_NOMEM : PMIX_SUCCESS;
}

PMIX_EXPORT pmix_status_t PMIx_Get_relative_locality(const char* locality1, const char* locality2,
                                                     pmix_locality_t* locality) {
  if (locality1 == nullptr || locality2 == nullptr || locality == nullptr) {
    log::error("api", "PMIx_Get_relative_locality: NULL ",
               locality == nullptr ? "output" : "locality string");
    return PMIX_ERR_BAD_PARAM;
  }
  std::vector<api::locality_token> first, second;
  std::string bad;
  if (!api::parse_locality(locality1, first, bad) || !api::parse_locality(locality2, second, bad)) {
    log::error("api", "PMIx_Get_relative_locality: '", bad,
               "' is not a locality (<level><cpus>, level one of NM SK L3 L2 L1 CR HT)");
    return PMIX_ERR_BAD_PARAM;
  }
  // Both are on this node; each level whose first entries share an index is shared too.
  pmix_locality_t result = PMIX_LOCALITY_SHARE_NODE;
  for (const auto& a : first) {
    for (const auto& b : second) {
      if (a.kind != b.kind) continue;
      if (api::intersect(a.where, b.where)) result |= a.kind->bit;
      break;
    }
  }
  *locality = result;
  return PMIX_SUCCESS;
}

PMIX_EXPORT pmix_status_t PMIx_Load_topology(pmix_topology_t* topo) {
  if (topo == nullptr) {
    log::error("api", "PMIx_Load_topology: NULL topology");
    return PMIX_ERR_BAD_PARAM;
  }
  if (topo->source != nullptr && !api::is_hwloc_source(topo->source)) {
    log::warning("api", "PMIx_Load_topology: source '", topo->source, "' is not supported (only hwloc)");
    return PMIX_ERR_NOT_SUPPORTED;
  }
  const auto* hw = api::need_hwloc("PMIx_Load_topology");
  if (hw == nullptr) return PMIX_ERR_NOT_SUPPORTED;
  hwloc_topology_t base = api::process_topology(*hw);
  if (base == nullptr) return PMIX_ERR_NOT_AVAILABLE;
  // The caller's own copy: PMIx_Topology_destruct releases it and nothing else.
  hwloc_topology_t copy = nullptr;
  if (hw->topology_dup(&copy, base) != 0) return PMIX_ERR_NOMEM;
  if (topo->source == nullptr) {
    topo->source = values::dup_string("hwloc:" HWLOC_VERSION);
    if (topo->source == nullptr) {
      hw->topology_destroy(copy);
      return PMIX_ERR_NOMEM;
    }
  }
  topo->topology = copy;
  return PMIX_SUCCESS;
}

PMIX_EXPORT pmix_status_t PMIx_Compute_distances(pmix_topology_t* topo, pmix_cpuset_t* cpuset,
                                                 pmix_info_t info[], size_t ninfo,
                                                 pmix_device_distance_t* distances[], size_t* ndist) {
  if (distances == nullptr || ndist == nullptr) {
    log::error("api", "PMIx_Compute_distances: NULL output");
    return PMIX_ERR_BAD_PARAM;
  }
  *distances = nullptr;
  *ndist = 0;
  std::vector<pmix_device_distance_t> list;
  const auto rc = api::compute("PMIx_Compute_distances", topo, cpuset, info, ninfo, list);
  if (rc != PMIX_SUCCESS) {
    api::free_list(list);
    return rc;
  }
  *distances = api::to_array(list);
  if (*distances == nullptr) {
    api::free_list(list);
    return PMIX_ERR_NOMEM;
  }
  *ndist = list.size();
  return PMIX_SUCCESS;
}

PMIX_EXPORT pmix_status_t PMIx_Compute_distances_nb(pmix_topology_t* topo, pmix_cpuset_t* cpuset,
                                                    pmix_info_t info[], size_t ninfo,
                                                    pmix_device_dist_cbfunc_t cbfunc, void* cbdata) {
  if (cbfunc == nullptr) {
    log::error("api", "PMIx_Compute_distances_nb: NULL cbfunc");
    return PMIX_ERR_BAD_PARAM;
  }
  auto list = std::make_unique<std::vector<pmix_device_distance_t>>();
  const auto rc = api::compute("PMIx_Compute_distances_nb", topo, cpuset, info, ninfo, *list);
  // Bad arguments are answered here; the result (found or not) comes through
  // the callback, on a library thread, with the list until release_fn.
  if (rc != PMIX_SUCCESS && rc != PMIX_ERR_NOT_FOUND && rc != PMIX_ERR_NOT_AVAILABLE) {
    api::free_list(*list);
    return rc;
  }
  auto* owned = list.release();
  api::deliver_on_library_thread([rc, owned, cbfunc, cbdata] {
    cbfunc(rc, owned->empty() ? nullptr : owned->data(), owned->size(), cbdata, api::release_distances,
           owned);
  });
  return PMIX_SUCCESS;
}

}  // extern "C"
