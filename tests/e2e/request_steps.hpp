// script_client's steps for the requests a client hands its host through
// the server (tests/e2e/request_steps.cpp): credentials, allocation,
// monitoring, stdin, fabrics, and waiting for an event.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include <pmix_common.h>

namespace pmix::test {

using say_fn = std::function<void(const std::string& step, pmix_status_t rc, const std::string& extra)>;

// Runs `step` if it is one of these; false if it is not.
//   credential:<file>[:<seconds>] | credential_nb:<file>  PMIx_Get_credential(_nb), written
//                                 to <file>; prints the size and the PMIX_CRED_TYPE. With
//                                 <seconds>: valid that long (PMIX_TIMEOUT, an int, or an
//                                 int64 when it does not fit one)
//   validate:<file> | validate_nb:<file>  PMIx_Validate_credential of <file>'s bytes;
//                                 prints uid=<PMIX_USERID> gid=<PMIX_GRPID>
//   corrupt:<file>                flips one bit in the middle of <file>
//   allocate:<directive> | allocate_nb:<directive>  PMIx_Allocation_request(_nb) with
//                                 {"want.nodes": "2"}; prints the first string result
//   allocate:<directive>:<field>=<value>[:...]  PMIx_Allocation_request with the Standard's
//                                 attributes: nodes, cpus (PMIX_ALLOC_NUM_NODES / _NUM_CPUS,
//                                 uint64), time (PMIX_ALLOC_TIME, uint32), nodelist, reqid,
//                                 id (PMIX_ALLOC_NODE_LIST / _REQ_ID / _ID; id=last: the
//                                 PMIX_ALLOC_ID of the last answer that had one), mem
//                                 (PMIX_ALLOC_MEM_SIZE, float, required); prints every
//                                 result as key=value
//   heartbeat:<seconds>:<drops>   PMIx_Process_monitor(PMIX_MONITOR_HEARTBEAT, id "hb")
//   heartbeat_ptr:<seconds>:<drops>  the same with PMIX_MONITOR_HEARTBEAT a NULL PMIX_POINTER
//   beats:<n>:<ms>                n PMIx_Heartbeat() calls, <ms> apart
//   monitor_cancel                PMIx_Process_monitor(PMIX_MONITOR_CANCEL "hb")
//   monitor_file:<path>           PMIx_Process_monitor(PMIX_MONITOR_FILE)
//   on_event:<code>               registers a handler for <code> (counts its events)
//   wait_event:<code>             waits (up to 120 s) for one; prints its source
//   fabric                        PMIx_Fabric_register, _update, _deregister of "fab";
//                                 prints the info count and the first string item
//   fabric_nb                     the same with the _nb forms
//   iof_push:<rank|*>:<text> | iof_push_end:<rank|*>  PMIx_IOF_push to <rank> of our job
//                                 ("\n" in <text> stands for a newline)
//   iof_pull:<nspace>:<rank|*>:<out|err|all> | iof_pull_nb:...  PMIx_IOF_pull (blocking:
//                                 no regcbfunc); prints the reference
//   wait_iof:<n>                  waits (up to 120 s) for n payloads; prints
//                                 "<channel>/<source>/<text>" each, '|'-joined
//   wait_iof_text:<text>          waits (up to 120 s) until the payloads, joined, hold
//                                 <text>; prints how many payloads came
//   iof_save:<file>               writes the bytes of every payload so far, joined, to
//                                 <file>; prints the count and each "<channel>/<source>"
//   iof_deregister                PMIx_IOF_deregister of the last pull
bool run_request_step(const std::string& step, const std::vector<std::string>& parts, const pmix_proc_t& me,
                      const say_fn& say);

}  // namespace pmix::test
