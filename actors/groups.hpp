// PMIx groups (PMIx_Group_*): plain state the server actor keeps. The
// collectives (construct, destruct) are fence_book trackers tagged with the
// group's name; this holds what outlives them: the groups that exist here
// and the invitations under way.
#pragma once

#include <caf/response_promise.hpp>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "common/value.hpp"

namespace pmix::actors {

struct group_record {
  std::vector<proc_id> members;
  std::optional<std::uint64_t> context_id;
};

// PMIx_Group_invite: the leader waits until every invited process joined
// (PMIX_GROUP_ACCEPT) or declined; those that accepted wait too.
struct pending_invite {
  proc_id leader;
  caf::response_promise leader_reply;
  bool want_context_id = false;
  std::vector<proc_id> invited;  // not yet answered
  std::vector<proc_id> accepted;
  std::vector<caf::response_promise> accepted_replies;
};

struct group_state {
  std::map<std::string, group_record> groups;
  std::map<std::string, pending_invite> invites;
  std::uint64_t next_context_id = 1;  // unique on this server
};

}  // namespace pmix::actors
