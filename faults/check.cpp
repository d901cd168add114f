#include "faults/check.hpp"

namespace pmix::faults {
namespace {

void check_ledger(const observed& o, std::vector<std::string>& out) {
  if (!o.ledger) return;
  for (const auto& v : o.ledger->violations) out.push_back("answers: " + v);
  if (o.ledger->pending > 0)
    out.push_back("answers: " + std::to_string(o.ledger->pending) +
                  " requests of open connections never answered");
}

}  // namespace

std::size_t accounted_actors(const actors::server_snapshot& s) {
  std::size_t n = 1;  // the server actor
  for (const auto& ns : s.nspaces) {
    n += 1;
    for (const auto& r : ns.ranks) n += (r.actor ? 1 : 0) + static_cast<std::size_t>(r.peers);
  }
  return n;
}

std::vector<std::string> check_job_ended(const observed& o, const std::string& nspace) {
  std::vector<std::string> out;
  const auto& s = o.snapshot;
  const actors::server_snapshot::nspace_view* ns = nullptr;
  for (const auto& n : s.nspaces)
    if (n.name == nspace) ns = &n;
  if (ns == nullptr) {
    out.push_back(nspace + ": not known to the server before its deregistration");
  } else {
    const std::string where = nspace + ": ";
    if (ns->nfinalized < 0 || ns->nfinalized > ns->nlocalprocs)
      out.push_back(where + "nfinalized " + std::to_string(ns->nfinalized) + " outside 0.." +
                    std::to_string(ns->nlocalprocs));
    if (ns->local_app_fini_runs > 1)
      out.push_back(where + "\"all local processes finalized\" fired " +
                    std::to_string(ns->local_app_fini_runs) + " times");
    for (const auto& r : ns->ranks) {
      const std::string rank = where + "rank " + std::to_string(r.rank) + ": ";
      if (r.proc_cnt != 0)
        out.push_back(rank + "proc_cnt " + std::to_string(r.proc_cnt) + " after its processes ended");
      if (r.peers > 1) out.push_back(rank + std::to_string(r.peers) + " peer actors kept (at most one)");
      if (r.tombstones > 1) out.push_back(rank + std::to_string(r.tombstones) + " tombstones (at most one)");
      if (r.peers > 0 && !r.has_peerid) out.push_back(rank + "peers kept without a peerid");
    }
  }
  if (s.pending_upcalls != 0)
    out.push_back(std::to_string(s.pending_upcalls) + " host up-calls still awaited");
  const auto accounted = accounted_actors(s);
  if (o.actors_running != accounted)
    out.push_back(std::to_string(o.actors_running) + " actors running, " + std::to_string(accounted) +
                  " accounted for (orphaned or lost actors)");
  check_ledger(o, out);
  return out;
}

std::vector<std::string> check_all_deregistered(const observed& o) {
  std::vector<std::string> out;
  const auto& s = o.snapshot;
  for (const auto& ns : s.nspaces) out.push_back(ns.name + ": still known after deregistration");
  if (o.connections != 0) out.push_back(std::to_string(o.connections) + " connections open");
  if (s.fences_in_flight != 0) out.push_back(std::to_string(s.fences_in_flight) + " fences in flight");
  if (s.pending_upcalls != 0) out.push_back(std::to_string(s.pending_upcalls) + " host up-calls still awaited");
  if (s.departed != 0) out.push_back(std::to_string(s.departed) + " departed ranks remembered");
  if (o.actors_running != 1)
    out.push_back(std::to_string(o.actors_running) + " actors running (only the server actor should be)");
  check_ledger(o, out);
  return out;
}

}  // namespace pmix::faults
