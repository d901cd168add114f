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
  std::vector<proc_id> members;  // now: without those that left or died
  // As constructed: a destruct is tracked over these (those gone since are
  // excused), so members that call it before and after a departure meet.
  std::vector<proc_id> constructed;
  std::optional<std::uint64_t> context_id;
  // PMIX_GROUP_NOTIFY_TERMINATION: a member that dies is dropped and the
  // others get PMIX_GROUP_MEMBER_FAILED; a destruct then completes without it.
  bool notify_termination = false;
};

// Each member's PMIX_GROUP_INFO, kept under the group's context id for
// PMIx_Get(member, key, {PMIX_GROUP_CONTEXT_ID qualifier}). It outlives the
// group (Open MPI destructs at once and reads later) and goes with the
// member's namespace, or the oldest when more than max_group_infos are kept.
using member_infos = std::map<proc_id, info_list>;
inline constexpr std::size_t max_group_infos = 4096;

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
  // Constructs under way: the group info each local member gave so far.
  std::map<std::string, member_infos> pending_info;
  std::map<std::uint64_t, member_infos> info_by_context;
};

}  // namespace pmix::actors
