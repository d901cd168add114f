#include "actors/job_layout.hpp"

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <iterator>

#include "common/regex/regex.hpp"
#include "protocol/codec.hpp"
#include "protocol/direct.hpp"
#include "protocol/messages.hpp"

namespace pmix::actors {

// Sorts `ranks` and removes duplicates. A job's ranks are dense (0..n-1),
// here listed twice or more in sorted runs: marking them in a table is linear,
// where introsort degrades on such input (10,000 ranks listed twice cost
// 77 million instructions, three times the whole rest of the registration).
void sort_unique(std::vector<rank_t>& ranks) {
  if (ranks.empty()) return;
  const rank_t highest = *std::max_element(ranks.begin(), ranks.end());
  if (highest / 4 > ranks.size()) {  // sparse: sort
    std::sort(ranks.begin(), ranks.end());
    ranks.erase(std::unique(ranks.begin(), ranks.end()), ranks.end());
    return;
  }
  std::vector<bool> present(static_cast<std::size_t>(highest) + 1, false);
  for (auto r : ranks) present[r] = true;
  ranks.clear();
  for (std::size_t r = 0; r < present.size(); ++r)
    if (present[r]) ranks.push_back(static_cast<rank_t>(r));
}
namespace {

// The text of a map value: a string, a regex or a byte object. A PMIX_REGEX
// byte object often counts the C string's terminating NUL: drop it.
std::optional<std::string> map_text(const value& v) {
  const auto* s = v.as_string();
  if (s == nullptr) return std::nullopt;
  std::string text = *s;
  while (!text.empty() && text.back() == '\0') text.pop_back();
  return text;
}

void add_if_absent(info_list& list, const char* key, value v) {
  if (find(list, key) == nullptr) list.push_back(info{key, std::move(v), 0});
}

// The same, with a value that is built only when the key is absent (a
// list of every local rank or node, which a host usually gives itself).
template <class Make>
void add_if_absent_made(info_list& list, const char* key, Make make) {
  if (find(list, key) == nullptr) list.push_back(info{key, make(), 0});
}

// A little-endian 32-bit number (JobInfo.rank_index's and local_runs' fields).
char* put_le32(char* at, std::uint32_t v) {
  for (int k = 0; k < 4; ++k) at[k] = static_cast<char>((v >> (8 * k)) & 0xff);
  return at + 4;
}

void append_le32(std::string& out, std::uint32_t v) {
  char bytes[4];
  put_le32(bytes, v);
  out.append(bytes, 4);
}

// The runs of sorted, unique ranks: JobInfo.local_runs (`strided` false:
// runs of consecutive ranks, 8 bytes each, little-endian uint32 first rank
// and count) or local_strided_runs (12 bytes, the stride after them; each
// run as long as the step from its first rank to the next holds).
std::string runs_bytes(const std::vector<rank_t>& ranks, bool strided) {
  std::string out;
  for (std::size_t k = 0; k < ranks.size();) {
    const rank_t stride = strided && k + 1 < ranks.size() ? ranks[k + 1] - ranks[k] : 1;
    std::size_t end = k + 1;
    while (end < ranks.size() && ranks[end] - ranks[end - 1] == stride) ++end;
    append_le32(out, ranks[k]);
    append_le32(out, static_cast<std::uint32_t>(end - k));
    if (strided) append_le32(out, stride);
    k = end;
  }
  return out;
}

// "0,1,2,...": written into a buffer sized first (6,250 ranks are 34 kB,
// and grown by doubling the buffer left its earlier sizes to the allocator).
std::string join_ranks(const std::vector<rank_t>& ranks) {
  char digits[16];
  auto digits_of = [&digits](rank_t r) { return std::to_chars(digits, digits + sizeof digits, r).ptr; };
  std::size_t size = 0;
  for (auto r : ranks) size += static_cast<std::size_t>(digits_of(r) - digits) + 1;
  std::string out;
  out.reserve(size);
  for (auto r : ranks) {
    if (!out.empty()) out += ',';
    out.append(digits, digits_of(r));
  }
  return out;
}

// Whether a node's runs are `ranks`, in the same order.
bool same_ranks(const regex::run_list& runs, const std::vector<rank_t>& ranks) {
  std::size_t at = 0;
  for (const auto& run : runs) {
    if (run.count > ranks.size() - at) return false;
    for (std::uint32_t j = 0; j < run.count; ++j)
      if (ranks[at++] != run.at(j)) return false;
  }
  return at == ranks.size();
}

}  // namespace

std::uint8_t derived_bit(std::string_view key) {
  static constexpr std::string_view keys[] = {PMIX_HOSTNAME,  PMIX_NODEID,      PMIX_LOCAL_RANK,
                                              PMIX_NODE_RANK, PMIX_GLOBAL_RANK, PMIX_APPNUM};
  for (std::size_t k = 0; k < std::size(keys); ++k)
    if (key == keys[k]) return static_cast<std::uint8_t>(1u << k);
  return 0;
}

encoded_registration::encoded_registration(info_list list) : job(std::move(list)) {}

info_list job_layout::rank_info(rank_t r) const {
  std::string bytes;
  auto it = std::lower_bound(rank_data.begin(), rank_data.end(), r,
                             [](const rank_slice& s, rank_t v) { return s.rank < v; });
  for (; it != rank_data.end() && it->rank == r; ++it) bytes.append(rank_bytes, it->offset, it->length);
  wire::RankInfo parsed;
  info_list out;
  if (parsed.ParseFromString(bytes)) protocol::from_wire(parsed.info(), out);
  return out;
}

std::size_t job_layout::ranks_with_data() const {
  std::size_t n = 0;
  for (std::size_t k = 0; k < rank_data.size(); ++k)
    if (k == 0 || rank_data[k].rank != rank_data[k - 1].rank) ++n;
  return n;
}

bool job_layout::is_local(rank_t r) const {
  return std::binary_search(local_ranks.begin(), local_ranks.end(), r);
}

bool job_layout::all_local() const {
  return job_size.has_value() && local_ranks.size() == *job_size;
}

pmix_status_t compute_layout(const info_list& info, int nlocalprocs, const std::string& hostname,
                             job_layout& out, std::string& error) {
  out = job_layout{};
  std::optional<std::string> node_map;
  std::optional<std::string> proc_map;
  const std::string* local_peers = nullptr;
  for (const auto& i : info) {
    if (i.key == PMIX_NODE_MAP) {
      node_map = map_text(i.val);
      out.job_info.push_back(i);  // clients may read the maps too
      if (!node_map) {
        error = "PMIX_NODE_MAP must be a string or regex";
        return PMIX_ERR_BAD_PARAM;
      }
    } else if (i.key == PMIX_PROC_MAP) {
      proc_map = map_text(i.val);
      out.job_info.push_back(i);
      if (!proc_map) {
        error = "PMIX_PROC_MAP must be a string or regex";
        return PMIX_ERR_BAD_PARAM;
      }
    } else if (i.key == PMIX_LOCAL_PEERS) {
      local_peers = i.val.as_string();
    } else if (i.key == PMIX_JOB_SIZE) {
      if (auto n = i.val.as_uint()) out.job_size = static_cast<std::uint32_t>(*n);
      out.job_info.push_back(i);
    } else if (i.key == PMIX_PROC_DATA) {
      const auto* arr = i.val.as_array();
      if (arr == nullptr || arr->type != PMIX_INFO || arr->elements.empty()) {
        error = "PMIX_PROC_DATA must be a data array of PMIX_INFO";
        return PMIX_ERR_BAD_PARAM;
      }
      const auto* first = arr->elements[0].as_info();
      std::optional<std::uint64_t> rank;
      if (first != nullptr && first->key == PMIX_RANK) rank = first->val.as_uint();
      if (!rank || *rank >= rank_valid_limit) {
        error = "PMIX_PROC_DATA must start with a valid PMIX_RANK";
        return PMIX_ERR_BAD_PARAM;
      }
      rank_slice slice{static_cast<rank_t>(*rank), static_cast<std::uint32_t>(out.rank_bytes.size()), 0, 0};
      for (std::size_t k = 1; k < arr->elements.size(); ++k)
        if (const auto* e = arr->elements[k].as_info()) {
          protocol::append_info(out.rank_bytes, wire::RankInfo::kInfoFieldNumber, *e);
          slice.given |= derived_bit(e->key);
        }
      slice.length = static_cast<std::uint32_t>(out.rank_bytes.size() - slice.offset);
      out.rank_data.push_back(slice);
    } else {
      out.job_info.push_back(i);
    }
  }
  if (node_map) {
    auto nodes = regex::parse_node_map(*node_map);
    if (!nodes.ok()) {
      error = "PMIX_NODE_MAP: " + nodes.error().what;
      return PMIX_ERR_BAD_PARAM;
    }
    out.nodes = std::move(nodes).value();
  }
  if (proc_map) {
    auto ranks = regex::parse_proc_map_runs(*proc_map);
    if (!ranks.ok()) {
      error = "PMIX_PROC_MAP: " + ranks.error().what;
      return PMIX_ERR_BAD_PARAM;
    }
    out.node_ranks = std::move(ranks).value();
  }
  if (!out.nodes.empty() && !out.node_ranks.empty() && out.nodes.size() != out.node_ranks.size()) {
    error = "PMIX_NODE_MAP names " + std::to_string(out.nodes.size()) + " nodes but PMIX_PROC_MAP " +
            std::to_string(out.node_ranks.size());
    return PMIX_ERR_BAD_PARAM;
  }
  for (std::size_t n = 0; n < out.nodes.size(); ++n)
    if (out.nodes[n] == hostname) {
      out.local_node = static_cast<int>(n);
      break;
    }
  // A vector sorted once (a set was one allocation per local rank).
  std::vector<rank_t> locals;
  if (local_peers != nullptr) {
    auto parsed = regex::parse_proc_map(*local_peers);
    if (!parsed.ok() || parsed.value().size() > 1) {
      error = "PMIX_LOCAL_PEERS must be a comma-separated list of ranks";
      return PMIX_ERR_BAD_PARAM;
    }
    if (!parsed.value().empty()) locals = std::move(parsed.value()[0]);
  } else if (out.local_node >= 0 && static_cast<std::size_t>(out.local_node) < out.node_ranks.size()) {
    locals = regex::expand(out.node_ranks[static_cast<std::size_t>(out.local_node)]);
  } else if (out.nodes.empty() && out.node_ranks.size() == 1) {
    // A proc map without a node map describes this node alone.
    locals = regex::expand(out.node_ranks[0]);
  }
  sort_unique(locals);
  out.local_ranks = std::move(locals);
  if (!out.job_size && !out.node_ranks.empty()) {
    std::size_t total = 0;
    for (const auto& n : out.node_ranks) total += regex::rank_count(n);
    out.job_size = static_cast<std::uint32_t>(total);
  }
  if (out.nodes.empty() && out.node_ranks.empty() && local_peers == nullptr && nlocalprocs > 0 &&
      (!out.job_size || *out.job_size == static_cast<std::uint32_t>(nlocalprocs))) {
    // No maps: with no job size, or a job size equal to nlocalprocs, this is a
    // single-node job of nlocalprocs ranks, all of them here.
    out.job_size = static_cast<std::uint32_t>(nlocalprocs);
    out.local_ranks.clear();
    for (int r = 0; r < nlocalprocs; ++r) out.local_ranks.push_back(static_cast<rank_t>(r));
  }
  std::stable_sort(out.rank_data.begin(), out.rank_data.end(),
                   [](const rank_slice& a, const rank_slice& b) { return a.rank < b.rank; });
  return PMIX_SUCCESS;
}

pmix_status_t compute_layout(encoded_registration& reg, int nlocalprocs, const std::string& hostname,
                             job_layout& out, std::string& error) {
  const auto rc = compute_layout(reg.job, nlocalprocs, hostname, out, error);
  if (rc != PMIX_SUCCESS || reg.ranks.empty()) return rc;
  // The facade encodes every PMIX_PROC_DATA entry or none (server/registration.cpp),
  // so `job` held none and these are all of them.
  out.rank_bytes = std::move(reg.rank_bytes);
  out.rank_data = std::move(reg.ranks);
  std::stable_sort(out.rank_data.begin(), out.rank_data.end(),
                   [](const rank_slice& a, const rank_slice& b) { return a.rank < b.rank; });
  return PMIX_SUCCESS;
}

void add_derived_ranks(wire::JobInfo& job) {
  std::optional<std::string> node_map, proc_map;
  for (const auto& wi : job.info()) {
    if (wi.key() != PMIX_NODE_MAP && wi.key() != PMIX_PROC_MAP) continue;
    value v;
    if (!protocol::from_wire(wi.value(), v)) continue;
    (wi.key() == PMIX_NODE_MAP ? node_map : proc_map) = map_text(v);
  }
  if (!proc_map) return;
  auto lists = regex::parse_proc_map_runs(*proc_map);
  if (!lists.ok()) return;
  regex::node_list nodes;
  if (node_map) {
    auto parsed = regex::parse_node_map(*node_map);
    if (parsed.ok()) nodes = std::move(parsed).value();
  }
  std::vector<rank_t> present;
  present.reserve(static_cast<std::size_t>(job.ranks_size()));
  for (const auto& r : job.ranks()) present.push_back(r.rank());
  std::sort(present.begin(), present.end());
  const regex::rank_places places{lists.value()};
  bool added = false;
  for (const auto& [rank, place] : places.by_rank()) {
    if (std::binary_search(present.begin(), present.end(), rank)) continue;
    auto* r = job.add_ranks();
    r->set_rank(rank);
    protocol::to_wire(protocol::derived_rank_items(rank, place.node < nodes.size() ? &nodes[place.node] : nullptr,
                                                   place.node, place.index),
                      r->mutable_info());
    added = true;
  }
  if (added)
    std::stable_sort(job.mutable_ranks()->begin(), job.mutable_ranks()->end(),
                     [](const wire::RankInfo& a, const wire::RankInfo& b) { return a.rank() < b.rank(); });
}

info_list node_info_arrays(const wire::JobInfo& job) {
  std::optional<std::string> node_map, proc_map, own;
  std::vector<std::string> described;  // nodes the host gave an array for
  for (const auto& wi : job.info()) {
    const auto& key = wi.key();
    if (key != PMIX_NODE_MAP && key != PMIX_PROC_MAP && key != PMIX_HOSTNAME && key != PMIX_NODE_INFO_ARRAY) continue;
    value v;
    if (!protocol::from_wire(wi.value(), v)) continue;
    if (key == PMIX_NODE_INFO_ARRAY) {
      const auto* a = v.as_array();
      if (a == nullptr) continue;
      for (const auto& e : a->elements)
        if (const auto* i = e.as_info(); i != nullptr && i->key == PMIX_HOSTNAME && i->val.as_string() != nullptr)
          described.push_back(*i->val.as_string());
    } else if (key == PMIX_HOSTNAME) {
      if (const auto* h = v.as_string()) own = *h;
    } else {
      (key == PMIX_NODE_MAP ? node_map : proc_map) = map_text(v);
    }
  }
  info_list out;
  if (!node_map || !proc_map) return out;
  auto nodes = regex::parse_node_map(*node_map);
  auto lists = regex::parse_proc_map(*proc_map);
  if (!nodes.ok() || !lists.ok()) return out;
  const auto& names = nodes.value();
  const auto& ranks = lists.value();
  for (std::size_t n = 0; n < names.size() && n < ranks.size(); ++n) {
    if ((own && names[n] == *own) || ranks[n].empty() ||
        std::find(described.begin(), described.end(), names[n]) != described.end())
      continue;
    // In rank order, as this node's own (compute_layout's local_ranks).
    std::vector<rank_t> on(ranks[n].begin(), ranks[n].end());
    sort_unique(on);
    auto item = [](const char* key, value v) {
      return value{PMIX_INFO, std::make_shared<const info>(info{key, std::move(v), 0})};
    };
    array_value a{PMIX_INFO, {}};
    a.elements.push_back(item(PMIX_HOSTNAME, value::string(names[n])));
    a.elements.push_back(item(PMIX_NODEID, value::unsigned_(PMIX_UINT32, n)));
    a.elements.push_back(item(PMIX_LOCAL_PEERS, value::string(join_ranks(on))));
    a.elements.push_back(item(PMIX_LOCALLDR, value::unsigned_(PMIX_PROC_RANK, on.front())));
    a.elements.push_back(item(PMIX_LOCAL_SIZE, value::unsigned_(PMIX_UINT32, on.size())));
    out.push_back(info{PMIX_NODE_INFO_ARRAY, value::array(std::move(a)), 0});
  }
  return out;
}

std::string serialize_job_info(const std::string& nspace, job_layout layout,
                               const std::string& hostname) {
  info_list job = std::move(layout.job_info);
  if (layout.job_size) {
    add_if_absent(job, PMIX_JOB_SIZE, value::unsigned_(PMIX_UINT32, *layout.job_size));
    add_if_absent(job, PMIX_UNIV_SIZE, value::unsigned_(PMIX_UINT32, *layout.job_size));
    add_if_absent(job, PMIX_MAX_PROCS, value::unsigned_(PMIX_UINT32, *layout.job_size));
  }
  add_if_absent(job, PMIX_JOBID, value::string(nspace));
  add_if_absent(job, PMIX_NSPACE, value::string(nspace));
  add_if_absent(job, PMIX_LOCAL_SIZE,
                value::unsigned_(PMIX_UINT32, static_cast<std::uint32_t>(layout.local_ranks.size())));
  // No ranks here: no peers list, as OpenPMIx (Open MPI splits the string it
  // gets and dereferences the first element: an empty one crashed
  // MPI_Comm_spawn's connect across nodes on the parents' nodes).
  // Beside the list, its runs (JobInfo.local_runs) when they are at most
  // half its size: every process of the node parsed the list at PMIx_Init,
  // 50 us at 4,096 ranks (issue 40); else, as often, its runs of ranks a
  // stride apart (JobInfo.local_strided_runs: a round-robin placement).
  std::string local_runs;
  int runs_field = wire::JobInfo::kLocalRunsFieldNumber;
  if (!layout.local_ranks.empty()) {
    const bool made = find(job, PMIX_LOCAL_PEERS) == nullptr;
    add_if_absent_made(job, PMIX_LOCAL_PEERS, [&] { return value::string(join_ranks(layout.local_ranks)); });
    add_if_absent(job, PMIX_LOCALLDR, value::unsigned_(PMIX_PROC_RANK, layout.local_ranks.front()));
    if (made) {
      const auto list_size = find(job, PMIX_LOCAL_PEERS)->val.as_string()->size();
      local_runs = runs_bytes(layout.local_ranks, false);
      if (2 * local_runs.size() > list_size) {
        local_runs = runs_bytes(layout.local_ranks, true);
        runs_field = wire::JobInfo::kLocalStridedRunsFieldNumber;
        if (2 * local_runs.size() > list_size) local_runs.clear();
      }
    }
  }
  add_if_absent(job, PMIX_HOSTNAME, value::string(hostname));
  if (!layout.nodes.empty()) {
    add_if_absent(job, PMIX_NUM_NODES,
                  value::unsigned_(PMIX_UINT32, static_cast<std::uint32_t>(layout.nodes.size())));
    add_if_absent_made(job, PMIX_NODE_LIST, [&] {
      std::size_t size = 0;
      for (const auto& n : layout.nodes) size += n.size() + 1;
      std::string list;
      list.reserve(size);
      for (const auto& n : layout.nodes) {
        if (!list.empty()) list += ',';
        list += n;
      }
      return value::string(std::move(list));
    });
  } else {
    add_if_absent(job, PMIX_NUM_NODES, value::unsigned_(PMIX_UINT32, 1));
  }
  if (layout.local_node >= 0)
    add_if_absent(job, PMIX_NODEID,
                  value::unsigned_(PMIX_UINT32, static_cast<std::uint32_t>(layout.local_node)));
  add_if_absent(job, PMIX_APPNUM, value::unsigned_(PMIX_UINT32, 0));

  // This node's ranks with nothing registered of their own are left to the
  // readers (as are the ranks that run elsewhere, below) when the job's own
  // items give theirs (JobInfo.local_ranks_by_peers): this node's list in
  // the proc map is PMIX_LOCAL_PEERS in order, and the job's PMIX_HOSTNAME
  // and PMIX_NODEID (the last of each, as a reader keeps) are this node's
  // name in the node map and its place. A job of 100,000 ranks by its maps
  // alone wrote 6,250 such entries of about 150 bytes per node, most of its
  // registration's time, where OpenPMIx derives them.
  bool by_peers = false;
  if (layout.local_node >= 0 && static_cast<std::size_t>(layout.local_node) < layout.node_ranks.size() &&
      static_cast<std::size_t>(layout.local_node) < layout.nodes.size() &&
      same_ranks(layout.node_ranks[static_cast<std::size_t>(layout.local_node)], layout.local_ranks)) {
    const value* host = nullptr;
    const value* node = nullptr;
    for (const auto& i : job) {
      if (i.key == PMIX_HOSTNAME) host = &i.val;
      if (i.key == PMIX_NODEID) node = &i.val;
    }
    by_peers = host != nullptr && host->as_string() != nullptr &&
               *host->as_string() == layout.nodes[static_cast<std::size_t>(layout.local_node)] &&
               node != nullptr && node->as_uint() == static_cast<std::uint64_t>(layout.local_node);
  }
  // Per-rank derived data: where each rank runs and its index on that node.
  // Only the derived values are built here; each rank's registered items
  // are written straight from the registration's arrays below.
  struct derived {
    const std::string* host = nullptr;
    std::optional<std::uint32_t> nodeid;
    std::optional<std::uint16_t> index;  // PMIX_LOCAL_RANK and PMIX_NODE_RANK
  };
  // The ranks the blob can describe, sorted, with their derived data
  // alongside: those registered and those of this node. A rank of the proc
  // map that runs elsewhere with nothing registered gets no RankInfo (below),
  // so the map's other ranks are only walked, not stored: a job of 100,000
  // ranks on 16 nodes kept a vector of derived data for every rank and found
  // each by binary search (half of a registration's 8-18 ms).
  // This node's ranks are left out too when left to PMIX_LOCAL_PEERS
  // (by_peers, above): their derived data, 24 bytes a rank (150 kB for
  // 6,250), was built and not written, and the allocator kept its pages.
  std::vector<rank_t> ranks;
  ranks.reserve(layout.rank_data.size() + (by_peers ? 0 : layout.local_ranks.size()));
  for (const auto& s : layout.rank_data) ranks.push_back(s.rank);
  if (!by_peers) ranks.insert(ranks.end(), layout.local_ranks.begin(), layout.local_ranks.end());
  sort_unique(ranks);
  std::vector<derived> info_of(ranks.size());
  // A rank's entry, or none: by offset when the ranks are one run, else
  // through a bitmap of the span (most of the map's ranks are not here) and
  // a binary search for those that are.
  const rank_t low = ranks.empty() ? 0 : ranks.front();
  const std::size_t span = ranks.empty() ? 0 : static_cast<std::size_t>(ranks.back() - low) + 1;
  const bool dense = span == ranks.size();
  std::vector<bool> present;
  if (!dense) {
    present.assign(span, false);
    for (auto r : ranks) present[r - low] = true;
  }
  auto of = [&](rank_t r) -> derived* {
    if (r < low || static_cast<std::size_t>(r - low) >= span) return nullptr;
    if (dense) return &info_of[r - low];
    if (!present[r - low]) return nullptr;
    return &info_of[static_cast<std::size_t>(std::lower_bound(ranks.begin(), ranks.end(), r) - ranks.begin())];
  };
  // The map's runs, a run that holds none of those ranks skipped whole (a
  // node's block of ranks elsewhere is one run).
  for (std::size_t n = 0; n < layout.node_ranks.size(); ++n) {
    std::size_t k = 0;  // the place of the run's first rank on its node
    for (const auto& run : layout.node_ranks[n]) {
      const auto lo = std::min(run.first, run.last()), hi = std::max(run.first, run.last());
      if (span == 0 || hi < low || std::uint64_t{lo} >= std::uint64_t{low} + span) {
        k += run.count;
        continue;
      }
      for (std::uint32_t j = 0; j < run.count; ++j, ++k) {
        auto* d = of(run.at(j));
        if (d == nullptr) continue;
        if (n < layout.nodes.size() && d->host == nullptr) d->host = &layout.nodes[n];
        if (!d->nodeid) d->nodeid = static_cast<std::uint32_t>(n);
        if (!d->index) d->index = static_cast<std::uint16_t>(k);
      }
    }
  }
  if (layout.node_ranks.empty()) {
    // No proc map: the local ranks are numbered on this node in rank order.
    for (std::size_t k = 0; k < layout.local_ranks.size(); ++k) {
      auto* d = of(layout.local_ranks[k]);
      if (d->host == nullptr) d->host = &hostname;
      if (!d->index) d->index = static_cast<std::uint16_t>(k);
    }
  }

  // Written straight in wire form (protocol/direct.hpp), a JobInfo being the
  // concatenation of its fields: the registered items of each rank are
  // already encoded and are copied as they are. Each rank's record is built
  // twice, first to size the whole blob and then to write it: the blob is
  // allocated once, at its size. Estimated from one rank instead, it came
  // short when later ranks' numbers and host names were longer, and a
  // string grown by doubling and then shrunk to its size copied itself
  // twice (16 nodes registering 100,000 ranks each in pmixsim: a third of
  // the registration's time).
  // The job's own items are sized before they are written too: grown by
  // doubling, the buffer left its earlier sizes to the allocator
  // (PMIX_LOCAL_PEERS of 6,250 ranks alone is 34 kB).
  std::string out;
  {
    std::size_t head = nspace.empty() ? 0
                                      : protocol::header_size(wire::JobInfo::kNspaceFieldNumber, nspace.size()) +
                                            nspace.size();
    for (const auto& i : job) {
      const auto body = protocol::info_size(i);
      head += protocol::header_size(wire::JobInfo::kInfoFieldNumber, body) + body;
    }
    if (!local_runs.empty())
      head += protocol::header_size(runs_field, local_runs.size()) + local_runs.size();
    out.reserve(head + protocol::uint_size(wire::JobInfo::kLocalRanksByPeersFieldNumber, 1));
  }
  if (!nspace.empty()) protocol::append_length_delimited(out, wire::JobInfo::kNspaceFieldNumber, nspace);
  for (const auto& i : job) protocol::append_info(out, wire::JobInfo::kInfoFieldNumber, i);
  // Items that many ranks share are encoded once: each node's host name
  // and the application number (100,000 ranks: 6 items each, built twice).
  const std::uint8_t host_bit = derived_bit(PMIX_HOSTNAME), nodeid_bit = derived_bit(PMIX_NODEID),
                     lrank_bit = derived_bit(PMIX_LOCAL_RANK), nrank_bit = derived_bit(PMIX_NODE_RANK),
                     grank_bit = derived_bit(PMIX_GLOBAL_RANK), appnum_bit = derived_bit(PMIX_APPNUM);
  auto encoded = [](std::string_view key, const value& v) {
    std::string bytes;
    protocol::append_info(bytes, wire::RankInfo::kInfoFieldNumber, key, v, 0);
    return bytes;
  };
  const std::string appnum_item = encoded(PMIX_APPNUM, value::unsigned_(PMIX_UINT32, 0));
  // By node id; a rank with a host and no node id runs here (no proc map).
  std::vector<std::string> host_items(layout.nodes.size());
  std::string own_host_item;
  auto host_item = [&](const derived& d) -> const std::string& {
    auto& slot = d.nodeid && *d.nodeid < host_items.size() ? host_items[*d.nodeid] : own_host_item;
    if (slot.empty()) slot = encoded(PMIX_HOSTNAME, value::string(*d.host));
    return slot;
  };
  std::string r;
  auto record = [&](std::size_t k, std::vector<rank_slice>::const_iterator& slice) -> const std::string& {
    const auto rank = ranks[k];
    const auto& d = info_of[k];
    r.clear();
    protocol::append_uint(r, wire::RankInfo::kRankFieldNumber, rank);
    std::uint8_t given = 0;
    for (; slice != layout.rank_data.end() && slice->rank == rank; ++slice) {
      r.append(layout.rank_bytes, slice->offset, slice->length);
      given |= slice->given;
    }
    auto add = [&](std::uint8_t bit, std::string_view key, const value& v) {
      if ((given & bit) == 0) protocol::append_info(r, wire::RankInfo::kInfoFieldNumber, key, v, 0);
    };
    if (d.host != nullptr && (given & host_bit) == 0) r += host_item(d);
    if (d.nodeid) add(nodeid_bit, PMIX_NODEID, value::unsigned_(PMIX_UINT32, *d.nodeid));
    if (d.index) {
      add(lrank_bit, PMIX_LOCAL_RANK, value::unsigned_(PMIX_UINT16, *d.index));
      add(nrank_bit, PMIX_NODE_RANK, value::unsigned_(PMIX_UINT16, *d.index));
    }
    add(grank_bit, PMIX_GLOBAL_RANK, value::unsigned_(PMIX_PROC_RANK, rank));
    if ((given & appnum_bit) == 0) r += appnum_item;
    return r;
  };
  // A rank of the proc map that runs elsewhere and has nothing registered
  // of its own gets no RankInfo: its readers derive its items from the maps
  // (protocol::derived_rank_items). A job of 100,000 ranks registered by its
  // maps alone wrote 14 MB here, which every local process mapped; OpenPMIx
  // keeps the maps and derives as well.
  // (The items derived here are those protocol::derived_rank_items gives,
  // in its order.)
  if (by_peers) protocol::append_uint(out, wire::JobInfo::kLocalRanksByPeersFieldNumber, 1);
  if (!local_runs.empty()) protocol::append_length_delimited(out, runs_field, local_runs);
  // Written: every registered rank; with a proc map, this node's ranks it
  // places unless they are left to PMIX_LOCAL_PEERS (the map is what the
  // job's readers go by); without one, every rank of this node.
  std::vector<bool> written(ranks.size());
  for (std::size_t k = 0, s = 0; k < ranks.size(); ++k) {
    while (s < layout.rank_data.size() && layout.rank_data[s].rank < ranks[k]) ++s;
    const bool registered = s < layout.rank_data.size() && layout.rank_data[s].rank == ranks[k];
    written[k] = registered || layout.node_ranks.empty() || (!by_peers && info_of[k].nodeid.has_value());
  }
  // Each written rank's record first, built once into `records` (the blob
  // is then allocated once, at its size, and the records copied into it
  // after the index; built twice, once to size the blob and once to write
  // it, they took a third of a 10,000-rank registration's instructions),
  // and with them the rank index (JobInfo.rank_index): where each
  // RankInfo's payload will be, so that a process reads the ranks it looks
  // up and not every one (a process of an 8,192-rank job spent 60% of its
  // PMIx_Init finding its ranks in the blob). The index's own size is known
  // from the number of ranks written, so the offsets are too.
  struct entry {
    rank_t rank;
    std::uint32_t offset, length;
  };
  const auto count = static_cast<std::size_t>(std::count(written.begin(), written.end(), true));
  const std::size_t index_bytes = 12 * count;
  const std::size_t index_field =
      count == 0 ? 0 : protocol::header_size(wire::JobInfo::kRankIndexFieldNumber, index_bytes) + index_bytes;
  std::vector<entry> entries;
  entries.reserve(count);
  std::string records;  // the records, in `entries`' order
  std::size_t at = out.size() + index_field;  // where the next RankInfo field starts
  auto slice = layout.rank_data.cbegin();
  for (std::size_t k = 0; k < ranks.size(); ++k) {
    if (!written[k]) continue;
    const auto& rec = record(k, slice);
    // Ranks' records are usually alike: sized from the first, with room.
    if (records.empty()) records.reserve(rec.size() * count * 5 / 4 + 4096);
    records += rec;
    const auto length = rec.size();
    at += protocol::header_size(wire::JobInfo::kRanksFieldNumber, length);
    entries.push_back(entry{ranks[k], static_cast<std::uint32_t>(at), static_cast<std::uint32_t>(length)});
    at += length;
  }
  // Offsets are 32-bit: a blob past 4 GB goes without an index.
  const bool indexed = count > 0 && at <= UINT32_MAX;
  out.reserve(at - (indexed ? 0 : index_field));
  if (indexed) {
    // By rank (`entries` stays in the records' order for the copy below).
    const auto by_rank = [](const entry& a, const entry& b) { return a.rank < b.rank; };
    std::vector<entry> sorted;
    if (!std::is_sorted(entries.begin(), entries.end(), by_rank)) {
      sorted = entries;
      std::stable_sort(sorted.begin(), sorted.end(), by_rank);
    }
    std::string index(index_bytes, '\0');
    char* at = index.data();
    for (const auto& e : sorted.empty() ? entries : sorted)
      at = put_le32(put_le32(put_le32(at, e.rank), e.offset), e.length);
    protocol::append_length_delimited(out, wire::JobInfo::kRankIndexFieldNumber, index);
  }
  std::size_t from = 0;
  for (const auto& e : entries) {
    protocol::append_length_delimited(out, wire::JobInfo::kRanksFieldNumber,
                                      std::string_view{records}.substr(from, e.length));
    from += e.length;
  }
  // With no rank written the buffer is what the job's items grew to: it is
  // held as long as the job, so at its size.
  if (out.capacity() != out.size()) out.shrink_to_fit();
  return out;
}

}  // namespace pmix::actors
