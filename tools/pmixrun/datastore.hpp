// The data store behind the publish / lookup / unpublish up-calls.
//
// Every published value is kept with its owner (the publishing process), the
// owner's uid, its range and its persistence. Contracts:
//  - Visibility: only processes of the same uid see an entry. Range
//    PMIX_RANGE_NAMESPACE: only processes of the owner's namespace;
//    PMIX_RANGE_PROC_LOCAL: only the owner; any other range (SESSION, GLOBAL,
//    LOCAL, RM, UNDEF): every job this pmixrun runs (one node, one session).
//  - publish: PMIX_ERR_DUPLICATE_KEY, and nothing stored, when one of the keys
//    already has an entry of the same uid and range that the publisher's
//    entry would share visibility with (same namespace for NAMESPACE, same
//    process for PROC_LOCAL), or when a key repeats in one call.
//  - lookup: one result per key found, its proc being the owner. When a key
//    has several visible entries, the narrowest range wins, then the newest.
//    A range given to lookup restricts the publishers searched: NAMESPACE =
//    the requester's namespace, PROC_LOCAL = the requester itself.
//    Without wait: PMIX_SUCCESS with the keys found (a client leaves the
//    others undefined), PMIX_ERR_NOT_FOUND when none is. With wait: the
//    callback is held until every key is found, or until the deadline
//    (then PMIX_ERR_TIMEOUT), or until the requester ends (then
//    PMIX_ERR_NOT_FOUND).
//  - Persistence: PMIX_PERSIST_FIRST_READ entries go with the first lookup
//    that returns them; PMIX_PERSIST_PROC ones when their owner ends;
//    PMIX_PERSIST_APP ones when the owner's job ends; SESSION and INDEF ones
//    stay until pmixrun ends (or are unpublished).
//  - unpublish: removes only the caller's own entries (of the given range,
//    or of any range); NULL keys = all of them. PMIX_ERR_NOT_FOUND when a
//    listed key has no entry of the caller's (the others are still removed).
//
// Host thread only (host_thread.hpp): no locking. Callbacks are called from
// the method that completes the request.
#pragma once

#include <pmix_common.h>

#include <chrono>
#include <cstdint>
#include <list>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace pmixrun {

class datastore {
 public:
  using clock = std::chrono::steady_clock;

  datastore() = default;
  datastore(const datastore&) = delete;
  datastore& operator=(const datastore&) = delete;
  ~datastore();

  // One value to publish: the key and the value (copied).
  using item = std::pair<std::string, const pmix_value_t*>;

  pmix_status_t publish(const pmix_proc_t& owner, uint32_t uid, pmix_data_range_t range,
                        pmix_persistence_t persistence, const std::vector<item>& items);

  // Calls cbfunc now, or later when `wait` (see above). `deadline` only
  // matters with `wait`.
  void lookup(const pmix_proc_t& requester, uint32_t uid, std::vector<std::string> keys,
              std::optional<pmix_data_range_t> range, bool wait,
              std::optional<clock::time_point> deadline, pmix_lookup_cbfunc_t cbfunc, void* cbdata);

  // keys == nullptr: every entry of the caller.
  pmix_status_t unpublish(const pmix_proc_t& owner, uint32_t uid,
                          const std::vector<std::string>* keys,
                          std::optional<pmix_data_range_t> range);

  // A process ended: its PERSIST_PROC entries go, its held lookups fail.
  void proc_ended(const pmix_proc_t& proc);
  // A job ended: the PERSIST_APP entries of its processes go.
  void job_ended(const std::string& nspace);

  // Fails the held lookups whose deadline has passed.
  void expire(clock::time_point now);
  std::optional<clock::time_point> next_deadline() const;
  // Fails every held lookup with `status` (at shutdown).
  void cancel_all(pmix_status_t status);

  std::size_t entries() const { return entries_.size(); }
  std::size_t waiting() const { return waiting_.size(); }

 private:
  struct entry {
    std::string key;
    pmix_value_t value;  // owned copy
    pmix_proc_t owner;
    uint32_t uid;
    pmix_data_range_t range;
    pmix_persistence_t persistence;
    uint64_t serial;  // publication order
  };
  struct request {
    pmix_proc_t requester;
    uint32_t uid;
    std::vector<std::string> keys;
    std::optional<pmix_data_range_t> range;
    std::optional<clock::time_point> deadline;
    pmix_lookup_cbfunc_t cbfunc;
    void* cbdata;
  };

  // The entry a request would get for `key`, or entries_.end().
  std::list<entry>::iterator best_match(const request& req, const std::string& key);
  // Answers `req` with the entries found for its keys; with `all_or_nothing`
  // does nothing and returns false unless every key is found.
  bool answer(const request& req, bool all_or_nothing);
  // Retries the held lookups after a publish.
  void retry_waiting();
  void erase(std::list<entry>::iterator it);

  std::list<entry> entries_;
  std::list<request> waiting_;
  uint64_t serial_ = 0;
};

}  // namespace pmixrun
