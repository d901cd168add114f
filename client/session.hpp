// One init..finalize cycle of a client or tool: the connection to the server,
// the local store, and the operations the C facade maps onto (put, commit,
// fence, get, abort, finalize). No actor system: client processes stay light.
//
// Completions run on the connection's progress thread (a library thread,
// spec 002). The session is thread-safe.
#pragma once

#include <pmix_common.h>

#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "client/connection.hpp"
#include "client/store.hpp"
#include "common/event.hpp"
#include "common/value.hpp"
#include "protocol/openpmix.hpp"

namespace pmix::client {

enum class role { client, tool };

using done_fn = std::function<void(pmix_status_t)>;
using value_fn = std::function<void(pmix_status_t, const value*)>;
// Where events for this process go: the server's (unprompted) and
// PMIX_ERR_LOST_CONNECTION when the server goes away. Runs on the progress
// thread, with the way to post the chain's later steps to that thread.
using event_fn = std::function<void(event, task_poster)>;

// Every value of a process as one (what PMIx_Get answers for a NULL key): an
// array of PMIX_INFO; false, and `out` untouched, if there is none.
bool all_values(info_list&& items, value& out);

class session : public std::enable_shared_from_this<session> {
 public:
  // Connects to the server named by `uri` ("<nspace>.<rank>;uds://<path>") as
  // `proposed`. A tool may leave proposed.nspace empty: the server assigns
  // its identity. On success, self() is the identity the server confirmed.
  static pmix_status_t connect(const std::string& uri, role r, const proc_id& proposed,
                               const info_list& info, std::shared_ptr<session>& out,
                               event_fn on_event = {});
  // The same with OpenPMIx's protocol (issue 36): to a server of OpenPMIx's
  // (its URI "<nspace>.<rank>;tcp4://..."), as a process linked with
  // OpenPMIx 4.2.2 does. `server_version`: the server's PMIX_VERSION ("5.0.3"),
  // empty if unknown. Every operation below then speaks OpenPMIx's
  // protocol (client/openpmix_session.cpp).
  static pmix_status_t connect_openpmix(const std::string& uri, role r, const proc_id& proposed,
                                        const info_list& info, const std::string& server_version,
                                        std::shared_ptr<session>& out, event_fn on_event = {});
  // A process without a server (OpenPMIx's singleton): job size 1, rank 0.
  // A tool's (role::tool) is the one it has while no server is its primary.
  static std::shared_ptr<session> singleton(const proc_id& self, role r = role::client);
  // The server process's own store (PMIx_Put, PMIx_Store_internal and
  // PMIx_Get called by a host after PMIx_server_init): no connection and no
  // job data of its own.
  static std::shared_ptr<session> server_self(const proc_id& self);


  const proc_id& self() const { return self_; }
  const proc_id& server() const { return server_; }
  bool is_singleton() const { return !conn_; }
  // Connected with OpenPMIx's protocol.
  bool openpmix() const { return openpmix_; }
  // PMIx_Register_event_handler's codes (none: every code), told to an
  // OpenPMIx server, which sends a client only the events it registered
  // for; nothing to do with ours (it delivers every event in range).
  void register_events(const std::vector<pmix_status_t>& codes);
  // Has a connection to its server that is not lost.
  bool connected() const { return conn_ && !conn_->lost(); }
  // PMIx_Progress_thread_stop (connection::stop_progress); true without a
  // connection.
  bool stop_progress(bool flush) { return !conn_ || conn_->stop_progress(flush); }
  role which() const { return role_; }

  pmix_status_t put(pmix_scope_t scope, info item);
  // Sends what was put since the last commit (one-way).
  pmix_status_t commit();
  // PMIX_OPERATION_SUCCEEDED when the fence completed at once (no server);
  // otherwise `done` runs later on the progress thread.
  pmix_status_t fence(std::vector<proc_id> procs, info_list info, done_fn done);

  enum class lookup { found, not_found, ask_server };
  // What the local store can answer, with the PMIx_Get rules
  // (docs/architecture.md, "Get").
  lookup resolve_local(const proc_id& target, const std::string& key, bool optional, value& out);
  // This process's host name (mutex_ held); empty if its job data has none.
  std::string own_host() const;
  // PMIx_Get with a NULL key: every value known of one process, as a
  // PMIX_DATA_ARRAY of PMIX_INFO (OpenPMIx's answer, which ORTE's daemons
  // rely on); ask_server while its committed data has not come.
  lookup resolve_all(const proc_id& target, bool optional, value& out);
  // Asks the server for target's committed data, stores it, then looks key up
  // (an empty key: everything of target, as resolve_all).
  pmix_status_t fetch(const proc_id& target, const std::string& key, const info_list& info,
                      value_fn done);

  pmix_status_t abort(int status, const std::string& message, const std::vector<proc_id>& procs,
                      done_fn done);
  // PMIx_Job_control: cleanup directives are served by the server, the rest
  // by its host. `done` gets the status and the host's result info.
  pmix_status_t job_control(const std::vector<proc_id>& targets, const info_list& directives,
                            std::function<void(pmix_status_t, info_list)> done);

  // PMIx_Query_info: the server's host answers; `done` gets the status and
  // the results.
  pmix_status_t query(const std::vector<pmix::query>& queries,
                      std::function<void(pmix_status_t, info_list)> done);

  // PMIx_Notify_event beyond this process: the server delivers it within its
  // range (and tells its host); `done` gets its answer.
  pmix_status_t notify(const event& ev, done_fn done);

  // PMIx_Publish / _Lookup / _Unpublish: the server's host keeps the data.
  pmix_status_t publish(const info_list& info, done_fn done);
  pmix_status_t lookup_published(const std::vector<std::string>& keys, const info_list& info,
                       std::function<void(pmix_status_t, std::vector<pdata>)> done);
  pmix_status_t unpublish(const std::vector<std::string>& keys, const info_list& info, done_fn done);
  // PMIx_Spawn: `done` gets the new job's namespace.
  pmix_status_t spawn(const info_list& job_info, const std::vector<app>& apps,
                      std::function<void(pmix_status_t, std::string)> done);
  // PMIx_Connect / PMIx_Disconnect over `procs`. A connect stores the job
  // data of the other participants' namespaces the server sends.
  pmix_status_t connect_procs(std::vector<proc_id> procs, const info_list& info, bool disconnect, done_fn done);
  // PMIx_Log: through the server (and its host); without a server, logged
  // here (common/log_sink.hpp).
  pmix_status_t log(const info_list& data, const info_list& directives, done_fn done);
  // A request the server hands to its host (allocation, monitoring,
  // credentials, stdin, fabric): `done` gets the status, the info and the
  // InfoReply's data (a credential).
  using host_reply_fn = std::function<void(pmix_status_t, info_list, std::string)>;
  pmix_status_t host_request(const protocol::host_request& r, host_reply_fn done);
  // PMIx_Group_*: the server keeps groups and invitations; `done` gets the
  // status and the group's results (PMIX_GROUP_ID, PMIX_GROUP_MEMBERSHIP,
  // PMIX_GROUP_CONTEXT_ID).
  pmix_status_t group(const protocol::group_request& r, std::function<void(pmix_status_t, info_list)> done);
  // PMIx_IOF_pull: the output of `procs` on `channels` comes to `handler`
  // (on the progress thread) once the server and its host agreed; `done`
  // gets the status and the registration's reference.
  using iof_handler = std::function<void(const protocol::iof_data&)>;
  pmix_status_t iof_pull(const std::vector<proc_id>& procs, pmix_iof_channel_t channels,
                         const info_list& directives, iof_handler handler,
                         std::function<void(pmix_status_t, std::uint64_t)> done);
  // PMIx_IOF_deregister: no more output for that reference.
  pmix_status_t iof_deregister(std::uint64_t ref, done_fn done);
  // PMIx_Resolve_peers / _nodes, from the job data this process holds. An
  // empty nspace means every namespace held; an empty node this node.
  pmix_status_t resolve_peers(const std::string& node, const std::string& nspace, std::vector<proc_id>& out);
  pmix_status_t resolve_nodes(const std::string& nspace, std::string& out);

  // Tells the server this process finalizes; `done` gets its answer.
  pmix_status_t finalize(done_fn done);

  void store_internal(const proc_id& p, const std::string& key, value v);
  // A blocking caller reads its own reply until `done()` holds (see
  // connection::drive); nothing without a server.
  void drive(const std::function<bool()>& done);
  // Runs `task` on the progress thread (or here, inside a progress::scope,
  // when there is no server).
  void post(std::function<void()> task);

  // Ends the connection (pending requests complete with
  // PMIX_ERR_NOT_AVAILABLE) and joins the progress thread.
  void close();
  // In a forked child: forget the parent's connection without touching it.
  void abandon();

 private:
  // Output this process pulled (PMIx_IOF_pull): reference -> handler.
  std::mutex iof_mutex_;
  std::map<std::uint64_t, iof_handler> iof_handlers_;
  std::uint64_t next_iof_ref_ = 0;
  void deliver_iof(std::string_view message);
  session() = default;
  // Its progress thread is joined first, while every member still lives.
  ~session();
  // Every session is made by make() and deleted by dispose(): a session
  // whose last owner lets go on its own progress thread (a completion the
  // thread ran held it, and the process's owner went meanwhile, as at exit
  // without PMIx_Finalize) cannot join that thread there; it is deleted on
  // a thread of its own instead (std::thread's join would throw
  // "Resource deadlock avoided" and end the process).
  static std::shared_ptr<session> make();
  static void dispose(session* s);
  // A collecting fence's data; `whole`: the namespace whose every rank it
  // holds, by the server's word (store::keep_modex), or null.
  void store_modex(std::shared_ptr<const void> owner, std::string_view bytes, const std::string* whole,
                   pmix_status_t& status);
  // Stores a namespace's job data (a serialized JobInfo) unless it is ours.
  bool store_job(std::string_view bytes);

  // ---- OpenPMIx's protocol (client/openpmix_session.cpp) ----
  bool openpmix_ = false;
  std::uint8_t openpmix_buffer_ = 1;  // openpmix::buffer_type
  openpmix::buffer_type buffer_type() const { return static_cast<openpmix::buffer_type>(openpmix_buffer_); }
  std::uint32_t server_major_ = 4;    // 5.x's group messages differ
  // Our IOF pull references -> the server's (a deregistration names it),
  // and the members of groups constructed here (5.x's destruct names them).
  std::map<std::uint64_t, std::uint64_t> iof_remote_;
  std::map<std::string, std::vector<proc_id>> group_members_;
  // Sets up the connection's handlers and starts it (both protocols).
  pmix_status_t start_connection(event_fn on_event);
  void openpmix_unprompted(protocol::envelope& e, const event_fn& on_event, const task_poster& post);
  pmix_status_t openpmix_request(const std::string& payload, connection::completion done);
  pmix_status_t openpmix_commit(std::vector<protocol::scoped_info> data);
  pmix_status_t openpmix_fence(const std::vector<proc_id>& procs, const info_list& info, done_fn done);
  pmix_status_t openpmix_fetch(const proc_id& target, const std::string& key, const info_list& info, value_fn done);
  pmix_status_t openpmix_status_request(const std::string& payload, done_fn done);
  pmix_status_t openpmix_info_request(const std::string& payload, std::function<void(pmix_status_t, info_list)> done);
  pmix_status_t openpmix_lookup(const std::vector<std::string>& keys, const info_list& info,
                                std::function<void(pmix_status_t, std::vector<pdata>)> done);
  pmix_status_t openpmix_spawn(const info_list& job_info, const std::vector<app>& apps,
                               std::function<void(pmix_status_t, std::string)> done);
  pmix_status_t openpmix_connect_procs(const std::vector<proc_id>& procs, const info_list& info, bool disconnect,
                                       done_fn done);
  pmix_status_t openpmix_host_request(const protocol::host_request& r, host_reply_fn done);
  pmix_status_t openpmix_group(const protocol::group_request& r, std::function<void(pmix_status_t, info_list)> done);
  // The job data in an OpenPMIx reply (a namespace's key/values), stored.
  bool openpmix_store_job(std::string_view bytes, const char* what);

  proc_id self_;
  proc_id server_;
  std::atomic<bool> finalizing_{false};  // a lost connection is no event then
  role role_ = role::client;
  std::unique_ptr<connection> conn_;
  std::mutex mutex_;  // guards data_ and staged_
  // connection::set_cpu_to_spare, at the first whole-namespace fence (not
  // std::call_once: its TLS symbols would be exported by libpmix.so.2).
  std::atomic<bool> cpus_counted_{false};
  store data_;
  std::map<std::string, protocol::scoped_info> staged_;  // put since the last commit
};

}  // namespace pmix::client
