#include "python/client_calls.hpp"

#include <pmix_server.h>
#include <pmix_tool.h>

#include <cstdlib>
#include <cstring>
#include <string>

#include "python/handlers.hpp"
#include "python/values.hpp"
#include "python/waiting.hpp"

namespace pmixpy::calls {
namespace {

// A small unsigned C enum (range, directive, channel) from an int.
template <class T>
T small_enum(long long v, long long high, const char* what) {
  if (v < 0 || v > high)
    throw py::value_error(std::string{what} + ": " + std::to_string(v) + " is out of range [0, " +
                          std::to_string(high) + "]");
  return static_cast<T>(v);
}

// python3-pmix's default for a list of procs: None or [] is this process's
// whole namespace.
py::list procs_or_namespace(py::handle procs, const char* what) {
  auto given = as_list(procs, what);
  if (given.size() > 0) return given;
  pmix_proc_t all = me();
  all.rank = PMIX_RANK_WILDCARD;
  py::list out;
  out.append(unload_proc(all));
  return out;
}

// The results of a call that returns info: (rc, [info dicts]), the C array
// freed.
py::tuple rc_and_results(pmix_status_t rc, pmix_info_t* results, size_t nresults) {
  return py::make_tuple(rc, take_infos(results, nresults));
}

std::string group_name(py::handle group, const char* what) { return load_text(group, what); }

}  // namespace

pmix_proc_t& me() {
  static pmix_proc_t self = [] {
    pmix_proc_t p;
    std::memset(&p, 0, sizeof p);
    p.rank = PMIX_RANK_UNDEF;
    return p;
  }();
  return self;
}

// ---- publish / lookup ----------------------------------------------------------

pmix_status_t publish(py::handle dicts) {
  info_array info{dicts, "publish dicts"};
  py::gil_scoped_release nogil;
  return PMIx_Publish(info.data(), info.size());
}

pmix_status_t unpublish(py::handle keys, py::handle dicts) {
  key_array k{keys, "unpublish keys"};
  info_array info{dicts, "unpublish dicts"};
  py::gil_scoped_release nogil;
  return PMIx_Unpublish(k.data(), info.data(), info.size());
}

// python3-pmix gives the keys as [{'key': k}, ...]; plain str are accepted
// too. The answer lists what was found, in the order asked, as
// {'key', 'proc', 'value', 'val_type'}; a list given is updated to it.
py::tuple lookup(py::handle data, py::handle dicts) {
  const auto wanted = as_list(data, "lookup data");
  std::vector<pmix_pdata_t> pdata(wanted.size());
  for (auto& p : pdata) PMIX_PDATA_CONSTRUCT(&p);
  struct release {
    std::vector<pmix_pdata_t>& p;
    ~release() {
      for (auto& d : p) PMIX_PDATA_DESTRUCT(&d);
    }
  } guard{pdata};
  size_t i = 0;
  for (auto item : wanted) {
    py::object key = py::reinterpret_borrow<py::object>(item);
    if (py::isinstance<py::dict>(item)) {
      auto d = py::reinterpret_borrow<py::dict>(item);
      if (!d.contains("key")) throw py::type_error("lookup data: 'key' missing: expected {'key': str}");
      key = d["key"];
    }
    load_key(key, pdata[i++].key, "lookup data");
  }
  info_array info{dicts, "lookup dicts"};
  pmix_status_t rc;
  {
    py::gil_scoped_release nogil;
    rc = PMIx_Lookup(pdata.empty() ? nullptr : pdata.data(), pdata.size(), info.data(), info.size());
  }
  py::list found;
  if (rc == PMIX_SUCCESS) {
    for (const auto& p : pdata) {
      if (p.value.type == PMIX_UNDEF) continue;  // not published
      char key[PMIX_MAX_KEYLEN + 1];
      std::memcpy(key, p.key, PMIX_MAX_KEYLEN);
      key[PMIX_MAX_KEYLEN] = '\0';
      py::dict d;
      d["key"] = unload_text(key);
      d["proc"] = unload_proc(p.proc);
      d["value"] = unload_data(p.value);
      d["val_type"] = p.value.type;
      found.append(d);
    }
    if (py::isinstance<py::list>(data)) {
      auto given = py::reinterpret_borrow<py::list>(data);
      PySequence_DelSlice(given.ptr(), 0, PY_SSIZE_T_MAX);
      for (auto d : found) given.append(d);
    }
  }
  return py::make_tuple(rc, found);
}

// ---- spawn, connect ------------------------------------------------------------

py::tuple spawn(py::handle job_info, py::handle apps) {
  info_array info{job_info, "spawn job info"};
  app_array a{apps, "spawn apps"};
  pmix_nspace_t nspace;
  std::memset(nspace, 0, sizeof nspace);
  pmix_status_t rc;
  {
    py::gil_scoped_release nogil;
    rc = PMIx_Spawn(info.data(), info.size(), a.data(), a.size(), nspace);
  }
  if (rc != PMIX_SUCCESS) return py::make_tuple(rc, py::none());
  return py::make_tuple(rc, unload_text(nspace));
}

pmix_status_t connect(py::handle peers, py::handle dicts) {
  proc_array p{procs_or_namespace(peers, "connect peers"), "connect peers"};
  info_array info{dicts, "connect info"};
  py::gil_scoped_release nogil;
  return PMIx_Connect(p.data(), p.size(), info.data(), info.size());
}

pmix_status_t disconnect(py::handle peers, py::handle dicts) {
  proc_array p{procs_or_namespace(peers, "disconnect peers"), "disconnect peers"};
  info_array info{dicts, "disconnect info"};
  py::gil_scoped_release nogil;
  return PMIx_Disconnect(p.data(), p.size(), info.data(), info.size());
}

py::tuple resolve_peers(py::handle node, py::handle nspace) {
  const bool any_node = node.is_none();
  const auto nodename = any_node ? std::string{} : load_text(node, "resolve_peers node");
  pmix_nspace_t ns;
  std::memset(ns, 0, sizeof ns);
  if (!nspace.is_none()) load_nspace(nspace, ns, "resolve_peers nspace");
  pmix_proc_t* procs = nullptr;
  size_t nprocs = 0;
  pmix_status_t rc;
  {
    py::gil_scoped_release nogil;
    rc = PMIx_Resolve_peers(any_node ? nullptr : nodename.c_str(), ns, &procs, &nprocs);
  }
  py::list out = unload_procs(procs, nprocs);
  if (procs != nullptr) PMIX_PROC_FREE(procs, nprocs);
  return py::make_tuple(rc, out);
}

py::tuple resolve_nodes(py::handle nspace) {
  pmix_nspace_t ns;
  std::memset(ns, 0, sizeof ns);
  if (!nspace.is_none()) load_nspace(nspace, ns, "resolve_nodes nspace");
  char* nodes = nullptr;
  pmix_status_t rc;
  {
    py::gil_scoped_release nogil;
    rc = PMIx_Resolve_nodes(ns, &nodes);
  }
  py::object out = py::none();
  if (rc == PMIX_SUCCESS && nodes != nullptr) out = unload_text(nodes);
  std::free(nodes);
  return py::make_tuple(rc, out);
}

// ---- requests the host answers -------------------------------------------------

pmix_status_t log(py::handle data, py::handle directives) {
  info_array d{data, "log data"};
  info_array dirs{directives, "log directives"};
  py::gil_scoped_release nogil;
  return PMIx_Log(d.data(), d.size(), dirs.data(), dirs.size());
}

py::tuple allocation_request(int directive, py::handle dicts) {
  const auto action =
      small_enum<pmix_alloc_directive_t>(directive, UINT8_MAX, "allocation_request directive");
  info_array info{dicts, "allocation_request info"};
  pmix_info_t* results = nullptr;
  size_t nresults = 0;
  pmix_status_t rc;
  {
    py::gil_scoped_release nogil;
    rc = PMIx_Allocation_request(action, info.data(), info.size(), &results, &nresults);
  }
  return rc_and_results(rc, results, nresults);
}

py::tuple session_control(unsigned long session, py::handle directives) {
  if (session > UINT32_MAX) throw py::value_error("session_control: a session id is 32 bits");
  info_array dirs{directives, "session_control directives"};
  // The callback form, waited for here: the blocking one drops the host's info.
  auto p = std::make_shared<pending<info_copy>>();
  pmix_status_t rc;
  {
    py::gil_scoped_release nogil;
    rc = start_and_wait<info_copy>(p, [&](void* cbdata) {
      return PMIx_Session_control(static_cast<uint32_t>(session), dirs.data(), dirs.size(), infos_completed, cbdata);
    });
  }
  auto& got = p->result();
  return rc_and_results(rc, got.info, got.ninfo);
}

pmix_status_t resource_block(int directive, py::handle block, py::handle units, py::handle info) {
  const auto what = small_enum<pmix_resource_block_directive_t>(directive, UINT8_MAX, "resource_block directive");
  std::string name = load_text(block, "resource_block block");
  std::vector<pmix_resource_unit_t> list;
  if (!units.is_none()) {
    for (auto u : py::reinterpret_borrow<py::list>(units)) {
      auto d = py::reinterpret_borrow<py::dict>(u);
      list.push_back(pmix_resource_unit_t{d["type"].cast<pmix_device_type_t>(), d["count"].cast<size_t>()});
    }
  }
  info_array i{info, "resource_block info"};
  py::gil_scoped_release nogil;
  return PMIx_Resource_block(what, name.data(), list.data(), list.size(), i.data(), i.size());
}

py::tuple job_control(py::handle targets, py::handle directives) {
  proc_array t{procs_or_namespace(targets, "job_control targets"), "job_control targets"};
  info_array dirs{directives, "job_control directives"};
  pmix_info_t* results = nullptr;
  size_t nresults = 0;
  pmix_status_t rc;
  {
    py::gil_scoped_release nogil;
    rc = PMIx_Job_control(t.data(), t.size(), dirs.data(), dirs.size(), &results, &nresults);
  }
  return rc_and_results(rc, results, nresults);
}

// python3-pmix passes the monitor as a list of one info dict; one dict
// alone is accepted too.
py::tuple monitor(py::handle what, int code, py::handle directives) {
  py::list one;
  if (py::isinstance<py::dict>(what)) {
    one.append(what);
  } else {
    one = as_list(what, "monitor info");
    if (py::len(one) != 1) throw py::value_error("monitor info: expected one info dict");
  }
  info_array m{one, "monitor info"};
  info_array dirs{directives, "monitor directives"};
  pmix_info_t* results = nullptr;
  size_t nresults = 0;
  pmix_status_t rc;
  {
    py::gil_scoped_release nogil;
    rc = PMIx_Process_monitor(m.data(), code, dirs.data(), dirs.size(), &results, &nresults);
  }
  return rc_and_results(rc, results, nresults);
}

py::tuple get_credential(py::handle dicts) {
  info_array info{dicts, "get_credential info"};
  pmix_byte_object_t cred{nullptr, 0};
  pmix_status_t rc;
  {
    py::gil_scoped_release nogil;
    rc = PMIx_Get_credential(info.data(), info.size(), &cred);
  }
  py::object out = py::dict();
  if (rc == PMIX_SUCCESS && cred.bytes != nullptr) out = unload_bytes(cred.bytes, cred.size);
  std::free(cred.bytes);
  return py::make_tuple(rc, out);
}

py::tuple validate_credential(py::handle credential, py::handle dicts) {
  auto bytes = load_bytes(credential, "validate_credential credential");
  info_array info{dicts, "validate_credential info"};
  pmix_byte_object_t cred{bytes.empty() ? nullptr : bytes.data(), bytes.size()};
  pmix_info_t* results = nullptr;
  size_t nresults = 0;
  pmix_status_t rc;
  {
    py::gil_scoped_release nogil;
    rc = PMIx_Validate_credential(&cred, info.data(), info.size(), &results, &nresults);
  }
  return rc_and_results(rc, results, nresults);
}

// ---- groups --------------------------------------------------------------------

py::tuple group_construct(py::handle group, py::handle peers, py::handle dicts) {
  const auto name = group_name(group, "group_construct group");
  proc_array p{procs_or_namespace(peers, "group_construct peers"), "group_construct peers"};
  info_array info{dicts, "group_construct info"};
  pmix_info_t* results = nullptr;
  size_t nresults = 0;
  pmix_status_t rc;
  {
    py::gil_scoped_release nogil;
    rc =
        PMIx_Group_construct(name.c_str(), p.data(), p.size(), info.data(), info.size(), &results, &nresults);
  }
  return rc_and_results(rc, results, nresults);
}

py::tuple group_invite(py::handle group, py::handle peers, py::handle dicts) {
  const auto name = group_name(group, "group_invite group");
  proc_array p{procs_or_namespace(peers, "group_invite peers"), "group_invite peers"};
  info_array info{dicts, "group_invite info"};
  pmix_info_t* results = nullptr;
  size_t nresults = 0;
  pmix_status_t rc;
  {
    py::gil_scoped_release nogil;
    rc = PMIx_Group_invite(name.c_str(), p.data(), p.size(), info.data(), info.size(), &results, &nresults);
  }
  return rc_and_results(rc, results, nresults);
}

py::tuple group_join(py::handle group, py::handle leader, int opt, py::handle dicts) {
  const auto name = group_name(group, "group_join group");
  pmix_proc_t lead = me();
  if (!leader.is_none()) load_proc(leader, lead, "group_join leader");
  const auto answer = small_enum<pmix_group_opt_t>(opt, PMIX_GROUP_ACCEPT, "group_join opt");
  info_array info{dicts, "group_join info"};
  pmix_info_t* results = nullptr;
  size_t nresults = 0;
  pmix_status_t rc;
  {
    py::gil_scoped_release nogil;
    rc = PMIx_Group_join(name.c_str(), &lead, answer, info.data(), info.size(), &results, &nresults);
  }
  return rc_and_results(rc, results, nresults);
}

pmix_status_t group_leave(py::handle group, py::handle dicts) {
  const auto name = group_name(group, "group_leave group");
  info_array info{dicts, "group_leave info"};
  py::gil_scoped_release nogil;
  return PMIx_Group_leave(name.c_str(), info.data(), info.size());
}

pmix_status_t group_destruct(py::handle group, py::handle dicts) {
  const auto name = group_name(group, "group_destruct group");
  info_array info{dicts, "group_destruct info"};
  py::gil_scoped_release nogil;
  return PMIx_Group_destruct(name.c_str(), info.data(), info.size());
}

// ---- events --------------------------------------------------------------------

// A source of None is this process (NULL to the library).
pmix_status_t notify_event(int status, py::handle source, int range, py::handle dicts) {
  pmix_proc_t src;
  const bool given = !source.is_none();
  if (given) load_proc(source, src, "notify_event source");
  const auto r = small_enum<pmix_data_range_t>(range, UINT8_MAX, "notify_event range");
  info_array info{dicts, "notify_event info"};
  py::gil_scoped_release nogil;
  return PMIx_Notify_event(status, given ? &src : nullptr, r, info.data(), info.size(), nullptr, nullptr);
}

// ---- forwarded output ----------------------------------------------------------

py::tuple iof_pull(py::handle procs, int channel, py::handle directives, py::handle handler) {
  proc_array p{procs_or_namespace(procs, "iof_pull procs"), "iof_pull procs"};
  const auto c = small_enum<pmix_iof_channel_t>(channel, UINT16_MAX, "iof_pull channel");
  info_array dirs{directives, "iof_pull directives"};
  return handlers::iof_pull(p, c, dirs, handler);
}

pmix_status_t iof_deregister(long long ref, py::handle directives) {
  if (ref < 0) throw py::value_error("iof_deregister: a reference is not negative");
  info_array dirs{directives, "iof_deregister directives"};
  return handlers::iof_deregister(static_cast<size_t>(ref), dirs);
}

// No data (None) closes the targets' stdin, as PMIX_IOF_COMPLETE does.
pmix_status_t iof_push(py::handle targets, py::handle data, py::handle directives) {
  proc_array t{procs_or_namespace(targets, "iof_push targets"), "iof_push targets"};
  const bool close = data.is_none();
  auto bytes = close ? std::string{} : load_bytes(data, "iof_push data");
  info_array dirs{directives, "iof_push directives"};
  pmix_byte_object_t bo{bytes.empty() ? nullptr : bytes.data(), bytes.size()};
  py::gil_scoped_release nogil;
  return PMIx_IOF_push(t.data(), t.size(), close ? nullptr : &bo, dirs.data(), dirs.size(), nullptr, nullptr);
}

pmix_status_t iof_deliver(py::handle source, int channel, py::handle data, py::handle directives) {
  pmix_proc_t src;
  load_proc(source, src, "iof_deliver source");
  const auto c = small_enum<pmix_iof_channel_t>(channel, UINT16_MAX, "iof_deliver channel");
  auto bytes = load_bytes(data, "iof_deliver data");
  info_array dirs{directives, "iof_deliver directives"};
  pmix_byte_object_t bo{bytes.empty() ? nullptr : bytes.data(), bytes.size()};
  py::gil_scoped_release nogil;
  // The library copies the bytes before it returns.
  return PMIx_server_IOF_deliver(&src, c, &bo, dirs.data(), dirs.size(), nullptr, nullptr);
}

}  // namespace pmixpy::calls
