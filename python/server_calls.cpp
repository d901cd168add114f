#include "python/server_calls.hpp"

#include <cstring>
#include <memory>
#include <string>
#include <utility>

#include "python/values.hpp"
#include "python/waiting.hpp"

namespace pmixpy::server_calls {
namespace {

void application_set_up(pmix_status_t status, pmix_info_t info[], size_t ninfo, void* provided_cbdata,
                        pmix_op_cbfunc_t cbfunc, void* cbdata) {
  pending<info_copy>::take(provided_cbdata)->complete(status, copy_of(info, ninfo));
  if (cbfunc != nullptr) cbfunc(PMIX_SUCCESS, cbdata);
}

void modex_answered(pmix_status_t status, char* data, size_t size, void* cbdata) {
  pending<std::string>::take(cbdata)->complete(status,
                                               data == nullptr ? std::string{} : std::string(data, size));
}

py::tuple rc_and_infos(pmix_status_t rc, info_copy& results) {
  auto out = take_infos(results.info, results.ninfo);
  results = {};
  return py::make_tuple(rc, out);
}

}  // namespace

pmix_status_t register_resources(py::handle directives) {
  info_array info{directives, "register_resources directives"};
  py::gil_scoped_release nogil;
  return PMIx_server_register_resources(info.data(), info.size(), nullptr, nullptr);
}

pmix_status_t deregister_resources(py::handle directives) {
  info_array info{directives, "deregister_resources directives"};
  py::gil_scoped_release nogil;
  return PMIx_server_deregister_resources(info.data(), info.size(), nullptr, nullptr);
}

pmix_status_t define_process_set(py::handle members, py::handle name) {
  proc_array procs{members, "define_process_set members"};
  const auto set = load_text(name, "define_process_set name");
  py::gil_scoped_release nogil;
  return PMIx_server_define_process_set(procs.data(), procs.size(), set.c_str());
}

pmix_status_t delete_process_set(py::handle name) {
  auto set = load_text(name, "delete_process_set name");
  py::gil_scoped_release nogil;
  return PMIx_server_delete_process_set(set.data());
}

py::tuple collect_inventory(py::handle directives) {
  info_array dirs{directives, "collect_inventory directives"};
  auto p = std::make_shared<pending<info_copy>>();
  pmix_status_t rc;
  {
    py::gil_scoped_release nogil;
    rc = start_and_wait<info_copy>(p, [&](void* cbdata) {
      return PMIx_server_collect_inventory(dirs.data(), dirs.size(), &infos_completed, cbdata);
    });
  }
  return rc_and_infos(rc, p->result());
}

pmix_status_t deliver_inventory(py::handle info, py::handle directives) {
  info_array inventory{info, "deliver_inventory info"};
  info_array dirs{directives, "deliver_inventory directives"};
  py::gil_scoped_release nogil;
  return PMIx_server_deliver_inventory(inventory.data(), inventory.size(), dirs.data(), dirs.size(), nullptr,
                                       nullptr);
}

pmix_status_t register_attributes(py::handle function, py::handle attrs) {
  auto name = load_text(function, "register_attributes function");
  key_array names{attrs, "register_attributes attrs"};
  py::gil_scoped_release nogil;
  return PMIx_Register_attributes(name.data(), names.data());
}

py::tuple dmodex_request(py::handle proc, py::handle dataout) {
  pmix_proc_t p;
  load_proc(proc, p, "dmodex_request proc");
  if (!dataout.is_none() && !py::isinstance<py::dict>(dataout))
    throw py::type_error("dmodex_request dataout: expected a dict");
  auto pend = std::make_shared<pending<std::string>>();
  pmix_status_t rc;
  {
    py::gil_scoped_release nogil;
    rc = start_and_wait<std::string>(
        pend, [&](void* cbdata) { return PMIx_server_dmodex_request(&p, &modex_answered, cbdata); });
  }
  if (rc != PMIX_SUCCESS) return py::make_tuple(rc, py::make_tuple(py::none(), 0));
  const auto& data = pend->result();
  py::bytes bytes(data.data(), data.size());
  if (!dataout.is_none()) {
    auto out = py::reinterpret_borrow<py::dict>(dataout);
    out["bytes"] = bytes;
    out["size"] = data.size();
  }
  return py::make_tuple(rc, py::make_tuple(bytes, data.size()));
}

py::tuple setup_application(py::handle nspace, py::handle dicts) {
  pmix_nspace_t ns;
  load_nspace(nspace, ns, "setup_application namespace");
  info_array info{dicts, "setup_application info"};
  auto p = std::make_shared<pending<info_copy>>();
  pmix_status_t rc;
  {
    py::gil_scoped_release nogil;
    rc = start_and_wait<info_copy>(p, [&](void* cbdata) {
      return PMIx_server_setup_application(ns, info.data(), info.size(), &application_set_up, cbdata);
    });
  }
  return rc_and_infos(rc, p->result());
}

pmix_status_t setup_local_support(py::handle nspace, py::handle dicts) {
  pmix_nspace_t ns;
  load_nspace(nspace, ns, "setup_local_support namespace");
  info_array info{dicts, "setup_local_support info"};
  py::gil_scoped_release nogil;
  return PMIx_server_setup_local_support(ns, info.data(), info.size(), nullptr, nullptr);
}

}  // namespace pmixpy::server_calls
