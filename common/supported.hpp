// The directives (attributes) each PMIx function of this library acts on, in
// one place. The calls that check their directives (common/directives.hpp)
// pass these lists, and PMIx_Query_info of PMIX_QUERY_ATTRIBUTE_SUPPORT
// answers from the same tables (api/attribute_support.cpp,
// docs/tools.md), so what the library says it supports is what it accepts.
//
// A function that hands its directives to the host (publish, spawn, ...)
// lists only what the library itself does with them: the host says what it
// supports with PMIx_Register_attributes (PMIX_HOST_ATTRIBUTES).
//
// Lists read by code that cannot include this header list the same keys by
// hand, and say so: the fence and connect checks in actors/server_actor.cpp,
// the tool's directives in api/tool_api.cpp (tests/api/attribute_support_test
// compares that file with tool_init below), the cleanup, credential and
// heartbeat directives the peer actor serves (actors/epilog.cpp,
// actors/peer_requests.cpp).
#pragma once

#include <pmix_common.h>

#include <cstddef>
#include <string_view>

namespace pmix::supported {

using key = std::string_view;

// ---- client functions (pmix.h) ---------------------------------------------

inline constexpr key finalize[] = {PMIX_EMBED_BARRIER};
// PMIX_TIMEOUT: the server answers PMIX_ERR_TIMEOUT once it passes
// (actors/peer_actor.cpp for gets, lookups and queries; the collective's
// tracker in actors/server_actor.cpp for fences, connects and groups).
inline constexpr key get[] = {PMIX_OPTIONAL, PMIX_TIMEOUT, PMIX_GROUP_CONTEXT_ID};
// actors/server_actor.cpp checks the same list.
inline constexpr key fence[] = {PMIX_COLLECT_DATA, PMIX_TIMEOUT};
// Keys the library answers itself, before init too.
inline constexpr key query[] = {PMIX_QUERY_ATTRIBUTE_SUPPORT, PMIX_QUERY_STABLE_ABI_VERSION,
                                PMIX_QUERY_PROVISIONAL_ABI_VERSION};
inline constexpr key register_event_handler[] = {PMIX_EVENT_HDLR_NAME,
                                                 PMIX_EVENT_RETURN_OBJECT,
                                                 PMIX_EVENT_HDLR_BEFORE,
                                                 PMIX_EVENT_HDLR_AFTER,
                                                 PMIX_EVENT_HDLR_FIRST,
                                                 PMIX_EVENT_HDLR_LAST,
                                                 PMIX_EVENT_HDLR_FIRST_IN_CATEGORY,
                                                 PMIX_EVENT_HDLR_LAST_IN_CATEGORY,
                                                 PMIX_EVENT_HDLR_PREPEND,
                                                 PMIX_EVENT_HDLR_APPEND};
// common/event.cpp reads them.
inline constexpr key notify_event[] = {PMIX_EVENT_CUSTOM_RANGE, PMIX_EVENT_NON_DEFAULT};
// PMIx_Log where the library logs itself (common/log_sink.cpp): its
// directives, and the channels it reaches.
inline constexpr key log_directives[] = {PMIX_LOG_SOURCE, PMIX_LOG_SYSLOG_PRI, PMIX_LOG_ONCE,
                                         PMIX_LOG_TIMESTAMP, PMIX_LOG_GENERATE_TIMESTAMP};
inline constexpr key log[] = {
    PMIX_LOG_SOURCE, PMIX_LOG_SYSLOG_PRI, PMIX_LOG_ONCE,   PMIX_LOG_TIMESTAMP,   PMIX_LOG_GENERATE_TIMESTAMP,
    PMIX_LOG_STDERR, PMIX_LOG_STDOUT,     PMIX_LOG_SYSLOG, PMIX_LOG_LOCAL_SYSLOG};
// Served by the server itself (actors/epilog.cpp); the rest goes to the host.
inline constexpr key job_control[] = {PMIX_REGISTER_CLEANUP,  PMIX_REGISTER_CLEANUP_DIR,
                                      PMIX_CLEANUP_RECURSIVE, PMIX_CLEANUP_EMPTY,
                                      PMIX_CLEANUP_IGNORE,    PMIX_CLEANUP_LEAVE_TOPDIR};
// The server watches heartbeats itself (actors/peer_requests.cpp).
inline constexpr key process_monitor[] = {PMIX_MONITOR_HEARTBEAT, PMIX_MONITOR_HEARTBEAT_TIME,
                                          PMIX_MONITOR_HEARTBEAT_DROPS, PMIX_MONITOR_CANCEL};
// The server's own credentials (actors/peer_requests.cpp).
inline constexpr key get_credential[] = {PMIX_CRED_TYPE, PMIX_TIMEOUT};
inline constexpr key validate_credential[] = {PMIX_CRED_TYPE};
// What the server honours in a group it completes itself
// (actors/server_actor.cpp); a group spanning nodes goes to the host.
inline constexpr key group[] = {PMIX_GROUP_ASSIGN_CONTEXT_ID, PMIX_GROUP_LOCAL_ONLY, PMIX_TIMEOUT,
                                PMIX_GROUP_INFO,           PMIX_GROUP_OPTIONAL,   PMIX_GROUP_NOTIFY_TERMINATION,
                                PMIX_GROUP_ENDPT_DATA};
// api/cpuset_api.cpp.
inline constexpr key compute_distances[] = {PMIX_DEVICE_TYPE, PMIX_DEVICE_ID};

// ---- server functions (pmix_server.h) --------------------------------------

// Every directive of PMIx_server_init (spec 000, 20.2.247.4) that
// server/server_directives.cpp reads; anything else is ignored unless required.
inline constexpr key server_init[] = {
    PMIX_SERVER_NSPACE,
    PMIX_SERVER_RANK,
    PMIX_SERVER_TMPDIR,
    PMIX_SYSTEM_TMPDIR,
    PMIX_SERVER_TOOL_SUPPORT,
    PMIX_SERVER_SYSTEM_SUPPORT,
    PMIX_SERVER_SESSION_SUPPORT,
    PMIX_SERVER_GATEWAY,
    PMIX_SERVER_SCHEDULER,
    PMIX_SERVER_SYS_CONTROLLER,
    PMIX_SERVER_REMOTE_CONNECTIONS,
    PMIX_SERVER_ALLOW_FOREIGN_TOOLS,
    PMIX_ALLOW_CLIENT_CLONES,
    PMIX_LAUNCHER_RENDEZVOUS_FILE,
    PMIX_TCP_REPORT_URI,
    PMIX_TCP_IF_INCLUDE,
    PMIX_TCP_IF_EXCLUDE,
    PMIX_TCP_IPV4_PORT,
    PMIX_TCP_IPV6_PORT,
    PMIX_TCP_DISABLE_IPV4,
    PMIX_TCP_DISABLE_IPV6,
    PMIX_TOPOLOGY2,
    PMIX_SERVER_SHARE_TOPOLOGY,
    PMIX_HOMOGENEOUS_SYSTEM,
    PMIX_SERVER_ENABLE_MONITORING,
    PMIX_EXTERNAL_PROGRESS,
    PMIX_SINGLETON,
    PMIX_IOF_LOCAL_OUTPUT,
    PMIX_BIND_PROGRESS_THREAD,
    PMIX_BIND_REQUIRED,
    PMIX_EXTERNAL_AUX_EVENT_BASE,
    PMIX_HOSTNAME,
};
inline constexpr key setup_application[] = {PMIX_SETUP_APP_ENVARS, PMIX_SETUP_APP_NONENVARS,
                                            PMIX_SETUP_APP_ALL};
inline constexpr key iof_deliver[] = {PMIX_IOF_COMPLETE};
// The node whose inventory to give (server/server_api.cpp).
inline constexpr key collect_inventory[] = {PMIX_HOSTNAME};

// ---- tool functions (pmix_tool.h) ------------------------------------------

// What api/tool_api.cpp reads (by hand: tests/api/attribute_support_test
// compares the two).
inline constexpr key tool_init[] = {PMIX_TOOL_NSPACE,
                                    PMIX_TOOL_RANK,
                                    PMIX_TOOL_DO_NOT_CONNECT,
                                    PMIX_SERVER_URI,
                                    PMIX_TCP_URI,
                                    PMIX_SERVER_TMPDIR,
                                    PMIX_SYSTEM_TMPDIR,
                                    PMIX_SERVER_PIDINFO,
                                    PMIX_SERVER_NSPACE,
                                    PMIX_TOOL_ATTACHMENT_FILE,
                                    PMIX_CONNECT_TO_SYSTEM,
                                    PMIX_CONNECT_SYSTEM_FIRST,
                                    PMIX_CONNECT_MAX_RETRIES,
                                    PMIX_CONNECT_RETRY_DELAY};
// PMIx_tool_attach_to_server reads the same directives (the server to find)
// and PMIX_PRIMARY_SERVER; PMIx_tool_set_server its waiting.
inline constexpr key tool_attach_to_server[] = {PMIX_SERVER_URI,
                                                PMIX_TCP_URI,
                                                PMIX_SERVER_TMPDIR,
                                                PMIX_SYSTEM_TMPDIR,
                                                PMIX_SERVER_PIDINFO,
                                                PMIX_SERVER_NSPACE,
                                                PMIX_TOOL_ATTACHMENT_FILE,
                                                PMIX_CONNECT_TO_SYSTEM,
                                                PMIX_CONNECT_SYSTEM_FIRST,
                                                PMIX_CONNECT_MAX_RETRIES,
                                                PMIX_CONNECT_RETRY_DELAY,
                                                PMIX_PRIMARY_SERVER};
inline constexpr key tool_set_server[] = {PMIX_WAIT_FOR_CONNECTION, PMIX_TIMEOUT};

// ---- the tables -------------------------------------------------------------

// One function and the keys it acts on (none: the function takes no
// directives, or acts on none itself).
struct function {
  std::string_view name;
  const key* keys = nullptr;
  std::size_t nkeys = 0;

  constexpr function(std::string_view n) : name(n) {}
  template <std::size_t N>
  constexpr function(std::string_view n, const key (&k)[N]) : name(n), keys(k), nkeys(N) {}
  constexpr const key* begin() const { return keys; }
  constexpr const key* end() const { return keys + nkeys; }
};

// The functions of each level, as PMIX_CLIENT_FUNCTIONS, PMIX_SERVER_FUNCTIONS
// and PMIX_TOOL_FUNCTIONS list them.
inline constexpr function client_functions[] = {
    {"PMIx_Init"},
    {"PMIx_Finalize", finalize},
    {"PMIx_Initialized"},
    {"PMIx_Abort"},
    {"PMIx_Put"},
    {"PMIx_Commit"},
    {"PMIx_Fence", fence},
    {"PMIx_Fence_nb", fence},
    {"PMIx_Get", get},
    {"PMIx_Get_nb", get},
    {"PMIx_Publish"},
    {"PMIx_Publish_nb"},
    {"PMIx_Lookup"},
    {"PMIx_Lookup_nb"},
    {"PMIx_Unpublish"},
    {"PMIx_Unpublish_nb"},
    {"PMIx_Spawn"},
    {"PMIx_Spawn_nb"},
    {"PMIx_Connect"},
    {"PMIx_Connect_nb"},
    {"PMIx_Disconnect"},
    {"PMIx_Disconnect_nb"},
    {"PMIx_Resolve_peers"},
    {"PMIx_Resolve_nodes"},
    {"PMIx_Query_info", query},
    {"PMIx_Query_info_nb", query},
    {"PMIx_Log", log},
    {"PMIx_Log_nb", log},
    {"PMIx_Job_control", job_control},
    {"PMIx_Job_control_nb", job_control},
    {"PMIx_Allocation_request"},
    {"PMIx_Allocation_request_nb"},
    {"PMIx_Process_monitor", process_monitor},
    {"PMIx_Process_monitor_nb", process_monitor},
    {"PMIx_Get_credential", get_credential},
    {"PMIx_Get_credential_nb", get_credential},
    {"PMIx_Validate_credential", validate_credential},
    {"PMIx_Validate_credential_nb", validate_credential},
    {"PMIx_Register_event_handler", register_event_handler},
    {"PMIx_Deregister_event_handler"},
    {"PMIx_Notify_event", notify_event},
    {"PMIx_Fabric_register"},
    {"PMIx_Fabric_register_nb"},
    {"PMIx_Fabric_update"},
    {"PMIx_Fabric_update_nb"},
    {"PMIx_Fabric_deregister"},
    {"PMIx_Fabric_deregister_nb"},
    {"PMIx_Compute_distances", compute_distances},
    {"PMIx_Compute_distances_nb", compute_distances},
    {"PMIx_Load_topology"},
    {"PMIx_Get_cpuset"},
    {"PMIx_Get_relative_locality"},
    {"PMIx_Group_construct", group},
    {"PMIx_Group_construct_nb", group},
    {"PMIx_Group_destruct", group},
    {"PMIx_Group_destruct_nb", group},
    {"PMIx_Group_invite", group},
    {"PMIx_Group_invite_nb", group},
    {"PMIx_Group_join"},
    {"PMIx_Group_join_nb"},
    {"PMIx_Group_leave"},
    {"PMIx_Group_leave_nb"},
};

inline constexpr function server_functions[] = {
    {"PMIx_server_init", server_init},
    {"PMIx_server_finalize"},
    {"PMIx_generate_regex"},
    {"PMIx_generate_ppn"},
    {"PMIx_server_register_nspace"},
    {"PMIx_server_deregister_nspace"},
    {"PMIx_server_register_client"},
    {"PMIx_server_deregister_client"},
    {"PMIx_server_setup_fork"},
    {"PMIx_server_dmodex_request"},
    {"PMIx_server_setup_application", setup_application},
    {"PMIx_server_setup_local_support"},
    {"PMIx_server_IOF_deliver", iof_deliver},
    {"PMIx_server_collect_job_info"},
    {"PMIx_server_generate_locality_string"},
    {"PMIx_server_generate_cpuset_string"},
    {"PMIx_Register_attributes"},
    {"PMIx_server_collect_inventory", collect_inventory},
    {"PMIx_server_deliver_inventory"},
    {"PMIx_server_define_process_set"},
    {"PMIx_server_delete_process_set"},
    {"PMIx_server_register_resources"},
    {"PMIx_server_deregister_resources"},
};

inline constexpr function tool_functions[] = {
    {"PMIx_tool_init", tool_init},
    {"PMIx_tool_finalize"},
    {"PMIx_tool_attach_to_server", tool_attach_to_server},
    {"PMIx_tool_connect_to_server", tool_attach_to_server},
    {"PMIx_tool_disconnect"},
    {"PMIx_tool_get_servers"},
    {"PMIx_tool_set_server", tool_set_server},
    {"PMIx_IOF_pull"},
    {"PMIx_IOF_deregister"},
    {"PMIx_IOF_push"},
};

}  // namespace pmix::supported
