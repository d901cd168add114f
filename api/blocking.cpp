#include "api/blocking.hpp"

#include "api/server_stub.hpp"
#include "common/log.hpp"
#include "common/progress.hpp"

namespace pmix::api {

bool on_library_thread() { return progress::in_library_thread() || in_server_library_thread(); }

pmix_status_t refuse_blocking(const char* call) {
  log::error("api", call, " called from a PMIx library thread (a callback, event handler or ",
             "host up-call): PMIX_ERR_WOULD_BLOCK; use the non-blocking form or a thread of your own");
  return PMIX_ERR_WOULD_BLOCK;
}

}  // namespace pmix::api
