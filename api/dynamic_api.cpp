// The client calls that go through the server to its host: publish, lookup
// and unpublish, spawn, connect and disconnect, log; and the Resolve calls,
// answered from the job data the process holds. The thin facade of
// style.md #1: check, copy into C++ values, one request, convert the reply.
#include <pmix.h>

#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "api/blocking.hpp"
#include "api/convert.hpp"
#include "api/library.hpp"
#include "common/log.hpp"

namespace pmix::api {
namespace {

bool read_info(const char* call, const pmix_info_t info[], size_t ninfo, info_list& out) {
  if (convert::from_c(info, ninfo, out) == PMIX_SUCCESS) return true;
  log::error("api", call, ": unreadable info");
  return false;
}

// The keys of a NULL-terminated array; false (with a log line) when there
// are none and some are required.
bool read_keys(const char* call, char** keys, bool required, std::vector<std::string>& out) {
  out = convert::keys(keys);
  for (const auto& k : out)
    if (k.empty()) {
      log::error("api", call, ": an empty key");
      return false;
    }
  if (required && out.empty()) {
    log::error("api", call, ": no keys");
    return false;
  }
  return true;
}

client::done_fn op_callback(pmix_op_cbfunc_t cbfunc, void* cbdata) {
  return [cbfunc, cbdata](pmix_status_t st) {
    if (cbfunc != nullptr) cbfunc(st, cbdata);
  };
}

pmix_status_t publish(const char* call, const pmix_info_t info[], size_t ninfo, info_list& out) {
  if (info == nullptr || ninfo == 0) {
    log::error("api", call, ": nothing to publish");
    return PMIX_ERR_BAD_PARAM;
  }
  return read_info(call, info, ninfo, out) ? PMIX_SUCCESS : PMIX_ERR_BAD_PARAM;
}

pmix_status_t read_procs(const char* call, const pmix_proc_t procs[], size_t nprocs, std::vector<proc_id>& out) {
  if (procs == nullptr || nprocs == 0 || convert::from_c(procs, nprocs, out) != PMIX_SUCCESS) {
    log::error("api", call, ": no processes, or unreadable ones");
    return PMIX_ERR_BAD_PARAM;
  }
  return PMIX_SUCCESS;
}

pmix_status_t read_apps(const pmix_info_t job_info[], size_t ninfo, const pmix_app_t apps[], size_t napps,
                        info_list& info, std::vector<app>& out) {
  if (napps == 0 || convert::from_c(apps, napps, out) != PMIX_SUCCESS) {
    log::error("api", "PMIx_Spawn: no applications, or one without a command");
    return PMIX_ERR_BAD_PARAM;
  }
  return read_info("PMIx_Spawn", job_info, ninfo, info) ? PMIX_SUCCESS : PMIX_ERR_BAD_PARAM;
}

pmix_status_t read_log(const pmix_info_t data[], size_t ndata, const pmix_info_t directives[], size_t ndirs,
                       info_list& d, info_list& dirs) {
  if (data == nullptr || ndata == 0) {
    log::error("api", "PMIx_Log: nothing to log");
    return PMIX_ERR_BAD_PARAM;
  }
  return read_info("PMIx_Log", data, ndata, d) && read_info("PMIx_Log", directives, ndirs, dirs)
             ? PMIX_SUCCESS
             : PMIX_ERR_BAD_PARAM;
}

// An array of pmix_pdata_t for a lookup callback, freed after it.
struct pdata_array {
  explicit pdata_array(const std::vector<pdata>& in) : size(in.size()) {
    if (size == 0) return;
    PMIX_PDATA_CREATE(data, size);
    for (size_t k = 0; k < size; ++k) convert::to_c(in[k], data[k]);
  }
  ~pdata_array() {
    if (data != nullptr) PMIX_PDATA_FREE(data, size);
  }
  pdata_array(const pdata_array&) = delete;
  pdata_array& operator=(const pdata_array&) = delete;
  pmix_pdata_t* data = nullptr;
  size_t size = 0;
};

}  // namespace
}  // namespace pmix::api

using namespace pmix;
using namespace pmix::api;

extern "C" {

PMIX_EXPORT pmix_status_t PMIx_Publish(const pmix_info_t info[], size_t ninfo) {
  if (on_library_thread()) return refuse_blocking("PMIx_Publish");
  auto s = current_session();
  if (!s) return PMIX_ERR_INIT;
  info_list data;
  auto rc = publish("PMIx_Publish", info, ninfo, data);
  if (rc != PMIX_SUCCESS) return rc;
  return wait_for(s, [&](client::done_fn done) { return s->publish(data, std::move(done)); });
}

PMIX_EXPORT pmix_status_t PMIx_Publish_nb(const pmix_info_t info[], size_t ninfo, pmix_op_cbfunc_t cbfunc,
                                          void* cbdata) {
  auto s = current_session();
  if (!s) return PMIX_ERR_INIT;
  info_list data;
  auto rc = publish("PMIx_Publish_nb", info, ninfo, data);
  if (rc != PMIX_SUCCESS) return rc;
  return s->publish(data, op_callback(cbfunc, cbdata));
}

PMIX_EXPORT pmix_status_t PMIx_Lookup(pmix_pdata_t data[], size_t ndata, const pmix_info_t info[],
                                      size_t ninfo) {
  if (on_library_thread()) return refuse_blocking("PMIx_Lookup");
  auto s = current_session();
  if (!s) return PMIX_ERR_INIT;
  if (data == nullptr || ndata == 0) {
    log::error("api", "PMIx_Lookup: no keys");
    return PMIX_ERR_BAD_PARAM;
  }
  std::vector<std::string> keys;
  for (size_t k = 0; k < ndata; ++k) {
    keys.push_back(convert::key(data[k].key));
    if (keys.back().empty()) {
      log::error("api", "PMIx_Lookup: an empty key");
      return PMIX_ERR_BAD_PARAM;
    }
  }
  info_list directives;
  if (!read_info("PMIx_Lookup", info, ninfo, directives)) return PMIX_ERR_BAD_PARAM;
  auto found = std::make_shared<std::vector<pdata>>();
  const auto rc = wait_for(s, [&](client::done_fn done) {
    return s->lookup_published(keys, directives, [found, done](pmix_status_t st, std::vector<pdata> d) {
      *found = std::move(d);
      done(st);
    });
  });
  // Each key's entry gets its value and its publisher, whatever it held
  // before (python3-pmix allocates the array without initialising it: its
  // values' types are garbage); a key asked for twice fills one entry each
  // time it was found. The others stay as they were.
  std::vector<bool> filled(ndata, false);
  for (const auto& d : *found)
    for (size_t k = 0; k < ndata; ++k)
      if (!filled[k] && keys[k] == d.key) {
        convert::to_c(d.proc, data[k].proc);
        convert::to_c(d.val, data[k].value);
        filled[k] = true;
        break;
      }
  return rc;
}

PMIX_EXPORT pmix_status_t PMIx_Lookup_nb(char** keys, const pmix_info_t info[], size_t ninfo,
                                         pmix_lookup_cbfunc_t cbfunc, void* cbdata) {
  auto s = current_session();
  if (!s) return PMIX_ERR_INIT;
  std::vector<std::string> k;
  info_list directives;
  if (cbfunc == nullptr || !read_keys("PMIx_Lookup_nb", keys, true, k) ||
      !read_info("PMIx_Lookup_nb", info, ninfo, directives))
    return PMIX_ERR_BAD_PARAM;
  return s->lookup_published(k, directives, [cbfunc, cbdata](pmix_status_t st, std::vector<pdata> found) {
    pdata_array out{found};
    cbfunc(st, out.data, out.size, cbdata);
  });
}

PMIX_EXPORT pmix_status_t PMIx_Unpublish(char** keys, const pmix_info_t info[], size_t ninfo) {
  if (on_library_thread()) return refuse_blocking("PMIx_Unpublish");
  auto s = current_session();
  if (!s) return PMIX_ERR_INIT;
  std::vector<std::string> k;
  info_list directives;
  if (!read_keys("PMIx_Unpublish", keys, false, k) || !read_info("PMIx_Unpublish", info, ninfo, directives))
    return PMIX_ERR_BAD_PARAM;
  return wait_for(s, [&](client::done_fn done) { return s->unpublish(k, directives, std::move(done)); });
}

PMIX_EXPORT pmix_status_t PMIx_Unpublish_nb(char** keys, const pmix_info_t info[], size_t ninfo,
                                            pmix_op_cbfunc_t cbfunc, void* cbdata) {
  auto s = current_session();
  if (!s) return PMIX_ERR_INIT;
  std::vector<std::string> k;
  info_list directives;
  if (!read_keys("PMIx_Unpublish_nb", keys, false, k) || !read_info("PMIx_Unpublish_nb", info, ninfo, directives))
    return PMIX_ERR_BAD_PARAM;
  return s->unpublish(k, directives, op_callback(cbfunc, cbdata));
}

PMIX_EXPORT pmix_status_t PMIx_Spawn(const pmix_info_t job_info[], size_t ninfo, const pmix_app_t apps[],
                                     size_t napps, pmix_nspace_t nspace) {
  if (on_library_thread()) return refuse_blocking("PMIx_Spawn");
  auto s = current_session();
  if (!s) return PMIX_ERR_INIT;
  info_list info;
  std::vector<app> a;
  auto rc = read_apps(job_info, ninfo, apps, napps, info, a);
  if (rc != PMIX_SUCCESS) return rc;
  if (nspace != nullptr) std::memset(nspace, 0, sizeof(pmix_nspace_t));
  auto name = std::make_shared<std::string>();
  rc = wait_for(s, [&](client::done_fn done) {
    return s->spawn(info, a, [name, done](pmix_status_t st, std::string ns) {
      *name = std::move(ns);
      done(st);
    });
  });
  if (rc == PMIX_SUCCESS && nspace != nullptr) std::strncpy(nspace, name->c_str(), PMIX_MAX_NSLEN);
  return rc;
}

PMIX_EXPORT pmix_status_t PMIx_Spawn_nb(const pmix_info_t job_info[], size_t ninfo, const pmix_app_t apps[],
                                        size_t napps, pmix_spawn_cbfunc_t cbfunc, void* cbdata) {
  auto s = current_session();
  if (!s) return PMIX_ERR_INIT;
  if (cbfunc == nullptr) {
    log::error("api", "PMIx_Spawn_nb: no cbfunc");
    return PMIX_ERR_BAD_PARAM;
  }
  info_list info;
  std::vector<app> a;
  auto rc = read_apps(job_info, ninfo, apps, napps, info, a);
  if (rc != PMIX_SUCCESS) return rc;
  return s->spawn(info, a, [cbfunc, cbdata](pmix_status_t st, std::string ns) {
    pmix_nspace_t out;
    std::memset(out, 0, sizeof out);
    std::strncpy(out, ns.c_str(), PMIX_MAX_NSLEN);
    cbfunc(st, out, cbdata);
  });
}

PMIX_EXPORT pmix_status_t PMIx_Connect(const pmix_proc_t procs[], size_t nprocs, const pmix_info_t info[],
                                       size_t ninfo) {
  if (on_library_thread()) return refuse_blocking("PMIx_Connect");
  auto s = current_session();
  if (!s) return PMIX_ERR_INIT;
  std::vector<proc_id> p;
  info_list directives;
  auto rc = read_procs("PMIx_Connect", procs, nprocs, p);
  if (rc != PMIX_SUCCESS) return rc;
  if (!read_info("PMIx_Connect", info, ninfo, directives)) return PMIX_ERR_BAD_PARAM;
  return wait_for(s, [&](client::done_fn done) { return s->connect_procs(p, directives, false, std::move(done)); });
}

PMIX_EXPORT pmix_status_t PMIx_Connect_nb(const pmix_proc_t procs[], size_t nprocs, const pmix_info_t info[],
                                          size_t ninfo, pmix_op_cbfunc_t cbfunc, void* cbdata) {
  auto s = current_session();
  if (!s) return PMIX_ERR_INIT;
  std::vector<proc_id> p;
  info_list directives;
  auto rc = read_procs("PMIx_Connect_nb", procs, nprocs, p);
  if (rc != PMIX_SUCCESS) return rc;
  if (!read_info("PMIx_Connect_nb", info, ninfo, directives)) return PMIX_ERR_BAD_PARAM;
  return s->connect_procs(p, directives, false, op_callback(cbfunc, cbdata));
}

PMIX_EXPORT pmix_status_t PMIx_Disconnect(const pmix_proc_t procs[], size_t nprocs, const pmix_info_t info[],
                                          size_t ninfo) {
  if (on_library_thread()) return refuse_blocking("PMIx_Disconnect");
  auto s = current_session();
  if (!s) return PMIX_ERR_INIT;
  std::vector<proc_id> p;
  info_list directives;
  auto rc = read_procs("PMIx_Disconnect", procs, nprocs, p);
  if (rc != PMIX_SUCCESS) return rc;
  if (!read_info("PMIx_Disconnect", info, ninfo, directives)) return PMIX_ERR_BAD_PARAM;
  return wait_for(s, [&](client::done_fn done) { return s->connect_procs(p, directives, true, std::move(done)); });
}

PMIX_EXPORT pmix_status_t PMIx_Disconnect_nb(const pmix_proc_t procs[], size_t nprocs, const pmix_info_t info[],
                                             size_t ninfo, pmix_op_cbfunc_t cbfunc, void* cbdata) {
  auto s = current_session();
  if (!s) return PMIX_ERR_INIT;
  std::vector<proc_id> p;
  info_list directives;
  auto rc = read_procs("PMIx_Disconnect_nb", procs, nprocs, p);
  if (rc != PMIX_SUCCESS) return rc;
  if (!read_info("PMIx_Disconnect_nb", info, ninfo, directives)) return PMIX_ERR_BAD_PARAM;
  return s->connect_procs(p, directives, true, op_callback(cbfunc, cbdata));
}

PMIX_EXPORT pmix_status_t PMIx_Log(const pmix_info_t data[], size_t ndata, const pmix_info_t directives[],
                                   size_t ndirs) {
  if (on_library_thread()) return refuse_blocking("PMIx_Log");
  auto s = current_session();
  if (!s) return PMIX_ERR_INIT;
  info_list d, dirs;
  auto rc = read_log(data, ndata, directives, ndirs, d, dirs);
  if (rc != PMIX_SUCCESS) return rc;
  return wait_for(s, [&](client::done_fn done) { return s->log(d, dirs, std::move(done)); });
}

PMIX_EXPORT pmix_status_t PMIx_Log_nb(const pmix_info_t data[], size_t ndata, const pmix_info_t directives[],
                                      size_t ndirs, pmix_op_cbfunc_t cbfunc, void* cbdata) {
  auto s = current_session();
  if (!s) return PMIX_ERR_INIT;
  info_list d, dirs;
  auto rc = read_log(data, ndata, directives, ndirs, d, dirs);
  if (rc != PMIX_SUCCESS) return rc;
  return s->log(d, dirs, op_callback(cbfunc, cbdata));
}

PMIX_EXPORT pmix_status_t PMIx_Resolve_peers(const char* nodename, const pmix_nspace_t nspace,
                                             pmix_proc_t** procs, size_t* nprocs) {
  auto s = current_session();
  if (!s) return PMIX_ERR_INIT;
  if (procs == nullptr || nprocs == nullptr) return PMIX_ERR_BAD_PARAM;
  *procs = nullptr;
  *nprocs = 0;
  std::vector<proc_id> found;
  const auto rc = s->resolve_peers(nodename == nullptr ? std::string{} : std::string{nodename},
                                   nspace == nullptr ? std::string{} : convert::nspace(nspace), found);
  if (rc != PMIX_SUCCESS) return rc;
  PMIX_PROC_CREATE(*procs, found.size());
  for (size_t k = 0; k < found.size(); ++k) convert::to_c(found[k], (*procs)[k]);
  *nprocs = found.size();
  return PMIX_SUCCESS;
}

PMIX_EXPORT pmix_status_t PMIx_Resolve_nodes(const pmix_nspace_t nspace, char** nodelist) {
  auto s = current_session();
  if (!s) return PMIX_ERR_INIT;
  if (nodelist == nullptr) return PMIX_ERR_BAD_PARAM;
  *nodelist = nullptr;
  std::string list;
  const auto rc = s->resolve_nodes(nspace == nullptr ? std::string{} : convert::nspace(nspace), list);
  if (rc != PMIX_SUCCESS) return rc;
  *nodelist = strdup(list.c_str());
  return *nodelist == nullptr ? PMIX_ERR_NOMEM : PMIX_SUCCESS;
}

}  // extern "C"
