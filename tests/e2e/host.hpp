// A recording host for end-to-end tests: a pmix_server_module_t whose
// up-calls record what the server asked, plus helpers to start the server,
// register a job and launch clients the way a resource manager does.
#pragma once

#include <pmix.h>
#include <pmix_server.h>
#include <pmix_tool.h>

#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "api/server_runtime_abi.h"
#include "tests/e2e/probe.hpp"
#include "tests/support/process.hpp"

namespace pmix::test {

struct host_record {
  std::mutex mutex;
  std::atomic<int> connected{0};
  std::atomic<int> finalized{0};
  std::atomic<int> aborts{0};
  int abort_status = 0;
  std::string abort_message;
  pmix_proc_t abort_proc{};
  std::atomic<int> fence_calls{0};
  std::size_t fence_nprocs = 0;
  std::size_t fence_ndata = 0;
  std::string fence_collect;  // PMIX_COLLECT_DATA as the last fence_nb got it: "true", "false" or "absent"
  std::string fence_reply_extra;  // appended to our data, as other nodes' data
  // The host frees the data fence_nb is given, as Open MPI's ORTE does
  // (the server was told PMIX_CXX_HOST_FREES_FENCE_DATA).
  bool fence_frees_data = false;
  // fence_nb calls back before it returns, holding a lock its release
  // function takes, as Slurm's pmix plugin does.
  bool fence_inline_locked = false;
  std::atomic<int> dmodex_calls{0};
  std::atomic<int> releases{0};  // release callbacks the server ran for our data
  pmix_proc_t dmodex_proc{};
  pmix_status_t dmodex_status = PMIX_SUCCESS;
  std::string dmodex_reply;
  // client_connected refuses this many connections (PMIX_ERR_NO_PERMISSIONS).
  std::atomic<int> refuse_connects{0};
  // client_connected answers (through its callback) this long after it is
  // called, as a host that asks someone else would.
  std::atomic<int> connect_delay_ms{0};
  // Set to make client_connected try a blocking call and record its status.
  std::atomic<bool> block_in_upcall{false};
  // Run inside client_connected, when set (under no lock of ours).
  std::function<void()> upcall_probe;
  pmix_proc_t tool_identity{};
  std::atomic<int> tool_calls{0};
  // tool_connected keeps its callback (held_tool_*) instead of answering.
  bool hold_tools = false;
  pmix_tool_connection_cbfunc_t held_tool_cbfunc = nullptr;
  void* held_tool_cbdata = nullptr;
  std::atomic<int> job_control_calls{0};
  std::string job_control_keys;
  std::string tool_info_keys;  // the keys the host was given, space separated
  std::atomic<int> blocking_call_status{0};
  // notify_event up-calls: "<code> <source nspace>.<rank> <range>" each.
  std::vector<std::string> notifications;

  // Publish / lookup / unpublish (host_slots::publish): the host's store,
  // "key" -> (publisher, value, the publisher's PMIX_USERID), and lookups
  // waiting with PMIX_WAIT. A lookup finds only entries of its own user
  // (the PMIX_USERID the server hands the host), as a resource manager's
  // data store does.
  struct published {
    pmix_proc_t owner;
    std::string value;
    uint32_t uid = 0;
  };
  std::map<std::string, published> store;
  struct waiting_lookup {
    std::vector<std::string> keys;
    uint32_t uid = 0;
    pmix_lookup_cbfunc_t cbfunc;
    void* cbdata;
  };
  std::vector<waiting_lookup> waiting;
  // Queries held unanswered (host_slots::query_held).
  std::vector<std::pair<pmix_info_cbfunc_t, void*>> held_queries;
  // Publishes and unpublishes held unanswered (host_slots::publish_held).
  std::vector<std::pair<pmix_op_cbfunc_t, void*>> held_ops;
  // The info keys of each up-call, "<call>: key key ...", in order.
  std::vector<std::string> dynamic_calls;
  std::atomic<int> connects{0}, disconnects{0};
  std::vector<std::string> logged;  // "<proc> <key>=<text>" per PMIx_Log data entry
  // Jobs the spawn up-call started (host_slots::spawn): their processes.
  std::vector<std::string> spawned;  // namespaces, in order
  std::vector<child> spawned_children;

  void reset();
};

host_record& record();

// Which up-calls the module provides.
struct host_slots {
  bool connected = true, finalized = true, abort = true, fence = true, dmodex = true;
  bool tool = false;  // tool_connected: names every tool host_record::tool_identity
  // client_connected2 (OpenPMIx 4's asynchronous form) instead of
  // client_connected: answered through its callback, host_record::
  // connect_delay_ms later.
  bool connected2 = false;
  bool job_control = false;  // answers every request with {"host.answer": "done"}
  bool notify = false;       // notify_event: records the event, answers PMIX_SUCCESS
  bool publish = false;      // publish / lookup (PMIX_WAIT too) / unpublish on host_record::store
  // publish and unpublish (instead): recorded and held unanswered until the
  // server object goes, which answers them then (late: the server drops them).
  bool publish_held = false;
  bool spawn = false;        // spawn: registers "<requester>.spawn<k>" and launches the apps' processes
  bool connect = false;      // connect / disconnect: counted, answered PMIX_SUCCESS
  bool log = false;          // log: records each data entry, answers PMIX_SUCCESS
  // allocate, monitor, get_credential, validate_credential, push_stdin and
  // fabric: each records "<call>: <detail>" in dynamic_calls and answers:
  // allocate {"host.alloc": "granted"}; monitor {"host.monitor": "on"};
  // credentials "host-cred:<nspace>.<rank>" (type "host"), valid when they
  // start "host-cred:" (PMIX_USERID 4242), else PMIX_ERR_INVALID_CRED;
  // fabric {"host.fabric": "fab0"}; push_stdin PMIX_SUCCESS (the bytes
  // "stop": PMIX_ERR_IOF_XOFF, which stops that producer's stdin).
  bool requests = false;
  bool iof = false;  // iof_pull: records "iof_pull: <procs> channels=<c>", answers PMIX_SUCCESS
  bool query = false;  // query: records "query: <requester> <keys>", answers {"host.query": "answered"}
  // query (instead): records the call and holds it unanswered until the
  // server object goes, which answers it then (late: the server drops it).
  bool query_held = false;
  // group: records "group: op=<op> grp=<name> procs=<n> keys: ..." in
  // dynamic_calls; a construct is answered with PMIX_GROUP_CONTEXT_ID 77.
  bool group = false;
  // OpenPMIx 6.0's session_control (records "session_control: <requester>
  // id=<n> keys: ...", answers {"host.session": "paused"}) and
  // resource_block (records "resource_block: <requester> directive=<d>
  // block=<name> units=<TYPE:count,...> keys: ...", answers PMIX_SUCCESS),
  // in their slots; the server reads them only when told
  // PMIX_CXX_SERVER_MODULE_SLOTS 32.
  bool later = false;
  // session_control where OpenPMIx 5.0's module has it (slot 28).
  bool later_v5 = false;
};
pmix_server_module_t make_module(host_slots slots = {});

// The server runtime's table (introspection); valid after PMIx_server_init.
const pmix_cxx_server_runtime_t* runtime_table();

// A server for the duration of a test case.
class server {
 public:
  explicit server(const std::string& tmpdir, host_slots slots = {},
                  std::vector<pmix_info_t> extra_directives = {});
  ~server();
  pmix_status_t status() const { return status_; }
  // Snapshot of the server's actors and counters.
  pmix_cxx_server_view_t view() const;

 private:
  pmix_server_module_t module_;
  pmix_status_t status_;
};

// The server's actors and counters, copied out of the C view.
struct snapshot {
  struct rank_view {
    pmix_rank_t rank;
    int registered, proc_cnt, peers, tombstones, has_peerid, dead;
    int actor;  // the rank has an actor (registered ranks get one lazily)
    int waiting_gets;  // gets waiting at the rank for a process to connect
  };
  struct nspace_view {
    std::string name;
    int nlocalprocs = 0, nfinalized = 0;
    bool fired = false;
    int fired_runs = 0;
    std::vector<rank_view> ranks;
    const rank_view* rank(pmix_rank_t r) const;
  };
  std::vector<nspace_view> nspaces;
  std::size_t fences = 0, connections = 0, actors = 0, departed = 0, pending_upcalls = 0, dropped_sends = 0;
  std::size_t board_posts = 0;  // fence replies posted on a fence board
  std::size_t sensors = 0;      // heartbeat monitors the server runs
  std::size_t iof_registrations = 0;  // PMIx_IOF_pull registrations kept
  const nspace_view* nspace(const std::string& name) const;
  // Actors the tree accounts for: the server, its namespaces and ranks, and
  // the peers the ranks hold. The rest of `actors` are orphans (or peers
  // still in their handshake).
  std::size_t accounted_actors() const;
};
snapshot take_snapshot();

// The host's notify_event up-calls so far (a copy).
std::vector<std::string> notifications();

// Polls `pred` until it holds (a guard of 120 s against hangs, no timing).
bool eventually(const std::function<bool()>& pred);

// Waits (a guard of 120 s against hangs) until the child printed `text`.
bool wait_for_output(const child& c, const std::string& text);

bool contains(const std::string& haystack, const std::string& needle);
// How often `needle` occurs in `haystack` (not overlapping).
std::size_t count(const std::string& haystack, const std::string& needle);

std::string this_host();

// Registers `nspace` with `size` ranks of which `local` (the first ranks) run
// here; the rest run on "othernode". Registers the local clients too, for
// this process's user, or for `user` (its gid the same number).
pmix_status_t register_job(const std::string& nspace, std::uint32_t size, std::uint32_t local,
                           uid_t user = static_cast<uid_t>(-1));
// Registers `nspace` of `size` ranks by its maps alone: `nodes` the host
// names, this one first, `ppn` each node's ranks as PMIx_generate_ppn takes
// them, `local` ranks here; and the local ranks `clients` for uid/gid.
pmix_status_t register_by_maps(const std::string& nspace, std::uint32_t size, const std::string& nodes,
                               const std::string& ppn, std::uint32_t local, const std::vector<pmix_rank_t>& clients,
                               uid_t uid, gid_t gid);

// The server's URI (what a tool passes as PMIX_SERVER_URI).
std::string server_uri();

// Launches rank r of nspace running argv, with the environment setup_fork gives.
child launch(const std::string& nspace, pmix_rank_t r, const std::vector<std::string>& argv,
             const std::string& capture_dir);

// tests/e2e/script_client as rank r of nspace running `steps`, with the
// environment setup_fork gives (the test must list :script_client in data).
child launch_script(const std::string& nspace, pmix_rank_t r, const std::vector<std::string>& steps,
                    const std::string& capture_dir);
// The host's dynamic_calls() that start with `prefix`.
std::vector<std::string> calls_starting(const std::string& prefix);
// script_client (staged in `bin` by stage_for_other_user) as rank `r` of
// `nspace`, run as `uid` (and the same gid), with the environment the host
// gives that rank.
child launch_as(uid_t uid, const std::string& nspace, pmix_rank_t r, const std::vector<std::string>& steps,
                const std::string& bin, const std::string& capture_dir);
// The same for another program staged in `bin` ("event_client").
child launch_program_as(uid_t uid, const std::string& program, const std::string& nspace, pmix_rank_t r,
                        const std::vector<std::string>& steps, const std::string& bin, const std::string& capture_dir);

// The host's dynamic up-calls so far (host_record::dynamic_calls, a copy).
std::vector<std::string> dynamic_calls();
// Where spawned processes write their output (set before they are spawned).
void set_spawn_capture_dir(const std::string& dir);

// The environment a launcher gives rank r for a process linked with
// OpenPMIx (setup_fork's: its PMIX_SERVER_URI* variables name the loopback
// listener), with the buffer type given ("PMIX_BFROP_BUFFER_NON_DESC" or
// "..._FULLY_DESC") and an empty LD_LIBRARY_PATH (OpenPMIx's library, as
// the program's RUNPATH says).
std::vector<std::string> openpmix_env(const std::string& nspace, pmix_rank_t r, const char* buffer_type);

// script_client, event_client, openpmix_client_bin (when in the test's data) and libpmix.so.2
// copied into DIR/bin, where a user other than root can run them (Bazel's
// output tree is under root's home); returns that directory.
std::string stage_for_other_user(const std::string& dir);

// Blocking deregistration of a whole namespace.
pmix_status_t deregister_job(const std::string& nspace);

// A serialized wire::RankData holding string values, as another node's
// server would produce for one of its ranks.
std::string remote_rank_data(const std::string& nspace, pmix_rank_t rank,
                             const std::vector<std::pair<std::string, std::string>>& values);
// The same wrapped as a one-entry wire::ModexData (what a fence returns).
std::string remote_modex(const std::string& nspace, pmix_rank_t rank,
                         const std::vector<std::pair<std::string, std::string>>& values);

}  // namespace pmix::test
