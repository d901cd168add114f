#include "server/registration.hpp"

#include <cstring>
#include <string>

#include "api/convert.hpp"
#include "protocol/direct.hpp"
#include "protocol/pmix.pb.h"

namespace pmix::registration {
namespace {

bool is_key(const char* k, const char* expected) { return std::strncmp(k, expected, PMIX_MAX_KEYLEN + 1) == 0; }

// One PMIX_PROC_DATA entry, if it has the form compute_layout accepts (a
// data array of PMIX_INFO led by a valid PMIX_RANK): its items but the first
// into `out.rank_bytes` as wire::RankInfo `info` fields, each written in
// place. PMIX_ERR_BAD_PARAM / _NOT_SUPPORTED for an item from_c refuses;
// `fast` false (nothing written) for another form.
pmix_status_t add_proc_data(const pmix_info_t& in, actors::encoded_registration& out, value& v, bool& fast) {
  fast = false;
  if (in.value.type != PMIX_DATA_ARRAY || in.value.data.darray == nullptr) return PMIX_SUCCESS;
  const auto& a = *in.value.data.darray;
  if (a.type != PMIX_INFO || a.size == 0 || a.array == nullptr) return PMIX_SUCCESS;
  const auto* items = static_cast<const pmix_info_t*>(a.array);
  if (!is_key(items[0].key, PMIX_RANK) || convert::from_c(items[0].value, v) != PMIX_SUCCESS) return PMIX_SUCCESS;
  const auto rank = v.as_uint();
  if (!rank || *rank >= rank_valid_limit) return PMIX_SUCCESS;
  fast = true;
  actors::rank_slice slice;
  slice.rank = static_cast<rank_t>(*rank);
  slice.offset = static_cast<std::uint32_t>(out.rank_bytes.size());
  for (size_t j = 1; j < a.size; ++j) {
    // The key as the C string it is (bounded), not a copy.
    const std::string_view key{items[j].key, ::strnlen(items[j].key, PMIX_MAX_KEYLEN)};
    const auto rc = convert::from_c(items[j].value, v);
    if (rc != PMIX_SUCCESS) return rc;
    protocol::append_info(out.rank_bytes, wire::RankInfo::kInfoFieldNumber, key, v, items[j].flags);
    slice.given |= actors::derived_bit(key);
  }
  slice.length = static_cast<std::uint32_t>(out.rank_bytes.size() - slice.offset);
  out.ranks.push_back(slice);
  return PMIX_SUCCESS;
}

}  // namespace

// One pass over the host's array (each of its entries is 550 bytes, and a
// 10,000-rank registration has as many: read once). Should a PMIX_PROC_DATA
// entry not be of the fast form, everything goes into `out.job` as values
// instead, and compute_layout judges it there.
pmix_status_t from_c(const pmix_info_t* info, size_t ninfo, actors::encoded_registration& out) {
  out = actors::encoded_registration{};
  if (ninfo > 0 && info == nullptr) return PMIX_ERR_BAD_PARAM;
  value v;
  bool sized = false;
  for (size_t k = 0; k < ninfo; ++k) {
    if (is_key(info[k].key, PMIX_PROC_DATA)) {
      const auto rank_before = out.rank_bytes.size();
      bool fast = false;
      const auto rc = add_proc_data(info[k], out, v, fast);
      if (rc != PMIX_SUCCESS) return rc;
      if (!fast) {
        info_list all;
        const auto slow = convert::from_c(info, ninfo, all);
        if (slow != PMIX_SUCCESS) return slow;
        out = actors::encoded_registration(std::move(all));
        return PMIX_SUCCESS;
      }
      if (!sized) {
        // Ranks' data are usually alike, and the rest of the array is
        // mostly ranks: size the output from the first rank's, so 10,000
        // ranks do not grow it by doubling (each growth copied and
        // page-faulted the whole string again).
        sized = true;
        const auto left = ninfo - k - 1;
        out.ranks.reserve(left + 1);
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
