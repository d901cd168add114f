// The attribute dictionary: the names the headers give attributes
// ("PMIX_JOB_SIZE") and their key strings ("pmix.job.size"), generated from
// our own pmix_common.h at build time (api/gen_attributes.py).
#pragma once

#include <pmix_common.h>

#include <string_view>

namespace pmix::api {

// The static name of the attribute whose key is `key` (the first the header
// defines, when several share it), or nullptr.
const char* attribute_name(std::string_view key);

// The static key string of the attribute named `name`, or nullptr.
const char* attribute_key(std::string_view name);

// The type of the value the attribute named `name` holds, as the header's
// comment gives it; PMIX_UNDEF for an unknown name or a value that varies.
pmix_data_type_t attribute_type(std::string_view name);

}  // namespace pmix::api
