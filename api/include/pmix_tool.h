/*
 * pmix_tool.h - the tool API (debuggers, launchers and other programs that
 * connect to a PMIx server without being one of its clients).
 *
 * Binary compatible with OpenPMIx 4.2.2. Only the calls implemented so far
 * are declared; the rest of the 4.2.2 tool API is added as it is built.
 */
#ifndef PMIx_TOOL_API_H
#define PMIx_TOOL_API_H

#include <pmix.h>

#if defined(c_plusplus) || defined(__cplusplus)
extern "C" {
#endif

/* Initializes the library as a tool and connects to a server chosen by the
 * info attributes (PMIX_CONNECT_TO_SYSTEM, PMIX_SERVER_PIDINFO, ...); *proc
 * receives the tool's identity. */
PMIX_EXPORT pmix_status_t PMIx_tool_init(pmix_proc_t *proc, pmix_info_t info[], size_t ninfo);

/* Disconnects and finalizes the tool library. */
PMIX_EXPORT pmix_status_t PMIx_tool_finalize(void);

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
