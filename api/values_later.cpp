// The value and info-list helpers OpenPMIx added after 4.2.2 (issue 37):
// PMIx_Value_get_number, PMIx_Value_get_size, PMIx_Info_get_size and the
// info-list forms add_unique, add_value(_unique), prepend, xfer_unique,
// get_info and get_size. Each does what OpenPMIx's man page for it says
// (docs/man/man3 on its master); all are computed here.
#include <pmix.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <new>
#include <optional>
#include <variant>

#include "api/values_copy.hpp"

namespace pmix::values {
namespace {

// ---- PMIx_Value_get_number ------------------------------------------------

// A number read from a value: signed, unsigned or floating.
using number = std::variant<std::int64_t, std::uint64_t, double>;

std::optional<number> read_number(const pmix_value_t& v) {
  switch (v.type) {
    case PMIX_INT: return number{std::int64_t{v.data.integer}};
    case PMIX_INT8: return number{std::int64_t{v.data.int8}};
    case PMIX_INT16: return number{std::int64_t{v.data.int16}};
    case PMIX_INT32: return number{std::int64_t{v.data.int32}};
    case PMIX_INT64: return number{v.data.int64};
    case PMIX_STATUS: return number{std::int64_t{v.data.status}};
    case PMIX_PID: return number{std::int64_t{v.data.pid}};
    case PMIX_UINT: return number{std::uint64_t{v.data.uint}};
    case PMIX_UINT8: return number{std::uint64_t{v.data.uint8}};
    case PMIX_UINT16: return number{std::uint64_t{v.data.uint16}};
    case PMIX_UINT32: return number{std::uint64_t{v.data.uint32}};
    case PMIX_UINT64: return number{v.data.uint64};
    case PMIX_SIZE: return number{std::uint64_t{v.data.size}};
    case PMIX_PROC_RANK: return number{std::uint64_t{v.data.rank}};
    case PMIX_FLOAT: return number{double{v.data.fval}};
    case PMIX_DOUBLE: return number{v.data.dval};
    default: return std::nullopt;
  }
}

// Stores `n` as a T at `dest`: PMIX_ERR_CHANGE_SIGN for a negative number
// into an unsigned T, PMIX_ERR_LOST_PRECISION for one outside T's range.
template <typename T>
pmix_status_t store(const number& n, void* dest) {
  constexpr bool is_unsigned = std::numeric_limits<T>::is_integer && !std::numeric_limits<T>::is_signed;
  T out{};
  if (const auto* i = std::get_if<std::int64_t>(&n)) {
    if (is_unsigned && *i < 0) return PMIX_ERR_CHANGE_SIGN;
    if constexpr (std::numeric_limits<T>::is_integer) {
      if (is_unsigned ? static_cast<std::uint64_t>(*i) > static_cast<std::uint64_t>(std::numeric_limits<T>::max())
                      : (*i < static_cast<std::int64_t>(std::numeric_limits<T>::min()) ||
                         *i > static_cast<std::int64_t>(std::numeric_limits<T>::max())))
        return PMIX_ERR_LOST_PRECISION;
    }
    out = static_cast<T>(*i);
  } else if (const auto* u = std::get_if<std::uint64_t>(&n)) {
    if constexpr (std::numeric_limits<T>::is_integer) {
      if (*u > static_cast<std::uint64_t>(std::numeric_limits<T>::max())) return PMIX_ERR_LOST_PRECISION;
    }
    out = static_cast<T>(*u);
  } else {
    const double d = std::get<double>(n);
    if constexpr (std::numeric_limits<T>::is_integer) {
      if (is_unsigned && d < 0) return PMIX_ERR_CHANGE_SIGN;
      // The fraction is dropped; the whole part must fit.
      if (std::isnan(d) || std::trunc(d) < static_cast<double>(std::numeric_limits<T>::min()) ||
          std::trunc(d) >= std::ldexp(1.0, std::numeric_limits<T>::digits))
        return PMIX_ERR_LOST_PRECISION;
    } else {
      if (std::isfinite(d) && std::fabs(d) > static_cast<double>(std::numeric_limits<T>::max()))
        return PMIX_ERR_LOST_PRECISION;
    }
    out = static_cast<T>(d);
  }
  std::memcpy(dest, &out, sizeof out);
  return PMIX_SUCCESS;
}

pmix_status_t store_as(const number& n, void* dest, pmix_data_type_t type) {
  switch (type) {
    case PMIX_INT: return store<int>(n, dest);
    case PMIX_INT8: return store<std::int8_t>(n, dest);
    case PMIX_INT16: return store<std::int16_t>(n, dest);
    case PMIX_INT32: return store<std::int32_t>(n, dest);
    case PMIX_INT64: return store<std::int64_t>(n, dest);
    case PMIX_STATUS: return store<pmix_status_t>(n, dest);
    case PMIX_PID: return store<pid_t>(n, dest);
    case PMIX_UINT: return store<unsigned>(n, dest);
    case PMIX_UINT8: return store<std::uint8_t>(n, dest);
    case PMIX_UINT16: return store<std::uint16_t>(n, dest);
    case PMIX_UINT32: return store<std::uint32_t>(n, dest);
    case PMIX_UINT64: return store<std::uint64_t>(n, dest);
    case PMIX_SIZE: return store<std::size_t>(n, dest);
    case PMIX_PROC_RANK: return store<pmix_rank_t>(n, dest);
    case PMIX_FLOAT: return store<float>(n, dest);
    case PMIX_DOUBLE: return store<double>(n, dest);
    default: return PMIX_ERR_BAD_PARAM;
  }
}

// ---- sizes ------------------------------------------------------------------

std::size_t text_size(const char* s) { return s != nullptr ? std::strlen(s) + 1 : 0; }

std::size_t argv_size(char* const* argv) {
  std::size_t n = 0;
  for (std::size_t k = 0; argv != nullptr && argv[k] != nullptr; ++k) n += sizeof(char*) + text_size(argv[k]);
  return argv != nullptr ? n + sizeof(char*) : 0;
}

pmix_status_t value_payload(const pmix_value_t& v, std::size_t& size);

// Bytes one element of `type` refers to beyond its own struct.
pmix_status_t referenced(const void* e, pmix_data_type_t type, std::size_t& size) {
  switch (type) {
    case PMIX_STRING: size += text_size(*static_cast<char* const*>(e)); return PMIX_SUCCESS;
    case PMIX_BYTE_OBJECT:
    case PMIX_COMPRESSED_STRING:
    case PMIX_REGEX:
    case PMIX_COMPRESSED_BYTE_OBJECT: size += static_cast<const pmix_byte_object_t*>(e)->size; return PMIX_SUCCESS;
    case PMIX_VALUE: return value_payload(*static_cast<const pmix_value_t*>(e), size);
    case PMIX_INFO: return value_payload(static_cast<const pmix_info_t*>(e)->value, size);
    case PMIX_PDATA: return value_payload(static_cast<const pmix_pdata_t*>(e)->value, size);
    case PMIX_APP: {
      const auto* a = static_cast<const pmix_app_t*>(e);
      size += text_size(a->cmd) + argv_size(a->argv) + argv_size(a->env) + text_size(a->cwd);
      for (std::size_t k = 0; a->info != nullptr && k < a->ninfo; ++k) {
        size += sizeof(pmix_info_t);
        if (auto rc = value_payload(a->info[k].value, size); rc != PMIX_SUCCESS) return rc;
      }
      return PMIX_SUCCESS;
    }
    case PMIX_QUERY: {
      const auto* q = static_cast<const pmix_query_t*>(e);
      size += argv_size(q->keys);
      for (std::size_t k = 0; q->qualifiers != nullptr && k < q->nqual; ++k) {
        size += sizeof(pmix_info_t);
        if (auto rc = value_payload(q->qualifiers[k].value, size); rc != PMIX_SUCCESS) return rc;
      }
      return PMIX_SUCCESS;
    }
    case PMIX_PROC_INFO: {
      const auto* p = static_cast<const pmix_proc_info_t*>(e);
      size += text_size(p->hostname) + text_size(p->executable_name);
      return PMIX_SUCCESS;
    }
    case PMIX_DATA_ARRAY: {
      const auto* a = static_cast<const pmix_data_array_t*>(e);
      const std::size_t each = element_size(a->type);
      if (a->size > 0 && (each == 0 || a->array == nullptr)) return PMIX_ERR_UNKNOWN_DATA_TYPE;
      size += a->size * each;
      for (std::size_t k = 0; k < a->size; ++k)
        if (auto rc = referenced(static_cast<const char*>(a->array) + k * each, a->type, size); rc != PMIX_SUCCESS)
          return rc;
      return PMIX_SUCCESS;
    }
    case PMIX_ENVAR: {
      const auto* v = static_cast<const pmix_envar_t*>(e);
      size += text_size(v->envar) + text_size(v->value);
      return PMIX_SUCCESS;
    }
    case PMIX_COORD: size += static_cast<const pmix_coord_t*>(e)->dims * sizeof(uint32_t); return PMIX_SUCCESS;
    case PMIX_REGATTR: {
      const auto* r = static_cast<const pmix_regattr_t*>(e);
      size += text_size(r->name) + argv_size(r->description);
      return PMIX_SUCCESS;
    }
    case PMIX_PROC_CPUSET: size += text_size(static_cast<const pmix_cpuset_t*>(e)->source); return PMIX_SUCCESS;
    case PMIX_TOPO: size += text_size(static_cast<const pmix_topology_t*>(e)->source); return PMIX_SUCCESS;
    case PMIX_GEOMETRY: {
      const auto* g = static_cast<const pmix_geometry_t*>(e);
      size += text_size(g->uuid) + text_size(g->osname);
      for (std::size_t k = 0; g->coordinates != nullptr && k < g->ncoords; ++k)
        size += sizeof(pmix_coord_t) + g->coordinates[k].dims * sizeof(uint32_t);
      return PMIX_SUCCESS;
    }
    case PMIX_DEVICE_DIST: {
      const auto* d = static_cast<const pmix_device_distance_t*>(e);
      size += text_size(d->uuid) + text_size(d->osname);
      return PMIX_SUCCESS;
    }
    case PMIX_DEVICE: {
      const auto* d = static_cast<const pmix_device_t*>(e);
      size += text_size(d->uuid) + text_size(d->osname);
      return PMIX_SUCCESS;
    }
    case PMIX_ENDPOINT: {
      const auto* p = static_cast<const pmix_endpoint_t*>(e);
      size += text_size(p->uuid) + text_size(p->osname) + p->endpt.size;
      return PMIX_SUCCESS;
    }
    case PMIX_DATA_BUFFER: size += static_cast<const pmix_data_buffer_t*>(e)->bytes_used; return PMIX_SUCCESS;
    case PMIX_PROC_STATS: {
      const auto* p = static_cast<const pmix_proc_stats_t*>(e);
      size += text_size(p->node) + text_size(p->cmd);
      return PMIX_SUCCESS;
    }
    case PMIX_DISK_STATS: size += text_size(static_cast<const pmix_disk_stats_t*>(e)->disk); return PMIX_SUCCESS;
    case PMIX_NET_STATS:
      size += text_size(static_cast<const pmix_net_stats_t*>(e)->net_interface);
      return PMIX_SUCCESS;
    case PMIX_NODE_STATS: {
      const auto* n = static_cast<const pmix_node_stats_t*>(e);
      size += text_size(n->node);
      for (std::size_t k = 0; n->diskstats != nullptr && k < n->ndiskstats; ++k)
        size += sizeof(pmix_disk_stats_t) + text_size(n->diskstats[k].disk);
      for (std::size_t k = 0; n->netstats != nullptr && k < n->nnetstats; ++k)
        size += sizeof(pmix_net_stats_t) + text_size(n->netstats[k].net_interface);
      return PMIX_SUCCESS;
    }
    case PMIX_NODE_PID: size += text_size(static_cast<const pmix_node_pid_t*>(e)->hostname); return PMIX_SUCCESS;
    case PMIX_REGEX2: {
      const auto* r = static_cast<const pmix_regex2_t*>(e);
      size += text_size(r->type) + r->len;
      return PMIX_SUCCESS;
    }
    default:
      // Plain data (numbers, enumerations, process ids, resource units).
      return element_size(type) > 0 ? PMIX_SUCCESS : PMIX_ERR_UNKNOWN_DATA_TYPE;
  }
}

// A value's payload: its datum (a pointed-to element counted whole, a
// string with its terminating NUL) and everything that refers to.
pmix_status_t value_payload(const pmix_value_t& v, std::size_t& size) {
  if (v.type == PMIX_UNDEF) return PMIX_ERR_UNKNOWN_DATA_TYPE;
  if (v.type == PMIX_STRING) {
    size += text_size(v.data.string);
    return PMIX_SUCCESS;
  }
  const std::size_t each = element_size(v.type);
  if (each == 0) return PMIX_ERR_UNKNOWN_DATA_TYPE;
  size += each;
  if (!held_by_pointer(v.type)) return referenced(&v.data, v.type, size);
  return v.data.ptr != nullptr ? referenced(v.data.ptr, v.type, size) : PMIX_SUCCESS;
}

// ---- info lists -------------------------------------------------------------

info_list* list_of(void* ptr) { return static_cast<info_list*>(ptr); }

// The entry of `list` whose key is `key`, or null.
pmix_info_t* find(info_list& list, const char* key) {
  for (auto& info : list.items)
    if (PMIx_Check_key(info.key, key)) return &info;
  return nullptr;
}

// Adds `entry` (which the list then owns) at the end or the front.
pmix_status_t add(info_list& list, pmix_info_t& entry, bool front) {
  try {
    list.items.insert(front ? list.items.begin() : list.items.end(), entry);
    return PMIX_SUCCESS;
  } catch (const std::bad_alloc&) {
    destruct_element(&entry, PMIX_INFO);
    return PMIX_ERR_NOMEM;
  }
}

// A new entry of `key` holding `value` (loaded from data and type, or a copy
// of a value), added at the end or the front.
pmix_status_t add_loaded(info_list& list, const char* key, const void* data, pmix_data_type_t type, bool front) {
  pmix_info_t entry;
  PMIX_INFO_CONSTRUCT(&entry);
  if (auto rc = PMIx_Info_load(&entry, key, data, type); rc != PMIX_SUCCESS) {
    destruct_element(&entry, PMIX_INFO);
    return rc;
  }
  return add(list, entry, front);
}

pmix_status_t add_copy(info_list& list, const char* key, const pmix_value_t* value) {
  pmix_info_t entry;
  PMIX_INFO_CONSTRUCT(&entry);
  PMIx_Load_key(entry.key, key);
  if (auto rc = PMIx_Value_xfer(&entry.value, value); rc != PMIX_SUCCESS) {
    destruct_element(&entry, PMIX_INFO);
    return rc;
  }
  return add(list, entry, false);
}

// Replaces an existing entry's value by a copy of `value`.
pmix_status_t replace(pmix_info_t& entry, const pmix_value_t* value) {
  pmix_value_t copy;
  PMIX_VALUE_CONSTRUCT(&copy);
  if (auto rc = PMIx_Value_xfer(&copy, value); rc != PMIX_SUCCESS) return rc;
  if (!PMIX_INFO_IS_PERSISTENT(&entry)) PMIx_Value_destruct(&entry.value);
  entry.value = copy;
  entry.flags &= ~PMIX_INFO_PERSISTENT;
  return PMIX_SUCCESS;
}

}  // namespace
}  // namespace pmix::values

using namespace pmix::values;

extern "C" {

// The number in `value` as `type`, into the caller's storage at `dest`:
// PMIX_ERR_BAD_PARAM unless both types are numbers, PMIX_ERR_CHANGE_SIGN
// for a negative number asked as an unsigned type, PMIX_ERR_LOST_PRECISION
// for one outside the asked type's range (a floating number's fraction is
// dropped silently).
PMIX_EXPORT pmix_status_t PMIx_Value_get_number(const pmix_value_t* value, void* dest, pmix_data_type_t type) {
  if (value == nullptr || dest == nullptr) return PMIX_ERR_BAD_PARAM;
  const auto n = read_number(*value);
  if (!n) return PMIX_ERR_BAD_PARAM;
  return store_as(*n, dest, type);
}

// sizeof(pmix_value_t) plus the payload (value_payload).
PMIX_EXPORT pmix_status_t PMIx_Value_get_size(const pmix_value_t* val, size_t* size) {
  if (val == nullptr || size == nullptr) return PMIX_ERR_BAD_PARAM;
  std::size_t n = sizeof(pmix_value_t);
  if (auto rc = value_payload(*val, n); rc != PMIX_SUCCESS) return rc;
  *size = n;
  return PMIX_SUCCESS;
}

// sizeof(pmix_info_t), the key with its NUL and the value's payload.
PMIX_EXPORT pmix_status_t PMIx_Info_get_size(const pmix_info_t* val, size_t* size) {
  if (val == nullptr || size == nullptr) return PMIX_ERR_BAD_PARAM;
  std::size_t n = sizeof(pmix_info_t) + strnlen(val->key, PMIX_MAX_KEYLEN) + 1;
  if (auto rc = value_payload(val->value, n); rc != PMIX_SUCCESS) return rc;
  *size = n;
  return PMIX_SUCCESS;
}

// As PMIx_Info_list_add, at the front.
PMIX_EXPORT pmix_status_t PMIx_Info_list_prepend(void* ptr, const char* key, const void* value,
                                                 pmix_data_type_t type) {
  if (ptr == nullptr || key == nullptr) return PMIX_ERR_BAD_PARAM;
  return add_loaded(*list_of(ptr), key, value, type, true);
}

// As PMIx_Info_list_add unless `key` is on the list already: then its value
// is replaced if `overwrite`, and left as it is if not (success either way).
PMIX_EXPORT pmix_status_t PMIx_Info_list_add_unique(void* ptr, const char* key, const void* value,
                                                    pmix_data_type_t type, bool overwrite) {
  if (ptr == nullptr || key == nullptr) return PMIX_ERR_BAD_PARAM;
  pmix_info_t* existing = find(*list_of(ptr), key);
  if (existing == nullptr) return add_loaded(*list_of(ptr), key, value, type, false);
  if (!overwrite) return PMIX_SUCCESS;
  pmix_value_t loaded;
  PMIX_VALUE_CONSTRUCT(&loaded);
  if (auto rc = PMIx_Value_load(&loaded, value, type); rc != PMIX_SUCCESS) return rc;
  auto rc = replace(*existing, &loaded);
  PMIx_Value_destruct(&loaded);
  return rc;
}

// Appends `key` with a copy of `value`.
PMIX_EXPORT pmix_status_t PMIx_Info_list_add_value(void* ptr, const char* key, const pmix_value_t* value) {
  if (ptr == nullptr || key == nullptr || value == nullptr) return PMIX_ERR_BAD_PARAM;
  return add_copy(*list_of(ptr), key, value);
}

PMIX_EXPORT pmix_status_t PMIx_Info_list_add_value_unique(void* ptr, const char* key, const pmix_value_t* value,
                                                          bool overwrite) {
  if (ptr == nullptr || key == nullptr || value == nullptr) return PMIX_ERR_BAD_PARAM;
  pmix_info_t* existing = find(*list_of(ptr), key);
  if (existing == nullptr) return add_copy(*list_of(ptr), key, value);
  return overwrite ? replace(*existing, value) : PMIX_SUCCESS;
}

// As PMIx_Info_list_xfer unless the info's key is on the list already.
PMIX_EXPORT pmix_status_t PMIx_Info_list_xfer_unique(void* ptr, const pmix_info_t* info, bool overwrite) {
  if (ptr == nullptr || info == nullptr) return PMIX_ERR_BAD_PARAM;
  pmix_info_t* existing = find(*list_of(ptr), info->key);
  if (existing == nullptr) return PMIx_Info_list_xfer(ptr, info);
  return overwrite ? replace(*existing, &info->value) : PMIX_SUCCESS;
}

// Walks the list: with `prev` NULL, the first entry; with the handle an
// earlier call left in *next, that entry. *next gets the following entry's
// handle, NULL after the last. NULL for an empty list or a foreign handle.
PMIX_EXPORT pmix_info_t* PMIx_Info_list_get_info(void* ptr, void* prev, void** next) {
  if (ptr == nullptr || next == nullptr) return nullptr;
  auto& items = list_of(ptr)->items;
  *next = nullptr;
  if (items.empty()) return nullptr;
  pmix_info_t* at = prev == nullptr ? items.data() : static_cast<pmix_info_t*>(prev);
  if (at < items.data() || at >= items.data() + items.size()) return nullptr;
  if (at + 1 < items.data() + items.size()) *next = at + 1;
  return at;
}

PMIX_EXPORT size_t PMIx_Info_list_get_size(void* ptr) { return ptr != nullptr ? list_of(ptr)->items.size() : 0; }

}  // extern "C"
