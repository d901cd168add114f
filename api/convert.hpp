// The one place where C API data (pmix_value_t, pmix_info_t, pmix_proc_t)
// becomes the library's C++ values (common/value.hpp) and back.
//
// C -> C++ copies everything, so the caller's memory is never kept. C++ -> C
// allocates with malloc/calloc exactly as PMIx_Value_load would, so the caller
// releases the result with PMIx_Value_destruct / PMIX_INFO_FREE.
#pragma once

#include <pmix_common.h>

#include <string>
#include <vector>

#include "common/value.hpp"

namespace pmix::convert {

// Bounded copies of fixed-size C strings (a missing NUL is tolerated).
std::string key(const char* k);
std::string nspace(const char* ns);
proc_id proc(const pmix_proc_t& p);

// PMIX_ERR_NOT_SUPPORTED for a type that cannot be copied (topologies,
// queries...), PMIX_ERR_BAD_PARAM for inconsistent data (a NULL array).
pmix_status_t from_c(const pmix_value_t& in, value& out);
pmix_status_t from_c(const pmix_info_t* info, size_t ninfo, info_list& out);
pmix_status_t from_c(const pmix_proc_t* procs, size_t nprocs, std::vector<proc_id>& out);
// PMIX_ERR_BAD_PARAM for a NULL array with nqueries > 0, or a query without keys.
pmix_status_t from_c(const pmix_query_t* queries, size_t nqueries, std::vector<query>& out);

// PMIX_ERR_BAD_PARAM for a NULL array with napps > 0, or an app without a
// command.
pmix_status_t from_c(const pmix_app_t* apps, size_t napps, std::vector<app>& out);
// A NULL-terminated array of keys (NULL: none).
std::vector<std::string> keys(char* const* keys);

pmix_status_t to_c(const value& in, pmix_value_t& out);
pmix_status_t to_c(const pdata& in, pmix_pdata_t& out);

// Element i of a C array whose elements have type `type` (the layout a
// pmix_data_array_t of that type uses), and back. `array` for to_c must have
// room for element i; what element_to_c writes is owned by the array.
// PMIX_ERR_NOT_SUPPORTED for a type we cannot copy.
pmix_status_t element_from_c(data_type type, const void* array, size_t i, value& out);
pmix_status_t element_to_c(const value& in, data_type type, void* array, size_t i);
// Bytes one element of `type` takes in such an array (0: unsupported).
size_t element_size(data_type type);
void to_c(const proc_id& in, pmix_proc_t& out);
pmix_status_t to_c(const info& in, pmix_info_t& out);

// A C array of pmix_info_t built from C++ values and freed with it; handed
// to host up-calls, which must not free what we pass (spec 000, 20.2.247.3).
class info_array {
 public:
  explicit info_array(const info_list& list);
  ~info_array();
  info_array(const info_array&) = delete;
  info_array& operator=(const info_array&) = delete;
  pmix_info_t* data() { return size_ == 0 ? nullptr : data_; }
  size_t size() const { return size_; }

 private:
  pmix_info_t* data_ = nullptr;
  size_t size_ = 0;
};

class proc_array {
 public:
  explicit proc_array(const std::vector<proc_id>& procs);
  ~proc_array();
  proc_array(const proc_array&) = delete;
  proc_array& operator=(const proc_array&) = delete;
  pmix_proc_t* data() { return size_ == 0 ? nullptr : data_; }
  size_t size() const { return size_; }

 private:
  pmix_proc_t* data_ = nullptr;
  size_t size_ = 0;
};

// A C array of pmix_query_t (keys and qualifiers) built from C++ values and
// freed with it; handed to the host's query up-call.
class query_array {
 public:
  explicit query_array(const std::vector<query>& queries);
  ~query_array();
  query_array(const query_array&) = delete;
  query_array& operator=(const query_array&) = delete;
  pmix_query_t* data() { return size_ == 0 ? nullptr : data_; }
  size_t size() const { return size_; }

 private:
  pmix_query_t* data_ = nullptr;
  size_t size_ = 0;
};

// A C array of pmix_app_t built from C++ values and freed with it; handed
// to the host's spawn up-call.
class app_array {
 public:
  explicit app_array(const std::vector<app>& apps);
  ~app_array();
  app_array(const app_array&) = delete;
  app_array& operator=(const app_array&) = delete;
  pmix_app_t* data() { return size_ == 0 ? nullptr : data_; }
  size_t size() const { return size_; }

 private:
  pmix_app_t* data_ = nullptr;
  size_t size_ = 0;
};

// A NULL-terminated C array of strings built from C++ values and freed with
// it (argv style).
class string_array {
 public:
  explicit string_array(const std::vector<std::string>& items);
  ~string_array();
  string_array(const string_array&) = delete;
  string_array& operator=(const string_array&) = delete;
  char** data() { return data_; }

 private:
  char** data_ = nullptr;
};

// A PMIX_INFO_CREATE'd copy of `list` (NULL when empty): results the caller
// frees with PMIX_INFO_FREE.
pmix_info_t* new_infos(const info_list& list);

// Calls a pmix_info_cbfunc_t with a copy of `list` and a release function
// that frees it.
void deliver_infos(pmix_info_cbfunc_t cbfunc, void* cbdata, pmix_status_t status, const info_list& list);

}  // namespace pmix::convert
