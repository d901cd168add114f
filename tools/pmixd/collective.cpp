#include "collective.hpp"

#include <algorithm>
#include <cstdio>

namespace pmixd {

bool parse_algorithm(const std::string& name, fence_algorithm& out) {
  if (name == "tree") {
    out = fence_algorithm::tree;
  } else if (name == "doubling") {
    out = fence_algorithm::doubling;
  } else {
    return false;
  }
  return true;
}

std::string block_key(uint32_t node) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "%08u", node);
  return buf;
}

namespace {

uint32_t rounds_for(std::size_t m) {
  uint32_t r = 0;
  while ((std::size_t{1} << r) < m) ++r;
  return r;
}

}  // namespace

uint32_t fence_engine::position(const fence& f) const {
  return static_cast<uint32_t>(std::find(f.nodes.begin(), f.nodes.end(), me_) - f.nodes.begin());
}

void fence_engine::contribute(const std::string& key, std::vector<uint32_t> nodes, fence_algorithm alg,
                              std::string data, uint64_t token) {
  fence& f = fences_[key];
  if (f.contributed) {
    // The same key twice: the caller's sequence numbers are broken. Fail the
    // newcomer, keep the fence in progress.
    completions_.push_back(completion{token, PMIX_ERR_BAD_PARAM, {}});
    return;
  }
  f.contributed = true;
  f.nodes = std::move(nodes);
  f.alg = alg;
  f.token = token;
  if (std::find(f.nodes.begin(), f.nodes.end(), me_) == f.nodes.end()) f.nodes.push_back(me_);
  std::sort(f.nodes.begin(), f.nodes.end());
  for (auto n : f.nodes)
    if (lost_.count(n) > 0) return complete(key, f, PMIX_ERR_UNREACH);
  f.blocks[block_key(me_)] = std::move(data);
  if (alg == fence_algorithm::tree && f.nodes.front() != me_)
    sends_.push_back(send{f.nodes.front(), key, 0, f.blocks});
  if (alg == fence_algorithm::doubling && f.nodes.size() > 1) {
    const auto m = f.nodes.size();
    sends_.push_back(send{f.nodes[(position(f) + 1) % m], key, 0, f.blocks});
  }
  advance(key, f);
}

void fence_engine::receive(const std::string& key, uint32_t round, fence_blocks blocks) {
  fence& f = fences_[key];
  auto& slot = f.early[round];
  for (auto& [node, data] : blocks) slot.emplace(node, std::move(data));
  if (f.contributed) advance(key, f);
}

void fence_engine::advance(const std::string& key, fence& f) {
  const auto m = f.nodes.size();
  if (f.alg == fence_algorithm::tree) {
    const bool root = f.nodes.front() == me_;
    if (root) {
      auto gathered = f.early.find(0);
      if (gathered != f.early.end()) {
        for (auto& [node, data] : gathered->second) f.blocks.emplace(node, std::move(data));
        f.early.erase(gathered);
      }
      if (f.blocks.size() < m) return;
      for (auto n : f.nodes)
        if (n != me_) sends_.push_back(send{n, key, 1, f.blocks});
      return complete(key, f, PMIX_SUCCESS);
    }
    auto whole = f.early.find(1);
    if (whole == f.early.end()) return;
    for (auto& [node, data] : whole->second) f.blocks.emplace(node, std::move(data));
    return complete(key, f, PMIX_SUCCESS);
  }
  const uint32_t rounds = rounds_for(m);
  const uint32_t i = position(f);
  while (f.round < rounds) {
    auto in = f.early.find(f.round);
    if (in == f.early.end()) return;
    for (auto& [node, data] : in->second) f.blocks.emplace(node, std::move(data));
    f.early.erase(in);
    ++f.round;
    if (f.round < rounds) {
      const auto to = f.nodes[(i + (std::size_t{1} << f.round)) % m];
      sends_.push_back(send{to, key, f.round, f.blocks});
    }
  }
  if (f.blocks.size() < m) return complete(key, f, PMIX_ERR_BAD_PARAM);  // cannot happen
  complete(key, f, PMIX_SUCCESS);
}

void fence_engine::complete(const std::string& key, fence& f, pmix_status_t status) {
  std::string data;
  if (status == PMIX_SUCCESS)
    for (auto& [node, blob] : f.blocks) data += blob;
  completions_.push_back(completion{f.token, status, std::move(data)});
  fences_.erase(key);
}

void fence_engine::node_lost(uint32_t node) {
  lost_.insert(node);
  std::vector<std::string> failed;
  for (auto& [key, f] : fences_)
    if (f.contributed && std::find(f.nodes.begin(), f.nodes.end(), node) != f.nodes.end())
      failed.push_back(key);
  for (const auto& key : failed) complete(key, fences_[key], PMIX_ERR_UNREACH);
}

void fence_engine::forget(const std::string& prefix) {
  for (auto it = fences_.begin(); it != fences_.end();) {
    if (it->first.compare(0, prefix.size(), prefix) == 0) {
      if (it->second.contributed)
        completions_.push_back(completion{it->second.token, PMIX_ERR_JOB_TERMINATED, {}});
      it = fences_.erase(it);
    } else {
      ++it;
    }
  }
}

}  // namespace pmixd
