#include "api/library.hpp"

#include <unistd.h>

namespace pmix::api {

library& lib() {
  static library instance;
  return instance;
}

void library::forget_if_forked() {
  if (!session || pid == getpid()) return;
  session->abandon();
  session.reset();
  client_refs = tool_refs = 0;
  pid = 0;
}

std::shared_ptr<client::session> current_session() {
  auto& l = lib();
  std::lock_guard<std::mutex> guard{l.mutex};
  if (l.pid != getpid()) return nullptr;
  return l.session;
}

void waiter::finish(pmix_status_t st) {
  std::lock_guard<std::mutex> guard{m};
  status = st;
  done = true;
  cv.notify_all();
}

pmix_status_t waiter::wait() {
  std::unique_lock<std::mutex> guard{m};
  cv.wait(guard, [this] { return done; });
  return status;
}

}  // namespace pmix::api
