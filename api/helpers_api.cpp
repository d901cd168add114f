// The helpers OpenPMIx 4.2.3 and later export in place of its macros (issue
// 37): argv arrays, keys, namespaces and process ids, the directive flags of
// an info, the environment. A program built against a newer OpenPMIx header
// calls these where one built against 4.2.2's expanded the macro inline.
// Each does what OpenPMIx's man page for it says (docs/man/man3 at its
// master); all are computed here, none talks to a server. The struct
// families (construct, destruct, create, free, load, xfer) are our header's
// macros of the same names, so both forms behave alike.
#include <pmix.h>
#include <strings.h>

#include <cctype>
#include <cstdlib>
#include <cstring>
#include <string>

#include "api/values_copy.hpp"

extern char** environ;

namespace {

// A copy of `s` (with malloc, for the caller to free); null if out of memory.
char* copy(const char* s) { return ::strdup(s); }

// Grows `*argv` by one slot at `where` (0 or the end) holding a copy of `arg`.
pmix_status_t insert(char*** argv, const char* arg, bool front) {
  if (argv == nullptr || arg == nullptr) return PMIX_ERR_BAD_PARAM;
  const int n = PMIx_Argv_count(*argv);
  char* item = copy(arg);
  if (item == nullptr) return PMIX_ERR_OUT_OF_RESOURCE;
  auto** grown = static_cast<char**>(std::realloc(*argv, sizeof(char*) * (static_cast<std::size_t>(n) + 2)));
  if (grown == nullptr) {
    std::free(item);
    return PMIX_ERR_OUT_OF_RESOURCE;
  }
  if (front) {
    std::memmove(grown + 1, grown, sizeof(char*) * static_cast<std::size_t>(n));
    grown[0] = item;
  } else {
    grown[n] = item;
  }
  grown[n + 1] = nullptr;
  *argv = grown;
  return PMIX_SUCCESS;
}

bool starts_with_word(const char* text, const char* word) {
  return ::strncasecmp(text, word, std::strlen(word)) == 0;
}

// PMIx_Info_true's and PMIx_Value_true's reading of a value: that of 4.2.2's
// PMIX_INFO_TRUE (pmix_check_true, pmix_common.h), and for a string it
// leaves non-boolean the words and signed numbers OpenPMIx's later man page
// adds (enable, y, t; disable, n, f; "-1").
pmix_boolean_t truth_of(const pmix_value_t& v) {
  const pmix_boolean_t inline_reading = pmix_check_true(&v);
  if (inline_reading != PMIX_NON_BOOL || v.type != PMIX_STRING || v.data.string == nullptr) return inline_reading;
  const char* s = v.data.string;
  while (std::isspace(static_cast<unsigned char>(*s))) ++s;
  if (*s == '-' || *s == '+') {
    char* end = nullptr;
    const long n = std::strtol(s, &end, 10);
    if (end != s) return n == 0 ? PMIX_BOOL_FALSE : PMIX_BOOL_TRUE;
  }
  for (const char* word : {"enable", "y", "t"})
    if (starts_with_word(s, word)) return PMIX_BOOL_TRUE;
  for (const char* word : {"disable", "n", "f"})
    if (starts_with_word(s, word)) return PMIX_BOOL_FALSE;
  return PMIX_NON_BOOL;
}

std::string rank_text(pmix_rank_t r) {
  switch (r) {
    case PMIX_RANK_UNDEF: return "UNDEF";
    case PMIX_RANK_WILDCARD: return "WILDCARD";
    case PMIX_RANK_LOCAL_NODE: return "LOCAL_NODE";
    case PMIX_RANK_LOCAL_PEERS: return "LOCAL_PEERS";
    case PMIX_RANK_INVALID: return "INVALID";
    default: return std::to_string(r);
  }
}

// n elements, each made by `construct`, in one calloc'ed array (null for
// n == 0 or out of memory): the _create functions.
template <typename T>
T* create_constructed(size_t n, void (*construct)(T*)) {
  if (n == 0) return nullptr;
  auto* array = static_cast<T*>(std::calloc(n, sizeof(T)));
  for (size_t k = 0; array != nullptr && k < n; ++k) construct(&array[k]);
  return array;
}

}  // namespace

extern "C" {

// ---- argv arrays ----------------------------------------------------------

PMIX_EXPORT int PMIx_Argv_count(char** a) {
  int n = 0;
  while (a != nullptr && a[n] != nullptr) ++n;
  return n;
}

PMIX_EXPORT pmix_status_t PMIx_Argv_append_nosize(char*** argv, const char* arg) { return insert(argv, arg, false); }

PMIX_EXPORT pmix_status_t PMIx_Argv_prepend_nosize(char*** argv, const char* arg) { return insert(argv, arg, true); }

PMIX_EXPORT pmix_status_t PMIx_Argv_append_unique_nosize(char*** argv, const char* arg) {
  if (argv == nullptr || arg == nullptr) return PMIX_ERR_BAD_PARAM;
  for (int k = 0; *argv != nullptr && (*argv)[k] != nullptr; ++k)
    if (std::strcmp((*argv)[k], arg) == 0) return PMIX_SUCCESS;
  return insert(argv, arg, false);
}

PMIX_EXPORT void PMIx_Argv_free(char** argv) {
  if (argv == nullptr) return;
  for (char** p = argv; *p != nullptr; ++p) std::free(*p);
  std::free(argv);
}

PMIX_EXPORT char** PMIx_Argv_split_inter(const char* src_string, int delimiter, bool include_empty) {
  char** out = nullptr;
  if (src_string == nullptr) return nullptr;
  const char delim = static_cast<char>(delimiter);
  for (const char* p = src_string; *p != '\0';) {
    if (*p == delim) {
      // A leading delimiter, or one right after another, is an empty token.
      if (include_empty && (p == src_string || p[-1] == delim) && insert(&out, "", false) != PMIX_SUCCESS) {
        PMIx_Argv_free(out);
        return nullptr;
      }
      ++p;
      continue;
    }
    const char* end = std::strchr(p, delim);
    const std::string token = end == nullptr ? std::string{p} : std::string{p, end};
    if (insert(&out, token.c_str(), false) != PMIX_SUCCESS) {
      PMIx_Argv_free(out);
      return nullptr;
    }
    p += token.size();
  }
  return out;
}

PMIX_EXPORT char** PMIx_Argv_split(const char* src_string, int delimiter) {
  return PMIx_Argv_split_inter(src_string, delimiter, false);
}

PMIX_EXPORT char** PMIx_Argv_split_with_empty(const char* src_string, int delimiter) {
  return PMIx_Argv_split_inter(src_string, delimiter, true);
}

PMIX_EXPORT char* PMIx_Argv_join(char** argv, int delimiter) {
  std::string joined;
  for (int k = 0; argv != nullptr && argv[k] != nullptr; ++k) {
    if (k > 0) joined += static_cast<char>(delimiter);
    joined += argv[k];
  }
  return copy(joined.c_str());
}

PMIX_EXPORT char** PMIx_Argv_copy(char** argv) {
  if (argv == nullptr) return nullptr;
  char** out = nullptr;
  for (int k = 0; argv[k] != nullptr; ++k)
    if (insert(&out, argv[k], false) != PMIX_SUCCESS) {
      PMIx_Argv_free(out);
      return nullptr;
    }
  if (out == nullptr) out = static_cast<char**>(std::calloc(1, sizeof(char*)));  // an empty array stays one
  return out;
}

PMIX_EXPORT pmix_status_t PMIx_Setenv(const char* name, const char* value, bool overwrite, char*** env) {
  if (env == nullptr || name == nullptr) return PMIX_ERR_BAD_PARAM;
  if (*env == environ) {
    // The process's own environment: the C library's.
    const int rc = value == nullptr ? ::unsetenv(name) : ::setenv(name, value, overwrite ? 1 : 0);
    return rc == 0 ? PMIX_SUCCESS : PMIX_ERR_BAD_PARAM;
  }
  const std::string entry = std::string{name} + "=" + (value != nullptr ? value : "");
  const std::size_t prefix = std::strlen(name) + 1;
  for (int k = 0; *env != nullptr && (*env)[k] != nullptr; ++k) {
    if (std::strncmp((*env)[k], entry.c_str(), prefix) != 0) continue;
    if (!overwrite) return PMIX_ERR_EXISTS;
    char* replaced = copy(entry.c_str());
    if (replaced == nullptr) return PMIX_ERR_OUT_OF_RESOURCE;
    std::free((*env)[k]);
    (*env)[k] = replaced;
    return PMIX_SUCCESS;
  }
  return insert(env, entry.c_str(), false);
}

// ---- keys, namespaces, process ids ------------------------------------------

PMIX_EXPORT void PMIx_Load_key(pmix_key_t key, const char* src) {
  std::memset(key, 0, PMIX_MAX_KEYLEN + 1);
  if (src != nullptr) std::strncpy(key, src, PMIX_MAX_KEYLEN);
}

PMIX_EXPORT bool PMIx_Check_key(const char* key, const char* str) {
  return std::strncmp(key, str, PMIX_MAX_KEYLEN) == 0;
}

PMIX_EXPORT bool PMIx_Check_reserved_key(const char* key) { return std::strncmp(key, "pmix", 4) == 0; }

PMIX_EXPORT void PMIx_Load_nspace(pmix_nspace_t nspace, const char* str) {
  std::memset(nspace, 0, PMIX_MAX_NSLEN + 1);
  if (str != nullptr) std::strncpy(nspace, str, PMIX_MAX_NSLEN);
}

PMIX_EXPORT bool PMIx_Nspace_invalid(const char* nspace) { return nspace == nullptr || nspace[0] == '\0'; }

PMIX_EXPORT bool PMIx_Check_nspace(const char* key1, const char* key2) {
  // An invalid namespace matches any.
  if (PMIx_Nspace_invalid(key1) || PMIx_Nspace_invalid(key2)) return true;
  return std::strncmp(key1, key2, PMIX_MAX_NSLEN) == 0;
}

PMIX_EXPORT bool PMIx_Check_rank(pmix_rank_t a, pmix_rank_t b) {
  return a == b || a == PMIX_RANK_WILDCARD || b == PMIX_RANK_WILDCARD;
}

PMIX_EXPORT bool PMIx_Rank_valid(pmix_rank_t a) { return a < PMIX_RANK_VALID; }

PMIX_EXPORT void PMIx_Load_procid(pmix_proc_t* p, const char* ns, pmix_rank_t rk) {
  PMIx_Load_nspace(p->nspace, ns);
  p->rank = rk;
}

PMIX_EXPORT void PMIx_Xfer_procid(pmix_proc_t* dst, const pmix_proc_t* src) { std::memcpy(dst, src, sizeof *dst); }

PMIX_EXPORT bool PMIx_Check_procid(const pmix_proc_t* a, const pmix_proc_t* b) {
  return PMIx_Check_nspace(a->nspace, b->nspace) && PMIx_Check_rank(a->rank, b->rank);
}

PMIX_EXPORT bool PMIx_Procid_invalid(const pmix_proc_t* p) {
  return PMIx_Nspace_invalid(p->nspace) || p->rank == PMIX_RANK_INVALID;
}

PMIX_EXPORT char* PMIx_Proc_string(const pmix_proc_t* proc) {
  if (proc == nullptr) return copy("[NO-NAME]");
  const std::string ns{proc->nspace, strnlen(proc->nspace, PMIX_MAX_NSLEN)};
  return copy(("[" + ns + "," + rank_text(proc->rank) + "]").c_str());
}

// "cluster:nspace" in target, or an empty target when the two do not fit.
PMIX_EXPORT void PMIx_Multicluster_nspace_construct(pmix_nspace_t target, pmix_nspace_t cluster,
                                                    pmix_nspace_t nspace) {
  PMIX_MULTICLUSTER_NSPACE_CONSTRUCT(target, cluster, nspace);
}

// Splits target at its first ':' (master's form: both outputs cleared first;
// without a ':' the whole of target is the cluster and nspace stays empty).
PMIX_EXPORT void PMIx_Multicluster_nspace_parse(pmix_nspace_t target, pmix_nspace_t cluster,
                                                pmix_nspace_t nspace) {
  if (cluster == nullptr || nspace == nullptr) return;
  std::memset(cluster, 0, PMIX_MAX_NSLEN + 1);
  std::memset(nspace, 0, PMIX_MAX_NSLEN + 1);
  if (target == nullptr) return;
  const size_t len = strnlen(target, PMIX_MAX_NSLEN);
  const char* colon = static_cast<const char*>(std::memchr(target, ':', len));
  const size_t head = colon != nullptr ? static_cast<size_t>(colon - target) : len;
  std::memcpy(cluster, target, head);
  if (colon != nullptr) std::memcpy(nspace, colon + 1, len - head - 1);
}

// ---- an info's directives -------------------------------------------------

PMIX_EXPORT void PMIx_Info_required(pmix_info_t* p) { p->flags |= PMIX_INFO_REQD; }
PMIX_EXPORT void PMIx_Info_optional(pmix_info_t* p) { p->flags &= ~PMIX_INFO_REQD; }
PMIX_EXPORT bool PMIx_Info_is_required(const pmix_info_t* p) { return (p->flags & PMIX_INFO_REQD) != 0; }
PMIX_EXPORT bool PMIx_Info_is_optional(const pmix_info_t* p) { return (p->flags & PMIX_INFO_REQD) == 0; }
PMIX_EXPORT void PMIx_Info_processed(pmix_info_t* p) { p->flags |= PMIX_INFO_REQD_PROCESSED; }
PMIX_EXPORT bool PMIx_Info_was_processed(const pmix_info_t* p) { return (p->flags & PMIX_INFO_REQD_PROCESSED) != 0; }
PMIX_EXPORT void PMIx_Info_set_end(pmix_info_t* p) { p->flags |= PMIX_INFO_ARRAY_END; }
PMIX_EXPORT bool PMIx_Info_is_end(const pmix_info_t* p) { return (p->flags & PMIX_INFO_ARRAY_END) != 0; }
PMIX_EXPORT void PMIx_Info_qualifier(pmix_info_t* p) { p->flags |= PMIX_INFO_QUALIFIER; }
PMIX_EXPORT bool PMIx_Info_is_qualifier(const pmix_info_t* p) { return (p->flags & PMIX_INFO_QUALIFIER) != 0; }
PMIX_EXPORT void PMIx_Info_persistent(pmix_info_t* p) { p->flags |= PMIX_INFO_PERSISTENT; }
PMIX_EXPORT bool PMIx_Info_is_persistent(const pmix_info_t* p) { return (p->flags & PMIX_INFO_PERSISTENT) != 0; }

PMIX_EXPORT pmix_boolean_t PMIx_Info_true(const pmix_info_t* p) { return truth_of(p->value); }
PMIX_EXPORT pmix_boolean_t PMIx_Value_true(const pmix_value_t* v) { return truth_of(*v); }


// ---- construct, destruct, create, free, load (each as our header's macro) ----

PMIX_EXPORT void PMIx_Info_construct(pmix_info_t* p) { PMIX_INFO_CONSTRUCT(p); }
PMIX_EXPORT void PMIx_Info_destruct(pmix_info_t* p) { PMIX_INFO_DESTRUCT(p); }  // not a persistent one's value
PMIX_EXPORT pmix_info_t* PMIx_Info_create(size_t n) {
  pmix_info_t* p;
  PMIX_INFO_CREATE(p, n);  // the last flagged PMIX_INFO_ARRAY_END
  return p;
}
PMIX_EXPORT void PMIx_Info_free(pmix_info_t* p, size_t n) { PMIX_INFO_FREE(p, n); }

PMIX_EXPORT void PMIx_Value_construct(pmix_value_t* val) { PMIX_VALUE_CONSTRUCT(val); }
PMIX_EXPORT pmix_value_t* PMIx_Value_create(size_t n) {
  pmix_value_t* v;
  PMIX_VALUE_CREATE(v, n);
  for (size_t k = 0; v != nullptr && k < n; ++k) PMIX_VALUE_CONSTRUCT(&v[k]);
  return v;
}
PMIX_EXPORT void PMIx_Value_free(pmix_value_t* v, size_t n) { PMIX_VALUE_FREE(v, n); }

PMIX_EXPORT void PMIx_Proc_construct(pmix_proc_t* p) { PMIX_PROC_CONSTRUCT(p); }
PMIX_EXPORT void PMIx_Proc_destruct(pmix_proc_t* p) { PMIX_PROC_CONSTRUCT(p); }  // it owns nothing: cleared
PMIX_EXPORT pmix_proc_t* PMIx_Proc_create(size_t n) {
  pmix_proc_t* p;
  PMIX_PROC_CREATE(p, n);
  return p;
}
PMIX_EXPORT void PMIx_Proc_free(pmix_proc_t* p, size_t n) {
  (void)n;
  PMIX_PROC_FREE(p, n);
}
PMIX_EXPORT void PMIx_Proc_load(pmix_proc_t* p, const char* nspace, pmix_rank_t rank) {
  PMIX_PROC_CONSTRUCT(p);
  PMIx_Load_nspace(p->nspace, nspace);
  p->rank = rank;
}

PMIX_EXPORT void PMIx_Byte_object_construct(pmix_byte_object_t* b) { PMIX_BYTE_OBJECT_CONSTRUCT(b); }
PMIX_EXPORT void PMIx_Byte_object_destruct(pmix_byte_object_t* g) { PMIX_BYTE_OBJECT_DESTRUCT(g); }
PMIX_EXPORT pmix_byte_object_t* PMIx_Byte_object_create(size_t n) {
  pmix_byte_object_t* b;
  PMIX_BYTE_OBJECT_CREATE(b, n);
  return b;
}
PMIX_EXPORT void PMIx_Byte_object_free(pmix_byte_object_t* g, size_t n) { PMIX_BYTE_OBJECT_FREE(g, n); }
// Takes `d` over (no copy).
PMIX_EXPORT void PMIx_Byte_object_load(pmix_byte_object_t* b, char* d, size_t sz) {
  b->bytes = d;
  b->size = sz;
}

PMIX_EXPORT void PMIx_Envar_construct(pmix_envar_t* e) { PMIX_ENVAR_CONSTRUCT(e); }
PMIX_EXPORT void PMIx_Envar_destruct(pmix_envar_t* e) { PMIX_ENVAR_DESTRUCT(e); }
PMIX_EXPORT pmix_envar_t* PMIx_Envar_create(size_t n) {
  pmix_envar_t* e;
  PMIX_ENVAR_CREATE(e, n);
  return e;
}
PMIX_EXPORT void PMIx_Envar_free(pmix_envar_t* e, size_t n) { PMIX_ENVAR_FREE(e, n); }
// Copies `var` and `value` (a NULL one leaves its field as it is).
PMIX_EXPORT void PMIx_Envar_load(pmix_envar_t* e, char* var, char* value, char separator) {
  PMIX_ENVAR_LOAD(e, var, value, separator);
}

PMIX_EXPORT void PMIx_Pdata_construct(pmix_pdata_t* p) { PMIX_PDATA_CONSTRUCT(p); }
PMIX_EXPORT void PMIx_Pdata_destruct(pmix_pdata_t* p) { PMIX_PDATA_DESTRUCT(p); }
PMIX_EXPORT pmix_pdata_t* PMIx_Pdata_create(size_t n) {
  pmix_pdata_t* p;
  PMIX_PDATA_CREATE(p, n);
  return p;
}
PMIX_EXPORT void PMIx_Pdata_free(pmix_pdata_t* p, size_t n) { PMIX_PDATA_FREE(p, n); }
PMIX_EXPORT void PMIx_Pdata_load(pmix_pdata_t* dest, const pmix_proc_t* p, const char* key, const void* data,
                                 pmix_data_type_t type) {
  PMIX_PDATA_LOAD(dest, p, key, data, type);
}
PMIX_EXPORT void PMIx_Pdata_xfer(pmix_pdata_t* dest, pmix_pdata_t* src) { PMIX_PDATA_XFER(dest, src); }

PMIX_EXPORT void PMIx_Query_construct(pmix_query_t* p) { PMIX_QUERY_CONSTRUCT(p); }
PMIX_EXPORT void PMIx_Query_destruct(pmix_query_t* p) { PMIX_QUERY_DESTRUCT(p); }
PMIX_EXPORT pmix_query_t* PMIx_Query_create(size_t n) {
  pmix_query_t* q;
  PMIX_QUERY_CREATE(q, n);
  return q;
}
PMIX_EXPORT void PMIx_Query_free(pmix_query_t* p, size_t n) { PMIX_QUERY_FREE(p, n); }
PMIX_EXPORT void PMIx_Query_qualifiers_create(pmix_query_t* p, size_t n) { PMIX_QUERY_QUALIFIERS_CREATE(p, n); }
PMIX_EXPORT void PMIx_Query_release(pmix_query_t* p) { PMIX_QUERY_RELEASE(p); }

PMIX_EXPORT void PMIx_App_construct(pmix_app_t* p) { PMIX_APP_CONSTRUCT(p); }
PMIX_EXPORT void PMIx_App_destruct(pmix_app_t* p) { PMIX_APP_DESTRUCT(p); }
PMIX_EXPORT pmix_app_t* PMIx_App_create(size_t n) {
  pmix_app_t* a;
  PMIX_APP_CREATE(a, n);
  return a;
}
PMIX_EXPORT void PMIx_App_free(pmix_app_t* p, size_t n) { PMIX_APP_FREE(p, n); }
PMIX_EXPORT void PMIx_App_info_create(pmix_app_t* p, size_t n) { PMIX_APP_INFO_CREATE(p, n); }
PMIX_EXPORT void PMIx_App_release(pmix_app_t* p) { PMIX_APP_RELEASE(p); }

PMIX_EXPORT void PMIx_Regattr_construct(pmix_regattr_t* p) { PMIX_REGATTR_CONSTRUCT(p); }
PMIX_EXPORT void PMIx_Regattr_destruct(pmix_regattr_t* p) { PMIX_REGATTR_DESTRUCT(p); }
PMIX_EXPORT pmix_regattr_t* PMIx_Regattr_create(size_t n) {
  pmix_regattr_t* r;
  PMIX_REGATTR_CREATE(r, n);
  return r;
}
PMIX_EXPORT void PMIx_Regattr_free(pmix_regattr_t* p, size_t n) { PMIX_REGATTR_FREE(p, n); }
PMIX_EXPORT void PMIx_Regattr_load(pmix_regattr_t* info, const char* name, const char* key, pmix_data_type_t type,
                                   const char* description) {
  PMIX_REGATTR_LOAD(info, name, key, type, description);
}
PMIX_EXPORT void PMIx_Regattr_xfer(pmix_regattr_t* dest, const pmix_regattr_t* src) { PMIX_REGATTR_XFER(dest, src); }

PMIX_EXPORT void PMIx_Data_array_init(pmix_data_array_t* p, pmix_data_type_t type) { PMIX_DATA_ARRAY_INIT(p, type); }
PMIX_EXPORT void PMIx_Data_array_construct(pmix_data_array_t* p, size_t num, pmix_data_type_t type) {
  PMIX_DATA_ARRAY_CONSTRUCT(p, num, type);
}
PMIX_EXPORT pmix_data_array_t* PMIx_Data_array_create(size_t n, pmix_data_type_t type) {
  pmix_data_array_t* d;
  PMIX_DATA_ARRAY_CREATE(d, n, type);
  return d;
}
PMIX_EXPORT void PMIx_Data_array_free(pmix_data_array_t* p) { PMIX_DATA_ARRAY_FREE(p); }

// ---- the struct families of OpenPMIx 4.2.9 to master ------------------------
// Each as our header's macro of the same name where 4.2.2 has one; the types
// 4.2.2 lacks (device, resource unit, node pid, regex2) through the element
// operations the value helpers use (values_copy.hpp). _create(0) gives NULL;
// _free(p, n) destructs n elements and frees the array.

PMIX_EXPORT void PMIx_Coord_construct(pmix_coord_t* m) { PMIX_COORD_CONSTRUCT(m); }
PMIX_EXPORT void PMIx_Coord_destruct(pmix_coord_t* m) { PMIX_COORD_DESTRUCT(m); }
// `number` coordinates of `dims` zeroed values each.
PMIX_EXPORT pmix_coord_t* PMIx_Coord_create(size_t dims, size_t number) {
  pmix_coord_t* m;
  PMIX_COORD_CREATE(m, number, dims);
  return m;
}
PMIX_EXPORT void PMIx_Coord_free(pmix_coord_t* m, size_t number) { PMIX_COORD_FREE(m, number); }

PMIX_EXPORT void PMIx_Geometry_construct(pmix_geometry_t* g) { PMIX_GEOMETRY_CONSTRUCT(g); }
PMIX_EXPORT void PMIx_Geometry_destruct(pmix_geometry_t* g) { PMIX_GEOMETRY_DESTRUCT(g); }
PMIX_EXPORT pmix_geometry_t* PMIx_Geometry_create(size_t n) { return create_constructed(n, &PMIx_Geometry_construct); }
PMIX_EXPORT void PMIx_Geometry_free(pmix_geometry_t* g, size_t n) { PMIX_GEOMETRY_FREE(g, n); }

PMIX_EXPORT void PMIx_Device_distance_construct(pmix_device_distance_t* d) { PMIX_DEVICE_DIST_CONSTRUCT(d); }
PMIX_EXPORT void PMIx_Device_distance_destruct(pmix_device_distance_t* d) {
  pmix::values::destruct_element(d, PMIX_DEVICE_DIST);  // the macro leaves the freed pointers
}
PMIX_EXPORT pmix_device_distance_t* PMIx_Device_distance_create(size_t n) {
  return create_constructed(n, &PMIx_Device_distance_construct);
}
PMIX_EXPORT void PMIx_Device_distance_free(pmix_device_distance_t* d, size_t n) {
  pmix::values::free_elements(d, n, PMIX_DEVICE_DIST);
}

PMIX_EXPORT void PMIx_Endpoint_construct(pmix_endpoint_t* e) { PMIX_ENDPOINT_CONSTRUCT(e); }
PMIX_EXPORT void PMIx_Endpoint_destruct(pmix_endpoint_t* e) { pmix::values::destruct_element(e, PMIX_ENDPOINT); }
PMIX_EXPORT pmix_endpoint_t* PMIx_Endpoint_create(size_t n) { return create_constructed(n, &PMIx_Endpoint_construct); }
PMIX_EXPORT void PMIx_Endpoint_free(pmix_endpoint_t* e, size_t n) { pmix::values::free_elements(e, n, PMIX_ENDPOINT); }

PMIX_EXPORT void PMIx_Proc_info_construct(pmix_proc_info_t* p) { PMIX_PROC_INFO_CONSTRUCT(p); }
PMIX_EXPORT void PMIx_Proc_info_destruct(pmix_proc_info_t* p) { PMIX_PROC_INFO_DESTRUCT(p); }
PMIX_EXPORT pmix_proc_info_t* PMIx_Proc_info_create(size_t n) { return create_constructed(n, &PMIx_Proc_info_construct); }
PMIX_EXPORT void PMIx_Proc_info_free(pmix_proc_info_t* p, size_t n) { PMIX_PROC_INFO_FREE(p, n); }

PMIX_EXPORT void PMIx_Proc_stats_construct(pmix_proc_stats_t* p) { PMIX_PROC_STATS_CONSTRUCT(p); }
PMIX_EXPORT void PMIx_Proc_stats_destruct(pmix_proc_stats_t* p) { PMIX_PROC_STATS_DESTRUCT(p); }
PMIX_EXPORT pmix_proc_stats_t* PMIx_Proc_stats_create(size_t n) { return create_constructed(n, &PMIx_Proc_stats_construct); }
PMIX_EXPORT void PMIx_Proc_stats_free(pmix_proc_stats_t* p, size_t n) { PMIX_PROC_STATS_FREE(p, n); }

PMIX_EXPORT void PMIx_Disk_stats_construct(pmix_disk_stats_t* p) { PMIX_DISK_STATS_CONSTRUCT(p); }
PMIX_EXPORT void PMIx_Disk_stats_destruct(pmix_disk_stats_t* p) { PMIX_DISK_STATS_DESTRUCT(p); }
PMIX_EXPORT pmix_disk_stats_t* PMIx_Disk_stats_create(size_t n) { return create_constructed(n, &PMIx_Disk_stats_construct); }
PMIX_EXPORT void PMIx_Disk_stats_free(pmix_disk_stats_t* p, size_t n) { PMIX_DISK_STATS_FREE(p, n); }

PMIX_EXPORT void PMIx_Net_stats_construct(pmix_net_stats_t* p) { PMIX_NET_STATS_CONSTRUCT(p); }
PMIX_EXPORT void PMIx_Net_stats_destruct(pmix_net_stats_t* p) { PMIX_NET_STATS_DESTRUCT(p); }
PMIX_EXPORT pmix_net_stats_t* PMIx_Net_stats_create(size_t n) { return create_constructed(n, &PMIx_Net_stats_construct); }
PMIX_EXPORT void PMIx_Net_stats_free(pmix_net_stats_t* p, size_t n) { PMIX_NET_STATS_FREE(p, n); }

PMIX_EXPORT void PMIx_Node_stats_construct(pmix_node_stats_t* p) { PMIX_NODE_STATS_CONSTRUCT(p); }
PMIX_EXPORT void PMIx_Node_stats_destruct(pmix_node_stats_t* p) { PMIX_NODE_STATS_DESTRUCT(p); }
PMIX_EXPORT pmix_node_stats_t* PMIx_Node_stats_create(size_t n) { return create_constructed(n, &PMIx_Node_stats_construct); }
PMIX_EXPORT void PMIx_Node_stats_free(pmix_node_stats_t* p, size_t n) { PMIX_NODE_STATS_FREE(p, n); }

PMIX_EXPORT void PMIx_Topology_construct(pmix_topology_t* t) { PMIX_TOPOLOGY_CONSTRUCT(t); }
PMIX_EXPORT pmix_topology_t* PMIx_Topology_create(size_t n) { return create_constructed(n, &PMIx_Topology_construct); }
PMIX_EXPORT void PMIx_Topology_free(pmix_topology_t* t, size_t n) {
  for (size_t k = 0; t != nullptr && k < n; ++k) PMIx_Topology_destruct(&t[k]);
  std::free(t);
}

PMIX_EXPORT void PMIx_Fabric_construct(pmix_fabric_t* f) { PMIX_FABRIC_CONSTRUCT(f); }

PMIX_EXPORT void PMIx_Device_construct(pmix_device_t* d) { *d = pmix_device_t{nullptr, nullptr, PMIX_DEVTYPE_UNKNOWN}; }
PMIX_EXPORT void PMIx_Device_destruct(pmix_device_t* d) { pmix::values::destruct_element(d, PMIX_DEVICE); }
PMIX_EXPORT pmix_device_t* PMIx_Device_create(size_t n) { return create_constructed(n, &PMIx_Device_construct); }
PMIX_EXPORT void PMIx_Device_free(pmix_device_t* d, size_t n) { pmix::values::free_elements(d, n, PMIX_DEVICE); }

PMIX_EXPORT void PMIx_Resource_unit_construct(pmix_resource_unit_t* u) {
  *u = pmix_resource_unit_t{PMIX_DEVTYPE_UNKNOWN, 0};
}
PMIX_EXPORT void PMIx_Resource_unit_destruct(pmix_resource_unit_t* u) { PMIx_Resource_unit_construct(u); }
PMIX_EXPORT pmix_resource_unit_t* PMIx_Resource_unit_create(size_t n) {
  return create_constructed(n, &PMIx_Resource_unit_construct);
}
PMIX_EXPORT void PMIx_Resource_unit_free(pmix_resource_unit_t* u, size_t) { std::free(u); }

PMIX_EXPORT void PMIx_Node_pid_construct(pmix_node_pid_t* p) { *p = pmix_node_pid_t{nullptr, UINT32_MAX, -1}; }
PMIX_EXPORT void PMIx_Node_pid_destruct(pmix_node_pid_t* p) { pmix::values::destruct_element(p, PMIX_NODE_PID); }
PMIX_EXPORT pmix_node_pid_t* PMIx_Node_pid_create(size_t n) { return create_constructed(n, &PMIx_Node_pid_construct); }
PMIX_EXPORT void PMIx_Node_pid_free(pmix_node_pid_t* p, size_t n) { pmix::values::free_elements(p, n, PMIX_NODE_PID); }

PMIX_EXPORT void PMIx_Regex2_construct(pmix_regex2_t* r) { *r = pmix_regex2_t{nullptr, nullptr, 0}; }
PMIX_EXPORT void PMIx_Regex2_destruct(pmix_regex2_t* r) { pmix::values::destruct_element(r, PMIX_REGEX2); }
PMIX_EXPORT pmix_regex2_t* PMIx_Regex2_create(size_t n) { return create_constructed(n, &PMIx_Regex2_construct); }
PMIX_EXPORT void PMIx_Regex2_free(pmix_regex2_t* r, size_t n) { pmix::values::free_elements(r, n, PMIX_REGEX2); }

}  // extern "C"
