// Who pulled whose output (PMIx_IOF_pull): plain state the server actor
// keeps. Output the host hands over (PMIx_server_IOF_deliver) goes to each
// registration that wants its source and channel.
#pragma once

#include <caf/actor.hpp>
#include <pmix_common.h>

#include <cstdint>
#include <string>
#include <vector>

#include "common/value.hpp"

namespace pmix::actors {

struct iof_registration {
  caf::actor peer;    // the puller's peer actor
  std::uint64_t ref = 0;  // its handler, named in every IofData
  std::vector<proc_id> procs;  // a rank, or every rank of a namespace (rank_wildcard)
  pmix_iof_channel_t channels = 0;
};

class iof_book {
 public:
  void add(iof_registration r) { regs_.push_back(std::move(r)); }
  // False when `peer` has no registration `ref`.
  bool remove(const caf::actor& peer, std::uint64_t ref);
  // Every registration of `peer` (it went away).
  void forget(const caf::actor& peer);
  // The sources of namespace `nspace` (deregistered, spec 004: every
  // I/O-forwarding registration naming it is pruned); a registration left
  // with no source goes.
  void forget_nspace(const std::string& nspace);
  // The registrations that want `channel` of `source`.
  std::vector<const iof_registration*> wanting(const proc_id& source, pmix_iof_channel_t channel) const;
  std::size_t size() const { return regs_.size(); }
  // The registrations `peer` holds.
  std::size_t count(const caf::actor& peer) const;

 private:
  std::vector<iof_registration> regs_;
};

}  // namespace pmix::actors
