/*
 * pmix.h - the client API (and the support calls every PMIx process may use).
 *
 * Binary compatible with OpenPMIx 4.2.2. Only the calls implemented so far
 * are declared; the rest of the 4.2.2 client API is added as it is built.
 */
#ifndef PMIx_H
#define PMIx_H

#include <pmix_common.h>

#if defined(c_plusplus) || defined(__cplusplus)
extern "C" {
#endif

/* ----- Life cycle ----------------------------------------------------- */

/* Connects to the local PMIx server and fills *proc (if not NULL) with this
 * process's identity. May be called more than once; each call needs a
 * matching PMIx_Finalize. Without a server the process becomes a singleton. */
PMIX_EXPORT pmix_status_t PMIx_Init(pmix_proc_t *proc, pmix_info_t info[], size_t ninfo);

/* Undoes one PMIx_Init; the last one tells the server and disconnects. */
PMIX_EXPORT pmix_status_t PMIx_Finalize(const pmix_info_t info[], size_t ninfo);

/* Non-zero while the library is initialized. */
PMIX_EXPORT int PMIx_Initialized(void);

/* Asks the host to terminate procs (NULL: the caller's whole namespace)
 * with the given status, logging msg. */
PMIX_EXPORT pmix_status_t PMIx_Abort(int status, const char msg[], pmix_proc_t procs[],
                                     size_t nprocs);

/* ----- Data exchange --------------------------------------------------- */

/* Stages a copy of *val under key for other processes in the given scope;
 * nothing is sent before PMIx_Commit. */
PMIX_EXPORT pmix_status_t PMIx_Put(pmix_scope_t scope, const char key[], pmix_value_t *val);

/* Sends the values staged by PMIx_Put to the local server. */
PMIX_EXPORT pmix_status_t PMIx_Commit(void);

/* Blocks until every listed process (NULL: the caller's namespace) has
 * entered the fence; may collect their committed data (PMIX_COLLECT_DATA). */
PMIX_EXPORT pmix_status_t PMIx_Fence(const pmix_proc_t procs[], size_t nprocs,
                                     const pmix_info_t info[], size_t ninfo);

/* Non-blocking PMIx_Fence: cbfunc(status, cbdata) reports completion. */
PMIX_EXPORT pmix_status_t PMIx_Fence_nb(const pmix_proc_t procs[], size_t nprocs,
                                        const pmix_info_t info[], size_t ninfo,
                                        pmix_op_cbfunc_t cbfunc, void *cbdata);

/* Retrieves the value stored under key by *proc (or job data for
 * PMIX_RANK_WILDCARD). *val receives a new value the caller releases with
 * PMIX_VALUE_RELEASE. PMIX_ERR_NOT_FOUND when there is none. */
PMIX_EXPORT pmix_status_t PMIx_Get(const pmix_proc_t *proc, const char key[],
                                   const pmix_info_t info[], size_t ninfo, pmix_value_t **val);

/* Non-blocking PMIx_Get: cbfunc receives the value, owned by the library. */
PMIX_EXPORT pmix_status_t PMIx_Get_nb(const pmix_proc_t *proc, const char key[],
                                      const pmix_info_t info[], size_t ninfo,
                                      pmix_value_cbfunc_t cbfunc, void *cbdata);

/* Stores a copy of *val under key for *proc in this process's own store
 * only (nothing is sent). */
PMIX_EXPORT pmix_status_t PMIx_Store_internal(const pmix_proc_t *proc, const char key[],
                                              pmix_value_t *val);

/* Runs one round of the library's progress engine (for PMIX_EXTERNAL_PROGRESS). */
PMIX_EXPORT void PMIx_Progress(void);

/* Asks the host to act on targets (NULL: the caller's namespace). Directives
 * PMIX_REGISTER_CLEANUP / PMIX_REGISTER_CLEANUP_DIR (with PMIX_CLEANUP_*)
 * register files and directories the server removes when the caller (no
 * targets, or itself) or its job (the namespace as a wildcard) ends. The
 * blocking form gives *results (free with PMIX_INFO_FREE). */
PMIX_EXPORT pmix_status_t PMIx_Job_control(const pmix_proc_t targets[], size_t ntargets,
                                           const pmix_info_t directives[], size_t ndirs,
                                           pmix_info_t **results, size_t *nresults);

PMIX_EXPORT pmix_status_t PMIx_Job_control_nb(const pmix_proc_t targets[], size_t ntargets,
                                              const pmix_info_t directives[], size_t ndirs,
                                              pmix_info_cbfunc_t cbfunc, void *cbdata);

/* Asks the server's host for information (pmix_server_module_t's query):
 * each query names keys, with qualifiers. PMIX_ERR_NOT_SUPPORTED when the
 * host has no query function. The blocking form gives *results (free with
 * PMIX_INFO_FREE); the non-blocking form hands them to cbfunc. */
PMIX_EXPORT pmix_status_t PMIx_Query_info(pmix_query_t queries[], size_t nqueries,
                                          pmix_info_t **results, size_t *nresults);

PMIX_EXPORT pmix_status_t PMIx_Query_info_nb(pmix_query_t queries[], size_t nqueries,
                                             pmix_info_cbfunc_t cbfunc, void *cbdata);

/* Event handlers (docs/events.md). Registers evhdlr for the given codes (none:
 * a default handler, called for every event); directives PMIX_EVENT_HDLR_*
 * place it in the chain. With a NULL cbfunc the call returns the handler's
 * reference (non-negative) or an error; otherwise cbfunc gets it. */
PMIX_EXPORT pmix_status_t PMIx_Register_event_handler(pmix_status_t codes[], size_t ncodes,
                                                      pmix_info_t info[], size_t ninfo,
                                                      pmix_notification_fn_t evhdlr,
                                                      pmix_hdlr_reg_cbfunc_t cbfunc,
                                                      void *cbdata);

/* Removes a handler by its reference; cbfunc (if not NULL) confirms. */
PMIX_EXPORT pmix_status_t PMIx_Deregister_event_handler(size_t evhdlr_ref,
                                                        pmix_op_cbfunc_t cbfunc,
                                                        void *cbdata);

/* Reports an event to the processes in `range` (PMIX_RANGE_PROC_LOCAL: this
 * process only). source NULL means the caller. cbfunc NULL: blocking, until
 * the server has taken the event. */
PMIX_EXPORT pmix_status_t PMIx_Notify_event(pmix_status_t status, const pmix_proc_t *source,
                                            pmix_data_range_t range,
                                            const pmix_info_t info[], size_t ninfo,
                                            pmix_op_cbfunc_t cbfunc, void *cbdata);

/* Publishes the key/value pairs of info (directives such as PMIX_RANGE,
 * PMIX_PERSISTENCE among them) through the host. */
PMIX_EXPORT pmix_status_t PMIx_Publish(const pmix_info_t info[], size_t ninfo);
PMIX_EXPORT pmix_status_t PMIx_Publish_nb(const pmix_info_t info[], size_t ninfo,
                                          pmix_op_cbfunc_t cbfunc, void *cbdata);

/* Looks up data[k].key for each k; fills in data[k].value and .proc (the
 * publisher). PMIX_WAIT in info waits until every key is published. */
PMIX_EXPORT pmix_status_t PMIx_Lookup(pmix_pdata_t data[], size_t ndata, const pmix_info_t info[],
                                      size_t ninfo);
/* keys: NULL-terminated. */
PMIX_EXPORT pmix_status_t PMIx_Lookup_nb(char **keys, const pmix_info_t info[], size_t ninfo,
                                         pmix_lookup_cbfunc_t cbfunc, void *cbdata);

/* Removes data this process published (NULL keys: all of it). */
PMIX_EXPORT pmix_status_t PMIx_Unpublish(char **keys, const pmix_info_t info[], size_t ninfo);
PMIX_EXPORT pmix_status_t PMIx_Unpublish_nb(char **keys, const pmix_info_t info[], size_t ninfo,
                                            pmix_op_cbfunc_t cbfunc, void *cbdata);

/* Starts apps as a new job through the host; its namespace goes to nspace
 * (blocking) or to cbfunc. */
PMIX_EXPORT pmix_status_t PMIx_Spawn(const pmix_info_t job_info[], size_t ninfo,
                                     const pmix_app_t apps[], size_t napps, pmix_nspace_t nspace);
PMIX_EXPORT pmix_status_t PMIx_Spawn_nb(const pmix_info_t job_info[], size_t ninfo,
                                        const pmix_app_t apps[], size_t napps,
                                        pmix_spawn_cbfunc_t cbfunc, void *cbdata);

/* A collective over procs: afterwards each participant holds the job data
 * of the others' namespaces. */
PMIX_EXPORT pmix_status_t PMIx_Connect(const pmix_proc_t procs[], size_t nprocs,
                                       const pmix_info_t info[], size_t ninfo);
PMIX_EXPORT pmix_status_t PMIx_Connect_nb(const pmix_proc_t procs[], size_t nprocs,
                                          const pmix_info_t info[], size_t ninfo,
                                          pmix_op_cbfunc_t cbfunc, void *cbdata);
PMIX_EXPORT pmix_status_t PMIx_Disconnect(const pmix_proc_t procs[], size_t nprocs,
                                          const pmix_info_t info[], size_t ninfo);
PMIX_EXPORT pmix_status_t PMIx_Disconnect_nb(const pmix_proc_t procs[], size_t nprocs,
                                             const pmix_info_t info[], size_t ninfo,
                                             pmix_op_cbfunc_t cbfunc, void *cbdata);

/* The processes of nspace (any known namespace when NULL or empty) on
 * nodename (this node when NULL), from the job data; *procs is freed with
 * PMIX_PROC_FREE. */
PMIX_EXPORT pmix_status_t PMIx_Resolve_peers(const char *nodename, const pmix_nspace_t nspace,
                                             pmix_proc_t **procs, size_t *nprocs);
/* The comma-separated nodes nspace runs on (all known namespaces when NULL
 * or empty); *nodelist is freed with free(). */
PMIX_EXPORT pmix_status_t PMIx_Resolve_nodes(const pmix_nspace_t nspace, char **nodelist);

/* Logs data (PMIX_LOG_STDERR, PMIX_LOG_SYSLOG, ...) through the server and
 * its host. */
PMIX_EXPORT pmix_status_t PMIx_Log(const pmix_info_t data[], size_t ndata,
                                   const pmix_info_t directives[], size_t ndirs);
PMIX_EXPORT pmix_status_t PMIx_Log_nb(const pmix_info_t data[], size_t ndata,
                                      const pmix_info_t directives[], size_t ndirs,
                                      pmix_op_cbfunc_t cbfunc, void *cbdata);

/* ---- Groups --------------------------------------------------------------------
 * A group is a named set of processes. construct is a collective of the
 * members listed in procs (PMIX_GROUP_ASSIGN_CONTEXT_ID asks for a context
 * ID unique to the server); invite asks procs to join, each answers with
 * join (PMIX_GROUP_ACCEPT or PMIX_GROUP_DECLINE; events PMIX_GROUP_INVITED,
 * PMIX_GROUP_INVITE_ACCEPTED / _DECLINED / _FAILED, PMIX_GROUP_CONSTRUCT_COMPLETE);
 * leave leaves it at once (PMIX_GROUP_LEFT to the others); destruct is a
 * collective of the members. *results (PMIX_INFO_FREE) holds PMIX_GROUP_ID,
 * PMIX_GROUP_MEMBERSHIP and PMIX_GROUP_CONTEXT_ID. */
PMIX_EXPORT pmix_status_t PMIx_Group_construct(const char grp[],
                                               const pmix_proc_t procs[], size_t nprocs,
                                               const pmix_info_t directives[], size_t ndirs,
                                               pmix_info_t **results, size_t *nresults);
PMIX_EXPORT pmix_status_t PMIx_Group_construct_nb(const char grp[],
                                                  const pmix_proc_t procs[], size_t nprocs,
                                                  const pmix_info_t info[], size_t ninfo,
                                                  pmix_info_cbfunc_t cbfunc, void *cbdata);
PMIX_EXPORT pmix_status_t PMIx_Group_invite(const char grp[],
                                            const pmix_proc_t procs[], size_t nprocs,
                                            const pmix_info_t info[], size_t ninfo,
                                            pmix_info_t **results, size_t *nresult);
PMIX_EXPORT pmix_status_t PMIx_Group_invite_nb(const char grp[],
                                               const pmix_proc_t procs[], size_t nprocs,
                                               const pmix_info_t info[], size_t ninfo,
                                               pmix_info_cbfunc_t cbfunc, void *cbdata);
PMIX_EXPORT pmix_status_t PMIx_Group_join(const char grp[], const pmix_proc_t *leader,
                                          pmix_group_opt_t opt,
                                          const pmix_info_t info[], size_t ninfo,
                                          pmix_info_t **results, size_t *nresult);
PMIX_EXPORT pmix_status_t PMIx_Group_join_nb(const char grp[], const pmix_proc_t *leader,
                                             pmix_group_opt_t opt,
                                             const pmix_info_t info[], size_t ninfo,
                                             pmix_info_cbfunc_t cbfunc, void *cbdata);
PMIX_EXPORT pmix_status_t PMIx_Group_leave(const char grp[],
                                           const pmix_info_t info[], size_t ninfo);
PMIX_EXPORT pmix_status_t PMIx_Group_leave_nb(const char grp[],
                                              const pmix_info_t info[], size_t ninfo,
                                              pmix_op_cbfunc_t cbfunc, void *cbdata);
PMIX_EXPORT pmix_status_t PMIx_Group_destruct(const char grp[],
                                              const pmix_info_t info[], size_t ninfo);
PMIX_EXPORT pmix_status_t PMIx_Group_destruct_nb(const char grp[],
                                                 const pmix_info_t info[], size_t ninfo,
                                                 pmix_op_cbfunc_t cbfunc, void *cbdata);

/* ---- Requests the server hands to its host (or serves itself) ---------------
 * Without the host's up-call they answer PMIX_ERR_NOT_SUPPORTED, except the
 * heartbeat monitor and credentials, which the server serves itself. */

/* A new allocation, an extension, a release... (directive), with details in
 * info; *results (PMIX_INFO_FREE) holds the host's answer. */
PMIX_EXPORT pmix_status_t PMIx_Allocation_request(pmix_alloc_directive_t directive,
                                                  pmix_info_t *info, size_t ninfo,
                                                  pmix_info_t **results, size_t *nresults);
PMIX_EXPORT pmix_status_t PMIx_Allocation_request_nb(pmix_alloc_directive_t directive,
                                                     pmix_info_t *info, size_t ninfo,
                                                     pmix_info_cbfunc_t cbfunc, void *cbdata);

/* Watch this process: monitor is one item (PMIX_MONITOR_HEARTBEAT with
 * PMIX_MONITOR_HEARTBEAT_TIME / _DROPS, PMIX_MONITOR_CANCEL, or a kind the
 * host supports); error is the event raised when it stalls. */
PMIX_EXPORT pmix_status_t PMIx_Process_monitor(const pmix_info_t *monitor, pmix_status_t error,
                                               const pmix_info_t directives[], size_t ndirs,
                                               pmix_info_t **results, size_t *nresults);
PMIX_EXPORT pmix_status_t PMIx_Process_monitor_nb(const pmix_info_t *monitor, pmix_status_t error,
                                                  const pmix_info_t directives[], size_t ndirs,
                                                  pmix_info_cbfunc_t cbfunc, void *cbdata);

/* One heartbeat to the server (after a PMIX_MONITOR_HEARTBEAT request): a
 * function since OpenPMIx 6.0, a macro of the same name before (and in our
 * header, unless PMIX_CXX_FUNCTION_MACROS is defined; see the end of this
 * file). The parentheses keep the macro from expanding here. */
PMIX_EXPORT void(PMIx_Heartbeat)(void);
#define PMIx_Heartbeat()                                                    \
    do {                                                                    \
        pmix_info_t _in;                                                    \
        PMIX_INFO_CONSTRUCT(&_in);                                          \
        PMIX_INFO_LOAD(&_in, PMIX_SEND_HEARTBEAT, NULL, PMIX_POINTER);      \
        PMIx_Process_monitor_nb(&_in, PMIX_SUCCESS, NULL, 0, NULL, NULL);   \
        PMIX_INFO_DESTRUCT(&_in);                                           \
    } while (0)

/* A credential for this process (credential->bytes is freed with free()),
 * and its validation, which says whom it was issued to (PMIX_USERID,
 * PMIX_GRPID, ...). */
PMIX_EXPORT pmix_status_t PMIx_Get_credential(const pmix_info_t info[], size_t ninfo,
                                              pmix_byte_object_t *credential);
PMIX_EXPORT pmix_status_t PMIx_Get_credential_nb(const pmix_info_t info[], size_t ninfo,
                                                 pmix_credential_cbfunc_t cbfunc, void *cbdata);
PMIX_EXPORT pmix_status_t PMIx_Validate_credential(const pmix_byte_object_t *cred,
                                                   const pmix_info_t info[], size_t ninfo,
                                                   pmix_info_t **results, size_t *nresults);
PMIX_EXPORT pmix_status_t PMIx_Validate_credential_nb(const pmix_byte_object_t *cred,
                                                      const pmix_info_t info[], size_t ninfo,
                                                      pmix_validation_cbfunc_t cbfunc, void *cbdata);

/* What the host knows about a fabric (fabric->info, PMIX_INFO_FREE'd by
 * PMIx_Fabric_deregister). */
PMIX_EXPORT pmix_status_t PMIx_Fabric_register(pmix_fabric_t *fabric,
                                               const pmix_info_t directives[], size_t ndirs);
PMIX_EXPORT pmix_status_t PMIx_Fabric_register_nb(pmix_fabric_t *fabric,
                                                  const pmix_info_t directives[], size_t ndirs,
                                                  pmix_op_cbfunc_t cbfunc, void *cbdata);
PMIX_EXPORT pmix_status_t PMIx_Fabric_update(pmix_fabric_t *fabric);
PMIX_EXPORT pmix_status_t PMIx_Fabric_update_nb(pmix_fabric_t *fabric,
                                                pmix_op_cbfunc_t cbfunc, void *cbdata);
PMIX_EXPORT pmix_status_t PMIx_Fabric_deregister(pmix_fabric_t *fabric);
PMIX_EXPORT pmix_status_t PMIx_Fabric_deregister_nb(pmix_fabric_t *fabric,
                                                    pmix_op_cbfunc_t cbfunc, void *cbdata);

/* Packs num_vals values of type `type` from src into buffer (target is not
 * used: the format is the same for every peer). */
PMIX_EXPORT pmix_status_t PMIx_Data_pack(const pmix_proc_t *target, pmix_data_buffer_t *buffer,
                                         void *src, int32_t num_vals, pmix_data_type_t type);

/* Unpacks up to *max_num_values values of type `type` into dest (caller's
 * array; strings and other owned data inside are allocated); on return
 * *max_num_values holds how many were unpacked. */
PMIX_EXPORT pmix_status_t PMIx_Data_unpack(const pmix_proc_t *source, pmix_data_buffer_t *buffer,
                                           void *dest, int32_t *max_num_values,
                                           pmix_data_type_t type);

/* Appends src's unread packed data to dest. */
PMIX_EXPORT pmix_status_t PMIx_Data_copy_payload(pmix_data_buffer_t *dest,
                                                 pmix_data_buffer_t *src);

/* Buffer calls of newer PMIx releases (newer than 4.2.2, whose headers have
 * the PMIX_DATA_BUFFER_* macros only); they behave as those macros. */
PMIX_EXPORT pmix_data_buffer_t *PMIx_Data_buffer_create(void);
PMIX_EXPORT void PMIx_Data_buffer_construct(pmix_data_buffer_t *b);
PMIX_EXPORT void PMIx_Data_buffer_destruct(pmix_data_buffer_t *b);
PMIX_EXPORT void PMIx_Data_buffer_release(pmix_data_buffer_t *b);
PMIX_EXPORT void PMIx_Data_buffer_load(pmix_data_buffer_t *b, char *bytes, size_t sz);
PMIX_EXPORT void PMIx_Data_buffer_unload(pmix_data_buffer_t *b, char **bytes, size_t *sz);

/* ----- Buffers and topology (used by macros of pmix_common.h) --------- */

/* Makes buffer *buffer own payload's bytes (payload is emptied); any data the
 * buffer held is freed first. */
PMIX_EXPORT pmix_status_t PMIx_Data_load(pmix_data_buffer_t *buffer,
                                         pmix_byte_object_t *payload);

/* Moves the unread bytes of *buffer into *payload (the caller frees them)
 * and leaves the buffer empty. */
PMIX_EXPORT pmix_status_t PMIx_Data_unload(pmix_data_buffer_t *buffer,
                                           pmix_byte_object_t *payload);

/* Releases what *topo owns: for an hwloc topology (source "hwloc...") the
 * hwloc object and the source string; other sources are left alone. */
PMIX_EXPORT void PMIx_Topology_destruct(pmix_topology_t *topo);

/* ----- Computed in this process (docs/local-functions.md) -------------- */

/* A new deep copy of one datum of `type` at src into *dest (for PMIX_STRING,
 * src is the string itself and *dest a new string). PMIX_ERR_BAD_PARAM for a
 * NULL dest or src, PMIX_ERR_UNKNOWN_DATA_TYPE for a type with no copy. */
PMIX_EXPORT pmix_status_t PMIx_Data_copy(void **dest, void *src,
                                         pmix_data_type_t type);

/* A readable form of one datum (src as for PMIx_Data_copy), each line
 * starting with prefix (" " when NULL); *output is a new string. */
PMIX_EXPORT pmix_status_t PMIx_Data_print(char **output, char *prefix,
                                          void *src, pmix_data_type_t type);

/* Empties buffer, then packs a copy of payload's bytes into it (payload
 * stays the caller's). A NULL payload leaves the buffer empty. */
PMIX_EXPORT pmix_status_t PMIx_Data_embed(pmix_data_buffer_t *buffer,
                                          const pmix_byte_object_t *payload);

/* Lossless compression (zlib, loaded on first use). true: *outbytes is a new
 * block of *nbytes bytes, smaller than the input. false: nothing allocated
 * (the data would not shrink, bad arguments, or no zlib). */
PMIX_EXPORT bool PMIx_Data_compress(const uint8_t *inbytes,
                                    size_t size,
                                    uint8_t **outbytes,
                                    size_t *nbytes);

/* Restores a block made by PMIx_Data_compress; false for anything else. */
PMIX_EXPORT bool PMIx_Data_decompress(const uint8_t *inbytes,
                                      size_t size,
                                      uint8_t **outbytes,
                                      size_t *nbytes);

/* Readable forms of an info and a value: new strings the caller frees
 * (NULL for a NULL argument). */
PMIX_EXPORT char *PMIx_Info_string(const pmix_info_t *info);
PMIX_EXPORT char *PMIx_Value_string(const pmix_value_t *value);

/* The key string of an attribute name ("PMIX_JOB_SIZE" -> "pmix.job.size")
 * and the reverse; static strings, the argument itself when unknown. */
PMIX_EXPORT const char *PMIx_Get_attribute_string(const char *attribute);
PMIX_EXPORT const char *PMIx_Get_attribute_name(const char *attrstring);

/* The node's topology (source "hwloc:<version>" unless the caller set one):
 * in a client, the one its server shares. The caller's own copy, released
 * with PMIx_Topology_destruct. */
PMIX_EXPORT pmix_status_t PMIx_Load_topology(pmix_topology_t *topo);

/* Parses "hwloc:<cpu list>" into *cpuset (release with PMIx_Cpuset_destruct). */
PMIX_EXPORT pmix_status_t PMIx_Parse_cpuset_string(const char *cpuset_string,
                                                   pmix_cpuset_t *cpuset);

/* The CPUs the process (PMIX_CPUBIND_PROCESS) or the calling thread
 * (PMIX_CPUBIND_THREAD) may run on. */
PMIX_EXPORT pmix_status_t PMIx_Get_cpuset(pmix_cpuset_t *cpuset, pmix_bind_envelope_t ref);

/* Releases what an hwloc cpuset owns; other sources are left alone. */
PMIX_EXPORT void PMIx_Cpuset_destruct(pmix_cpuset_t *cpuset);

/* The PMIX_LOCALITY_SHARE_* bits of two processes on this node, from their
 * PMIX_LOCALITY_STRINGs (see PMIx_server_generate_locality_string). */
PMIX_EXPORT pmix_status_t PMIx_Get_relative_locality(const char *locality1,
                                                     const char *locality2,
                                                     pmix_locality_t *locality);

/* Distances from cpuset (NULL: this process's binding) to the devices of
 * topo (NULL: this process's topology). PMIX_ERR_NOT_FOUND when there is no
 * such device. Free the array with PMIX_DEVICE_DIST_FREE. */
PMIX_EXPORT pmix_status_t PMIx_Compute_distances(pmix_topology_t *topo,
                                                 pmix_cpuset_t *cpuset,
                                                 pmix_info_t info[], size_t ninfo,
                                                 pmix_device_distance_t *distances[],
                                                 size_t *ndist);

/* The same; the result comes through cbfunc, on a library thread. */
PMIX_EXPORT pmix_status_t PMIx_Compute_distances_nb(pmix_topology_t *topo,
                                                    pmix_cpuset_t *cpuset,
                                                    pmix_info_t info[], size_t ninfo,
                                                    pmix_device_dist_cbfunc_t cbfunc,
                                                    void *cbdata);

/* ----- Names of constants ---------------------------------------------- */

/* Each returns a static, readable name ("UNKNOWN ..." for other values). */
PMIX_EXPORT const char *PMIx_Error_string(pmix_status_t status);
PMIX_EXPORT const char *PMIx_Proc_state_string(pmix_proc_state_t state);
PMIX_EXPORT const char *PMIx_Scope_string(pmix_scope_t scope);
PMIX_EXPORT const char *PMIx_Persistence_string(pmix_persistence_t persist);
PMIX_EXPORT const char *PMIx_Data_range_string(pmix_data_range_t range);
PMIX_EXPORT const char *PMIx_Data_type_string(pmix_data_type_t type);
PMIX_EXPORT const char *PMIx_Alloc_directive_string(pmix_alloc_directive_t directive);
PMIX_EXPORT const char *PMIx_IOF_channel_string(pmix_iof_channel_t channel);
PMIX_EXPORT const char *PMIx_Job_state_string(pmix_job_state_t state);
PMIX_EXPORT const char *PMIx_Link_state_string(pmix_link_state_t state);
PMIX_EXPORT const char *PMIx_Device_type_string(pmix_device_type_t type);
PMIX_EXPORT const char *PMIx_Value_comparison_string(pmix_value_cmp_t cmp);

/* Names of the set directive bits, joined by ':'; a new string the caller
 * frees (NULL when out of memory). */
PMIX_EXPORT char *PMIx_Info_directives_string(pmix_info_directives_t directives);

/* Static description of this library and the version it is compatible with. */
PMIX_EXPORT const char *PMIx_Get_version(void);

/* ----- Helpers of newer OpenPMIx releases (issue 37) --------------------- */

/* OpenPMIx 4.2.3 and later export these in place of its macros; a program
 * built against a newer header calls them. Our macros stay inline. Each does
 * what OpenPMIx's man page for it says (docs/openpmix-functions.md). */

/* argv-style arrays (NULL-terminated, each string and the array from malloc):
 * count (0 for NULL); append, prepend and append-unless-present a copy of
 * arg (PMIX_ERR_OUT_OF_RESOURCE when out of memory); free all; split at a
 * delimiter (NULL when there is no token; _with_empty and _inter(true) keep
 * the empty tokens of a leading or repeated delimiter); join (a new string,
 * "" for an empty array); a deep copy (NULL for NULL). */
PMIX_EXPORT int PMIx_Argv_count(char **a);
PMIX_EXPORT pmix_status_t PMIx_Argv_append_nosize(char ***argv, const char *arg);
PMIX_EXPORT pmix_status_t PMIx_Argv_prepend_nosize(char ***argv, const char *arg);
PMIX_EXPORT pmix_status_t PMIx_Argv_append_unique_nosize(char ***argv, const char *arg);
PMIX_EXPORT void PMIx_Argv_free(char **argv);
PMIX_EXPORT char **PMIx_Argv_split(const char *src_string, int delimiter);
PMIX_EXPORT char **PMIx_Argv_split_with_empty(const char *src_string, int delimiter);
PMIX_EXPORT char **PMIx_Argv_split_inter(const char *src_string, int delimiter, bool include_empty);
PMIX_EXPORT char *PMIx_Argv_join(char **argv, int delimiter);
PMIX_EXPORT char **PMIx_Argv_copy(char **argv);
/* Sets name=value (name= for a NULL value) in *env: the process's own
 * environment through setenv/unsetenv, another array in place
 * (PMIX_ERR_EXISTS when present and not overwrite). */
PMIX_EXPORT pmix_status_t PMIx_Setenv(const char *name, const char *value, bool overwrite, char ***env);

/* Keys, namespaces and process ids, as PMIX_LOAD_KEY, PMIX_CHECK_KEY,
 * PMIX_CHECK_RESERVED_KEY, PMIX_LOAD_NSPACE, PMIX_CHECK_NSPACE (an invalid
 * namespace matches any), PMIX_NSPACE_INVALID, PMIX_LOAD_PROCID,
 * PMIX_XFER_PROCID, PMIX_CHECK_PROCID, PMIX_CHECK_RANK (the wildcard
 * matches any), PMIX_RANK_IS_VALID and PMIX_PROCID_INVALID. */
PMIX_EXPORT void PMIx_Load_key(pmix_key_t key, const char *src);
PMIX_EXPORT bool PMIx_Check_key(const char *key, const char *str);
PMIX_EXPORT bool PMIx_Check_reserved_key(const char *key);
PMIX_EXPORT void PMIx_Load_nspace(pmix_nspace_t nspace, const char *str);
PMIX_EXPORT bool PMIx_Check_nspace(const char *key1, const char *key2);
PMIX_EXPORT bool PMIx_Nspace_invalid(const char *nspace);
PMIX_EXPORT void PMIx_Load_procid(pmix_proc_t *p, const char *ns, pmix_rank_t rk);
PMIX_EXPORT void PMIx_Xfer_procid(pmix_proc_t *dst, const pmix_proc_t *src);
PMIX_EXPORT bool PMIx_Check_procid(const pmix_proc_t *a, const pmix_proc_t *b);
PMIX_EXPORT bool PMIx_Check_rank(pmix_rank_t a, pmix_rank_t b);
PMIX_EXPORT bool PMIx_Rank_valid(pmix_rank_t a);
PMIX_EXPORT bool PMIx_Procid_invalid(const pmix_proc_t *p);
/* "[nspace,rank]" (ranks UNDEF, WILDCARD, LOCAL_NODE, LOCAL_PEERS, INVALID
 * by name): a new string the caller frees. */
PMIX_EXPORT char *PMIx_Proc_string(const pmix_proc_t *proc);

/* An info's directive flags, as PMIX_INFO_REQUIRED and its kin. */
PMIX_EXPORT void PMIx_Info_required(pmix_info_t *p);
PMIX_EXPORT void PMIx_Info_optional(pmix_info_t *p);
PMIX_EXPORT bool PMIx_Info_is_required(const pmix_info_t *p);
PMIX_EXPORT bool PMIx_Info_is_optional(const pmix_info_t *p);
PMIX_EXPORT void PMIx_Info_processed(pmix_info_t *p);
PMIX_EXPORT bool PMIx_Info_was_processed(const pmix_info_t *p);
PMIX_EXPORT void PMIx_Info_set_end(pmix_info_t *p);
PMIX_EXPORT bool PMIx_Info_is_end(const pmix_info_t *p);
PMIX_EXPORT void PMIx_Info_qualifier(pmix_info_t *p);
PMIX_EXPORT bool PMIx_Info_is_qualifier(const pmix_info_t *p);
PMIX_EXPORT void PMIx_Info_persistent(pmix_info_t *p);
PMIX_EXPORT bool PMIx_Info_is_persistent(const pmix_info_t *p);
/* The boolean a value says: PMIX_UNDEF is true (the key's presence), a
 * PMIX_BOOL its flag, a string read leniently (empty: true; a number: false
 * when 0; yes/true/enable/y/t or no/false/disable/n/f by prefix, any case:
 * PMIX_INFO_TRUE's reading, which knows yes/true/no/false and unsigned
 * numbers, and the words OpenPMIx's later releases added); anything else
 * PMIX_NON_BOOL. */
PMIX_EXPORT pmix_boolean_t PMIx_Info_true(const pmix_info_t *p);
PMIX_EXPORT pmix_boolean_t PMIx_Value_true(const pmix_value_t *v);

/* Construct, destruct, create (n constructed; NULL for 0), free (each
 * destructed, then the array) and load, as the macros of the same names:
 * an info's value is left alone when it is persistent; PMIx_Info_create
 * flags the last element PMIX_INFO_ARRAY_END; PMIx_Byte_object_load takes
 * its buffer over, PMIx_Envar_load copies its strings. */
PMIX_EXPORT void PMIx_Info_construct(pmix_info_t *p);
PMIX_EXPORT void PMIx_Info_destruct(pmix_info_t *p);
PMIX_EXPORT pmix_info_t *PMIx_Info_create(size_t n);
PMIX_EXPORT void PMIx_Info_free(pmix_info_t *p, size_t n);
PMIX_EXPORT void PMIx_Value_construct(pmix_value_t *val);
PMIX_EXPORT pmix_value_t *PMIx_Value_create(size_t n);
PMIX_EXPORT void PMIx_Value_free(pmix_value_t *v, size_t n);
PMIX_EXPORT void PMIx_Proc_construct(pmix_proc_t *p);
PMIX_EXPORT void PMIx_Proc_destruct(pmix_proc_t *p);
PMIX_EXPORT pmix_proc_t *PMIx_Proc_create(size_t n);
PMIX_EXPORT void PMIx_Proc_free(pmix_proc_t *p, size_t n);
PMIX_EXPORT void PMIx_Proc_load(pmix_proc_t *p, const char *nspace, pmix_rank_t rank);
PMIX_EXPORT void PMIx_Byte_object_construct(pmix_byte_object_t *b);
PMIX_EXPORT void PMIx_Byte_object_destruct(pmix_byte_object_t *g);
PMIX_EXPORT pmix_byte_object_t *PMIx_Byte_object_create(size_t n);
PMIX_EXPORT void PMIx_Byte_object_free(pmix_byte_object_t *g, size_t n);
PMIX_EXPORT void PMIx_Byte_object_load(pmix_byte_object_t *b, char *d, size_t sz);
PMIX_EXPORT void PMIx_Envar_construct(pmix_envar_t *e);
PMIX_EXPORT void PMIx_Envar_destruct(pmix_envar_t *e);
PMIX_EXPORT pmix_envar_t *PMIx_Envar_create(size_t n);
PMIX_EXPORT void PMIx_Envar_free(pmix_envar_t *e, size_t n);
PMIX_EXPORT void PMIx_Envar_load(pmix_envar_t *e, char *var, char *value, char separator);
PMIX_EXPORT void PMIx_Pdata_construct(pmix_pdata_t *p);
PMIX_EXPORT void PMIx_Pdata_destruct(pmix_pdata_t *p);
PMIX_EXPORT pmix_pdata_t *PMIx_Pdata_create(size_t n);
PMIX_EXPORT void PMIx_Pdata_free(pmix_pdata_t *p, size_t n);
PMIX_EXPORT void PMIx_Pdata_load(pmix_pdata_t *dest, const pmix_proc_t *p, const char *key, const void *data,
                                 pmix_data_type_t type);
PMIX_EXPORT void PMIx_Pdata_xfer(pmix_pdata_t *dest, pmix_pdata_t *src);
PMIX_EXPORT void PMIx_Query_construct(pmix_query_t *p);
PMIX_EXPORT void PMIx_Query_destruct(pmix_query_t *p);
PMIX_EXPORT pmix_query_t *PMIx_Query_create(size_t n);
PMIX_EXPORT void PMIx_Query_free(pmix_query_t *p, size_t n);
PMIX_EXPORT void PMIx_Query_qualifiers_create(pmix_query_t *p, size_t n);
PMIX_EXPORT void PMIx_Query_release(pmix_query_t *p);
PMIX_EXPORT void PMIx_App_construct(pmix_app_t *p);
PMIX_EXPORT void PMIx_App_destruct(pmix_app_t *p);
PMIX_EXPORT pmix_app_t *PMIx_App_create(size_t n);
PMIX_EXPORT void PMIx_App_free(pmix_app_t *p, size_t n);
PMIX_EXPORT void PMIx_App_info_create(pmix_app_t *p, size_t n);
PMIX_EXPORT void PMIx_App_release(pmix_app_t *p);
PMIX_EXPORT void PMIx_Regattr_construct(pmix_regattr_t *p);
PMIX_EXPORT void PMIx_Regattr_destruct(pmix_regattr_t *p);
PMIX_EXPORT pmix_regattr_t *PMIx_Regattr_create(size_t n);
PMIX_EXPORT void PMIx_Regattr_free(pmix_regattr_t *p, size_t n);
PMIX_EXPORT void PMIx_Regattr_load(pmix_regattr_t *info, const char *name, const char *key, pmix_data_type_t type,
                                   const char *description);
PMIX_EXPORT void PMIx_Regattr_xfer(pmix_regattr_t *dest, const pmix_regattr_t *src);
PMIX_EXPORT void PMIx_Data_array_init(pmix_data_array_t *p, pmix_data_type_t type);
PMIX_EXPORT void PMIx_Data_array_construct(pmix_data_array_t *p, size_t num, pmix_data_type_t type);
PMIX_EXPORT pmix_data_array_t *PMIx_Data_array_create(size_t n, pmix_data_type_t type);
PMIX_EXPORT void PMIx_Data_array_free(pmix_data_array_t *p);

/* The struct families of OpenPMIx 4.2.9 to master: _construct initializes,
 * _destruct releases what an element owns, _create(n) gives n constructed
 * elements (NULL for 0), _free(p, n) destructs n elements and frees p. The
 * statistics families are those of 4.2.9 and 5.0 (6.x dropped them). */
PMIX_EXPORT void PMIx_Coord_construct(pmix_coord_t *m);
PMIX_EXPORT void PMIx_Coord_destruct(pmix_coord_t *m);
PMIX_EXPORT pmix_coord_t *PMIx_Coord_create(size_t dims, size_t number);
PMIX_EXPORT void PMIx_Coord_free(pmix_coord_t *m, size_t number);
PMIX_EXPORT void PMIx_Geometry_construct(pmix_geometry_t *g);
PMIX_EXPORT void PMIx_Geometry_destruct(pmix_geometry_t *g);
PMIX_EXPORT pmix_geometry_t *PMIx_Geometry_create(size_t n);
PMIX_EXPORT void PMIx_Geometry_free(pmix_geometry_t *g, size_t n);
PMIX_EXPORT void PMIx_Device_distance_construct(pmix_device_distance_t *d);
PMIX_EXPORT void PMIx_Device_distance_destruct(pmix_device_distance_t *d);
PMIX_EXPORT pmix_device_distance_t *PMIx_Device_distance_create(size_t n);
PMIX_EXPORT void PMIx_Device_distance_free(pmix_device_distance_t *d, size_t n);
PMIX_EXPORT void PMIx_Endpoint_construct(pmix_endpoint_t *e);
PMIX_EXPORT void PMIx_Endpoint_destruct(pmix_endpoint_t *e);
PMIX_EXPORT pmix_endpoint_t *PMIx_Endpoint_create(size_t n);
PMIX_EXPORT void PMIx_Endpoint_free(pmix_endpoint_t *e, size_t n);
PMIX_EXPORT void PMIx_Proc_info_construct(pmix_proc_info_t *p);
PMIX_EXPORT void PMIx_Proc_info_destruct(pmix_proc_info_t *p);
PMIX_EXPORT pmix_proc_info_t *PMIx_Proc_info_create(size_t n);
PMIX_EXPORT void PMIx_Proc_info_free(pmix_proc_info_t *p, size_t n);
PMIX_EXPORT void PMIx_Proc_stats_construct(pmix_proc_stats_t *p);
PMIX_EXPORT void PMIx_Proc_stats_destruct(pmix_proc_stats_t *p);
PMIX_EXPORT pmix_proc_stats_t *PMIx_Proc_stats_create(size_t n);
PMIX_EXPORT void PMIx_Proc_stats_free(pmix_proc_stats_t *p, size_t n);
PMIX_EXPORT void PMIx_Disk_stats_construct(pmix_disk_stats_t *p);
PMIX_EXPORT void PMIx_Disk_stats_destruct(pmix_disk_stats_t *p);
PMIX_EXPORT pmix_disk_stats_t *PMIx_Disk_stats_create(size_t n);
PMIX_EXPORT void PMIx_Disk_stats_free(pmix_disk_stats_t *p, size_t n);
PMIX_EXPORT void PMIx_Net_stats_construct(pmix_net_stats_t *p);
PMIX_EXPORT void PMIx_Net_stats_destruct(pmix_net_stats_t *p);
PMIX_EXPORT pmix_net_stats_t *PMIx_Net_stats_create(size_t n);
PMIX_EXPORT void PMIx_Net_stats_free(pmix_net_stats_t *p, size_t n);
PMIX_EXPORT void PMIx_Node_stats_construct(pmix_node_stats_t *p);
PMIX_EXPORT void PMIx_Node_stats_destruct(pmix_node_stats_t *p);
PMIX_EXPORT pmix_node_stats_t *PMIx_Node_stats_create(size_t n);
PMIX_EXPORT void PMIx_Node_stats_free(pmix_node_stats_t *p, size_t n);
PMIX_EXPORT void PMIx_Topology_construct(pmix_topology_t *t);
PMIX_EXPORT pmix_topology_t *PMIx_Topology_create(size_t n);
PMIX_EXPORT void PMIx_Topology_free(pmix_topology_t *t, size_t n);
PMIX_EXPORT void PMIx_Cpuset_construct(pmix_cpuset_t *cpuset);
PMIX_EXPORT pmix_cpuset_t *PMIx_Cpuset_create(size_t n);
PMIX_EXPORT void PMIx_Cpuset_free(pmix_cpuset_t *c, size_t n);
PMIX_EXPORT void PMIx_Fabric_construct(pmix_fabric_t *p);
PMIX_EXPORT void PMIx_Device_construct(pmix_device_t *d);
PMIX_EXPORT void PMIx_Device_destruct(pmix_device_t *d);
PMIX_EXPORT pmix_device_t *PMIx_Device_create(size_t n);
PMIX_EXPORT void PMIx_Device_free(pmix_device_t *d, size_t n);
PMIX_EXPORT void PMIx_Resource_unit_construct(pmix_resource_unit_t *d);
PMIX_EXPORT void PMIx_Resource_unit_destruct(pmix_resource_unit_t *d);
PMIX_EXPORT pmix_resource_unit_t *PMIx_Resource_unit_create(size_t n);
PMIX_EXPORT void PMIx_Resource_unit_free(pmix_resource_unit_t *d, size_t n);
PMIX_EXPORT void PMIx_Node_pid_construct(pmix_node_pid_t *d);
PMIX_EXPORT void PMIx_Node_pid_destruct(pmix_node_pid_t *d);
PMIX_EXPORT pmix_node_pid_t *PMIx_Node_pid_create(size_t n);
PMIX_EXPORT void PMIx_Node_pid_free(pmix_node_pid_t *d, size_t n);
PMIX_EXPORT void PMIx_Regex2_construct(pmix_regex2_t *d);
PMIX_EXPORT void PMIx_Regex2_destruct(pmix_regex2_t *d);
PMIX_EXPORT pmix_regex2_t *PMIx_Regex2_create(size_t n);
PMIX_EXPORT void PMIx_Regex2_free(pmix_regex2_t *d, size_t n);

/* Names and strings of later releases. PMIx_Error_code is the inverse of
 * PMIx_Error_string (any case; INT32_MIN for an unknown name); the _string
 * forms returning char* are the caller's to free. */
PMIX_EXPORT pmix_status_t PMIx_Error_code(const char *errname);
PMIX_EXPORT const char *PMIx_Group_operation_string(pmix_group_operation_t op);
PMIX_EXPORT const char *PMIx_Alloc_inheritance_string(pmix_alloc_inheritance_t inheritance);
PMIX_EXPORT const char *PMIx_Resource_block_directive_string(pmix_resource_block_directive_t directive);
PMIX_EXPORT char *PMIx_Resource_unit_string(const pmix_resource_unit_t *unit);
PMIX_EXPORT char *PMIx_App_string(const pmix_app_t *app);

/* Values and info lists (OpenPMIx 5.0 to master). PMIx_Value_get_number
 * converts between the numeric types (PMIX_ERR_CHANGE_SIGN,
 * PMIX_ERR_LOST_PRECISION, PMIX_ERR_BAD_PARAM for a non-number); the
 * _get_size forms count the struct and all it refers to. */
PMIX_EXPORT pmix_status_t PMIx_Value_get_number(const pmix_value_t *value, void *dest, pmix_data_type_t type);
PMIX_EXPORT pmix_status_t PMIx_Value_get_size(const pmix_value_t *val, size_t *size);
PMIX_EXPORT pmix_status_t PMIx_Info_get_size(const pmix_info_t *val, size_t *size);
PMIX_EXPORT pmix_status_t PMIx_Info_list_prepend(void *ptr, const char *key, const void *value,
                                                 pmix_data_type_t type);
PMIX_EXPORT pmix_status_t PMIx_Info_list_add_unique(void *ptr, const char *key, const void *value,
                                                    pmix_data_type_t type, bool overwrite);
PMIX_EXPORT pmix_status_t PMIx_Info_list_add_value(void *ptr, const char *key, const pmix_value_t *value);
PMIX_EXPORT pmix_status_t PMIx_Info_list_add_value_unique(void *ptr, const char *key,
                                                          const pmix_value_t *value, bool overwrite);
PMIX_EXPORT pmix_status_t PMIx_Info_list_xfer_unique(void *ptr, const pmix_info_t *info, bool overwrite);
/* Walks a list: prev NULL gives the first entry, then pass the handle left in
 * *next (NULL after the last); handles last while the list is not changed. */
PMIX_EXPORT pmix_info_t *PMIx_Info_list_get_info(void *ptr, void *prev, void **next);
PMIX_EXPORT size_t PMIx_Info_list_get_size(void *ptr);

/* OpenPMIx 6.0's operations through the server to its host's session_control
 * and resource_block up-calls. PMIx_Session_control without cbfunc waits and
 * returns PMIX_OPERATION_SUCCEEDED on success; the blocking forms return
 * PMIX_ERR_WOULD_BLOCK on a library thread. */
PMIX_EXPORT pmix_status_t PMIx_Session_control(uint32_t sessionID, const pmix_info_t directives[], size_t ndirs,
                                               pmix_info_cbfunc_t cbfunc, void *cbdata);
PMIX_EXPORT pmix_status_t PMIx_Resource_block(pmix_resource_block_directive_t directive, char *block,
                                              const pmix_resource_unit_t *units, size_t nunits,
                                              const pmix_info_t *info, size_t ninfo);
PMIX_EXPORT pmix_status_t PMIx_Resource_block_nb(pmix_resource_block_directive_t directive, char *block,
                                                 const pmix_resource_unit_t *units, size_t nunits,
                                                 const pmix_info_t *info, size_t ninfo, pmix_op_cbfunc_t cbfunc,
                                                 void *cbdata);

/* Stops the library's progress (OpenPMIx 6.0): see pmix_common.h's
 * PMIX_PROGRESS_THREAD_FLUSH and _NAME. Afterwards no callback comes and
 * calls that need the server return PMIX_ERR_NOT_AVAILABLE. */
PMIX_EXPORT void PMIx_Progress_thread_stop(const pmix_info_t *info, size_t ninfo);

/* "cluster:nspace" (empty when the two do not fit in a pmix_nspace_t), and
 * its split at the first ':' (OpenPMIx 4.2.9 to master). */
PMIX_EXPORT void PMIx_Multicluster_nspace_construct(pmix_nspace_t target, pmix_nspace_t cluster,
                                                    pmix_nspace_t nspace);
PMIX_EXPORT void PMIx_Multicluster_nspace_parse(pmix_nspace_t target, pmix_nspace_t cluster,
                                                pmix_nspace_t nspace);

#if defined(c_plusplus) || defined(__cplusplus)
}
#endif

/* With PMIX_CXX_FUNCTION_MACROS defined before this header, the helper
 * macros call the functions above, as in OpenPMIx 5.0's headers. */
#ifdef PMIX_CXX_FUNCTION_MACROS
#include <pmix_function_macros.h>
#endif

#endif /* PMIx_H */
