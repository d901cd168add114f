// The server library's singleton for one PMIx_server_init..finalize cycle:
// the CAF actor system, the root (server) actor, the socket thread, the
// listening sockets and the rendezvous files. A new one per cycle; its
// destructor undoes everything, so a failed start leaves nothing behind.
#pragma once

#include <caf/actor.hpp>
#include <caf/actor_system.hpp>
#include <caf/actor_system_config.hpp>
#include <caf/scheduler/test_coordinator.hpp>
#include <caf/send.hpp>
#include <atomic>
#include <chrono>
#include <mutex>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "actors/context.hpp"
#include "actors/messages.hpp"
#include "server/actor_loop.hpp"
#include "server/host_module.hpp"
#include "server/rendezvous.hpp"
#include "server/server_directives.hpp"
#include "server/topology.hpp"
#include "transport/io_thread.hpp"

namespace pmix::server {

// The entry point of the fault plane (docs/fault-injection.md): parses
// `plan` (empty: no plane) and installs it, with `seed`, in the context the
// actors share and in the host module's up-call wrappers. runtime::start
// calls it with the settings' plan; a simulator that builds its own context
// may call it too. PMIX_ERR_BAD_PARAM and `error` on a bad plan.
pmix_status_t install_faults(actors::server_context& ctx, host::module& host, const std::string& plan,
                             std::uint64_t seed, std::string& error);

class runtime {
 public:
  // Brings everything up; on error nothing is left behind (spec 000,
  // 20.2.247.5) and `error` says why.
  // `attributes` answers clients' attribute-support queries (host::module).
  static pmix_status_t start(const settings& s, const pmix_server_module_t* module,
                             host::attribute_answer_fn attributes, std::unique_ptr<runtime>& out,
                             std::string& error);
  ~runtime();  // the full teardown (calls stop() first)

  // The first half of finalize: tools stop finding the server, host
  // callbacks are dropped, sockets close, and the actors are told to exit,
  // so calls still in flight end with PMIX_ERR_NOT_AVAILABLE. Idempotent.
  void stop();
  bool stopped() const { return stopped_; }

  const actors::server_context& context() const { return *ctx_; }
  // The URI tools are told, and the alternatives (PMIX_MYSERVER_ALT_URIS).
  const std::string& uri() const { return uri_; }
  const std::vector<std::string>& alt_uris() const { return alt_uris_; }
  host::module& host() { return *host_; }
  const caf::actor& root() const { return root_; }

  // Sends a message to the server actor (under the progress lock when the
  // host drives progress).
  template <class Msg>
  void tell(Msg&& msg) {
    if (!external_) return caf::anon_send(root_, std::forward<Msg>(msg));
    if (loop_) {
      // Queued for the loop thread, which sends it; woken only by the
      // request that finds the queue empty. (No address: the server actor.)
      post(caf::actor_addr{}, caf::make_message(std::forward<Msg>(msg)));
      return;
    }
    std::lock_guard<std::recursive_mutex> guard{ctx_->gate->mutex()};
    caf::anon_send(root_, std::forward<Msg>(msg));
  }

  // PMIX_EXTERNAL_PROGRESS: the server has no threads; the host calls
  // PMIx_Progress, which lands here (one round: sockets, then every actor
  // job), and blocking calls drive progress while they wait. A no-op
  // otherwise.
  bool external() const { return external_; }
  // A non-blocking PMIx_server_register_client in loop mode: a plain record
  // queued for the loop thread, which sends a run of them as one message
  // (actors::registration_batch, built on the loop thread). The host thread
  // allocates nothing: the queue keeps its storage. False when not in loop
  // mode (the caller sends a register_client_msg instead).
  bool post_registration(const char* nspace, const actors::registration_batch::call& c);
  void progress(int timeout_ms = 0);
  // Waits until `ready()` holds: by progressing (external progress) or by
  // `wait()` (the actors' own threads progress).
  // With PMIX_CXX_PROGRESS_FD a waiting host thread runs turns itself, as
  // the host's loop does (one at a time, under the gate's lock).
  template <class Ready, class Wait>
  void wait_until(Ready ready, Wait wait) {
    if (!external_ || (loop_ && !hosted_)) return wait();
    while (!ready()) progress(1);
  }
  std::size_t connection_count() const { return io_ ? io_->connection_count() : 0; }
  std::size_t actors_running() const;

 private:
  runtime() = default;
  pmix_status_t open_sockets(const settings& s, std::string& error);
  void open_openpmix_listener(const settings& s);
  pmix_status_t write_rendezvous(const settings& s, std::string& error);
  pmix_status_t report_uri(const settings& s, std::string& error);

  caf::actor_system_config cfg_;  // declared first: destroyed last
  std::unique_ptr<caf::actor_system> system_;
  bool external_ = false;
  bool loop_ = false;        // PMIX_CXX_LOOP: sockets and actors on one thread of ours
  // PMIX_CXX_PROGRESS_FD: loop mode with no thread of ours: the host's loop
  // calls PMIx_Progress (turn()) when the epoll descriptor is readable; what
  // is posted meanwhile writes the wake-up eventfd, the next timeout a
  // timerfd, both in that epoll set.
  bool hosted_ = false;
  void turn();
  // Loop mode: how long the loop thread polls (yielding its CPU) before it
  // sleeps: settings::loop_spin (see loop()).
  std::chrono::microseconds spin_{0};
  std::thread loop_thread_;
  std::mutex inbox_mutex_;
  // What host threads queued for the loop thread to send, in order: a
  // message (to the server actor when `to` is empty), or one registration
  // of the namespace inbox_nspaces_[nspace].
  struct posted {
    caf::actor_addr to;
    caf::message message;
    bool registers = false;
    actors::registration_batch::call registration{};
    std::uint32_t nspace = 0;
  };
  std::vector<posted> inbox_;   // for the loop thread to send
  std::vector<posted> posted_;  // the loop thread's: being sent
  std::vector<std::string> inbox_nspaces_, posted_nspaces_;  // the registrations' namespaces
  bool loop_done_ = false;  // under inbox_mutex_: the loop has stopped
  std::vector<caf::actor_addr> late_;  // under inbox_mutex_: posted after that, released by ~runtime
  bool sleeping_ = false;   // under inbox_mutex_: the loop blocks in epoll_wait; post() wakes it
  std::atomic<bool> inbox_ready_{false};  // inbox_ has messages: a spinning loop stops spinning
  void loop();
  void run_posted_and_actors();  // a turn's work after the sockets (loop(), turn())
  // Loop mode: queues a message for the loop thread to send, waking it only
  // when it sleeps (a spinning loop sees inbox_ready_).
  // False when the loop has stopped (the message is dropped).
  bool post(caf::actor_addr to, caf::message m);
  // Runs `task` on the server's thread (the loop, or the server actor);
  // false when the server is stopping (host::set_release_runner).
  bool defer(std::function<void()>& task);
  std::atomic<bool> stopped_{false};
  caf::scheduler::test_coordinator* manual_ = nullptr;  // with external progress
  // With external progress and in loop mode: runs the actors that have work
  // and follows the clock (server/actor_loop.hpp). Under the gate's lock, on
  // the thread running actors.
  std::unique_ptr<actor_loop> actors_;
  int next_timeout_ms_ = -1;  // loop mode: the longest the loop may sleep
  // Loop mode: sends posted_ (see the definition).
  void send_posted();
  static void drop_posted(std::vector<posted>& entries, std::vector<std::string>& nspaces);
  caf::actor root_;
  std::shared_ptr<host::module> host_;
  std::shared_ptr<actors::server_context> ctx_;
  std::unique_ptr<transport::io_thread> io_;
  std::shared_ptr<thread_binding> binding_;
  std::vector<int> listeners_;  // until the socket thread owns them
  int openpmix_listener_ = -1;   // likewise: OpenPMIx's protocol (issue 35)
  std::string openpmix_uri_;
  std::vector<std::string> created_dirs_;  // missing temporary directories we made
  std::string socket_dir_;   // the server's own directory, holding the socket
  std::string socket_path_;
  std::string topology_file_;
  std::string uri_;                    // what tools are told (rendezvous, report)
  std::vector<std::string> alt_uris_;  // PMIX_MYSERVER_ALT_URIS
  rendezvous_set rendezvous_;
  // Takes the socket, the topology file and the directories we made off the
  // file system (once): in loop mode while the loop thread wakes up to end
  // (stop()), else at the end of ~runtime.
  void remove_files();
  bool files_removed_ = false;
};

}  // namespace pmix::server
