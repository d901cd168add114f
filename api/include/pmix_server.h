/*
 * pmix_server.h - the server API used by a host (resource manager daemon,
 * launcher) to serve its local PMIx clients.
 *
 * The host passes a pmix_server_module_t of up-calls to PMIx_server_init. A
 * NULL slot means the host does not support that operation (clients then get
 * PMIX_ERR_NOT_SUPPORTED). Every up-call must return quickly and finish the
 * work asynchronously, reporting through the given callback. Data passed to
 * an up-call belongs to the library and must not be freed by the host; data
 * the host passes to a callback stays the host's.
 *
 * Binary compatible with OpenPMIx 4.2.2; the module has the 4.2.2 layout
 * (28 slots, 224 bytes). Only the calls implemented so far are declared.
 */
#ifndef PMIx_SERVER_API_H
#define PMIx_SERVER_API_H

#include <pmix_common.h>

#if defined(c_plusplus) || defined(__cplusplus)
extern "C" {
#endif

/* ===================================================================== */
/* Up-calls into the host                                                 */
/* ===================================================================== */

/* A client connected; it stays blocked until cbfunc is called. */
typedef pmix_status_t (*pmix_server_client_connected_fn_t)(const pmix_proc_t *proc,
                                                           void *server_object,
                                                           pmix_op_cbfunc_t cbfunc,
                                                           void *cbdata);

/* As client_connected, with extra information; used when set. */
typedef pmix_status_t (*pmix_server_client_connected2_fn_t)(const pmix_proc_t *proc,
                                                            void *server_object,
                                                            pmix_info_t info[], size_t ninfo,
                                                            pmix_op_cbfunc_t cbfunc,
                                                            void *cbdata);

/* A client called PMIx_Finalize; it stays blocked until cbfunc is called. */
typedef pmix_status_t (*pmix_server_client_finalized_fn_t)(const pmix_proc_t *proc,
                                                           void *server_object,
                                                           pmix_op_cbfunc_t cbfunc,
                                                           void *cbdata);

/* A client called PMIx_Abort for procs (NULL: its whole namespace). */
typedef pmix_status_t (*pmix_server_abort_fn_t)(const pmix_proc_t *proc, void *server_object,
                                                int status, const char msg[],
                                                pmix_proc_t procs[], size_t nprocs,
                                                pmix_op_cbfunc_t cbfunc, void *cbdata);

/* All local participants entered a fence over procs; data (ndata bytes) is
 * this node's contribution. The host runs the fence across nodes and returns
 * the combined data of all nodes through cbfunc. data is the library's, and
 * stays valid until cbfunc is called, unless PMIx_server_init's info says
 * PMIX_CXX_HOST_FREES_FENCE_DATA (bool) true: then data is a malloc'd copy the
 * host must free(), as OpenPMIx hands it over. Without the key, a fence_nb
 * living in Open MPI's mca_pmix_*.so or in libprrte (hosts that free it) gets
 * a copy of its own; false overrides that guess. */
typedef pmix_status_t (*pmix_server_fencenb_fn_t)(const pmix_proc_t procs[], size_t nprocs,
                                                  const pmix_info_t info[], size_t ninfo,
                                                  char *data, size_t ndata,
                                                  pmix_modex_cbfunc_t cbfunc, void *cbdata);

/* Asks the host for the data *proc committed, held by the server of the
 * node where *proc runs (direct modex). */
typedef pmix_status_t (*pmix_server_dmodex_req_fn_t)(const pmix_proc_t *proc,
                                                     const pmix_info_t info[], size_t ninfo,
                                                     pmix_modex_cbfunc_t cbfunc, void *cbdata);

/* A client publishes the given data. */
typedef pmix_status_t (*pmix_server_publish_fn_t)(const pmix_proc_t *proc,
                                                  const pmix_info_t info[], size_t ninfo,
                                                  pmix_op_cbfunc_t cbfunc, void *cbdata);

/* A client looks up published keys (NULL-terminated). */
typedef pmix_status_t (*pmix_server_lookup_fn_t)(const pmix_proc_t *proc, char **keys,
                                                 const pmix_info_t info[], size_t ninfo,
                                                 pmix_lookup_cbfunc_t cbfunc, void *cbdata);

/* A client deletes published keys (NULL-terminated). */
typedef pmix_status_t (*pmix_server_unpublish_fn_t)(const pmix_proc_t *proc, char **keys,
                                                    const pmix_info_t info[], size_t ninfo,
                                                    pmix_op_cbfunc_t cbfunc, void *cbdata);

/* A client asks to start the given applications as a new job. */
typedef pmix_status_t (*pmix_server_spawn_fn_t)(const pmix_proc_t *proc,
                                                const pmix_info_t job_info[], size_t ninfo,
                                                const pmix_app_t apps[], size_t napps,
                                                pmix_spawn_cbfunc_t cbfunc, void *cbdata);

/* Local participants called PMIx_Connect over procs. */
typedef pmix_status_t (*pmix_server_connect_fn_t)(const pmix_proc_t procs[], size_t nprocs,
                                                  const pmix_info_t info[], size_t ninfo,
                                                  pmix_op_cbfunc_t cbfunc, void *cbdata);

/* Local participants called PMIx_Disconnect over procs. */
typedef pmix_status_t (*pmix_server_disconnect_fn_t)(const pmix_proc_t procs[], size_t nprocs,
                                                     const pmix_info_t info[], size_t ninfo,
                                                     pmix_op_cbfunc_t cbfunc, void *cbdata);

/* Clients want events with these codes from the host. */
typedef pmix_status_t (*pmix_server_register_events_fn_t)(pmix_status_t *codes, size_t ncodes,
                                                          const pmix_info_t info[],
                                                          size_t ninfo,
                                                          pmix_op_cbfunc_t cbfunc,
                                                          void *cbdata);

/* Clients no longer want events with these codes. */
typedef pmix_status_t (*pmix_server_deregister_events_fn_t)(pmix_status_t *codes,
                                                            size_t ncodes,
                                                            pmix_op_cbfunc_t cbfunc,
                                                            void *cbdata);

/* Asks the host to deliver an event to the given range. */
typedef pmix_status_t (*pmix_server_notify_event_fn_t)(pmix_status_t code,
                                                       const pmix_proc_t *source,
                                                       pmix_data_range_t range,
                                                       pmix_info_t info[], size_t ninfo,
                                                       pmix_op_cbfunc_t cbfunc, void *cbdata);

/* Hands an accepted connection (socket incoming_sd) to the library. */
typedef void (*pmix_connection_cbfunc_t)(int incoming_sd, void *cbdata);

/* The host listens on listening_sd itself and calls cbfunc for each
 * connection; return PMIX_ERR_NOT_SUPPORTED to let the library listen. */
typedef pmix_status_t (*pmix_server_listener_fn_t)(int listening_sd,
                                                   pmix_connection_cbfunc_t cbfunc,
                                                   void *cbdata);

/* A process queries the host. */
typedef pmix_status_t (*pmix_server_query_fn_t)(pmix_proc_t *proct, pmix_query_t *queries,
                                                size_t nqueries, pmix_info_cbfunc_t cbfunc,
                                                void *cbdata);

/* Gives a connecting tool its identity (*proc), or refuses it. */
typedef void (*pmix_tool_connection_cbfunc_t)(pmix_status_t status, pmix_proc_t *proc,
                                              void *cbdata);

/* A tool asks to connect; the host assigns its identity through cbfunc. */
typedef void (*pmix_server_tool_connection_fn_t)(pmix_info_t *info, size_t ninfo,
                                                 pmix_tool_connection_cbfunc_t cbfunc,
                                                 void *cbdata);

/* A process asks the host to log data. */
typedef void (*pmix_server_log_fn_t)(const pmix_proc_t *client, const pmix_info_t data[],
                                     size_t ndata, const pmix_info_t directives[],
                                     size_t ndirs, pmix_op_cbfunc_t cbfunc, void *cbdata);

/* A process asks for a change of allocation. */
typedef pmix_status_t (*pmix_server_alloc_fn_t)(const pmix_proc_t *client,
                                                pmix_alloc_directive_t directive,
                                                const pmix_info_t data[], size_t ndata,
                                                pmix_info_cbfunc_t cbfunc, void *cbdata);

/* A process asks the host to act on targets (kill, signal, checkpoint...). */
typedef pmix_status_t (*pmix_server_job_control_fn_t)(const pmix_proc_t *requestor,
                                                      const pmix_proc_t targets[],
                                                      size_t ntargets,
                                                      const pmix_info_t directives[],
                                                      size_t ndirs, pmix_info_cbfunc_t cbfunc,
                                                      void *cbdata);

/* A process asks the host to monitor it, raising error when triggered. */
typedef pmix_status_t (*pmix_server_monitor_fn_t)(const pmix_proc_t *requestor,
                                                  const pmix_info_t *monitor,
                                                  pmix_status_t error,
                                                  const pmix_info_t directives[], size_t ndirs,
                                                  pmix_info_cbfunc_t cbfunc, void *cbdata);

/* A process asks for a security credential. */
typedef pmix_status_t (*pmix_server_get_cred_fn_t)(const pmix_proc_t *proc,
                                                   const pmix_info_t directives[],
                                                   size_t ndirs,
                                                   pmix_credential_cbfunc_t cbfunc,
                                                   void *cbdata);

/* A process asks the host to validate credential *cred. */
typedef pmix_status_t (*pmix_server_validate_cred_fn_t)(const pmix_proc_t *proc,
                                                        const pmix_byte_object_t *cred,
                                                        const pmix_info_t directives[],
                                                        size_t ndirs,
                                                        pmix_validation_cbfunc_t cbfunc,
                                                        void *cbdata);

/* Asks the host to forward the given output channels of procs to this
 * server. */
typedef pmix_status_t (*pmix_server_iof_fn_t)(const pmix_proc_t procs[], size_t nprocs,
                                              const pmix_info_t directives[], size_t ndirs,
                                              pmix_iof_channel_t channels,
                                              pmix_op_cbfunc_t cbfunc, void *cbdata);

/* Asks the host to deliver stdin data *bo from *source to targets. */
typedef pmix_status_t (*pmix_server_stdin_fn_t)(const pmix_proc_t *source,
                                                const pmix_proc_t targets[], size_t ntargets,
                                                const pmix_info_t directives[], size_t ndirs,
                                                const pmix_byte_object_t *bo,
                                                pmix_op_cbfunc_t cbfunc, void *cbdata);

/* Local members construct or destruct group grp. */
typedef pmix_status_t (*pmix_server_grp_fn_t)(pmix_group_operation_t op, char grp[],
                                              const pmix_proc_t procs[], size_t nprocs,
                                              const pmix_info_t directives[], size_t ndirs,
                                              pmix_info_cbfunc_t cbfunc, void *cbdata);

/* A process asks for fabric information or an update of it. */
typedef pmix_status_t (*pmix_server_fabric_fn_t)(const pmix_proc_t *requestor,
                                                 pmix_fabric_operation_t op,
                                                 const pmix_info_t directives[], size_t ndirs,
                                                 pmix_info_cbfunc_t cbfunc, void *cbdata);

/* Up-calls of OpenPMIx 6.0 (slots 28 to 31 below). */
/* As tool_connected, answering through cbfunc; used when set. */
typedef pmix_status_t (*pmix_server_tool_connection2_fn_t)(pmix_info_t *info, size_t ninfo,
                                                           pmix_tool_connection_cbfunc_t cbfunc,
                                                           void *cbdata);
/* As log, with a status; used when set. */
typedef pmix_status_t (*pmix_server_log2_fn_t)(const pmix_proc_t *client, const pmix_info_t data[],
                                               size_t ndata, const pmix_info_t directives[], size_t ndirs,
                                               pmix_op_cbfunc_t cbfunc, void *cbdata);
/* A process's PMIx_Session_control: the host acts on session sessionID. */
typedef pmix_status_t (*pmix_server_session_control_fn_t)(const pmix_proc_t *requestor, uint32_t sessionID,
                                                          const pmix_info_t directives[], size_t ndirs,
                                                          pmix_info_cbfunc_t cbfunc, void *cbdata);
/* A process's PMIx_Resource_block: define, extend, reduce or delete a block. */
typedef pmix_status_t (*pmix_server_resource_block_fn_t)(const pmix_proc_t *requestor,
                                                         pmix_resource_block_directive_t directive,
                                                         const char *block, const pmix_resource_unit_t *units,
                                                         size_t nunits, const pmix_info_t *info, size_t ninfo,
                                                         pmix_op_cbfunc_t cbfunc, void *cbdata);

/* The host's up-calls, in the 4.2.2 order (the order is part of the ABI),
 * then the four OpenPMIx 6.0 appended (OpenPMIx 5.0 had session_control
 * alone at slot 28).
 *
 * A host built against OpenPMIx 4.2.2's header passes a struct of the first
 * 28 slots only, and nothing in it says how long it is; so the library reads
 * the first 28 slots, no more, unless PMIx_server_init's info says otherwise
 * with PMIX_CXX_SERVER_MODULE_SLOTS (uint32_t): 32 for this struct (and
 * OpenPMIx 6.0's), 29 for OpenPMIx 5.0's (session_control at slot 28), 28
 * for 4.2.2's. Without it, slots 28 to 31 are never read and their requests
 * are answered PMIX_ERR_NOT_SUPPORTED. */
#define PMIX_CXX_SERVER_MODULE_SLOTS "pmix.cxx.srv.slots"
/* bool: the host frees the data its fence_nb is given (see
 * pmix_server_fencenb_fn_t). */
#define PMIX_CXX_HOST_FREES_FENCE_DATA "pmix.cxx.srv.fencefree"
/* pointer to an int (PMIX_POINTER): the server starts no thread of its own;
 * the host's event loop runs the server's work. PMIx_server_init stores a
 * descriptor there, which the host watches for reading (epoll or poll,
 * level-triggered) and calls PMIx_Progress() whenever it is readable; a
 * blocking call from another host thread progresses the server itself
 * while it waits. The descriptor is the host's: it closes it once it
 * watches it no more, before or after PMIx_server_finalize. A failed
 * PMIx_server_init leaves the int as it was and no descriptor open. */
#define PMIX_CXX_PROGRESS_FD "pmix.cxx.srv.progfd"
typedef struct pmix_server_module_4_0_0_t {
    /* since v1 */
    pmix_server_client_connected_fn_t client_connected;
    pmix_server_client_finalized_fn_t client_finalized;
    pmix_server_abort_fn_t abort;
    pmix_server_fencenb_fn_t fence_nb;
    pmix_server_dmodex_req_fn_t direct_modex;
    pmix_server_publish_fn_t publish;
    pmix_server_lookup_fn_t lookup;
    pmix_server_unpublish_fn_t unpublish;
    pmix_server_spawn_fn_t spawn;
    pmix_server_connect_fn_t connect;
    pmix_server_disconnect_fn_t disconnect;
    pmix_server_register_events_fn_t register_events;
    pmix_server_deregister_events_fn_t deregister_events;
    pmix_server_listener_fn_t listener;
    /* since v2 */
    pmix_server_notify_event_fn_t notify_event;
    pmix_server_query_fn_t query;
    pmix_server_tool_connection_fn_t tool_connected;
    pmix_server_log_fn_t log;
    pmix_server_alloc_fn_t allocate;
    pmix_server_job_control_fn_t job_control;
    pmix_server_monitor_fn_t monitor;
    /* since v3 */
    pmix_server_get_cred_fn_t get_credential;
    pmix_server_validate_cred_fn_t validate_credential;
    pmix_server_iof_fn_t iof_pull;
    pmix_server_stdin_fn_t push_stdin;
    /* since v4 */
    pmix_server_grp_fn_t group;
    pmix_server_fabric_fn_t fabric;
    pmix_server_client_connected2_fn_t client_connected2;
    /* since OpenPMIx 6.0; read only with PMIX_CXX_SERVER_MODULE_SLOTS 32 */
    pmix_server_tool_connection2_fn_t tool_connected2;
    pmix_server_log2_fn_t log2;
    pmix_server_session_control_fn_t session_control;
    pmix_server_resource_block_fn_t resource_block;
} pmix_server_module_t;

/* ===================================================================== */
/* Calls made by the host                                                 */
/* ===================================================================== */

/* Starts the server library with the host's up-calls (*module is copied;
 * NULL means none) and opens the rendezvous point clients connect to. */
PMIX_EXPORT pmix_status_t PMIx_server_init(pmix_server_module_t *module, pmix_info_t info[],
                                           size_t ninfo);

/* Stops the server library, dropping every client connection. */
PMIX_EXPORT pmix_status_t PMIx_server_finalize(void);

/* Compresses a comma-separated list of node names into *regex (a new
 * string the caller frees) for PMIX_NODE_MAP. */
PMIX_EXPORT pmix_status_t PMIx_generate_regex(const char *input, char **regex);

/* Compresses a ';'-separated (per node) list of comma-separated ranks into
 * *ppn (a new string the caller frees) for PMIX_PROC_MAP. */
PMIX_EXPORT pmix_status_t PMIx_generate_ppn(const char *input, char **ppn);

/* A list (node names, or any delimited text) encoded in its shortest form
 * (OpenPMIx master): type "pmix" (the node map form above, where it gives
 * the list back exactly) or "raw" (the text). Release with
 * PMIx_Regex2_destruct; PMIx_parse_regex2 gives back the list (free it). */
PMIX_EXPORT pmix_status_t PMIx_generate_regex2(const char *input, pmix_info_t info[], size_t ninfo,
                                               pmix_regex2_t *regex);
PMIX_EXPORT pmix_status_t PMIx_parse_regex2(const pmix_regex2_t *regex, pmix_info_t info[], size_t ninfo,
                                            char **output);

/* Registers a namespace with nlocalprocs clients on this node and its job
 * information. cbfunc (may be NULL) reports completion. */
PMIX_EXPORT pmix_status_t PMIx_server_register_nspace(const pmix_nspace_t nspace,
                                                      int nlocalprocs, pmix_info_t info[],
                                                      size_t ninfo, pmix_op_cbfunc_t cbfunc,
                                                      void *cbdata);

/* Forgets a namespace and its local clients. */
PMIX_EXPORT void PMIx_server_deregister_nspace(const pmix_nspace_t nspace,
                                               pmix_op_cbfunc_t cbfunc, void *cbdata);

/* Registers a local client with the uid/gid it must connect with;
 * server_object is handed back in the client's up-calls. */
PMIX_EXPORT pmix_status_t PMIx_server_register_client(const pmix_proc_t *proc, uid_t uid,
                                                      gid_t gid, void *server_object,
                                                      pmix_op_cbfunc_t cbfunc, void *cbdata);

/* Forgets a local client. */
PMIX_EXPORT void PMIx_server_deregister_client(const pmix_proc_t *proc, pmix_op_cbfunc_t cbfunc,
                                               void *cbdata);

/* Adds to *env the variables a client process needs to connect to this
 * server (call before starting the client). */
PMIX_EXPORT pmix_status_t PMIx_server_setup_fork(const pmix_proc_t *proc, char ***env);

/* Packs into *dbuf the job-level information this server holds for the
 * namespaces of procs (duplicates and unknown namespaces are skipped): per
 * namespace, its name (PMIX_STRING) then a PMIX_BYTE_OBJECT holding a packed
 * size_t count and that many pmix_info_t -- what PMIx_server_register_nspace
 * takes. Blocking. PMIX_ERR_NOT_FOUND when no namespace is known,
 * PMIX_ERR_NOT_AVAILABLE when the server is stopping, PMIX_ERR_INIT before
 * init, PMIX_ERR_BAD_PARAM for no procs or no buffer. dbuf is filled only on
 * PMIX_SUCCESS (newer OpenPMIx extension, not in 4.2.2). */
PMIX_EXPORT pmix_status_t PMIx_server_collect_job_info(pmix_proc_t *procs, size_t nprocs,
                                                       pmix_data_buffer_t *dbuf);

/* Registers the attributes the host supports for one function (attrs: a
 * NULL-terminated array of attribute names, e.g. "PMIX_TIMEOUT"; NULL: none),
 * answered to PMIx_Query_info of PMIX_QUERY_ATTRIBUTE_SUPPORT with the
 * PMIX_HOST_ATTRIBUTES / PMIX_HOST_FUNCTIONS qualifiers, the clients' and
 * tools' too (through their server). The library copies attrs. Any
 * initialized process may call it. PMIX_ERR_INIT before init,
 * PMIX_ERR_BAD_PARAM without a function name,
 * PMIX_ERR_REPEAT_ATTR_REGISTRATION for a function already registered.
 * Registrations are forgotten when the library's last user finalizes. */
PMIX_EXPORT pmix_status_t PMIx_Register_attributes(char *function, char *attrs[]);

/* This node's inventory (PMIX_HOSTNAME and, when the server shares its
 * topology, PMIX_HWLOC_XML_V2) to cbfunc; with a PMIX_HOSTNAME directive
 * naming another node, the inventory delivered for it
 * (PMIX_ERR_NOT_FOUND if none was). cbfunc is required. */
PMIX_EXPORT pmix_status_t PMIx_server_collect_inventory(pmix_info_t directives[], size_t ndirs,
                                                        pmix_info_cbfunc_t cbfunc, void *cbdata);

/* Keeps another node's inventory (info must hold its PMIX_HOSTNAME),
 * replacing what was kept for that node; blocking when cbfunc is NULL. */
PMIX_EXPORT pmix_status_t PMIx_server_deliver_inventory(pmix_info_t info[], size_t ninfo,
                                                        pmix_info_t directives[], size_t ndirs,
                                                        pmix_op_cbfunc_t cbfunc, void *cbdata);

/* Defines the process set pset_name (its members) and tells every local
 * client and tool with a PMIX_PROCESS_SET_DEFINE event (PMIX_PSET_NAME,
 * PMIX_PSET_MEMBERS); PMIX_ERR_EXISTS for a name in use. Clients query the
 * sets (PMIX_QUERY_NUM_PSETS, PMIX_QUERY_PSET_NAMES,
 * PMIX_QUERY_PSET_MEMBERSHIP with a PMIX_PSET_NAME qualifier): the server
 * answers. Blocking. */
PMIX_EXPORT pmix_status_t PMIx_server_define_process_set(const pmix_proc_t *members,
                                                         size_t nmembers, const char *pset_name);

/* Deletes a process set (PMIX_PROCESS_SET_DELETE to the local clients and
 * tools); PMIX_ERR_NOT_FOUND for an unknown name. Blocking. */
PMIX_EXPORT pmix_status_t PMIx_server_delete_process_set(char *pset_name);

/* Node-level information not tied to a namespace: every job of this node
 * carries it in its job data (PMIx_Get with PMIX_RANK_WILDCARD), the jobs
 * registered already and those to come; a key the job's own registration
 * holds keeps the registration's value. Blocking when cbfunc is NULL. */
PMIX_EXPORT pmix_status_t PMIx_server_register_resources(pmix_info_t info[], size_t ninfo,
                                                         pmix_op_cbfunc_t cbfunc,
                                                         void *cbdata);

/* Removes the resources of those keys (the values given are not read). */
PMIX_EXPORT pmix_status_t PMIx_server_deregister_resources(pmix_info_t info[], size_t ninfo,
                                                           pmix_op_cbfunc_t cbfunc,
                                                           void *cbdata);

/* "hwloc:<cpu list>" into *cpuset, as PMIx_Parse_cpuset_string (OpenPMIx 6.0):
 * the inverse of PMIx_server_generate_cpuset_string. */
PMIX_EXPORT pmix_status_t PMIx_server_generate_cpuset(const char *cpuset_string, pmix_cpuset_t *cpuset);

/* "hwloc:<cpu list>" of an hwloc cpuset: a new string the caller frees.
 * Computed in this process (docs/local-functions.md). */
PMIX_EXPORT pmix_status_t PMIx_server_generate_cpuset_string(const pmix_cpuset_t *cpuset,
                                                             char **cpuset_string);

/* The PMIX_LOCALITY_STRING of a process bound to cpuset, from this node's
 * topology: "SK0:L30:L20:L10:CR0:HT0:NM0" (the levels the cpuset touches,
 * each with the indices of its objects there). NULL for an unbound cpuset. */
PMIX_EXPORT pmix_status_t PMIx_server_generate_locality_string(const pmix_cpuset_t *cpuset,
                                                               char **locality);

/* Receives the result of a direct modex request: data (sz bytes) belongs to
 * the library. */
typedef void (*pmix_dmodex_response_fn_t)(pmix_status_t status, char *data, size_t sz,
                                          void *cbdata);

/* Delivers the information a host gathered for an application launch; the
 * receiver calls cbfunc(status, cbdata) when done with info. */
typedef void (*pmix_setup_application_cbfunc_t)(pmix_status_t status, pmix_info_t info[],
                                                size_t ninfo, void *provided_cbdata,
                                                pmix_op_cbfunc_t cbfunc, void *cbdata);

/* The host asks, for another node, for the data the local process *proc
 * committed; cbfunc receives it (a blob the library frees when cbfunc
 * returns) once the process has committed. A namespace not registered yet is
 * waited for. */
PMIX_EXPORT pmix_status_t PMIx_server_dmodex_request(const pmix_proc_t *proc,
                                                     pmix_dmodex_response_fn_t cbfunc,
                                                     void *cbdata);

/* Information for launching an application of nspace on any node (for
 * example environment variables harvested with PMIX_SETUP_APP_ENVARS),
 * delivered through cbfunc; the host hands it to
 * PMIx_server_setup_local_support on each node. */
PMIX_EXPORT pmix_status_t PMIx_server_setup_application(const pmix_nspace_t nspace,
                                                        pmix_info_t info[], size_t ninfo,
                                                        pmix_setup_application_cbfunc_t cbfunc,
                                                        void *cbdata);

/* Prepares this node for nspace's local clients: environment changes
 * (PMIX_SET_ENVAR and the like) are applied by PMIx_server_setup_fork, the
 * other entries join the namespace's job-level data. */
PMIX_EXPORT pmix_status_t PMIx_server_setup_local_support(const pmix_nspace_t nspace,
                                                          pmix_info_t info[], size_t ninfo,
                                                          pmix_op_cbfunc_t cbfunc, void *cbdata);

/* Output of *source on channel, forwarded by the host, for the processes
 * that asked for it (with PMIX_IOF_LOCAL_OUTPUT: the server's own stdout or
 * stderr). cbfunc says when bo may be released. */
PMIX_EXPORT pmix_status_t PMIx_server_IOF_deliver(const pmix_proc_t *source,
                                                  pmix_iof_channel_t channel,
                                                  const pmix_byte_object_t *bo,
                                                  const pmix_info_t info[], size_t ninfo,
                                                  pmix_op_cbfunc_t cbfunc, void *cbdata);

/* Stops (xoff) or resumes the stdin that source (NULL: every producer; a
 * wildcard rank: its namespace) pushes with PMIx_IOF_push (OpenPMIx
 * master): its pushes are held unanswered until resumed, nothing piles up.
 * Only PMIX_FWD_STDIN_CHANNEL (else PMIX_ERR_NOT_SUPPORTED). Without cbfunc
 * it returns PMIX_OPERATION_SUCCEEDED. */
PMIX_EXPORT pmix_status_t PMIx_server_IOF_flow_control(const pmix_proc_t *source, pmix_iof_channel_t channel,
                                                       bool xoff, const pmix_info_t directives[], size_t ndirs,
                                                       pmix_op_cbfunc_t cbfunc, void *cbdata);

#if defined(c_plusplus) || defined(__cplusplus)
}
#endif

#endif /* PMIx_SERVER_API_H */
