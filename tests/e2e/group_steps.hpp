// script_client's steps for PMIx groups and process sets (tests/e2e/group_steps.cpp). <ranks>
// is a comma-separated list of ranks of this process's job, or "*" (all); an
// item <nspace>/<rank> names a process of another job.
#pragma once

#include <pmix_common.h>

#include <string>
#include <vector>

#include "tests/e2e/request_steps.hpp"

namespace pmix::test {

// Runs `step` if it is one of these; false if it is not.
//   group_construct:<name>:<ranks>[:<opt>+<opt>...] | group_construct_nb:...
//                                 PMIx_Group_construct(_nb); options: ctx
//                                 (PMIX_GROUP_ASSIGN_CONTEXT_ID), timeout=<s>
//                                 (PMIX_TIMEOUT), cid=<n> (PMIX_GROUP_INFO with
//                                 PMIX_GROUP_LOCAL_CID n, as Open MPI), notify
//                                 (PMIX_GROUP_NOTIFY_TERMINATION), optional
//                                 (PMIX_GROUP_OPTIONAL); prints the
//                                 results: "id=<name> members=<r,r> ctx=<id|none>"
//                                 (a context id not first among the results:
//                                 "ctx=<id>(not first)")
//   group_construct_reqd:<name>:<ranks>:<key>  the same with one required bool
//                                 directive <key>
//   group_invite:<name>:<ranks>[:ctx] | group_invite_nb:...  PMIx_Group_invite(_nb);
//                                 prints the results as above
//   group_join:<name>:<leader rank|->:<accept|decline> | group_join_nb:...
//                                 PMIx_Group_join(_nb); prints the results
//   group_leave:<name> | group_leave_nb:<name>        PMIx_Group_leave(_nb)
//   group_destruct:<name>[:timeout=<s>] | group_destruct_nb:<name>  PMIx_Group_destruct(_nb)
//   group_cid:<member>            PMIx_Get(member, PMIX_GROUP_LOCAL_CID) qualified
//                                 by the last context id returned; prints it
//   group_get:<group>:<r>:<key>   PMIx_Get({group, r}, key); prints the string
//   on_group_event:<code>         registers a handler for events <code>
//   wait_group_event:<code>       waits (up to 120 s) for the next one not waited
//                                 for yet; prints "<source> id=<PMIX_GROUP_ID>",
//                                 " affected=<nspace>.<rank>" (PMIX_EVENT_AFFECTED_PROC),
//                                 and " pset=<name> members=<n>" when it carries
//                                 PMIX_PSET_NAME (process-set events)
//   psets                         PMIx_Query_info of PMIX_QUERY_NUM_PSETS and
//                                 PMIX_QUERY_PSET_NAMES; prints "num=<n> names=<names>"
//   pset_members:<name>           PMIx_Query_info of PMIX_QUERY_PSET_MEMBERSHIP of
//                                 that set; prints the members' "<nspace>.<rank>"s
bool run_group_step(const std::string& step, const std::vector<std::string>& parts, const pmix_proc_t& me,
                    const say_fn& say);

}  // namespace pmix::test
