#include "client/store.hpp"

#include <pmix_common.h>

#include <algorithm>
#include <map>

#include "common/log.hpp"
#include "common/regex/regex.hpp"

namespace pmix::client {
namespace {

void load_infos(info_list&& in, store::key_map& out) {
  out.reserve(out.size() + in.size());
  for (auto& i : in) out[std::move(i.key)] = std::move(i.val);
}

const value* lookup(const store::key_map& m, const std::string& key) {
  auto it = m.find(key);
  return it == m.end() ? nullptr : &it->second;
}

}  // namespace

void store::job::load_info(info_list&& items) {
  for (auto& i : items) {
    if (i.key != PMIX_NODE_INFO_ARRAY) continue;
    const auto* a = i.val.as_array();
    if (a == nullptr) continue;
    info_list node;
    const std::string* host = nullptr;
    for (const auto& e : a->elements)
      if (const auto* item = e.as_info()) {
        node.push_back(*item);
        if (item->key == PMIX_HOSTNAME && item->val.as_string() != nullptr) host = item->val.as_string();
      }
    if (host != nullptr) load_infos(std::move(node), nodes[*host]);
  }
  load_infos(std::move(items), info);
}

bool store::load_job(protocol::job_info&& in) {
  job j;
  j.local_by_peers = in.local_ranks_by_peers;
  j.load_info(std::move(in.info));
  for (auto& [rank, infos] : in.ranks) load_infos(std::move(infos), j.ranks[rank]);
  // The index and the encoded ranks are views into the bytes `raw` keeps
  // (the same object after the move).
  if (in.raw) j.raw = std::move(in.raw);
  if (j.raw && !in.rank_index.empty()) {
    j.index = in.rank_index;
    j.indexed = in.indexed;
  } else if (j.raw) {
    // The server writes the ranks in order, each once: kept as they come.
    // Otherwise sorted (stably), and of several RankInfos of one rank all
    // but the last are decoded now, in order, the last at its lookup (its
    // items then override theirs, as when decoded one after the other).
    auto& v = in.encoded;
    const auto by_rank = [](const auto& a, const auto& b) { return a.first < b.first; };
    const bool ascending =
        std::adjacent_find(v.begin(), v.end(), [](const auto& a, const auto& b) { return a.first >= b.first; }) ==
        v.end();
    if (!ascending) {
      std::stable_sort(v.begin(), v.end(), by_rank);
      std::vector<std::pair<rank_t, std::string_view>> kept;
      kept.reserve(v.size());
      for (std::size_t k = 0; k < v.size(); ++k) {
        if (k + 1 < v.size() && v[k + 1].first == v[k].first) {
          info_list items;
          if (protocol::decode_rank_info(v[k].second, items)) load_infos(std::move(items), j.ranks[v[k].first]);
          continue;
        }
        kept.push_back(v[k]);
      }
      v = std::move(kept);
    }
    j.encoded = std::move(v);
    j.encoded_left = j.encoded.size();
  }
  if (const auto* peers = lookup(j.info, PMIX_LOCAL_PEERS)) {
    const auto* text = peers->as_string();
    // The server writes a plain list ("0,1,5") and, where they are shorter,
    // its runs (JobInfo.local_runs: no parse, which took 50 us at 4,096
    // ranks in every process), or for a round-robin placement (0,16,32,...)
    // its runs of ranks a stride apart (JobInfo.local_strided_runs); runs
    // that do not fit the list's size are not taken.
    std::vector<protocol::local_run> runs;
    if (text != nullptr && ((!in.local_runs.empty() &&
                             protocol::read_local_runs(in.local_runs, text->size() / 2 + 1, runs)) ||
                            (!in.local_strided_runs.empty() &&
                             protocol::read_local_strided_runs(in.local_strided_runs, text->size() / 2 + 1, runs)))) {
      j.local.assign(std::move(runs));
      text = nullptr;
    }
    if (text != nullptr) {
      // At most one rank, and one node, per byte. Bounds from the text keep
      // a short compact map from the wire ("pmix[0-99999999]", 16 bytes)
      // from making the client allocate gigabytes (found by tests/fuzz
      // client_reply).
      regex::parse_limits limits;
      limits.max_ranks = text->size() + 1;
      limits.max_nodes = text->size() + 1;
      auto parsed = regex::parse_proc_map(*text, limits);
      if (parsed.ok() && !parsed.value().empty()) {
        // The server's list is ascending; anything else is put in order.
        auto list = std::move(std::move(parsed).value()[0]);
        if (!std::is_sorted(list.begin(), list.end())) std::sort(list.begin(), list.end());
        list.erase(std::unique(list.begin(), list.end()), list.end());
        j.local.assign(std::move(list));
      }
    }
  }
  jobs_[in.nspace] = std::move(j);
  return true;
}

void store::merge_job(const std::string& nspace, info_list&& items) {
  auto& j = jobs_[nspace];
  // What the server checked the local ranks' items against may change.
  for (const auto& i : items)
    if (i.key == PMIX_LOCAL_PEERS || i.key == PMIX_HOSTNAME || i.key == PMIX_NODEID) j.local_by_peers = false;
  j.load_info(std::move(items));
  j.derivable.reset();  // the maps may be among them: read again when needed
}

void store::add_peer_values(const proc_id& p, info_list&& items) {
  decode_pending(p);
  complete_[p.nspace][p.rank] = generation_;
  auto& dest = peers_[p.nspace][p.rank];
  for (auto& i : items) dest[std::move(i.key)] = std::move(i.val);
}

std::vector<std::string> store::nspaces() const {
  std::vector<std::string> out;
  for (const auto& [name, j] : jobs_) out.push_back(name);
  std::sort(out.begin(), out.end());
  return out;
}

std::vector<rank_t> store::ranks_on(const std::string& nspace, const std::string& node) const {
  std::vector<rank_t> out;
  auto it = jobs_.find(nspace);
  if (it == jobs_.end()) return out;
  it->second.for_each_host([&](rank_t rank, const std::string& host) {
    if (host == node) out.push_back(rank);
  });
  std::sort(out.begin(), out.end());
  return out;
}

std::optional<value> store::other_node_value(const proc_id& p, const std::string& key,
                                             const std::string& own_host) const {
  const auto* host = rank_value(p, PMIX_HOSTNAME);
  if (host == nullptr || host->as_string() == nullptr || *host->as_string() == own_host) return std::nullopt;
  const auto& j = jobs_.at(p.nspace);  // rank_value found it
  if (auto node = j.nodes.find(*host->as_string()); node != j.nodes.end())
    if (const auto* v = lookup(node->second, key)) return *v;
  if (key != PMIX_LOCAL_SIZE && key != PMIX_LOCAL_PEERS && key != PMIX_LOCALLDR) return std::nullopt;
  const auto ranks = ranks_on(p.nspace, *host->as_string());
  if (ranks.empty()) return std::nullopt;
  if (key == PMIX_LOCAL_SIZE) return value::unsigned_(PMIX_UINT32, ranks.size());
  if (key == PMIX_LOCALLDR) return value::unsigned_(PMIX_PROC_RANK, ranks.front());
  std::string peers;
  for (auto r : ranks) peers += (peers.empty() ? "" : ",") + std::to_string(r);
  return value::string(std::move(peers));
}

std::vector<std::string> store::nodes_of(const std::string& nspace) const {
  std::vector<std::string> out;
  auto it = jobs_.find(nspace);
  if (it == jobs_.end()) return out;
  if (const auto* list = lookup(it->second.info, PMIX_NODE_LIST); list != nullptr && list->as_string() != nullptr) {
    const auto& text = *list->as_string();
    std::size_t start = 0;
    while (start <= text.size()) {
      const auto comma = text.find(',', start);
      auto name = text.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
      if (!name.empty()) out.push_back(std::move(name));
      if (comma == std::string::npos) break;
      start = comma + 1;
    }
    if (!out.empty()) return out;
  }
  std::map<rank_t, std::string> by_rank;
  it->second.for_each_host([&](rank_t rank, const std::string& host) { by_rank.emplace(rank, host); });
  for (const auto& [rank, host] : by_rank)
    if (std::find(out.begin(), out.end(), host) == out.end()) out.push_back(host);
  return out;
}

const value* store::job_value(const std::string& nspace, const std::string& key) const {
  auto it = jobs_.find(nspace);
  return it == jobs_.end() ? nullptr : lookup(it->second.info, key);
}

const store::job::maps& store::job::read_maps() const {
  if (derivable) return *derivable;
  derivable.emplace();
  auto text = [&](const char* key) -> std::string {
    const auto* v = lookup(info, key);
    const auto* t = v == nullptr ? nullptr : v->as_string();
    std::string out = t == nullptr ? std::string{} : *t;
    while (!out.empty() && out.back() == '\0') out.pop_back();  // a PMIX_REGEX's NUL
    return out;
  };
  const auto proc_map = text(PMIX_PROC_MAP);
  if (proc_map.empty()) return *derivable;
  // Bounded by the job's size: a compact map of a few bytes names millions.
  regex::parse_limits limits;
  const auto* size = lookup(info, PMIX_JOB_SIZE);
  const auto job_size = size == nullptr ? std::nullopt : size->as_uint();
  // (At most 2^24 ranks without PMIX_JOB_SIZE or beyond it.)
  limits.max_ranks = std::min<std::size_t>(job_size ? static_cast<std::size_t>(*job_size) : SIZE_MAX,
                                           std::size_t{1} << 24);
  limits.max_nodes = limits.max_ranks + 1;
  auto lists = regex::parse_proc_map_runs(proc_map, limits);
  if (!lists.ok()) {
    log::error("client", "unreadable PMIX_PROC_MAP in the job data: ", lists.error().what);
    return *derivable;
  }
  if (const auto node_map = text(PMIX_NODE_MAP); !node_map.empty()) {
    auto nodes = regex::parse_node_map(node_map, limits);
    if (nodes.ok()) derivable->nodes = std::move(nodes).value();
  }
  derivable->places = regex::rank_places{lists.value()};
  return *derivable;
}

void store::job::decode_rank(rank_t r, std::string_view bytes) const {
  info_list items;
  std::string error;
  if (!protocol::decode_rank_info(bytes, items, &error))
    log::error("client", "unreadable job data of rank ", r, ": ", error);
  load_infos(std::move(items), ranks[r]);
}

void store::job::decode_indexed(std::size_t k) const {
  if (!index_done.empty() && index_done[k]) return;
  if (index_done.empty()) index_done.resize(protocol::index_size(index));
  index_done[k] = true;
  const auto [r, bytes] = protocol::index_entry(index, indexed, k);
  if (bytes.data() == nullptr) {
    // Taken on trust at PMIx_Init (protocol::decode_lazy): an entry that
    // points outside the RankInfos loses its rank's data, not the job's.
    log::error("client", "unreadable job data of rank ", r, ": its index entry lies outside the job data");
    return;
  }
  decode_rank(r, bytes);
}

const store::key_map* store::job::rank_keys(rank_t r) const {
  if (!index.empty()) {
    const auto k = protocol::index_find(index, r);
    if (k < protocol::index_size(index)) decode_indexed(k);
  } else {
    auto e = std::lower_bound(encoded.begin(), encoded.end(), r,
                              [](const std::pair<rank_t, std::string_view>& a, rank_t b) { return a.first < b; });
    if (e != encoded.end() && e->first == r && e->second.data() != nullptr) {
      const auto bytes = e->second;
      e->second = std::string_view{};
      if (--encoded_left == 0) {
        encoded.clear();
        encoded.shrink_to_fit();
      }
      decode_rank(r, bytes);
    }
  }
  auto it = ranks.find(r);
  if (it != ranks.end()) return &it->second;
  if (local_by_peers) {
    const auto mine = local.position(r);
    const auto* host = lookup(info, PMIX_HOSTNAME);
    const auto* node = lookup(info, PMIX_NODEID);
    const auto node_id = node == nullptr ? std::nullopt : node->as_uint();
    if (mine && node_id && host != nullptr && host->as_string() != nullptr) {
      auto& keys = ranks[r];
      load_infos(protocol::derived_rank_items(r, host->as_string(), static_cast<std::uint32_t>(*node_id), *mine),
                 keys);
      return &keys;
    }
  }
  const auto& m = read_maps();
  const auto place = m.places.find(r);
  if (!place) return nullptr;
  auto& keys = ranks[r];
  load_infos(protocol::derived_rank_items(r, place->node < m.nodes.size() ? &m.nodes[place->node] : nullptr,
                                          place->node, place->index),
             keys);
  return &keys;
}

void store::job::decode_all() const {
  if (!index.empty()) {
    for (std::size_t k = 0; k < protocol::index_size(index); ++k) decode_indexed(k);
    return;
  }
  for (std::size_t k = 0; k < encoded.size();) {
    const auto& [rank, bytes] = encoded[k];
    if (bytes.data() == nullptr) {
      ++k;
      continue;
    }
    const auto left = encoded_left;
    rank_keys(rank);  // may clear `encoded` (the last one)
    if (left == 1) break;
    ++k;
  }
}

void store::job::for_each_host(const std::function<void(rank_t, const std::string&)>& each) const {
  decode_all();
  for (const auto& [rank, keys] : ranks) {
    const auto* host = lookup(keys, PMIX_HOSTNAME);
    if (host != nullptr && host->as_string() != nullptr) each(rank, *host->as_string());
  }
  // The ranks left to the maps, without making their items.
  const auto& m = read_maps();
  for (const auto& [rank, place] : m.places.by_rank())
    if (place.node < m.nodes.size() && ranks.count(rank) == 0) each(rank, m.nodes[place.node]);
}

const value* store::rank_value(const proc_id& p, const std::string& key) const {
  auto it = jobs_.find(p.nspace);
  if (it == jobs_.end()) return nullptr;
  const auto* keys = it->second.rank_keys(p.rank);
  return keys == nullptr ? nullptr : lookup(*keys, key);
}

std::vector<rank_t> store::local_ranks(const std::string& nspace) const {
  auto it = jobs_.find(nspace);
  return it == jobs_.end() ? std::vector<rank_t>{} : it->second.local.ranks();
}

void store::local_set::assign(std::vector<rank_t> list) {
  runs_.clear();
  list_ = std::move(list);
}

void store::local_set::assign(std::vector<protocol::local_run> runs) {
  list_.clear();
  runs_ = std::move(runs);
  before_.clear();
  before_.reserve(runs_.size());
  std::uint32_t before = 0;
  for (const auto& r : runs_) {
    before_.push_back(before);
    before += r.count;
  }
}

std::optional<std::uint32_t> store::local_set::position(rank_t r) const {
  if (!runs_.empty()) {
    // The last run that starts at or before r.
    auto it = std::upper_bound(runs_.begin(), runs_.end(), r,
                               [](rank_t a, const protocol::local_run& b) { return a < b.first; });
    if (it == runs_.begin()) return std::nullopt;
    --it;
    const rank_t d = r - it->first;
    if (d % it->stride != 0 || d / it->stride >= it->count) return std::nullopt;
    return before_[static_cast<std::size_t>(it - runs_.begin())] + d / it->stride;
  }
  const auto it = std::lower_bound(list_.begin(), list_.end(), r);
  if (it == list_.end() || *it != r) return std::nullopt;
  return static_cast<std::uint32_t>(it - list_.begin());
}

std::vector<rank_t> store::local_set::ranks() const {
  return runs_.empty() ? list_ : protocol::expand_runs(runs_);
}

bool store::add_peer_data(const protocol::rank_data& data, const proc_id& self, std::string* error) {
  decode_pending(data.proc);  // older than this data: applied first
  nspace_tables t;
  return add_rank(data, self, t, true, error);
}

bool store::add_modex(std::shared_ptr<const void> owner, std::string_view all, const proc_id& self,
                      std::string* error) {
  self_ = self;
  index_deferred();  // older than this data
  return index_modex(owner, all, true, error);
}

void store::keep_modex(std::shared_ptr<const void> owner, std::string_view modex, const std::string& nspace,
                       const proc_id& self) {
  self_ = self;
  if (deferred_ && deferred_->nspace != nspace) index_deferred();
  deferred_ = deferred_modex{std::move(owner), modex, nspace};
}

void store::index_deferred() {
  if (!deferred_) return;
  const auto d = std::move(*deferred_);
  deferred_.reset();
  std::string error;
  // Its ranks need no stamps: their namespace was complete when it came.
  if (!index_modex(d.owner, d.bytes, false, &error))
    log::error("client", "unreadable fence data of ", d.nspace, ": ", error,
               " (the ranks after it have no data from that fence)");
}

bool store::index_modex(const std::shared_ptr<const void>& owner, std::string_view all, bool stamp,
                        std::string* error) {
  std::size_t pos = 0;
  std::string_view bytes;
  protocol::rank_data r;
  std::string name;  // the namespace of the last rank, and its tables
  rank_stamps* complete = nullptr;  // null: the whole namespace is complete already
  rank_map<encoded_rank>* encoded = nullptr;
  bool looked_up = false;
  for (;;) {
    const int got = protocol::detail::next_rank(all, pos, bytes);
    if (got == 0) return true;
    if (got < 0 || !protocol::decode(bytes, r, error)) {
      if (error != nullptr && error->empty()) *error = "malformed fence data";
      return false;
    }
    if (!looked_up || r.proc.nspace != name) {
      looked_up = true;
      name = r.proc.nspace;
      // A wildcard fence has marked the namespace complete already
      // (participants_complete), or did when deferred data came: no stamp
      // per rank is needed.
      auto all_complete = complete_nspaces_.find(name);
      complete = !stamp || (all_complete != complete_nspaces_.end() && all_complete->second == generation_)
                     ? nullptr
                     : &complete_[name];
      encoded = &encoded_[name];
    }
    if (complete != nullptr) (*complete)[r.proc.rank] = generation_;
    // This process's own data is what it put itself, all of it in the
    // store already (store_value): decoding it back on its next put cost
    // every rank a decode per fence, and it could undo a put made after
    // the commit.
    if (r.items.empty() || r.proc == self_) continue;
    auto& slot = (*encoded)[r.proc.rank];
    slot.owner = owner;
    slot.bytes = bytes;
  }
}

void store::decode_pending(const proc_id& p) {
  // Kept fence data is indexed before a lookup in its namespace; not for
  // this process's own data, which indexing skips (see index_modex).
  if (deferred_ && deferred_->nspace == p.nspace && !(p == self_)) index_deferred();
  auto it = encoded_.find(p.nspace);
  if (it == encoded_.end()) return;
  auto* slot = it->second.find(p.rank);
  if (slot == nullptr) return;
  const encoded_rank data = std::move(*slot);
  it->second.erase(p.rank);
  if (!data.owner) return;
  protocol::rank_data r;
  std::string error;
  nspace_tables t;
  // Its structure was checked when it was indexed: only a value the decoder
  // refuses can fail here; the items before it are kept.
  if (!protocol::decode(data.bytes, r, &error) ||
      !add_rank(r, self_, t, false, &error))
    log::error("client", "unreadable fence data of ", p.nspace, ":", p.rank, ": ", error);
}

bool store::add_rank(const protocol::rank_data& data, const proc_id& self, nspace_tables& t, bool stamp,
                     std::string* error) {
  const std::string& nspace = data.proc.nspace;
  const rank_t rank = data.proc.rank;
  if (!t.looked_up || t.name != nspace) {
    t.looked_up = true;
    t.name = nspace;
    auto j = jobs_.find(nspace);
    t.local = j == jobs_.end() ? nullptr : &j->second.local;
    t.complete = &complete_[nspace];
    t.peers = &peers_[nspace];
  }
  if (stamp) (*t.complete)[rank] = generation_;
  if (data.items.empty()) return true;
  const bool source_local = t.local != nullptr ? t.local->contains(rank) : nspace == self.nspace;
  auto& dest = (*t.peers)[rank];
  info i;
  for (const auto& [scope_number, item] : data.items) {
    const auto scope = static_cast<pmix_scope_t>(scope_number);
    if (scope == PMIX_LOCAL && !source_local) continue;
    if (scope == PMIX_REMOTE && source_local) continue;
    if (!protocol::decode_checked_info(item, i, error)) return false;
    dest[std::move(i.key)] = std::move(i.val);
  }
  return true;
}

void store::participants_complete(const std::vector<proc_id>& participants) {
  for (const auto& p : participants) {
    if (p.rank == rank_wildcard) complete_nspaces_[p.nspace] = generation_;
    else complete_[p.nspace][p.rank] = generation_;
  }
}

bool store::has_complete_data(const proc_id& p) const {
  auto all = complete_nspaces_.find(p.nspace);
  if (all != complete_nspaces_.end() && all->second == generation_) return true;
  auto it = complete_.find(p.nspace);
  if (it == complete_.end()) return false;
  const auto* stamp = it->second.find(p.rank);
  return stamp != nullptr && *stamp == generation_;
}

const value* store::peer_value(const proc_id& p, const std::string& key) {
  decode_pending(p);
  auto it = peers_.find(p.nspace);
  if (it == peers_.end()) return nullptr;
  auto r = it->second.find(p.rank);
  return r == it->second.end() ? nullptr : lookup(r->second, key);
}

info_list store::all_of(const proc_id& p) {
  decode_pending(p);
  auto sorted = [](const key_map& m) {
    std::vector<const key_map::value_type*> out;
    out.reserve(m.size());
    for (const auto& kv : m) out.push_back(&kv);
    std::sort(out.begin(), out.end(), [](auto* a, auto* b) { return a->first < b->first; });
    return out;
  };
  const key_map* committed = nullptr;
  if (auto it = peers_.find(p.nspace); it != peers_.end())
    if (auto r = it->second.find(p.rank); r != it->second.end()) committed = &r->second;
  info_list out;
  if (auto it = jobs_.find(p.nspace); it != jobs_.end())
    if (const auto* keys = it->second.rank_keys(p.rank))
      for (const auto* kv : sorted(*keys))
        if (committed == nullptr || committed->count(kv->first) == 0) out.push_back(info{kv->first, kv->second, 0});
  if (committed != nullptr)
    for (const auto* kv : sorted(*committed)) out.push_back(info{kv->first, kv->second, 0});
  return out;
}

void store::store_value(const proc_id& p, const std::string& key, value v) {
  decode_pending(p);  // older than v
  peers_[p.nspace][p.rank][key] = std::move(v);
}

void store::clear() {
  jobs_.clear();
  peers_.clear();
  encoded_.clear();
  deferred_.reset();
  complete_.clear();
  complete_nspaces_.clear();
}

}  // namespace pmix::client
