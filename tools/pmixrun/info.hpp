// Small helpers over the public PMIx types, shared by the launcher's parts.
#pragma once

#include <pmix_common.h>

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

namespace pmixrun {

// An owning, growable array of pmix_info_t, as a registration is built:
// add() loads a copy of the data, the destructor destructs every entry.
class info_array {
 public:
  info_array() = default;
  info_array(const info_array&) = delete;
  info_array& operator=(const info_array&) = delete;
  ~info_array();

  void add(const char* key, const void* data, pmix_data_type_t type);
  void add_string(const char* key, const std::string& s) { add(key, s.c_str(), PMIX_STRING); }
  void add_u32(const char* key, uint32_t v) { add(key, &v, PMIX_UINT32); }
  void add_u64(const char* key, uint64_t v) { add(key, &v, PMIX_UINT64); }
  void add_u16(const char* key, uint16_t v) { add(key, &v, PMIX_UINT16); }
  void add_rank(const char* key, pmix_rank_t v) { add(key, &v, PMIX_PROC_RANK); }
  void add_bool(const char* key, bool v) { add(key, &v, PMIX_BOOL); }
  // Adds `key` holding a PMIX_DATA_ARRAY of PMIX_INFO: copies of `items`.
  void add_array(const char* key, const info_array& items);
  // Adds copies of info[0..ninfo) (key, flags and value).
  void add_copies(const pmix_info_t info[], std::size_t ninfo);

  pmix_info_t* data() { return items_.data(); }
  const pmix_info_t* data() const { return items_.data(); }
  std::size_t size() const { return items_.size(); }

 private:
  std::vector<pmix_info_t> items_;
};

// The first entry of info[0..ninfo) with this key, or nullptr.
const pmix_info_t* find_info(const pmix_info_t info[], std::size_t ninfo, const char* key);

// The value as an integer: any integer type, PMIX_DATA_RANGE and PMIX_PERSIST
// (clients pass ranges and persistences as PMIX_INT or PMIX_UINT too, e.g.
// Open MPI's MPI_Publish_name). Empty for any other type.
std::optional<long long> as_integer(const pmix_value_t& v);

// A boolean directive: false when absent, else its truth value (a bool, a
// "true"/"yes" string, or PMIX_UNDEF, which marks a bare flag as true).
bool flag(const pmix_info_t info[], std::size_t ninfo, const char* key);

// "nspace:rank", with "*" for PMIX_RANK_WILDCARD.
std::string to_string(const pmix_proc_t& p);

pmix_proc_t make_proc(const std::string& nspace, pmix_rank_t rank);

bool same_proc(const pmix_proc_t& a, const pmix_proc_t& b);

// A copy of a NULL-terminated argv-style array (NULL gives an empty vector).
std::vector<std::string> copy_argv(char* const* argv);

}  // namespace pmixrun
