#include "server/registration.hpp"

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

// One PMIX_PROC_DATA entry: its items but the first (PMIX_RANK) into
// `out.rank_bytes` as wire::RankInfo `info` fields.
pmix_status_t add_proc_data(const pmix_info_t& in, actors::encoded_registration& out, std::string& body) {
  const auto& a = *in.value.data.darray;
  const auto* items = static_cast<const pmix_info_t*>(a.array);
  actors::rank_slice slice;
  slice.offset = static_cast<std::uint32_t>(out.rank_bytes.size());
  value v;
  for (size_t j = 0; j < a.size; ++j) {
    // The key as the C string it is (bounded), not a copy.
    const std::string_view key{items[j].key, ::strnlen(items[j].key, PMIX_MAX_KEYLEN)};
    const auto rc = convert::from_c(items[j].value, v);
    if (rc != PMIX_SUCCESS) return rc;
    if (j == 0) {
      slice.rank = static_cast<rank_t>(*v.as_uint());
      continue;
    }
    body.clear();
    protocol::append_info_body(body, key, v, items[j].flags);
    protocol::append_delimited(out.rank_bytes, wire::RankInfo::kInfoFieldNumber, body);
    slice.given |= actors::derived_bit(key);
  }
  slice.length = static_cast<std::uint32_t>(out.rank_bytes.size() - slice.offset);
  out.ranks.push_back(slice);
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
  std::string body;
  out.ranks.reserve(proc_data);
  bool sized = false;
  for (size_t k = 0; k < ninfo; ++k) {
    if (is_key(info[k].key, PMIX_PROC_DATA)) {
      const auto rank_before = out.rank_bytes.size();
      const auto rc = add_proc_data(info[k], out, body);
      if (rc != PMIX_SUCCESS) return rc;
      if (!sized) {
        // Ranks' data are usually alike: size the output from the first
        // rank's, so 10,000 ranks do not grow it by doubling (each growth
        // copied and page-faulted the whole string again).
        sized = true;
        const auto left = proc_data - 1;
        out.rank_bytes.reserve(out.rank_bytes.size() + (out.rank_bytes.size() - rank_before) * left * 11 / 10 + 4096);
      }
      continue;
    }
    info_list one;
    const auto rc = convert::from_c(&info[k], 1, one);
    if (rc != PMIX_SUCCESS) return rc;
    out.job.push_back(std::move(one.front()));
  }
  return PMIX_SUCCESS;
}

}  // namespace pmix::registration
