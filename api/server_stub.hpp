// Access to the server runtime from inside libpmix.so.2.
#pragma once

#include "api/server_runtime_abi.h"

namespace pmix::api {

// The loaded runtime's table; loads it first when `load` is set. Null when it
// is not loaded (or cannot be).
const pmix_cxx_server_runtime_t* server_runtime(bool load);

// True on a thread of the server runtime (a CAF thread, a host up-call).
bool in_server_library_thread();

}  // namespace pmix::api
