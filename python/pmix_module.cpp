// The Python module `pmix`: PMIxClient, PMIxServer and PMIxTool over the C
// API, with the names and dict forms of Debian's python3-pmix (OpenPMIx
// 4.2.2's bindings). Each method converts its arguments (python/values.hpp),
// calls one C function with the GIL released, and converts the result.
// docs/python.md describes the module.
#include <pmix.h>
#include <pmix_server.h>
#include <pmix_tool.h>
#include <pybind11/pybind11.h>

#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>

#include "python/constants.hpp"
#include "python/server_module.hpp"
#include "python/values.hpp"

namespace pmixpy {
namespace {

// This process's identity once PMIx_Init or PMIx_tool_init succeeded: what
// get() and the other calls use when no proc is given.
pmix_proc_t me = [] {
  pmix_proc_t p;
  std::memset(&p, 0, sizeof p);
  p.rank = PMIX_RANK_UNDEF;
  return p;
}();

// Successful PMIx_server_init calls not yet balanced by a finalize (the
// library counts the same way): the module's callables go with the last.
int server_inits = 0;

// A C call that completes through a pmix_op_cbfunc_t, waited for on the
// caller's thread (without the GIL).
class op_waiter {
 public:
  static void done(pmix_status_t status, void* cbdata) {
    auto* self = static_cast<std::shared_ptr<op_waiter>*>(cbdata);
    {
      std::lock_guard<std::mutex> guard{(*self)->m_};
      (*self)->status_ = status;
      (*self)->done_ = true;
    }
    (*self)->cv_.notify_all();
    delete self;
  }
  pmix_status_t wait() {
    std::unique_lock<std::mutex> guard{m_};
    cv_.wait(guard, [this] { return done_; });
    return status_;
  }

 private:
  std::mutex m_;
  std::condition_variable cv_;
  bool done_ = false;
  pmix_status_t status_ = PMIX_ERROR;
};

// Runs a void C call that reports through cbfunc, and waits for it. Inside a
// server-module callable it would wait on a library thread: the library's
// own blocking form refuses that (and logs it), and so does this.
template <class Call>
pmix_status_t call_and_wait(Call call) {
  if (server_module::in_upcall()) {
    call(nullptr, nullptr);
    return PMIX_ERR_WOULD_BLOCK;
  }
  auto waiter = std::make_shared<op_waiter>();
  call(&op_waiter::done, new std::shared_ptr<op_waiter>(waiter));
  return waiter->wait();
}

pmix_proc_t proc_or_me(py::handle proc, const char* what) {
  if (proc.is_none()) return me;
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
  virtual ~client() = default;

  py::tuple init(py::handle dicts) {
    info_array info{dicts, "init directives"};
    pmix_proc_t p;
    pmix_status_t rc;
    {
      py::gil_scoped_release nogil;
      rc = PMIx_Init(&p, info.data(), info.size());
    }
    if (rc != PMIX_SUCCESS) return py::make_tuple(rc, py::dict());
    me = p;
    return py::make_tuple(rc, unload_proc(p));
  }

  pmix_status_t finalize(py::handle dicts) {
    info_array info{dicts, "finalize directives"};
    py::gil_scoped_release nogil;
    return PMIx_Finalize(info.data(), info.size());
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
    pmix_status_t rc;
    {
      py::gil_scoped_release nogil;
      rc = PMIx_server_init(any ? &module : nullptr, info.data(), info.size());
    }
    if (rc == PMIX_SUCCESS) ++server_inits;
    else if (server_inits == 0) server_module::clear();
    return rc;
  }

  pmix_status_t finalize() {
    pmix_status_t rc;
    {
      py::gil_scoped_release nogil;
      rc = PMIx_server_finalize();
    }
    if (rc == PMIX_SUCCESS && server_inits > 0 && --server_inits == 0) server_module::clear();
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
    me = p;
    return py::make_tuple(rc, unload_proc(p));
  }

  pmix_status_t finalize() {
    py::gil_scoped_release nogil;
    return PMIx_tool_finalize();
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
  server_module::shut_down();
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
      .def("get_version", [](client&) { return text_of(PMIx_Get_version()); });

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
           "PMIx_generate_ppn over per-node rank lists; returns (rc, bytearray).");

  py::class_<tool, server>(m, "PMIxTool")
      .def(py::init<>())
      .def("init", &tool::init, py::arg("dicts") = py::none(),
           "PMIx_tool_init; returns (rc, {'nspace': ..., 'rank': ...}).")
      .def("finalize", &tool::finalize);

  py::module_::import("atexit").attr("register")(py::cpp_function(&finalize_at_exit));
}
