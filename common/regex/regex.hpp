// Node map and proc map strings: the compact text a host uses to say where
// processes run. Backs PMIx_generate_regex, PMIx_generate_ppn and the server's
// reading of PMIX_NODE_MAP / PMIX_PROC_MAP in PMIx_server_register_nspace.
//
// Plain functions, no state, no threads, no exceptions: every call returns a
// result that holds either the value or a parse_error.
//
// ---------------------------------------------------------------------------
// NODE MAP
//
// Raw form (what a host writes by hand): node names in job order separated by
// ','. Names are taken byte for byte (no trimming). In both forms a name is
// non-empty and holds no ',' and no NUL. "" is the empty list.
//
// Compact form (what generate_node_map produces):
//
//   node-map = "pmix[" [ item *( "," item ) ] "]"
//   item     = name / text "[" [ width ":" ] range *( "," range ) "]" text
//   name     = 1*char                        ; one node, taken literally
//   text     = *char
//   char     = safe / "%" HEXDIG HEXDIG      ; %XX is the byte 0xXX
//   safe     = any byte 0x21-0x7E except "%" "," "[" "]"
//   range    = number [ "-" number ]         ; a-b counts up or down, ends included
//   width    = number                        ; 1..18
//   number   = 1*DIGIT
//
// A bracketed item stands for one node per value v, in range order:
// text-before + decimal(v) + text-after. With a width, decimal(v) is zero
// padded to exactly width digits (v < 10^width); without one it has no
// padding (v < 10^18). Every other byte, including space and non-ASCII,
// is written as %XX, so the output is printable ASCII without spaces.
// The generator uses the number field of a name's last digit run (at most 18
// digits) and writes a bracketed item only where it is shorter than the names.
//
//   "node01,node02,node03,node10,login,c1-n007,c1-n008"
//       -> "pmix[node[2:1-3,10],login,c1-n[3:7-8]]"
//   "n9,n10,n11"          -> "pmix[n[9-11]]"
//   "n3,n2,n1,n1"         -> "pmix[n[3-1,1]]"
//   "r1n1-ib,r1n2-ib"     -> "pmix[r1n[1-2]-ib]"
//   "a[1],b c"            -> "pmix[a%5B1%5D,b%20c]"
//   ""                    -> "pmix[]"
//
// ---------------------------------------------------------------------------
// PROC MAP (ppn)
//
// Raw form: one entry per node, in node map order, separated by ';'; an entry
// is a ','-separated list of ranks or rank ranges "a-b" (up or down, ends
// included) and may be empty (a node without procs). "" is zero nodes.
//
//   raw      = "" / entry *( ";" entry )
//   entry    = [ rterm *( "," rterm ) ]
//   rterm    = number [ "-" number ]
//
// Compact form (what generate_proc_map produces):
//
//   proc-map = "pmix[" [ group *( ";" group ) ] "]"  ; "pmix[]" is zero nodes
//   group    = ranks [ "*" count [ ( "+" / "-" ) shift ] ]
//   ranks    = [ term *( "," term ) ]
//   term     = number [ "-" number [ "/" step ] ]
//
// "a-b/s" is a, a+s, ..., b (or downwards when b < a); s >= 1 must divide
// |b - a|. "ranks*n+d" is n >= 1 nodes: the first has ranks, each next one
// has the previous node's ranks plus d ("-d": minus d; no shift: identical
// nodes; a shift of empty nodes is ignored). A lone node without procs is
// written "pmix[*1]". The generator writes a group only where it is shorter
// than the nodes one by one.
//
//   "0,1,2,3;4-7;8,10,12"      -> "pmix[0-3;4-7;8-12/2]"
//   "0-3;4-7;8-11"             -> "pmix[0-3*3+4]"
//   100 nodes x 10 ranks block -> "pmix[0-9*100+10]"
//   4 nodes, 16 ranks cyclic   -> "pmix[0-12/4*4+1]"
//   "0;;1"                     -> "pmix[0;;1]"
//
// ---------------------------------------------------------------------------
// Both parsers accept either form: text that starts with "pmix[" is read as
// the compact form, anything else as the raw form (so a raw node list cannot
// start with a node named "pmix[..."). Order and duplicates are kept
// exactly: parse(generate(text)) == parse(text) for every valid text.
// Ranks are at most max_rank. No meaning is checked (a rank may repeat).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

namespace pmix::regex {

// Highest rank a proc map may hold.
inline constexpr std::uint32_t max_rank = 0xFFFFFFFEu;

// Why a text was refused: "offset N: ..." (N counts bytes of the input).
struct parse_error {
  std::string what;
};

// Either a value or a parse_error. value() requires ok(), error() requires !ok().
template <class T>
class [[nodiscard]] result {
 public:
  result(T value) : data_(std::in_place_index<0>, std::move(value)) {}
  result(parse_error error) : data_(std::in_place_index<1>, std::move(error)) {}

  bool ok() const noexcept { return data_.index() == 0; }
  const T& value() const& { return std::get<0>(data_); }
  T&& value() && { return std::get<0>(std::move(data_)); }
  const parse_error& error() const { return std::get<1>(data_); }

 private:
  std::variant<T, parse_error> data_;
};

// Bounds on what one parse may produce, so that a short text cannot expand
// into gigabytes. Exceeding one is a parse_error, found before allocating.
struct parse_limits {
  std::size_t max_nodes = 10'000'000;             // names, or proc map entries
  std::size_t max_ranks = 100'000'000;            // ranks over all nodes
  std::size_t max_name_bytes = std::size_t{256} << 20;  // bytes over all names
};

using node_list = std::vector<std::string>;
using rank_lists = std::vector<std::vector<std::uint32_t>>;

// An arithmetic run of ranks: first, first + step, ... (count of them; step
// may be negative, and is 0 for a run of one). A proc map's terms ("a-b",
// "a-b/s", and single ranks that continue a progression) as runs: a node of
// 6,250 ranks given as "0-6249" is one run of 16 bytes, not 25 kB of ranks.
struct rank_run {
  std::uint32_t first = 0;
  std::uint32_t count = 0;
  std::int64_t step = 0;
  std::uint32_t at(std::uint64_t k) const {
    return static_cast<std::uint32_t>(static_cast<std::int64_t>(first) + step * static_cast<std::int64_t>(k));
  }
  std::uint32_t last() const { return count == 0 ? first : at(count - 1); }
  bool operator==(const rank_run& o) const { return first == o.first && count == o.count && step == o.step; }
};
using run_list = std::vector<rank_run>;   // one node's ranks, in their order
using rank_runs = std::vector<run_list>;  // per node

// The ranks of a run list, in order; how many there are.
std::vector<std::uint32_t> expand(const run_list& runs);
rank_lists expand(const rank_runs& nodes);
std::size_t rank_count(const run_list& runs);
// The runs of a list of ranks (consecutive terms of one progression merged).
run_list runs_of(const std::vector<std::uint32_t>& ranks);

// Node names of a node map in either form. Errors: malformed text, an empty
// name, a name with ',' or NUL, a limit exceeded.
result<node_list> parse_node_map(std::string_view text,
                                 const parse_limits& limits = {}) noexcept;

// Compact form of names. Errors: an empty name, a name with ',' or NUL.
result<std::string> encode_node_map(const node_list& names) noexcept;

// encode_node_map(parse_node_map(text)): PMIx_generate_regex.
result<std::string> generate_node_map(std::string_view text) noexcept;

// Ranks of each node of a proc map in either form. Errors: malformed text,
// a rank above max_rank, a limit exceeded.
result<rank_lists> parse_proc_map(std::string_view text,
                                  const parse_limits& limits = {}) noexcept;

// The same, each node's ranks as runs, never expanded (same errors and
// limits: expand(parse_proc_map_runs(t)) is parse_proc_map(t)).
result<rank_runs> parse_proc_map_runs(std::string_view text,
                                      const parse_limits& limits = {}) noexcept;

// Compact form of ranks per node. Errors: a rank above max_rank.
result<std::string> encode_proc_map(const rank_lists& ranks) noexcept;

// encode_proc_map(parse_proc_map(text)): PMIx_generate_ppn.
result<std::string> generate_proc_map(std::string_view text) noexcept;

// Where each rank of a proc map runs: the first node whose list names it,
// and its place in that list (what a job's data derives for a rank: its
// node id, and its local and node rank).
struct rank_place {
  std::uint32_t node = 0;
  std::uint32_t index = 0;
};
// Kept as the map's runs, which a lookup searches: a job of 100,000 ranks
// in 16 blocks is 16 runs, where a table of every rank was 1.2 MB in each
// process that looked one rank up. Runs that overlap (a cyclic mapping's
// nodes interleave) are split into layers of disjoint runs, one binary
// search each; a map whose runs overlap more than 64 deep (many nodes
// cyclic, or ranks listed out of any order) is kept as that table instead.
class rank_places {
 public:
  rank_places() = default;
  explicit rank_places(const rank_runs& nodes);
  // None when no node lists `rank`.
  std::optional<rank_place> find(std::uint32_t rank) const;
  // Every rank listed, in rank order, with its place (made when asked).
  std::vector<std::pair<std::uint32_t, rank_place>> by_rank() const;
  // Whether the places are kept as runs (else as a table of every rank).
  bool as_runs() const { return table_.empty() && !layers_.empty(); }

 private:
  struct span {
    std::uint32_t low, high;  // the run's least and greatest rank
    rank_run run;
    rank_place start;  // the place of run.first
  };
  static std::optional<std::uint32_t> index_in(const span& s, std::uint32_t rank);
  static std::vector<std::pair<std::uint32_t, rank_place>> table_of(const std::vector<span>& spans);
  std::vector<std::vector<span>> layers_;  // each sorted by low, disjoint
  std::vector<std::pair<std::uint32_t, rank_place>> table_;  // sorted by rank
};
}  // namespace pmix::regex
