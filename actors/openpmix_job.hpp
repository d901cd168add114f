// A job's data in the form a process linked with OpenPMIx reads at its
// PMIX_REQ_CMD (OpenPMIx's "hash" store): made once per namespace and form
// by the namespace actor, and shared by its peers, instead of once per
// process (a job of 8,192 local ranks: 13 ms of the server's CPU at each
// such process's start).
#pragma once

#include <cstddef>
#include <memory>
#include <string>

#include "common/value.hpp"
#include "protocol/openpmix.hpp"
#include "protocol/pmix.pb.h"

namespace pmix::actors {

struct openpmix_job_form {
  std::string payload;  // the answer to PMIX_REQ_CMD (encode_openpmix_job)
  info_list job_level;  // the job's own items, for gets naming a rank (peer_actor.cpp)
  std::size_t skipped = 0;  // values OpenPMIx's format cannot carry, left out
};

// The namespace, the job-level key/values (with a PMIX_NODE_INFO_ARRAY for
// each other node), then each rank's in a byte object of its own
// ("pmix.pblob": the rank, then its key/values). Values the format cannot
// carry are left out (counted in `skipped`).
std::string encode_openpmix_job(const wire::JobInfo& job, openpmix::buffer_type type, std::size_t& skipped);

// The form of a serialized wire::JobInfo, with the ranks it leaves to its
// readers derived (add_derived_ranks); null if it does not parse.
std::shared_ptr<const openpmix_job_form> make_openpmix_job_form(const std::string& job, openpmix::buffer_type type);

}  // namespace pmix::actors
