#include "actors/iof.hpp"

#include <algorithm>

namespace pmix::actors {

bool iof_book::remove(const caf::actor& peer, std::uint64_t ref) {
  auto it = std::find_if(regs_.begin(), regs_.end(),
                         [&](const iof_registration& r) { return r.peer == peer && r.ref == ref; });
  if (it == regs_.end()) return false;
  regs_.erase(it);
  return true;
}

void iof_book::forget(const caf::actor& peer) {
  regs_.erase(std::remove_if(regs_.begin(), regs_.end(), [&](const iof_registration& r) { return r.peer == peer; }),
              regs_.end());
}

std::size_t iof_book::count(const caf::actor& peer) const {
  return static_cast<std::size_t>(
      std::count_if(regs_.begin(), regs_.end(), [&](const iof_registration& r) { return r.peer == peer; }));
}

void iof_book::forget_nspace(const std::string& nspace) {
  for (auto& r : regs_)
    r.procs.erase(std::remove_if(r.procs.begin(), r.procs.end(), [&](const proc_id& p) { return p.nspace == nspace; }),
                  r.procs.end());
  regs_.erase(std::remove_if(regs_.begin(), regs_.end(), [](const iof_registration& r) { return r.procs.empty(); }),
              regs_.end());
}

std::vector<const iof_registration*> iof_book::wanting(const proc_id& source, pmix_iof_channel_t channel) const {
  std::vector<const iof_registration*> out;
  for (const auto& r : regs_) {
    if ((r.channels & channel) == 0) continue;
    const bool named = std::any_of(r.procs.begin(), r.procs.end(), [&](const proc_id& p) {
      return p.nspace == source.nspace && (p.rank == rank_wildcard || p.rank == source.rank);
    });
    if (named) out.push_back(&r);
  }
  return out;
}

}  // namespace pmix::actors
