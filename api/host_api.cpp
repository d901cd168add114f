// The client calls the server hands to its host (or serves itself):
// PMIx_Allocation_request, PMIx_Process_monitor (and PMIx_Heartbeat),
// PMIx_Get_credential, PMIx_Validate_credential, PMIx_IOF_push, the
// PMIx_Fabric_* calls, and OpenPMIx 6.0's PMIx_Session_control and
// PMIx_Resource_block(_nb). Each is the thin facade of style.md #1: check, copy
// into C++ values, one HostRequest, convert the reply
// (docs/architecture.md, "Host requests").
#include <pmix.h>
#include <pmix_tool.h>
#include <pmix_server.h>

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "api/blocking.hpp"
#include "api/convert.hpp"
#include "api/library.hpp"
#include "common/log.hpp"

namespace pmix::api {
namespace {

using protocol::host_call;

bool read_info(const char* call, const pmix_info_t info[], size_t ninfo, info_list& out) {
  if (convert::from_c(info, ninfo, out) == PMIX_SUCCESS) return true;
  log::error("api", call, ": unreadable info");
  return false;
}

// What a blocking call waits for: the reply's info and data.
struct answer {
  info_list info;
  std::string data;
};

// Sends `r` and waits for the answer (blocking forms).
pmix_status_t request_and_wait(const std::shared_ptr<client::session>& s, const protocol::host_request& r,
                               answer& out) {
  auto got = std::make_shared<answer>();
  const auto rc = wait_for(s, [&](client::done_fn done) {
    return s->host_request(r, [got, done](pmix_status_t st, info_list info, std::string data) {
      got->info = std::move(info);
      got->data = std::move(data);
      done(st);
    });
  });
  out = std::move(*got);
  return rc;
}

// The results of a blocking call that returns info.
void results_out(const info_list& info, pmix_info_t** results, size_t* nresults) {
  *results = convert::new_infos(info);
  *nresults = info.size();
}

// The session, or why there is none.
pmix_status_t session_for(const char* call, std::shared_ptr<client::session>& s) {
  s = current_session();
  if (s) return PMIX_SUCCESS;
  log::debug("api", call, " before PMIx_Init");
  return PMIX_ERR_INIT;
}

// ---- allocation ---------------------------------------------------------------

pmix_status_t allocation(pmix_alloc_directive_t directive, const pmix_info_t* info, size_t ninfo,
                         protocol::host_request& r) {
  if (directive == 0) {  // undefined; values from PMIX_ALLOC_EXTERNAL up are the host's own
    log::error("api", "PMIx_Allocation_request: invalid directive ", static_cast<int>(directive));
    return PMIX_ERR_BAD_PARAM;
  }
  r.call = host_call::allocate;
  r.code = directive;
  return read_info("PMIx_Allocation_request", info, ninfo, r.info) ? PMIX_SUCCESS : PMIX_ERR_BAD_PARAM;
}

// ---- monitoring ---------------------------------------------------------------

pmix_status_t monitoring(const pmix_info_t* monitor, pmix_status_t error, const pmix_info_t directives[],
                         size_t ndirs, protocol::host_request& r) {
  if (monitor == nullptr) {
    log::error("api", "PMIx_Process_monitor: nothing to monitor");
    return PMIX_ERR_BAD_PARAM;
  }
  r.call = host_call::monitor;
  r.code = error;
  return read_info("PMIx_Process_monitor", monitor, 1, r.info) &&
                 read_info("PMIx_Process_monitor", directives, ndirs, r.directives)
             ? PMIX_SUCCESS
             : PMIX_ERR_BAD_PARAM;
}

// ---- credentials --------------------------------------------------------------

pmix_status_t validation(const pmix_byte_object_t* cred, const pmix_info_t info[], size_t ninfo,
                         protocol::host_request& r) {
  if (cred == nullptr || cred->bytes == nullptr || cred->size == 0) {
    log::error("api", "PMIx_Validate_credential: no credential");
    return PMIX_ERR_BAD_PARAM;
  }
  r.call = host_call::validate_credential;
  r.data = std::string(cred->bytes, cred->size);
  return read_info("PMIx_Validate_credential", info, ninfo, r.directives) ? PMIX_SUCCESS : PMIX_ERR_BAD_PARAM;
}

// ---- fabrics ------------------------------------------------------------------

std::atomic<size_t> next_fabric_index{0};

// Puts what the host said about the fabric into `fabric` (its info replaced).
void fill_fabric(pmix_fabric_t* fabric, const info_list& info, bool assign_index) {
  if (fabric->info != nullptr) PMIX_INFO_FREE(fabric->info, fabric->ninfo);
  fabric->info = convert::new_infos(info);
  fabric->ninfo = info.size();
  if (assign_index) fabric->index = next_fabric_index++;
}

pmix_status_t fabric_request(pmix_fabric_t* fabric, pmix_fabric_operation_t op, const pmix_info_t directives[],
                             size_t ndirs, protocol::host_request& r) {
  if (fabric == nullptr) {
    log::error("api", "PMIx_Fabric_*: no fabric object");
    return PMIX_ERR_BAD_PARAM;
  }
  r.call = host_call::fabric;
  r.code = op;
  if (!read_info("PMIx_Fabric_*", directives, ndirs, r.directives)) return PMIX_ERR_BAD_PARAM;
  if (fabric->name != nullptr && find(r.directives, PMIX_FABRIC_IDENTIFIER) == nullptr)
    r.directives.push_back({PMIX_FABRIC_IDENTIFIER, value::string(fabric->name), 0});
  if (op == PMIX_FABRIC_UPDATE_INFO)
    r.directives.push_back({PMIX_FABRIC_INDEX, value::unsigned_(PMIX_SIZE, fabric->index), 0});
  return PMIX_SUCCESS;
}

pmix_status_t fabric_blocking(pmix_fabric_t* fabric, pmix_fabric_operation_t op, const pmix_info_t directives[],
                              size_t ndirs) {
  if (on_library_thread()) return refuse_blocking(op == PMIX_FABRIC_REQUEST_INFO ? "PMIx_Fabric_register"
                                                                                 : "PMIx_Fabric_update");
  std::shared_ptr<client::session> s;
  if (auto rc = session_for("PMIx_Fabric_*", s); rc != PMIX_SUCCESS) return rc;
  protocol::host_request r;
  if (auto rc = fabric_request(fabric, op, directives, ndirs, r); rc != PMIX_SUCCESS) return rc;
  answer a;
  const auto rc = request_and_wait(s, r, a);
  if (rc == PMIX_SUCCESS) fill_fabric(fabric, a.info, op == PMIX_FABRIC_REQUEST_INFO);
  return rc;
}

pmix_status_t fabric_nb(pmix_fabric_t* fabric, pmix_fabric_operation_t op, const pmix_info_t directives[],
                        size_t ndirs, pmix_op_cbfunc_t cbfunc, void* cbdata) {
  std::shared_ptr<client::session> s;
  if (auto rc = session_for("PMIx_Fabric_*_nb", s); rc != PMIX_SUCCESS) return rc;
  protocol::host_request r;
  if (auto rc = fabric_request(fabric, op, directives, ndirs, r); rc != PMIX_SUCCESS) return rc;
  return s->host_request(r, [fabric, op, cbfunc, cbdata](pmix_status_t st, info_list info, std::string) {
    if (st == PMIX_SUCCESS) fill_fabric(fabric, info, op == PMIX_FABRIC_REQUEST_INFO);
    if (cbfunc != nullptr) cbfunc(st, cbdata);
  });
}

// ---- a tool's own host module (PMIx_tool_set_server_module) --------------------

// The module, when it has the up-call `has` picks.
std::shared_ptr<const library::own_host> own_host(bool (*has)(const pmix_server_module_t&)) {
  auto& l = lib();
  std::lock_guard<std::mutex> guard{l.mutex};
  if (!l.initialized() || !l.tool_module || !has(l.tool_module->module)) return nullptr;
  return l.tool_module;
}

// What the local up-call's callback brings back to a blocking call.
struct local_answer {
  waiter w;
  pmix_info_t* info = nullptr;
  size_t ninfo = 0;
};

void local_info_done(pmix_status_t st, pmix_info_t* info, size_t ninfo, void* cbdata, pmix_release_cbfunc_t release,
                     void* release_data) {
  auto* a = static_cast<local_answer*>(cbdata);
  if (info != nullptr && ninfo > 0) {
    PMIX_INFO_CREATE(a->info, ninfo);
    for (size_t k = 0; k < ninfo; ++k) PMIx_Info_xfer(&a->info[k], &info[k]);
    a->ninfo = ninfo;
  }
  if (release != nullptr) release(release_data);
  a->w.finish(st);
}

void local_op_done(pmix_status_t st, void* cbdata) { static_cast<local_answer*>(cbdata)->w.finish(st); }

// The host's immediate answer: PMIX_SUCCESS means its callback comes (then
// waited for); PMIX_OPERATION_SUCCEEDED is success at once; else failure.
pmix_status_t settle_local(pmix_status_t rc, local_answer& a) {
  if (rc == PMIX_SUCCESS) return a.w.wait();
  return rc == PMIX_OPERATION_SUCCEEDED ? PMIX_SUCCESS : rc;
}

// The same for the callback forms: the caller's callback runs once.
pmix_status_t settle_local_nb(pmix_status_t rc, const std::function<void(pmix_status_t)>& complete) {
  if (rc == PMIX_SUCCESS) return PMIX_SUCCESS;
  if (rc != PMIX_OPERATION_SUCCEEDED) return rc;
  complete(PMIX_SUCCESS);
  return PMIX_SUCCESS;
}

bool has_allocate(const pmix_server_module_t& m) { return m.allocate != nullptr; }
bool has_resource_block(const pmix_server_module_t& m) { return m.resource_block != nullptr; }

// ---- sessions and resource blocks (OpenPMIx 6.0) -----------------------------

pmix_status_t check_block(pmix_resource_block_directive_t directive, const char* block,
                          const pmix_resource_unit_t* units, size_t nunits) {
  if (directive != 0 && block != nullptr && (units != nullptr || nunits == 0)) return PMIX_SUCCESS;
  log::error("api", "PMIx_Resource_block: a directive and a block name are required");
  return PMIX_ERR_BAD_PARAM;
}

pmix_status_t resource_block(pmix_resource_block_directive_t directive, const char* block,
                             const pmix_resource_unit_t* units, size_t nunits, const pmix_info_t* info, size_t ninfo,
                             protocol::host_request& r) {
  if (auto rc = check_block(directive, block, units, nunits); rc != PMIX_SUCCESS) return rc;
  r.call = host_call::resource_block;
  r.code = directive;
  r.data = std::string{block};
  for (size_t k = 0; k < nunits; ++k) r.units.push_back({units[k].type, units[k].count});
  return read_info("PMIx_Resource_block", info, ninfo, r.info) ? PMIX_SUCCESS : PMIX_ERR_BAD_PARAM;
}

}  // namespace
}  // namespace pmix::api

using namespace pmix;
using namespace pmix::api;

extern "C" {

PMIX_EXPORT pmix_status_t PMIx_Allocation_request(pmix_alloc_directive_t directive, pmix_info_t* info,
                                                  size_t ninfo, pmix_info_t** results, size_t* nresults) {
  if (on_library_thread()) return refuse_blocking("PMIx_Allocation_request");
  if (results == nullptr || nresults == nullptr) return PMIX_ERR_BAD_PARAM;
  *results = nullptr;
  *nresults = 0;
  if (auto own = own_host(has_allocate)) {
    local_answer a;
    const auto rc = settle_local(
        own->module.allocate(&own->self, directive, info, ninfo, local_info_done, &a), a);
    *results = a.info;
    *nresults = a.ninfo;
    return rc;
  }
  std::shared_ptr<client::session> s;
  if (auto rc = session_for("PMIx_Allocation_request", s); rc != PMIX_SUCCESS) return rc;
  protocol::host_request r;
  if (auto rc = allocation(directive, info, ninfo, r); rc != PMIX_SUCCESS) return rc;
  answer a;
  const auto rc = request_and_wait(s, r, a);
  results_out(a.info, results, nresults);
  return rc;
}

PMIX_EXPORT pmix_status_t PMIx_Allocation_request_nb(pmix_alloc_directive_t directive, pmix_info_t* info,
                                                     size_t ninfo, pmix_info_cbfunc_t cbfunc, void* cbdata) {
  if (auto own = own_host(has_allocate))
    return settle_local_nb(own->module.allocate(&own->self, directive, info, ninfo, cbfunc, cbdata),
                           [cbfunc, cbdata](pmix_status_t st) {
                             if (cbfunc != nullptr) cbfunc(st, nullptr, 0, cbdata, nullptr, nullptr);
                           });
  std::shared_ptr<client::session> s;
  if (auto rc = session_for("PMIx_Allocation_request_nb", s); rc != PMIX_SUCCESS) return rc;
  protocol::host_request r;
  if (auto rc = allocation(directive, info, ninfo, r); rc != PMIX_SUCCESS) return rc;
  return s->host_request(r, [cbfunc, cbdata](pmix_status_t st, info_list results, std::string) {
    convert::deliver_infos(cbfunc, cbdata, st, results);
  });
}

PMIX_EXPORT pmix_status_t PMIx_Process_monitor(const pmix_info_t* monitor, pmix_status_t error,
                                               const pmix_info_t directives[], size_t ndirs,
                                               pmix_info_t** results, size_t* nresults) {
  if (on_library_thread()) return refuse_blocking("PMIx_Process_monitor");
  if (results == nullptr || nresults == nullptr) return PMIX_ERR_BAD_PARAM;
  *results = nullptr;
  *nresults = 0;
  std::shared_ptr<client::session> s;
  if (auto rc = session_for("PMIx_Process_monitor", s); rc != PMIX_SUCCESS) return rc;
  protocol::host_request r;
  if (auto rc = monitoring(monitor, error, directives, ndirs, r); rc != PMIX_SUCCESS) return rc;
  answer a;
  const auto rc = request_and_wait(s, r, a);
  results_out(a.info, results, nresults);
  return rc;
}

// OpenPMIx 6.0's function form of the PMIx_Heartbeat() macro (which our
// header keeps): one beat for the server's heartbeat monitor, answered by
// nobody; nothing without a server.
PMIX_EXPORT void(PMIx_Heartbeat)(void) {
  pmix_info_t beat;
  PMIX_INFO_CONSTRUCT(&beat);
  PMIX_INFO_LOAD(&beat, PMIX_SEND_HEARTBEAT, nullptr, PMIX_POINTER);
  PMIx_Process_monitor_nb(&beat, PMIX_SUCCESS, nullptr, 0, nullptr, nullptr);
  PMIX_INFO_DESTRUCT(&beat);
}

// PMIx_Heartbeat() calls this with a NULL cbfunc: the beat is sent, nobody
// waits for the answer.
PMIX_EXPORT pmix_status_t PMIx_Process_monitor_nb(const pmix_info_t* monitor, pmix_status_t error,
                                                  const pmix_info_t directives[], size_t ndirs,
                                                  pmix_info_cbfunc_t cbfunc, void* cbdata) {
  std::shared_ptr<client::session> s;
  if (auto rc = session_for("PMIx_Process_monitor_nb", s); rc != PMIX_SUCCESS) return rc;
  protocol::host_request r;
  if (auto rc = monitoring(monitor, error, directives, ndirs, r); rc != PMIX_SUCCESS) return rc;
  return s->host_request(r, [cbfunc, cbdata](pmix_status_t st, info_list results, std::string) {
    convert::deliver_infos(cbfunc, cbdata, st, results);
  });
}

PMIX_EXPORT pmix_status_t PMIx_Get_credential(const pmix_info_t info[], size_t ninfo,
                                              pmix_byte_object_t* credential) {
  if (on_library_thread()) return refuse_blocking("PMIx_Get_credential");
  if (credential == nullptr) return PMIX_ERR_BAD_PARAM;
  credential->bytes = nullptr;
  credential->size = 0;
  std::shared_ptr<client::session> s;
  if (auto rc = session_for("PMIx_Get_credential", s); rc != PMIX_SUCCESS) return rc;
  protocol::host_request r;
  r.call = host_call::get_credential;
  if (!read_info("PMIx_Get_credential", info, ninfo, r.directives)) return PMIX_ERR_BAD_PARAM;
  answer a;
  const auto rc = request_and_wait(s, r, a);
  if (rc == PMIX_SUCCESS && !a.data.empty()) {
    credential->bytes = static_cast<char*>(std::malloc(a.data.size()));
    if (credential->bytes == nullptr) return PMIX_ERR_NOMEM;
    std::memcpy(credential->bytes, a.data.data(), a.data.size());
    credential->size = a.data.size();
  }
  return rc;
}

PMIX_EXPORT pmix_status_t PMIx_Get_credential_nb(const pmix_info_t info[], size_t ninfo,
                                                 pmix_credential_cbfunc_t cbfunc, void* cbdata) {
  if (cbfunc == nullptr) return PMIX_ERR_BAD_PARAM;
  std::shared_ptr<client::session> s;
  if (auto rc = session_for("PMIx_Get_credential_nb", s); rc != PMIX_SUCCESS) return rc;
  protocol::host_request r;
  r.call = host_call::get_credential;
  if (!read_info("PMIx_Get_credential_nb", info, ninfo, r.directives)) return PMIX_ERR_BAD_PARAM;
  return s->host_request(r, [cbfunc, cbdata](pmix_status_t st, info_list results, std::string data) {
    // The credential and the info are the library's: valid during the
    // callback only (copy them to keep them).
    pmix_byte_object_t bo{data.empty() ? nullptr : data.data(), data.size()};
    convert::info_array c_info{results};
    cbfunc(st, &bo, c_info.data(), c_info.size(), cbdata);
  });
}

PMIX_EXPORT pmix_status_t PMIx_Validate_credential(const pmix_byte_object_t* cred, const pmix_info_t info[],
                                                   size_t ninfo, pmix_info_t** results, size_t* nresults) {
  if (on_library_thread()) return refuse_blocking("PMIx_Validate_credential");
  if (results == nullptr || nresults == nullptr) return PMIX_ERR_BAD_PARAM;
  *results = nullptr;
  *nresults = 0;
  std::shared_ptr<client::session> s;
  if (auto rc = session_for("PMIx_Validate_credential", s); rc != PMIX_SUCCESS) return rc;
  protocol::host_request r;
  if (auto rc = validation(cred, info, ninfo, r); rc != PMIX_SUCCESS) return rc;
  answer a;
  const auto rc = request_and_wait(s, r, a);
  results_out(a.info, results, nresults);
  return rc;
}

PMIX_EXPORT pmix_status_t PMIx_Validate_credential_nb(const pmix_byte_object_t* cred, const pmix_info_t info[],
                                                      size_t ninfo, pmix_validation_cbfunc_t cbfunc,
                                                      void* cbdata) {
  if (cbfunc == nullptr) return PMIX_ERR_BAD_PARAM;
  std::shared_ptr<client::session> s;
  if (auto rc = session_for("PMIx_Validate_credential_nb", s); rc != PMIX_SUCCESS) return rc;
  protocol::host_request r;
  if (auto rc = validation(cred, info, ninfo, r); rc != PMIX_SUCCESS) return rc;
  return s->host_request(r, [cbfunc, cbdata](pmix_status_t st, info_list results, std::string) {
    convert::info_array c_info{results};  // the library's, during the callback
    cbfunc(st, c_info.data(), c_info.size(), cbdata);
  });
}

// Output of `procs` on `channel`s comes to cbfunc, on the library's thread,
// from the moment the server's host agreed; regcbfunc gets the reference
// for PMIx_IOF_deregister (without one the call waits and returns it).
PMIX_EXPORT pmix_status_t PMIx_IOF_pull(const pmix_proc_t procs[], size_t nprocs, const pmix_info_t directives[],
                                        size_t ndirs, pmix_iof_channel_t channel, pmix_iof_cbfunc_t cbfunc,
                                        pmix_hdlr_reg_cbfunc_t regcbfunc, void* regcbdata) {
  if (regcbfunc == nullptr && on_library_thread()) return refuse_blocking("PMIx_IOF_pull with a NULL regcbfunc");
  std::shared_ptr<client::session> s;
  if (auto rc = session_for("PMIx_IOF_pull", s); rc != PMIX_SUCCESS) return rc;
  std::vector<proc_id> p;
  info_list d;
  if (procs == nullptr || nprocs == 0 || cbfunc == nullptr || (channel & PMIX_FWD_ALL_CHANNELS) == 0 ||
      convert::from_c(procs, nprocs, p) != PMIX_SUCCESS || !read_info("PMIx_IOF_pull", directives, ndirs, d)) {
    log::error("api", "PMIx_IOF_pull: processes, a channel and a callback are required");
    return PMIX_ERR_BAD_PARAM;
  }
  auto handler = [cbfunc](const protocol::iof_data& out) {
    pmix_proc_t source;
    convert::to_c(out.source, source);
    pmix_byte_object_t bo{const_cast<char*>(out.data.data()), out.data.size()};
    convert::info_array info{out.info};
    cbfunc(static_cast<size_t>(out.ref), static_cast<pmix_iof_channel_t>(out.channel), &source, &bo, info.data(),
           info.size());
  };
  if (regcbfunc != nullptr)
    return s->iof_pull(p, channel, d, handler, [regcbfunc, regcbdata](pmix_status_t st, std::uint64_t ref) {
      regcbfunc(st, static_cast<size_t>(ref), regcbdata);
    });
  auto ref = std::make_shared<std::uint64_t>(0);
  const auto rc = wait_for(s, [&](client::done_fn done) {
    return s->iof_pull(p, channel, d, handler, [ref, done](pmix_status_t st, std::uint64_t r) {
      *ref = r;
      done(st);
    });
  });
  return rc == PMIX_SUCCESS ? static_cast<pmix_status_t>(*ref) : rc;
}

PMIX_EXPORT pmix_status_t PMIx_IOF_deregister(size_t iofhdlr, const pmix_info_t directives[], size_t ndirs,
                                              pmix_op_cbfunc_t cbfunc, void* cbdata) {
  if (cbfunc == nullptr && on_library_thread()) return refuse_blocking("PMIx_IOF_deregister with a NULL cbfunc");
  std::shared_ptr<client::session> s;
  if (auto rc = session_for("PMIx_IOF_deregister", s); rc != PMIX_SUCCESS) return rc;
  info_list d;
  if (!read_info("PMIx_IOF_deregister", directives, ndirs, d)) return PMIX_ERR_BAD_PARAM;
  if (cbfunc != nullptr)
    return s->iof_deregister(iofhdlr, [cbfunc, cbdata](pmix_status_t st) { cbfunc(st, cbdata); });
  return wait_for(s, [&](client::done_fn done) { return s->iof_deregister(iofhdlr, std::move(done)); });
}

// Bytes for the targets' stdin; no bytes (or PMIX_IOF_COMPLETE) close it.
// With a NULL cbfunc the call waits for the answer.
PMIX_EXPORT pmix_status_t PMIx_IOF_push(const pmix_proc_t targets[], size_t ntargets, pmix_byte_object_t* bo,
                                        const pmix_info_t directives[], size_t ndirs, pmix_op_cbfunc_t cbfunc,
                                        void* cbdata) {
  if (cbfunc == nullptr && on_library_thread()) return refuse_blocking("PMIx_IOF_push with a NULL cbfunc");
  std::shared_ptr<client::session> s;
  if (auto rc = session_for("PMIx_IOF_push", s); rc != PMIX_SUCCESS) return rc;
  protocol::host_request r;
  r.call = host_call::iof_push;
  if (targets == nullptr || ntargets == 0 || convert::from_c(targets, ntargets, r.procs) != PMIX_SUCCESS) {
    log::error("api", "PMIx_IOF_push: no targets");
    return PMIX_ERR_BAD_PARAM;
  }
  if (!read_info("PMIx_IOF_push", directives, ndirs, r.directives)) return PMIX_ERR_BAD_PARAM;
  const auto* complete = find(r.directives, PMIX_IOF_COMPLETE);
  if (bo != nullptr && !(complete != nullptr && complete->val.truthy()))
    r.data = bo->size == 0 ? std::string{} : std::string(bo->bytes, bo->size);
  if (cbfunc == nullptr) {
    answer a;
    return request_and_wait(s, r, a);
  }
  return s->host_request(r, [cbfunc, cbdata](pmix_status_t st, info_list, std::string) { cbfunc(st, cbdata); });
}

PMIX_EXPORT pmix_status_t PMIx_Fabric_register(pmix_fabric_t* fabric, const pmix_info_t directives[],
                                               size_t ndirs) {
  return fabric_blocking(fabric, PMIX_FABRIC_REQUEST_INFO, directives, ndirs);
}

PMIX_EXPORT pmix_status_t PMIx_Fabric_register_nb(pmix_fabric_t* fabric, const pmix_info_t directives[],
                                                  size_t ndirs, pmix_op_cbfunc_t cbfunc, void* cbdata) {
  return fabric_nb(fabric, PMIX_FABRIC_REQUEST_INFO, directives, ndirs, cbfunc, cbdata);
}

PMIX_EXPORT pmix_status_t PMIx_Fabric_update(pmix_fabric_t* fabric) {
  return fabric_blocking(fabric, PMIX_FABRIC_UPDATE_INFO, nullptr, 0);
}

PMIX_EXPORT pmix_status_t PMIx_Fabric_update_nb(pmix_fabric_t* fabric, pmix_op_cbfunc_t cbfunc, void* cbdata) {
  return fabric_nb(fabric, PMIX_FABRIC_UPDATE_INFO, nullptr, 0, cbfunc, cbdata);
}

// Deregistration is the process's own: the fabric's info is released (the
// host keeps nothing per registration).
PMIX_EXPORT pmix_status_t PMIx_Fabric_deregister(pmix_fabric_t* fabric) {
  if (fabric == nullptr) return PMIX_ERR_BAD_PARAM;
  if (fabric->info != nullptr) PMIX_INFO_FREE(fabric->info, fabric->ninfo);
  fabric->info = nullptr;
  fabric->ninfo = 0;
  return PMIX_SUCCESS;
}

PMIX_EXPORT pmix_status_t PMIx_Fabric_deregister_nb(pmix_fabric_t* fabric, pmix_op_cbfunc_t cbfunc,
                                                    void* cbdata) {
  const auto rc = PMIx_Fabric_deregister(fabric);
  if (rc != PMIX_SUCCESS) return rc;
  if (cbfunc == nullptr) return PMIX_SUCCESS;
  auto s = current_session();
  if (!s) {
    cbfunc(PMIX_SUCCESS, cbdata);  // no library thread to run it on
    return PMIX_SUCCESS;
  }
  s->post([cbfunc, cbdata] { cbfunc(PMIX_SUCCESS, cbdata); });
  return PMIX_SUCCESS;
}

// The host acts on session `sessionID` as the directives say (OpenPMIx
// 6.0): cbfunc gets its status and info. Without cbfunc the call waits and
// returns PMIX_OPERATION_SUCCEEDED on success, as OpenPMIx's man page says
// (the host's info is then dropped).
PMIX_EXPORT pmix_status_t PMIx_Session_control(uint32_t sessionID, const pmix_info_t directives[], size_t ndirs,
                                               pmix_info_cbfunc_t cbfunc, void* cbdata) {
  if (cbfunc == nullptr && on_library_thread()) return refuse_blocking("PMIx_Session_control with a NULL cbfunc");
  std::shared_ptr<client::session> s;
  if (auto rc = session_for("PMIx_Session_control", s); rc != PMIX_SUCCESS) return rc;
  protocol::host_request r;
  r.call = host_call::session_control;
  r.ref = sessionID;
  if (!read_info("PMIx_Session_control", directives, ndirs, r.directives)) return PMIX_ERR_BAD_PARAM;
  if (cbfunc != nullptr)
    return s->host_request(r, [cbfunc, cbdata](pmix_status_t st, info_list results, std::string) {
      convert::deliver_infos(cbfunc, cbdata, st, results);
    });
  answer a;
  const auto rc = request_and_wait(s, r, a);
  return rc == PMIX_SUCCESS ? PMIX_OPERATION_SUCCEEDED : rc;
}

// Defines, extends, reduces or deletes the resource block `block` (OpenPMIx
// 6.0): the host's status.
PMIX_EXPORT pmix_status_t PMIx_Resource_block(pmix_resource_block_directive_t directive, char* block,
                                              const pmix_resource_unit_t* units, size_t nunits,
                                              const pmix_info_t* info, size_t ninfo) {
  if (on_library_thread()) return refuse_blocking("PMIx_Resource_block");
  if (auto rc = check_block(directive, block, units, nunits); rc != PMIX_SUCCESS) return rc;
  if (auto own = own_host(has_resource_block)) {
    local_answer a;
    return settle_local(
        own->module.resource_block(&own->self, directive, block, units, nunits, info, ninfo, local_op_done, &a), a);
  }
  std::shared_ptr<client::session> s;
  if (auto rc = session_for("PMIx_Resource_block", s); rc != PMIX_SUCCESS) return rc;
  protocol::host_request r;
  if (auto rc = resource_block(directive, block, units, nunits, info, ninfo, r); rc != PMIX_SUCCESS) return rc;
  answer a;
  return request_and_wait(s, r, a);
}

PMIX_EXPORT pmix_status_t PMIx_Resource_block_nb(pmix_resource_block_directive_t directive, char* block,
                                                 const pmix_resource_unit_t* units, size_t nunits,
                                                 const pmix_info_t* info, size_t ninfo, pmix_op_cbfunc_t cbfunc,
                                                 void* cbdata) {
  if (auto rc = check_block(directive, block, units, nunits); rc != PMIX_SUCCESS) return rc;
  if (auto own = own_host(has_resource_block))
    return settle_local_nb(
        own->module.resource_block(&own->self, directive, block, units, nunits, info, ninfo, cbfunc, cbdata),
        [cbfunc, cbdata](pmix_status_t st) {
          if (cbfunc != nullptr) cbfunc(st, cbdata);
        });
  std::shared_ptr<client::session> s;
  if (auto rc = session_for("PMIx_Resource_block_nb", s); rc != PMIX_SUCCESS) return rc;
  protocol::host_request r;
  if (auto rc = resource_block(directive, block, units, nunits, info, ninfo, r); rc != PMIX_SUCCESS) return rc;
  return s->host_request(r, [cbfunc, cbdata](pmix_status_t st, info_list, std::string) {
    if (cbfunc != nullptr) cbfunc(st, cbdata);
  });
}

}  // extern "C"
