#include "client/store.hpp"

#include <pmix_common.h>

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

bool store::load_job(protocol::job_info&& in) {
  job j;
  load_infos(std::move(in.info), j.info);
  for (auto& [rank, infos] : in.ranks) load_infos(std::move(infos), j.ranks[rank]);
  if (const auto* peers = lookup(j.info, PMIX_LOCAL_PEERS)) {
    if (const auto* text = peers->as_string()) {
      auto parsed = regex::parse_proc_map(*text);
      if (parsed.ok() && !parsed.value().empty())
        j.local.insert(parsed.value()[0].begin(), parsed.value()[0].end());
    }
  }
  jobs_[in.nspace] = std::move(j);
  return true;
}

const value* store::job_value(const std::string& nspace, const std::string& key) const {
  auto it = jobs_.find(nspace);
  return it == jobs_.end() ? nullptr : lookup(it->second.info, key);
}

const value* store::rank_value(const proc_id& p, const std::string& key) const {
  auto it = jobs_.find(p.nspace);
  if (it == jobs_.end()) return nullptr;
  auto r = it->second.ranks.find(p.rank);
  return r == it->second.ranks.end() ? nullptr : lookup(r->second, key);
}

const std::set<rank_t>& store::local_ranks(const std::string& nspace) const {
  static const std::set<rank_t> none;
  auto it = jobs_.find(nspace);
  return it == jobs_.end() ? none : it->second.local;
}

bool store::add_peer_data(const protocol::rank_data& data, const proc_id& self, std::string* error) {
  nspace_tables t;
  return add_rank(data, self, t, error);
}

bool store::add_modex(std::string_view modex, const proc_id& self, std::string* error) {
  nspace_tables t;
  return protocol::for_each_rank(
      modex, [&](const protocol::rank_data& data) { return add_rank(data, self, t, error); }, error);
}

bool store::add_rank(const protocol::rank_data& data, const proc_id& self, nspace_tables& t,
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
  (*t.complete)[rank] = generation_;
  if (data.items.empty()) return true;
  const bool source_local = t.local != nullptr ? t.local->count(rank) > 0 : nspace == self.nspace;
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

const value* store::peer_value(const proc_id& p, const std::string& key) const {
  auto it = peers_.find(p.nspace);
  if (it == peers_.end()) return nullptr;
  auto r = it->second.find(p.rank);
  return r == it->second.end() ? nullptr : lookup(r->second, key);
}

void store::store_value(const proc_id& p, const std::string& key, value v) {
  peers_[p.nspace][p.rank][key] = std::move(v);
}

void store::clear() {
  jobs_.clear();
  peers_.clear();
  complete_.clear();
  complete_nspaces_.clear();
}

}  // namespace pmix::client
