// The messages pmixd daemons and the launcher (pmixd launch, which pmixrun
// runs for --daemons / --hosts) exchange as CAF remote actors over the
// middleman (docs/multinode.md). Every remote message is an atom followed by
// CAF's built-in types (strings, integers, string vectors and maps, actor
// handles), except the job plan, which is registered by name on every node
// (add_types).
//
//  launcher -> daemon   (job_atom, job_plan) -> (int32 status, string error)
//                       (term_atom, nspace, reason)          end the job's processes
//                       (spawn_atom, parent, apps) -> (int32 status, string nspace or error)
//                                                 (parent: "nspace:rank", sent by its node)
//  daemon -> launcher   (output_atom, nspace, rank, channel, bytes)   0 stdout, 1 stderr
//                       (exited_atom, nspace, rank, wait status)
//                       (jobdone_atom, nspace, node)          the job ended on that node
//                       (abort_atom, nspace, rank, status, message)
//  daemon -> daemon     (hello, session, node id, daemon)    to each lower node, on the
//                                                            connection it opened
//                       (fence_atom, session, key, round, blocks)  blocks: node id -> data
//                       (modex_atom, nspace, rank) -> (int32 status, string data)
//                       (notify_atom, packed event) -> (int32 status, string)  delivered
//                                                 to that node's clients (PMIx_Notify_event)
//                       (iofpull_atom, session, nspace, rank, channels, stop, node)
//                                                 -> (int32 status, string)  the output of
//                                                 (nspace, rank) is pulled at that node
//                       (iofdata_atom, nspace, rank, channel, bytes)  pulled output
//  daemon or launcher -> daemon
//                       (stdin_atom, session, targets, bytes, end) -> (int32 status,
//                                                 string count)  pushed stdin for that
//                                                 node's processes ("nspace:rank" or
//                                                 "nspace:*"); answered once their pipes
//                                                 took it: count is how many processes
//  daemon -> node 0     the session's data store (wire.hpp packs the C data):
//                       (publish_atom, session, packed request) -> (int32 status, string)
//                       (lookup_atom, session, packed request) -> (int32 status, packed pdata)
//                       (unpub_atom, session, packed request) -> (int32 status, string)
//                       (procend_atom, session, nspace, rank)  a process of it ended
#pragma once

#include <caf/actor.hpp>
#include <caf/actor_system_config.hpp>
#include <caf/atom.hpp>
#include <caf/meta/type_name.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace pmixd {

using job_atom = caf::atom_constant<caf::atom("job")>;
using term_atom = caf::atom_constant<caf::atom("term")>;
using output_atom = caf::atom_constant<caf::atom("output")>;
using exited_atom = caf::atom_constant<caf::atom("exited")>;
using jobdone_atom = caf::atom_constant<caf::atom("jobdone")>;
using abort_atom = caf::atom_constant<caf::atom("abort")>;
using publish_atom = caf::atom_constant<caf::atom("publish")>;
using lookup_atom = caf::atom_constant<caf::atom("lookup")>;
using unpub_atom = caf::atom_constant<caf::atom("unpub")>;
using notify_atom = caf::atom_constant<caf::atom("notify")>;
using spawn_atom = caf::atom_constant<caf::atom("spawn")>;
using fence_atom = caf::atom_constant<caf::atom("fence")>;
using modex_atom = caf::atom_constant<caf::atom("modex")>;
using procend_atom = caf::atom_constant<caf::atom("procend")>;
using iofpull_atom = caf::atom_constant<caf::atom("iofpull")>;
using iofdata_atom = caf::atom_constant<caf::atom("iofdata")>;
using stdin_atom = caf::atom_constant<caf::atom("stdin")>;
// Every second between a session's daemons and its launcher (liveness.hpp):
// session name, the sender's node id (the launcher: launcher_node).
using beat_atom = caf::atom_constant<caf::atom("beat")>;
constexpr uint32_t launcher_node = UINT32_MAX;

// One app of a job: its ranks are consecutive, app after app.
struct app_plan {
  std::vector<std::string> argv;  // argv[0] is the program, searched in PATH
  std::vector<std::string> env;   // NAME=value for this app's processes
  std::string cwd;                // empty: the daemon's
  uint32_t nprocs = 1;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, app_plan& x) {
  return f(caf::meta::type_name("pmixd_app_plan"), x.argv, x.env, x.cwd, x.nprocs);
}

// One job as every node runs it. The launcher sends it to each daemon with
// `this_node` set to the receiver's node id.
struct job_plan {
  std::string nspace;
  std::vector<app_plan> apps;
  std::vector<std::string> env;  // NAME=value for every process
  uint32_t size = 0;             // the apps' nprocs together
  std::vector<std::string> nodes;    // node names, by node id
  std::vector<std::string> daemons;  // "address:port" of each node's pmixd, by node id
  std::vector<uint32_t> node_of;     // by rank
  uint32_t this_node = 0;
  std::string fence;  // "tree" or "ring" (docs/multinode.md)
  std::string parent; // "nspace:rank" of a spawn's parent, empty for the first job
  caf::actor launcher;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, job_plan& x) {
  return f(caf::meta::type_name("pmixd_job_plan"), x.nspace, x.apps, x.env, x.size, x.nodes,
           x.daemons, x.node_of, x.this_node, x.fence, x.parent, x.launcher);
}

// Names the remote types in a config (every node, before the system).
inline void add_types(caf::actor_system_config& cfg) {
  cfg.add_message_type<app_plan>("pmixd_app_plan");
  cfg.add_message_type<std::vector<app_plan>>("pmixd_app_plans");
  cfg.add_message_type<job_plan>("pmixd_job_plan");
}

// "host:port" split; false if malformed.
bool split_address(const std::string& text, std::string& host, uint16_t& port);

}  // namespace pmixd
