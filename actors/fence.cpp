#include "actors/fence.hpp"

#include <algorithm>

#include "protocol/codec.hpp"

namespace pmix::actors {

bool fence_tracker::ready() const {
  // Asked on every contribution: while fewer have arrived than are expected
  // the answer needs no walk (contribute() adds each contributor to both).
  if (arrived.size() < expected.size()) return false;
  return std::includes(arrived.begin(), arrived.end(), expected.begin(), expected.end());
}

bool fence_tracker::includes(const proc_id& p) const {
  for (const auto& q : procs)
    if (q.nspace == p.nspace && (q.rank == rank_wildcard || q.rank == p.rank)) return true;
  return false;
}

std::vector<proc_id> fence_book::canonical(std::vector<proc_id> procs) {
  std::sort(procs.begin(), procs.end());
  procs.erase(std::unique(procs.begin(), procs.end()), procs.end());
  std::set<std::string> wild;
  for (const auto& p : procs)
    if (p.rank == rank_wildcard) wild.insert(p.nspace);
  if (!wild.empty())
    procs.erase(std::remove_if(procs.begin(), procs.end(),
                               [&](const proc_id& p) {
                                 return p.rank != rank_wildcard && wild.count(p.nspace) > 0;
                               }),
                procs.end());
  return procs;
}

void fence_book::expect_locals(fence_tracker& t) const {
  for (const auto& p : t.procs) {
    const auto* loc = locality_(p.nspace);
    if (loc == nullptr) continue;
    if (p.rank == rank_wildcard) {
      for (auto r : loc->local_ranks) t.expected.insert(proc_id{p.nspace, r});
    } else if (std::binary_search(loc->local_ranks.begin(), loc->local_ranks.end(), p.rank)) {
      t.expected.insert(p);
    }
  }
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
  auto procs = canonical(msg.procs);
  auto it = by_procs_.find(procs);
  fence_tracker* t = nullptr;
  if (it == by_procs_.end()) {
    fence_tracker fresh;
    fresh.id = next_id_++;
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
    by_procs_.emplace(std::move(procs), id);
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
  t->expected.insert(msg.from);
  const bool first = t->arrived.insert(msg.from).second;
  if (first && t->collect && !msg.data.empty())
    protocol::append_length_delimited(t->data, 1, msg.data);
  t->replies.push_back(std::move(reply));
  status = PMIX_SUCCESS;
  return t;
}

fence_tracker* fence_book::find(std::uint64_t id) {
  auto it = trackers_.find(id);
  return it == trackers_.end() ? nullptr : &it->second;
}

void fence_book::complete(std::uint64_t id, const fence_result& result) {
  auto it = trackers_.find(id);
  if (it == trackers_.end()) return;
  auto replies = std::move(it->second.replies);
  by_procs_.erase(it->second.procs);
  trackers_.erase(it);
  for (auto& r : replies) r(result);
}

std::vector<std::uint64_t> fence_book::waiting_for(const proc_id& p) const {
  std::vector<std::uint64_t> out;
  for (const auto& [id, t] : trackers_)
    if (t.expected.count(p) > 0 && t.arrived.count(p) == 0) out.push_back(id);
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
