#include "datastore.hpp"

#include <algorithm>
#include <set>

#include "info.hpp"

namespace pmixrun {
namespace {

// Narrower ranges win when a key has several visible entries.
int narrowness(pmix_data_range_t r) {
  switch (r) {
    case PMIX_RANGE_PROC_LOCAL:
      return 2;
    case PMIX_RANGE_NAMESPACE:
      return 1;
    default:
      return 0;
  }
}

// Two entries of these ranges and owners would be seen by a common process.
bool same_scope(pmix_data_range_t range, const pmix_proc_t& a, const pmix_proc_t& b) {
  switch (range) {
    case PMIX_RANGE_NAMESPACE:
      return PMIX_CHECK_NSPACE(a.nspace, b.nspace);
    case PMIX_RANGE_PROC_LOCAL:
      return same_proc(a, b);
    default:
      return true;
  }
}

// `viewer` may see an entry of this range published by `owner`.
bool visible_to(pmix_data_range_t range, const pmix_proc_t& owner, const pmix_proc_t& viewer) {
  return same_scope(range, owner, viewer);
}

}  // namespace

datastore::~datastore() {
  for (auto& e : entries_) PMIX_VALUE_DESTRUCT(&e.value);
}

void datastore::erase(std::list<entry>::iterator it) {
  PMIX_VALUE_DESTRUCT(&it->value);
  entries_.erase(it);
}

pmix_status_t datastore::publish(const pmix_proc_t& owner, uint32_t uid, pmix_data_range_t range,
                                 pmix_persistence_t persistence, const std::vector<item>& items) {
  std::set<std::string> keys;
  for (const auto& [key, value] : items) {
    if (key.empty() || value == nullptr) return PMIX_ERR_BAD_PARAM;
    if (!keys.insert(key).second) return PMIX_ERR_DUPLICATE_KEY;
    for (const auto& e : entries_)
      if (e.key == key && e.uid == uid && e.range == range && same_scope(range, e.owner, owner))
        return PMIX_ERR_DUPLICATE_KEY;
  }
  for (const auto& [key, value] : items) {
    entry e;
    e.key = key;
    PMIX_VALUE_CONSTRUCT(&e.value);
    const pmix_status_t rc = PMIx_Value_xfer(&e.value, value);
    if (rc != PMIX_SUCCESS) {
      PMIX_VALUE_DESTRUCT(&e.value);
      return rc;  // earlier items of this call stay: only out-of-memory gets here
    }
    e.owner = owner;
    e.uid = uid;
    e.range = range;
    e.persistence = persistence;
    e.serial = ++serial_;
    entries_.push_back(e);
  }
  retry_waiting();
  return PMIX_SUCCESS;
}

std::list<datastore::entry>::iterator datastore::best_match(const request& req,
                                                            const std::string& key) {
  auto best = entries_.end();
  for (auto it = entries_.begin(); it != entries_.end(); ++it) {
    if (it->key != key || it->uid != req.uid) continue;
    if (!visible_to(it->range, it->owner, req.requester)) continue;
    if (req.range && !same_scope(*req.range, it->owner, req.requester)) continue;
    if (best == entries_.end() || narrowness(it->range) > narrowness(best->range) ||
        (narrowness(it->range) == narrowness(best->range) && it->serial > best->serial))
      best = it;
  }
  return best;
}

bool datastore::answer(const request& req, bool all_or_nothing) {
  std::vector<std::list<entry>::iterator> found;
  for (const auto& key : req.keys) {
    auto it = best_match(req, key);
    if (it != entries_.end()) {
      found.push_back(it);
    } else if (all_or_nothing) {
      return false;
    }
  }
  if (found.empty()) {
    if (all_or_nothing) return false;
    if (req.cbfunc != nullptr) req.cbfunc(PMIX_ERR_NOT_FOUND, nullptr, 0, req.cbdata);
    return true;
  }
  const std::size_t n = found.size();
  pmix_pdata_t* pdata = nullptr;
  PMIX_PDATA_CREATE(pdata, n);
  for (std::size_t k = 0; k < n; ++k) {
    pdata[k].proc = found[k]->owner;
    PMIX_LOAD_KEY(pdata[k].key, found[k]->key.c_str());
    PMIx_Value_xfer(&pdata[k].value, &found[k]->value);
  }
  // The same entry may answer two keys only if a key repeats; erase once.
  std::sort(found.begin(), found.end(), [](auto a, auto b) { return a->serial < b->serial; });
  found.erase(std::unique(found.begin(), found.end()), found.end());
  for (auto it : found)
    if (it->persistence == PMIX_PERSIST_FIRST_READ) erase(it);
  // The library copies what it needs before the callback returns.
  if (req.cbfunc != nullptr) req.cbfunc(PMIX_SUCCESS, pdata, n, req.cbdata);
  PMIX_PDATA_FREE(pdata, n);
  return true;
}

void datastore::lookup(const pmix_proc_t& requester, uint32_t uid, std::vector<std::string> keys,
                       std::optional<pmix_data_range_t> range, bool wait,
                       std::optional<clock::time_point> deadline, pmix_lookup_cbfunc_t cbfunc,
                       void* cbdata) {
  request req{requester, uid, std::move(keys), range, deadline, cbfunc, cbdata};
  if (req.keys.empty()) {
    if (cbfunc != nullptr) cbfunc(PMIX_ERR_BAD_PARAM, nullptr, 0, cbdata);
    return;
  }
  if (answer(req, wait)) return;
  waiting_.push_back(std::move(req));
}

void datastore::retry_waiting() {
  for (auto it = waiting_.begin(); it != waiting_.end();) {
    if (answer(*it, true)) {
      it = waiting_.erase(it);
    } else {
      ++it;
    }
  }
}

pmix_status_t datastore::unpublish(const pmix_proc_t& owner, uint32_t uid,
                                   const std::vector<std::string>* keys,
                                   std::optional<pmix_data_range_t> range) {
  auto mine = [&](const entry& e) {
    return e.uid == uid && same_proc(e.owner, owner) && (!range || e.range == *range);
  };
  if (keys == nullptr) {
    for (auto it = entries_.begin(); it != entries_.end();) {
      auto next = std::next(it);
      if (mine(*it)) erase(it);
      it = next;
    }
    return PMIX_SUCCESS;
  }
  pmix_status_t rc = PMIX_SUCCESS;
  for (const auto& key : *keys) {
    bool removed = false;
    for (auto it = entries_.begin(); it != entries_.end();) {
      auto next = std::next(it);
      if (it->key == key && mine(*it)) {
        erase(it);
        removed = true;
      }
      it = next;
    }
    if (!removed) rc = PMIX_ERR_NOT_FOUND;
  }
  return rc;
}

void datastore::proc_ended(const pmix_proc_t& proc) {
  for (auto it = entries_.begin(); it != entries_.end();) {
    auto next = std::next(it);
    if (it->persistence == PMIX_PERSIST_PROC && same_proc(it->owner, proc)) erase(it);
    it = next;
  }
  for (auto it = waiting_.begin(); it != waiting_.end();) {
    if (same_proc(it->requester, proc)) {
      if (it->cbfunc != nullptr) it->cbfunc(PMIX_ERR_NOT_FOUND, nullptr, 0, it->cbdata);
      it = waiting_.erase(it);
    } else {
      ++it;
    }
  }
}

void datastore::job_ended(const std::string& nspace) {
  for (auto it = entries_.begin(); it != entries_.end();) {
    auto next = std::next(it);
    if (it->persistence == PMIX_PERSIST_APP && PMIX_CHECK_NSPACE(it->owner.nspace, nspace.c_str()))
      erase(it);
    it = next;
  }
}

void datastore::expire(clock::time_point now) {
  for (auto it = waiting_.begin(); it != waiting_.end();) {
    if (it->deadline && *it->deadline <= now) {
      if (it->cbfunc != nullptr) it->cbfunc(PMIX_ERR_TIMEOUT, nullptr, 0, it->cbdata);
      it = waiting_.erase(it);
    } else {
      ++it;
    }
  }
}

std::optional<datastore::clock::time_point> datastore::next_deadline() const {
  std::optional<clock::time_point> next;
  for (const auto& r : waiting_)
    if (r.deadline && (!next || *r.deadline < *next)) next = r.deadline;
  return next;
}

void datastore::cancel_all(pmix_status_t status) {
  auto held = std::move(waiting_);
  waiting_.clear();
  for (auto& r : held)
    if (r.cbfunc != nullptr) r.cbfunc(status, nullptr, 0, r.cbdata);
}

}  // namespace pmixrun
