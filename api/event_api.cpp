// PMIx_Register_event_handler, PMIx_Deregister_event_handler and
// PMIx_Notify_event: the facade over the process's handler registry
// (server/events.hpp) and the way out of the process -- the client session, or
// the server runtime in a server (docs/events.md).
#include <pmix.h>

#include <memory>

#include "api/blocking.hpp"
#include "api/convert.hpp"
#include "server/events.hpp"
#include "api/library.hpp"
#include "api/server_stub.hpp"
#include "common/directives.hpp"
#include "common/log.hpp"
#include "common/supported.hpp"

namespace pmix::api {
namespace {

// Who this process is to the event system: a server (when one runs here) or
// a client/tool session.
struct process {
  proc_id self;
  const pmix_cxx_server_runtime_t* server = nullptr;
  std::shared_ptr<client::session> session;
  task_poster post;
};

void run_posted(void* arg) {
  std::unique_ptr<std::function<void()>> task{static_cast<std::function<void()>*>(arg)};
  (*task)();
}

bool current_process(process& out) {
  if (const auto* rt = server_runtime(false)) {
    pmix_proc_t me;
    if (rt->running(&me) != 0) {
      out.self = convert::proc(me);
      out.server = rt;
      out.post = [rt](std::function<void()> task) {
        auto* t = new std::function<void()>(std::move(task));
        if (rt->post(run_posted, t) != PMIX_SUCCESS) delete t;  // the server is going away
      };
      return true;
    }
  }
  auto s = current_session();
  if (!s) return false;
  out.self = s->self();
  out.session = s;
  std::weak_ptr<client::session> weak = s;
  out.post = [weak](std::function<void()> task) {
    if (auto live = weak.lock()) live->post(std::move(task));
  };
  return true;
}

pmix_status_t read_codes(const pmix_status_t codes[], size_t ncodes,
                         std::vector<pmix_status_t>& out) {
  if (ncodes > 0 && codes == nullptr) return PMIX_ERR_BAD_PARAM;
  out.assign(codes, codes + ncodes);
  return PMIX_SUCCESS;
}

bool valid_range(pmix_data_range_t range) { return range <= PMIX_RANGE_PROC_LOCAL; }

}  // namespace

}  // namespace pmix::api

using namespace pmix;
using namespace pmix::api;

extern "C" {

PMIX_EXPORT pmix_status_t PMIx_Register_event_handler(pmix_status_t codes[], size_t ncodes,
                                                      pmix_info_t info[], size_t ninfo,
                                                      pmix_notification_fn_t evhdlr,
                                                      pmix_hdlr_reg_cbfunc_t cbfunc, void* cbdata) {
  if (cbfunc == nullptr && on_library_thread())
    return refuse_blocking("PMIx_Register_event_handler with a NULL cbfunc");
  process p;
  if (!current_process(p)) return PMIX_ERR_INIT;
  std::vector<pmix_status_t> wanted;
  info_list directives;
  if (evhdlr == nullptr || read_codes(codes, ncodes, wanted) != PMIX_SUCCESS ||
      convert::from_c(info, ninfo, directives) != PMIX_SUCCESS) {
    log::error("api", "PMIx_Register_event_handler: no handler, or unreadable codes or directives");
    return PMIX_ERR_BAD_PARAM;
  }
  if (const auto rc = directives::check("PMIx_Register_event_handler", directives,
                                            supported::register_event_handler);
      rc != PMIX_SUCCESS)
    return rc;
  // An OpenPMIx server sends a client only the codes it registered for.
  if (p.session) p.session->register_events(wanted);
  std::size_t id = 0;
  std::string error;
  const auto rc = events::handlers().add(std::move(wanted), directives, evhdlr, id, error);
  if (rc != PMIX_SUCCESS) {
    log::error("api", "PMIx_Register_event_handler: ", error);
    return rc;
  }
  if (cbfunc == nullptr) return static_cast<pmix_status_t>(id);
  p.post([cbfunc, id, cbdata] { cbfunc(PMIX_SUCCESS, id, cbdata); });
  return PMIX_SUCCESS;
}

PMIX_EXPORT pmix_status_t PMIx_Deregister_event_handler(size_t evhdlr_ref, pmix_op_cbfunc_t cbfunc,
                                                        void* cbdata) {
  if (cbfunc == nullptr && on_library_thread())
    return refuse_blocking("PMIx_Deregister_event_handler with a NULL cbfunc");
  process p;
  if (!current_process(p)) return PMIX_ERR_INIT;
  // An unknown reference is not an error the caller can act on: like
  // OpenPMIx, the callback still runs with success (a program waiting for
  // it would otherwise hang) and the blocking form succeeds.
  if (!events::handlers().remove(evhdlr_ref))
    log::debug("api", "PMIx_Deregister_event_handler: no handler ", evhdlr_ref, " (already gone)");
  if (cbfunc != nullptr) p.post([cbfunc, cbdata] { cbfunc(PMIX_SUCCESS, cbdata); });
  return PMIX_SUCCESS;
}

PMIX_EXPORT pmix_status_t PMIx_Notify_event(pmix_status_t status, const pmix_proc_t* source,
                                            pmix_data_range_t range, const pmix_info_t info[],
                                            size_t ninfo, pmix_op_cbfunc_t cbfunc, void* cbdata) {
  if (cbfunc == nullptr && on_library_thread())
    return refuse_blocking("PMIx_Notify_event with a NULL cbfunc");
  process p;
  if (!current_process(p)) return PMIX_ERR_INIT;
  event ev;
  ev.status = status;
  ev.source = source == nullptr ? p.self : convert::proc(*source);
  if (ev.source.nspace.empty()) ev.source.nspace = p.self.nspace;
  ev.range = range;
  if (!valid_range(range) || convert::from_c(info, ninfo, ev.info) != PMIX_SUCCESS) {
    log::error("api", "PMIx_Notify_event: invalid range ", static_cast<int>(range), " or unreadable info");
    return PMIX_ERR_BAD_PARAM;
  }
  if (range == PMIX_RANGE_CUSTOM && custom_range(ev.info).empty()) {
    log::error("api", "PMIx_Notify_event: PMIX_RANGE_CUSTOM without PMIX_EVENT_CUSTOM_RANGE");
    return PMIX_ERR_BAD_PARAM;
  }
  // This process's own handlers, when it is within the range.
  if (reaches(ev, p.self, p.self)) events::deliver(ev, p.post);
  const bool serverless = p.session && p.session->is_singleton();
  const bool beyond = range != PMIX_RANGE_PROC_LOCAL && !serverless;
  if (!beyond) {
    // Nobody else to tell (a singleton has no server and no host); a tool
    // without a primary server cannot reach the others (OpenPMIx too).
    const bool unreachable = range == PMIX_RANGE_RM || (range != PMIX_RANGE_PROC_LOCAL && serverless &&
                                                        p.session->which() == client::role::tool);
    const pmix_status_t rc = unreachable ? PMIX_ERR_UNREACH : PMIX_SUCCESS;
    if (rc == PMIX_SUCCESS && cbfunc != nullptr) p.post([cbfunc, cbdata] { cbfunc(PMIX_SUCCESS, cbdata); });
    return rc;
  }
  if (p.server != nullptr) {
    convert::info_array c_info{ev.info};
    pmix_proc_t c_source;
    convert::to_c(ev.source, c_source);
    return p.server->notify(status, &c_source, range, c_info.data(), c_info.size(), cbfunc, cbdata);
  }
  if (cbfunc != nullptr)
    return p.session->notify(ev, [cbfunc, cbdata](pmix_status_t st) { cbfunc(st, cbdata); });
  auto w = std::make_shared<waiter>();
  pmix_status_t rc;
  {
    client::connection::answered_here blocking;
    rc = p.session->notify(ev, [w](pmix_status_t st) { w->finish(st); });
  }
  if (rc != PMIX_SUCCESS) return rc;
  p.session->drive([&w] { return w->is_done(); });
  return w->wait();
}

}  // extern "C"
