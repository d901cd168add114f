#include "api/registration.hpp"

#include <cstring>
#include <string>

#include "api/convert.hpp"
#include "protocol/direct.hpp"
#include "protocol/pmix.pb.h"

namespace pmix::registration {
namespace {

bool is_key(const char* k, const char* expected) { return std::strncmp(k, expected, PMIX_MAX_KEYLEN + 1) == 0; }

// The form compute_layout accepts, checked on the C data.
bool fast_form(const pmix_info_t& in) {
  if (in.value.type != PMIX_DATA_ARRAY || in.value.data.darray == nullptr) return false;
  const auto& a = *in.value.data.darray;
  if (a.type != PMIX_INFO || a.size == 0 || a.array == nullptr) return false;
  const auto& first = static_cast<const pmix_info_t*>(a.array)[0];
  if (!is_key(first.key, PMIX_RANK)) return false;
  value rank;
  if (convert::from_c(first.value, rank) != PMIX_SUCCESS) return false;
  const auto r = rank.as_uint();
  return r && *r < rank_valid_limit;
}

// One PMIX_PROC_DATA entry: into `out.registered` as the wire::Info the
// value path would write, and its items but the first into `out.rank_bytes`
// as wire::RankInfo `info` fields.
pmix_status_t add_proc_data(const pmix_info_t& in, actors::encoded_registration& out, std::string& elements,
                            std::string& body) {
  const auto& a = *in.value.data.darray;
  const auto* items = static_cast<const pmix_info_t*>(a.array);
  elements.clear();
  actors::rank_slice slice;
  slice.offset = static_cast<std::uint32_t>(out.rank_bytes.size());
  value v;
  for (size_t j = 0; j < a.size; ++j) {
    // The key as the C string it is (bounded), not a copy.
    const std::string_view key{items[j].key, ::strnlen(items[j].key, PMIX_MAX_KEYLEN)};
    const auto rc = convert::from_c(items[j].value, v);
    if (rc != PMIX_SUCCESS) return rc;
    if (j == 0) slice.rank = static_cast<rank_t>(*v.as_uint());
    body.clear();
    protocol::append_info_body(body, key, v, items[j].flags);
    // The element: a wire::Value of type PMIX_INFO holding the Info.
    protocol::append_info_element(elements, wire::DataArray::kElementsFieldNumber, body);
    if (j > 0) {
      protocol::append_delimited(out.rank_bytes, wire::RankInfo::kInfoFieldNumber, body);
      slice.given |= actors::derived_bit(key);
    }
  }
  slice.length = static_cast<std::uint32_t>(out.rank_bytes.size() - slice.offset);
  out.ranks.push_back(slice);

  // Info { key, Value { type: PMIX_DATA_ARRAY, array: DataArray { type: PMIX_INFO, elements } }, flags }
  const std::string key = convert::key(in.key);
  const auto array_size = protocol::uint_size(1, PMIX_INFO) + elements.size();
  const auto value_size = protocol::uint_size(1, PMIX_DATA_ARRAY) +
                          protocol::header_size(wire::Value::kArrayFieldNumber, array_size) + array_size;
  const auto info_size = protocol::bytes_size(1, key) + protocol::header_size(2, value_size) + value_size +
                         protocol::uint_size(3, in.flags);
  auto& r = out.registered;
  protocol::append_header(r, wire::JobInfo::kInfoFieldNumber, info_size);
  protocol::append_bytes(r, 1, key);
  protocol::append_header(r, 2, value_size);
  protocol::append_uint(r, 1, PMIX_DATA_ARRAY);
  protocol::append_header(r, wire::Value::kArrayFieldNumber, array_size);
  protocol::append_uint(r, 1, PMIX_INFO);
  r.append(elements);
  protocol::append_uint(r, 3, in.flags);
  return PMIX_SUCCESS;
}

}  // namespace

pmix_status_t from_c(const pmix_info_t* info, size_t ninfo, actors::encoded_registration& out) {
  out = actors::encoded_registration{};
  if (ninfo > 0 && info == nullptr) return PMIX_ERR_BAD_PARAM;
  bool fast = true;
  std::size_t proc_data = 0;
  for (size_t k = 0; k < ninfo && fast; ++k)
    if (is_key(info[k].key, PMIX_PROC_DATA)) {
      fast = fast_form(info[k]);
      ++proc_data;
    }
  if (!fast) {
    info_list all;
    const auto rc = convert::from_c(info, ninfo, all);
    if (rc != PMIX_SUCCESS) return rc;
    out = actors::encoded_registration(std::move(all));
    return PMIX_SUCCESS;
  }
  std::string elements, body;
  out.ranks.reserve(proc_data);
  bool sized = false;
  for (size_t k = 0; k < ninfo; ++k) {
    if (is_key(info[k].key, PMIX_PROC_DATA)) {
      const auto registered_before = out.registered.size(), rank_before = out.rank_bytes.size();
      const auto rc = add_proc_data(info[k], out, elements, body);
      if (rc != PMIX_SUCCESS) return rc;
      if (!sized) {
        // Ranks' data are usually alike: size both outputs from the first
        // rank's, so 10,000 ranks do not grow them by doubling (each growth
        // copied and page-faulted the whole string again).
        sized = true;
        const auto left = proc_data - 1;
        out.registered.reserve(out.registered.size() + (out.registered.size() - registered_before) * left * 11 / 10 +
                               4096);
        out.rank_bytes.reserve(out.rank_bytes.size() + (out.rank_bytes.size() - rank_before) * left * 11 / 10 + 4096);
      }
      continue;
    }
    info_list one;
    const auto rc = convert::from_c(&info[k], 1, one);
    if (rc != PMIX_SUCCESS) return rc;
    protocol::append_info(out.registered, wire::JobInfo::kInfoFieldNumber, one.front());
    out.job.push_back(std::move(one.front()));
  }
  return PMIX_SUCCESS;
}

}  // namespace pmix::registration
