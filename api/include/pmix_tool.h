/*
 * pmix_tool.h - the tool API (debuggers, launchers and other programs that
 * connect to a PMIx server without being one of its clients).
 *
 * Binary compatible with OpenPMIx 4.2.2. A tool may be connected to several
 * servers at once; one of them, the primary, serves the client calls
 * (docs/architecture.md, "Tools").
 */
#ifndef PMIx_TOOL_API_H
#define PMIx_TOOL_API_H

#include <pmix.h>
#include <pmix_server.h> /* pmix_server_module_t (PMIx_tool_set_server_module), as OpenPMIx 4.2.9 includes it */

#if defined(c_plusplus) || defined(__cplusplus)
extern "C" {
#endif

/* Initializes the library as a tool and connects to a server chosen by the
 * info attributes (PMIX_CONNECT_TO_SYSTEM, PMIX_SERVER_PIDINFO, ...); *proc
 * receives the tool's identity. */
PMIX_EXPORT pmix_status_t PMIx_tool_init(pmix_proc_t *proc, pmix_info_t info[], size_t ninfo);

/* Closes every server connection and finalizes the tool library. */
PMIX_EXPORT pmix_status_t PMIx_tool_finalize(void);

/* Connects to one more server, found by the info attributes as
 * PMIx_tool_init finds its first (PMIX_SERVER_URI, PMIX_SERVER_PIDINFO,
 * PMIX_SERVER_NSPACE, PMIX_CONNECT_TO_SYSTEM, ...; info is required:
 * PMIX_ERR_BAD_PARAM without). *myproc (may be NULL) receives the tool's
 * identity, *server (may be NULL) the server's. With PMIX_PRIMARY_SERVER the
 * server becomes the primary one (the one the other calls use); without, the
 * primary server stays as it was. A server already connected: its identity,
 * no second connection. No such server: PMIX_ERR_UNREACH. */
PMIX_EXPORT pmix_status_t PMIx_tool_attach_to_server(pmix_proc_t *myproc, pmix_proc_t *server,
                                                     pmix_info_t info[], size_t ninfo);

/* Closes the connection to *server; the library stays initialized. After
 * the primary server's, calls that need a server return PMIX_ERR_UNREACH
 * until PMIx_tool_set_server or PMIx_tool_attach_to_server names another.
 * NULL: no primary server from now on, every connection kept.
 * PMIX_ERR_NOT_FOUND: no connection to that server. */
PMIX_EXPORT pmix_status_t PMIx_tool_disconnect(const pmix_proc_t *server);

/* The tool's own host module (OpenPMIx 4.2.9): its allocate and
 * resource_block serve this process's own PMIx_Allocation_request and
 * PMIx_Resource_block. Read as far as PMIx_tool_init's info said with
 * PMIX_CXX_SERVER_MODULE_SLOTS (4.2.2's 28 slots by default); once per init. */
PMIX_EXPORT pmix_status_t PMIx_tool_set_server_module(pmix_server_module_t *module);

/* Whether the tool has a live connection to its primary server (OpenPMIx
 * 4.2.9): false before init, without a server, after PMIx_tool_disconnect or
 * once the connection is lost. */
PMIX_EXPORT bool PMIx_tool_is_connected(void);

/* The servers the tool is connected to, the primary first, then in the order
 * they were attached: an array the caller frees with PMIX_PROC_FREE.
 * PMIX_ERR_UNREACH (and no array) when there is none. */
PMIX_EXPORT pmix_status_t PMIx_tool_get_servers(pmix_proc_t *servers[], size_t *nservers);

/* Makes *server, one the tool is connected to, the primary server; the
 * tool's own identity: no primary server. PMIX_WAIT_FOR_CONNECTION waits up
 * to PMIX_TIMEOUT seconds (none: no wait) for a connection to it made by
 * another thread, and then gives PMIX_ERR_NOT_FOUND; without waiting, a
 * server not connected gives PMIX_ERR_UNREACH. */
PMIX_EXPORT pmix_status_t PMIx_tool_set_server(const pmix_proc_t *server,
                                               pmix_info_t info[], size_t ninfo);

/* Receives forwarded output: payload arrived on channel from *source, for
 * the handler registered as iofhdlr. The payload and info belong to the
 * library. */
typedef void (*pmix_iof_cbfunc_t)(size_t iofhdlr, pmix_iof_channel_t channel,
                                  pmix_proc_t *source, pmix_byte_object_t *payload,
                                  pmix_info_t info[], size_t ninfo);

/* The output of procs on the channels, to cbfunc (on the library's thread);
 * regcbfunc gets the reference for PMIx_IOF_deregister (NULL: the call
 * waits and returns the reference). */
PMIX_EXPORT pmix_status_t PMIx_IOF_pull(const pmix_proc_t procs[], size_t nprocs,
                                        const pmix_info_t directives[], size_t ndirs,
                                        pmix_iof_channel_t channel, pmix_iof_cbfunc_t cbfunc,
                                        pmix_hdlr_reg_cbfunc_t regcbfunc, void *regcbdata);
PMIX_EXPORT pmix_status_t PMIx_IOF_deregister(size_t iofhdlr,
                                              const pmix_info_t directives[], size_t ndirs,
                                              pmix_op_cbfunc_t cbfunc, void *cbdata);

/* Bytes for the targets' stdin (a tool); NULL bo or PMIX_IOF_COMPLETE ends
 * it. With a NULL cbfunc the call waits. */
PMIX_EXPORT pmix_status_t PMIx_IOF_push(const pmix_proc_t targets[], size_t ntargets,
                                        pmix_byte_object_t *bo,
                                        const pmix_info_t directives[], size_t ndirs,
                                        pmix_op_cbfunc_t cbfunc, void *cbdata);

#if defined(c_plusplus) || defined(__cplusplus)
}
#endif

#endif /* PMIx_TOOL_API_H */
