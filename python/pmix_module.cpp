// The Python module `pmix`: PMIxClient, PMIxServer and PMIxTool over the C
// API, with the names and dict forms of Debian's python3-pmix (OpenPMIx
// 4.2.2's bindings). Each method converts its arguments (python/values.hpp),
// calls one C function with the GIL released, and converts the result.
// docs/python.md describes the module.
#include <pmix.h>
#include <pmix_server.h>
#include <pmix_tool.h>
#include <pybind11/pybind11.h>

#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>

#include "python/callbacks.hpp"
#include "python/client_calls.hpp"
#include "python/constants.hpp"
#include "python/handlers.hpp"
#include "python/local_calls.hpp"
#include "python/server_calls.hpp"
#include "python/server_module.hpp"
#include "python/tool_calls.hpp"
#include "python/values.hpp"
#include "python/waiting.hpp"

namespace pmixpy {
namespace {

using calls::me;

// Successful PMIx_server_init calls not yet balanced by a finalize (the
// library counts the same way): the module's callables go with the last.
int server_inits = 0;
// Successful inits of any kind (client, tool, server) not yet balanced by a
// finalize: when none is left the library's handler references start again
// at 0, so the event and IOF handlers are forgotten.
int library_users = 0;

void user_finalized() {
  if (library_users > 0 && --library_users == 0) handlers::clear();
}

// Runs a void C call that reports through a pmix_op_cbfunc_t, and waits
// for it. Inside a server-module callable it would wait on a library
// thread: the library's own blocking form refuses that (and logs it), and
// so does this.
template <class Call>
pmix_status_t call_and_wait(Call call) {
  if (callbacks::in_callback()) {
    call(nullptr, nullptr);
    return PMIX_ERR_WOULD_BLOCK;
  }
  auto p = std::make_shared<pending<no_result>>();
  return start_and_wait<no_result>(p, [&](void* cbdata) {
    call(&op_completed, cbdata);
    return PMIX_SUCCESS;
  });
}

pmix_proc_t proc_or_me(py::handle proc, const char* what) {
  if (proc.is_none()) return me();
  pmix_proc_t p;
  load_proc(proc, p, what);
  return p;
}

std::string joined(py::handle items, char separator, const char* what) {
  if (PyUnicode_Check(items.ptr()) || PyBytes_Check(items.ptr())) return load_text(items, what);
  std::string out;
  for (auto item : as_list(items, what)) {
    if (!out.empty()) out += separator;
    out += load_text(item, what);
  }
  return out;
}

py::tuple rc_and_text(pmix_status_t rc, char* text) {
  py::object out = py::none();
  if (rc == PMIX_SUCCESS && text != nullptr) out = py::bytearray(text, std::strlen(text));
  std::free(text);
  return py::make_tuple(rc, out);
}

class client {
 public:
  client() {
    PMIX_FABRIC_CONSTRUCT(&fabric_);
    PMIX_TOPOLOGY_CONSTRUCT(&topology_);
  }
  virtual ~client() {
    if (fabric_set_) PMIx_Fabric_deregister(&fabric_);
    if (topology_.topology != nullptr) PMIx_Topology_destruct(&topology_);
  }
  client(const client&) = delete;
  client& operator=(const client&) = delete;

  py::tuple init(py::handle dicts) {
    info_array info{dicts, "init directives"};
    pmix_proc_t p;
    pmix_status_t rc;
    {
      py::gil_scoped_release nogil;
      rc = PMIx_Init(&p, info.data(), info.size());
    }
    if (rc != PMIX_SUCCESS) return py::make_tuple(rc, py::dict());
    me() = p;
    ++library_users;
    return py::make_tuple(rc, unload_proc(p));
  }

  pmix_status_t finalize(py::handle dicts) {
    info_array info{dicts, "finalize directives"};
    pmix_status_t rc;
    {
      py::gil_scoped_release nogil;
      rc = PMIx_Finalize(info.data(), info.size());
    }
    if (rc == PMIX_SUCCESS) user_finalized();
    return rc;
  }

  bool initialized() { return PMIx_Initialized() != 0; }

  pmix_status_t put(int scope, py::handle key, py::handle value) {
    pmix_key_t k;
    load_key(key, k, "put key");
    owned_value v;
    load_value(value, *v.get(), "put value");
    if (scope < 0 || scope > UINT8_MAX)
      throw py::value_error("put scope: " + std::to_string(scope) + " is not a scope");
    py::gil_scoped_release nogil;
    return PMIx_Put(static_cast<pmix_scope_t>(scope), k, v.get());
  }

  pmix_status_t commit() {
    py::gil_scoped_release nogil;
    return PMIx_Commit();
  }

  pmix_status_t fence(py::handle procs, py::handle dicts) {
    proc_array p{procs, "fence procs"};
    info_array info{dicts, "fence directives"};
    py::gil_scoped_release nogil;
    return PMIx_Fence(p.data(), p.size(), info.data(), info.size());
  }

  py::tuple get(py::handle proc, py::handle key, py::handle dicts) {
    const auto p = proc_or_me(proc, "get proc");
    pmix_key_t k;
    load_key(key, k, "get key");
    info_array info{dicts, "get directives"};
    pmix_value_t* val = nullptr;
    pmix_status_t rc;
    {
      py::gil_scoped_release nogil;
      rc = PMIx_Get(&p, k, info.data(), info.size(), &val);
    }
    py::object out = py::none();
    if (val != nullptr) {
      struct release {
        pmix_value_t* v;
        ~release() { PMIX_VALUE_RELEASE(v); }
      } guard{val};
      if (rc == PMIX_SUCCESS) out = unload_value(*val);
    }
    return py::make_tuple(rc, out);
  }

  pmix_status_t abort(int status, py::handle msg, py::handle procs) {
    const auto text = msg.is_none() ? std::string{} : load_text(msg, "abort message");
    proc_array p{procs, "abort procs"};
    py::gil_scoped_release nogil;
    return PMIx_Abort(status, text.c_str(), p.data(), p.size());
  }

  py::tuple query(py::handle queries) {
    query_array q{queries, "queries"};
    pmix_info_t* results = nullptr;
    size_t nresults = 0;
    pmix_status_t rc;
    {
      py::gil_scoped_release nogil;
      rc = PMIx_Query_info(q.data(), q.size(), &results, &nresults);
    }
    py::list out;
    if (results != nullptr) {
      struct release {
        pmix_info_t* info;
        size_t n;
        ~release() { PMIX_INFO_FREE(info, n); }
      } guard{results, nresults};
      out = unload_infos(results, nresults);
    }
    return py::make_tuple(rc, out);
  }

  // PMIx_Store_internal (proc None: this process).
  pmix_status_t store_internal(py::handle proc, py::handle key, py::handle value) {
    const auto p = proc_or_me(proc, "store_internal proc");
    pmix_key_t k;
    load_key(key, k, "store_internal key");
    owned_value v;
    load_value(value, *v.get(), "store_internal value");
    py::gil_scoped_release nogil;
    return PMIx_Store_internal(&p, k, v.get());
  }

  // python3-pmix keeps one fabric registration per object: (rc, [info]).
  py::tuple fabric_register(py::handle dicts) {
    if (fabric_set_) return py::make_tuple(PMIX_ERR_RESOURCE_BUSY, py::none());
    info_array info{dicts, "fabric_register dicts"};
    pmix_status_t rc;
    {
      py::gil_scoped_release nogil;
      rc = PMIx_Fabric_register(&fabric_, info.data(), info.size());
    }
    if (rc != PMIX_SUCCESS) return py::make_tuple(rc, py::list());
    fabric_set_ = true;
    return py::make_tuple(rc, unload_infos(fabric_.info, fabric_.ninfo));
  }

  py::tuple fabric_update() {
    if (!fabric_set_) return py::make_tuple(PMIX_ERR_INIT, py::none());
    pmix_status_t rc;
    {
      py::gil_scoped_release nogil;
      rc = PMIx_Fabric_update(&fabric_);
    }
    return py::make_tuple(rc, unload_infos(fabric_.info, fabric_.ninfo));
  }

  pmix_status_t fabric_deregister() {
    if (!fabric_set_) return PMIX_ERR_INIT;
    fabric_set_ = false;
    return PMIx_Fabric_deregister(&fabric_);
  }

  // python3-pmix keeps one topology per object: load_topology fills it,
  // compute_distances uses it (loading it first if need be).
  pmix_status_t load_topology() { return local_calls::load_topology(topology_); }
  py::tuple compute_distances(py::handle cpuset, py::handle dicts) {
    return local_calls::compute_distances(topology_, cpuset, dicts);
  }

 private:
  pmix_fabric_t fabric_;
  bool fabric_set_ = false;
  pmix_topology_t topology_;
};

class server : public client {
 public:
  pmix_status_t init(py::handle dicts, py::handle map) {
    info_array info{dicts, "server directives"};
    pmix_server_module_t module;
    std::memset(&module, 0, sizeof module);
    // No module at all (spec 000 allows it) is NULL, so that the module of a
    // later init can still be adopted.
    const bool any = server_module::install(map, module);
    // This module is our header's whole struct: its OpenPMIx 6.0 slots
    // (sessioncontrol, resourceblock) are there to be read.
    std::vector<pmix_info_t> directives(info.data(), info.data() + info.size());
    pmix_info_t slots;
    const uint32_t nslots = 32;
    PMIX_INFO_LOAD(&slots, PMIX_CXX_SERVER_MODULE_SLOTS, &nslots, PMIX_UINT32);
    directives.push_back(slots);
    pmix_status_t rc;
    {
      py::gil_scoped_release nogil;
      rc = PMIx_server_init(any ? &module : nullptr, directives.data(), directives.size());
    }
    if (rc == PMIX_SUCCESS) {
      ++server_inits;
      ++library_users;
    } else if (server_inits == 0) {
      server_module::clear();
    }
    return rc;
  }

  pmix_status_t finalize() {
    pmix_status_t rc;
    {
      py::gil_scoped_release nogil;
      rc = PMIx_server_finalize();
    }
    if (rc == PMIX_SUCCESS && server_inits > 0 && --server_inits == 0) server_module::clear();
    if (rc == PMIX_SUCCESS) user_finalized();
    return rc;
  }

  pmix_status_t register_nspace(py::handle nspace, int nlocalprocs, py::handle dicts) {
    pmix_nspace_t ns;
    load_nspace(nspace, ns, "register_nspace namespace");
    info_array info{dicts, "register_nspace info"};
    py::gil_scoped_release nogil;
    return PMIx_server_register_nspace(ns, nlocalprocs, info.data(), info.size(), nullptr, nullptr);
  }

  pmix_status_t deregister_nspace(py::handle nspace) {
    pmix_nspace_t ns;
    load_nspace(nspace, ns, "deregister_nspace namespace");
    py::gil_scoped_release nogil;
    return call_and_wait([&](pmix_op_cbfunc_t cbfunc, void* cbdata) {
      PMIx_server_deregister_nspace(ns, cbfunc, cbdata);
    });
  }

  pmix_status_t register_client(py::handle proc, long long uid, long long gid) {
    pmix_proc_t p;
    load_proc(proc, p, "register_client proc");
    if (uid < 0 || uid > UINT32_MAX || gid < 0 || gid > UINT32_MAX)
      throw py::value_error("register_client: uid and gid must be in [0, 2**32)");
    py::gil_scoped_release nogil;
    return PMIx_server_register_client(&p, static_cast<uid_t>(uid), static_cast<gid_t>(gid), nullptr,
                                       nullptr, nullptr);
  }

  pmix_status_t deregister_client(py::handle proc) {
    pmix_proc_t p;
    load_proc(proc, p, "deregister_client proc");
    py::gil_scoped_release nogil;
    return call_and_wait([&](pmix_op_cbfunc_t cbfunc, void* cbdata) {
      PMIx_server_deregister_client(&p, cbfunc, cbdata);
    });
  }

  // python3-pmix's form setup_fork(proc, env) updates `env` and returns the
  // status; without `env` the call returns (status, the variables as a dict).
  py::object setup_fork(py::handle proc, py::handle envin) {
    pmix_proc_t p;
    load_proc(proc, p, "setup_fork proc");
    if (!envin.is_none() && !py::isinstance<py::dict>(envin))
      throw py::type_error("setup_fork env: expected a dict");
    char** env = nullptr;
    pmix_status_t rc;
    {
      py::gil_scoped_release nogil;
      rc = PMIx_server_setup_fork(&p, &env);
    }
    py::dict vars;
    for (char** e = env; e != nullptr && *e != nullptr; ++e) {
      const std::string entry{*e};
      const auto eq = entry.find('=');
      if (rc == PMIX_SUCCESS)
        vars[unload_text(entry.substr(0, eq).c_str())] =
            unload_text(eq == std::string::npos ? "" : entry.substr(eq + 1).c_str());
      std::free(*e);
    }
    std::free(env);
    if (envin.is_none()) return py::make_tuple(rc, vars);
    auto target = py::reinterpret_borrow<py::dict>(envin);
    for (auto item : vars) target[item.first] = item.second;
    return py::int_(rc);
  }

  py::tuple collect_job_info(py::handle procs) {
    proc_array p{procs, "collect_job_info procs"};
    pmix_data_buffer_t buf;
    PMIX_DATA_BUFFER_CONSTRUCT(&buf);
    pmix_status_t rc;
    {
      py::gil_scoped_release nogil;
      rc = PMIx_server_collect_job_info(p.data(), p.size(), &buf);
    }
    py::object blob = py::none();
    if (rc == PMIX_SUCCESS) {
      char* bytes = nullptr;
      size_t size = 0;
      PMIX_DATA_BUFFER_UNLOAD(&buf, bytes, size);
      blob = unload_bytes(bytes, size);
      std::free(bytes);
    }
    PMIX_DATA_BUFFER_DESTRUCT(&buf);
    return py::make_tuple(rc, blob);
  }

  py::tuple generate_regex(py::handle hosts) {
    const auto input = joined(hosts, ',', "generate_regex hosts");
    char* regex = nullptr;
    const auto rc = PMIx_generate_regex(input.c_str(), &regex);
    return rc_and_text(rc, regex);
  }

  py::tuple generate_ppn(py::handle procs) {
    const auto input = joined(procs, ';', "generate_ppn procs");
    char* ppn = nullptr;
    const auto rc = PMIx_generate_ppn(input.c_str(), &ppn);
    return rc_and_text(rc, ppn);
  }
};

class tool : public server {
 public:
  py::tuple init(py::handle dicts) {
    info_array info{dicts, "tool directives"};
    pmix_proc_t p;
    pmix_status_t rc;
    {
      py::gil_scoped_release nogil;
      rc = PMIx_tool_init(&p, info.data(), info.size());
    }
    if (rc != PMIX_SUCCESS) return py::make_tuple(rc, py::dict());
    me() = p;
    ++library_users;
    return py::make_tuple(rc, unload_proc(p));
  }

  pmix_status_t finalize() {
    pmix_status_t rc;
    {
      py::gil_scoped_release nogil;
      rc = PMIx_tool_finalize();
    }
    if (rc == PMIX_SUCCESS) user_finalized();
    return rc;
  }
};

std::string text_of(const char* s) { return s == nullptr ? std::string{} : std::string{s}; }

// At interpreter exit: a server still up is finalized while Python can still
// run its callables; after that no up-call may touch Python.
void finalize_at_exit() {
  while (server_inits > 0) {
    pmix_status_t rc;
    {
      py::gil_scoped_release nogil;
      rc = PMIx_server_finalize();
    }
    if (rc != PMIX_SUCCESS) break;
    --server_inits;
  }
  handlers::clear();
  callbacks::shut_down();
  server_module::clear();
}

}  // namespace
}  // namespace pmixpy

PYBIND11_MODULE(pmix, m) {
  namespace py = pybind11;
  using namespace pmixpy;
  m.doc() =
      "PMIx for Python over PMIx-CXX (libpmix.so.2): PMIxClient, PMIxServer and PMIxTool with the "
      "names and dict forms of python3-pmix, and the PMIX_* constants. See docs/python.md.";
  add_constants(m);

  py::class_<client>(m, "PMIxClient")
      .def(py::init<>())
      .def("init", &client::init, py::arg("dicts") = py::none(),
           "PMIx_Init with a list of info dicts; returns (rc, {'nspace': ..., 'rank': ...}).")
      .def("finalize", &client::finalize, py::arg("dicts") = py::none(), "PMIx_Finalize; returns rc.")
      .def("initialized", &client::initialized)
      .def("put", &client::put, py::arg("scope"), py::arg("key"), py::arg("value"),
           "PMIx_Put(scope, key, {'value': ..., 'val_type': ...}); returns rc.")
      .def("commit", &client::commit)
      .def("fence", &client::fence, py::arg("procs") = py::none(), py::arg("dicts") = py::none(),
           "PMIx_Fence over a list of proc dicts (empty or None: the whole namespace); returns rc.")
      .def("get", &client::get, py::arg("proc"), py::arg("key"), py::arg("dicts") = py::none(),
           "PMIx_Get (proc None: this process); returns (rc, {'value': ..., 'val_type': ...} or None).")
      .def("abort", &client::abort, py::arg("status"), py::arg("msg"), py::arg("procs") = py::none(),
           "PMIx_Abort; returns rc.")
      .def("query", &client::query, py::arg("queries"),
           "PMIx_Query_info with a list of {'keys': [...], 'qualifiers': [info dicts]}; returns "
           "(rc, [info dicts]).")
      .def("error_string", [](client&, int rc) { return text_of(PMIx_Error_string(rc)); })
      .def("data_type_string",
           [](client&, int t) { return text_of(PMIx_Data_type_string(static_cast<pmix_data_type_t>(t))); })
      .def("scope_string",
           [](client&, int s) { return text_of(PMIx_Scope_string(static_cast<pmix_scope_t>(s))); })
      .def("get_version", [](client&) { return text_of(PMIx_Get_version()); })
      .def("proc_state_string",
           [](client&, int v) { return text_of(PMIx_Proc_state_string(static_cast<pmix_proc_state_t>(v))); })
      .def(
          "persistence_string",
          [](client&, int v) { return text_of(PMIx_Persistence_string(static_cast<pmix_persistence_t>(v))); })
      .def("data_range_string",
           [](client&, int v) { return text_of(PMIx_Data_range_string(static_cast<pmix_data_range_t>(v))); })
      .def("info_directives_string",
           [](client&, unsigned v) {
             char* text = PMIx_Info_directives_string(static_cast<pmix_info_directives_t>(v));
             auto out = text_of(text);
             std::free(text);
             return out;
           })
      .def("alloc_directive_string",
           [](client&, int v) {
             return text_of(PMIx_Alloc_directive_string(static_cast<pmix_alloc_directive_t>(v)));
           })
      .def(
          "iof_channel_string",
          [](client&, int v) { return text_of(PMIx_IOF_channel_string(static_cast<pmix_iof_channel_t>(v))); })
      .def("job_state_string",
           [](client&, int v) { return text_of(PMIx_Job_state_string(static_cast<pmix_job_state_t>(v))); })
      .def("link_state_string",
           [](client&, int v) { return text_of(PMIx_Link_state_string(static_cast<pmix_link_state_t>(v))); })
      .def("device_type_string",
           [](client&, unsigned long long v) {
             return text_of(PMIx_Device_type_string(static_cast<pmix_device_type_t>(v)));
           })
      .def("get_attribute_string",
           [](client&, py::handle name) {
             return text_of(PMIx_Get_attribute_string(load_text(name, "get_attribute_string").c_str()));
           })
      .def("get_attribute_name",
           [](client&, py::handle key) {
             return text_of(PMIx_Get_attribute_name(load_text(key, "get_attribute_name").c_str()));
           })
      .def(
          "store_internal", &client::store_internal, py::arg("pyproc"), py::arg("pykey"), py::arg("pyval"),
          "PMIx_Store_internal(proc (None: this process), key, {'value': ..., 'val_type': ...}); returns rc.")
      .def(
          "progress",
          [](client&) {
            py::gil_scoped_release nogil;
            PMIx_Progress();
          },
          "PMIx_Progress.")
      .def("fabric_register", &client::fabric_register, py::arg("dicts") = py::none(),
           "PMIx_Fabric_register (one registration per object); returns (rc, [info dicts]).")
      .def("fabric_update", &client::fabric_update, "PMIx_Fabric_update; returns (rc, [info dicts]).")
      .def("fabric_deregister", &client::fabric_deregister, "PMIx_Fabric_deregister; returns rc.")
      // ---- computed in this process: topology, cpusets, locality, distances ----
      .def("load_topology", &client::load_topology,
           "PMIx_Load_topology into this object's topology; returns rc.")
      .def(
          "get_relative_locality",
          [](client&, py::handle loc1, py::handle loc2) {
            return local_calls::get_relative_locality(loc1, loc2);
          },
          py::arg("loc1"), py::arg("loc2"),
          "PMIx_Get_relative_locality of two locality strings; returns (rc, [PMIX_LOCALITY_* bits set]).")
      .def(
          "parse_cpuset_string",
          [](client&, py::handle text) { return local_calls::parse_cpuset_string(text); }, py::arg("csetstr"),
          "PMIx_Parse_cpuset_string('hwloc:<list>'); returns (rc, {'source': str, 'cpus': [str]} or None).")
      .def(
          "get_cpuset", [](client&, int ref) { return local_calls::get_cpuset(ref); }, py::arg("ref"),
          "PMIx_Get_cpuset(PMIX_CPUBIND_PROCESS or PMIX_CPUBIND_THREAD); returns (rc, {'source': str, "
          "'cpus': [str]}).")
      .def("compute_distances", &client::compute_distances, py::arg("pycpus"), py::arg("dicts") = py::none(),
           "PMIx_Compute_distances from a cpuset dict (None: this process's binding) to the devices of this "
           "object's topology; returns (rc, [{'uuid', 'osname', 'type', 'mindist', 'maxdist'}]).")
      // ---- publish / lookup, spawn, connect (python3-pmix's forms) ----
      .def(
          "publish", [](client&, py::handle dicts) { return calls::publish(dicts); },
          py::arg("dicts") = py::none(), "PMIx_Publish of a list of info dicts; returns rc.")
      .def(
          "unpublish",
          [](client&, py::handle keys, py::handle dicts) { return calls::unpublish(keys, dicts); },
          py::arg("pykeys") = py::none(), py::arg("dicts") = py::none(),
          "PMIx_Unpublish of a list of keys (None: all of this process's); returns rc.")
      .def(
          "lookup", [](client&, py::handle data, py::handle dicts) { return calls::lookup(data, dicts); },
          py::arg("data"), py::arg("dicts") = py::none(),
          "PMIx_Lookup of [{'key': k}, ...]; returns (rc, [{'key', 'proc', 'value', 'val_type'}]) with "
          "what was found (the list given is updated to it).")
      .def(
          "spawn", [](client&, py::handle info, py::handle apps) { return calls::spawn(info, apps); },
          py::arg("jobInfo"), py::arg("pyapps"),
          "PMIx_Spawn of [{'cmd', 'argv', 'env', 'cwd', 'maxprocs', 'info'}, ...]; returns (rc, nspace or "
          "None).")
      .def(
          "connect", [](client&, py::handle peers, py::handle info) { return calls::connect(peers, info); },
          py::arg("peers") = py::none(), py::arg("pyinfo") = py::none(),
          "PMIx_Connect (peers None or []: this namespace); returns rc.")
      .def(
          "disconnect",
          [](client&, py::handle peers, py::handle info) { return calls::disconnect(peers, info); },
          py::arg("peers") = py::none(), py::arg("pyinfo") = py::none(),
          "PMIx_Disconnect (peers None or []: this namespace); returns rc.")
      .def(
          "resolve_peers",
          [](client&, py::handle node, py::handle ns) { return calls::resolve_peers(node, ns); },
          py::arg("pynode") = py::none(), py::arg("pyns") = py::none(),
          "PMIx_Resolve_peers(node, nspace); returns (rc, [procs]).")
      .def(
          "resolve_nodes", [](client&, py::handle ns) { return calls::resolve_nodes(ns); },
          py::arg("pyns") = py::none(), "PMIx_Resolve_nodes(nspace); returns (rc, 'node,...' or None).")
      // ---- requests the host answers ----
      .def(
          "log", [](client&, py::handle data, py::handle dirs) { return calls::log(data, dirs); },
          py::arg("pydata"), py::arg("pydirs") = py::none(), "PMIx_Log(data, directives); returns rc.")
      .def(
          "session_control",
          [](client&, unsigned long session, py::handle dirs) { return calls::session_control(session, dirs); },
          py::arg("sessionID"), py::arg("pydirs") = py::none(),
          "PMIx_Session_control (OpenPMIx 6.0); returns (rc, [info dicts]) as the host answered.")
      .def(
          "resource_block",
          [](client&, int directive, py::handle block, py::handle units, py::handle info) {
            return calls::resource_block(directive, block, units, info);
          },
          py::arg("directive"), py::arg("block"), py::arg("units") = py::none(), py::arg("pyinfo") = py::none(),
          "PMIx_Resource_block (OpenPMIx 6.0) with units [{'type': PMIX_DEVTYPE_*, 'count': n}]; returns rc.")
      .def("error_code", [](client&, py::handle name) { return PMIx_Error_code(load_text(name, "error_code name").c_str()); },
           "PMIx_Error_code (OpenPMIx 4.2.9): the status of that name (any case); INT32_MIN if none.")
      .def("heartbeat", [](client&) {
             py::gil_scoped_release nogil;
             PMIx_Heartbeat();
           },
           "PMIx_Heartbeat (OpenPMIx 6.0's function): one beat for the server's heartbeat monitor.")
      .def(
          "allocation_request",
          [](client&, int directive, py::handle info) { return calls::allocation_request(directive, info); },
          py::arg("directive"), py::arg("pyinfo") = py::none(),
          "PMIx_Allocation_request; returns (rc, [info dicts]).")
      .def(
          "job_control",
          [](client&, py::handle targets, py::handle dirs) { return calls::job_control(targets, dirs); },
          py::arg("pytargets") = py::none(), py::arg("pydirs") = py::none(),
          "PMIx_Job_control (targets None or []: this namespace); returns (rc, [info dicts]).")
      .def(
          "monitor",
          [](client&, py::handle what, int code, py::handle dirs) {
            return calls::monitor(what, code, dirs);
          },
          py::arg("pymonitor_info"), py::arg("code"), py::arg("pydirs") = py::none(),
          "PMIx_Process_monitor of [one info dict]; returns (rc, [info dicts]).")
      .def(
          "get_credential", [](client&, py::handle info) { return calls::get_credential(info); },
          py::arg("pyinfo") = py::none(),
          "PMIx_Get_credential; returns (rc, {'bytes': bytes, 'size': int}) ({} on failure).")
      .def(
          "validate_credential",
          [](client&, py::handle cred, py::handle info) { return calls::validate_credential(cred, info); },
          py::arg("pycred"), py::arg("pyinfo") = py::none(),
          "PMIx_Validate_credential of {'bytes': ..., 'size': ...} (or bytes); returns (rc, [info dicts]).")
      // ---- groups ----
      .def(
          "group_construct",
          [](client&, py::handle g, py::handle peers, py::handle info) {
            return calls::group_construct(g, peers, info);
          },
          py::arg("group"), py::arg("peers") = py::none(), py::arg("pyinfo") = py::none(),
          "PMIx_Group_construct; returns (rc, [info dicts]).")
      .def(
          "group_invite",
          [](client&, py::handle g, py::handle peers, py::handle info) {
            return calls::group_invite(g, peers, info);
          },
          py::arg("group"), py::arg("peers") = py::none(), py::arg("pyinfo") = py::none(),
          "PMIx_Group_invite; returns (rc, [info dicts]).")
      .def(
          "group_join",
          [](client&, py::handle g, py::handle leader, int opt, py::handle info) {
            return calls::group_join(g, leader, opt, info);
          },
          py::arg("group"), py::arg("leader"), py::arg("opt"), py::arg("pyinfo") = py::none(),
          "PMIx_Group_join (opt PMIX_GROUP_ACCEPT or PMIX_GROUP_DECLINE); returns (rc, [info dicts]).")
      .def(
          "group_leave", [](client&, py::handle g, py::handle info) { return calls::group_leave(g, info); },
          py::arg("group"), py::arg("pyinfo") = py::none(), "PMIx_Group_leave; returns rc.")
      .def(
          "group_destruct",
          [](client&, py::handle g, py::handle info) { return calls::group_destruct(g, info); },
          py::arg("group"), py::arg("pyinfo") = py::none(), "PMIx_Group_destruct; returns rc.")
      // ---- events ----
      .def(
          "register_event_handler",
          [](client&, py::handle codes, py::handle info, py::handle hdlr) {
            return handlers::register_event(codes, info, hdlr);
          },
          py::arg("pycodes"), py::arg("pyinfo"), py::arg("hdlr"),
          "PMIx_Register_event_handler with a callable hdlr(ref, status, source, [info], [results]) -> "
          "(status, [info]), run on a library thread; returns (rc, ref) ((rc, -1) on failure).")
      .def(
          "deregister_event_handler",
          [](client&, long long ref) {
            if (ref < 0) throw py::value_error("deregister_event_handler: a reference is not negative");
            return handlers::deregister_event(static_cast<size_t>(ref));
          },
          py::arg("ref"), "PMIx_Deregister_event_handler; returns rc.")
      .def(
          "notify_event",
          [](client&, int status, py::handle source, int range, py::handle info) {
            return calls::notify_event(status, source, range, info);
          },
          py::arg("status"), py::arg("pysrc"), py::arg("range"), py::arg("pyinfo") = py::none(),
          "PMIx_Notify_event (source None: this process); returns rc.")
      // ---- forwarded output (python3-pmix has them on PMIxTool) ----
      .def(
          "iof_pull",
          [](client&, py::handle procs, int channel, py::handle dirs, py::handle hdlr) {
            return calls::iof_pull(procs, channel, dirs, hdlr);
          },
          py::arg("pyprocs"), py::arg("iof_channel"), py::arg("pydirs"), py::arg("hdlr"),
          "PMIx_IOF_pull with a callable hdlr(ref, channel, source, {'bytes': ..., 'size': ...}, [info]), "
          "run on a library thread; returns (rc, ref) ((rc, -1) on failure).")
      .def(
          "iof_deregister",
          [](client&, long long ref, py::handle dirs) { return calls::iof_deregister(ref, dirs); },
          py::arg("regid"), py::arg("pydirs") = py::none(), "PMIx_IOF_deregister; returns rc.")
      .def(
          "iof_push",
          [](client&, py::handle targets, py::handle data, py::handle dirs) {
            return calls::iof_push(targets, data, dirs);
          },
          py::arg("pytargets"), py::arg("data"), py::arg("pydirs") = py::none(),
          "PMIx_IOF_push of {'bytes': ..., 'size': ...} or bytes (None: close stdin); returns rc.");

  py::class_<server, client>(m, "PMIxServer")
      .def(py::init<>())
      .def("init", &server::init, py::arg("dicts") = py::none(), py::arg("map") = py::none(),
           "PMIx_server_init with info dicts and the server module (slot name -> callable); "
           "returns rc.")
      .def("finalize", &server::finalize)
      .def("register_nspace", &server::register_nspace, py::arg("nspace"), py::arg("nlocalprocs"),
           py::arg("dicts") = py::none())
      .def("deregister_nspace", &server::deregister_nspace, py::arg("nspace"))
      .def("register_client", &server::register_client, py::arg("proc"), py::arg("uid"), py::arg("gid"))
      .def("deregister_client", &server::deregister_client, py::arg("proc"))
      .def("setup_fork", &server::setup_fork, py::arg("proc"), py::arg("env") = py::none(),
           "PMIx_server_setup_fork: setup_fork(proc, env) adds the variables to the dict env and "
           "returns rc; setup_fork(proc) returns (rc, {name: value}).")
      .def("collect_job_info", &server::collect_job_info, py::arg("procs"),
           "PMIx_server_collect_job_info; returns (rc, {'bytes': bytes, 'size': int}) (None on error).")
      .def("generate_regex", &server::generate_regex, py::arg("hosts"),
           "PMIx_generate_regex over host names; returns (rc, bytearray).")
      .def("generate_ppn", &server::generate_ppn, py::arg("procs"),
           "PMIx_generate_ppn over per-node rank lists; returns (rc, bytearray).")
      .def(
          "iof_deliver",
          [](server&, py::handle source, int channel, py::handle data, py::handle dirs) {
            return calls::iof_deliver(source, channel, data, dirs);
          },
          py::arg("pysrc"), py::arg("pychannel"), py::arg("pydata"), py::arg("pydirs") = py::none(),
          "PMIx_server_IOF_deliver of {'bytes': ..., 'size': ...} or bytes from source; returns rc.")
      // ---- resources, process sets, inventory ----
      .def(
          "register_resources",
          [](server&, py::handle dirs) { return server_calls::register_resources(dirs); },
          py::arg("directives"), "PMIx_server_register_resources (blocking); returns rc.")
      .def(
          "deregister_resources",
          [](server&, py::handle dirs) { return server_calls::deregister_resources(dirs); },
          py::arg("directives"), "PMIx_server_deregister_resources (blocking); returns rc.")
      .def(
          "define_process_set",
          [](server&, py::handle members, py::handle name) {
            return server_calls::define_process_set(members, name);
          },
          py::arg("members"), py::arg("name"), "PMIx_server_define_process_set(members, name); returns rc.")
      .def(
          "delete_process_set",
          [](server&, py::handle name) { return server_calls::delete_process_set(name); }, py::arg("name"),
          "PMIx_server_delete_process_set; returns rc.")
      .def(
          "collect_inventory", [](server&, py::handle dirs) { return server_calls::collect_inventory(dirs); },
          py::arg("pydirs") = py::none(), "PMIx_server_collect_inventory; returns (rc, [info dicts]).")
      .def(
          "deliver_inventory",
          [](server&, py::handle info, py::handle dirs) {
            return server_calls::deliver_inventory(info, dirs);
          },
          py::arg("pyinfo"), py::arg("pydirs") = py::none(),
          "PMIx_server_deliver_inventory (blocking); returns rc.")
      // ---- attributes, other nodes, launches ----
      .def(
          "register_attributes",
          [](server&, py::handle function, py::handle attrs) {
            return server_calls::register_attributes(function, attrs);
          },
          py::arg("function"), py::arg("attrs"),
          "PMIx_Register_attributes(function name, [attribute names]); returns rc.")
      .def(
          "dmodex_request",
          [](server&, py::handle proc, py::handle dataout) {
            return server_calls::dmodex_request(proc, dataout);
          },
          py::arg("proc"), py::arg("dataout") = py::none(),
          "PMIx_server_dmodex_request, waiting for the data; returns (rc, (bytes, size)).")
      .def(
          "setup_application",
          [](server&, py::handle ns, py::handle dicts) { return server_calls::setup_application(ns, dicts); },
          py::arg("ns"), py::arg("dicts") = py::none(),
          "PMIx_server_setup_application; returns (rc, [info dicts]).")
      .def(
          "setup_local_support",
          [](server&, py::handle ns, py::handle ilist) {
            return server_calls::setup_local_support(ns, ilist);
          },
          py::arg("ns"), py::arg("ilist") = py::none(),
          "PMIx_server_setup_local_support (blocking); returns rc.")
      .def(
          "generate_cpuset_string",
          [](server&, py::handle cpuset) { return local_calls::generate_cpuset_string(cpuset); },
          py::arg("cpuset"), "PMIx_server_generate_cpuset_string of a cpuset dict; returns (rc, str).")
      .def(
          "generate_locality_string",
          [](server&, py::handle cpuset) { return local_calls::generate_locality_string(cpuset); },
          py::arg("cpuset"),
          "PMIx_server_generate_locality_string of a cpuset dict; returns (rc, str or None).");

  py::class_<tool, server>(m, "PMIxTool")
      .def(py::init<>())
      .def("init", &tool::init, py::arg("dicts") = py::none(),
           "PMIx_tool_init; returns (rc, {'nspace': ..., 'rank': ...}).")
      .def("finalize", &tool::finalize)
      .def(
          "attach_to_server", [](tool&, py::handle dicts) { return tool_calls::attach_to_server(dicts); },
          py::arg("dicts") = py::none(),
          "PMIx_tool_attach_to_server; returns (rc, this tool's proc, the server's proc).")
      .def(
          "get_servers", [](tool&) { return tool_calls::get_servers(); },
          "PMIx_tool_get_servers; returns (rc, [procs]), the primary server first.")
      .def(
          "set_server",
          [](tool&, py::handle server, py::handle info) { return tool_calls::set_server(server, info); },
          py::arg("server"), py::arg("pyinfo") = py::none(), "PMIx_tool_set_server; returns rc.")
      // python3-pmix's disconnect(server) (a proc dict) is PMIx_tool_disconnect;
      // with a list of procs it is still the client's PMIx_Disconnect.
      .def(
          "disconnect", [](tool&, py::dict server) { return tool_calls::disconnect(server); },
          py::arg("server"), "PMIx_tool_disconnect of a server's proc dict; returns rc.")
      .def(
          "disconnect",
          [](tool&, py::handle peers, py::handle info) { return calls::disconnect(peers, info); },
          py::arg("peers") = py::none(), py::arg("pyinfo") = py::none(),
          "PMIx_Disconnect (peers None or []: this namespace); returns rc.");

  py::module_::import("atexit").attr("register")(py::cpp_function(&finalize_at_exit));
}
