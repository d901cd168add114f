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
#include <vector>

#include "common/value.hpp"

namespace pmix::actors {

struct job_layout {
  std::optional<std::uint32_t> job_size;
  std::vector<std::string> nodes;                 // PMIX_NODE_MAP, in job order
  std::vector<std::vector<rank_t>> node_ranks;    // PMIX_PROC_MAP, per node
  int local_node = -1;                            // index of this host in `nodes`
  std::vector<rank_t> local_ranks;                // sorted
  // The registered PMIX_PROC_DATA arrays of each rank, shared with the
  // registration info (not copied: a 10,000-rank job registers 10,000 of
  // them). Element 0 of each is the rank's PMIX_RANK.
  std::map<rank_t, std::vector<std::shared_ptr<const array_value>>> rank_data;
  info_list job_info;                             // the rest of the job-level info

  // A rank's registered items, in order, without PMIX_RANK (a copy).
  info_list rank_info(rank_t r) const;
  bool is_local(rank_t r) const;
  // Every rank of the job runs on this node (and the job size is known).
  bool all_local() const;
};

// Builds the layout. Errors (PMIX_ERR_BAD_PARAM with `error` set): a map that
// does not parse, node and proc maps of different lengths, a PMIX_PROC_DATA
// entry without a leading PMIX_RANK.
pmix_status_t compute_layout(const info_list& info, int nlocalprocs, const std::string& hostname,
                             job_layout& out, std::string& error);

// The serialized wire::JobInfo a client receives at connect: the registered
// job info plus the keys derived from the layout (PMIX_LOCAL_PEERS,
// PMIX_LOCAL_SIZE, PMIX_LOCALLDR, PMIX_NUM_NODES, PMIX_NODE_LIST, PMIX_JOB_SIZE,
// PMIX_UNIV_SIZE, PMIX_HOSTNAME ...) unless the host gave them, and per rank
// its registered data plus PMIX_HOSTNAME, PMIX_NODEID, PMIX_LOCAL_RANK,
// PMIX_NODE_RANK, PMIX_GLOBAL_RANK.
// The layout is taken by value: its per-rank info is consumed (moved, then
// freed rank by rank as it is serialized), so a large job is not held twice.
std::string serialize_job_info(const std::string& nspace, job_layout layout,
                               const std::string& hostname);

}  // namespace pmix::actors
