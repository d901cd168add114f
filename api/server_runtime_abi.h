/*
 * The interface between libpmix.so.2 and the server runtime it loads on the
 * first PMIx_server_init (libpmix-server.so.2, which carries CAF and hwloc, so
 * that client processes never load them). Internal: not installed.
 *
 * libpmix-server.so.2 exports one symbol, pmix_cxx_server_runtime(), which
 * returns a table of the server API implementations. The PMIx_server_*
 * functions of libpmix.so.2 forward to it.
 */
#ifndef PMIX_CXX_SERVER_RUNTIME_ABI_H
#define PMIX_CXX_SERVER_RUNTIME_ABI_H

#include <pmix_server.h>

#ifdef __cplusplus
extern "C" {
#endif

#define PMIX_CXX_SERVER_RUNTIME_VERSION 12u

/* Counters and states for tests (tests/, tools/): not part of the PMIx API. */
typedef struct pmix_cxx_rank_view {
    pmix_rank_t rank;
    int registered;
    int proc_cnt;
    int peers;      /* peer actors the rank still owns, tombstones included */
    int tombstones; /* finalized peers kept at peerid */
    int has_peerid;
    int dead;       /* a peer that died without finalizing, kept at peerid */
    int actor;      /* the rank has an actor (registered ranks get one when first needed) */
    int waiting_gets; /* gets waiting at the rank for a process of it to connect */
} pmix_cxx_rank_view_t;

typedef struct pmix_cxx_nspace_view {
    pmix_nspace_t nspace;
    int nlocalprocs;
    int nfinalized;
    int local_app_fini_fired;
    int local_app_fini_runs; /* how often "all local processes finalized" ran */
    size_t nranks;
    pmix_cxx_rank_view_t *ranks;
} pmix_cxx_nspace_view_t;

typedef struct pmix_cxx_server_view {
    size_t nnspaces;
    pmix_cxx_nspace_view_t *nspaces;
    size_t fences_in_flight;
    size_t connections;
    size_t actors_running; /* actors alive in the server's actor system */
    size_t departed;       /* ranks the server remembers as gone */
    size_t pending_upcalls; /* host up-calls the server actor waits for */
    size_t dropped_sends;   /* replies and events for closed peers, dropped unsent */
    size_t board_posts;     /* fence replies posted on a fence board */
    size_t sensors;         /* heartbeat monitors the server runs for its clients */
    size_t iof_registrations; /* PMIx_IOF_pull registrations the server keeps */
    size_t stdin_held;        /* pushes held while their producer's stdin is stopped */
} pmix_cxx_server_view_t;

/* What libpmix.so.2 does for the runtime: state kept in the library the
 * host called (set_library_hooks, once, right after loading; the functions
 * live as long as the process). */
typedef struct pmix_cxx_library_hooks {
    /* A client's PMIX_QUERY_ATTRIBUTE_SUPPORT query (its qualifiers),
     * answered for every level, the host's from its PMIx_Register_attributes
     * (api/attribute_support.hpp gives the form). The caller frees
     * *results with PMIX_INFO_FREE. PMIX_ERR_NOT_FOUND: nothing matched. */
    pmix_status_t (*attribute_support)(const pmix_info_t *qualifiers, size_t nqualifiers,
                                       pmix_info_t **results, size_t *nresults);
} pmix_cxx_library_hooks_t;

typedef struct pmix_cxx_server_runtime {
    unsigned version;
    /* Non-zero on a thread that runs server library code (spec 002). */
    int (*in_library_thread)(void);
    pmix_status_t (*init)(pmix_server_module_t *module, pmix_info_t info[], size_t ninfo);
    pmix_status_t (*finalize)(void);
    pmix_status_t (*register_nspace)(const pmix_nspace_t nspace, int nlocalprocs,
                                     pmix_info_t info[], size_t ninfo,
                                     pmix_op_cbfunc_t cbfunc, void *cbdata);
    void (*deregister_nspace)(const pmix_nspace_t nspace, pmix_op_cbfunc_t cbfunc, void *cbdata);
    pmix_status_t (*register_client)(const pmix_proc_t *proc, uid_t uid, gid_t gid,
                                     void *server_object, pmix_op_cbfunc_t cbfunc, void *cbdata);
    void (*deregister_client)(const pmix_proc_t *proc, pmix_op_cbfunc_t cbfunc, void *cbdata);
    pmix_status_t (*setup_fork)(const pmix_proc_t *proc, char ***env);
    /* Introspection for tests; free the result with view_free. */
    pmix_status_t (*view)(pmix_cxx_server_view_t *out);
    void (*view_free)(pmix_cxx_server_view_t *view);
    /* PMIx_Progress: one round of the server's work when the host drives
     * progress (PMIX_EXTERNAL_PROGRESS); nothing otherwise. */
    void (*progress)(void);
    pmix_status_t (*collect_job_info)(pmix_proc_t *procs, size_t nprocs, pmix_data_buffer_t *dbuf);
    /* Non-zero while a server is initialized (and not finalizing); its
     * identity goes to *self when self is not NULL. */
    int (*running)(pmix_proc_t *self);
    /* PMIx_Notify_event in a server: delivers to the clients and tools in
     * range; blocking when cbfunc is NULL. */
    pmix_status_t (*notify)(pmix_status_t status, const pmix_proc_t *source,
                            pmix_data_range_t range, const pmix_info_t info[], size_t ninfo,
                            pmix_op_cbfunc_t cbfunc, void *cbdata);
    /* Runs fn(arg) on a thread of the server runtime (event handlers of the
     * server process). */
    pmix_status_t (*post)(void (*fn)(void *), void *arg);
    /* PMIx_server_dmodex_request, _IOF_deliver, _setup_application and
     * _setup_local_support, as pmix_server.h declares them. */
    pmix_status_t (*dmodex_request)(const pmix_proc_t *proc, pmix_dmodex_response_fn_t cbfunc,
                                    void *cbdata);
    pmix_status_t (*iof_deliver)(const pmix_proc_t *source, pmix_iof_channel_t channel,
                                 const pmix_byte_object_t *bo, const pmix_info_t info[],
                                 size_t ninfo, pmix_op_cbfunc_t cbfunc, void *cbdata);
    pmix_status_t (*setup_application)(const pmix_nspace_t nspace, pmix_info_t info[],
                                       size_t ninfo, pmix_setup_application_cbfunc_t cbfunc,
                                       void *cbdata);
    pmix_status_t (*setup_local_support)(const pmix_nspace_t nspace, pmix_info_t info[],
                                         size_t ninfo, pmix_op_cbfunc_t cbfunc, void *cbdata);
    /* The running server's URI and its alternatives (comma-separated,
     * possibly empty), as malloc'd strings the caller frees. */
    pmix_status_t (*contact)(char **uri, char **alt_uris);
    /* The library's hooks; hooks stays valid for the life of the process. */
    void (*set_library_hooks)(const pmix_cxx_library_hooks_t *hooks);
    /* PMIx_server_collect_inventory, _deliver_inventory,
     * _define_process_set, _delete_process_set, _register_resources and
     * _deregister_resources, as pmix_server.h declares them. */
    pmix_status_t (*collect_inventory)(pmix_info_t directives[], size_t ndirs,
                                       pmix_info_cbfunc_t cbfunc, void *cbdata);
    pmix_status_t (*deliver_inventory)(pmix_info_t info[], size_t ninfo, pmix_info_t directives[],
                                       size_t ndirs, pmix_op_cbfunc_t cbfunc, void *cbdata);
    pmix_status_t (*define_process_set)(const pmix_proc_t *members, size_t nmembers,
                                        const char *pset_name);
    pmix_status_t (*delete_process_set)(const char *pset_name);
    pmix_status_t (*register_resources)(pmix_info_t info[], size_t ninfo, pmix_op_cbfunc_t cbfunc,
                                        void *cbdata);
    pmix_status_t (*deregister_resources)(pmix_info_t info[], size_t ninfo,
                                          pmix_op_cbfunc_t cbfunc, void *cbdata);
    /* The fault plane's invariant checker (docs/fault-injection.md): with
     * nspace, what must hold once every process of that namespace has
     * ended (before its deregistration); with NULL, once every namespace
     * was deregistered. Checked again for up to wait_ms until it holds
     * (sockets closing are still being handled). *report, if report is not
     * NULL, gets a malloc'd text: the plan, seed, trace hashes, decisions
     * and violations. PMIX_SUCCESS: every invariant held; PMIX_ERROR: not;
     * PMIX_ERR_INIT: no server. Works without a plane too. */
    pmix_status_t (*faults_check)(const char *nspace, int wait_ms, char **report);
    /* The plane stops injecting (its ledger goes on); PMIX_ERR_NOT_FOUND
     * without a plane. */
    pmix_status_t (*faults_disarm)(void);
    /* PMIx_server_IOF_flow_control, as pmix_server.h declares it. */
    pmix_status_t (*iof_flow_control)(const pmix_proc_t *source, pmix_iof_channel_t channel, bool xoff,
                                      const pmix_info_t directives[], size_t ndirs, pmix_op_cbfunc_t cbfunc,
                                      void *cbdata);
} pmix_cxx_server_runtime_t;

typedef const pmix_cxx_server_runtime_t *(*pmix_cxx_server_runtime_fn)(void);

#define PMIX_CXX_SERVER_RUNTIME_SYMBOL "pmix_cxx_server_runtime"
#define PMIX_CXX_SERVER_LIBRARY "libpmix-server.so.2"

#ifdef __cplusplus
}
#endif

#endif
