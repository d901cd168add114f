// Readable forms of PMIx data: PMIx_Data_print, PMIx_Value_string and
// PMIx_Info_string. The layout follows OpenPMIx 4.2.2's (a prefix, then
// "Data type: <TYPE>\tValue: <value>"); docs/local-functions.md lists where
// we print more (names instead of numbers, types OpenPMIx cannot print).
#include <pmix.h>

#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <string>

#include "api/attributes.hpp"
#include "api/hwloc_lazy.hpp"
#include "api/values_copy.hpp"
#include "common/log.hpp"
#include "api/convert.hpp"

namespace pmix::api {
namespace {

// ----- Pieces --------------------------------------------------------------

template <class... Ts>
std::string format(const char* fmt, Ts... args) {
  const int n = std::snprintf(nullptr, 0, fmt, args...);
  if (n <= 0) return {};
  std::string out(static_cast<std::size_t>(n), '\0');
  std::snprintf(out.data(), out.size() + 1, fmt, args...);
  return out;
}

std::string text(const char* s) { return s == nullptr ? "NULL" : s; }

std::string type_name(pmix_data_type_t type) {
  const char* name = PMIx_Data_type_string(type);
  return std::strcmp(name, "UNKNOWN DATA TYPE") == 0 ? format("UNKNOWN(%u)", unsigned{type}) : name;
}

std::string rank_text(pmix_rank_t rank) {
  switch (rank) {
    case PMIX_RANK_UNDEF: return "PMIX_RANK_UNDEF";
    case PMIX_RANK_WILDCARD: return "PMIX_RANK_WILDCARD";
    case PMIX_RANK_LOCAL_NODE: return "PMIX_RANK_LOCAL_NODE";
    case PMIX_RANK_INVALID: return "PMIX_RANK_INVALID";
    case PMIX_RANK_LOCAL_PEERS: return "PMIX_RANK_LOCAL_PEERS";
    default: return std::to_string(rank);
  }
}

std::string proc_text(const pmix_proc_t& p) {
  char ns[PMIX_MAX_NSLEN + 1];
  std::memcpy(ns, p.nspace, PMIX_MAX_NSLEN);
  ns[PMIX_MAX_NSLEN] = '\0';
  return std::string{ns} + ":" + rank_text(p.rank);
}

std::string timeval_text(const struct timeval& tv) {
  return format("%ld.%06ld", static_cast<long>(tv.tv_sec), static_cast<long>(tv.tv_usec));
}

std::string time_text(time_t t) {
  char buf[64];
  if (ctime_r(&t, buf) == nullptr) return std::to_string(static_cast<long long>(t));
  std::string s{buf};
  while (!s.empty() && s.back() == '\n') s.pop_back();
  return s;
}

std::string argv_text(char** argv) {
  std::string out;
  for (std::size_t k = 0; argv != nullptr && argv[k] != nullptr; ++k)
    out += (k == 0 ? "" : " ") + std::string{argv[k]};
  return out;
}

// The first bytes as hex, then "..." when there are more.
std::string bytes_text(const char* bytes, std::size_t size) {
  constexpr std::size_t kShown = 32;
  std::string out;
  for (std::size_t k = 0; bytes != nullptr && k < size && k < kShown; ++k)
    out += format("%02x", static_cast<unsigned>(static_cast<unsigned char>(bytes[k])));
  if (size > kShown) out += "...";
  return out;
}

struct bit_name {
  std::uint64_t bit;
  const char* name;
};

template <std::size_t N>
std::string bits_text(std::uint64_t bits, const bit_name (&names)[N], const char* none) {
  if (bits == 0) return none;
  std::string out;
  for (const auto& b : names) {
    if ((bits & b.bit) == 0) continue;
    out += (out.empty() ? "" : "|") + std::string{b.name};
    bits &= ~b.bit;
  }
  if (bits != 0) out += (out.empty() ? "" : "|") + format("0x%" PRIx64, bits);
  return out;
}

constexpr bit_name kLocality[] = {
    {PMIX_LOCALITY_SHARE_NODE, "NODE"},       {PMIX_LOCALITY_SHARE_NUMA, "NUMA"},
    {PMIX_LOCALITY_SHARE_PACKAGE, "PACKAGE"}, {PMIX_LOCALITY_SHARE_L3CACHE, "L3CACHE"},
    {PMIX_LOCALITY_SHARE_L2CACHE, "L2CACHE"}, {PMIX_LOCALITY_SHARE_L1CACHE, "L1CACHE"},
    {PMIX_LOCALITY_SHARE_CORE, "CORE"},       {PMIX_LOCALITY_SHARE_HWTHREAD, "HWTHREAD"},
    {PMIX_LOCALITY_NONLOCAL, "NONLOCAL"},
};
constexpr bit_name kDevices[] = {
    {PMIX_DEVTYPE_BLOCK, "BLOCK"},     {PMIX_DEVTYPE_GPU, "GPU"},
    {PMIX_DEVTYPE_NETWORK, "NETWORK"}, {PMIX_DEVTYPE_OPENFABRICS, "OPENFABRICS"},
    {PMIX_DEVTYPE_DMA, "DMA"},         {PMIX_DEVTYPE_COPROC, "COPROCESSOR"},
    {PMIX_DEVTYPE_MEMORY, "MEMORY"},   {PMIX_DEVTYPE_CORE, "CORE"},
    {PMIX_DEVTYPE_HWT, "HWT"},         {PMIX_DEVTYPE_CPU, "CPU"},
    {PMIX_DEVTYPE_NODE, "NODE"},
};
constexpr bit_name kMedia[] = {
    {PMIX_STORAGE_MEDIUM_UNKNOWN, "UNKNOWN"}, {PMIX_STORAGE_MEDIUM_TAPE, "TAPE"},
    {PMIX_STORAGE_MEDIUM_HDD, "HDD"},         {PMIX_STORAGE_MEDIUM_SSD, "SSD"},
    {PMIX_STORAGE_MEDIUM_NVME, "NVME"},       {PMIX_STORAGE_MEDIUM_PMEM, "PMEM"},
    {PMIX_STORAGE_MEDIUM_RAM, "RAM"},
};
constexpr bit_name kAccessibility[] = {
    {PMIX_STORAGE_ACCESSIBILITY_NODE, "NODE"},       {PMIX_STORAGE_ACCESSIBILITY_SESSION, "SESSION"},
    {PMIX_STORAGE_ACCESSIBILITY_JOB, "JOB"},         {PMIX_STORAGE_ACCESSIBILITY_RACK, "RACK"},
    {PMIX_STORAGE_ACCESSIBILITY_CLUSTER, "CLUSTER"}, {PMIX_STORAGE_ACCESSIBILITY_REMOTE, "REMOTE"},
};
constexpr bit_name kPersistence[] = {
    {PMIX_STORAGE_PERSISTENCE_TEMPORARY, "TEMPORARY"}, {PMIX_STORAGE_PERSISTENCE_NODE, "NODE"},
    {PMIX_STORAGE_PERSISTENCE_SESSION, "SESSION"},     {PMIX_STORAGE_PERSISTENCE_JOB, "JOB"},
    {PMIX_STORAGE_PERSISTENCE_SCRATCH, "SCRATCH"},     {PMIX_STORAGE_PERSISTENCE_PROJECT, "PROJECT"},
    {PMIX_STORAGE_PERSISTENCE_ARCHIVE, "ARCHIVE"},
};
constexpr bit_name kAccess[] = {{PMIX_STORAGE_ACCESS_RD, "READ"}, {PMIX_STORAGE_ACCESS_WR, "WRITE"}};

std::string directives_text(pmix_info_directives_t d) {
  char* s = PMIx_Info_directives_string(d);
  std::string out = text(s);
  std::free(s);
  return out;
}

template <class T>
T read(const void* src) {
  T v;
  std::memcpy(&v, src, sizeof v);
  return v;
}

// ----- The printer -----------------------------------------------------------

struct printer {
  bool failed = false;  // a type with no readable form

  // The value part ("Value: 42", "Size: 3 ...") of a scalar-like type, or
  // false when `type` is not one.
  bool scalar(const void* src, pmix_data_type_t type, std::string& out) {
    switch (type) {
      case PMIX_BOOL: out = std::string{"Value: "} + (read<bool>(src) ? "TRUE" : "FALSE"); return true;
      case PMIX_BYTE:
      case PMIX_UINT8: out = format("Value: %u", unsigned{read<std::uint8_t>(src)}); return true;
      case PMIX_INT8: out = format("Value: %d", int{read<std::int8_t>(src)}); return true;
      case PMIX_INT16: out = format("Value: %d", int{read<std::int16_t>(src)}); return true;
      case PMIX_UINT16: out = format("Value: %u", unsigned{read<std::uint16_t>(src)}); return true;
      case PMIX_INT32: out = format("Value: %" PRId32, read<std::int32_t>(src)); return true;
      case PMIX_UINT32: out = format("Value: %" PRIu32, read<std::uint32_t>(src)); return true;
      case PMIX_INT64: out = format("Value: %" PRId64, read<std::int64_t>(src)); return true;
      case PMIX_UINT64: out = format("Value: %" PRIu64, read<std::uint64_t>(src)); return true;
      case PMIX_INT: out = format("Value: %d", read<int>(src)); return true;
      case PMIX_UINT: out = format("Value: %u", read<unsigned>(src)); return true;
      case PMIX_SIZE: out = format("Value: %zu", read<std::size_t>(src)); return true;
      case PMIX_PID: out = format("Value: %ld", static_cast<long>(read<pid_t>(src))); return true;
      case PMIX_FLOAT: out = format("Value: %f", double{read<float>(src)}); return true;
      case PMIX_DOUBLE: out = format("Value: %f", read<double>(src)); return true;
      case PMIX_TIMEVAL: out = "Value: " + timeval_text(read<struct timeval>(src)); return true;
      case PMIX_TIME: out = "Value: " + time_text(read<time_t>(src)); return true;
      case PMIX_STATUS:
        out = std::string{"Value: "} + PMIx_Error_string(read<pmix_status_t>(src));
        return true;
      case PMIX_PROC_RANK: out = "Value: " + rank_text(read<pmix_rank_t>(src)); return true;
      case PMIX_POINTER: out = format("Address: %p", read<void*>(src)); return true;
      case PMIX_PERSIST:
        out = std::string{"Value: "} + PMIx_Persistence_string(read<pmix_persistence_t>(src));
        return true;
      case PMIX_SCOPE: out = std::string{"Value: "} + PMIx_Scope_string(read<pmix_scope_t>(src)); return true;
      case PMIX_DATA_RANGE:
        out = std::string{"Value: "} + PMIx_Data_range_string(read<pmix_data_range_t>(src));
        return true;
      case PMIX_PROC_STATE:
        out = std::string{"Value: "} + PMIx_Proc_state_string(read<pmix_proc_state_t>(src));
        return true;
      case PMIX_JOB_STATE:
        out = std::string{"Value: "} + PMIx_Job_state_string(read<pmix_job_state_t>(src));
        return true;
      case PMIX_ALLOC_DIRECTIVE:
        out = std::string{"Value: "} + PMIx_Alloc_directive_string(read<pmix_alloc_directive_t>(src));
        return true;
      case PMIX_IOF_CHANNEL:
        out = std::string{"Value: "} + PMIx_IOF_channel_string(read<pmix_iof_channel_t>(src));
        return true;
      case PMIX_LINK_STATE:
        out = std::string{"Value: "} + PMIx_Link_state_string(read<pmix_link_state_t>(src));
        return true;
      case PMIX_RESBLOCK_DIRECTIVE:
        out = std::string{"Value: "} +
              PMIx_Resource_block_directive_string(read<pmix_resource_block_directive_t>(src));
        return true;
      case PMIX_ALLOC_INHERIT:
        out = std::string{"Value: "} + PMIx_Alloc_inheritance_string(read<pmix_alloc_inheritance_t>(src));
        return true;
      case PMIX_DATA_TYPE: out = "Value: " + type_name(read<pmix_data_type_t>(src)); return true;
      case PMIX_INFO_DIRECTIVES:
        out = "Value: " + directives_text(read<pmix_info_directives_t>(src));
        return true;
      case PMIX_DEVTYPE:
        out = "Value: " + bits_text(read<pmix_device_type_t>(src), kDevices, "UNKNOWN");
        return true;
      case PMIX_LOCTYPE:
        out = "Value: " + bits_text(read<pmix_locality_t>(src), kLocality, "UNKNOWN");
        return true;
      case PMIX_STOR_MEDIUM:
        out = "Value: " + bits_text(read<pmix_storage_medium_t>(src), kMedia, "NONE");
        return true;
      case PMIX_STOR_ACCESS:
        out = "Value: " + bits_text(read<pmix_storage_accessibility_t>(src), kAccessibility, "NONE");
        return true;
      case PMIX_STOR_PERSIST:
        out = "Value: " + bits_text(read<pmix_storage_persistence_t>(src), kPersistence, "NONE");
        return true;
      case PMIX_STOR_ACCESS_TYPE:
        out = "Value: " + bits_text(read<pmix_storage_access_type_t>(src), kAccess, "NONE");
        return true;
      case PMIX_BYTE_OBJECT:
      case PMIX_COMPRESSED_STRING:
      case PMIX_REGEX:
      case PMIX_COMPRESSED_BYTE_OBJECT: {
        const auto* bo = static_cast<const pmix_byte_object_t*>(src);
        out = format("Size: %zu", bo->size);
        if (bo->size > 0) out += "\tBytes: " + bytes_text(bo->bytes, bo->size);
        return true;
      }
      default: return false;
    }
  }

  std::string typed(const std::string& prefix, pmix_data_type_t type, const std::string& rest) {
    return prefix + "Data type: " + type_name(type) + "\t" + rest;
  }

  // One datum of `type` at `src` (for PMIX_STRING: the characters).
  std::string print(const std::string& prefix, const void* src, pmix_data_type_t type) {
    std::string rest;
    if (scalar(src, type, rest)) return typed(prefix, type, rest);
    switch (type) {
      case PMIX_STRING: return typed(prefix, type, "Value: " + text(static_cast<const char*>(src)));
      case PMIX_PROC_NSPACE: {
        char ns[PMIX_MAX_NSLEN + 1];
        std::strncpy(ns, static_cast<const char*>(src), PMIX_MAX_NSLEN);
        ns[PMIX_MAX_NSLEN] = '\0';
        return typed(prefix, type, std::string{"Value: "} + ns);
      }
      case PMIX_PROC: return prefix + "PROC: " + proc_text(*static_cast<const pmix_proc_t*>(src));
      case PMIX_VALUE: return value(prefix, *static_cast<const pmix_value_t*>(src));
      case PMIX_INFO: return info(prefix, *static_cast<const pmix_info_t*>(src));
      case PMIX_PDATA: {
        const auto* p = static_cast<const pmix_pdata_t*>(src);
        char key[PMIX_MAX_KEYLEN + 1];
        std::memcpy(key, p->key, PMIX_MAX_KEYLEN);
        key[PMIX_MAX_KEYLEN] = '\0';
        return prefix + "PROC: " + proc_text(p->proc) + "\tKEY: " + key + "\t" + value(" ", p->value);
      }
      case PMIX_DATA_ARRAY: return array(prefix, *static_cast<const pmix_data_array_t*>(src));
      case PMIX_APP: {
        const auto* a = static_cast<const pmix_app_t*>(src);
        std::string out = typed(prefix, type,
                                "Cmd: " + text(a->cmd) + "\tArgv: " + argv_text(a->argv) +
                                    format("\tMaxprocs: %d", a->maxprocs) + "\tCwd: " + text(a->cwd) +
                                    format("\tNinfo: %zu", a->ninfo));
        for (std::size_t k = 0; a->info != nullptr && k < a->ninfo; ++k)
          out += "\n" + info(prefix + "\t", a->info[k]);
        return out;
      }
      case PMIX_QUERY: {
        const auto* q = static_cast<const pmix_query_t*>(src);
        std::string keys;
        for (std::size_t k = 0; q->keys != nullptr && q->keys[k] != nullptr; ++k)
          keys += (k == 0 ? "" : ",") + std::string{q->keys[k]};
        std::string out = typed(prefix, type, "Keys: " + keys + format("\tQualifiers: %zu", q->nqual));
        for (std::size_t k = 0; q->qualifiers != nullptr && k < q->nqual; ++k)
          out += "\n" + info(prefix + "\t", q->qualifiers[k]);
        return out;
      }
      case PMIX_PROC_INFO: {
        const auto* p = static_cast<const pmix_proc_info_t*>(src);
        return typed(prefix, type,
                     "Proc: " + proc_text(p->proc) + "\tHostname: " + text(p->hostname) +
                         "\tExecutable: " + text(p->executable_name) +
                         format("\tPid: %ld\tExit code: %d", static_cast<long>(p->pid), p->exit_code) +
                         "\tState: " + PMIx_Proc_state_string(p->state));
      }
      case PMIX_ENVAR: {
        const auto* e = static_cast<const pmix_envar_t*>(src);
        const char sep[2] = {e->separator, '\0'};
        return typed(prefix, type,
                     "Name: " + text(e->envar) + "\tValue: " + text(e->value) + "\tSeparator: " + sep);
      }
      case PMIX_COORD: return typed(prefix, type, coord(*static_cast<const pmix_coord_t*>(src)));
      case PMIX_REGATTR: {
        const auto* r = static_cast<const pmix_regattr_t*>(src);
        char key[PMIX_MAX_KEYLEN + 1];
        std::memcpy(key, r->string, PMIX_MAX_KEYLEN);
        key[PMIX_MAX_KEYLEN] = '\0';
        return typed(prefix, type,
                     "Name: " + text(r->name) + "\tString: " + key + "\tType: " + type_name(r->type) +
                         "\tDescription: " + argv_text(r->description));
      }
      case PMIX_PROC_CPUSET: return typed(prefix, type, cpuset(*static_cast<const pmix_cpuset_t*>(src)));
      case PMIX_TOPO: return typed(prefix, type, topology(*static_cast<const pmix_topology_t*>(src)));
      case PMIX_GEOMETRY: {
        const auto* g = static_cast<const pmix_geometry_t*>(src);
        std::string out = typed(prefix, type,
                                format("Fabric: %zu", g->fabric) + "\tUUID: " + text(g->uuid) + "\tOSName: " +
                                    text(g->osname) + format("\tCoordinates: %zu", g->ncoords));
        for (std::size_t k = 0; g->coordinates != nullptr && k < g->ncoords; ++k)
          out += "\n" + prefix + "\t" + coord(g->coordinates[k]);
        return out;
      }
      case PMIX_DEVICE_DIST: {
        const auto* d = static_cast<const pmix_device_distance_t*>(src);
        return typed(prefix, type,
                     "UUID: " + text(d->uuid) + "\tOSName: " + text(d->osname) +
                         "\tType: " + bits_text(d->type, kDevices, "UNKNOWN") +
                         format("\tMin: %u\tMax: %u", d->mindist, d->maxdist));
      }
      case PMIX_ENDPOINT: {
        const auto* e = static_cast<const pmix_endpoint_t*>(src);
        return typed(prefix, type,
                     "UUID: " + text(e->uuid) + "\tOSName: " + text(e->osname) +
                         format("\tSize: %zu", e->endpt.size) +
                         (e->endpt.size > 0 ? "\tBytes: " + bytes_text(e->endpt.bytes, e->endpt.size) : ""));
      }
      case PMIX_DEVICE: {
        const auto* d = static_cast<const pmix_device_t*>(src);
        return typed(prefix, type,
                     "UUID: " + text(d->uuid) + "\tOSName: " + text(d->osname) +
                         "\tType: " + bits_text(d->type, kDevices, "UNKNOWN"));
      }
      case PMIX_RESOURCE_UNIT: {
        const auto* u = static_cast<const pmix_resource_unit_t*>(src);
        return typed(prefix, type,
                     "Type: " + bits_text(u->type, kDevices, "UNKNOWN") + format("\tCount: %zu", u->count));
      }
      case PMIX_NODE_PID: {
        const auto* n = static_cast<const pmix_node_pid_t*>(src);
        return typed(prefix, type,
                     "Hostname: " + text(n->hostname) +
                         format("\tNodeID: %u\tPid: %ld", n->nodeid, static_cast<long>(n->pid)));
      }
      case PMIX_REGEX2: {
        const auto* r = static_cast<const pmix_regex2_t*>(src);
        return typed(prefix, type,
                     "Type: " + text(r->type) + format("\tSize: %zu", r->len) +
                         (r->len > 0 && r->bytes != nullptr
                              ? "\tBytes: " + bytes_text(reinterpret_cast<const char*>(r->bytes), r->len)
                              : ""));
      }
      case PMIX_DATA_BUFFER: {
        const auto* b = static_cast<const pmix_data_buffer_t*>(src);
        return typed(prefix, type, format("Bytes used: %zu", b->bytes_used));
      }
      case PMIX_PROC_STATS: {
        const auto* p = static_cast<const pmix_proc_stats_t*>(src);
        const char state[2] = {p->state, '\0'};
        return typed(
            prefix, type,
            "Node: " + text(p->node) + "\tProc: " + proc_text(p->proc) +
                format("\tPid: %ld", static_cast<long>(p->pid)) + "\tCmd: " + text(p->cmd) +
                "\tState: " + state + "\tTime: " + timeval_text(p->time) +
                format("\tCPU: %f\tPriority: %d\tThreads: %u\tPSS: %f\tVSize: %f\tRSS: %f\tPeak VSize: "
                       "%f\tProcessor: %u",
                       double{p->percent_cpu}, int{p->priority}, unsigned{p->num_threads}, double{p->pss},
                       double{p->vsize}, double{p->rss}, double{p->peak_vsize}, unsigned{p->processor}) +
                "\tSampled at: " + timeval_text(p->sample_time));
      }
      case PMIX_DISK_STATS: return typed(prefix, type, disk(*static_cast<const pmix_disk_stats_t*>(src)));
      case PMIX_NET_STATS: return typed(prefix, type, net(*static_cast<const pmix_net_stats_t*>(src)));
      case PMIX_NODE_STATS: {
        const auto* n = static_cast<const pmix_node_stats_t*>(src);
        std::string out = typed(
            prefix, type,
            "Node: " + text(n->node) +
                format("\tLoad: %.2f %.2f %.2f\tTotal mem: %.2f\tFree mem: %.2f\tBuffers: %.2f\tCached: %.2f"
                       "\tSwap cached: %.2f\tSwap total: %.2f\tSwap free: %.2f\tMapped: %.2f",
                       double{n->la}, double{n->la5}, double{n->la15}, double{n->total_mem},
                       double{n->free_mem}, double{n->buffers}, double{n->cached}, double{n->swap_cached},
                       double{n->swap_total}, double{n->swap_free}, double{n->mapped}) +
                "\tSampled at: " + timeval_text(n->sample_time));
        for (std::size_t k = 0; n->diskstats != nullptr && k < n->ndiskstats; ++k)
          out += "\n" + prefix + "\t" + disk(n->diskstats[k]);
        for (std::size_t k = 0; n->netstats != nullptr && k < n->nnetstats; ++k)
          out += "\n" + prefix + "\t" + net(n->netstats[k]);
        return out;
      }
      default: failed = true; return {};
    }
  }

  std::string value(const std::string& prefix, const pmix_value_t& v) {
    const std::string head = prefix + "PMIX_VALUE: ";
    if (v.type == PMIX_UNDEF) return head + " Data type: PMIX_UNDEF";
    // Where the datum lives: in the union, or behind its pointer for the
    // types a value holds boxed; a string is its characters.
    const void* at = &v.data;
    if (v.type == PMIX_STRING)
      at = v.data.string;
    else if (values::held_by_pointer(v.type))
      at = v.data.ptr;
    if (at == nullptr) return head + typed(" ", v.type, "Value: NULL");
    printer inner;
    std::string body = inner.print(" ", at, v.type);
    if (inner.failed) return head + typed(" ", v.type, "Value: UNPRINTABLE");
    return head + body;
  }

  std::string info(const std::string& prefix, const pmix_info_t& i) {
    char key[PMIX_MAX_KEYLEN + 1];
    std::memcpy(key, i.key, PMIX_MAX_KEYLEN);
    key[PMIX_MAX_KEYLEN] = '\0';
    const char* name = attribute_name(key);
    return prefix + "KEY: " + (name != nullptr ? name : key) + "\n" + prefix + "\t" +
           typed(" ", PMIX_INFO_DIRECTIVES, "Value: " + directives_text(i.flags)) + "\n" + prefix + "\t" +
           value(" ", i.value);
  }

  std::string array(const std::string& prefix, const pmix_data_array_t& a) {
    std::string out =
        typed(prefix, PMIX_DATA_ARRAY, "Type: " + type_name(a.type) + format("\tSize: %zu", a.size));
    const std::size_t size = values::element_size(a.type);
    if (a.array == nullptr || a.size == 0) return out;
    if (size == 0) {
      failed = true;
      return {};
    }
    for (std::size_t k = 0; k < a.size; ++k) {
      const char* at = static_cast<const char*>(a.array) + k * size;
      // An array of strings holds char* elements: print the characters.
      const void* datum = a.type == PMIX_STRING ? *reinterpret_cast<char* const*>(at) : at;
      if (datum == nullptr) {
        out += "\n" + typed(prefix + " ", a.type, "Value: NULL");
        continue;
      }
      std::string one = print(prefix + " ", datum, a.type);
      if (failed) return {};
      out += "\n" + one;
    }
    return out;
  }

  std::string coord(const pmix_coord_t& c) {
    const char* view = c.view == PMIX_COORD_LOGICAL_VIEW    ? "LOGICAL"
                       : c.view == PMIX_COORD_PHYSICAL_VIEW ? "PHYSICAL"
                                                            : "UNDEF";
    std::string out = std::string{"View: "} + view + format("\tDims: %zu\tCoordinates: ", c.dims);
    for (std::size_t k = 0; c.coord != nullptr && k < c.dims; ++k)
      out += format(k == 0 ? "%u" : ",%u", c.coord[k]);
    return out;
  }

  std::string cpuset(const pmix_cpuset_t& c) {
    std::string out = "Source: " + text(c.source);
    const auto* hw = loaded_hwloc();
    if (!is_hwloc_source(c.source) || c.bitmap == nullptr || hw == nullptr)
      return out + "\tCpus: UNPRINTABLE";
    char* list = nullptr;
    if (hw->bitmap_list_asprintf(&list, static_cast<hwloc_const_bitmap_t>(c.bitmap)) < 0 || list == nullptr)
      return out + "\tCpus: UNPRINTABLE";
    out += std::string{"\tCpus: "} + list;
    std::free(list);
    return out;
  }

  // The source, then the number of objects at each level of the tree.
  std::string topology(const pmix_topology_t& t) {
    std::string out = "Source: " + text(t.source);
    const auto* hw = loaded_hwloc();
    if (!is_hwloc_source(t.source) || t.topology == nullptr || hw == nullptr) return out;
    auto topo = static_cast<hwloc_topology_t>(t.topology);
    out += "\tLevels:";
    const int depth = hw->topology_get_depth(topo);
    for (int d = 0; d < depth; ++d)
      out += format(" %s:%u", hw->obj_type_string(hw->get_depth_type(topo, d)),
                    hw->get_nbobjs_by_depth(topo, d));
    const unsigned numa = hw->get_nbobjs_by_depth(topo, HWLOC_TYPE_DEPTH_NUMANODE);
    if (numa > 0) out += format(" NUMANode:%u", numa);
    return out;
  }

  std::string disk(const pmix_disk_stats_t& d) {
    return "Disk: " + text(d.disk) +
           format("\tReads completed: %" PRIu64 "\tReads merged: %" PRIu64 "\tSectors read: %" PRIu64
                  "\tms reading: %" PRIu64 "\tWrites completed: %" PRIu64 "\tWrites merged: %" PRIu64
                  "\tSectors written: %" PRIu64 "\tms writing: %" PRIu64 "\tIOs in progress: %" PRIu64
                  "\tms IO: %" PRIu64 "\tWeighted ms IO: %" PRIu64,
                  d.num_reads_completed, d.num_reads_merged, d.num_sectors_read, d.milliseconds_reading,
                  d.num_writes_completed, d.num_writes_merged, d.num_sectors_written, d.milliseconds_writing,
                  d.num_ios_in_progress, d.milliseconds_io, d.weighted_milliseconds_io);
  }

  std::string net(const pmix_net_stats_t& n) {
    return "Interface: " + text(n.net_interface) +
           format("\tBytes received: %" PRIu64 "\tPackets received: %" PRIu64 "\tReceive errors: %" PRIu64
                  "\tBytes sent: %" PRIu64 "\tPackets sent: %" PRIu64 "\tSend errors: %" PRIu64,
                  n.num_bytes_recvd, n.num_packets_recvd, n.num_recv_errs, n.num_bytes_sent,
                  n.num_packets_sent, n.num_send_errs);
  }
};

}  // namespace
}  // namespace pmix::api

using namespace pmix;

extern "C" {

PMIX_EXPORT pmix_status_t PMIx_Data_print(char** output, char* prefix, void* src, pmix_data_type_t type) {
  if (output == nullptr || src == nullptr) {
    log::error("api", "PMIx_Data_print: NULL ", output == nullptr ? "output" : "src");
    return PMIX_ERR_BAD_PARAM;
  }
  *output = nullptr;
  api::printer p;
  std::string text;
  try {
    text = p.print(prefix != nullptr ? prefix : " ", src, type);
  } catch (const std::bad_alloc&) {
    return PMIX_ERR_NOMEM;
  }
  if (p.failed) {
    log::error("api", "PMIx_Data_print: cannot print data of type ", PMIx_Data_type_string(type), " (", type,
               ")");
    return PMIX_ERR_UNKNOWN_DATA_TYPE;
  }
  *output = values::dup_string(text);
  return *output == nullptr ? PMIX_ERR_NOMEM : PMIX_SUCCESS;
}

PMIX_EXPORT char* PMIx_Value_string(const pmix_value_t* value) {
  if (value == nullptr) {
    log::error("api", "PMIx_Value_string: NULL value");
    return nullptr;
  }
  try {
    return values::dup_string(api::printer{}.value(" ", *value));
  } catch (const std::bad_alloc&) {
    return nullptr;
  }
}

PMIX_EXPORT char* PMIx_Info_string(const pmix_info_t* info) {
  if (info == nullptr) {
    log::error("api", "PMIx_Info_string: NULL info");
    return nullptr;
  }
  try {
    return values::dup_string(api::printer{}.info(" ", *info));
  } catch (const std::bad_alloc&) {
    return nullptr;
  }
}

// An application, one field per line (command, arguments, environment,
// working directory, process count, each info as PMIx_Data_print prints
// it), for the caller to free; null if an info cannot be printed.
PMIX_EXPORT char* PMIx_App_string(const pmix_app_t* app) {
  if (app == nullptr) return nullptr;
  try {
    std::string text = std::string{"CMD: "} + (app->cmd != nullptr ? app->cmd : "NULL");
    const auto list = [&text](const char* title, char** argv) {
      text += std::string{"\n    "} + title + ":";
      if (argv == nullptr) {
        text += "\n        NONE";
        return;
      }
      for (std::size_t k = 0; argv[k] != nullptr; ++k)
        text += "\n        " + std::string{title} + "[" + std::to_string(k) + "]: " + argv[k];
    };
    list("ARGV", app->argv);
    list("ENV", app->env);
    text += std::string{"\n    CWD: "} + (app->cwd != nullptr ? app->cwd : "NULL");
    text += "\n    MAXPROCS: " + std::to_string(app->maxprocs);
    if (app->info == nullptr) {
      text += "\n    INFO: NONE";
    } else {
      text += "\n    INFO:";
      for (std::size_t k = 0; k < app->ninfo; ++k) {
        char* printed = nullptr;
        if (PMIx_Data_print(&printed, nullptr, &app->info[k], PMIX_INFO) != PMIX_SUCCESS) return nullptr;
        text += "\n        INFO[" + std::to_string(k) + "]: " + printed;
        std::free(printed);
      }
    }
    return values::dup_string(text);
  } catch (...) {
    return nullptr;
  }
}

}  // extern "C"
