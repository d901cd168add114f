#include "api/library.hpp"

#include "common/fork_park.hpp"
#include "server/events.hpp"

#include <pthread.h>
#include <unistd.h>

#include <new>

namespace pmix::api {
namespace {

// In a forked child, none of the parent's threads exist: forget the parent's
// session without joining or signalling anything, so that the child can
// initialize afresh (a clone) or simply exit (notes/caf-0.17.md 5.4).
void forget_after_fork() {
  auto& l = lib();
  new (&l.mutex) std::mutex();  // a parent thread may have held it
  if (l.session) l.session->abandon();
  for (auto& c : l.connections) c->abandon();
  // Leaked on purpose, parked so that it stays reachable (fork_park.hpp).
  fork_park::park(l.session);
  fork_park::park(l.connections);
  fork_park::park(l.server_self);
  new (&l.session) std::shared_ptr<client::session>();
  new (&l.connections) std::vector<std::shared_ptr<client::session>>();
  new (&l.connections_changed) std::condition_variable();
  new (&l.server_self) std::shared_ptr<client::session>();
  l.client_refs = l.tool_refs = 0;
  l.pid = 0;
  events::forget_after_fork();
}

}  // namespace

library& lib() {
  static library instance;
  static const int registered = pthread_atfork(nullptr, nullptr, forget_after_fork);
  (void)registered;
  return instance;
}

void library::forget_if_forked() {
  if (!session || pid == getpid()) return;
  session->abandon();
  session.reset();
  for (auto& c : connections) c->abandon();
  connections.clear();
  client_refs = tool_refs = 0;
  pid = 0;
}

bool library::initialized() const { return session && pid == getpid(); }

std::shared_ptr<client::session> library::connection_to(const proc_id& server) const {
  for (const auto& c : connections)
    if (c->server() == server && c->connected()) return c;
  return nullptr;
}

std::vector<std::shared_ptr<client::session>> library::take_sessions() {
  std::vector<std::shared_ptr<client::session>> out;
  if (session) out.push_back(session);
  for (auto& c : connections)
    if (c != session) out.push_back(c);
  connections.clear();
  session.reset();
  pid = 0;
  tool_module.reset();
  tool_module_slots = 28;
  connections_changed.notify_all();  // PMIx_tool_set_server stops waiting
  return out;
}

std::shared_ptr<client::session> current_session() {
  auto& l = lib();
  std::lock_guard<std::mutex> guard{l.mutex};
  // Every Get, Put and Fence comes here: no getpid() (a system call, about a
  // third of a PMIx_Get here). A forked child finds pid 0 already: the
  // atfork handler above forgot the parent's session.
  if (l.pid != 0 && l.session) return l.session;
  return l.server_self;
}

void waiter::finish(pmix_status_t st) {
  std::lock_guard<std::mutex> guard{m};
  status = st;
  done.store(true, std::memory_order_release);
  cv.notify_all();
}

bool waiter::is_done() { return done.load(std::memory_order_acquire); }

pmix_status_t waiter::wait() {
  if (done.load(std::memory_order_acquire)) return status;  // answered while this thread read
  std::unique_lock<std::mutex> guard{m};
  cv.wait(guard, [this] { return done.load(std::memory_order_relaxed); });
  return status;
}

}  // namespace pmix::api
