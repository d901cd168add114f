#include "python/tool_calls.hpp"

#include <cstring>

#include "python/client_calls.hpp"
#include "python/values.hpp"

namespace pmixpy::tool_calls {

py::tuple attach_to_server(py::handle dicts) {
  info_array info{dicts, "attach_to_server dicts"};
  pmix_proc_t myproc, server;
  std::memset(&myproc, 0, sizeof myproc);
  std::memset(&server, 0, sizeof server);
  pmix_status_t rc;
  {
    py::gil_scoped_release nogil;
    rc = PMIx_tool_attach_to_server(&myproc, &server, info.data(), info.size());
  }
  if (rc != PMIX_SUCCESS) return py::make_tuple(rc, py::dict(), py::dict());
  calls::me() = myproc;
  return py::make_tuple(rc, unload_proc(myproc), unload_proc(server));
}

py::tuple get_servers() {
  pmix_proc_t* servers = nullptr;
  size_t nservers = 0;
  pmix_status_t rc;
  {
    py::gil_scoped_release nogil;
    rc = PMIx_tool_get_servers(&servers, &nservers);
  }
  py::list out = unload_procs(servers, nservers);
  if (servers != nullptr) PMIX_PROC_FREE(servers, nservers);
  return py::make_tuple(rc, out);
}

pmix_status_t set_server(py::handle server, py::handle dicts) {
  pmix_proc_t p;
  load_proc(server, p, "set_server server");
  info_array info{dicts, "set_server dicts"};
  py::gil_scoped_release nogil;
  return PMIx_tool_set_server(&p, info.data(), info.size());
}

pmix_status_t disconnect(py::handle server) {
  pmix_proc_t p;
  load_proc(server, p, "tool disconnect server");
  py::gil_scoped_release nogil;
  return PMIx_tool_disconnect(&p);
}

}  // namespace pmixpy::tool_calls
