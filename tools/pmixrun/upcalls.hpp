// pmixrun's server module: the up-calls of a one-node PMIx host.
//
// Every up-call copies its arguments, post()s a task to the host thread
// (host_thread.hpp) and returns PMIX_SUCCESS; the task does the work and
// calls the callback. client_connected / client_finalized only count, and
// return PMIX_OPERATION_SUCCEEDED.
//
//  abort       prints the message, calls back, then ends every job; the
//              abort's status becomes pmixrun's exit status.
//  fence_nb    one node: the node's data is all the data.
//  publish / lookup / unpublish
//              the data store (datastore.hpp). Directives read: PMIX_RANGE
//              (default PMIX_RANGE_SESSION), PMIX_PERSISTENCE (default
//              PMIX_PERSIST_SESSION), PMIX_USERID (default: the uid pmixrun
//              registered every client with), PMIX_WAIT and PMIX_TIMEOUT
//              (seconds; 0 or absent: no limit) on lookup.
//  spawn       starts the apps as one new namespace (jobs.hpp) and calls back
//              with its name once every process is exec'd; a program that
//              cannot run gives PMIX_ERR_JOB_FAILED_TO_LAUNCH, a spawn during
//              termination PMIX_ERR_JOB_CANCELED.
//  connect     records the group. PMIX_ERR_NOT_FOUND if a namespace of the
//              group was never registered here.
//  disconnect  forgets the group; a group that was never connected is
//              acknowledged with PMIX_SUCCESS, as Open MPI's ORTE does (its
//              disconnect up-call is a fence over the procs).
//  tool_connected
//              the identity the tool proposes (PMIX_TOOL_NSPACE, PMIX_TOOL_RANK,
//              default 0), else "pmixrun-server.<pid>.tool.<k>", rank 0.
//              OpenPMIx accepts no tool without this up-call.
//  query       PMIX_QUERY_NAMESPACES (the jobs not ended, comma-separated),
//              PMIX_QUERY_PROC_TABLE and PMIX_QUERY_LOCAL_PROC_TABLE (one
//              node: the same; the job named by the PMIX_NSPACE qualifier, a
//              PMIX_DATA_ARRAY of pmix_proc_info_t), PMIX_QUERY_NAMESPACE_INFO
//              (per job, or the one PMIX_NSPACE names: an info array of
//              PMIX_NSPACE, PMIX_JOB_SIZE, PMIX_CMD_LINE), PMIX_JOB_SIZE (of
//              the PMIX_NSPACE job). Other keys: PMIX_ERR_NOT_FOUND, or
//              PMIX_ERR_PARTIAL_SUCCESS beside known ones.
//  log         PMIX_LOG_STDOUT / PMIX_LOG_STDERR (strings) to pmixrun's
//              stdout / stderr, every line prefixed "[nspace:rank] " (the
//              PMIX_LOG_SOURCE directive, else the caller); PMIX_LOG_SYSLOG,
//              PMIX_LOG_LOCAL_SYSLOG, PMIX_LOG_GLOBAL_SYSLOG to syslog(3) at
//              PMIX_LOG_SYSLOG_PRI (default LOG_ERR). PMIX_LOG_ONCE: only the
//              first channel that works. Any other entry is ignored, unless
//              it is marked PMIX_INFO_REQD: then PMIX_ERR_NOT_SUPPORTED.
//  iof_pull    agrees (PMIX_SUCCESS) for processes of running jobs (a rank, or
//              PMIX_RANK_WILDCARD) and channels that include stdout or
//              stderr: pmixrun delivers all its processes' output to the
//              server (iof.hpp), which passes on what each puller asked for.
//              Unknown or ended jobs and ranks: PMIX_ERR_NOT_FOUND; other
//              channels only: PMIX_ERR_NOT_SUPPORTED. PMIX_IOF_STOP is
//              acknowledged.
//  push_stdin  the bytes go into the targets' stdin pipes (stdin.hpp), after
//              what waits for them already; the callback comes once every
//              target's pipe took them (PMIX_ERR_IOF_FAILURE if a target
//              ended first). No bytes, an empty payload or PMIX_IOF_COMPLETE
//              end the targets' input: their pipes close once written. A
//              wildcard rank is every process of that job whose input is
//              open. Unknown or ended jobs and ranks: PMIX_ERR_NOT_FOUND; a
//              named process whose input ended: PMIX_ERR_IOF_COMPLETE (and
//              nothing is sent to any target).
//  allocate    one node, shared with the jobs, for as long as pmixrun runs.
//              PMIX_ALLOC_NEW, _EXTEND and _REAQUIRE are granted when they
//              ask at most what it has: PMIX_ALLOC_NUM_NODES <= 1,
//              PMIX_ALLOC_NODE_LIST naming only this node, PMIX_ALLOC_NUM_CPUS
//              <= its usable CPUs, PMIX_ALLOC_TIME within --timeout; more is
//              PMIX_ERR_OUT_OF_RESOURCE. The answer: PMIX_ALLOC_ID (NEW: a new
//              "pmixrun.<pid>.alloc.<k>"; EXTEND/REAQUIRE: the PMIX_ALLOC_ID
//              given, else "...alloc.0", the job's own), PMIX_ALLOC_REQ_ID if
//              given, PMIX_ALLOC_NUM_NODES 1, PMIX_ALLOC_NODE_LIST (this
//              host), PMIX_ALLOC_NUM_CPUS (all usable CPUs), PMIX_ALLOC_TIME
//              (as asked, else what --timeout leaves). PMIX_ALLOC_RELEASE:
//              forgets a granted PMIX_ALLOC_ID (PMIX_ERR_NOT_FOUND if not
//              held), success without one. Any other required attribute:
//              PMIX_ERR_NOT_SUPPORTED; other directives too.
//  group       construct / destruct of a group the server hands on (ours
//              completes a group of its own clients without this up-call,
//              so in a one-node job it is not made; OpenPMIx 4.2.2 hands on
//              every construct that asks for a context ID, and destructs,
//              and refuses them without this up-call). Construct: every
//              member in a job pmixrun started (else PMIX_ERR_NOT_FOUND), a
//              name not constructed here (else PMIX_ERR_EXISTS); with
//              PMIX_GROUP_ASSIGN_CONTEXT_ID the answer is
//              PMIX_GROUP_CONTEXT_ID from pmixrun's own counter, from 2^32
//              (apart from the IDs a server assigns itself: 1, 2, ...).
//              Directives other than that and PMIX_GROUP_LOCAL_ONLY, if
//              required: PMIX_ERR_NOT_SUPPORTED. Destruct: forgets the group,
//              PMIX_SUCCESS. A group is also forgotten when the job of one
//              of its members ends (groups_job_ended).
#pragma once

#include <pmix_server.h>

#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "datastore.hpp"
#include "jobs.hpp"
#include "stdin.hpp"

namespace pmixrun {

struct host_context {
  launcher* jobs = nullptr;  // nullptr: no spawn, no counting (unit tests)
  datastore* store = nullptr;
  // Whether a namespace was ever registered here (connect's check).
  std::function<bool(const std::string&)> known_nspace;
  stdin_forwarder* input = nullptr;  // nullptr: push_stdin is PMIX_ERR_NOT_SUPPORTED
  uint32_t cpus = 1;                 // the node's usable CPUs (allocate)
  // When --timeout ends the run, if it does (allocate's PMIX_ALLOC_TIME).
  std::optional<std::chrono::steady_clock::time_point> deadline;
  bool verbose = false;
};

// The data store's side of publish / lookup / unpublish, as the up-calls
// above do it (directives read there), for a host that gets the requests
// some other way (pmixd's node 0). Host thread only.
pmix_status_t store_publish(datastore& store, const pmix_proc_t& who, const pmix_info_t info[],
                            std::size_t ninfo, bool verbose);
void store_lookup(datastore& store, const pmix_proc_t& who, const std::vector<std::string>& keys,
                  const pmix_info_t info[], std::size_t ninfo, bool verbose, pmix_lookup_cbfunc_t cbfunc,
                  void* cbdata);
pmix_status_t store_unpublish(datastore& store, const pmix_proc_t& who, const std::vector<std::string>* keys,
                              const pmix_info_t info[], std::size_t ninfo);

// The module for PMIx_server_init. `ctx` must outlive the server.
pmix_server_module_t host_module(host_context& ctx);

// Tells the library what the up-calls above support
// (PMIx_Register_attributes), after PMIx_server_init.
pmix_status_t register_attributes();

// Groups connected and not disconnected yet, and connects acknowledged.
std::size_t connected_groups();
std::size_t connects();
// Groups the group up-call constructed and not destructed yet.
std::size_t constructed_groups();
// The job `nspace` has ended: the groups with a member in it are forgotten.
void groups_job_ended(const std::string& nspace);

}  // namespace pmixrun
