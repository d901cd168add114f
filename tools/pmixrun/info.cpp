#include "info.hpp"

#include <cstring>

namespace pmixrun {

info_array::~info_array() {
  for (auto& i : items_) PMIX_INFO_DESTRUCT(&i);
}

void info_array::add(const char* key, const void* data, pmix_data_type_t type) {
  items_.emplace_back();
  PMIX_INFO_CONSTRUCT(&items_.back());
  PMIX_INFO_LOAD(&items_.back(), key, data, type);
}

void info_array::add_array(const char* key, const info_array& items) {
  pmix_data_array_t* darray = nullptr;
  PMIX_DATA_ARRAY_CREATE(darray, items.size(), PMIX_INFO);
  auto* copies = static_cast<pmix_info_t*>(darray->array);
  for (std::size_t k = 0; k < items.size(); ++k) PMIX_INFO_XFER(&copies[k], &items.items_[k]);
  add(key, darray, PMIX_DATA_ARRAY);
  PMIX_DATA_ARRAY_FREE(darray);
}

void info_array::add_copies(const pmix_info_t info[], std::size_t ninfo) {
  for (std::size_t k = 0; info != nullptr && k < ninfo; ++k) {
    items_.emplace_back();
    PMIX_INFO_CONSTRUCT(&items_.back());
    PMIX_INFO_XFER(&items_.back(), &info[k]);
  }
}

const pmix_info_t* find_info(const pmix_info_t info[], std::size_t ninfo, const char* key) {
  if (info == nullptr) return nullptr;
  for (std::size_t k = 0; k < ninfo; ++k)
    if (PMIX_CHECK_KEY(&info[k], key)) return &info[k];
  return nullptr;
}

std::optional<long long> as_integer(const pmix_value_t& v) {
  switch (v.type) {
    case PMIX_DATA_RANGE:
      return static_cast<long long>(v.data.range);
    case PMIX_PERSIST:
      return static_cast<long long>(v.data.persist);
    case PMIX_FLOAT:
    case PMIX_DOUBLE:
      return std::nullopt;
    default:
      break;
  }
  long long n = 0;
  pmix_status_t rc = PMIX_SUCCESS;
  PMIX_VALUE_GET_NUMBER(rc, &v, n, long long);
  if (rc != PMIX_SUCCESS) return std::nullopt;
  return n;
}

bool flag(const pmix_info_t info[], std::size_t ninfo, const char* key) {
  const pmix_info_t* i = find_info(info, ninfo, key);
  return i != nullptr && PMIX_INFO_TRUE(i);
}

std::string to_string(const pmix_proc_t& p) {
  std::string s(p.nspace, strnlen(p.nspace, PMIX_MAX_NSLEN));
  s += ':';
  s += p.rank == PMIX_RANK_WILDCARD ? std::string("*") : std::to_string(p.rank);
  return s;
}

pmix_proc_t make_proc(const std::string& nspace, pmix_rank_t rank) {
  pmix_proc_t p;
  PMIX_PROC_CONSTRUCT(&p);
  PMIX_LOAD_PROCID(&p, nspace.c_str(), rank);
  return p;
}

bool same_proc(const pmix_proc_t& a, const pmix_proc_t& b) {
  return PMIX_CHECK_NSPACE(a.nspace, b.nspace) && a.rank == b.rank;
}

std::vector<std::string> copy_argv(char* const* argv) {
  std::vector<std::string> out;
  for (; argv != nullptr && *argv != nullptr; ++argv) out.emplace_back(*argv);
  return out;
}

}  // namespace pmixrun
