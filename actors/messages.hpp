// Every message the server's actors exchange, in one place (style.md #7).
//
// Requests from the C facade carry a reply_to<> channel; requests between
// actors use CAF's request/response and name their reply type here. Messages
// stay inside one process for now, so they are whitelisted rather than
// inspected (CAF_ALLOW_UNSAFE_MESSAGE_TYPE at the end of this file).
#pragma once

#include <pmix_common.h>
#include <sys/types.h>

#include <caf/allowed_unsafe_message_type.hpp>
#include <caf/atom.hpp>
#include <caf/actor.hpp>
#include <caf/actor_addr.hpp>
#include <functional>
#include <map>
#include <optional>
#include <memory>
#include <string>
#include <vector>

#include "actors/job_layout.hpp"
#include "actors/reply.hpp"
#include "common/event.hpp"
#include "common/job_budget.hpp"
#include "common/value.hpp"
#include "transport/connection.hpp"

namespace pmix::transport {
class shared_data;
}

namespace pmix::actors {

// (resume_push_atom, envelope id, HostRequest bytes), to a peer actor: a
// push held while its producer's stdin was stopped (actors/stdin_flow.hpp),
// to be made now.
using resume_push_atom = caf::atom_constant<caf::atom("resumepush")>;

using env_list = std::vector<std::string>;  // "NAME=value" entries

// The user of a process that asks for something (SO_PEERCRED of its
// connection): what it may see of other jobs depends on it
// (docs/security.md, "What another user sees"). A connection over TCP has
// no kernel-reported user; the host's own requests come as root.
constexpr uid_t unknown_user = static_cast<uid_t>(-1);

// ---- from the C facade to the server actor -------------------------------

struct openpmix_job_form;  // actors/openpmix_job.hpp

struct register_nspace_msg {
  std::string nspace;
  int nlocalprocs = 0;
  encoded_registration reg;  // from an info_list too (all of it in reg.job)
  reply_to<no_result> done;
};

struct deregister_nspace_msg {
  std::string nspace;
  reply_to<no_result> done;
};

// What PMIx_server_register_client said about a rank.
struct registration {
  uid_t uid = 0;
  gid_t gid = 0;
  void* server_object = nullptr;
};

struct register_client_msg {
  proc_id proc;
  uid_t uid = 0;
  gid_t gid = 0;
  void* server_object = nullptr;
  reply_to<no_result> done;
};

// A run of non-blocking PMIx_server_register_client calls for one namespace,
// as host threads queue them for the server's loop thread (a host registers
// its local ranks in a loop): plain records, so a call allocates nothing and
// the loop sends the lot as one message. Each call is answered exactly once,
// in call order; whatever is not answered when the batch goes away (dropped
// at finalize) gets PMIX_ERR_NOT_AVAILABLE, as a reply_channel's caller does.
class registration_batch {
 public:
  struct call {
    rank_t rank;
    uid_t uid;
    gid_t gid;
    void* server_object;
    pmix_op_cbfunc_t cbfunc;
    void* cbdata;
  };

  explicit registration_batch(std::string nspace) : nspace_(std::move(nspace)) {}
  ~registration_batch();
  registration_batch(const registration_batch&) = delete;
  registration_batch& operator=(const registration_batch&) = delete;

  const std::string& nspace() const { return nspace_; }
  void add(const call& c) { calls_.push_back(c); }
  void reserve(std::size_t n) { calls_.reserve(n); }
  std::size_t size() const { return calls_.size(); }
  const call& operator[](std::size_t k) const { return calls_[k]; }
  // Answers the next call not answered yet (the calls are answered in
  // order); its cbfunc runs inside a progress::scope (spec 002).
  void answer_next(pmix_status_t status);

 private:
  std::string nspace_;
  std::vector<call> calls_;
  std::size_t answered_ = 0;
};

struct register_clients_msg {
  std::shared_ptr<registration_batch> batch;
};

struct deregister_client_msg {
  proc_id proc;
  reply_to<no_result> done;
  bool registered = false;  // set by the server actor: it held a registration
};

struct setup_fork_msg {
  proc_id proc;
  reply_to<env_list> done;
};

// PMIx_server_collect_job_info: the job-level store of each known namespace
// among `nspaces` as a registration (in that order; unknown ones skipped).
using job_infos = std::vector<std::pair<std::string, info_list>>;
struct collect_job_info_msg {
  std::vector<std::string> nspaces;
  reply_to<job_infos> done;
};

// PMIx_Notify_event called by the host: the event goes to the clients and
// tools in its range (not back to the host).
struct notify_msg {
  event ev;
  reply_to<no_result> done;
};

// Runs `task` on a thread of the actor system, outside every actor that
// owns state (the server process's own event handlers).
struct task_msg {
  std::function<void()> task;
};

// Test-only introspection (tools/ and tests/, not part of the PMIx API).
struct server_snapshot {
  struct rank_view {
    rank_t rank = 0;
    bool registered = false;
    int proc_cnt = 0;
    int peers = 0;            // peer actors this rank still owns (live + tombstone)
    int tombstones = 0;       // finalized peers kept at peerid (socket closed)
    bool has_peerid = false;
    int dead = 0;             // a peer that died without finalizing, kept at peerid
    bool actor = false;       // has a rank actor (registered ranks get one when first needed)
    int waiting_gets = 0;     // gets waiting at the rank actor for a process to connect
  };
  struct nspace_view {
    std::string name;
    int nlocalprocs = 0;
    int nfinalized = 0;
    bool local_app_fini_fired = false;
    int local_app_fini_runs = 0;
    std::vector<rank_view> ranks;
  };
  std::vector<nspace_view> nspaces;
  std::size_t fences_in_flight = 0;
  std::size_t connections = 0;
  std::size_t departed = 0;        // ranks the server remembers as gone
  std::uint64_t dropped_sends = 0;  // replies/events for closed peers, never sent
  std::size_t pending_upcalls = 0;  // host up-calls the server waits for
  std::uint64_t board_posts = 0;    // fence replies posted on a fence board
  std::uint64_t sensors = 0;        // heartbeat monitors running
  std::size_t iof_registrations = 0;  // PMIx_IOF_pull registrations kept
};

struct snapshot_msg {
  reply_to<server_snapshot> done;
};

// ---- between peer, server, namespace and rank actors -----------------------

// The fault plane (docs/fault-injection.md): from a peer to its rank, which
// ends its namespace actor abnormally (`kill:nspace`).
using fault_kill_nspace_atom = caf::atom_constant<caf::atom("fkillns")>;

enum class peer_role { client, tool };

// A new connection's handshake. Reply: connect_result.
// A tool may leave proc.nspace empty: the host (tool_connected) or the
// server assigns its identity.
struct connect_msg {
  proc_id proc;
  transport::peer_credentials cred;
  peer_role role = peer_role::client;
  caf::actor peer;
  std::uint64_t peer_index = 0;  // the connection id: the spec's peer index
  info_list info;                // the tool's init directives
  std::optional<registration> reg;  // the rank's registration (added by the server actor)
  // A client linked with OpenPMIx: the form of its job data
  // (openpmix::buffer_type); 0 for ours.
  std::uint8_t openpmix_buffer = 0;
};

struct connect_result {
  pmix_status_t status = PMIX_SUCCESS;
  caf::actor rank;     // the rank actor serving this proc
  std::shared_ptr<const std::string> job;  // serialized wire::JobInfo
  void* server_object = nullptr;
  proc_id assigned;    // the identity the connection now has
  // `job` as shared data, when it is large (transport::shared_data_threshold)
  std::shared_ptr<const transport::shared_data> job_shared;
  // What the job's processes hold together (its namespace's).
  std::shared_ptr<job_budget> budget;
  // The group the rank was registered with (for a process the kernel named
  // only by its user: a TCP peer whose holder was not looked up).
  gid_t registered_gid = static_cast<gid_t>(-1);
  // For connect_msg::openpmix_buffer: the job data in that form, shared by
  // the namespace's processes linked with OpenPMIx (actors/openpmix_job.hpp).
  std::shared_ptr<const openpmix_job_form> openpmix_job;
};

// From a tool namespace to the server: none of its ranks has a live process
// after `epoch` connects; the server removes it unless a connect is on its way.
struct tool_nspace_idle_msg {
  std::string nspace;
  std::uint64_t epoch = 0;
};

// The host's answer to tool_connected: the identity it gives the tool.
struct tool_assigned_msg {
  std::uint64_t id = 0;
  pmix_status_t status = PMIX_SUCCESS;
  proc_id proc;
};

// The client sent FINALIZE_CMD. Reply: pmix_status_t (after client_finalized).
struct peer_finalize_msg {
  caf::actor peer;
};

// A peer's socket is gone (after finalize or abnormally).
struct peer_lost_msg {
  caf::actor peer;
  bool finalized = false;
};

// From a rank actor to a peer it no longer needs: the peer terminates.
struct release_msg {};

// From a rank actor to the server actor and its namespace: whether the rank
// has a live process.
struct rank_state_msg {
  proc_id proc;
  bool live = false;
  pmix_status_t reason = PMIX_SUCCESS;  // why it is gone when !live
};

// From a rank actor to its namespace: nfinalized changes by `delta`.
struct finalized_count_msg {
  int delta = 0;
};

// From a rank actor to its namespace: whether the rank is finalized now (a
// process of it finalized and none of its live processes has not: a clone
// that finalized while its parent lives leaves the rank unfinalized).
struct rank_finalized_msg {
  rank_t rank = 0;
  bool finalized = false;
};

// From a namespace actor to the server: its job data as it is now (at
// start and after every change), what the server restarts it from should
// it fail (docs/fault-injection.md).
struct nspace_job_msg {
  std::string nspace;
  std::shared_ptr<const std::string> job;
};

// A fence contribution, sent (not requested) by a peer. Answer: a
// fence_answer_msg, unless the reply is on the board (below).
struct fence_msg {
  proc_id from;
  std::vector<proc_id> procs;
  info_list info;
  bool collect = false;
  // The contributor's serialized wire::RankData when collecting (shared with
  // the peer's cache: not copied per fence).
  std::shared_ptr<const std::string> data;
  // Collectives over the same processes with different tags are different
  // (a group's name: PMIx_Group_construct); fences have none.
  std::string tag;
  // The contributor reads the reply from its namespace's fence board
  // (FenceRequest.board_wait, honoured by a peer that sent the board);
  // and it asks for the board (the server answers with a fence_board_msg
  // before the reply).
  bool board_wait = false;
  bool board_request = false;
  // The server answers with a fence_answer_msg of this id (the client's
  // request id), and not at all when the reply is posted on the board (64
  // messages fewer for a 64-rank fence) unless answer_on_board (the fault
  // plane's ledger counts every answer).
  std::uint64_t answer_id = 0;
  bool answer_on_board = false;
  uid_t uid = 0;  // the contributor's user
};

// From the server to a peer: its namespace's fence board, to pass to the
// client (a FenceBoard frame with the descriptor).
struct fence_board_msg {
  std::shared_ptr<const transport::shared_data> file;
};

struct fence_result {
  pmix_status_t status = PMIX_SUCCESS;
  std::shared_ptr<const std::string> data;  // serialized wire::ModexData
  // The serialized wire::FenceReply, encoded once for every contributor by
  // fence_book::complete.
  std::shared_ptr<const std::string> reply;
  // For data of transport::shared_data_threshold() bytes or more: the data
  // as shared data, and the FenceReply that names it; a peer on a Unix
  // socket sends that one, with the descriptor (docs/wire-format.md).
  std::shared_ptr<const transport::shared_data> shared;
  std::shared_ptr<const std::string> shared_reply;
  // Posted on the namespace's fence board, where every contributor reads
  // it: a peer sends nothing.
  bool on_board = false;
};

// The answer to a fence_msg: its answer_id, and the result.
struct fence_answer_msg {
  std::uint64_t id = 0;
  fence_result result;
};

// A direct-modex request for `target`'s committed data. Reply: get_result.
struct get_msg {
  proc_id from;
  proc_id target;
  std::string key;
  info_list info;
  uid_t uid = 0;  // the asker's user
  // The asking peer and its request (the client's envelope id): a get its
  // asker stops waiting for is cancelled (get_cancel_msg). None: the host's.
  caf::actor_addr asker;
  std::uint64_t request = 0;
};

// A get its asker no longer waits for (PMIX_TIMEOUT passed, or its
// connection closed), routed as the get was (server -> namespace -> rank ->
// peer): whoever holds it answers PMIX_ERR_TIMEOUT now and forgets it, so
// nothing the asker asked for stays behind. `request` 0: every get of the
// asker for `target`.
struct get_cancel_msg {
  caf::actor_addr asker;
  std::uint64_t request = 0;
  proc_id target;
};

struct get_result {
  pmix_status_t status = PMIX_SUCCESS;
  std::string data;  // serialized wire::RankData
  // A reserved key of a namespace the client has no job data for: the
  // namespace's serialized wire::JobInfo.
  std::shared_ptr<const std::string> job;
};

// The result of a host up-call, sent by its callback trampoline to the actor
// that made the up-call.
struct upcall_result {
  std::uint64_t id = 0;
  pmix_status_t status = PMIX_SUCCESS;
  std::string data;
};

// Job-level cleanup registered by a client (PMIx_Job_control with the
// namespace as target): peer -> server -> namespace. Reply: pmix_status_t.
struct register_epilog_msg {
  std::string nspace;
  info_list directives;
  uid_t owner = 0;
};

// Namespace and rank teardown (from the server actor downwards). Reply: bool.
struct deregister_msg {};

// Introspection of a namespace / rank. Replies: nspace_view / rank_view.
struct view_msg {};

// PMIx_Notify_event from a client or tool (`origin`, its peer actor): the
// server delivers it in its range, except back to the origin, and hands it
// to the host unless the range is this node. Reply: pmix_status_t.
struct client_event_msg {
  event ev;
  caf::actor origin;
};

// One event on its way to processes: server -> namespace -> rank -> peer.
// `frame` is the serialized envelope every peer writes as is; `ranks`
// narrows a namespace to some ranks (empty: all of them); `skip` is the
// notifier's peer, which has delivered the event to itself already.
struct deliver_event_msg {
  std::shared_ptr<const std::string> frame;
  std::vector<rank_t> ranks;
  caf::actor skip;
};

// PMIx_server_define_process_set / _delete_process_set (server actor): the
// set is kept, and every local client and tool is told
// (PMIX_PROCESS_SET_DEFINE / _DELETE).
struct pset_msg {
  bool define = true;
  std::string name;
  std::vector<proc_id> members;
  reply_to<no_result> done;
};
// PMIx_Query_info of a peer, seen by the server actor first (reply:
// query_plan): it answers the process-set keys itself (PMIX_QUERY_NUM_PSETS,
// PMIX_QUERY_PSET_NAMES, PMIX_QUERY_PSET_MEMBERSHIP, members the asker may
// not see left out), refuses the queries whose qualifiers name a namespace
// of another user, and hands back the rest, for the host.
struct pset_query_msg {
  std::vector<query> queries;
  proc_id from;
  uid_t uid = 0;
};
struct query_plan {
  info_list answered;
  std::vector<query> for_host;
  std::size_t refused = 0;
};
// PMIx_server_register_resources (add) / _deregister_resources (server
// actor): node-level information every local job's data carries.
struct resources_msg {
  bool add = true;
  info_list info;
  reply_to<no_result> done;
};
// A namespace's job data loses these items, where it holds them with the
// same value (namespace actor; resources deregistered).
struct trim_job_msg {
  info_list info;
};
// PMIx_server_deliver_inventory: another node's inventory, kept by its
// PMIX_HOSTNAME (server actor).
struct deliver_inventory_msg {
  std::string host;
  info_list info;
  reply_to<no_result> done;
};
// PMIx_server_collect_inventory: this node's inventory, or the one kept for
// `host` (server actor).
struct collect_inventory_msg {
  std::optional<std::string> host;
  reply_to<info_list> done;
};

// PMIx_Group_* of a peer (server actor). Reply: fence_result whose `reply`
// is an encoded InfoReply (the group's results).
struct group_msg {
  std::uint32_t op = 0;  // protocol::group_op
  std::string name;
  proc_id from;
  std::vector<proc_id> procs;
  info_list directives;
  std::optional<proc_id> leader;
  bool accept = false;
  uid_t uid = 0;  // the caller's user
};
// The host's answer to a group up-call (server actor).
struct group_upcall_done {
  std::uint64_t tracker = 0;
  bool construct = true;
  pmix_status_t status = PMIX_SUCCESS;
  info_list info;
};

// PMIx_IOF_pull of a peer (server actor): output of `procs` on `channels`
// goes to `peer`, tagged `ref`, once the host's iof_pull agreed. Reply:
// pmix_status_t.
struct iof_pull_msg {
  caf::actor peer;
  std::uint64_t ref = 0;
  std::vector<proc_id> procs;
  pmix_iof_channel_t channels = 0;
  info_list directives;
  proc_id from;
  uid_t uid = 0;  // the puller's user
};
// PMIx_IOF_deregister (reply: pmix_status_t), and a puller that went away.
struct iof_deregister_msg {
  caf::actor peer;
  std::uint64_t ref = 0;
};
struct iof_forget_msg {
  caf::actor peer;
};
// Something a host thread hands to the server's own thread to run: the
// host's release function of data it gave us (server/host_module.hpp).
struct host_task_msg {
  std::function<void()> run;
};
// PMIx_server_IOF_deliver: output for the processes that pulled it.
struct iof_output_msg {
  proc_id source;
  pmix_iof_channel_t channel = 0;
  std::string data;
  info_list info;
};
// To a peer: a serialized IofData envelope to write as is.
struct deliver_iof_msg {
  std::shared_ptr<const std::string> frame;
};

// A namespace's job-level store, as a registration. Reply: info_list.
struct job_info_msg {};

// PMIx_Connect / PMIx_Disconnect from a peer: a collective over `procs`,
// tracked like a fence. Reply: fence_result whose `reply` is a serialized
// wire::ConnectProcsReply (for a connect: the job data of the participants'
// namespaces this server knows).
struct connect_procs_msg {
  proc_id from;
  std::vector<proc_id> procs;
  info_list info;
  bool disconnect = false;
  uid_t uid = 0;  // the caller's user
};

// A namespace's serialized wire::JobInfo (what its clients get at connect).
// Reply: job_blob.
struct job_blob_msg {};
struct job_blob {
  std::shared_ptr<const std::string> job;
};

// PMIx_server_setup_local_support: `info` joins the namespace's job data
// (facade -> server -> namespace; kept by the server until the namespace
// is registered).
struct extend_job_msg {
  std::string nspace;
  info_list info;
  reply_to<no_result> done;
  // Only the keys the job data does not carry yet (resources: the host's
  // registration wins).
  bool unless_present = false;
};

// PMIx_server_dmodex_request: the serialized wire::RankData a local process
// committed, once it has (kept by the server until the namespace is
// registered, if it is not yet).
struct dmodex_request_msg {
  proc_id proc;
  reply_to<std::string> done;
};

// The host's answer to lookup / spawn, for the peer that asked.
struct lookup_done_msg {
  std::uint64_t id = 0;
  pmix_status_t status = PMIX_SUCCESS;
  std::vector<pdata> data;
};
struct spawn_done_msg {
  std::uint64_t id = 0;
  pmix_status_t status = PMIX_SUCCESS;
  std::string nspace;
};
// From a peer to the server: its process spawned `nspace`, which is then
// that user's to see even where no process of it is registered here.
struct spawned_msg {
  std::string nspace;
  uid_t uid = 0;
};

}  // namespace pmix::actors

CAF_ALLOW_UNSAFE_MESSAGE_TYPE(pmix::actors::register_nspace_msg)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(pmix::actors::deregister_nspace_msg)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(pmix::actors::register_client_msg)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(pmix::actors::register_clients_msg)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(pmix::actors::deregister_client_msg)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(pmix::actors::setup_fork_msg)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(pmix::actors::snapshot_msg)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(pmix::actors::server_snapshot::nspace_view)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(pmix::actors::server_snapshot::rank_view)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(pmix::actors::connect_msg)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(pmix::actors::connect_result)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(pmix::actors::peer_finalize_msg)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(pmix::actors::peer_lost_msg)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(pmix::actors::release_msg)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(pmix::actors::rank_state_msg)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(pmix::actors::finalized_count_msg)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(pmix::actors::rank_finalized_msg)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(pmix::actors::nspace_job_msg)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(pmix::actors::fence_msg)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(pmix::actors::fence_result)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(pmix::actors::fence_answer_msg)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(pmix::actors::fence_board_msg)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(pmix::actors::get_msg)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(pmix::actors::get_result)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(pmix::actors::get_cancel_msg)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(pmix::actors::upcall_result)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(pmix::actors::deregister_msg)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(pmix::actors::view_msg)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(pmix::actors::tool_nspace_idle_msg)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(pmix::actors::tool_assigned_msg)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(pmix::actors::register_epilog_msg)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(pmix::info_list)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(pmix::actors::collect_job_info_msg)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(pmix::actors::job_info_msg)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(pmix::actors::notify_msg)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(pmix::actors::task_msg)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(pmix::actors::client_event_msg)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(pmix::actors::deliver_event_msg)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(pmix::actors::iof_pull_msg)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(pmix::actors::group_msg)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(pmix::actors::pset_msg)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(pmix::actors::pset_query_msg)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(pmix::actors::query_plan)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(pmix::actors::resources_msg)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(pmix::actors::trim_job_msg)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(pmix::actors::deliver_inventory_msg)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(pmix::actors::collect_inventory_msg)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(pmix::actors::group_upcall_done)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(pmix::actors::iof_deregister_msg)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(pmix::actors::iof_forget_msg)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(pmix::actors::host_task_msg)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(pmix::actors::iof_output_msg)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(pmix::actors::deliver_iof_msg)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(pmix::actors::connect_procs_msg)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(pmix::actors::job_blob_msg)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(pmix::actors::job_blob)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(pmix::actors::extend_job_msg)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(pmix::actors::dmodex_request_msg)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(pmix::actors::lookup_done_msg)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(pmix::actors::spawn_done_msg)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(pmix::actors::spawned_msg)
