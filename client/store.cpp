#include "client/store.hpp"

#include <pmix_common.h>

#include "common/regex/regex.hpp"
#include "protocol/codec.hpp"

namespace pmix::client {
namespace {

bool load_infos(const google::protobuf::RepeatedPtrField<wire::Info>& in, store::key_map& out,
                std::string* error) {
  out.reserve(out.size() + static_cast<std::size_t>(in.size()));
  for (const auto& w : in) {
    info i;
    if (!protocol::from_wire(w, i, error)) return false;
    out[i.key] = std::move(i.val);
  }
  return true;
}

const value* lookup(const store::key_map& m, const std::string& key) {
  auto it = m.find(key);
  return it == m.end() ? nullptr : &it->second;
}

}  // namespace

bool store::load_job(const wire::JobInfo& in, std::string* error) {
  job j;
  if (!load_infos(in.info(), j.info, error)) return false;
  for (const auto& r : in.ranks())
    if (!load_infos(r.info(), j.ranks[r.rank()], error)) return false;
  if (const auto* peers = lookup(j.info, PMIX_LOCAL_PEERS)) {
    if (const auto* text = peers->as_string()) {
      auto parsed = regex::parse_proc_map(*text);
      if (parsed.ok() && !parsed.value().empty())
        j.local.insert(parsed.value()[0].begin(), parsed.value()[0].end());
    }
  }
  jobs_[in.nspace()] = std::move(j);
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

bool store::add_peer_data(const wire::RankData& data, const proc_id& self, std::string* error) {
  nspace_tables t;
  return add_rank(data, self, t, error);
}

bool store::add_modex(const wire::ModexData& in, const proc_id& self, std::string* error) {
  nspace_tables t;
  for (const auto& data : in.ranks())
    if (!add_rank(data, self, t, error)) return false;
  return true;
}

bool store::add_rank(const wire::RankData& data, const proc_id& self, nspace_tables& t,
                     std::string* error) {
  const std::string& nspace = data.proc().nspace();
  const rank_t rank = data.proc().rank();
  if (t.name == nullptr || *t.name != nspace) {
    t.name = &nspace;
    auto j = jobs_.find(nspace);
    t.local = j == jobs_.end() ? nullptr : &j->second.local;
    t.complete = &complete_[nspace];
    t.peers = &peers_[nspace];
  }
  const bool source_local = t.local != nullptr ? t.local->count(rank) > 0 : nspace == self.nspace;
  (*t.complete)[rank] = generation_;
  if (data.data().empty()) return true;
  auto& dest = (*t.peers)[rank];
  for (const auto& item : data.data()) {
    const auto scope = static_cast<pmix_scope_t>(item.scope());
    if (scope == PMIX_LOCAL && !source_local) continue;
    if (scope == PMIX_REMOTE && source_local) continue;
    info i;
    if (!protocol::from_wire(item.info(), i, error)) return false;
    dest[i.key] = std::move(i.val);
  }
  return true;
}

bool store::has_complete_data(const proc_id& p) const {
  auto it = complete_.find(p.nspace);
  if (it == complete_.end()) return false;
  auto r = it->second.find(p.rank);
  return r != it->second.end() && r->second == generation_;
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
}

}  // namespace pmix::client
