#include "tests/e2e/host.hpp"

#include <dlfcn.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <thread>

#include "protocol/codec.hpp"

namespace pmix::test {

void host_record::reset() {
  std::lock_guard<std::mutex> guard{mutex};
  connected = finalized = aborts = fence_calls = dmodex_calls = releases = 0;
  abort_status = 0;
  abort_message.clear();
  fence_nprocs = fence_ndata = 0;
  fence_collect.clear();
  fence_reply_extra.clear();
  fence_frees_data = false;
  fence_inline_locked = false;
  dmodex_status = PMIX_SUCCESS;
  dmodex_reply.clear();
  block_in_upcall = false;
  refuse_connects = 0;
  blocking_call_status = 0;
  upcall_probe = nullptr;
  tool_calls = 0;
  tool_info_keys.clear();
  hold_tools = false;
  held_tool_cbfunc = nullptr;
  held_tool_cbdata = nullptr;
  job_control_calls = 0;
  job_control_keys.clear();
  notifications.clear();
  store.clear();
  waiting.clear();
  dynamic_calls.clear();
  connects = disconnects = 0;
  logged.clear();
  spawned.clear();
  spawned_children.clear();  // kills what is left
}

host_record& record() {
  static host_record r;
  return r;
}

namespace {

pmix_status_t on_connected(const pmix_proc_t*, void*, pmix_op_cbfunc_t cbfunc, void* cbdata) {
  auto& r = record();
  ++r.connected;
  if (r.refuse_connects > 0) {
    --r.refuse_connects;
    return PMIX_ERR_NO_PERMISSIONS;
  }
  if (r.block_in_upcall) {
    // A blocking call from inside an up-call must not deadlock (spec 002).
    r.blocking_call_status =
        PMIx_server_register_nspace("from-upcall", 1, nullptr, 0, nullptr, nullptr);
  }
  std::function<void()> probe;
  {
    std::lock_guard<std::mutex> guard{r.mutex};
    probe = r.upcall_probe;
  }
  if (probe) probe();
  // The v1 up-call comes without a callback (as OpenPMIx makes it): the
  // return value answers. With one, answer through it, as an asynchronous
  // host would.
  if (cbfunc == nullptr) return PMIX_SUCCESS;
  const int delay_ms = r.connect_delay_ms.load();
  std::thread([cbfunc, cbdata, delay_ms] {
    if (delay_ms > 0) std::this_thread::sleep_for(std::chrono::milliseconds(delay_ms));
    cbfunc(PMIX_SUCCESS, cbdata);
  }).detach();
  return PMIX_SUCCESS;
}

pmix_status_t on_finalized(const pmix_proc_t*, void*, pmix_op_cbfunc_t, void*) {
  ++record().finalized;
  return PMIX_OPERATION_SUCCEEDED;
}

pmix_status_t on_abort(const pmix_proc_t* proc, void*, int status, const char msg[], pmix_proc_t[],
                       size_t, pmix_op_cbfunc_t cbfunc, void* cbdata) {
  auto& r = record();
  {
    std::lock_guard<std::mutex> guard{r.mutex};
    r.abort_status = status;
    r.abort_message = msg == nullptr ? "" : msg;
    r.abort_proc = *proc;
  }
  ++r.aborts;
  cbfunc(PMIX_SUCCESS, cbdata);
  return PMIX_SUCCESS;
}

struct held_data {
  std::string bytes;
};

void release_held(void* cbdata) {
  delete static_cast<held_data*>(cbdata);
  ++record().releases;
}

// Slurm's pmix plugin answers a fence holding its collective's lock, which
// its release function takes (host_record::fence_inline_locked).
std::mutex& collective_lock() {
  static std::mutex m;
  return m;
}

void release_held_locked(void* cbdata) {
  std::lock_guard<std::mutex> guard{collective_lock()};
  release_held(cbdata);
}

pmix_status_t on_fence(const pmix_proc_t[], size_t nprocs, const pmix_info_t info[], size_t ninfo, char* data,
                       size_t ndata, pmix_modex_cbfunc_t cbfunc, void* cbdata) {
  auto& r = record();
  auto* held = new held_data;
  {
    std::lock_guard<std::mutex> guard{r.mutex};
    r.fence_collect = "absent";
    for (size_t k = 0; k < ninfo; ++k)
      if (PMIX_CHECK_KEY(&info[k], PMIX_COLLECT_DATA)) r.fence_collect = PMIX_INFO_TRUE(&info[k]) ? "true" : "false";
    r.fence_nprocs = nprocs;
    r.fence_ndata = ndata;
    held->bytes.assign(data == nullptr ? "" : data, ndata);
    held->bytes += r.fence_reply_extra;
    if (r.fence_frees_data) std::free(data);
  }
  ++r.fence_calls;
  if (r.fence_inline_locked) {
    // Answered before returning, under the lock the release takes.
    std::lock_guard<std::mutex> guard{collective_lock()};
    cbfunc(PMIX_SUCCESS, held->bytes.data(), held->bytes.size(), cbdata, release_held_locked, held);
    return PMIX_SUCCESS;
  }
  // The data handed back is ours to release after the callback (spec 000).
  std::thread([cbfunc, cbdata, held] {
    cbfunc(PMIX_SUCCESS, held->bytes.data(), held->bytes.size(), cbdata, release_held, held);
  }).detach();
  return PMIX_SUCCESS;
}

pmix_status_t on_dmodex(const pmix_proc_t* proc, const pmix_info_t[], size_t,
                        pmix_modex_cbfunc_t cbfunc, void* cbdata) {
  auto& r = record();
  auto* held = new held_data;
  pmix_status_t status;
  {
    std::lock_guard<std::mutex> guard{r.mutex};
    r.dmodex_proc = *proc;
    held->bytes = r.dmodex_reply;
    status = r.dmodex_status;
  }
  ++r.dmodex_calls;
  cbfunc(status, held->bytes.data(), held->bytes.size(), cbdata, release_held, held);
  return PMIX_SUCCESS;
}

void on_tool(pmix_info_t* info, size_t ninfo, pmix_tool_connection_cbfunc_t cbfunc, void* cbdata) {
  auto& r = record();
  pmix_proc_t proc;
  {
    std::lock_guard<std::mutex> guard{r.mutex};
    for (size_t k = 0; k < ninfo; ++k) r.tool_info_keys += std::string{info[k].key} + " ";
    proc = r.tool_identity;
    if (r.hold_tools) {
      r.held_tool_cbfunc = cbfunc;
      r.held_tool_cbdata = cbdata;
    }
  }
  ++r.tool_calls;
  if (r.held_tool_cbfunc == nullptr) cbfunc(PMIX_SUCCESS, &proc, cbdata);
}

struct answer {
  pmix_info_t info;
};

void release_answer(void* cbdata) {
  auto* a = static_cast<answer*>(cbdata);
  PMIX_INFO_DESTRUCT(&a->info);
  delete a;
}

pmix_status_t on_job_control(const pmix_proc_t*, const pmix_proc_t[], size_t, const pmix_info_t directives[],
                             size_t ndirs, pmix_info_cbfunc_t cbfunc, void* cbdata) {
  auto& r = record();
  {
    std::lock_guard<std::mutex> guard{r.mutex};
    for (size_t k = 0; k < ndirs; ++k) r.job_control_keys += std::string{directives[k].key} + " ";
  }
  ++r.job_control_calls;
  auto* a = new answer;
  PMIX_INFO_LOAD(&a->info, "host.answer", "done", PMIX_STRING);
  cbfunc(PMIX_SUCCESS, &a->info, 1, cbdata, release_answer, a);
  return PMIX_SUCCESS;
}

pmix_status_t on_notify(pmix_status_t code, const pmix_proc_t* source, pmix_data_range_t range,
                        pmix_info_t[], size_t, pmix_op_cbfunc_t cbfunc, void* cbdata) {
  auto& r = record();
  {
    std::lock_guard<std::mutex> guard{r.mutex};
    r.notifications.push_back(std::to_string(code) + " " + source->nspace + "." +
                              std::to_string(source->rank) + " " + std::to_string(range));
  }
  // Answered later, from a thread of the host's own.
  std::thread([cbfunc, cbdata] { cbfunc(PMIX_SUCCESS, cbdata); }).detach();
  return PMIX_SUCCESS;
}

std::string keys_of(const char* call, const pmix_info_t info[], size_t ninfo) {
  std::string line = call;
  line += ":";
  for (size_t k = 0; k < ninfo; ++k) line += std::string{" "} + info[k].key;
  return line;
}

std::string spawn_capture_dir = "/tmp";

// The PMIX_USERID among a call's info (the server adds the caller's), or
// (uint32_t)-1 when there is none.
uint32_t user_of(const pmix_info_t info[], size_t ninfo) {
  for (size_t k = 0; k < ninfo; ++k)
    if (std::strcmp(info[k].key, PMIX_USERID) == 0 && info[k].value.type == PMIX_UINT32)
      return info[k].value.data.uint32;
  return static_cast<uint32_t>(-1);
}

// Answers a waiting lookup whose keys are all published by its user, as a
// resource manager's data store does (Open MPI's data server keys entries
// on the user) (under r.mutex).
bool try_answer(host_record& r, const std::vector<std::string>& keys, uint32_t uid, pmix_lookup_cbfunc_t cbfunc,
                void* cbdata) {
  for (const auto& k : keys) {
    auto it = r.store.find(k);
    if (it == r.store.end() || it->second.uid != uid) return false;
  }
  std::vector<pmix_pdata_t> out(keys.size());
  for (size_t k = 0; k < keys.size(); ++k) {
    const auto& entry = r.store.at(keys[k]);
    PMIX_PDATA_CONSTRUCT(&out[k]);
    out[k].proc = entry.owner;
    PMIX_LOAD_KEY(out[k].key, keys[k].c_str());
    PMIX_VALUE_LOAD(&out[k].value, entry.value.c_str(), PMIX_STRING);
  }
  cbfunc(PMIX_SUCCESS, out.data(), out.size(), cbdata);
  for (auto& d : out) PMIX_PDATA_DESTRUCT(&d);
  return true;
}

pmix_status_t on_publish(const pmix_proc_t* proc, const pmix_info_t info[], size_t ninfo, pmix_op_cbfunc_t cbfunc,
                         void* cbdata) {
  auto& r = record();
  std::lock_guard<std::mutex> guard{r.mutex};
  r.dynamic_calls.push_back(keys_of("publish", info, ninfo));
  const auto uid = user_of(info, ninfo);
  for (size_t k = 0; k < ninfo; ++k) {
    if (info[k].value.type != PMIX_STRING) continue;  // directives
    if (r.store.count(info[k].key) != 0) return PMIX_ERR_DUPLICATE_KEY;
    r.store[info[k].key] = {*proc, info[k].value.data.string, uid};
  }
  for (auto it = r.waiting.begin(); it != r.waiting.end();)
    it = try_answer(r, it->keys, it->uid, it->cbfunc, it->cbdata) ? r.waiting.erase(it) : std::next(it);
  (void)cbfunc;
  (void)cbdata;
  return PMIX_OPERATION_SUCCEEDED;
}

pmix_status_t on_lookup(const pmix_proc_t*, char** keys, const pmix_info_t info[], size_t ninfo,
                        pmix_lookup_cbfunc_t cbfunc, void* cbdata) {
  auto& r = record();
  std::lock_guard<std::mutex> guard{r.mutex};
  r.dynamic_calls.push_back(keys_of("lookup", info, ninfo));
  std::vector<std::string> wanted;
  for (char** k = keys; k != nullptr && *k != nullptr; ++k) wanted.emplace_back(*k);
  bool wait = false;
  for (size_t k = 0; k < ninfo; ++k)
    if (std::strcmp(info[k].key, PMIX_WAIT) == 0) wait = PMIX_INFO_TRUE(&info[k]);
  const auto uid = user_of(info, ninfo);
  if (try_answer(r, wanted, uid, cbfunc, cbdata)) return PMIX_SUCCESS;
  if (!wait) return PMIX_ERR_NOT_FOUND;
  r.waiting.push_back({wanted, uid, cbfunc, cbdata});
  return PMIX_SUCCESS;
}

pmix_status_t on_unpublish(const pmix_proc_t* proc, char** keys, const pmix_info_t info[], size_t ninfo,
                           pmix_op_cbfunc_t cbfunc, void* cbdata) {
  auto& r = record();
  std::lock_guard<std::mutex> guard{r.mutex};
  r.dynamic_calls.push_back(keys_of("unpublish", info, ninfo));
  bool any = false;
  for (auto it = r.store.begin(); it != r.store.end();) {
    bool named = keys == nullptr;
    for (char** k = keys; k != nullptr && *k != nullptr; ++k) named = named || it->first == *k;
    if (named && PMIX_CHECK_PROCID(&it->second.owner, proc) && it->second.uid == user_of(info, ninfo)) {
      it = r.store.erase(it);
      any = true;
    } else {
      ++it;
    }
  }
  // Answered later, through the callback.
  std::thread([cbfunc, cbdata, any] { cbfunc(any ? PMIX_SUCCESS : PMIX_ERR_NOT_FOUND, cbdata); }).detach();
  return PMIX_SUCCESS;
}

pmix_status_t on_spawn(const pmix_proc_t* proc, const pmix_info_t job_info[], size_t ninfo, const pmix_app_t apps[],
                       size_t napps, pmix_spawn_cbfunc_t cbfunc, void* cbdata) {
  auto& r = record();
  std::string nspace;
  std::vector<std::vector<std::string>> argvs;
  {
    std::lock_guard<std::mutex> guard{r.mutex};
    r.dynamic_calls.push_back(keys_of("spawn", job_info, ninfo));
    nspace = std::string{proc->nspace} + ".spawn" + std::to_string(r.spawned.size());
    r.spawned.push_back(nspace);
    for (size_t a = 0; a < napps; ++a)
      for (int k = 0; k < apps[a].maxprocs; ++k) {
        std::vector<std::string> argv;
        for (char** v = apps[a].argv; v != nullptr && *v != nullptr; ++v) argv.emplace_back(*v);
        if (argv.empty()) argv.emplace_back(apps[a].cmd);
        argvs.push_back(std::move(argv));
      }
  }
  // Blocking server calls are not allowed here (spec 002): a thread of the
  // host's own registers the job and starts it, then answers.
  std::thread([nspace, argvs, cbfunc, cbdata] {
    auto& r = record();
    const auto n = static_cast<std::uint32_t>(argvs.size());
    const auto rc = register_job(nspace, n, n);
    if (rc == PMIX_SUCCESS) {
      std::lock_guard<std::mutex> guard{r.mutex};
      for (pmix_rank_t k = 0; k < n; ++k)
        r.spawned_children.push_back(launch(nspace, k, argvs[k], spawn_capture_dir));
    }
    pmix_nspace_t name;
    PMIX_LOAD_NSPACE(name, nspace.c_str());
    cbfunc(rc, name, cbdata);
  }).detach();
  return PMIX_SUCCESS;
}

pmix_status_t on_connect(const pmix_proc_t[], size_t nprocs, const pmix_info_t info[], size_t ninfo,
                         pmix_op_cbfunc_t, void*) {
  auto& r = record();
  {
    std::lock_guard<std::mutex> guard{r.mutex};
    r.dynamic_calls.push_back(keys_of("connect", info, ninfo) + " procs=" + std::to_string(nprocs));
  }
  ++r.connects;
  return PMIX_OPERATION_SUCCEEDED;
}

pmix_status_t on_disconnect(const pmix_proc_t[], size_t nprocs, const pmix_info_t info[], size_t ninfo,
                            pmix_op_cbfunc_t cbfunc, void* cbdata) {
  auto& r = record();
  {
    std::lock_guard<std::mutex> guard{r.mutex};
    r.dynamic_calls.push_back(keys_of("disconnect", info, ninfo) + " procs=" + std::to_string(nprocs));
  }
  ++r.disconnects;
  std::thread([cbfunc, cbdata] { cbfunc(PMIX_SUCCESS, cbdata); }).detach();
  return PMIX_SUCCESS;
}

void on_log(const pmix_proc_t* client, const pmix_info_t data[], size_t ndata, const pmix_info_t directives[],
            size_t ndirs, pmix_op_cbfunc_t cbfunc, void* cbdata) {
  auto& r = record();
  {
    std::lock_guard<std::mutex> guard{r.mutex};
    r.dynamic_calls.push_back(keys_of("log", directives, ndirs));
    for (size_t k = 0; k < ndata; ++k)
      r.logged.push_back(std::string{client->nspace} + "." + std::to_string(client->rank) + " " + data[k].key + "=" +
                         (data[k].value.type == PMIX_STRING && data[k].value.data.string != nullptr
                              ? data[k].value.data.string
                              : "?"));
  }
  if (cbfunc != nullptr) cbfunc(PMIX_SUCCESS, cbdata);
}

void record_call(std::string line) {
  std::lock_guard<std::mutex> guard{record().mutex};
  record().dynamic_calls.push_back(std::move(line));
}

std::string who(const pmix_proc_t* p) { return p == nullptr ? "?" : std::string{p->nspace} + "." + std::to_string(p->rank); }

// Answers an info callback with one string item, then frees it.
void answer_info(pmix_info_cbfunc_t cbfunc, void* cbdata, pmix_status_t status, const char* key, const char* text) {
  if (cbfunc == nullptr) return;
  auto* info = new pmix_info_t;
  PMIX_INFO_LOAD(info, key, text, PMIX_STRING);
  cbfunc(status, info, 1, cbdata,
         [](void* d) {
           auto* i = static_cast<pmix_info_t*>(d);
           PMIX_INFO_DESTRUCT(i);
           delete i;
         },
         info);
}

// "query: <requester> <keys>".
void record_query(const pmix_proc_t* client, const pmix_query_t* queries, size_t nqueries) {
  std::string line = "query: " + who(client);
  for (size_t q = 0; q < nqueries; ++q)
    for (char** k = queries[q].keys; k != nullptr && *k != nullptr; ++k) line += std::string{" "} + *k;
  record_call(line);
}

pmix_status_t on_query(pmix_proc_t* client, pmix_query_t* queries, size_t nqueries, pmix_info_cbfunc_t cbfunc,
                       void* cbdata) {
  record_query(client, queries, nqueries);
  answer_info(cbfunc, cbdata, PMIX_SUCCESS, "host.query", "answered");
  return PMIX_SUCCESS;
}

pmix_status_t on_query_held(pmix_proc_t* client, pmix_query_t* queries, size_t nqueries, pmix_info_cbfunc_t cbfunc,
                            void* cbdata) {
  record_query(client, queries, nqueries);
  std::lock_guard<std::mutex> guard{record().mutex};
  record().held_queries.emplace_back(cbfunc, cbdata);
  return PMIX_SUCCESS;
}

pmix_status_t on_publish_held(const pmix_proc_t*, const pmix_info_t info[], size_t ninfo, pmix_op_cbfunc_t cbfunc,
                              void* cbdata) {
  std::lock_guard<std::mutex> guard{record().mutex};
  record().dynamic_calls.push_back(keys_of("publish", info, ninfo));
  record().held_ops.emplace_back(cbfunc, cbdata);
  return PMIX_SUCCESS;
}

pmix_status_t on_unpublish_held(const pmix_proc_t*, char**, const pmix_info_t info[], size_t ninfo,
                                pmix_op_cbfunc_t cbfunc, void* cbdata) {
  std::lock_guard<std::mutex> guard{record().mutex};
  record().dynamic_calls.push_back(keys_of("unpublish", info, ninfo));
  record().held_ops.emplace_back(cbfunc, cbdata);
  return PMIX_SUCCESS;
}

pmix_status_t on_allocate(const pmix_proc_t* client, pmix_alloc_directive_t directive, const pmix_info_t data[],
                          size_t ndata, pmix_info_cbfunc_t cbfunc, void* cbdata) {
  record_call("allocate: " + who(client) + " directive=" + std::to_string(directive) + " " +
              keys_of("keys", data, ndata));
  answer_info(cbfunc, cbdata, PMIX_SUCCESS, "host.alloc", "granted");
  return PMIX_SUCCESS;
}

pmix_status_t on_session_control(const pmix_proc_t* requestor, uint32_t session, const pmix_info_t directives[],
                                 size_t ndirs, pmix_info_cbfunc_t cbfunc, void* cbdata) {
  record_call("session_control: " + who(requestor) + " id=" + std::to_string(session) + " " +
              keys_of("keys", directives, ndirs));
  answer_info(cbfunc, cbdata, PMIX_SUCCESS, "host.session", "paused");
  return PMIX_SUCCESS;
}

pmix_status_t on_resource_block(const pmix_proc_t* requestor, pmix_resource_block_directive_t directive,
                                const char* block, const pmix_resource_unit_t* units, size_t nunits,
                                const pmix_info_t* info, size_t ninfo, pmix_op_cbfunc_t cbfunc, void* cbdata) {
  std::string list;
  for (size_t k = 0; k < nunits; ++k)
    list += (k == 0 ? "" : ",") + std::string{PMIx_Device_type_string(units[k].type)} + ":" +
            std::to_string(units[k].count);
  record_call("resource_block: " + who(requestor) + " directive=" + std::to_string(directive) + " block=" + block +
              " units=" + list + " " + keys_of("keys", info, ninfo));
  cbfunc(PMIX_SUCCESS, cbdata);
  return PMIX_SUCCESS;
}

// A group spanning nodes: construct gets context ID 77 from the host.
pmix_status_t on_group(pmix_group_operation_t op, char grp[], const pmix_proc_t procs[], size_t nprocs,
                       const pmix_info_t directives[], size_t ndirs, pmix_info_cbfunc_t cbfunc, void* cbdata) {
  record_call("group: op=" + std::to_string(op) + " grp=" + grp + " procs=" + std::to_string(nprocs) + " " +
              keys_of("keys", directives, ndirs));
  if (op != PMIX_GROUP_CONSTRUCT) {
    cbfunc(PMIX_SUCCESS, nullptr, 0, cbdata, nullptr, nullptr);
    return PMIX_SUCCESS;
  }
  // As a host joining the nodes would: the node's group data (the
  // members' PMIX_GROUP_INFO) comes back with the other nodes' appended.
  // Here the other node's is made up: every member this node does not
  // hold gave PMIX_GROUP_LOCAL_CID 900 + its rank.
  std::string blob;
  for (size_t k = 0; k < ndirs; ++k)
    if (PMIX_CHECK_KEY(&directives[k], PMIX_GROUP_ENDPT_DATA) && directives[k].value.type == PMIX_BYTE_OBJECT)
      blob.assign(directives[k].value.data.bo.bytes, directives[k].value.data.bo.size);
  pmix::wire::GroupData mine;
  mine.ParseFromString(blob);
  pmix::wire::GroupData others;
  for (size_t k = 0; k < nprocs; ++k) {
    if (procs[k].rank == PMIX_RANK_WILDCARD) continue;
    bool here = false;
    for (const auto& m : mine.members())
      here = here || (m.proc().nspace() == procs[k].nspace && m.proc().rank() == procs[k].rank);
    if (here) continue;
    auto* m = others.add_members();
    pmix::protocol::to_wire(pmix::proc_id{procs[k].nspace, procs[k].rank}, m->mutable_proc());
    pmix::protocol::to_wire(pmix::info{PMIX_GROUP_LOCAL_CID, pmix::value::unsigned_(PMIX_SIZE, 900 + procs[k].rank), 0},
                            m->add_info());
  }
  blob += others.SerializeAsString();
  pmix_info_t out[2];
  size_t ctx = 77;
  PMIX_INFO_LOAD(&out[0], PMIX_GROUP_CONTEXT_ID, &ctx, PMIX_SIZE);
  pmix_byte_object_t bo{blob.data(), blob.size()};
  PMIX_INFO_LOAD(&out[1], PMIX_GROUP_ENDPT_DATA, &bo, PMIX_BYTE_OBJECT);
  cbfunc(PMIX_SUCCESS, out, 2, cbdata, nullptr, nullptr);
  PMIX_INFO_DESTRUCT(&out[0]);
  PMIX_INFO_DESTRUCT(&out[1]);
  return PMIX_SUCCESS;
}

pmix_status_t on_monitor(const pmix_proc_t* requestor, const pmix_info_t* monitor, pmix_status_t error,
                         const pmix_info_t directives[], size_t ndirs, pmix_info_cbfunc_t cbfunc, void* cbdata) {
  record_call("monitor: " + who(requestor) + " " + monitor->key + " error=" + std::to_string(error) + " " +
              keys_of("keys", directives, ndirs));
  answer_info(cbfunc, cbdata, PMIX_SUCCESS, "host.monitor", "on");
  return PMIX_SUCCESS;
}

pmix_status_t on_get_credential(const pmix_proc_t* proc, const pmix_info_t directives[], size_t ndirs,
                                pmix_credential_cbfunc_t cbfunc, void* cbdata) {
  record_call("get_credential: " + who(proc));
  std::string cred = "host-cred:" + who(proc);
  pmix_byte_object_t bo{cred.data(), cred.size()};
  pmix_info_t type;
  PMIX_INFO_LOAD(&type, PMIX_CRED_TYPE, "host", PMIX_STRING);
  cbfunc(PMIX_SUCCESS, &bo, &type, 1, cbdata);
  PMIX_INFO_DESTRUCT(&type);
  return PMIX_SUCCESS;
}

pmix_status_t on_validate_credential(const pmix_proc_t* proc, const pmix_byte_object_t* cred,
                                     const pmix_info_t directives[], size_t ndirs, pmix_validation_cbfunc_t cbfunc,
                                     void* cbdata) {
  const std::string bytes = cred == nullptr || cred->bytes == nullptr ? "" : std::string(cred->bytes, cred->size);
  record_call("validate_credential: " + who(proc) + " " + bytes);
  if (bytes.compare(0, 10, "host-cred:") != 0) {
    cbfunc(PMIX_ERR_INVALID_CRED, nullptr, 0, cbdata);
    return PMIX_SUCCESS;
  }
  pmix_info_t uid;
  uint32_t value = 4242;
  PMIX_INFO_LOAD(&uid, PMIX_USERID, &value, PMIX_UINT32);
  cbfunc(PMIX_SUCCESS, &uid, 1, cbdata);
  PMIX_INFO_DESTRUCT(&uid);
  return PMIX_SUCCESS;
}

pmix_status_t on_push_stdin(const pmix_proc_t* source, const pmix_proc_t targets[], size_t ntargets,
                            const pmix_info_t directives[], size_t ndirs, const pmix_byte_object_t* bo,
                            pmix_op_cbfunc_t cbfunc, void* cbdata) {
  std::string line = "push_stdin: " + who(source) + " ->";
  for (size_t k = 0; k < ntargets; ++k) line += " " + who(&targets[k]);
  line += bo == nullptr ? " EOF" : " [" + std::string(bo->bytes == nullptr ? "" : bo->bytes, bo->size) + "]";
  record_call(line);
  // "stop": taken, and that producer's stdin stops (OpenPMIx master's XOFF).
  const bool stop = bo != nullptr && std::string(bo->bytes == nullptr ? "" : bo->bytes, bo->size) == "stop";
  if (cbfunc != nullptr) cbfunc(stop ? PMIX_ERR_IOF_XOFF : PMIX_SUCCESS, cbdata);
  return PMIX_SUCCESS;
}

pmix_status_t on_fabric(const pmix_proc_t* requestor, pmix_fabric_operation_t op, const pmix_info_t directives[],
                        size_t ndirs, pmix_info_cbfunc_t cbfunc, void* cbdata) {
  record_call("fabric: " + who(requestor) + " op=" + std::to_string(op) + " " + keys_of("keys", directives, ndirs));
  answer_info(cbfunc, cbdata, PMIX_SUCCESS, "host.fabric", "fab0");
  return PMIX_SUCCESS;
}

pmix_status_t on_iof_pull(const pmix_proc_t procs[], size_t nprocs, const pmix_info_t[], size_t,
                          pmix_iof_channel_t channels, pmix_op_cbfunc_t cbfunc, void* cbdata) {
  std::string line = "iof_pull:";
  for (size_t k = 0; k < nprocs; ++k) line += " " + who(&procs[k]);
  record_call(line + " channels=" + std::to_string(channels));
  if (cbfunc != nullptr) cbfunc(PMIX_SUCCESS, cbdata);
  return PMIX_SUCCESS;
}

}  // namespace

std::vector<std::string> dynamic_calls() {
  std::lock_guard<std::mutex> guard{record().mutex};
  return record().dynamic_calls;
}

void set_spawn_capture_dir(const std::string& dir) { spawn_capture_dir = dir; }

std::vector<std::string> openpmix_env(const std::string& nspace, pmix_rank_t r, const char* buffer_type) {
  pmix_proc_t p;
  PMIX_LOAD_PROCID(&p, nspace.c_str(), r);
  char** env = nullptr;
  std::vector<std::string> out;
  if (PMIx_server_setup_fork(&p, &env) != PMIX_SUCCESS) return out;  // the program then fails its init
  for (char** e = env; e != nullptr && *e != nullptr; ++e) out.emplace_back(*e);
  PMIX_ARGV_FREE(env);
  out.push_back(std::string{"PMIX_BFROP_BUFFER_TYPE="} + buffer_type);
  out.push_back("LD_LIBRARY_PATH=");
  return out;
}

std::string stage_for_other_user(const std::string& dir) {
  const std::string bin = dir + "/bin";
  ::mkdir(bin.c_str(), 0755);
  ::chmod(bin.c_str(), 0755);
  for (const std::string file : {"tests/e2e/script_client", "tests/e2e/event_client", "tests/e2e/openpmix_client_bin",
                                 "api/libpmix.so.2"}) {
    const auto from = runfile(file);
    if (::access(from.c_str(), F_OK) != 0) continue;  // not in this test's data
    const auto to = bin + "/" + std::filesystem::path(file).filename().string();
    std::filesystem::copy_file(std::filesystem::canonical(from), to, std::filesystem::copy_options::overwrite_existing);
    ::chmod(to.c_str(), 0755);
  }
  return bin;
}

child launch_as(uid_t uid, const std::string& nspace, pmix_rank_t r, const std::vector<std::string>& steps,
                const std::string& bin, const std::string& capture_dir) {
  return launch_program_as(uid, "script_client", nspace, r, steps, bin, capture_dir);
}

child launch_program_as(uid_t uid, const std::string& program, const std::string& nspace, pmix_rank_t r,
                        const std::vector<std::string>& steps, const std::string& bin, const std::string& capture_dir) {
  pmix_proc_t p;
  PMIX_LOAD_PROCID(&p, nspace.c_str(), r);
  char** env = nullptr;
  PMIx_server_setup_fork(&p, &env);
  std::vector<std::string> extra{"LD_LIBRARY_PATH=" + bin};
  for (char** e = env; e != nullptr && *e != nullptr; ++e) extra.emplace_back(*e);
  PMIX_ARGV_FREE(env);
  std::vector<std::string> argv{bin + "/" + program};
  argv.insert(argv.end(), steps.begin(), steps.end());
  return child(argv, environment_with(extra), capture_dir, uid);
}

child launch_script(const std::string& nspace, pmix_rank_t r, const std::vector<std::string>& steps,
                    const std::string& capture_dir) {
  std::vector<std::string> argv{runfile("tests/e2e/script_client")};
  argv.insert(argv.end(), steps.begin(), steps.end());
  return launch(nspace, r, argv, capture_dir);
}

std::vector<std::string> calls_starting(const std::string& prefix) {
  std::vector<std::string> out;
  for (const auto& c : dynamic_calls())
    if (c.compare(0, prefix.size(), prefix) == 0) out.push_back(c);
  return out;
}

std::vector<std::string> notifications() {
  std::lock_guard<std::mutex> guard{record().mutex};
  return record().notifications;
}

pmix_server_module_t make_module(host_slots slots) {
  pmix_server_module_t m;
  std::memset(&m, 0, sizeof m);
  if (slots.connected && !slots.connected2) m.client_connected = on_connected;
  if (slots.connected2)
    m.client_connected2 = [](const pmix_proc_t* proc, void* object, pmix_info_t*, size_t, pmix_op_cbfunc_t cbfunc,
                             void* cbdata) { return on_connected(proc, object, cbfunc, cbdata); };
  if (slots.finalized) m.client_finalized = on_finalized;
  if (slots.abort) m.abort = on_abort;
  if (slots.fence) m.fence_nb = on_fence;
  if (slots.dmodex) m.direct_modex = on_dmodex;
  if (slots.tool) m.tool_connected = on_tool;
  if (slots.job_control) m.job_control = on_job_control;
  if (slots.notify) m.notify_event = on_notify;
  if (slots.publish) {
    m.publish = on_publish;
    m.lookup = on_lookup;
    m.unpublish = on_unpublish;
  }
  if (slots.publish_held) {
    m.publish = on_publish_held;
    m.unpublish = on_unpublish_held;
  }
  if (slots.spawn) m.spawn = on_spawn;
  if (slots.connect) {
    m.connect = on_connect;
    m.disconnect = on_disconnect;
  }
  if (slots.log) m.log = on_log;
  if (slots.requests) {
    m.allocate = on_allocate;
    m.monitor = on_monitor;
    m.get_credential = on_get_credential;
    m.validate_credential = on_validate_credential;
    m.push_stdin = on_push_stdin;
    m.fabric = on_fabric;
  }
  if (slots.iof) m.iof_pull = on_iof_pull;
  if (slots.query) m.query = on_query;
  if (slots.query_held) m.query = on_query_held;
  if (slots.group) m.group = on_group;
  if (slots.later) {
    m.session_control = on_session_control;
    m.resource_block = on_resource_block;
  }
  if (slots.later_v5) {
    // OpenPMIx 5.0's module: session_control alone after client_connected2,
    // where 6.0 has tool_connected2.
    static_assert(sizeof(m.tool_connected2) == sizeof(pmix_server_session_control_fn_t), "one slot");
    pmix_server_session_control_fn_t fn = on_session_control;
    std::memcpy(&m.tool_connected2, &fn, sizeof fn);
  }
  return m;
}

const pmix_cxx_server_runtime_t* runtime_table() {
  void* h = dlopen(PMIX_CXX_SERVER_LIBRARY, RTLD_NOW | RTLD_NOLOAD);
  if (h == nullptr) return nullptr;
  auto fn = reinterpret_cast<pmix_cxx_server_runtime_fn>(dlsym(h, PMIX_CXX_SERVER_RUNTIME_SYMBOL));
  return fn == nullptr ? nullptr : fn();
}

server::server(const std::string& tmpdir, host_slots slots, std::vector<pmix_info_t> extra) {
  record().reset();
  module_ = make_module(slots);
  std::vector<pmix_info_t> dirs(1);
  PMIX_INFO_LOAD(&dirs[0], PMIX_SERVER_TMPDIR, tmpdir.c_str(), PMIX_STRING);
  for (auto& e : extra) dirs.push_back(e);
  status_ = PMIx_server_init(&module_, dirs.data(), dirs.size());
  PMIX_INFO_DESTRUCT(&dirs[0]);
}

server::~server() {
  // What the host still holds is answered now, late (the server drops it).
  std::vector<std::pair<pmix_info_cbfunc_t, void*>> held;
  std::vector<host_record::waiting_lookup> lookups;
  std::vector<std::pair<pmix_op_cbfunc_t, void*>> ops;
  {
    std::lock_guard<std::mutex> guard{record().mutex};
    held.swap(record().held_queries);
    lookups.swap(record().waiting);
    ops.swap(record().held_ops);
  }
  for (auto& [cbfunc, cbdata] : held) cbfunc(PMIX_ERR_TIMEOUT, nullptr, 0, cbdata, nullptr, nullptr);
  for (auto& [cbfunc, cbdata] : ops) cbfunc(PMIX_ERR_TIMEOUT, cbdata);
  for (auto& l : lookups) l.cbfunc(PMIX_ERR_NOT_FOUND, nullptr, 0, l.cbdata);
  if (status_ == PMIX_SUCCESS) PMIx_server_finalize();
}

pmix_cxx_server_view_t server::view() const {
  pmix_cxx_server_view_t v;
  std::memset(&v, 0, sizeof v);
  if (const auto* t = runtime_table()) t->view(&v);
  return v;
}

const snapshot::rank_view* snapshot::nspace_view::rank(pmix_rank_t r) const {
  for (const auto& v : ranks)
    if (v.rank == r) return &v;
  return nullptr;
}

const snapshot::nspace_view* snapshot::nspace(const std::string& name) const {
  for (const auto& n : nspaces)
    if (n.name == name) return &n;
  return nullptr;
}

std::size_t snapshot::accounted_actors() const {
  std::size_t n = 1;  // the server actor
  for (const auto& ns : nspaces) {
    n += 1;
    for (const auto& r : ns.ranks) n += (r.actor ? 1 : 0) + static_cast<std::size_t>(r.peers);
  }
  return n;
}

snapshot take_snapshot() {
  snapshot out;
  const auto* t = runtime_table();
  if (t == nullptr) return out;
  pmix_cxx_server_view_t v;
  if (t->view(&v) != PMIX_SUCCESS) return out;
  out.fences = v.fences_in_flight;
  out.connections = v.connections;
  out.actors = v.actors_running;
  out.departed = v.departed;
  out.dropped_sends = v.dropped_sends;
  out.board_posts = v.board_posts;
  out.sensors = v.sensors;
  out.iof_registrations = v.iof_registrations;
  out.pending_upcalls = v.pending_upcalls;
  for (std::size_t i = 0; i < v.nnspaces; ++i) {
    const auto& n = v.nspaces[i];
    snapshot::nspace_view nv;
    nv.name = n.nspace;
    nv.nlocalprocs = n.nlocalprocs;
    nv.nfinalized = n.nfinalized;
    nv.fired = n.local_app_fini_fired != 0;
    nv.fired_runs = n.local_app_fini_runs;
    for (std::size_t k = 0; k < n.nranks; ++k) {
      const auto& r = n.ranks[k];
      nv.ranks.push_back(
          {r.rank, r.registered, r.proc_cnt, r.peers, r.tombstones, r.has_peerid, r.dead, r.actor, r.waiting_gets});
    }
    out.nspaces.push_back(std::move(nv));
  }
  t->view_free(&v);
  return out;
}

bool eventually(const std::function<bool()>& pred) {
  for (int i = 0; i < 120000; ++i) {
    if (pred()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return false;
}

bool contains(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}

std::size_t count(const std::string& haystack, const std::string& needle) {
  std::size_t n = 0;
  for (std::size_t at = 0; (at = haystack.find(needle, at)) != std::string::npos; at += needle.size()) ++n;
  return n;
}

bool wait_for_output(const child& c, const std::string& text) {
  return eventually([&] { return contains(c.output(), text); });
}

std::string this_host() {
  char buf[HOST_NAME_MAX + 1] = {};
  ::gethostname(buf, sizeof buf - 1);
  return buf;
}

pmix_status_t register_by_maps(const std::string& nspace, std::uint32_t size, const std::string& nodes,
                               const std::string& ppn, std::uint32_t local, const std::vector<pmix_rank_t>& clients,
                               uid_t uid, gid_t gid) {
  char* node_map = nullptr;
  char* proc_map = nullptr;
  PMIx_generate_regex(nodes.c_str(), &node_map);
  PMIx_generate_ppn(ppn.c_str(), &proc_map);
  pmix_info_t info[3];
  PMIX_INFO_LOAD(&info[0], PMIX_JOB_SIZE, &size, PMIX_UINT32);
  PMIX_INFO_LOAD(&info[1], PMIX_NODE_MAP, node_map, PMIX_STRING);
  PMIX_INFO_LOAD(&info[2], PMIX_PROC_MAP, proc_map, PMIX_STRING);
  std::free(node_map);
  std::free(proc_map);
  auto rc = PMIx_server_register_nspace(nspace.c_str(), static_cast<int>(local), info, 3, nullptr,
                                        nullptr);
  for (auto& i : info) PMIX_INFO_DESTRUCT(&i);
  if (rc != PMIX_SUCCESS) return rc;
  for (pmix_rank_t r : clients) {
    pmix_proc_t p;
    PMIX_LOAD_PROCID(&p, nspace.c_str(), r);
    rc = PMIx_server_register_client(&p, uid, gid, nullptr, nullptr, nullptr);
    if (rc != PMIX_SUCCESS) return rc;
  }
  return PMIX_SUCCESS;
}

pmix_status_t register_job(const std::string& nspace, std::uint32_t size, std::uint32_t local, uid_t user) {
  const uid_t uid = user == static_cast<uid_t>(-1) ? ::getuid() : user;
  const gid_t gid = user == static_cast<uid_t>(-1) ? ::getgid() : static_cast<gid_t>(user);
  std::string nodes = this_host();
  std::string ppn = local == 1 ? "0" : "0-" + std::to_string(local - 1);
  if (local < size) {
    nodes += ",othernode";
    ppn += ";" + (size - local == 1 ? std::to_string(local)
                                    : std::to_string(local) + "-" + std::to_string(size - 1));
  }
  std::vector<pmix_rank_t> clients(local);
  for (pmix_rank_t r = 0; r < local; ++r) clients[r] = r;
  return register_by_maps(nspace, size, nodes, ppn, local, clients, uid, gid);
}

std::string server_uri() {
  pmix_proc_t p;
  PMIX_LOAD_PROCID(&p, "any", 0);
  char** env = nullptr;
  PMIx_server_setup_fork(&p, &env);
  std::string uri;
  for (char** e = env; e != nullptr && *e != nullptr; ++e)
    if (std::strncmp(*e, "PMIX_CXX_SERVER_URI=", 20) == 0) uri = *e + 20;
  PMIX_ARGV_FREE(env);
  return uri;
}

child launch(const std::string& nspace, pmix_rank_t r, const std::vector<std::string>& argv,
             const std::string& capture_dir) {
  pmix_proc_t p;
  PMIX_LOAD_PROCID(&p, nspace.c_str(), r);
  char** env = nullptr;
  PMIx_server_setup_fork(&p, &env);
  std::vector<std::string> extra;
  for (char** e = env; e != nullptr && *e != nullptr; ++e) extra.emplace_back(*e);
  PMIX_ARGV_FREE(env);
  return child(argv, environment_with(extra), capture_dir);
}

namespace {
void op_done(pmix_status_t st, void* cbdata) {
  static_cast<std::atomic<int>*>(cbdata)->store(st == PMIX_SUCCESS ? 1 : 2);
}
}  // namespace

pmix_status_t deregister_job(const std::string& nspace) {
  std::atomic<int> done{0};
  PMIx_server_deregister_nspace(nspace.c_str(), op_done, &done);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (done == 0 && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  return done == 1 ? PMIX_SUCCESS : done == 2 ? PMIX_ERROR : PMIX_ERR_TIMEOUT;
}

std::string remote_rank_data(const std::string& nspace, pmix_rank_t rank,
                             const std::vector<std::pair<std::string, std::string>>& values) {
  wire::RankData data;
  protocol::to_wire(proc_id{nspace, rank}, data.mutable_proc());
  for (const auto& [k, v] : values) {
    auto* item = data.add_data();
    item->set_scope(PMIX_GLOBAL);
    protocol::to_wire(info{k, value::string(v), 0}, item->mutable_info());
  }
  return data.SerializeAsString();
}

std::string remote_modex(const std::string& nspace, pmix_rank_t rank,
                         const std::vector<std::pair<std::string, std::string>>& values) {
  std::string out;
  protocol::append_length_delimited(out, 1, remote_rank_data(nspace, rank, values));
  return out;
}

}  // namespace pmix::test
