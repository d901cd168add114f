// Completion of host up-calls: the callback the host module wrapper runs
// (on whatever thread the host completes on) sends an upcall_result back to
// the actor that made the up-call. It holds only a weak address and passes
// the server's gate, so a late host callback after finalize is dropped.
#pragma once

#include <caf/actor_addr.hpp>
#include <caf/actor_cast.hpp>
#include <caf/send.hpp>
#include <functional>
#include <string>

#include "actors/context.hpp"
#include "actors/messages.hpp"

namespace pmix::actors {

using upcall_done = std::function<void(pmix_status_t, std::string)>;

inline upcall_done reply_to_actor(const caf::actor_addr& addr, const context_ptr& ctx,
                                  std::uint64_t id) {
  auto gate = ctx->gate;
  return [addr, gate, id](pmix_status_t status, std::string data) {
    gate->send_if_open(addr, upcall_result{id, status, std::move(data)});
  };
}

}  // namespace pmix::actors
