// Where a job's processes run, derived once at PMIx_server_register_nspace
// from the host's job info: PMIX_NODE_MAP / PMIX_PROC_MAP (in the forms
// PMIx_generate_regex / PMIx_generate_ppn produce, or plain lists),
// PMIX_LOCAL_PEERS, PMIX_JOB_SIZE, and the per-rank PMIX_PROC_DATA arrays.
//
// Plain state: no actors, testable on its own (tests/actors/job_layout_test).
#pragma once

#include <pmix_common.h>

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/regex/regex.hpp"
#include "common/value.hpp"
#include "protocol/pmix.pb.h"

namespace pmix::actors {

// One PMIX_PROC_DATA entry of a rank, already in wire form: `length` bytes
// at `offset` of job_layout::rank_bytes (or encoded_registration::rank_bytes)
// are wire::RankInfo `info` fields, one per registered item but the leading
// PMIX_RANK. `given` marks which per-rank keys the host gave itself
// (derived_bit), so the blob does not add them again.
struct rank_slice {
  rank_t rank = 0;
  std::uint32_t offset = 0;
  std::uint32_t length = 0;
  std::uint8_t given = 0;
};

// The bit of rank_slice::given for a key the library derives per rank
// (PMIX_HOSTNAME, PMIX_NODEID, PMIX_LOCAL_RANK, PMIX_NODE_RANK,
// PMIX_GLOBAL_RANK, PMIX_APPNUM), 0 for any other key.
std::uint8_t derived_bit(std::string_view key);

// Sorts `ranks` and removes duplicates, in linear time when they are dense.
void sort_unique(std::vector<rank_t>& ranks);

// A registration as PMIx_server_register_nspace hands it to the server
// actor: the job-level info as values, for the layout; and, when the facade could
// write them straight from the host's C arrays, the PMIX_PROC_DATA entries
// already encoded (`rank_bytes`, `ranks`). A PMIX_PROC_DATA entry left in
// `job` is encoded by compute_layout instead (same bytes).
struct encoded_registration {
  encoded_registration() = default;
  // From values (tests, the singleton's namespace): everything in `job`.
  encoded_registration(info_list list);  // NOLINT: implicit on purpose
  info_list job;
  std::string rank_bytes;
  std::vector<rank_slice> ranks;
};

struct job_layout {
  std::optional<std::uint32_t> job_size;
  std::vector<std::string> nodes;                 // PMIX_NODE_MAP, in job order
  regex::rank_runs node_ranks;                    // PMIX_PROC_MAP, per node, as runs
  int local_node = -1;                            // index of this host in `nodes`
  std::vector<rank_t> local_ranks;                // sorted
  // The registered PMIX_PROC_DATA entries, in wire form (rank_slice):
  // 10,000 ranks take one string and one vector, not 60,000 values.
  std::string rank_bytes;
  std::vector<rank_slice> rank_data;              // sorted by rank, stable
  info_list job_info;                             // the rest of the job-level info

  // A rank's registered items, in order, without PMIX_RANK (decoded).
  info_list rank_info(rank_t r) const;
  // How many ranks have registered items.
  std::size_t ranks_with_data() const;
  bool is_local(rank_t r) const;
  // Every rank of the job runs on this node (and the job size is known).
  bool all_local() const;
};

// Builds the layout. Errors (PMIX_ERR_BAD_PARAM with `error` set): a map that
// does not parse, node and proc maps of different lengths, a PMIX_PROC_DATA
// entry without a leading PMIX_RANK.
pmix_status_t compute_layout(const info_list& info, int nlocalprocs, const std::string& hostname,
                             job_layout& out, std::string& error);
// The same from a registration: its job info as above, plus its encoded
// PMIX_PROC_DATA entries (moved into the layout).
pmix_status_t compute_layout(encoded_registration& reg, int nlocalprocs, const std::string& hostname,
                             job_layout& out, std::string& error);

// The serialized wire::JobInfo a client receives at connect: the registered
// job info plus the keys derived from the layout (PMIX_LOCAL_PEERS,
// PMIX_LOCAL_SIZE, PMIX_LOCALLDR, PMIX_NUM_NODES, PMIX_NODE_LIST, PMIX_JOB_SIZE,
// PMIX_UNIV_SIZE, PMIX_HOSTNAME ...) unless the host gave them, and per rank
// its registered data plus PMIX_HOSTNAME, PMIX_NODEID, PMIX_LOCAL_RANK,
// PMIX_NODE_RANK, PMIX_GLOBAL_RANK. A rank of the proc map that runs on
// another node and has nothing registered of its own gets no RankInfo: its
// readers derive its items from the maps (protocol::derived_rank_items,
// add_derived_ranks).
// The layout is taken by value: its per-rank info is consumed (moved, then
// freed rank by rank as it is serialized), so a large job is not held twice.
std::string serialize_job_info(const std::string& nspace, job_layout layout,
                               const std::string& hostname);

// Adds to `job` a RankInfo, with the items derived from its node and proc
// maps, for each rank of the proc map it holds none for (what
// serialize_job_info left to its readers), and sorts its ranks by rank: the
// job data whole, for readers that take every rank's (processes linked with
// OpenPMIx, PMIx_server_collect_job_info).
void add_derived_ranks(wire::JobInfo& job);

// A PMIX_NODE_INFO_ARRAY for each node of the job's node and proc maps
// other than the reader's own (the job's PMIX_HOSTNAME) and those the host
// described with an array of its own: the node's PMIX_HOSTNAME, PMIX_NODEID
// (its index in the node map), PMIX_LOCAL_PEERS, PMIX_LOCALLDR and
// PMIX_LOCAL_SIZE. A process linked with OpenPMIx looks a remote rank's
// node-level keys up in such an array, found by the rank's host name; its
// own server sends one per node.
info_list node_info_arrays(const wire::JobInfo& job);

}  // namespace pmix::actors
