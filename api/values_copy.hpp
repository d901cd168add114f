// Element-level deep copy and release of PMIx data, shared by the value,
// info and data array helpers (values.cpp). Memory handed to callers always
// comes from malloc/calloc, so C code may release it with free().
#pragma once

#include <pmix_common.h>

#include <cstddef>
#include <string>
#include <vector>

namespace pmix::values {

// A malloc'd, NUL-terminated copy of `s` for a C caller to free() (NULL when
// out of memory).
char* dup_string(const std::string& s);

// Size of one element of type `type` inside a pmix_data_array_t; 0 when the
// type has no element representation (e.g. PMIX_VALUE's holes, PMIX_COMMAND).
std::size_t element_size(pmix_data_type_t type);

// Deep copy of one element of type `type` from `src` into `dst`, which points
// at element_size(type) bytes; `dst` is overwritten, not released first.
// PMIX_ERR_NOT_SUPPORTED for a type without elements, PMIX_ERR_NOMEM.
pmix_status_t copy_element(void* dst, const void* src, pmix_data_type_t type);

// Releases everything one element owns (not the element's own storage).
void destruct_element(void* elem, pmix_data_type_t type);

// Deep copy of `n` elements into a new calloc'ed array (*dst, NULL for
// n == 0). On failure nothing is left allocated.
pmix_status_t copy_elements(void** dst, const void* src, std::size_t n, pmix_data_type_t type);

// Releases `n` elements and then the array itself; `array` may be NULL.
void free_elements(void* array, std::size_t n, pmix_data_type_t type);

// Whether a pmix_value_t holds `type` through a pointer to one element.
bool held_by_pointer(pmix_data_type_t type);

// malloc'ed copy of `s` (NULL for NULL).
char* dup_string(const char* s);

// What PMIx_Info_list_start returns: the infos in order, each owning its
// value (a PMIx_Info_list_insert one is marked persistent and owns nothing).
struct info_list {
  std::vector<pmix_info_t> items;
};

}  // namespace pmix::values
