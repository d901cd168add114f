// What a client knows without asking its server: its job's data (received at
// connect), the data of peers it received from fences and direct-modex
// replies, and its own puts. Not thread-safe: the client guards it.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "common/rank_map.hpp"
#include "common/regex/regex.hpp"
#include "common/value.hpp"
#include "protocol/messages.hpp"

namespace pmix::client {

class store {
 public:
  using key_map = std::unordered_map<std::string, value>;

  // Replaces the job data of job.nspace.
  bool load_job(protocol::job_info&& job);

  // Adds job-level values of `nspace` (its job data begun if absent): an
  // OpenPMIx server's answer to a get of reserved keys (issue 36).
  void merge_job(const std::string& nspace, info_list&& items);
  // A peer's data as an OpenPMIx server gives it: already filtered by
  // scope, and everything the peer had committed (complete in this fence
  // generation).
  void add_peer_values(const proc_id& p, info_list&& items);

  // Job-level value of a namespace we hold job data for.
  const value* job_value(const std::string& nspace, const std::string& key) const;
  // Per-rank value registered or derived for p.
  const value* rank_value(const proc_id& p, const std::string& key) const;
  bool has_job(const std::string& nspace) const { return jobs_.count(nspace) > 0; }
  // The namespaces we hold job data for, sorted.
  std::vector<std::string> nspaces() const;
  // The ranks of `nspace` whose PMIX_HOSTNAME is `node`, in order.
  std::vector<rank_t> ranks_on(const std::string& nspace, const std::string& node) const;
  // A node-level key asked of rank `p` that runs on another node than
  // `own_host`: the value of p's node, not this node's job-level one. From
  // the node's PMIX_NODE_INFO_ARRAY if the job data has one (any key);
  // else, for PMIX_LOCAL_SIZE, PMIX_LOCAL_PEERS and PMIX_LOCALLDR, made from
  // the ranks of p's job there (as OpenPMIx's client answers). Nothing
  // otherwise, nor for a rank here or of no known node.
  std::optional<value> other_node_value(const proc_id& p, const std::string& key,
                                        const std::string& own_host) const;
  // The nodes `nspace` runs on, in job order: its PMIX_NODE_LIST, else its
  // ranks' PMIX_HOSTNAMEs.
  std::vector<std::string> nodes_of(const std::string& nspace) const;
  std::vector<rank_t> local_ranks(const std::string& nspace) const;

  // A peer's committed data, as delivered by a fence or direct modex. Data
  // whose scope hides it from this process (PMIX_LOCAL from a remote peer,
  // PMIX_REMOTE from a local one) is left out.
  // The data is everything p had committed when it was sent: later lookups of
  // other keys of p need not ask the server until the next fence.
  bool add_peer_data(const protocol::rank_data& data, const proc_id& self, std::string* error);
  // Every rank's data from a collecting fence (a ModexData). Each rank's
  // items stay encoded in `modex`, which the store keeps, until a lookup of
  // that rank reads them (a client of an N-rank job reads a few peers' keys,
  // not N ranks' worth after every fence). A rank's newer data replaces its
  // undecoded older data: each RankData holds everything the rank had
  // committed (actors/peer_actor.cpp). This process's own RankData is only
  // marked complete: what it holds is what it put, already in the store.
  // `owner` keeps `modex`'s bytes (the reply's frame, or a mapping of shared
  // data).
  // Its structure is checked here: a malformed one fails the fence.
  bool add_modex(std::shared_ptr<const void> owner, std::string_view modex, const proc_id& self,
                 std::string* error);
  bool add_modex(std::string_view modex, const proc_id& self, std::string* error) {
    auto copy = std::make_shared<const std::string>(modex);
    const std::string_view view{*copy};
    return add_modex(std::move(copy), view, self, error);
  }
  // The data of a collecting fence over all of `nspace`, complete in this
  // generation (participants_complete), that holds one RankData with items
  // for each of its ranks and nothing else (the server says so: FenceReply's
  // whole_namespace). What MPI_Init's fence brings: kept as it came, not
  // even walked, and indexed at the first lookup in `nspace` (a fence then
  // costs a client nothing per rank; the server looked at each RankData
  // once for all its clients). A newer such fence of `nspace` replaces it
  // unread: it holds each rank's data again. Its structure is checked when
  // indexed; a rank whose data is unreadable then is logged, and it and the
  // ranks after it have no data from that fence.
  void keep_modex(std::shared_ptr<const void> owner, std::string_view modex, const std::string& nspace,
                  const proc_id& self);
  // A collecting fence succeeded: every participant's data has arrived with
  // it, so a participant that sent none has none (a wildcard: every rank of
  // its namespace). Until the next fence, their other keys need not be asked
  // for either.
  void participants_complete(const std::vector<proc_id>& participants);
  bool has_complete_data(const proc_id& p) const;
  // A fence completed: peers may have committed more since their data came.
  void fence_completed() { ++generation_; }
  // Decodes p's data from the last fence first, if not yet done.
  const value* peer_value(const proc_id& p, const std::string& key);
  // Everything known of p (PMIx_Get with a NULL key): the rank-level values
  // registered for it, then what it committed or was stored for it (which
  // wins where a key is in both), each part sorted by key.
  info_list all_of(const proc_id& p);

  // Values stored with PMIx_Store_internal or PMIx_Put for this process.
  void store_value(const proc_id& p, const std::string& key, value v);

  void clear();

 private:
  // The ranks of PMIX_LOCAL_PEERS: the server's runs of consecutive ranks,
  // or of ranks a stride apart, where it wrote them (JobInfo.local_runs,
  // local_strided_runs: nothing per rank at PMIx_Init,
  // where a vector of 8,192 ranks was a measurable part of it), else the
  // parsed list (a vector, not a set: at thousands of local ranks a set's
  // node per rank was).
  class local_set {
   public:
    // Ascending, each once.
    void assign(std::vector<rank_t> list);
    // Checked by protocol::read_local_runs or read_local_strided_runs.
    void assign(std::vector<protocol::local_run> runs);
    // r's place among them, ascending, if it is one of them.
    std::optional<std::uint32_t> position(rank_t r) const;
    bool contains(rank_t r) const { return position(r).has_value(); }
    std::vector<rank_t> ranks() const;

   private:
    std::vector<rank_t> list_;
    std::vector<protocol::local_run> runs_;
    std::vector<std::uint32_t> before_;  // by run: the ranks in the runs before it
  };
  struct job {
    key_map info;
    // The PMIX_NODE_INFO_ARRAYs of the job data (OpenPMIx's server sends one
    // per node), by their PMIX_HOSTNAME: a node's items, its PMIX_NODEID too.
    std::unordered_map<std::string, key_map> nodes;
    void load_info(info_list&& items);
    // Each rank's items, decoded at the first lookup of the rank (or of
    // every rank: ranks_on, nodes_of) from `encoded` (views into `raw`).
    mutable std::unordered_map<rank_t, key_map> ranks;
    // By rank, ascending, one per rank; a view emptied once decoded (a
    // vector, not a hash map: no allocation per rank, 24 bytes each).
    mutable std::vector<std::pair<rank_t, std::string_view>> encoded;
    mutable std::size_t encoded_left = 0;  // views not decoded yet
    // Instead of `encoded`, from a rank index in rank order
    // (protocol::job_info::rank_index): the index and the message it
    // indexes, read in place, and which of its entries were decoded (sized
    // at the first lookup: a bit per rank).
    std::string_view index, indexed;
    mutable std::vector<bool> index_done;
    // Decodes one RankInfo into `ranks`; the index's k-th entry, once.
    void decode_rank(rank_t r, std::string_view bytes) const;
    void decode_indexed(std::size_t k) const;
    std::shared_ptr<const void> raw;
    // PMIX_LOCAL_PEERS, ascending, each once.
    local_set local;
    // The node and proc maps, read at the first lookup of a rank the job
    // data holds no RankInfo for (one that runs elsewhere with nothing
    // registered of its own: its items are derived, as the server would
    // have written them).
    struct maps {
      std::vector<std::string> nodes;
      regex::rank_places places;
    };
    mutable std::optional<maps> derivable;
    // JobInfo.local_ranks_by_peers: a rank of `local` without a RankInfo
    // takes the items derived from its place in `local` and the job's
    // PMIX_HOSTNAME and PMIX_NODEID, without reading the maps (at 100,000
    // ranks a parse of the proc map in every process).
    bool local_by_peers = false;
    const key_map* rank_keys(rank_t r) const;
    // Every RankInfo decoded.
    void decode_all() const;
    // Each rank's PMIX_HOSTNAME: those of the ranks it has items for, and
    // the node of each rank left to the maps (whose items are not made).
    void for_each_host(const std::function<void(rank_t, const std::string&)>& each) const;
    const maps& read_maps() const;
  };
  // The fence generation in which each rank's complete data arrived, by
  // rank position (common/rank_map.hpp: a collecting fence stamps every rank,
  // and hashing each one showed in the profiles).
  using rank_stamps = rank_map<std::uint64_t>;
  // Keyed by namespace, then rank: a fence delivers the data of every rank
  // of a job, so lookups stay within one namespace's tables.
  template <class T>
  using by_proc = std::unordered_map<std::string, std::unordered_map<rank_t, T>>;
  // The tables of one namespace, looked up once for a run of its ranks.
  struct nspace_tables {
    bool looked_up = false;
    std::string name;
    const local_set* local = nullptr;  // null: no job data for it
    rank_stamps* complete = nullptr;
    std::unordered_map<rank_t, key_map>* peers = nullptr;
  };
  // `stamp`: the data is everything the rank had committed when this
  // generation began (direct modex), so it is complete; fence data decoded
  // at a lookup was stamped, if at all, when it came.
  bool add_rank(const protocol::rank_data& data, const proc_id& self, nspace_tables& t, bool stamp,
                std::string* error);
  // A rank's items as a fence delivered them, not decoded yet: its RankData
  // within a kept ModexData.
  struct encoded_rank {
    std::shared_ptr<const void> owner;  // keeps `bytes` alive
    std::string_view bytes;
  };
  // Moves p's encoded data, if any, into peers_ (scopes applied).
  void decode_pending(const proc_id& p);
  // Records where each rank's items are in `modex` (encoded_), marking the
  // ranks complete unless their namespace is complete already.
  bool index_modex(const std::shared_ptr<const void>& owner, std::string_view modex, bool stamp,
                   std::string* error);
  // Indexes the kept whole-namespace data, if any.
  void index_deferred();

  std::unordered_map<std::string, job> jobs_;
  by_proc<key_map> peers_;
  std::unordered_map<std::string, rank_map<encoded_rank>> encoded_;
  // A whole-namespace fence's data, not indexed yet (keep_modex).
  struct deferred_modex {
    std::shared_ptr<const void> owner;
    std::string_view bytes;
    std::string nspace;
  };
  std::optional<deferred_modex> deferred_;
  proc_id self_;  // the process the encoded data was received by (scopes)
  // rank -> the fence generation in which its complete data arrived; only
  // the current generation counts (a fence completing just moves it on, so a
  // collecting fence re-marks its ranks without allocating).
  std::unordered_map<std::string, rank_stamps> complete_;
  // namespace -> the generation in which every rank of it was complete.
  std::unordered_map<std::string, std::uint64_t> complete_nspaces_;
  std::uint64_t generation_ = 1;
};

}  // namespace pmix::client
