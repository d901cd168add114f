// The progress-thread rule at the C facade of libpmix.so.2 (spec 002,
// 19.2.260.7): a blocking call made on a thread that runs library code -- our
// client progress thread, or a thread of the server runtime (actors, host
// up-calls, cbfuncs) -- must return PMIX_ERR_WOULD_BLOCK at once.
#pragma once

#include <pmix_common.h>

namespace pmix::api {

// True on a thread that runs library code, in either shared object.
bool on_library_thread();

// Logs that `call` was refused and returns PMIX_ERR_WOULD_BLOCK.
pmix_status_t refuse_blocking(const char* call);

}  // namespace pmix::api
