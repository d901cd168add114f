// The server's collective trackers for PMIx_Fence (plain state owned by the
// server actor; tests/actors/fence_test drives it without actors).
//
// A tracker is identified by its canonical participant set. It expects one
// contribution from every participant that runs on this node; when all have
// arrived it either completes here (every participant is local) or is handed
// to the host's fence_nb. A participant that leaves before contributing
// (finalized or died) fails the tracker instead of leaving it hanging.
#pragma once

#include <pmix_common.h>

#include <chrono>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "actors/messages.hpp"
#include "common/value.hpp"

namespace pmix::transport {
class fence_board;
}

namespace pmix::actors {

// What the server knows about a namespace's placement.
struct nspace_locality {
  std::vector<rank_t> local_ranks;  // sorted
  std::optional<std::uint32_t> job_size;
};

struct fence_tracker {
  using reply_fn = std::function<void(const fence_result&)>;

  std::uint64_t id = 0;
  std::string tag;             // fence_msg::tag
  std::vector<proc_id> procs;  // canonical
  info_list info;
  bool collect = false;
  bool all_local = false;
  bool host_called = false;
  // The local participants, sorted, and which of them have contributed
  // (same positions): one allocation per fence, not one per participant.
  std::vector<proc_id> expected;
  std::vector<bool> arrived_flags;
  std::size_t arrived_count = 0;
  std::vector<reply_fn> replies;
  std::string data;  // serialized wire::ModexData of the local contributions
  // Every contribution so far reads its reply from the fence board
  // (fence_msg::board_wait).
  bool all_on_board = true;
  // When the earliest PMIX_TIMEOUT a contribution gave passes (the server
  // actor fails the tracker with PMIX_ERR_TIMEOUT then, and forgets it).
  std::optional<std::chrono::steady_clock::time_point> deadline;

  bool ready() const { return arrived_count == expected.size(); }
  // Names `p` (explicitly or through a wildcard).
  bool includes(const proc_id& p) const;
  // `p` is a local participant that has not contributed yet.
  bool waits_for(const proc_id& p) const;
  // The local participants that have contributed, in order.
  std::vector<proc_id> arrived() const;
  // Adds `p` to the local participants (if new); returns its position.
  std::size_t expect(const proc_id& p);
  // `p` will not contribute and is not waited for (a group member that left
  // or died where the group allows it); it is listed in `excused`.
  void excuse(const proc_id& p);
  std::vector<proc_id> excused;
};

class fence_book {
 public:
  using locality_fn = std::function<const nspace_locality*(const std::string& nspace)>;
  // Encodes a completed tracker's reply body from its status and data (a
  // FenceReply by default; PMIx_Connect's trackers answer a
  // ConnectProcsReply).
  using encode_fn = std::function<std::string(pmix_status_t, std::string_view data)>;
  // A namespace's fence board (null: none).
  using board_fn = std::function<transport::fence_board*(const std::string& nspace)>;

  explicit fence_book(locality_fn locality, encode_fn encode = {})
      : locality_(std::move(locality)), encode_(std::move(encode)) {}

  // Fences over one namespace's wildcard whose every contributor waits on
  // the board are answered there (fence_result::on_board).
  void set_boards(board_fn boards) { boards_ = std::move(boards); }

  // Sorted, duplicates removed, explicit ranks dropped where a wildcard of
  // the same namespace is present. Empty input stays empty.
  static std::vector<proc_id> canonical(std::vector<proc_id> procs);

  // Records a contribution. On success returns the tracker (which may now be
  // ready()); on error returns nullptr and sets `status` (the caller replies
  // to this contributor alone): PMIX_ERR_BAD_PARAM when the contributor is
  // not a participant or the collect flag differs from the other participants'.
  fence_tracker* contribute(const fence_msg& msg, fence_tracker::reply_fn reply,
                            pmix_status_t& status);

  fence_tracker* find(std::uint64_t id);
  // Delivers `result` to every contributor and forgets the tracker. The
  // reply's wire body is encoded here, once for all of them.
  void complete(std::uint64_t id, fence_result result);

  // Trackers that still wait for `p` (expected, not arrived).
  std::vector<std::uint64_t> waiting_for(const proc_id& p) const;
  // Trackers naming a participant of `nspace`.
  std::vector<std::uint64_t> naming(const std::string& nspace) const;

  std::size_t size() const { return trackers_.size(); }
  // Replies posted on a fence board so far.
  std::uint64_t board_posts() const { return board_posts_; }

 private:
  void expect_locals(fence_tracker& t) const;
  bool compute_all_local(const fence_tracker& t) const;
  // The FenceReply's whole_namespace (protocol/pmix.proto): a collecting
  // fence over one namespace's wildcard whose data holds one RankData with
  // items for each of its ranks, and nothing else. One look at each RankData
  // here saves each client of the node the same look.
  bool whole_namespace(const fence_tracker& t, pmix_status_t status, std::string_view data);

  // Posts a completed tracker's reply on its namespace's board when every
  // contributor waits there and it fits; true if posted.
  bool post_on_board(const fence_tracker& t, const std::string& reply);

  locality_fn locality_;
  encode_fn encode_;
  board_fn boards_;
  std::map<std::pair<std::string, std::vector<proc_id>>, std::uint64_t> by_procs_;
  std::pair<std::string, std::vector<proc_id>> lookup_;  // contribute's key, reused
  std::map<std::uint64_t, fence_tracker> trackers_;
  std::uint64_t next_id_ = 1;
  std::vector<bool> seen_;  // whole_namespace's ranks, reused
  std::uint64_t board_posts_ = 0;
};

}  // namespace pmix::actors
