// PMIx_server_* in libpmix.so.2: load the server runtime on first use and
// forward. Client processes never call these, so they never load CAF.
//
// The runtime is looked for, in order: $PMIX_CXX_SERVER_LIBRARY; next to the
// file libpmix.so.2 was loaded from (symlinks resolved); then by soname
// through the usual library search path.
#include <dlfcn.h>
#include <limits.h>
#include <pmix_server.h>
#include <stdlib.h>

#include <atomic>
#include <mutex>
#include <string>

#include "api/attribute_support.hpp"
#include "api/blocking.hpp"
#include "api/convert.hpp"
#include "server/events.hpp"
#include "api/library.hpp"
#include "api/server_runtime_abi.h"
#include "api/server_stub.hpp"
#include "common/log.hpp"

namespace pmix::api {
namespace {

std::mutex load_mutex;
// Written once, under load_mutex; read without it once set (a host's forked
// child calls PMIx_server_setup_fork, where a parent thread may have held
// the mutex at fork time).
std::atomic<const pmix_cxx_server_runtime_t*> loaded{nullptr};

std::string library_dir() {
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(&PMIx_server_init), &info) == 0 || info.dli_fname == nullptr)
    return {};
  char resolved[PATH_MAX];
  if (realpath(info.dli_fname, resolved) == nullptr) return {};
  std::string path{resolved};
  const auto slash = path.rfind('/');
  return slash == std::string::npos ? std::string{} : path.substr(0, slash);
}

const pmix_cxx_server_runtime_t* try_open(const std::string& path, std::string& errors) {
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
  if (handle == nullptr) {
    errors += std::string{"\n  "} + dlerror();
    return nullptr;
  }
  auto fn = reinterpret_cast<pmix_cxx_server_runtime_fn>(dlsym(handle, PMIX_CXX_SERVER_RUNTIME_SYMBOL));
  if (fn == nullptr) {
    errors += "\n  " + path + ": no " + PMIX_CXX_SERVER_RUNTIME_SYMBOL;
    return nullptr;
  }
  const auto* table = fn();
  if (table == nullptr || table->version != PMIX_CXX_SERVER_RUNTIME_VERSION) {
    errors += "\n  " + path + ": runtime version mismatch";
    return nullptr;
  }
  return table;
}

// What the runtime asks of this library (server_runtime_abi.h).
const pmix_cxx_library_hooks_t library_hooks = {
    attribute_support::answer_for_server,
};

}  // namespace

const pmix_cxx_server_runtime_t* server_runtime(bool load) {
  if (const auto* table = loaded.load(std::memory_order_acquire); table != nullptr || !load) return table;
  std::lock_guard<std::mutex> guard{load_mutex};
  if (const auto* table = loaded.load(std::memory_order_acquire)) return table;
  std::string errors;
  const pmix_cxx_server_runtime_t* table = nullptr;
  if (const char* env = getenv("PMIX_CXX_SERVER_LIBRARY"); env != nullptr && *env != '\0')
    table = try_open(env, errors);
  if (table == nullptr) {
    const auto dir = library_dir();
    if (!dir.empty()) table = try_open(dir + "/" + PMIX_CXX_SERVER_LIBRARY, errors);
  }
  if (table == nullptr) table = try_open(PMIX_CXX_SERVER_LIBRARY, errors);
  if (table == nullptr)
    log::error("server", "cannot load the server runtime ", PMIX_CXX_SERVER_LIBRARY, ":", errors);
  else
    table->set_library_hooks(&library_hooks);
  loaded.store(table, std::memory_order_release);
  return table;
}

bool in_server_library_thread() {
  const auto* rt = server_runtime(false);
  return rt != nullptr && rt->in_library_thread() != 0;
}

}  // namespace pmix::api

using pmix::api::server_runtime;

extern "C" {

PMIX_EXPORT pmix_status_t PMIx_server_init(pmix_server_module_t* module, pmix_info_t info[],
                                           size_t ninfo) {
  if (pmix::api::on_library_thread()) return pmix::api::refuse_blocking("PMIx_server_init");
  const auto* rt = server_runtime(true);
  if (rt == nullptr) return PMIX_ERR_INIT;
  const auto rc = rt->init(module, info, ninfo);
  pmix_proc_t self;
  if (rc == PMIX_SUCCESS && rt->running(&self) != 0) {
    auto& l = pmix::api::lib();
    std::lock_guard<std::mutex> guard{l.mutex};
    if (!l.server_self) {
      l.server_self = pmix::client::session::server_self(pmix::convert::proc(self));
      // The server's own contact data, for PMIx_Get on its own identity:
      // PMIX_SERVER_URI / PMIX_MYSERVER_URI, and PMIX_MYSERVER_ALT_URIS
      // when it listens at more than one address.
      char* uri = nullptr;
      char* alts = nullptr;
      if (rt->contact(&uri, &alts) == PMIX_SUCCESS) {
        for (const char* key : {PMIX_SERVER_URI, PMIX_MYSERVER_URI})
          l.server_self->put(PMIX_INTERNAL, pmix::info{key, pmix::value::string(uri), 0});
        if (alts[0] != '\0')
          l.server_self->put(PMIX_INTERNAL, pmix::info{PMIX_MYSERVER_ALT_URIS, pmix::value::string(alts), 0});
      }
      std::free(uri);
      std::free(alts);
    }
  }
  return rc;
}

PMIX_EXPORT pmix_status_t PMIx_server_finalize(void) {
  if (pmix::api::on_library_thread()) return pmix::api::refuse_blocking("PMIx_server_finalize");
  const auto* rt = server_runtime(false);
  if (rt == nullptr) return PMIX_ERR_INIT;
  const auto rc = rt->finalize();
  if (rc == PMIX_SUCCESS && rt->running(nullptr) == 0) {
    auto& l = pmix::api::lib();
    std::lock_guard<std::mutex> guard{l.mutex};
    l.server_self.reset();
  }
  // The handlers go with the last user of the library in this process.
  if (rc == PMIX_SUCCESS && rt->running(nullptr) == 0 && !pmix::api::current_session()) {
    pmix::api::events::handlers().clear();
    pmix::api::attribute_support::clear_host();
  }
  return rc;
}

PMIX_EXPORT pmix_status_t PMIx_server_register_nspace(const pmix_nspace_t nspace, int nlocalprocs,
                                                      pmix_info_t info[], size_t ninfo,
                                                      pmix_op_cbfunc_t cbfunc, void* cbdata) {
  if (cbfunc == nullptr && pmix::api::on_library_thread())
    return pmix::api::refuse_blocking("PMIx_server_register_nspace with a NULL cbfunc");
  const auto* rt = server_runtime(false);
  if (rt == nullptr) return PMIX_ERR_INIT;
  return rt->register_nspace(nspace, nlocalprocs, info, ninfo, cbfunc, cbdata);
}

PMIX_EXPORT void PMIx_server_deregister_nspace(const pmix_nspace_t nspace, pmix_op_cbfunc_t cbfunc,
                                               void* cbdata) {
  if (cbfunc == nullptr && pmix::api::on_library_thread()) {
    pmix::api::refuse_blocking("PMIx_server_deregister_nspace with a NULL cbfunc");
    return;  // nothing done (the call returns no status)
  }
  const auto* rt = server_runtime(false);
  if (rt == nullptr) {
    if (cbfunc != nullptr) cbfunc(PMIX_ERR_INIT, cbdata);
    return;
  }
  rt->deregister_nspace(nspace, cbfunc, cbdata);
}

PMIX_EXPORT pmix_status_t PMIx_server_register_client(const pmix_proc_t* proc, uid_t uid, gid_t gid,
                                                      void* server_object, pmix_op_cbfunc_t cbfunc,
                                                      void* cbdata) {
  if (cbfunc == nullptr && pmix::api::on_library_thread())
    return pmix::api::refuse_blocking("PMIx_server_register_client with a NULL cbfunc");
  const auto* rt = server_runtime(false);
  if (rt == nullptr) return PMIX_ERR_INIT;
  return rt->register_client(proc, uid, gid, server_object, cbfunc, cbdata);
}

PMIX_EXPORT void PMIx_server_deregister_client(const pmix_proc_t* proc, pmix_op_cbfunc_t cbfunc,
                                               void* cbdata) {
  if (cbfunc == nullptr && pmix::api::on_library_thread()) {
    pmix::api::refuse_blocking("PMIx_server_deregister_client with a NULL cbfunc");
    return;  // nothing done (the call returns no status)
  }
  const auto* rt = server_runtime(false);
  if (rt == nullptr) {
    if (cbfunc != nullptr) cbfunc(PMIX_ERR_INIT, cbdata);
    return;
  }
  rt->deregister_client(proc, cbfunc, cbdata);
}

PMIX_EXPORT pmix_status_t PMIx_server_setup_fork(const pmix_proc_t* proc, char*** env) {
  const auto* rt = server_runtime(false);
  if (rt == nullptr) return PMIX_ERR_INIT;
  return rt->setup_fork(proc, env);
}

PMIX_EXPORT pmix_status_t PMIx_server_dmodex_request(const pmix_proc_t* proc, pmix_dmodex_response_fn_t cbfunc,
                                                     void* cbdata) {
  const auto* rt = server_runtime(false);
  if (rt == nullptr) return PMIX_ERR_INIT;
  return rt->dmodex_request(proc, cbfunc, cbdata);
}

PMIX_EXPORT pmix_status_t PMIx_server_IOF_deliver(const pmix_proc_t* source, pmix_iof_channel_t channel,
                                                  const pmix_byte_object_t* bo, const pmix_info_t info[],
                                                  size_t ninfo, pmix_op_cbfunc_t cbfunc, void* cbdata) {
  const auto* rt = server_runtime(false);
  if (rt == nullptr) return PMIX_ERR_INIT;
  return rt->iof_deliver(source, channel, bo, info, ninfo, cbfunc, cbdata);
}

// OpenPMIx master: the host stops or resumes the stdin its producers push.
PMIX_EXPORT pmix_status_t PMIx_server_IOF_flow_control(const pmix_proc_t* source, pmix_iof_channel_t channel,
                                                       bool xoff, const pmix_info_t directives[], size_t ndirs,
                                                       pmix_op_cbfunc_t cbfunc, void* cbdata) {
  if (cbfunc == nullptr && pmix::api::on_library_thread())
    return pmix::api::refuse_blocking("PMIx_server_IOF_flow_control with a NULL cbfunc");
  const auto* rt = server_runtime(false);
  if (rt == nullptr) return PMIX_ERR_INIT;
  return rt->iof_flow_control(source, channel, xoff, directives, ndirs, cbfunc, cbdata);
}

PMIX_EXPORT pmix_status_t PMIx_server_setup_application(const pmix_nspace_t nspace, pmix_info_t info[],
                                                        size_t ninfo, pmix_setup_application_cbfunc_t cbfunc,
                                                        void* cbdata) {
  const auto* rt = server_runtime(false);
  if (rt == nullptr) return PMIX_ERR_INIT;
  return rt->setup_application(nspace, info, ninfo, cbfunc, cbdata);
}

PMIX_EXPORT pmix_status_t PMIx_server_setup_local_support(const pmix_nspace_t nspace, pmix_info_t info[],
                                                          size_t ninfo, pmix_op_cbfunc_t cbfunc, void* cbdata) {
  if (cbfunc == nullptr && pmix::api::on_library_thread())
    return pmix::api::refuse_blocking("PMIx_server_setup_local_support with a NULL cbfunc");
  const auto* rt = server_runtime(false);
  if (rt == nullptr) return PMIX_ERR_INIT;
  return rt->setup_local_support(nspace, info, ninfo, cbfunc, cbdata);
}

PMIX_EXPORT pmix_status_t PMIx_server_collect_inventory(pmix_info_t directives[], size_t ndirs,
                                                        pmix_info_cbfunc_t cbfunc, void* cbdata) {
  const auto* rt = server_runtime(false);
  if (rt == nullptr) return PMIX_ERR_INIT;
  return rt->collect_inventory(directives, ndirs, cbfunc, cbdata);
}

PMIX_EXPORT pmix_status_t PMIx_server_deliver_inventory(pmix_info_t info[], size_t ninfo,
                                                        pmix_info_t directives[], size_t ndirs,
                                                        pmix_op_cbfunc_t cbfunc, void* cbdata) {
  if (cbfunc == nullptr && pmix::api::on_library_thread())
    return pmix::api::refuse_blocking("PMIx_server_deliver_inventory with a NULL cbfunc");
  const auto* rt = server_runtime(false);
  if (rt == nullptr) return PMIX_ERR_INIT;
  return rt->deliver_inventory(info, ninfo, directives, ndirs, cbfunc, cbdata);
}

PMIX_EXPORT pmix_status_t PMIx_server_define_process_set(const pmix_proc_t* members, size_t nmembers,
                                                         const char* pset_name) {
  if (pmix::api::on_library_thread()) return pmix::api::refuse_blocking("PMIx_server_define_process_set");
  const auto* rt = server_runtime(false);
  if (rt == nullptr) return PMIX_ERR_INIT;
  return rt->define_process_set(members, nmembers, pset_name);
}

PMIX_EXPORT pmix_status_t PMIx_server_delete_process_set(char* pset_name) {
  if (pmix::api::on_library_thread()) return pmix::api::refuse_blocking("PMIx_server_delete_process_set");
  const auto* rt = server_runtime(false);
  if (rt == nullptr) return PMIX_ERR_INIT;
  return rt->delete_process_set(pset_name);
}

PMIX_EXPORT pmix_status_t PMIx_server_register_resources(pmix_info_t info[], size_t ninfo,
                                                         pmix_op_cbfunc_t cbfunc, void* cbdata) {
  if (cbfunc == nullptr && pmix::api::on_library_thread())
    return pmix::api::refuse_blocking("PMIx_server_register_resources with a NULL cbfunc");
  const auto* rt = server_runtime(false);
  if (rt == nullptr) return PMIX_ERR_INIT;
  return rt->register_resources(info, ninfo, cbfunc, cbdata);
}

PMIX_EXPORT pmix_status_t PMIx_server_deregister_resources(pmix_info_t info[], size_t ninfo,
                                                           pmix_op_cbfunc_t cbfunc, void* cbdata) {
  if (cbfunc == nullptr && pmix::api::on_library_thread())
    return pmix::api::refuse_blocking("PMIx_server_deregister_resources with a NULL cbfunc");
  const auto* rt = server_runtime(false);
  if (rt == nullptr) return PMIX_ERR_INIT;
  return rt->deregister_resources(info, ninfo, cbfunc, cbdata);
}

PMIX_EXPORT pmix_status_t PMIx_server_collect_job_info(pmix_proc_t* procs, size_t nprocs,
                                                       pmix_data_buffer_t* dbuf) {
  if (pmix::api::on_library_thread()) return pmix::api::refuse_blocking("PMIx_server_collect_job_info");
  const auto* rt = server_runtime(false);
  if (rt == nullptr) return PMIX_ERR_INIT;
  return rt->collect_job_info(procs, nprocs, dbuf);
}

}  // extern "C"
