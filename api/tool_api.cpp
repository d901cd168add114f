// The tool API (pmix_tool.h). Reference counted separately from PMIx_Init
// (spec 004, "Tool-Side Teardown"); every init re-reads its directives and
// the environment, and the last finalize resets everything.
//
// Today a tool can run standalone (PMIX_TOOL_DO_NOT_CONNECT). Connecting to
// a server needs the server's tool support, which is not implemented yet:
// such an init fails with PMIX_ERR_NOT_SUPPORTED and a log line.
#include <pmix_tool.h>
#include <unistd.h>

#include <mutex>
#include <string>

#include "api/blocking.hpp"
#include "api/convert.hpp"
#include "common/host.hpp"
#include "common/log.hpp"

namespace pmix::api {
namespace {

struct tool_library {
  std::mutex mutex;
  int refcount = 0;
  pid_t pid = 0;
  proc_id self;
};

tool_library& tool() {
  static tool_library instance;
  return instance;
}

}  // namespace
}  // namespace pmix::api

using namespace pmix;
using namespace pmix::api;

extern "C" {

PMIX_EXPORT pmix_status_t PMIx_tool_init(pmix_proc_t* proc, pmix_info_t info[], size_t ninfo) {
  if (on_library_thread()) return refuse_blocking("PMIx_tool_init");
  auto& t = tool();
  std::lock_guard<std::mutex> guard{t.mutex};
  if (t.refcount > 0 && t.pid == getpid()) {
    ++t.refcount;
    if (proc != nullptr) convert::to_c(t.self, *proc);
    return PMIX_SUCCESS;
  }
  info_list directives;
  if (convert::from_c(info, ninfo, directives) != PMIX_SUCCESS) {
    log::error("api", "PMIx_tool_init: unreadable directives");
    return PMIX_ERR_BAD_PARAM;
  }
  proc_id self{"tool." + host_name() + "." + std::to_string(getpid()), 0};
  bool standalone = false;
  for (const auto& d : directives) {
    if (d.key == PMIX_TOOL_NSPACE) {
      const auto* ns = d.val.as_string();
      if (ns == nullptr || ns->empty() || ns->size() > PMIX_MAX_NSLEN) {
        log::error("api", "PMIx_tool_init: PMIX_TOOL_NSPACE must be a non-empty string");
        return PMIX_ERR_BAD_PARAM;
      }
      self.nspace = *ns;
    } else if (d.key == PMIX_TOOL_RANK) {
      const auto r = d.val.as_uint();
      if (!r || *r >= rank_valid_limit) {
        log::error("api", "PMIx_tool_init: PMIX_TOOL_RANK must be a valid rank");
        return PMIX_ERR_BAD_PARAM;
      }
      self.rank = static_cast<rank_t>(*r);
    } else if (d.key == PMIX_TOOL_DO_NOT_CONNECT) {
      standalone = d.val.truthy();
    }
  }
  if (!standalone) {
    log::error("api", "PMIx_tool_init: connecting a tool to a server is not supported yet; ",
               "use PMIX_TOOL_DO_NOT_CONNECT for a standalone tool");
    return PMIX_ERR_NOT_SUPPORTED;
  }
  t.self = std::move(self);
  t.pid = getpid();
  t.refcount = 1;
  if (proc != nullptr) convert::to_c(t.self, *proc);
  return PMIX_SUCCESS;
}

PMIX_EXPORT pmix_status_t PMIx_tool_finalize(void) {
  if (on_library_thread()) return refuse_blocking("PMIx_tool_finalize");
  auto& t = tool();
  std::lock_guard<std::mutex> guard{t.mutex};
  if (t.refcount == 0 || t.pid != getpid()) return PMIX_ERR_INIT;
  if (--t.refcount > 0) return PMIX_SUCCESS;
  t.self = proc_id{};
  t.pid = 0;
  return PMIX_SUCCESS;
}

}  // extern "C"
