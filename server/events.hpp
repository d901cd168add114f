// Event handlers (PMIx_Register_event_handler and friends): the process's
// registry, the order of a notification's handler chain, and running that
// chain on library threads (docs/events.md).
//
// The registry belongs to the process, not to a connection: a client, a tool
// and a server register handlers the same way. Handlers run on a library
// thread (spec 002): one after the other, each started when the previous one
// called its completion callback, until one answers
// PMIX_EVENT_ACTION_COMPLETE or the chain ends.
#pragma once

#include <pmix_common.h>

#include <cstddef>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "common/event.hpp"
#include "common/value.hpp"

namespace pmix::api::events {

struct handler {
  std::size_t id = 0;
  std::string name;                   // PMIX_EVENT_HDLR_NAME
  std::vector<pmix_status_t> codes;   // none: a default handler
  pmix_notification_fn_t fn = nullptr;
  std::optional<std::uint64_t> object;  // PMIX_EVENT_RETURN_OBJECT, handed back in the info

  bool matches(pmix_status_t status) const;
};

// The handlers and their order. The chain for an event is: the handler
// registered PMIX_EVENT_HDLR_FIRST, then those for exactly one code, then
// those for several codes, then the default handlers (no codes), then the
// one registered PMIX_EVENT_HDLR_LAST. Within a category the order is that
// of registration, changed by PMIX_EVENT_HDLR_PREPEND (front),
// PMIX_EVENT_HDLR_FIRST_IN_CATEGORY / _LAST_IN_CATEGORY (pinned to the
// front / back), PMIX_EVENT_HDLR_BEFORE / _AFTER (next to a named handler).
class registry {
 public:
  // Adds a handler with these directives; its id (from 1) goes to `id`.
  // PMIX_ERR_EVENT_REGISTRATION when a unique place (first, last, first or
  // last in its category) is taken, PMIX_ERR_NOT_FOUND when BEFORE/AFTER
  // names no handler of its category.
  pmix_status_t add(std::vector<pmix_status_t> codes, const info_list& directives,
                    pmix_notification_fn_t fn, std::size_t& id, std::string& error);
  bool remove(std::size_t id);
  void clear();
  bool empty() const;
  // The handlers `ev` reaches, in chain order (default handlers only when
  // the event is not PMIX_EVENT_NON_DEFAULT).
  std::vector<handler> chain_for(const event& ev) const;

 private:
  struct category {
    std::optional<handler> first, last;  // _FIRST_IN_CATEGORY / _LAST_IN_CATEGORY
    std::vector<handler> middle;
  };
  category& category_of(const handler& h);

  mutable std::mutex mutex_;
  std::optional<handler> first_, last_;
  category single_, multi_, defaults_;
  std::size_t next_id_ = 0;  // references start at 0, as OpenPMIx's do
};

// The process's registry.
registry& handlers();

// Runs the chain of handlers `ev` reaches, every step through `post` (on a
// library thread). Nothing happens when no handler matches.
void deliver(event ev, task_poster post);

// In a forked child: forget the parent's handlers.
void forget_after_fork();

}  // namespace pmix::api::events
