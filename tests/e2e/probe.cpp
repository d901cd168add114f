#include "tests/e2e/probe.hpp"

#include <pmix.h>
#include <pmix_server.h>
#include <pmix_tool.h>

#include <atomic>
#include <cstdio>

namespace pmix::test {
namespace {

std::atomic<int> refused_handler_calls{0};

// The handler of the refused PMIx_Register_event_handler: were it
// registered after all, a later kRefusedHandlerCode event would run it, and
// it says so on stdout (the clients' output) and in its count (a server's).
void never_called(size_t, pmix_status_t, const pmix_proc_t*, pmix_info_t[], size_t, pmix_info_t*,
                  size_t, pmix_event_notification_cbfunc_fn_t cbfunc, void* cbdata) {
  ++refused_handler_calls;
  std::fputs("refused-handler ran\n", stdout);
  std::fflush(stdout);
  cbfunc(PMIX_SUCCESS, nullptr, 0, nullptr, nullptr, cbdata);
}

void no_output(size_t, pmix_iof_channel_t, pmix_proc_t*, pmix_byte_object_t*, pmix_info_t[], size_t) {}

}  // namespace

int refused_handler_runs() { return refused_handler_calls.load(); }

std::vector<std::pair<std::string, pmix_status_t>> call_every_blocking_form(const std::string& nspace) {
  std::vector<std::pair<std::string, pmix_status_t>> out;
  pmix_proc_t p;
  PMIX_LOAD_PROCID(&p, nspace.c_str(), 0);
  pmix_proc_t probe_rank;
  PMIX_LOAD_PROCID(&probe_rank, "probe.ns", 0);
  pmix_data_buffer_t buf;
  PMIX_DATA_BUFFER_CONSTRUCT(&buf);
  out.emplace_back("PMIx_server_init", PMIx_server_init(nullptr, nullptr, 0));
  out.emplace_back("PMIx_server_register_nspace",
                   PMIx_server_register_nspace("probe.ns", 1, nullptr, 0, nullptr, nullptr));
  out.emplace_back("PMIx_server_register_client",
                   PMIx_server_register_client(&probe_rank, 0, 0, nullptr, nullptr, nullptr));
  out.emplace_back("PMIx_server_collect_job_info", PMIx_server_collect_job_info(&p, 1, &buf));
  out.emplace_back("PMIx_server_finalize", PMIx_server_finalize());
  out.emplace_back("PMIx_Init", PMIx_Init(nullptr, nullptr, 0));
  out.emplace_back("PMIx_Fence", PMIx_Fence(nullptr, 0, nullptr, 0));
  out.emplace_back("PMIx_Fence_nb(NULL cbfunc)", PMIx_Fence_nb(nullptr, 0, nullptr, 0, nullptr, nullptr));
  pmix_value_t* v = nullptr;
  out.emplace_back("PMIx_Get", PMIx_Get(&p, PMIX_JOB_SIZE, nullptr, 0, &v));
  out.emplace_back("PMIx_Abort", PMIx_Abort(1, "probe", nullptr, 0));
  pmix_info_t d;
  PMIX_INFO_LOAD(&d, PMIX_JOB_CTRL_KILL, "now", PMIX_STRING);
  pmix_info_t* results = nullptr;
  size_t nresults = 0;
  out.emplace_back("PMIx_Job_control", PMIx_Job_control(nullptr, 0, &d, 1, &results, &nresults));
  PMIX_INFO_DESTRUCT(&d);
  pmix_query_t q;
  PMIX_QUERY_CONSTRUCT(&q);
  char key[] = PMIX_QUERY_NAMESPACES;
  char* keys[] = {key, nullptr};
  q.keys = keys;
  results = nullptr;
  nresults = 0;
  out.emplace_back("PMIx_Query_info", PMIx_Query_info(&q, 1, &results, &nresults));
  pmix_info_t pub;
  PMIX_INFO_LOAD(&pub, "probe.key", "v", PMIX_STRING);
  out.emplace_back("PMIx_Publish", PMIx_Publish(&pub, 1));
  pmix_pdata_t pd;
  PMIX_PDATA_CONSTRUCT(&pd);
  PMIX_LOAD_KEY(pd.key, "probe.key");
  out.emplace_back("PMIx_Lookup", PMIx_Lookup(&pd, 1, nullptr, 0));
  PMIX_PDATA_DESTRUCT(&pd);
  char pkey[] = "probe.key";
  char* pkeys[] = {pkey, nullptr};
  out.emplace_back("PMIx_Unpublish", PMIx_Unpublish(pkeys, nullptr, 0));
  pmix_app_t app;
  PMIX_APP_CONSTRUCT(&app);
  char cmd[] = "/bin/true";
  app.cmd = cmd;
  app.maxprocs = 1;
  pmix_nspace_t spawned;
  out.emplace_back("PMIx_Spawn", PMIx_Spawn(nullptr, 0, &app, 1, spawned));
  pmix_proc_t all;
  PMIX_LOAD_PROCID(&all, nspace.c_str(), PMIX_RANK_WILDCARD);
  out.emplace_back("PMIx_Connect", PMIx_Connect(&all, 1, nullptr, 0));
  out.emplace_back("PMIx_Disconnect", PMIx_Disconnect(&all, 1, nullptr, 0));
  out.emplace_back("PMIx_Log", PMIx_Log(&pub, 1, nullptr, 0));
  PMIX_INFO_DESTRUCT(&pub);
  out.emplace_back("PMIx_Finalize", PMIx_Finalize(nullptr, 0));
  pmix_status_t code = kRefusedHandlerCode;
  out.emplace_back("PMIx_Register_event_handler(NULL cbfunc)",
                   PMIx_Register_event_handler(&code, 1, nullptr, 0, never_called, nullptr, nullptr));
  out.emplace_back("PMIx_Deregister_event_handler(NULL cbfunc)",
                   PMIx_Deregister_event_handler(1, nullptr, nullptr));
  out.emplace_back("PMIx_Notify_event(NULL cbfunc)",
                   PMIx_Notify_event(kRefusedNotifyCode, nullptr, PMIX_RANGE_PROC_LOCAL, nullptr, 0, nullptr,
                                     nullptr));
  out.emplace_back("PMIx_tool_init", PMIx_tool_init(nullptr, nullptr, 0));
  out.emplace_back("PMIx_tool_finalize", PMIx_tool_finalize());
  pmix_info_t where;
  PMIX_INFO_LOAD(&where, PMIX_SERVER_NSPACE, nspace.c_str(), PMIX_STRING);
  out.emplace_back("PMIx_tool_attach_to_server", PMIx_tool_attach_to_server(nullptr, nullptr, &where, 1));
  out.emplace_back("PMIx_tool_connect_to_server", PMIx_tool_connect_to_server(nullptr, &where, 1));
  PMIX_INFO_DESTRUCT(&where);
  pmix_proc_t server;
  PMIX_LOAD_PROCID(&server, nspace.c_str(), 0);
  out.emplace_back("PMIx_tool_disconnect", PMIx_tool_disconnect(&server));
  pmix_info_t wait[2];
  bool yes = true;
  int seconds = 5;
  PMIX_INFO_LOAD(&wait[0], PMIX_WAIT_FOR_CONNECTION, &yes, PMIX_BOOL);
  PMIX_INFO_LOAD(&wait[1], PMIX_TIMEOUT, &seconds, PMIX_INT);
  out.emplace_back("PMIx_tool_set_server(PMIX_WAIT_FOR_CONNECTION)", PMIx_tool_set_server(&server, wait, 2));
  PMIX_INFO_DESTRUCT(&wait[0]);
  PMIX_INFO_DESTRUCT(&wait[1]);
  pmix_info_t* gresults = nullptr;
  size_t ngresults = 0;
  out.emplace_back("PMIx_Group_construct",
                   PMIx_Group_construct("probe.grp", &p, 1, nullptr, 0, &gresults, &ngresults));
  out.emplace_back("PMIx_Group_invite", PMIx_Group_invite("probe.grp", &p, 1, nullptr, 0, &gresults, &ngresults));
  out.emplace_back("PMIx_Group_join",
                   PMIx_Group_join("probe.grp", &p, PMIX_GROUP_ACCEPT, nullptr, 0, &gresults, &ngresults));
  out.emplace_back("PMIx_Group_leave", PMIx_Group_leave("probe.grp", nullptr, 0));
  out.emplace_back("PMIx_Group_destruct", PMIx_Group_destruct("probe.grp", nullptr, 0));
  out.emplace_back("PMIx_server_define_process_set", PMIx_server_define_process_set(&p, 1, "probe.set"));
  char set_name[] = "probe.set";
  out.emplace_back("PMIx_server_delete_process_set", PMIx_server_delete_process_set(set_name));
  pmix_info_t resource;
  PMIX_INFO_LOAD(&resource, PMIX_HOSTNAME, "probe.node", PMIX_STRING);
  out.emplace_back("PMIx_server_register_resources(NULL cbfunc)",
                   PMIx_server_register_resources(&resource, 1, nullptr, nullptr));
  out.emplace_back("PMIx_server_deregister_resources(NULL cbfunc)",
                   PMIx_server_deregister_resources(&resource, 1, nullptr, nullptr));
  out.emplace_back("PMIx_server_deliver_inventory(NULL cbfunc)",
                   PMIx_server_deliver_inventory(&resource, 1, nullptr, 0, nullptr, nullptr));
  out.emplace_back("PMIx_Allocation_request",
                   PMIx_Allocation_request(PMIX_ALLOC_NEW, &resource, 1, &gresults, &ngresults));
  out.emplace_back("PMIx_Process_monitor",
                   PMIx_Process_monitor(&resource, PMIX_SUCCESS, nullptr, 0, &gresults, &ngresults));
  pmix_byte_object_t cred{nullptr, 0};
  out.emplace_back("PMIx_Get_credential", PMIx_Get_credential(nullptr, 0, &cred));
  pmix_byte_object_t some{const_cast<char*>("x"), 1};
  out.emplace_back("PMIx_Validate_credential",
                   PMIx_Validate_credential(&some, nullptr, 0, &gresults, &ngresults));
  // OpenPMIx 6.0's and master's blocking forms (issue 37).
  pmix_info_t pause;
  bool pausing = true;
  PMIX_INFO_LOAD(&pause, "pmix.ssn.pause", &pausing, PMIX_BOOL);
  out.emplace_back("PMIx_Session_control(NULL cbfunc)", PMIx_Session_control(7, &pause, 1, nullptr, nullptr));
  PMIX_INFO_DESTRUCT(&pause);
  char block[] = "probe.block";
  pmix_resource_unit_t unit = {PMIX_DEVTYPE_GPU, 1};
  out.emplace_back("PMIx_Resource_block", PMIx_Resource_block(PMIX_RESOURCE_BLOCK_DEFINE, block, &unit, 1, nullptr, 0));
  out.emplace_back("PMIx_server_IOF_flow_control(NULL cbfunc)",
                   PMIx_server_IOF_flow_control(nullptr, PMIX_FWD_STDIN_CHANNEL, true, nullptr, 0, nullptr, nullptr));
  out.emplace_back("PMIx_server_setup_local_support(NULL cbfunc)",
                   PMIx_server_setup_local_support(nspace.c_str(), &resource, 1, nullptr, nullptr));
  PMIX_INFO_DESTRUCT(&resource);
  // Output forwarding and the fabric (the host's iof_pull, push_stdin and
  // fabric up-calls).
  out.emplace_back("PMIx_IOF_pull(NULL regcbfunc)",
                   PMIx_IOF_pull(&p, 1, nullptr, 0, PMIX_FWD_STDOUT_CHANNEL, no_output, nullptr, nullptr));
  pmix_byte_object_t input{const_cast<char*>("probe\n"), 6};
  out.emplace_back("PMIx_IOF_push(NULL cbfunc)", PMIx_IOF_push(&p, 1, &input, nullptr, 0, nullptr, nullptr));
  out.emplace_back("PMIx_IOF_deregister(NULL cbfunc)", PMIx_IOF_deregister(1, nullptr, 0, nullptr, nullptr));
  pmix_fabric_t fabric;
  PMIX_FABRIC_CONSTRUCT(&fabric);
  char fabric_name[] = "probe.fabric";
  fabric.name = fabric_name;
  out.emplace_back("PMIx_Fabric_register", PMIx_Fabric_register(&fabric, nullptr, 0));
  out.emplace_back("PMIx_Fabric_update", PMIx_Fabric_update(&fabric));
  // The blocking forms with no status: they must do nothing (checked by the
  // caller: the namespace and the rank are still there).
  PMIx_server_deregister_client(&p, nullptr, nullptr);
  PMIx_server_deregister_nspace(nspace.c_str(), nullptr, nullptr);
  PMIX_DATA_BUFFER_DESTRUCT(&buf);
  return out;
}

}  // namespace pmix::test
