// What a host (or an application) does with the C data the library hands it:
// reads every element, copies it with PMIx_Info_xfer / PMIx_Value_xfer,
// compares the copy, frees the copy. Under ASan, any dangling or short
// pointer in what the library built shows here. Also: the C data read back
// into C++ values (convert::from_c), converted again and read back again, is
// the same the second time (the conversions are stable once the C limits,
// key and namespace lengths and NUL-terminated strings, are applied).
#pragma once

#include <pmix.h>

#include <cstring>

#include "api/convert.hpp"
#include "tests/fuzz/fuzz_support.hpp"

namespace pmix::fuzz {

inline void walk_c_value(const pmix_value_t& v) {
  pmix_value_t copy;
  std::memset(&copy, 0, sizeof copy);
  if (PMIx_Value_xfer(&copy, &v) == PMIX_SUCCESS) {
    pmix_value_t a = v;  // PMIx_Value_compare takes non-const pointers
    (void)PMIx_Value_compare(&a, &copy);
  }
  PMIx_Value_destruct(&copy);
}

inline void walk_c_infos(const pmix_info_t* info, std::size_t n) {
  for (std::size_t k = 0; k < n; ++k) {
    FUZZ_CHECK(std::memchr(info[k].key, '\0', sizeof info[k].key) != nullptr);
    pmix_info_t copy;
    std::memset(&copy, 0, sizeof copy);
    (void)PMIx_Info_xfer(&copy, &info[k]);
    PMIx_Value_destruct(&copy.value);
    walk_c_value(info[k].value);
  }
}

// `list` as the host receives it, walked, and the C++ -> C -> C++ -> C -> C++
// round trip stable.
inline void check_as_host_sees(const info_list& list) {
  convert::info_array first{list};
  walk_c_infos(first.data(), first.size());
  info_list back;
  if (convert::from_c(first.data(), first.size(), back) != PMIX_SUCCESS) return;
  convert::info_array second{back};
  walk_c_infos(second.data(), second.size());
  info_list again;
  FUZZ_CHECK(convert::from_c(second.data(), second.size(), again) == PMIX_SUCCESS);
  FUZZ_CHECK(same(back, again));
}

}  // namespace pmix::fuzz
