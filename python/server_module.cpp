#include "python/server_module.hpp"

#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "python/callbacks.hpp"
#include "python/values.hpp"

namespace pmixpy::server_module {
namespace {

// python3-pmix's slot names. Those this library never calls
// (registerevents, deregisterevents, listener) are accepted and left NULL.
const char* const known_slots[] = {
    "clientconnected", "clientfinalized", "abort",    "fencenb",      "directmodex",
    "publish",         "lookup",          "unpublish", "spawn",       "connect",
    "disconnect",      "registerevents",  "deregisterevents", "listener", "notify_event",
    "query",           "toolconnected",   "log",      "allocate",     "jobcontrol",
    "monitor",         "getcredential",   "validatecredential", "iofpull", "pushstdin",
    "group",           "fabric",
    // OpenPMIx 6.0's up-calls (python3-pmix 4.2.2 has no names for them)
    "sessioncontrol",  "resourceblock",
};

using callbacks::status_and_payload;
using callbacks::status_of;

// The callables by slot name. Allocated once and never destroyed: a static
// py::dict would be released after the interpreter is gone.
py::dict& callables() {
  static auto* slots = new py::dict();
  return *slots;
}

std::string context(const char* slot) { return std::string{"pmix server module '"} + slot + "'"; }

// Runs body(callable) with the GIL held; what body returns is the status
// for the library. Anything raised becomes PMIX_ERROR, after a report.
template <class Body>
pmix_status_t run_python(const char* slot, Body&& body) {
  if (!callbacks::python_alive()) return PMIX_ERR_NOT_AVAILABLE;
  callbacks::scope mark;
  py::gil_scoped_acquire gil;
  try {
    auto& slots = callables();
    if (!slots.contains(slot)) return PMIX_ERR_NOT_SUPPORTED;
    py::object fn = slots[slot];
    return body(fn);
  } catch (py::error_already_set& e) {
    callbacks::report(context(slot), e);
  } catch (const std::exception& e) {
    // The callable's answer could not be converted for the library.
    callbacks::report(context(slot), std::string{"unusable answer from the '"} + slot + "' callable: " + e.what());
  }
  return PMIX_ERROR;
}

// An operation the callable finished: PMIX_OPERATION_SUCCEEDED tells the
// library that no callback follows.
pmix_status_t completed(pmix_status_t rc) { return rc == PMIX_SUCCESS ? PMIX_OPERATION_SUCCEEDED : rc; }

py::bytes bytes_of(const char* data, size_t ndata) {
  return data == nullptr ? py::bytes("", 0) : py::bytes(data, ndata);
}

// Hands `data` to a modex callback; the library releases it.
void deliver_modex(pmix_modex_cbfunc_t cbfunc, void* cbdata, std::string data) {
  auto* held = new std::string(std::move(data));
  cbfunc(PMIX_SUCCESS, held->data(), held->size(), cbdata,
         [](void* p) { delete static_cast<std::string*>(p); }, held);
}

// Hands results to an info callback; the library releases them.
struct held_infos {
  pmix_info_t* info = nullptr;
  size_t ninfo = 0;
};

void deliver_infos(pmix_info_cbfunc_t cbfunc, void* cbdata, pmix_status_t status, held_infos* held) {
  cbfunc(status, held->info, held->ninfo, cbdata,
         [](void* p) {
           auto* h = static_cast<held_infos*>(p);
           if (h->info != nullptr) PMIX_INFO_FREE(h->info, h->ninfo);
           delete h;
         },
         held);
}

// ---- the up-calls ------------------------------------------------------------

pmix_status_t client_connected2(const pmix_proc_t* proc, void*, pmix_info_t[], size_t,
                                pmix_op_cbfunc_t, void*) {
  return completed(run_python("clientconnected", [&](py::object fn) { return status_of(fn(unload_proc(*proc))); }));
}

pmix_status_t client_finalized(const pmix_proc_t* proc, void*, pmix_op_cbfunc_t, void*) {
  return completed(run_python("clientfinalized", [&](py::object fn) { return status_of(fn(unload_proc(*proc))); }));
}

pmix_status_t abort_fn(const pmix_proc_t* proc, void*, int status, const char msg[], pmix_proc_t procs[],
                       size_t nprocs, pmix_op_cbfunc_t, void*) {
  return completed(run_python("abort", [&](py::object fn) {
    py::dict args;
    args["caller"] = unload_proc(*proc);
    args["status"] = status;
    args["msg"] = unload_text(msg);
    args["targets"] = unload_procs(procs, nprocs);
    return status_of(fn(args));
  }));
}

pmix_status_t fence_nb(const pmix_proc_t procs[], size_t nprocs, const pmix_info_t info[], size_t ninfo,
                       char* data, size_t ndata, pmix_modex_cbfunc_t cbfunc, void* cbdata) {
  std::string combined;
  auto rc = run_python("fencenb", [&](py::object fn) {
    py::dict args;
    args["procs"] = unload_procs(procs, nprocs);
    args["directives"] = unload_infos(info, ninfo);
    args["data"] = bytes_of(data, ndata);
    auto [status, payload] = status_and_payload(fn(args));
    // No data given back: this node's contribution is all there is.
    combined = payload.is_none() ? std::string(data == nullptr ? "" : data, data == nullptr ? 0 : ndata)
                                 : load_bytes(payload, "fencenb answer");
    return status;
  });
  if (rc != PMIX_SUCCESS && rc != PMIX_OPERATION_SUCCEEDED) return rc;
  deliver_modex(cbfunc, cbdata, std::move(combined));
  return PMIX_SUCCESS;
}

pmix_status_t direct_modex(const pmix_proc_t* proc, const pmix_info_t info[], size_t ninfo,
                           pmix_modex_cbfunc_t cbfunc, void* cbdata) {
  std::string found;
  auto rc = run_python("directmodex", [&](py::object fn) {
    py::dict args;
    args["proc"] = unload_proc(*proc);
    args["directives"] = unload_infos(info, ninfo);
    auto [status, payload] = status_and_payload(fn(args));
    if (!payload.is_none()) found = load_bytes(payload, "directmodex answer");
    return status;
  });
  if (rc != PMIX_SUCCESS && rc != PMIX_OPERATION_SUCCEEDED) return rc;
  deliver_modex(cbfunc, cbdata, std::move(found));
  return PMIX_SUCCESS;
}

pmix_status_t notify_event(pmix_status_t code, const pmix_proc_t* source, pmix_data_range_t range,
                           pmix_info_t info[], size_t ninfo, pmix_op_cbfunc_t, void*) {
  return completed(run_python("notify_event", [&](py::object fn) {
    py::dict args;
    args["code"] = code;
    args["source"] = source == nullptr ? py::object(py::none()) : py::object(unload_proc(*source));
    args["range"] = range;
    args["directives"] = unload_infos(info, ninfo);
    return status_of(fn(args));
  }));
}

// Runs an info-answering slot: the callable gives (status, [info dicts]) or
// a status alone; results go to cbfunc.
template <class Call>
pmix_status_t answer_with_infos(const char* slot, pmix_info_cbfunc_t cbfunc, void* cbdata, Call call) {
  auto* held = new held_infos;
  auto rc = run_python(slot, [&](py::object fn) {
    auto [status, payload] = status_and_payload(call(fn));
    info_array results{payload, (std::string{slot} + " answer").c_str()};
    held->info = results.release(held->ninfo);
    return status;
  });
  if (rc == PMIX_OPERATION_SUCCEEDED) rc = PMIX_SUCCESS;
  if (rc != PMIX_SUCCESS && held->ninfo == 0) {
    delete held;
    return rc;
  }
  deliver_infos(cbfunc, cbdata, rc, held);
  return PMIX_SUCCESS;
}

pmix_status_t job_control(const pmix_proc_t* requestor, const pmix_proc_t targets[], size_t ntargets,
                          const pmix_info_t directives[], size_t ndirs, pmix_info_cbfunc_t cbfunc,
                          void* cbdata) {
  return answer_with_infos("jobcontrol", cbfunc, cbdata, [&](py::object fn) {
    py::dict args;
    args["source"] = unload_proc(*requestor);
    args["targets"] = unload_procs(targets, ntargets);
    args["directives"] = unload_infos(directives, ndirs);
    return fn(args);
  });
}

pmix_status_t query(pmix_proc_t* source, pmix_query_t* queries, size_t nqueries, pmix_info_cbfunc_t cbfunc,
                    void* cbdata) {
  return answer_with_infos("query", cbfunc, cbdata, [&](py::object fn) {
    py::dict args;
    auto q = unload_queries(queries, nqueries);
    args["source"] = unload_proc(*source);
    args["queries"] = q;
    // python3-pmix passes the queries a second time, as their own argument.
    return fn(args, q);
  });
}

void tool_connected(pmix_info_t* info, size_t ninfo, pmix_tool_connection_cbfunc_t cbfunc, void* cbdata) {
  pmix_proc_t assigned;
  std::memset(&assigned, 0, sizeof assigned);
  auto rc = run_python("toolconnected", [&](py::object fn) {
    py::dict args;
    args["directives"] = unload_infos(info, ninfo);
    auto [status, proc] = status_and_payload(fn(args));
    if (status == PMIX_SUCCESS || status == PMIX_OPERATION_SUCCEEDED)
      load_proc(proc, assigned, "toolconnected answer");
    return status;
  });
  if (rc == PMIX_OPERATION_SUCCEEDED) rc = PMIX_SUCCESS;
  cbfunc(rc, rc == PMIX_SUCCESS ? &assigned : nullptr, cbdata);
}

// ---- requests of clients the host serves --------------------------------------

py::object keys_of(char** keys) {
  if (keys == nullptr) return py::none();
  py::list out;
  for (char** k = keys; *k != nullptr; ++k) out.append(unload_text(*k));
  return out;
}

py::object bytes_or_none(const pmix_byte_object_t* bo) {
  if (bo == nullptr) return py::none();
  return unload_bytes(bo->bytes, bo->size);
}

pmix_status_t publish(const pmix_proc_t* proc, const pmix_info_t info[], size_t ninfo, pmix_op_cbfunc_t,
                      void*) {
  return completed(run_python("publish", [&](py::object fn) {
    py::dict args;
    args["proc"] = unload_proc(*proc);
    args["directives"] = unload_infos(info, ninfo);
    return status_of(fn(args));
  }));
}

// The callable answers (status, [{'key', 'value', 'val_type'} and
// optionally 'proc', the publisher: the requester when absent, as
// python3-pmix]).
pmix_status_t lookup(const pmix_proc_t* proc, char** keys, const pmix_info_t info[], size_t ninfo,
                     pmix_lookup_cbfunc_t cbfunc, void* cbdata) {
  std::vector<pmix_pdata_t> found;
  struct release {
    std::vector<pmix_pdata_t>& p;
    ~release() {
      for (auto& d : p) PMIX_PDATA_DESTRUCT(&d);
    }
  } guard{found};
  auto rc = run_python("lookup", [&](py::object fn) {
    py::dict args;
    args["proc"] = unload_proc(*proc);
    args["keys"] = keys_of(keys);
    args["directives"] = unload_infos(info, ninfo);
    auto [status, payload] = status_and_payload(fn(args));
    const auto items = as_list(payload, "lookup answer");
    found.resize(items.size());
    for (auto& d : found) PMIX_PDATA_CONSTRUCT(&d);
    size_t i = 0;
    for (auto item : items) {
      auto& d = found[i++];
      if (!py::isinstance<py::dict>(item)) throw py::type_error("lookup answer: expected pdata dicts");
      auto entry = py::reinterpret_borrow<py::dict>(item);
      if (!entry.contains("key")) throw py::type_error("lookup answer: 'key' missing");
      load_key(entry["key"], d.key, "lookup answer key");
      load_value(item, d.value, "lookup answer value");
      d.proc = *proc;
      if (entry.contains("proc")) load_proc(entry["proc"], d.proc, "lookup answer proc");
    }
    return status;
  });
  if (rc == PMIX_OPERATION_SUCCEEDED) rc = PMIX_SUCCESS;
  if (rc == PMIX_ERROR || rc == PMIX_ERR_NOT_AVAILABLE || rc == PMIX_ERR_NOT_SUPPORTED) return rc;
  cbfunc(rc, found.empty() ? nullptr : found.data(), found.size(), cbdata);
  return PMIX_SUCCESS;
}

pmix_status_t unpublish(const pmix_proc_t* proc, char** keys, const pmix_info_t info[], size_t ninfo,
                        pmix_op_cbfunc_t, void*) {
  return completed(run_python("unpublish", [&](py::object fn) {
    py::dict args;
    args["proc"] = unload_proc(*proc);
    args["keys"] = keys_of(keys);  // None: all of the requester's
    args["directives"] = unload_infos(info, ninfo);
    return status_of(fn(args));
  }));
}

// The callable answers (status, the new namespace).
pmix_status_t spawn(const pmix_proc_t* proc, const pmix_info_t job_info[], size_t ninfo,
                    const pmix_app_t apps[], size_t napps, pmix_spawn_cbfunc_t cbfunc, void* cbdata) {
  pmix_nspace_t nspace;
  std::memset(nspace, 0, sizeof nspace);
  auto rc = run_python("spawn", [&](py::object fn) {
    py::dict args;
    args["proc"] = unload_proc(*proc);
    args["jobinfo"] = unload_infos(job_info, ninfo);
    args["apps"] = unload_apps(apps, napps);
    auto [status, ns] = status_and_payload(fn(args));
    if (status == PMIX_SUCCESS || status == PMIX_OPERATION_SUCCEEDED) load_nspace(ns, nspace, "spawn answer");
    return status;
  });
  if (rc == PMIX_OPERATION_SUCCEEDED) rc = PMIX_SUCCESS;
  if (rc == PMIX_ERROR || rc == PMIX_ERR_NOT_AVAILABLE || rc == PMIX_ERR_NOT_SUPPORTED) return rc;
  cbfunc(rc, nspace, cbdata);
  return PMIX_SUCCESS;
}

template <const char* slot>
pmix_status_t procs_call(const pmix_proc_t procs[], size_t nprocs, const pmix_info_t info[], size_t ninfo,
                         pmix_op_cbfunc_t, void*) {
  return completed(run_python(slot, [&](py::object fn) {
    py::dict args;
    args["procs"] = unload_procs(procs, nprocs);
    args["directives"] = unload_infos(info, ninfo);
    return status_of(fn(args));
  }));
}
constexpr char connect_slot[] = "connect";
constexpr char disconnect_slot[] = "disconnect";

// The library waits for cbfunc: it is called with the callable's status.
void log_fn(const pmix_proc_t* client, const pmix_info_t data[], size_t ndata, const pmix_info_t directives[],
            size_t ndirs, pmix_op_cbfunc_t cbfunc, void* cbdata) {
  auto rc = run_python("log", [&](py::object fn) {
    py::dict args;
    args["source"] = client == nullptr ? py::object(py::none()) : py::object(unload_proc(*client));
    args["data"] = unload_infos(data, ndata);
    args["directives"] = unload_infos(directives, ndirs);
    return status_of(fn(args));
  });
  if (rc == PMIX_OPERATION_SUCCEEDED) rc = PMIX_SUCCESS;
  if (cbfunc != nullptr) cbfunc(rc, cbdata);
}

pmix_status_t allocate(const pmix_proc_t* client, pmix_alloc_directive_t action, const pmix_info_t data[],
                       size_t ndata, pmix_info_cbfunc_t cbfunc, void* cbdata) {
  return answer_with_infos("allocate", cbfunc, cbdata, [&](py::object fn) {
    py::dict args;
    args["source"] = unload_proc(*client);
    args["action"] = action;
    args["directives"] = unload_infos(data, ndata);
    return fn(args);
  });
}

pmix_status_t monitor(const pmix_proc_t* requestor, const pmix_info_t* what, pmix_status_t error,
                      const pmix_info_t directives[], size_t ndirs, pmix_info_cbfunc_t cbfunc, void* cbdata) {
  return answer_with_infos("monitor", cbfunc, cbdata, [&](py::object fn) {
    py::dict args;
    args["source"] = unload_proc(*requestor);
    args["monitor"] = what == nullptr ? py::object(py::none()) : py::object(unload_info(*what));
    args["error"] = error;
    args["directives"] = unload_infos(directives, ndirs);
    return fn(args);
  });
}

// The callable answers (status, credential[, [info]]), the credential as
// bytes or {'bytes': ..., 'size': ...}.
pmix_status_t get_credential(const pmix_proc_t* proc, const pmix_info_t directives[], size_t ndirs,
                             pmix_credential_cbfunc_t cbfunc, void* cbdata) {
  std::string cred;
  info_array* results = nullptr;
  std::unique_ptr<info_array> holder;
  auto rc = run_python("getcredential", [&](py::object fn) {
    py::dict args;
    args["source"] = unload_proc(*proc);
    args["directives"] = unload_infos(directives, ndirs);
    py::object answer = fn(args);
    if (!py::isinstance<py::tuple>(answer) || (py::len(answer) != 2 && py::len(answer) != 3))
      throw py::type_error("expected (status, credential[, [info]])");
    auto t = py::reinterpret_borrow<py::tuple>(answer);
    const auto status = status_of(t[0]);
    if (!t[1].is_none()) cred = load_bytes(t[1], "getcredential answer");
    holder = std::make_unique<info_array>(py::len(t) == 3 ? py::object(t[2]) : py::object(py::none()),
                                          "getcredential answer");
    results = holder.get();
    return status;
  });
  if (rc == PMIX_OPERATION_SUCCEEDED) rc = PMIX_SUCCESS;
  if (results == nullptr) return rc;
  pmix_byte_object_t bo{cred.empty() ? nullptr : cred.data(), cred.size()};
  cbfunc(rc, &bo, results->data(), results->size(), cbdata);
  return PMIX_SUCCESS;
}

pmix_status_t validate_credential(const pmix_proc_t* proc, const pmix_byte_object_t* cred,
                                  const pmix_info_t directives[], size_t ndirs,
                                  pmix_validation_cbfunc_t cbfunc, void* cbdata) {
  std::unique_ptr<info_array> results;
  auto rc = run_python("validatecredential", [&](py::object fn) {
    py::dict args;
    args["source"] = unload_proc(*proc);
    args["credential"] = bytes_or_none(cred);
    args["directives"] = unload_infos(directives, ndirs);
    auto [status, payload] = status_and_payload(fn(args));
    results = std::make_unique<info_array>(payload, "validatecredential answer");
    return status;
  });
  if (rc == PMIX_OPERATION_SUCCEEDED) rc = PMIX_SUCCESS;
  if (!results) return rc;
  cbfunc(rc, results->data(), results->size(), cbdata);
  return PMIX_SUCCESS;
}

pmix_status_t iof_pull(const pmix_proc_t procs[], size_t nprocs, const pmix_info_t directives[], size_t ndirs,
                       pmix_iof_channel_t channels, pmix_op_cbfunc_t, void*) {
  return completed(run_python("iofpull", [&](py::object fn) {
    py::dict args;
    args["channels"] = channels;
    args["sources"] = unload_procs(procs, nprocs);
    args["directives"] = unload_infos(directives, ndirs);
    return status_of(fn(args));
  }));
}

pmix_status_t push_stdin(const pmix_proc_t* source, const pmix_proc_t targets[], size_t ntargets,
                         const pmix_info_t directives[], size_t ndirs, const pmix_byte_object_t* bo,
                         pmix_op_cbfunc_t, void*) {
  return completed(run_python("pushstdin", [&](py::object fn) {
    py::dict args;
    args["source"] = unload_proc(*source);
    args["targets"] = unload_procs(targets, ntargets);
    args["directives"] = unload_infos(directives, ndirs);
    args["payload"] = bytes_or_none(bo);  // None: the end of the input
    return status_of(fn(args));
  }));
}

pmix_status_t group(pmix_group_operation_t op, char grp[], const pmix_proc_t procs[], size_t nprocs,
                    const pmix_info_t directives[], size_t ndirs, pmix_info_cbfunc_t cbfunc, void* cbdata) {
  return answer_with_infos("group", cbfunc, cbdata, [&](py::object fn) {
    py::dict args;
    args["op"] = static_cast<int>(op);
    args["group"] = unload_text(grp);
    args["procs"] = unload_procs(procs, nprocs);
    args["directives"] = unload_infos(directives, ndirs);
    return fn(args);
  });
}

pmix_status_t fabric(const pmix_proc_t* requestor, pmix_fabric_operation_t op, const pmix_info_t directives[],
                     size_t ndirs, pmix_info_cbfunc_t cbfunc, void* cbdata) {
  return answer_with_infos("fabric", cbfunc, cbdata, [&](py::object fn) {
    py::dict args;
    args["source"] = unload_proc(*requestor);
    args["op"] = static_cast<int>(op);
    args["directives"] = unload_infos(directives, ndirs);
    return fn(args);
  });
}

// args: {'source': proc, 'sessionID': int, 'directives': [infos]} -> rc or (rc, [infos])
pmix_status_t session_control(const pmix_proc_t* requestor, uint32_t session, const pmix_info_t directives[],
                              size_t ndirs, pmix_info_cbfunc_t cbfunc, void* cbdata) {
  return answer_with_infos("sessioncontrol", cbfunc, cbdata, [&](py::object fn) {
    py::dict args;
    args["source"] = unload_proc(*requestor);
    args["sessionID"] = session;
    args["directives"] = unload_infos(directives, ndirs);
    return fn(args);
  });
}

// args: {'source': proc, 'directive': int, 'block': str, 'units': [{'type': int, 'count': int}],
// 'directives': [infos]} -> rc
pmix_status_t resource_block(const pmix_proc_t* requestor, pmix_resource_block_directive_t directive,
                             const char* block, const pmix_resource_unit_t* units, size_t nunits,
                             const pmix_info_t* info, size_t ninfo, pmix_op_cbfunc_t cbfunc, void* cbdata) {
  auto rc = run_python("resourceblock", [&](py::object fn) {
    py::dict args;
    args["source"] = unload_proc(*requestor);
    args["directive"] = static_cast<int>(directive);
    args["block"] = unload_text(block);
    py::list list;
    for (size_t k = 0; k < nunits; ++k) {
      py::dict unit;
      unit["type"] = units[k].type;
      unit["count"] = units[k].count;
      list.append(unit);
    }
    args["units"] = list;
    args["directives"] = unload_infos(info, ninfo);
    return status_of(fn(args));
  });
  if (rc == PMIX_OPERATION_SUCCEEDED) rc = PMIX_SUCCESS;
  if (cbfunc != nullptr) cbfunc(rc, cbdata);
  return PMIX_SUCCESS;
}

}  // namespace

bool install(py::handle map, pmix_server_module_t& out) {
  if (map.is_none()) return false;
  if (!py::isinstance<py::dict>(map))
    throw py::type_error("the server module must be a dict of slot name -> callable, got " +
                         std::string(py::str(py::type::handle_of(map).attr("__name__"))));
  auto slots = py::reinterpret_borrow<py::dict>(map);
  for (auto item : slots) {
    const auto name = py::str(item.first).cast<std::string>();
    bool known = false;
    for (const char* k : known_slots) known = known || name == k;
    if (!known) throw py::value_error("unknown server module slot '" + name + "'");
    if (!PyCallable_Check(item.second.ptr()))
      throw py::type_error("server module slot '" + name + "' is not callable");
  }
  // As the library adopts a module only when none was set before, the
  // callables of a later init are kept only if there were none.
  auto& kept = callables();
  if (kept.size() == 0)
    for (auto item : slots) kept[item.first] = item.second;
  const auto has = [&](const char* name) { return slots.contains(name); };
  if (has("clientconnected")) out.client_connected2 = client_connected2;
  if (has("clientfinalized")) out.client_finalized = client_finalized;
  if (has("abort")) out.abort = abort_fn;
  if (has("fencenb")) out.fence_nb = fence_nb;
  if (has("directmodex")) out.direct_modex = direct_modex;
  if (has("notify_event")) out.notify_event = notify_event;
  if (has("query")) out.query = query;
  if (has("toolconnected")) out.tool_connected = tool_connected;
  if (has("jobcontrol")) out.job_control = job_control;
  if (has("publish")) out.publish = publish;
  if (has("lookup")) out.lookup = lookup;
  if (has("unpublish")) out.unpublish = unpublish;
  if (has("spawn")) out.spawn = spawn;
  if (has("connect")) out.connect = procs_call<connect_slot>;
  if (has("disconnect")) out.disconnect = procs_call<disconnect_slot>;
  if (has("log")) out.log = log_fn;
  if (has("allocate")) out.allocate = allocate;
  if (has("monitor")) out.monitor = monitor;
  if (has("getcredential")) out.get_credential = get_credential;
  if (has("validatecredential")) out.validate_credential = validate_credential;
  if (has("iofpull")) out.iof_pull = iof_pull;
  if (has("pushstdin")) out.push_stdin = push_stdin;
  if (has("group")) out.group = group;
  if (has("fabric")) out.fabric = fabric;
  if (has("sessioncontrol")) out.session_control = session_control;
  if (has("resourceblock")) out.resource_block = resource_block;
  return slots.size() > 0;
}

void clear() { callables().clear(); }

}  // namespace pmixpy::server_module
