#include "server_progress.hpp"

#include <pmix.h>
#include <unistd.h>

#include <caf/io/middleman.hpp>
#include <caf/io/network/default_multiplexer.hpp>
#include <caf/io/network/event_handler.hpp>
#include <caf/io/network/operation.hpp>

#include <future>
#include <memory>
#include <utility>

namespace pmixd {
namespace {

namespace net = caf::io::network;

// A descriptor of the multiplexer's that is not a socket: readable means
// the server has work. CAF owns event handlers by raw pointer until it
// says it removed them (removed_from_loop): the handler deletes itself
// then, and tells whoever waits.
class progress_handler final : public net::event_handler {
 public:
  progress_handler(net::default_multiplexer& dm, int fd) : net::event_handler(dm, fd) {}
  void start() { activate(); }
  void stop(std::promise<void>* removed) {
    removed_ = removed;
    passivate();
  }
  void handle_event(net::operation op) override {
    if (op == net::operation::read) PMIx_Progress();
  }
  void removed_from_loop(net::operation op) override {
    if (op != net::operation::read) return;
    std::promise<void>* removed = removed_;
    delete this;  // closes the descriptor (~event_handler)
    if (removed != nullptr) removed->set_value();
  }
  void graceful_shutdown() override { passivate(); }

 private:
  std::promise<void>* removed_ = nullptr;
};

// Only touched on the multiplexer thread (dispatch).
progress_handler* handler = nullptr;

}  // namespace

bool drive_server(caf::actor_system& sys, int fd) {
  auto* dm = dynamic_cast<net::default_multiplexer*>(&sys.middleman().backend());
  if (dm == nullptr) {
    ::close(fd);
    return false;
  }
  std::promise<void> added;
  dm->dispatch([dm, fd, &added] {
    handler = new progress_handler(*dm, fd);
    handler->start();
    added.set_value();
  });
  added.get_future().wait();
  return true;
}

void undrive_server(caf::actor_system& sys) {
  auto* dm = dynamic_cast<net::default_multiplexer*>(&sys.middleman().backend());
  if (dm == nullptr) return;
  std::promise<void> removed;
  bool waiting = false;
  std::promise<void> asked;
  dm->dispatch([&removed, &waiting, &asked] {
    if (handler != nullptr) {
      waiting = true;
      std::exchange(handler, nullptr)->stop(&removed);
    }
    asked.set_value();
  });
  asked.get_future().wait();
  if (waiting) removed.get_future().wait();
}

}  // namespace pmixd
