#include "actors/fence.hpp"

#include <algorithm>

#include "protocol/codec.hpp"
#include "protocol/messages.hpp"
#include "transport/shared_data.hpp"

namespace pmix::actors {

bool fence_tracker::includes(const proc_id& p) const {
  for (const auto& q : procs)
    if (q.nspace == p.nspace && (q.rank == rank_wildcard || q.rank == p.rank)) return true;
  return false;
}

bool fence_tracker::waits_for(const proc_id& p) const {
  auto it = std::lower_bound(expected.begin(), expected.end(), p);
  return it != expected.end() && *it == p && !arrived_flags[static_cast<std::size_t>(it - expected.begin())];
}

std::vector<proc_id> fence_tracker::arrived() const {
  std::vector<proc_id> out;
  out.reserve(arrived_count);
  for (std::size_t k = 0; k < expected.size(); ++k)
    if (arrived_flags[k]) out.push_back(expected[k]);
  return out;
}

std::size_t fence_tracker::expect(const proc_id& p) {
  auto it = std::lower_bound(expected.begin(), expected.end(), p);
  const auto k = static_cast<std::size_t>(it - expected.begin());
  if (it == expected.end() || !(*it == p)) {
    expected.insert(it, p);
    arrived_flags.insert(arrived_flags.begin() + static_cast<std::ptrdiff_t>(k), false);
  }
  return k;
}

void fence_tracker::excuse(const proc_id& p) {
  if (std::find(excused.begin(), excused.end(), p) != excused.end()) return;
  auto it = std::lower_bound(expected.begin(), expected.end(), p);
  if (it != expected.end() && *it == p) {
    const auto k = static_cast<std::size_t>(it - expected.begin());
    if (!arrived_flags[k]) {
      arrived_flags[k] = true;
      ++arrived_count;
    }
  }
  excused.push_back(p);
}

std::vector<proc_id> fence_book::canonical(std::vector<proc_id> procs) {
  if (procs.size() <= 1) return procs;
  std::sort(procs.begin(), procs.end());
  procs.erase(std::unique(procs.begin(), procs.end()), procs.end());
  // Each namespace's entries are adjacent now: where one of them is the
  // wildcard, only the wildcard stays.
  std::size_t kept = 0;
  for (std::size_t k = 0; k < procs.size();) {
    std::size_t end = k + 1;
    std::size_t wildcard = procs[k].rank == rank_wildcard ? k : procs.size();
    for (; end < procs.size() && procs[end].nspace == procs[k].nspace; ++end)
      if (procs[end].rank == rank_wildcard) wildcard = end;
    const std::size_t from = wildcard < end ? wildcard : k;
    const std::size_t to = wildcard < end ? wildcard + 1 : end;
    for (std::size_t i = from; i < to; ++i) {
      if (kept != i) procs[kept] = std::move(procs[i]);
      ++kept;
    }
    k = end;
  }
  procs.resize(kept);
  return procs;
}

void fence_book::expect_locals(fence_tracker& t) const {
  // procs is canonical (sorted; a namespace named by its wildcard has no
  // other entry), and local_ranks are sorted: appending keeps `expected`
  // sorted.
  for (const auto& p : t.procs) {
    const auto* loc = locality_(p.nspace);
    if (loc == nullptr) continue;
    if (p.rank == rank_wildcard) {
      t.expected.reserve(t.expected.size() + loc->local_ranks.size());
      for (auto r : loc->local_ranks) t.expected.push_back(proc_id{p.nspace, r});
    } else if (std::binary_search(loc->local_ranks.begin(), loc->local_ranks.end(), p.rank)) {
      t.expected.push_back(p);
    }
  }
  t.arrived_flags.assign(t.expected.size(), false);
}

bool fence_book::compute_all_local(const fence_tracker& t) const {
  for (const auto& p : t.procs) {
    const auto* loc = locality_(p.nspace);
    if (loc == nullptr) return false;
    if (p.rank == rank_wildcard) {
      if (!loc->job_size || loc->local_ranks.size() != *loc->job_size) return false;
    } else if (!std::binary_search(loc->local_ranks.begin(), loc->local_ranks.end(), p.rank)) {
      return false;
    }
  }
  return true;
}

fence_tracker* fence_book::contribute(const fence_msg& msg, fence_tracker::reply_fn reply,
                                      pmix_status_t& status) {
  // The key is made in a member kept for it: assigning reuses its
  // capacity, so a contribution to a known tracker allocates nothing here.
  auto& key = lookup_;
  key.first = msg.tag;
  key.second.assign(msg.procs.begin(), msg.procs.end());
  key.second = canonical(std::move(key.second));
  const auto& procs = key.second;
  auto it = by_procs_.find(key);
  fence_tracker* t = nullptr;
  if (it == by_procs_.end()) {
    fence_tracker fresh;
    fresh.id = next_id_++;
    fresh.tag = msg.tag;
    fresh.procs = procs;
    fresh.info = msg.info;
    fresh.collect = msg.collect;
    if (!fresh.includes(msg.from)) {
      status = PMIX_ERR_BAD_PARAM;
      return nullptr;
    }
    expect_locals(fresh);
    fresh.all_local = compute_all_local(fresh);
    const auto id = fresh.id;
    by_procs_.emplace(key, id);
    t = &trackers_.emplace(id, std::move(fresh)).first->second;
  } else {
    t = &trackers_.at(it->second);
    if (!t->includes(msg.from)) {
      status = PMIX_ERR_BAD_PARAM;
      return nullptr;
    }
    if (t->collect != msg.collect) {
      status = PMIX_ERR_BAD_PARAM;
      return nullptr;
    }
  }
  // A contributor is local by definition, whatever the maps said.
  const auto k = t->expect(msg.from);
  const bool first = !t->arrived_flags[k];
  if (first) {
    t->arrived_flags[k] = true;
    ++t->arrived_count;
  }
  if (first && t->collect && msg.data && !msg.data->empty())
    protocol::append_length_delimited(t->data, 1, *msg.data);
  t->all_on_board = t->all_on_board && msg.board_wait;
  t->replies.push_back(std::move(reply));
  status = PMIX_SUCCESS;
  return t;
}

fence_tracker* fence_book::find(std::uint64_t id) {
  auto it = trackers_.find(id);
  return it == trackers_.end() ? nullptr : &it->second;
}

bool fence_book::whole_namespace(const fence_tracker& t, pmix_status_t status, std::string_view data) {
  if (encode_ || !t.collect || status != PMIX_SUCCESS || data.empty() || t.procs.size() != 1 ||
      t.procs[0].rank != rank_wildcard)
    return false;
  const auto* where = locality_(t.procs[0].nspace);
  if (where == nullptr || !where->job_size || *where->job_size == 0) return false;
  const std::uint32_t size = *where->job_size;
  // Each RankData takes a few bytes at least: a larger job cannot be in
  // the data, and its size bounds what is allocated here.
  if (size > data.size()) return false;
  seen_.assign(size, false);
  std::uint32_t count = 0;
  std::size_t pos = 0;
  std::string_view rank, nspace;
  rank_t number = 0;
  bool has_items = false;
  for (;;) {
    const int got = protocol::detail::next_rank(data, pos, rank);
    if (got == 0) return count == size;
    if (got < 0 || !protocol::detail::peek_rank(rank, nspace, number, has_items)) return false;
    if (!has_items || nspace != t.procs[0].nspace || number >= size || seen_[number]) return false;
    seen_[number] = true;
    ++count;
  }
}

bool fence_book::post_on_board(const fence_tracker& t, const std::string& reply) {
  // The board of a namespace holds one reply at a time. A client waits on it
  // for one fence at a time and only for a fence over its whole namespace,
  // so every local process of that namespace took part in this one, and each
  // read the previous post before it sent this contribution: none can find
  // its reply overwritten (docs/wire-format.md, "Fence board").
  if (!boards_ || encode_ || !t.all_on_board || t.replies.empty() || t.procs.size() != 1 ||
      t.procs[0].rank != rank_wildcard)
    return false;
  auto* board = boards_(t.procs[0].nspace);
  if (board == nullptr || !board->post(reply)) return false;
  ++board_posts_;
  return true;
}

void fence_book::complete(std::uint64_t id, fence_result result) {
  auto it = trackers_.find(id);
  if (it == trackers_.end()) return;
  const std::string_view data = result.data ? std::string_view{*result.data} : std::string_view{};
  const bool whole = whole_namespace(it->second, result.status, data);
  auto reply = encode_ ? encode_(result.status, data) : protocol::fence_reply(result.status, data, whole);
  result.on_board = post_on_board(it->second, reply);
  auto replies = std::move(it->second.replies);
  by_procs_.erase(std::make_pair(it->second.tag, it->second.procs));
  trackers_.erase(it);
  if (result.on_board) {
    for (auto& r : replies) r(result);
    return;
  }
  result.reply = std::make_shared<const std::string>(std::move(reply));
  // Large data goes to local clients as one shared copy (a fence's data is
  // N ranks' worth for each of N clients: O(N^2) bytes through the sockets
  // otherwise). PMIx_Connect's trackers (encode_) answer inline.
  const std::size_t threshold = transport::shared_data_threshold();
  if (!encode_ && data.size() >= threshold) {
    result.shared = transport::shared_data::make(data);
    if (result.shared)
      result.shared_reply = std::make_shared<const std::string>(protocol::fence_reply_shared(result.status, data.size(), whole));
  }
  for (auto& r : replies) r(result);
}

std::vector<std::uint64_t> fence_book::waiting_for(const proc_id& p) const {
  std::vector<std::uint64_t> out;
  for (const auto& [id, t] : trackers_)
    if (t.waits_for(p)) out.push_back(id);
  return out;
}

std::vector<std::uint64_t> fence_book::naming(const std::string& nspace) const {
  std::vector<std::uint64_t> out;
  for (const auto& [id, t] : trackers_)
    for (const auto& p : t.procs)
      if (p.nspace == nspace) {
        out.push_back(id);
        break;
      }
  return out;
}

}  // namespace pmix::actors
