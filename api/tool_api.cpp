// The tool API (pmix_tool.h). Reference counted separately from PMIx_Init
// (spec 004, "Tool-Side Teardown"); a tool shares the client session, so the
// client calls (PMIx_Get, ...) work after PMIx_tool_init. Every init reads
// its directives and the environment afresh; the last finalize of both kinds
// tears the session down.
//
// Finding the server: PMIX_SERVER_URI, else the environment a launcher gave
// (PMIX_SERVER_URI41/4, then the tool is a registered client connecting
// through the tool path). PMIX_TOOL_DO_NOT_CONNECT makes a standalone tool.
#include <pmix_tool.h>
#include <unistd.h>

#include <mutex>
#include <string>

#include "api/blocking.hpp"
#include "api/convert.hpp"
#include "api/library.hpp"
#include "common/host.hpp"
#include "common/log.hpp"

namespace pmix::api {

pmix_status_t end_session(std::shared_ptr<client::session> s);

namespace {

struct tool_directives {
  proc_id proposed;  // empty nspace: the server assigns one
  bool standalone = false;
  std::string uri;
};

pmix_status_t read_directives(const info_list& directives, tool_directives& out) {
  // A tool launched by a PMIx server as one of its clients knows who it is.
  if (const char* ns = std::getenv("PMIX_NAMESPACE"); ns != nullptr && *ns != '\0') {
    const char* rank = std::getenv("PMIX_RANK");
    out.proposed = proc_id{ns, rank == nullptr ? 0u : static_cast<rank_t>(std::strtoul(rank, nullptr, 10))};
  }
  if (const char* uri = std::getenv("PMIX_SERVER_URI41"); uri != nullptr && *uri != '\0') out.uri = uri;
  else if (const char* uri4 = std::getenv("PMIX_SERVER_URI4"); uri4 != nullptr) out.uri = uri4;
  for (const auto& d : directives) {
    if (d.key == PMIX_TOOL_NSPACE) {
      const auto* ns = d.val.as_string();
      if (ns == nullptr || ns->empty() || ns->size() > PMIX_MAX_NSLEN) {
        log::error("api", "PMIx_tool_init: PMIX_TOOL_NSPACE must be a non-empty string");
        return PMIX_ERR_BAD_PARAM;
      }
      out.proposed.nspace = *ns;
    } else if (d.key == PMIX_TOOL_RANK) {
      const auto r = d.val.as_uint();
      if (!r || *r >= rank_valid_limit) {
        log::error("api", "PMIx_tool_init: PMIX_TOOL_RANK must be a valid rank");
        return PMIX_ERR_BAD_PARAM;
      }
      out.proposed.rank = static_cast<rank_t>(*r);
    } else if (d.key == PMIX_TOOL_DO_NOT_CONNECT) {
      out.standalone = d.val.truthy();
    } else if (d.key == PMIX_SERVER_URI) {
      const auto* uri = d.val.as_string();
      if (uri == nullptr || uri->empty()) {
        log::error("api", "PMIx_tool_init: PMIX_SERVER_URI must be a non-empty string");
        return PMIX_ERR_BAD_PARAM;
      }
      out.uri = *uri;
    }
  }
  if (out.proposed.rank == rank_undef) out.proposed.rank = 0;
  return PMIX_SUCCESS;
}

}  // namespace
}  // namespace pmix::api

using namespace pmix;
using namespace pmix::api;

extern "C" {

PMIX_EXPORT pmix_status_t PMIx_tool_init(pmix_proc_t* proc, pmix_info_t info[], size_t ninfo) {
  if (on_library_thread()) return refuse_blocking("PMIx_tool_init");
  auto& l = lib();
  std::lock_guard<std::mutex> guard{l.mutex};
  l.forget_if_forked();
  if (!l.session) {
    info_list directives;
    if (convert::from_c(info, ninfo, directives) != PMIX_SUCCESS) {
      log::error("api", "PMIx_tool_init: unreadable directives");
      return PMIX_ERR_BAD_PARAM;
    }
    tool_directives d;
    auto rc = read_directives(directives, d);
    if (rc != PMIX_SUCCESS) return rc;
    if (d.standalone) {
      if (d.proposed.nspace.empty())
        d.proposed.nspace = "tool." + host_name() + "." + std::to_string(getpid());
      l.session = client::session::singleton(d.proposed);
    } else if (d.uri.empty()) {
      log::error("api", "PMIx_tool_init: no server to connect to (give PMIX_SERVER_URI, or ",
                 "PMIX_TOOL_DO_NOT_CONNECT for a standalone tool)");
      return PMIX_ERR_UNREACH;
    } else {
      rc = client::session::connect(d.uri, client::role::tool, d.proposed, directives, l.session);
      if (rc != PMIX_SUCCESS) return rc;
    }
    l.pid = getpid();
  }
  ++l.tool_refs;
  if (proc != nullptr) convert::to_c(l.session->self(), *proc);
  return PMIX_SUCCESS;
}

PMIX_EXPORT pmix_status_t PMIx_tool_finalize(void) {
  if (on_library_thread()) return refuse_blocking("PMIx_tool_finalize");
  std::shared_ptr<client::session> doomed;
  {
    auto& l = lib();
    std::lock_guard<std::mutex> guard{l.mutex};
    if (l.tool_refs == 0 || l.pid != getpid()) return PMIX_ERR_INIT;
    if (--l.tool_refs > 0 || l.client_refs > 0) return PMIX_SUCCESS;
    doomed = std::move(l.session);
    l.pid = 0;
  }
  return end_session(std::move(doomed));
}

}  // extern "C"
