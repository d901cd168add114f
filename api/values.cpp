// Value, info, info-list and data array helpers of the public API, with the
// memory semantics of OpenPMIx 4.2.2: loads and transfers deep-copy, destructs
// free everything a value owns (recursively), PMIX_POINTER is never owned.
// Nothing here needs an initialized library.
#include "api/hwloc_lazy.hpp"
#include <pmix.h>
#include <strings.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <new>
#include <vector>

#include "api/values_copy.hpp"

namespace pmix::values {
namespace {

// ----- Classification of data types -------------------------------------

// Size of types held by value in a pmix_value_t's union and copied with
// memcpy (numbers, enumerations, PMIX_POINTER); 0 for every other type.
std::size_t scalar_size(pmix_data_type_t type) {
  switch (type) {
    case PMIX_BOOL: return sizeof(bool);
    case PMIX_BYTE:
    case PMIX_INT8:
    case PMIX_UINT8:
    case PMIX_PERSIST:
    case PMIX_SCOPE:
    case PMIX_DATA_RANGE:
    case PMIX_PROC_STATE:
    case PMIX_ALLOC_DIRECTIVE:
    case PMIX_JOB_STATE:
    case PMIX_LINK_STATE:
    case PMIX_RESBLOCK_DIRECTIVE:
    case PMIX_ALLOC_INHERIT: return 1;
    case PMIX_INT16:
    case PMIX_UINT16:
    case PMIX_DATA_TYPE:
    case PMIX_IOF_CHANNEL:
    case PMIX_LOCTYPE:
    case PMIX_STOR_ACCESS_TYPE: return 2;
    case PMIX_INT32:
    case PMIX_UINT32:
    case PMIX_PROC_RANK:
    case PMIX_INFO_DIRECTIVES: return 4;
    case PMIX_INT64:
    case PMIX_UINT64:
    case PMIX_DEVTYPE:
    case PMIX_STOR_MEDIUM:
    case PMIX_STOR_ACCESS:
    case PMIX_STOR_PERSIST: return 8;
    case PMIX_INT:
    case PMIX_UINT:
    case PMIX_STATUS: return sizeof(int);
    case PMIX_SIZE: return sizeof(std::size_t);
    case PMIX_PID: return sizeof(pid_t);
    case PMIX_FLOAT: return sizeof(float);
    case PMIX_DOUBLE: return sizeof(double);
    case PMIX_TIMEVAL: return sizeof(struct timeval);
    case PMIX_TIME: return sizeof(time_t);
    case PMIX_POINTER: return sizeof(void*);
    default: return 0;
  }
}

bool is_byte_object(pmix_data_type_t type) {
  return type == PMIX_BYTE_OBJECT || type == PMIX_COMPRESSED_STRING || type == PMIX_REGEX ||
         type == PMIX_COMPRESSED_BYTE_OBJECT;
}

// Types a pmix_value_t holds through a pointer to one heap element.
bool is_boxed(pmix_data_type_t type) {
  switch (type) {
    case PMIX_PROC:
    case PMIX_PROC_NSPACE:
    case PMIX_PROC_INFO:
    case PMIX_DATA_ARRAY:
    case PMIX_COORD:
    case PMIX_REGATTR:
    case PMIX_TOPO:
    case PMIX_PROC_CPUSET:
    case PMIX_GEOMETRY:
    case PMIX_DEVICE_DIST:
    case PMIX_ENDPOINT:
    case PMIX_DATA_BUFFER:
    case PMIX_PROC_STATS:
    case PMIX_DISK_STATS:
    case PMIX_NET_STATS:
    case PMIX_NODE_STATS:
    case PMIX_DEVICE:
    case PMIX_RESOURCE_UNIT:
    case PMIX_NODE_PID:
    case PMIX_REGEX2: return true;
    default: return false;
  }
}

bool value_can_hold(pmix_data_type_t type) {
  return type == PMIX_UNDEF || type == PMIX_STRING || type == PMIX_ENVAR || scalar_size(type) > 0 ||
         is_byte_object(type) || is_boxed(type);
}

bool is_hwloc(const char* source) { return source != nullptr && strncasecmp(source, "hwloc", 5) == 0; }

// ----- Small copies -----------------------------------------------------

pmix_status_t copy_string(char** dst, const char* src) {
  *dst = dup_string(src);
  return (src != nullptr && *dst == nullptr) ? PMIX_ERR_NOMEM : PMIX_SUCCESS;
}

pmix_status_t copy_bytes(pmix_byte_object_t* dst, const pmix_byte_object_t* src) {
  dst->bytes = nullptr;
  dst->size = 0;
  if (src->bytes == nullptr || src->size == 0) {
    return PMIX_SUCCESS;
  }
  dst->bytes = static_cast<char*>(std::malloc(src->size));
  if (dst->bytes == nullptr) {
    return PMIX_ERR_NOMEM;
  }
  std::memcpy(dst->bytes, src->bytes, src->size);
  dst->size = src->size;
  return PMIX_SUCCESS;
}

pmix_status_t copy_argv(char*** dst, char** src) {
  *dst = pmix_argv_copy(src);
  return (src != nullptr && *dst == nullptr) ? PMIX_ERR_NOMEM : PMIX_SUCCESS;
}

// Combines the steps of a multi-part copy: the first failure wins.
struct status_chain {
  pmix_status_t rc = PMIX_SUCCESS;
  status_chain& operator<<(pmix_status_t next) {
    if (rc == PMIX_SUCCESS) {
      rc = next;
    }
    return *this;
  }
};

// ----- Values -----------------------------------------------------------

pmix_status_t value_copy(pmix_value_t* dst, const pmix_value_t* src);
void value_destruct(pmix_value_t* v);

pmix_status_t info_copy(pmix_info_t* dst, const pmix_info_t* src) {
  PMIX_LOAD_KEY(dst->key, src->key);
  dst->flags = src->flags;
  if (PMIX_INFO_IS_PERSISTENT(src)) {
    std::memcpy(&dst->value, &src->value, sizeof(pmix_value_t));
    return PMIX_SUCCESS;
  }
  return value_copy(&dst->value, &src->value);
}

// Deep copy of one element of a boxed type into a new heap element.
pmix_status_t box_copy(void** dst, const void* src, pmix_data_type_t type) {
  *dst = nullptr;
  if (src == nullptr) {
    return PMIX_SUCCESS;
  }
  void* elem = std::calloc(1, element_size(type));
  if (elem == nullptr) {
    return PMIX_ERR_NOMEM;
  }
  pmix_status_t rc = copy_element(elem, src, type);
  if (rc != PMIX_SUCCESS) {
    std::free(elem);
    return rc;
  }
  *dst = elem;
  return PMIX_SUCCESS;
}

pmix_status_t value_copy(pmix_value_t* dst, const pmix_value_t* src) {
  std::memset(dst, 0, sizeof(*dst));
  pmix_data_type_t type = src->type;
  pmix_status_t rc = PMIX_SUCCESS;
  if (type == PMIX_UNDEF) {
    return PMIX_SUCCESS;
  } else if (scalar_size(type) > 0) {
    dst->data = src->data;
  } else if (type == PMIX_STRING) {
    rc = copy_string(&dst->data.string, src->data.string);
  } else if (is_byte_object(type)) {
    rc = copy_bytes(&dst->data.bo, &src->data.bo);
  } else if (type == PMIX_ENVAR) {
    rc = copy_element(&dst->data.envar, &src->data.envar, PMIX_ENVAR);
  } else if (is_boxed(type)) {
    rc = box_copy(&dst->data.ptr, src->data.ptr, type);
  } else {
    return PMIX_ERR_NOT_SUPPORTED;
  }
  if (rc == PMIX_SUCCESS) {
    dst->type = type;
  } else {
    std::memset(&dst->data, 0, sizeof(dst->data));
  }
  return rc;
}

void value_destruct(pmix_value_t* v) {
  pmix_data_type_t type = v->type;
  if (type == PMIX_STRING) {
    std::free(v->data.string);
  } else if (is_byte_object(type)) {
    std::free(v->data.bo.bytes);
  } else if (type == PMIX_ENVAR) {
    destruct_element(&v->data.envar, PMIX_ENVAR);
  } else if (is_boxed(type) && v->data.ptr != nullptr) {
    destruct_element(v->data.ptr, type);
    std::free(v->data.ptr);
  }
  std::memset(&v->data, 0, sizeof(v->data));
  v->type = PMIX_UNDEF;
}

// ----- Comparison -------------------------------------------------------

template <typename T>
pmix_value_cmp_t order(const T& a, const T& b) {
  if (a == b) return PMIX_EQUAL;
  if (b < a) return PMIX_VALUE1_GREATER;
  if (a < b) return PMIX_VALUE2_GREATER;
  return PMIX_VALUE_COMPARISON_NOT_AVAIL;  // unordered, e.g. NaN
}

template <typename T>
pmix_value_cmp_t order_at(const void* a, const void* b) {
  T x;
  T y;
  std::memcpy(&x, a, sizeof(T));
  std::memcpy(&y, b, sizeof(T));
  return order(x, y);
}

pmix_value_cmp_t order_strings(const char* a, const char* b, std::size_t max) {
  if (a == nullptr || b == nullptr) {
    return order(a != nullptr, b != nullptr);
  }
  return order(std::strncmp(a, b, max), 0);
}

pmix_value_cmp_t order_bytes(const pmix_byte_object_t* a, const pmix_byte_object_t* b) {
  std::size_t common = a->size < b->size ? a->size : b->size;
  int diff = common == 0 ? 0 : std::memcmp(a->bytes, b->bytes, common);
  return diff != 0 ? order(diff, 0) : order(a->size, b->size);
}

// First non-equal result of a sequence of comparisons.
struct cmp_chain {
  pmix_value_cmp_t result = PMIX_EQUAL;
  cmp_chain& operator<<(pmix_value_cmp_t next) {
    if (result == PMIX_EQUAL) {
      result = next;
    }
    return *this;
  }
};

constexpr std::size_t kNoLimit = SIZE_MAX;

pmix_value_cmp_t compare_value(const pmix_value_t* a, const pmix_value_t* b);
pmix_value_cmp_t compare_element(const void* a, const void* b, pmix_data_type_t type);

pmix_value_cmp_t compare_array(const void* a, const void* b, std::size_t n, pmix_data_type_t type) {
  std::size_t size = element_size(type);
  for (std::size_t k = 0; k < n; ++k) {
    pmix_value_cmp_t r = compare_element(static_cast<const char*>(a) + k * size,
                                         static_cast<const char*>(b) + k * size, type);
    if (r != PMIX_EQUAL) {
      return r;
    }
  }
  return PMIX_EQUAL;
}

pmix_value_cmp_t compare_element(const void* a, const void* b, pmix_data_type_t type) {
  switch (type) {
    case PMIX_BOOL: return order_at<bool>(a, b);
    case PMIX_BYTE:
    case PMIX_UINT8:
    case PMIX_PERSIST:
    case PMIX_SCOPE:
    case PMIX_DATA_RANGE:
    case PMIX_PROC_STATE:
    case PMIX_ALLOC_DIRECTIVE:
    case PMIX_JOB_STATE:
    case PMIX_LINK_STATE:
    case PMIX_RESBLOCK_DIRECTIVE:
    case PMIX_ALLOC_INHERIT: return order_at<uint8_t>(a, b);
    case PMIX_INT8: return order_at<int8_t>(a, b);
    case PMIX_INT16: return order_at<int16_t>(a, b);
    case PMIX_UINT16:
    case PMIX_DATA_TYPE:
    case PMIX_IOF_CHANNEL:
    case PMIX_LOCTYPE:
    case PMIX_STOR_ACCESS_TYPE: return order_at<uint16_t>(a, b);
    case PMIX_INT32: return order_at<int32_t>(a, b);
    case PMIX_UINT32:
    case PMIX_PROC_RANK:
    case PMIX_INFO_DIRECTIVES: return order_at<uint32_t>(a, b);
    case PMIX_INT64: return order_at<int64_t>(a, b);
    case PMIX_UINT64:
    case PMIX_DEVTYPE:
    case PMIX_STOR_MEDIUM:
    case PMIX_STOR_ACCESS:
    case PMIX_STOR_PERSIST: return order_at<uint64_t>(a, b);
    case PMIX_INT:
    case PMIX_STATUS: return order_at<int>(a, b);
    case PMIX_UINT: return order_at<unsigned int>(a, b);
    case PMIX_SIZE: return order_at<std::size_t>(a, b);
    case PMIX_PID: return order_at<pid_t>(a, b);
    case PMIX_FLOAT: return order_at<float>(a, b);
    case PMIX_DOUBLE: return order_at<double>(a, b);
    case PMIX_TIME: return order_at<time_t>(a, b);
    case PMIX_POINTER: return order_at<std::uintptr_t>(a, b);
    case PMIX_TIMEVAL: {
      struct timeval x;
      struct timeval y;
      std::memcpy(&x, a, sizeof(x));
      std::memcpy(&y, b, sizeof(y));
      return (cmp_chain() << order(x.tv_sec, y.tv_sec) << order(x.tv_usec, y.tv_usec)).result;
    }
    case PMIX_STRING:
      return order_strings(*static_cast<char* const*>(a), *static_cast<char* const*>(b), kNoLimit);
    case PMIX_PROC_NSPACE:
      return order_strings(static_cast<const char*>(a), static_cast<const char*>(b), PMIX_MAX_NSLEN);
    case PMIX_PROC: {
      auto x = static_cast<const pmix_proc_t*>(a);
      auto y = static_cast<const pmix_proc_t*>(b);
      return (cmp_chain() << order_strings(x->nspace, y->nspace, PMIX_MAX_NSLEN)
                          << order(x->rank, y->rank))
          .result;
    }
    case PMIX_BYTE_OBJECT:
    case PMIX_COMPRESSED_STRING:
    case PMIX_REGEX:
    case PMIX_COMPRESSED_BYTE_OBJECT:
      return order_bytes(static_cast<const pmix_byte_object_t*>(a),
                         static_cast<const pmix_byte_object_t*>(b));
    case PMIX_INFO: {
      auto x = static_cast<const pmix_info_t*>(a);
      auto y = static_cast<const pmix_info_t*>(b);
      return (cmp_chain() << order_strings(x->key, y->key, PMIX_MAX_KEYLEN)
                          << compare_value(&x->value, &y->value))
          .result;
    }
    case PMIX_VALUE:
      return compare_value(static_cast<const pmix_value_t*>(a), static_cast<const pmix_value_t*>(b));
    case PMIX_PDATA: {
      auto x = static_cast<const pmix_pdata_t*>(a);
      auto y = static_cast<const pmix_pdata_t*>(b);
      return (cmp_chain() << compare_element(&x->proc, &y->proc, PMIX_PROC)
                          << order_strings(x->key, y->key, PMIX_MAX_KEYLEN)
                          << compare_value(&x->value, &y->value))
          .result;
    }
    case PMIX_PROC_INFO: {
      auto x = static_cast<const pmix_proc_info_t*>(a);
      auto y = static_cast<const pmix_proc_info_t*>(b);
      return (cmp_chain() << compare_element(&x->proc, &y->proc, PMIX_PROC)
                          << order_strings(x->hostname, y->hostname, kNoLimit)
                          << order_strings(x->executable_name, y->executable_name, kNoLimit)
                          << order(x->pid, y->pid) << order(x->exit_code, y->exit_code)
                          << order(x->state, y->state))
          .result;
    }
    case PMIX_ENVAR: {
      auto x = static_cast<const pmix_envar_t*>(a);
      auto y = static_cast<const pmix_envar_t*>(b);
      return (cmp_chain() << order_strings(x->envar, y->envar, kNoLimit)
                          << order_strings(x->value, y->value, kNoLimit)
                          << order(x->separator, y->separator))
          .result;
    }
    case PMIX_COORD: {
      auto x = static_cast<const pmix_coord_t*>(a);
      auto y = static_cast<const pmix_coord_t*>(b);
      cmp_chain c;
      c << order(x->view, y->view) << order(x->dims, y->dims);
      if (c.result == PMIX_EQUAL && x->dims > 0) {
        if (x->coord == nullptr || y->coord == nullptr) {
          return order(x->coord != nullptr, y->coord != nullptr);
        }
        c << compare_array(x->coord, y->coord, x->dims, PMIX_UINT32);
      }
      return c.result;
    }
    case PMIX_DATA_ARRAY: {
      auto x = static_cast<const pmix_data_array_t*>(a);
      auto y = static_cast<const pmix_data_array_t*>(b);
      if (x->type != y->type) {
        return PMIX_VALUE_INCOMPATIBLE_OBJECTS;
      }
      if (x->size != y->size) {
        return order(x->size, y->size);
      }
      if (x->size == 0) {
        return PMIX_EQUAL;
      }
      if (element_size(x->type) == 0 || x->array == nullptr || y->array == nullptr) {
        return PMIX_VALUE_COMPARISON_NOT_AVAIL;
      }
      return compare_array(x->array, y->array, x->size, x->type);
    }
    case PMIX_GEOMETRY: {
      auto x = static_cast<const pmix_geometry_t*>(a);
      auto y = static_cast<const pmix_geometry_t*>(b);
      cmp_chain c;
      c << order(x->fabric, y->fabric) << order_strings(x->uuid, y->uuid, kNoLimit)
        << order_strings(x->osname, y->osname, kNoLimit) << order(x->ncoords, y->ncoords);
      if (c.result == PMIX_EQUAL && x->ncoords > 0) {
        if (x->coordinates == nullptr || y->coordinates == nullptr) {
          return order(x->coordinates != nullptr, y->coordinates != nullptr);
        }
        c << compare_array(x->coordinates, y->coordinates, x->ncoords, PMIX_COORD);
      }
      return c.result;
    }
    case PMIX_DEVICE_DIST: {
      auto x = static_cast<const pmix_device_distance_t*>(a);
      auto y = static_cast<const pmix_device_distance_t*>(b);
      return (cmp_chain() << order_strings(x->uuid, y->uuid, kNoLimit)
                          << order_strings(x->osname, y->osname, kNoLimit)
                          << order(x->type, y->type) << order(x->mindist, y->mindist)
                          << order(x->maxdist, y->maxdist))
          .result;
    }
    case PMIX_ENDPOINT: {
      auto x = static_cast<const pmix_endpoint_t*>(a);
      auto y = static_cast<const pmix_endpoint_t*>(b);
      return (cmp_chain() << order_strings(x->uuid, y->uuid, kNoLimit)
                          << order_strings(x->osname, y->osname, kNoLimit)
                          << order_bytes(&x->endpt, &y->endpt))
          .result;
    }
    case PMIX_DEVICE: {
      auto x = static_cast<const pmix_device_t*>(a);
      auto y = static_cast<const pmix_device_t*>(b);
      return (cmp_chain() << order_strings(x->uuid, y->uuid, kNoLimit)
                          << order_strings(x->osname, y->osname, kNoLimit) << order(x->type, y->type))
          .result;
    }
    case PMIX_RESOURCE_UNIT: {
      auto x = static_cast<const pmix_resource_unit_t*>(a);
      auto y = static_cast<const pmix_resource_unit_t*>(b);
      return (cmp_chain() << order(x->type, y->type) << order(x->count, y->count)).result;
    }
    case PMIX_NODE_PID: {
      auto x = static_cast<const pmix_node_pid_t*>(a);
      auto y = static_cast<const pmix_node_pid_t*>(b);
      return (cmp_chain() << order_strings(x->hostname, y->hostname, kNoLimit) << order(x->nodeid, y->nodeid)
                          << order(x->pid, y->pid))
          .result;
    }
    case PMIX_REGEX2: {
      auto x = static_cast<const pmix_regex2_t*>(a);
      auto y = static_cast<const pmix_regex2_t*>(b);
      const pmix_byte_object_t bx{reinterpret_cast<char*>(x->bytes), x->len};
      const pmix_byte_object_t by{reinterpret_cast<char*>(y->bytes), y->len};
      return (cmp_chain() << order_strings(x->type, y->type, kNoLimit) << order_bytes(&bx, &by)).result;
    }
    default:
      // apps, queries, registrations, topologies, cpusets, buffers and
      // statistics have no defined order
      return PMIX_VALUE_COMPARISON_NOT_AVAIL;
  }
}

pmix_value_cmp_t compare_value(const pmix_value_t* a, const pmix_value_t* b) {
  if (a->type != b->type) {
    return PMIX_VALUE_TYPE_DIFFERENT;
  }
  pmix_data_type_t type = a->type;
  if (type == PMIX_UNDEF) {
    return PMIX_EQUAL;
  }
  if (is_boxed(type)) {
    if (a->data.ptr == nullptr || b->data.ptr == nullptr) {
      return order(a->data.ptr != nullptr, b->data.ptr != nullptr);
    }
    return compare_element(a->data.ptr, b->data.ptr, type);
  }
  if (!value_can_hold(type)) {
    return PMIX_VALUE_COMPARISON_NOT_AVAIL;
  }
  return compare_element(&a->data, &b->data, type);
}

// ----- Info lists -------------------------------------------------------

pmix_status_t list_append(void* ptr, const pmix_info_t& info) {
  try {
    static_cast<info_list*>(ptr)->items.push_back(info);
    return PMIX_SUCCESS;
  } catch (const std::bad_alloc&) {
    return PMIX_ERR_NOMEM;
  }
}

}  // namespace

bool held_by_pointer(pmix_data_type_t type) { return is_boxed(type); }

// ----- Element operations (values_copy.hpp) ------------------------------

char* dup_string(const std::string& s) {
  auto* out = static_cast<char*>(std::malloc(s.size() + 1));
  if (out != nullptr) std::memcpy(out, s.c_str(), s.size() + 1);
  return out;
}

char* dup_string(const char* s) {
  if (s == nullptr) {
    return nullptr;
  }
  std::size_t len = std::strlen(s);
  char* copy = static_cast<char*>(std::malloc(len + 1));
  if (copy != nullptr) {
    std::memcpy(copy, s, len + 1);
  }
  return copy;
}

std::size_t element_size(pmix_data_type_t type) {
  if (std::size_t size = scalar_size(type); size > 0) {
    return size;
  }
  if (is_byte_object(type)) {
    return sizeof(pmix_byte_object_t);
  }
  switch (type) {
    case PMIX_STRING: return sizeof(char*);
    case PMIX_PROC: return sizeof(pmix_proc_t);
    case PMIX_PROC_NSPACE: return sizeof(pmix_nspace_t);
    case PMIX_INFO: return sizeof(pmix_info_t);
    case PMIX_VALUE: return sizeof(pmix_value_t);
    case PMIX_PDATA: return sizeof(pmix_pdata_t);
    case PMIX_APP: return sizeof(pmix_app_t);
    case PMIX_QUERY: return sizeof(pmix_query_t);
    case PMIX_PROC_INFO: return sizeof(pmix_proc_info_t);
    case PMIX_ENVAR: return sizeof(pmix_envar_t);
    case PMIX_COORD: return sizeof(pmix_coord_t);
    case PMIX_REGATTR: return sizeof(pmix_regattr_t);
    case PMIX_DATA_ARRAY: return sizeof(pmix_data_array_t);
    case PMIX_PROC_CPUSET: return sizeof(pmix_cpuset_t);
    case PMIX_TOPO: return sizeof(pmix_topology_t);
    case PMIX_GEOMETRY: return sizeof(pmix_geometry_t);
    case PMIX_DEVICE_DIST: return sizeof(pmix_device_distance_t);
    case PMIX_ENDPOINT: return sizeof(pmix_endpoint_t);
    case PMIX_DATA_BUFFER: return sizeof(pmix_data_buffer_t);
    case PMIX_PROC_STATS: return sizeof(pmix_proc_stats_t);
    case PMIX_DISK_STATS: return sizeof(pmix_disk_stats_t);
    case PMIX_NET_STATS: return sizeof(pmix_net_stats_t);
    case PMIX_NODE_STATS: return sizeof(pmix_node_stats_t);
    case PMIX_DEVICE: return sizeof(pmix_device_t);
    case PMIX_RESOURCE_UNIT: return sizeof(pmix_resource_unit_t);
    case PMIX_NODE_PID: return sizeof(pmix_node_pid_t);
    case PMIX_REGEX2: return sizeof(pmix_regex2_t);
    default: return 0;
  }
}

pmix_status_t copy_element(void* dst, const void* src, pmix_data_type_t type) {
  std::size_t size = element_size(type);
  if (size == 0) {
    return PMIX_ERR_NOT_SUPPORTED;
  }
  // Plain data (including PMIX_POINTER, which is never owned).
  if (scalar_size(type) > 0 || type == PMIX_PROC || type == PMIX_PROC_NSPACE || type == PMIX_RESOURCE_UNIT) {
    std::memcpy(dst, src, size);
    return PMIX_SUCCESS;
  }
  std::memset(dst, 0, size);
  status_chain c;
  switch (type) {
    case PMIX_STRING:
      c << copy_string(static_cast<char**>(dst), *static_cast<char* const*>(src));
      break;
    case PMIX_BYTE_OBJECT:
    case PMIX_COMPRESSED_STRING:
    case PMIX_REGEX:
    case PMIX_COMPRESSED_BYTE_OBJECT:
      c << copy_bytes(static_cast<pmix_byte_object_t*>(dst), static_cast<const pmix_byte_object_t*>(src));
      break;
    case PMIX_INFO:
      c << info_copy(static_cast<pmix_info_t*>(dst), static_cast<const pmix_info_t*>(src));
      break;
    case PMIX_VALUE:
      c << value_copy(static_cast<pmix_value_t*>(dst), static_cast<const pmix_value_t*>(src));
      break;
    case PMIX_PDATA: {
      auto d = static_cast<pmix_pdata_t*>(dst);
      auto s = static_cast<const pmix_pdata_t*>(src);
      d->proc = s->proc;
      std::memcpy(d->key, s->key, sizeof(d->key));
      c << value_copy(&d->value, &s->value);
      break;
    }
    case PMIX_APP: {
      auto d = static_cast<pmix_app_t*>(dst);
      auto s = static_cast<const pmix_app_t*>(src);
      d->maxprocs = s->maxprocs;
      c << copy_string(&d->cmd, s->cmd) << copy_argv(&d->argv, s->argv) << copy_argv(&d->env, s->env)
        << copy_string(&d->cwd, s->cwd)
        << copy_elements(reinterpret_cast<void**>(&d->info), s->info, s->ninfo, PMIX_INFO);
      d->ninfo = d->info != nullptr ? s->ninfo : 0;
      break;
    }
    case PMIX_QUERY: {
      auto d = static_cast<pmix_query_t*>(dst);
      auto s = static_cast<const pmix_query_t*>(src);
      c << copy_argv(&d->keys, s->keys)
        << copy_elements(reinterpret_cast<void**>(&d->qualifiers), s->qualifiers, s->nqual, PMIX_INFO);
      d->nqual = d->qualifiers != nullptr ? s->nqual : 0;
      break;
    }
    case PMIX_PROC_INFO: {
      auto d = static_cast<pmix_proc_info_t*>(dst);
      auto s = static_cast<const pmix_proc_info_t*>(src);
      d->proc = s->proc;
      d->pid = s->pid;
      d->exit_code = s->exit_code;
      d->state = s->state;
      c << copy_string(&d->hostname, s->hostname) << copy_string(&d->executable_name, s->executable_name);
      break;
    }
    case PMIX_ENVAR: {
      auto d = static_cast<pmix_envar_t*>(dst);
      auto s = static_cast<const pmix_envar_t*>(src);
      d->separator = s->separator;
      c << copy_string(&d->envar, s->envar) << copy_string(&d->value, s->value);
      break;
    }
    case PMIX_COORD: {
      auto d = static_cast<pmix_coord_t*>(dst);
      auto s = static_cast<const pmix_coord_t*>(src);
      d->view = s->view;
      c << copy_elements(reinterpret_cast<void**>(&d->coord), s->coord, s->coord != nullptr ? s->dims : 0,
                         PMIX_UINT32);
      d->dims = s->dims;
      break;
    }
    case PMIX_REGATTR: {
      auto d = static_cast<pmix_regattr_t*>(dst);
      auto s = static_cast<const pmix_regattr_t*>(src);
      std::memcpy(d->string, s->string, sizeof(d->string));
      d->type = s->type;
      c << copy_string(&d->name, s->name) << copy_argv(&d->description, s->description);
      break;
    }
    case PMIX_DATA_ARRAY: {
      auto d = static_cast<pmix_data_array_t*>(dst);
      auto s = static_cast<const pmix_data_array_t*>(src);
      d->type = s->type;
      if (s->array != nullptr && s->size > 0) {
        c << copy_elements(&d->array, s->array, s->size, s->type);
        d->size = d->array != nullptr ? s->size : 0;
      }
      break;
    }
    case PMIX_PROC_CPUSET: {
      auto d = static_cast<pmix_cpuset_t*>(dst);
      auto s = static_cast<const pmix_cpuset_t*>(src);
      c << copy_string(&d->source, s->source);
      const auto* hw = pmix::api::loaded_hwloc();
      if (is_hwloc(s->source) && s->bitmap != nullptr && hw != nullptr) {
        d->bitmap = hw->bitmap_dup(static_cast<hwloc_const_bitmap_t>(s->bitmap));
        c << (d->bitmap == nullptr ? PMIX_ERR_NOMEM : PMIX_SUCCESS);
      } else {
        d->bitmap = s->bitmap;  // unknown representation: shared, never freed here
      }
      break;
    }
    case PMIX_TOPO: {
      auto d = static_cast<pmix_topology_t*>(dst);
      auto s = static_cast<const pmix_topology_t*>(src);
      c << copy_string(&d->source, s->source);
      const auto* hw = pmix::api::loaded_hwloc();
      if (is_hwloc(s->source) && s->topology != nullptr && hw != nullptr) {
        hwloc_topology_t copy = nullptr;
        if (hw->topology_dup(&copy, static_cast<hwloc_topology_t>(s->topology)) != 0) {
          c << PMIX_ERR_NOMEM;
        }
        d->topology = copy;
      } else {
        d->topology = s->topology;  // unknown representation: shared, never freed here
      }
      break;
    }
    case PMIX_GEOMETRY: {
      auto d = static_cast<pmix_geometry_t*>(dst);
      auto s = static_cast<const pmix_geometry_t*>(src);
      d->fabric = s->fabric;
      c << copy_string(&d->uuid, s->uuid) << copy_string(&d->osname, s->osname)
        << copy_elements(reinterpret_cast<void**>(&d->coordinates), s->coordinates, s->ncoords, PMIX_COORD);
      d->ncoords = d->coordinates != nullptr ? s->ncoords : 0;
      break;
    }
    case PMIX_DEVICE_DIST: {
      auto d = static_cast<pmix_device_distance_t*>(dst);
      auto s = static_cast<const pmix_device_distance_t*>(src);
      d->type = s->type;
      d->mindist = s->mindist;
      d->maxdist = s->maxdist;
      c << copy_string(&d->uuid, s->uuid) << copy_string(&d->osname, s->osname);
      break;
    }
    case PMIX_ENDPOINT: {
      auto d = static_cast<pmix_endpoint_t*>(dst);
      auto s = static_cast<const pmix_endpoint_t*>(src);
      c << copy_string(&d->uuid, s->uuid) << copy_string(&d->osname, s->osname)
        << copy_bytes(&d->endpt, &s->endpt);
      break;
    }
    case PMIX_DEVICE: {
      auto d = static_cast<pmix_device_t*>(dst);
      auto s = static_cast<const pmix_device_t*>(src);
      d->type = s->type;
      c << copy_string(&d->uuid, s->uuid) << copy_string(&d->osname, s->osname);
      break;
    }
    case PMIX_NODE_PID: {
      auto d = static_cast<pmix_node_pid_t*>(dst);
      auto s = static_cast<const pmix_node_pid_t*>(src);
      d->nodeid = s->nodeid;
      d->pid = s->pid;
      c << copy_string(&d->hostname, s->hostname);
      break;
    }
    case PMIX_REGEX2: {
      auto d = static_cast<pmix_regex2_t*>(dst);
      auto s = static_cast<const pmix_regex2_t*>(src);
      c << copy_string(&d->type, s->type);
      if (s->bytes != nullptr && s->len > 0) {
        d->bytes = static_cast<uint8_t*>(std::malloc(s->len));
        if (d->bytes == nullptr) {
          c << PMIX_ERR_NOMEM;
          break;
        }
        std::memcpy(d->bytes, s->bytes, s->len);
        d->len = s->len;
      }
      break;
    }
    case PMIX_DATA_BUFFER: {
      auto d = static_cast<pmix_data_buffer_t*>(dst);
      auto s = static_cast<const pmix_data_buffer_t*>(src);
      if (s->base_ptr != nullptr && s->bytes_allocated > 0) {
        d->base_ptr = static_cast<char*>(std::malloc(s->bytes_allocated));
        if (d->base_ptr == nullptr) {
          c << PMIX_ERR_NOMEM;
          break;
        }
        std::memcpy(d->base_ptr, s->base_ptr, s->bytes_used);
        d->pack_ptr = s->pack_ptr != nullptr ? d->base_ptr + (s->pack_ptr - s->base_ptr) : nullptr;
        d->unpack_ptr = s->unpack_ptr != nullptr ? d->base_ptr + (s->unpack_ptr - s->base_ptr) : nullptr;
        d->bytes_allocated = s->bytes_allocated;
        d->bytes_used = s->bytes_used;
      }
      break;
    }
    case PMIX_PROC_STATS: {
      auto d = static_cast<pmix_proc_stats_t*>(dst);
      auto s = static_cast<const pmix_proc_stats_t*>(src);
      *d = *s;
      d->node = nullptr;
      d->cmd = nullptr;
      c << copy_string(&d->node, s->node) << copy_string(&d->cmd, s->cmd);
      break;
    }
    case PMIX_DISK_STATS: {
      auto d = static_cast<pmix_disk_stats_t*>(dst);
      auto s = static_cast<const pmix_disk_stats_t*>(src);
      *d = *s;
      d->disk = nullptr;
      c << copy_string(&d->disk, s->disk);
      break;
    }
    case PMIX_NET_STATS: {
      auto d = static_cast<pmix_net_stats_t*>(dst);
      auto s = static_cast<const pmix_net_stats_t*>(src);
      *d = *s;
      d->net_interface = nullptr;
      c << copy_string(&d->net_interface, s->net_interface);
      break;
    }
    case PMIX_NODE_STATS: {
      auto d = static_cast<pmix_node_stats_t*>(dst);
      auto s = static_cast<const pmix_node_stats_t*>(src);
      *d = *s;
      d->node = nullptr;
      d->diskstats = nullptr;
      d->ndiskstats = 0;
      d->netstats = nullptr;
      d->nnetstats = 0;
      c << copy_string(&d->node, s->node)
        << copy_elements(reinterpret_cast<void**>(&d->diskstats), s->diskstats, s->ndiskstats,
                         PMIX_DISK_STATS)
        << copy_elements(reinterpret_cast<void**>(&d->netstats), s->netstats, s->nnetstats,
                         PMIX_NET_STATS);
      d->ndiskstats = d->diskstats != nullptr ? s->ndiskstats : 0;
      d->nnetstats = d->netstats != nullptr ? s->nnetstats : 0;
      break;
    }
    default:
      c << PMIX_ERR_NOT_SUPPORTED;
      break;
  }
  if (c.rc != PMIX_SUCCESS) {
    destruct_element(dst, type);
    std::memset(dst, 0, size);
  }
  return c.rc;
}

void destruct_element(void* elem, pmix_data_type_t type) {
  switch (type) {
    case PMIX_STRING:
      std::free(*static_cast<char**>(elem));
      *static_cast<char**>(elem) = nullptr;
      break;
    case PMIX_BYTE_OBJECT:
    case PMIX_COMPRESSED_STRING:
    case PMIX_REGEX:
    case PMIX_COMPRESSED_BYTE_OBJECT: {
      auto b = static_cast<pmix_byte_object_t*>(elem);
      std::free(b->bytes);
      b->bytes = nullptr;
      b->size = 0;
      break;
    }
    case PMIX_INFO: {
      auto i = static_cast<pmix_info_t*>(elem);
      if (!PMIX_INFO_IS_PERSISTENT(i)) {
        value_destruct(&i->value);
      }
      break;
    }
    case PMIX_VALUE:
      value_destruct(static_cast<pmix_value_t*>(elem));
      break;
    case PMIX_PDATA:
      value_destruct(&static_cast<pmix_pdata_t*>(elem)->value);
      break;
    case PMIX_APP: {
      auto a = static_cast<pmix_app_t*>(elem);
      std::free(a->cmd);
      pmix_argv_free(a->argv);
      pmix_argv_free(a->env);
      std::free(a->cwd);
      free_elements(a->info, a->ninfo, PMIX_INFO);
      a->cmd = a->cwd = nullptr;
      a->argv = a->env = nullptr;
      a->info = nullptr;
      a->ninfo = 0;
      break;
    }
    case PMIX_QUERY: {
      auto q = static_cast<pmix_query_t*>(elem);
      pmix_argv_free(q->keys);
      free_elements(q->qualifiers, q->nqual, PMIX_INFO);
      q->keys = nullptr;
      q->qualifiers = nullptr;
      q->nqual = 0;
      break;
    }
    case PMIX_PROC_INFO: {
      auto p = static_cast<pmix_proc_info_t*>(elem);
      std::free(p->hostname);
      std::free(p->executable_name);
      p->hostname = p->executable_name = nullptr;
      break;
    }
    case PMIX_ENVAR: {
      auto e = static_cast<pmix_envar_t*>(elem);
      std::free(e->envar);
      std::free(e->value);
      e->envar = e->value = nullptr;
      break;
    }
    case PMIX_COORD: {
      auto co = static_cast<pmix_coord_t*>(elem);
      std::free(co->coord);
      co->coord = nullptr;
      co->dims = 0;
      break;
    }
    case PMIX_REGATTR: {
      auto r = static_cast<pmix_regattr_t*>(elem);
      std::free(r->name);
      pmix_argv_free(r->description);
      r->name = nullptr;
      r->description = nullptr;
      break;
    }
    case PMIX_DATA_ARRAY: {
      auto d = static_cast<pmix_data_array_t*>(elem);
      free_elements(d->array, d->size, d->type);
      d->array = nullptr;
      d->size = 0;
      break;
    }
    case PMIX_PROC_CPUSET: {
      auto cs = static_cast<pmix_cpuset_t*>(elem);
      const auto* hw = pmix::api::loaded_hwloc();
      if (is_hwloc(cs->source) && cs->bitmap != nullptr && hw != nullptr) {
        hw->bitmap_free(static_cast<hwloc_bitmap_t>(cs->bitmap));
      }
      std::free(cs->source);
      cs->source = nullptr;
      cs->bitmap = nullptr;
      break;
    }
    case PMIX_TOPO: {
      auto t = static_cast<pmix_topology_t*>(elem);
      const auto* hw = pmix::api::loaded_hwloc();
      if (is_hwloc(t->source) && t->topology != nullptr && hw != nullptr) {
        hw->topology_destroy(static_cast<hwloc_topology_t>(t->topology));
      }
      std::free(t->source);
      t->source = nullptr;
      t->topology = nullptr;
      break;
    }
    case PMIX_GEOMETRY: {
      auto g = static_cast<pmix_geometry_t*>(elem);
      std::free(g->uuid);
      std::free(g->osname);
      free_elements(g->coordinates, g->ncoords, PMIX_COORD);
      g->uuid = g->osname = nullptr;
      g->coordinates = nullptr;
      g->ncoords = 0;
      break;
    }
    case PMIX_DEVICE_DIST: {
      auto d = static_cast<pmix_device_distance_t*>(elem);
      std::free(d->uuid);
      std::free(d->osname);
      d->uuid = d->osname = nullptr;
      break;
    }
    case PMIX_ENDPOINT: {
      auto e = static_cast<pmix_endpoint_t*>(elem);
      std::free(e->uuid);
      std::free(e->osname);
      std::free(e->endpt.bytes);
      e->uuid = e->osname = nullptr;
      e->endpt.bytes = nullptr;
      e->endpt.size = 0;
      break;
    }
    case PMIX_DEVICE: {
      auto d = static_cast<pmix_device_t*>(elem);
      std::free(d->uuid);
      std::free(d->osname);
      d->uuid = d->osname = nullptr;
      break;
    }
    case PMIX_NODE_PID: {
      auto d = static_cast<pmix_node_pid_t*>(elem);
      std::free(d->hostname);
      d->hostname = nullptr;
      break;
    }
    case PMIX_REGEX2: {
      auto r = static_cast<pmix_regex2_t*>(elem);
      std::free(r->type);
      std::free(r->bytes);
      r->type = nullptr;
      r->bytes = nullptr;
      r->len = 0;
      break;
    }
    case PMIX_DATA_BUFFER: {
      auto b = static_cast<pmix_data_buffer_t*>(elem);
      std::free(b->base_ptr);
      std::memset(b, 0, sizeof(*b));
      break;
    }
    case PMIX_PROC_STATS: {
      auto p = static_cast<pmix_proc_stats_t*>(elem);
      std::free(p->node);
      std::free(p->cmd);
      p->node = p->cmd = nullptr;
      break;
    }
    case PMIX_DISK_STATS: {
      auto d = static_cast<pmix_disk_stats_t*>(elem);
      std::free(d->disk);
      d->disk = nullptr;
      break;
    }
    case PMIX_NET_STATS: {
      auto n = static_cast<pmix_net_stats_t*>(elem);
      std::free(n->net_interface);
      n->net_interface = nullptr;
      break;
    }
    case PMIX_NODE_STATS: {
      auto n = static_cast<pmix_node_stats_t*>(elem);
      std::free(n->node);
      free_elements(n->diskstats, n->ndiskstats, PMIX_DISK_STATS);
      free_elements(n->netstats, n->nnetstats, PMIX_NET_STATS);
      n->node = nullptr;
      n->diskstats = nullptr;
      n->netstats = nullptr;
      n->ndiskstats = n->nnetstats = 0;
      break;
    }
    default:
      break;  // plain data owns nothing
  }
}

pmix_status_t copy_elements(void** dst, const void* src, std::size_t n, pmix_data_type_t type) {
  *dst = nullptr;
  if (src == nullptr || n == 0) {
    return PMIX_SUCCESS;
  }
  std::size_t size = element_size(type);
  if (size == 0) {
    return PMIX_ERR_NOT_SUPPORTED;
  }
  char* array = static_cast<char*>(std::calloc(n, size));
  if (array == nullptr) {
    return PMIX_ERR_NOMEM;
  }
  for (std::size_t k = 0; k < n; ++k) {
    pmix_status_t rc = copy_element(array + k * size, static_cast<const char*>(src) + k * size, type);
    if (rc != PMIX_SUCCESS) {
      free_elements(array, k, type);
      return rc;
    }
  }
  *dst = array;
  return PMIX_SUCCESS;
}

void free_elements(void* array, std::size_t n, pmix_data_type_t type) {
  if (array == nullptr) {
    return;
  }
  std::size_t size = element_size(type);
  for (std::size_t k = 0; size > 0 && k < n; ++k) {
    destruct_element(static_cast<char*>(array) + k * size, type);
  }
  std::free(array);
}

}  // namespace pmix::values

// ----- The C API ------------------------------------------------------------

using namespace pmix::values;

extern "C" {

PMIX_EXPORT pmix_status_t PMIx_Value_load(pmix_value_t* val, const void* data, pmix_data_type_t type) {
  if (val == nullptr) {
    return PMIX_ERR_BAD_PARAM;
  }
  std::memset(&val->data, 0, sizeof(val->data));
  val->type = PMIX_UNDEF;
  if (!value_can_hold(type)) {
    return PMIX_ERR_NOT_SUPPORTED;
  }
  val->type = type;
  if (data == nullptr) {
    if (type == PMIX_BOOL) {
      val->data.flag = true;  // a key given without a value means "true"
    }
    return PMIX_SUCCESS;
  }
  pmix_status_t rc = PMIX_SUCCESS;
  if (type == PMIX_UNDEF) {
    return PMIX_SUCCESS;
  } else if (type == PMIX_POINTER) {
    val->data.ptr = const_cast<void*>(data);
  } else if (std::size_t size = scalar_size(type); size > 0) {
    std::memcpy(&val->data, data, size);
  } else if (type == PMIX_STRING) {
    rc = copy_string(&val->data.string, static_cast<const char*>(data));
  } else if (is_byte_object(type)) {
    rc = copy_bytes(&val->data.bo, static_cast<const pmix_byte_object_t*>(data));
  } else if (type == PMIX_ENVAR) {
    rc = copy_element(&val->data.envar, data, PMIX_ENVAR);
  } else if (type == PMIX_PROC_NSPACE) {
    // the argument is a (possibly short) namespace string
    val->data.nspace = static_cast<pmix_nspace_t*>(std::calloc(1, sizeof(pmix_nspace_t)));
    if (val->data.nspace == nullptr) {
      rc = PMIX_ERR_NOMEM;
    } else {
      pmix_strncpy(*val->data.nspace, static_cast<const char*>(data), PMIX_MAX_NSLEN);
    }
  } else {
    rc = box_copy(&val->data.ptr, data, type);
  }
  if (rc != PMIX_SUCCESS) {
    std::memset(&val->data, 0, sizeof(val->data));
    val->type = PMIX_UNDEF;
  }
  return rc;
}

PMIX_EXPORT pmix_status_t PMIx_Value_unload(pmix_value_t* val, void** data, size_t* sz) {
  if (val == nullptr || data == nullptr || sz == nullptr) {
    return PMIX_ERR_BAD_PARAM;
  }
  pmix_data_type_t type = val->type;
  if (type == PMIX_UNDEF) {
    return PMIX_ERR_UNKNOWN_DATA_TYPE;
  }
  // Types copied into storage the caller provides.
  std::size_t size = type == PMIX_POINTER ? 0 : scalar_size(type);
  if (size > 0 || type == PMIX_PROC || type == PMIX_PROC_NSPACE) {
    if (*data == nullptr) {
      return PMIX_ERR_BAD_PARAM;
    }
    if (size > 0) {
      std::memcpy(*data, &val->data, size);
      *sz = size;
    } else if (type == PMIX_PROC) {
      if (val->data.proc == nullptr) {
        return PMIX_ERR_BAD_PARAM;
      }
      std::memcpy(*data, val->data.proc, sizeof(pmix_proc_t));
      *sz = sizeof(pmix_proc_t);
    } else {
      const char* ns = val->data.nspace != nullptr ? *val->data.nspace : "";
      std::size_t len = pmix_nslen(ns);
      std::memcpy(*data, ns, len);
      static_cast<char*>(*data)[len] = '\0';
      *sz = len;
    }
    return PMIX_SUCCESS;
  }
  if (type == PMIX_POINTER) {
    *data = val->data.ptr;
    *sz = sizeof(void*);
    return PMIX_SUCCESS;
  }
  if (type == PMIX_STRING) {
    // a new copy the caller frees
    *data = nullptr;
    *sz = 0;
    if (val->data.string != nullptr) {
      *data = dup_string(val->data.string);
      if (*data == nullptr) {
        return PMIX_ERR_NOMEM;
      }
      *sz = std::strlen(val->data.string);
    }
    return PMIX_SUCCESS;
  }
  if (is_byte_object(type)) {
    // the value's own bytes, still owned by the value (as in OpenPMIx)
    bool empty = val->data.bo.bytes == nullptr || val->data.bo.size == 0;
    *data = empty ? nullptr : val->data.bo.bytes;
    *sz = empty ? 0 : val->data.bo.size;
    return PMIX_SUCCESS;
  }
  if (type == PMIX_ENVAR || is_boxed(type)) {
    // a new deep copy of the element the caller releases
    const void* elem = type == PMIX_ENVAR ? &val->data.envar : val->data.ptr;
    void* copy = nullptr;
    pmix_status_t rc = elem == nullptr ? PMIX_ERR_BAD_PARAM : box_copy(&copy, elem, type);
    if (rc != PMIX_SUCCESS) {
      return rc;
    }
    *data = copy;
    *sz = element_size(type);
    return PMIX_SUCCESS;
  }
  return PMIX_ERR_NOT_SUPPORTED;
}

PMIX_EXPORT void PMIx_Value_destruct(pmix_value_t* val) {
  if (val != nullptr) {
    value_destruct(val);
  }
}

PMIX_EXPORT pmix_status_t PMIx_Value_xfer(pmix_value_t* dest, const pmix_value_t* src) {
  if (dest == nullptr || src == nullptr) {
    return PMIX_ERR_BAD_PARAM;
  }
  return value_copy(dest, src);
}

PMIX_EXPORT pmix_value_cmp_t PMIx_Value_compare(pmix_value_t* v1, pmix_value_t* v2) {
  if (v1 == nullptr || v2 == nullptr) {
    return PMIX_VALUE_COMPARISON_NOT_AVAIL;
  }
  return compare_value(v1, v2);
}

PMIX_EXPORT void PMIx_Data_array_destruct(pmix_data_array_t* d) {
  if (d == nullptr) {
    return;
  }
  free_elements(d->array, d->size, d->type);
  d->array = nullptr;
  d->size = 0;
  d->type = PMIX_UNDEF;
}

PMIX_EXPORT pmix_status_t PMIx_Info_load(pmix_info_t* info, const char* key, const void* data,
                                         pmix_data_type_t type) {
  if (info == nullptr || key == nullptr) {
    return PMIX_ERR_BAD_PARAM;
  }
  PMIX_LOAD_KEY(info->key, key);
  info->flags = 0;
  return PMIx_Value_load(&info->value, data, type);
}

PMIX_EXPORT pmix_status_t PMIx_Info_xfer(pmix_info_t* dest, const pmix_info_t* src) {
  if (dest == nullptr || src == nullptr) {
    return PMIX_ERR_BAD_PARAM;
  }
  return info_copy(dest, src);
}

PMIX_EXPORT void* PMIx_Info_list_start(void) { return new (std::nothrow) info_list; }

PMIX_EXPORT pmix_status_t PMIx_Info_list_add(void* ptr, const char* key, const void* value,
                                             pmix_data_type_t type) {
  if (ptr == nullptr || key == nullptr) {
    return PMIX_ERR_BAD_PARAM;
  }
  pmix_info_t info;
  PMIX_INFO_CONSTRUCT(&info);
  pmix_status_t rc = PMIx_Info_load(&info, key, value, type);
  if (rc == PMIX_SUCCESS) {
    rc = list_append(ptr, info);
  }
  if (rc != PMIX_SUCCESS) {
    value_destruct(&info.value);
  }
  return rc;
}

PMIX_EXPORT pmix_status_t PMIx_Info_list_insert(void* ptr, pmix_info_t* info) {
  if (ptr == nullptr || info == nullptr) {
    return PMIX_ERR_BAD_PARAM;
  }
  // Shares the caller's value: the entry is persistent, so neither the list
  // nor a converted copy ever frees it.
  pmix_info_t entry = *info;
  PMIX_INFO_SET_PERSISTENT(&entry);
  return list_append(ptr, entry);
}

PMIX_EXPORT pmix_status_t PMIx_Info_list_xfer(void* ptr, const pmix_info_t* info) {
  if (ptr == nullptr || info == nullptr) {
    return PMIX_ERR_BAD_PARAM;
  }
  pmix_info_t copy;
  PMIX_INFO_CONSTRUCT(&copy);
  pmix_status_t rc = info_copy(&copy, info);
  if (rc == PMIX_SUCCESS) {
    rc = list_append(ptr, copy);
    if (rc != PMIX_SUCCESS) {
      destruct_element(&copy, PMIX_INFO);
    }
  }
  return rc;
}

PMIX_EXPORT pmix_status_t PMIx_Info_list_convert(void* ptr, pmix_data_array_t* par) {
  if (ptr == nullptr || par == nullptr) {
    return PMIX_ERR_BAD_PARAM;
  }
  const auto& items = static_cast<info_list*>(ptr)->items;
  if (items.empty()) {
    return PMIX_ERR_EMPTY;
  }
  PMIX_DATA_ARRAY_CONSTRUCT(par, items.size(), PMIX_INFO);
  if (par->array == nullptr) {
    par->size = 0;
    return PMIX_ERR_NOMEM;
  }
  auto out = static_cast<pmix_info_t*>(par->array);
  for (std::size_t k = 0; k < items.size(); ++k) {
    pmix_status_t rc = info_copy(&out[k], &items[k]);
    if (rc != PMIX_SUCCESS) {
      PMIx_Data_array_destruct(par);
      return rc;
    }
  }
  return PMIX_SUCCESS;
}

PMIX_EXPORT void PMIx_Info_list_release(void* ptr) {
  auto list = static_cast<info_list*>(ptr);
  if (list == nullptr) {
    return;
  }
  for (auto& info : list->items) {
    destruct_element(&info, PMIX_INFO);
  }
  delete list;
}

PMIX_EXPORT pmix_status_t PMIx_Data_load(pmix_data_buffer_t* buffer, pmix_byte_object_t* payload) {
  if (buffer == nullptr || payload == nullptr) {
    return PMIX_ERR_BAD_PARAM;
  }
  std::free(buffer->base_ptr);
  buffer->base_ptr = payload->bytes;
  buffer->unpack_ptr = payload->bytes;
  buffer->pack_ptr = payload->bytes != nullptr ? payload->bytes + payload->size : nullptr;
  buffer->bytes_allocated = payload->bytes != nullptr ? payload->size : 0;
  buffer->bytes_used = buffer->bytes_allocated;
  payload->bytes = nullptr;
  payload->size = 0;
  return PMIX_SUCCESS;
}

PMIX_EXPORT pmix_status_t PMIx_Data_unload(pmix_data_buffer_t* buffer, pmix_byte_object_t* payload) {
  if (buffer == nullptr || payload == nullptr) {
    return PMIX_ERR_BAD_PARAM;
  }
  payload->bytes = nullptr;
  payload->size = 0;
  char* base = buffer->base_ptr;
  char* unread = buffer->unpack_ptr != nullptr ? buffer->unpack_ptr : base;
  std::size_t consumed = base != nullptr ? static_cast<std::size_t>(unread - base) : 0;
  std::size_t remaining = (base != nullptr && buffer->bytes_used > consumed) ? buffer->bytes_used - consumed : 0;
  if (remaining > 0 && consumed == 0) {
    payload->bytes = base;  // hand over the whole allocation
    payload->size = remaining;
    base = nullptr;
  } else if (remaining > 0) {
    payload->bytes = static_cast<char*>(std::malloc(remaining));
    if (payload->bytes == nullptr) {
      return PMIX_ERR_NOMEM;
    }
    std::memcpy(payload->bytes, unread, remaining);
    payload->size = remaining;
  }
  std::free(base);
  std::memset(buffer, 0, sizeof(*buffer));
  return PMIX_SUCCESS;
}

PMIX_EXPORT void PMIx_Topology_destruct(pmix_topology_t* topo) {
  if (topo == nullptr || !is_hwloc(topo->source)) {
    return;  // only hwloc topologies are understood; others are left alone
  }
  const auto* hw = pmix::api::loaded_hwloc();
  if (topo->topology != nullptr && hw != nullptr) {
    hw->topology_destroy(static_cast<hwloc_topology_t>(topo->topology));
  }
  std::free(topo->source);
  topo->source = nullptr;
  topo->topology = nullptr;
}

}  // extern "C"
