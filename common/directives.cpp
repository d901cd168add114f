#include "common/directives.hpp"

#include <cstring>
#include <string>

#include "common/log.hpp"

namespace pmix::directives {
namespace {

bool listed(std::string_view key, const std::string_view* supported, std::size_t n) {
  for (std::size_t k = 0; k < n; ++k)
    if (supported[k] == key) return true;
  return false;
}

}  // namespace

pmix_status_t unsupported(const char* call, std::string_view key, std::uint32_t flags, std::string_view why) {
  if (required(flags)) {
    log::error("api", call, ": required directive ", key, " is not supported", why.empty() ? "" : ": ", why);
    return PMIX_ERR_NOT_SUPPORTED;
  }
  log::debug("api", call, ": directive ", key, " ignored", why.empty() ? "" : ": ", why);
  return PMIX_SUCCESS;
}

std::int64_t timeout_seconds(const info_list& list) {
  constexpr std::int64_t year = 365LL * 24 * 3600;
  const auto* t = find(list, PMIX_TIMEOUT);
  if (t == nullptr) return 0;
  const auto v = t->val.as_int();
  if (!v || *v <= 0) return 0;
  return *v > year ? year : *v;
}

pmix_status_t check(const char* call, const info_list& list, keys supported) {
  return check(call, list, supported.begin(), supported.size());
}

pmix_status_t check(const char* call, const pmix_info_t* info, std::size_t ninfo, keys supported) {
  return check(call, info, ninfo, supported.begin(), supported.size());
}

pmix_status_t check(const char* call, const info_list& list, const std::string_view* supported, std::size_t n) {
  for (const auto& i : list) {
    if (listed(i.key, supported, n)) continue;
    const auto rc = unsupported(call, i.key, i.flags, "not supported by this call");
    if (rc != PMIX_SUCCESS) return rc;
  }
  return PMIX_SUCCESS;
}

pmix_status_t check(const char* call, const pmix_info_t* info, std::size_t ninfo, const std::string_view* supported,
                    std::size_t n) {
  if (info == nullptr) return PMIX_SUCCESS;
  for (std::size_t k = 0; k < ninfo; ++k) {
    const std::string_view key{info[k].key, ::strnlen(info[k].key, PMIX_MAX_KEYLEN)};
    if (listed(key, supported, n)) continue;
    const auto rc = unsupported(call, key, info[k].flags, "not supported by this call");
    if (rc != PMIX_SUCCESS) return rc;
  }
  return PMIX_SUCCESS;
}

}  // namespace pmix::directives
