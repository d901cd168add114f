// PMIx_generate_regex / PMIx_generate_ppn: host helpers that need no running
// library (common/regex has the format).
#include <pmix_server.h>

#include <cstring>

#include "common/log.hpp"
#include "common/regex/regex.hpp"

namespace {

pmix_status_t hand_out(const pmix::regex::result<std::string>& r, const char* call, char** out) {
  if (!r.ok()) {
    pmix::log::error("api", call, ": ", r.error().what);
    return PMIX_ERR_BAD_PARAM;
  }
  *out = strdup(r.value().c_str());
  return *out == nullptr ? PMIX_ERR_NOMEM : PMIX_SUCCESS;
}

}  // namespace

extern "C" {

PMIX_EXPORT pmix_status_t PMIx_generate_regex(const char* input, char** regex) {
  if (input == nullptr || regex == nullptr) return PMIX_ERR_BAD_PARAM;
  *regex = nullptr;
  return hand_out(pmix::regex::generate_node_map(input), "PMIx_generate_regex", regex);
}

PMIX_EXPORT pmix_status_t PMIx_generate_ppn(const char* input, char** ppn) {
  if (input == nullptr || ppn == nullptr) return PMIX_ERR_BAD_PARAM;
  *ppn = nullptr;
  return hand_out(pmix::regex::generate_proc_map(input), "PMIx_generate_ppn", ppn);
}

}  // extern "C"
