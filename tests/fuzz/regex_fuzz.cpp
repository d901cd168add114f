// Fuzz target: the node map and proc map parser and generator
// (common/regex/regex.hpp): what PMIx_generate_regex / PMIx_generate_ppn
// produce and what PMIx_server_register_nspace consumes
// (actors/job_layout.cpp compute_layout: PMIX_NODE_MAP, PMIX_PROC_MAP,
// PMIX_LOCAL_PEERS), down to the client that reads the job data built from
// them (serialize_job_info, then the client's decode and store::load_job,
// which parses PMIX_LOCAL_PEERS again).
//
// Input: [flags byte] then up to three texts separated by NUL bytes (a node
// map, a proc map, local peers). Every text goes through both parsers.
// Parsing uses limits small enough for a fuzzer (4,096 nodes, 65,536 ranks,
// 1 MiB of names): the code paths are those of the default limits, and a
// text within them parses the same under the defaults, which the
// generate_* calls (default limits, as the C API) then use.
//
// Invariants: a parse error is a message "offset N: ..." with N within the
// text; what parses encodes, the encoding parses back to exactly the same
// nodes or ranks (parse(generate(text)) == parse(text), regex.hpp), and a
// compact node map is printable ASCII without spaces; the generate_* calls
// give that encoding; a layout computed from the maps reaches the client
// with the same local ranks and node list.
#include <pmix_common.h>

#include <algorithm>
#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "actors/job_layout.hpp"
#include "client/store.hpp"
#include "common/regex/regex.hpp"
#include "protocol/messages.hpp"
#include "tests/fuzz/fuzz_support.hpp"

using namespace pmix;

namespace {

regex::parse_limits fuzz_limits() {
  regex::parse_limits l;
  l.max_nodes = 4096;
  l.max_ranks = 65536;
  l.max_name_bytes = 1u << 20;
  return l;
}

// "offset N: ..." with N <= the text's length.
void check_error(const regex::parse_error& e, std::string_view text) {
  FUZZ_CHECK(e.what.compare(0, 7, "offset ") == 0);
  std::size_t k = 7;
  std::uint64_t offset = 0;
  FUZZ_CHECK(k < e.what.size() && e.what[k] >= '0' && e.what[k] <= '9');
  while (k < e.what.size() && e.what[k] >= '0' && e.what[k] <= '9' && offset <= text.size())
    offset = offset * 10 + static_cast<std::uint64_t>(e.what[k++] - '0');
  FUZZ_CHECK(offset <= text.size());
  FUZZ_CHECK(e.what.compare(k, 2, ": ") == 0);
}

bool check_node_map(std::string_view text, regex::node_list* out) {
  auto parsed = regex::parse_node_map(text, fuzz_limits());
  if (!parsed.ok()) {
    check_error(parsed.error(), text);
    return false;
  }
  const auto& names = parsed.value();
  for (const auto& n : names) FUZZ_CHECK(!n.empty() && n.find(',') == std::string::npos);
  auto encoded = regex::encode_node_map(names);
  FUZZ_CHECK(encoded.ok());
  const std::string& compact = encoded.value();
  FUZZ_CHECK(compact.compare(0, 5, "pmix[") == 0 && compact.back() == ']');
  for (char c : compact) FUZZ_CHECK(c > 0x20 && c < 0x7f);
  auto back = regex::parse_node_map(compact, fuzz_limits());
  FUZZ_CHECK(back.ok());
  FUZZ_CHECK(back.value() == names);
  auto generated = regex::generate_node_map(text);  // default limits, as the C API
  FUZZ_CHECK(generated.ok() && generated.value() == compact);
  if (out != nullptr) *out = names;
  return true;
}

std::size_t total_ranks(const regex::rank_lists& nodes) {
  std::size_t n = 0;
  for (const auto& r : nodes) n += r.size();
  return n;
}

bool check_proc_map(std::string_view text, regex::rank_lists* out) {
  auto parsed = regex::parse_proc_map(text, fuzz_limits());
  // The runs form: the same error, or the same ranks, and each rank's place
  // found as the table of every rank gives it.
  auto runs = regex::parse_proc_map_runs(text, fuzz_limits());
  FUZZ_CHECK(runs.ok() == parsed.ok());
  if (!parsed.ok()) {
    FUZZ_CHECK(runs.error().what == parsed.error().what);
    check_error(parsed.error(), text);
    return false;
  }
  FUZZ_CHECK(regex::expand(runs.value()) == parsed.value());
  {
    const regex::rank_places places{runs.value()};
    std::vector<std::pair<std::uint32_t, regex::rank_place>> table;
    for (std::uint32_t n = 0; n < parsed.value().size(); ++n)
      for (std::uint32_t k = 0; k < parsed.value()[n].size(); ++k)
        table.push_back({parsed.value()[n][k], regex::rank_place{n, k}});
    std::stable_sort(table.begin(), table.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    for (std::size_t k = 0; k < table.size(); ++k) {
      if (k > 0 && table[k].first == table[k - 1].first) continue;  // the first node's place
      const auto got = places.find(table[k].first);
      FUZZ_CHECK(got && got->node == table[k].second.node && got->index == table[k].second.index);
    }
  }
  const auto& nodes = parsed.value();
  for (const auto& on_node : nodes)
    for (auto r : on_node) FUZZ_CHECK(r <= regex::max_rank);
  auto encoded = regex::encode_proc_map(nodes);
  FUZZ_CHECK(encoded.ok());
  auto back = regex::parse_proc_map(encoded.value(), fuzz_limits());
  FUZZ_CHECK(back.ok());
  FUZZ_CHECK(back.value() == nodes);
  auto generated = regex::generate_proc_map(text);
  FUZZ_CHECK(generated.ok() && generated.value() == encoded.value());
  if (out != nullptr) *out = nodes;
  return true;
}

// PMIx_server_register_nspace's layout from these maps, its client blob, and
// a client reading it.
void check_layout(unsigned flags, const std::vector<std::string_view>& texts, const regex::node_list& nodes,
                  const regex::rank_lists& ranks) {
  info_list reg;
  auto text_value = [&](std::string_view t) {
    // A string, or a PMIX_REGEX byte object counting the C string's NUL.
    return (flags & 2) ? value::bytes(PMIX_REGEX, std::string{t} + '\0') : value::string(std::string{t});
  };
  if (!texts[0].empty() || (flags & 4)) reg.push_back({PMIX_NODE_MAP, text_value(texts[0]), 0});
  if (texts.size() > 1) reg.push_back({PMIX_PROC_MAP, text_value(texts[1]), 0});
  if (texts.size() > 2) reg.push_back({PMIX_LOCAL_PEERS, value::string(std::string{texts[2]}), 0});
  if (flags & 8) reg.push_back({PMIX_JOB_SIZE, value::unsigned_(PMIX_UINT32, total_ranks(ranks)), 0});
  const std::string hostname = (flags & 16) && !nodes.empty() ? nodes[nodes.size() / 2] : "fuzz-host";
  const int nlocalprocs = static_cast<int>((flags >> 5) & 3);
  actors::job_layout layout;
  std::string error;
  if (actors::compute_layout(reg, nlocalprocs, hostname, layout, error) != PMIX_SUCCESS) {
    FUZZ_CHECK(!error.empty());
    return;
  }
  FUZZ_CHECK(std::is_sorted(layout.local_ranks.begin(), layout.local_ranks.end()));
  const auto locals = layout.local_ranks;
  const auto node_names = layout.nodes;
  const std::string blob = actors::serialize_job_info("fuzz-job", std::move(layout), hostname);
  protocol::job_info job;
  FUZZ_CHECK(protocol::decode(blob, job, &error));
  client::store store;
  FUZZ_CHECK(store.load_job(std::move(job)));
  const auto& seen = store.local_ranks("fuzz-job");
  FUZZ_CHECK(std::vector<rank_t>(seen.begin(), seen.end()) == locals);
  if (!node_names.empty()) FUZZ_CHECK(store.nodes_of("fuzz-job") == node_names);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  fuzz::input in{data, size};
  const unsigned flags = in.byte();
  const std::string_view rest = in.rest();
  std::vector<std::string_view> texts;
  std::size_t start = 0;
  while (texts.size() < 3) {
    const auto nul = rest.find('\0', start);
    texts.push_back(rest.substr(start, nul == std::string_view::npos ? std::string_view::npos : nul - start));
    if (nul == std::string_view::npos) break;
    start = nul + 1;
  }
  regex::node_list nodes;
  regex::rank_lists ranks, peers;
  bool usable = true;
  for (std::size_t k = 0; k < texts.size(); ++k) {
    const bool node_ok = check_node_map(texts[k], k == 0 ? &nodes : nullptr);
    const bool proc_ok = check_proc_map(texts[k], k == 1 ? &ranks : k == 2 ? &peers : nullptr);
    if (k == 0 && !node_ok && !texts[0].empty()) usable = false;
    if (k >= 1 && !proc_ok) usable = false;
  }
  // The server's layout, for maps small enough to build job data for.
  if ((flags & 1) && usable && nodes.size() <= 512 && total_ranks(ranks) + total_ranks(peers) <= 2048)
    check_layout(flags, texts, nodes, ranks);
  return 0;
}
