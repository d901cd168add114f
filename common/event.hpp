// An event (PMIx_Notify_event) as the library passes it around, and the
// range rules both sides apply (docs/events.md).
#pragma once

#include <pmix_common.h>

#include <functional>
#include <vector>

#include "common/value.hpp"

namespace pmix {

struct event {
  pmix_status_t status = PMIX_SUCCESS;
  proc_id source;
  pmix_data_range_t range = PMIX_RANGE_UNDEF;
  info_list info;
};

// Runs a task on a library thread (the progress thread of a client, a
// thread of the server runtime): how event handler chains move on.
using task_poster = std::function<void(std::function<void()>)>;

// The processes PMIX_EVENT_CUSTOM_RANGE names (a PMIX_PROC, or a data array
// of them); a rank of PMIX_RANK_WILDCARD stands for the whole namespace.
std::vector<proc_id> custom_range(const info_list& info);

// Whether `process` is within the event's range as seen from the notifier:
// used for the notifier's own handlers (the server delivers to everyone
// else). PMIX_RANGE_RM reaches the host only.
bool reaches(const event& ev, const proc_id& notifier, const proc_id& process);

// Whether the event is for default handlers too (not PMIX_EVENT_NON_DEFAULT).
bool for_default_handlers(const event& ev);

}  // namespace pmix
