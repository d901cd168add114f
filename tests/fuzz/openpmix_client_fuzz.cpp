// Fuzz target: what a server of OpenPMIx's sends our client, as the client
// reads it (issue 36: client/openpmix_wire.hpp), into the client's store.
//
// Input: [a byte: bit 0 the buffer type (FULLY_DESC when set), bits 1-3
// what it is] then the payload: 0 the job data (PMIX_REQ_CMD's answer: a
// namespace, then key/values), 1 an event (tag 0), 2 output (tag 2), 3 a
// get's answer (a status, then each process's data), 4 an answer with
// results (a status, then infos, or published data). The seeds are answers
// captured from OpenPMIx 4.2.2's servers (mpirun, Slurm, a host of its own).
//
// Invariants: false and an error, never a read past the end (ASan) nor an
// allocation out of proportion to the input (the codec's counts are bounded
// by the bytes left; the store's local-peer list by its text); what reads
// goes into a store, whose lookups then answer.
#include <pmix_common.h>

#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "client/openpmix_wire.hpp"
#include "client/store.hpp"
#include "tests/fuzz/fuzz_support.hpp"

using namespace pmix;
namespace wire = pmix::client::openpmix_wire;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 1) return 0;
  const auto type = (data[0] & 1) != 0 ? openpmix::buffer_type::fully_desc : openpmix::buffer_type::non_desc;
  const int what = (data[0] >> 1) & 7;
  const std::string bytes(reinterpret_cast<const char*>(data) + 1, size - 1);
  openpmix::reader r{bytes, type};
  client::store store;
  const proc_id self{"job", 0};
  std::string error;
  switch (what) {
    case 0: {
      std::string nspace;
      protocol::job_info job;
      if (!r.string(nspace) || !wire::read_job(r, nspace, proc_id{nspace, 0}, "node0", job, error)) {
        if (error.empty() && r.error().empty()) std::abort();  // a failure always says why
        return 0;
      }
      const auto ranks = job.ranks.size();
      store.load_job(std::move(job));
      if (ranks > 0 && !store.has_job(nspace)) std::abort();
      (void)store.job_value(nspace, PMIX_JOB_SIZE);
      (void)store.rank_value(proc_id{nspace, 0}, PMIX_HOSTNAME);
      (void)store.local_ranks(nspace);
      (void)store.nodes_of(nspace);
      return 0;
    }
    case 1: {
      event ev;
      if (!wire::read_event(bytes, type, ev, error) && error.empty()) std::abort();
      return 0;
    }
    case 2: {
      protocol::iof_data out;
      if (!wire::read_output(bytes, type, out, error) && error.empty()) std::abort();
      return 0;
    }
    case 3: {
      std::int32_t status = 0;
      std::vector<std::pair<proc_id, info_list>> found;
      if (!r.status(status) || !wire::read_data(r, self.rank, found, error)) return 0;
      for (auto& [p, items] : found) {
        if (p.rank == rank_undef) std::abort();  // named this process
        const proc_id who = p;
        if (who.rank == rank_wildcard) store.merge_job(who.nspace, std::move(items));
        else store.add_peer_values(who, std::move(items));
        if (who.rank != rank_wildcard && !store.has_complete_data(who)) std::abort();
        (void)store.peer_value(who, "key");
      }
      return 0;
    }
    default: {
      std::int32_t status = 0;
      info_list results;
      if (!r.status(status)) return 0;
      openpmix::reader copy = r;
      (void)wire::read_results(r, results);
      std::uint64_t n = 0;
      std::vector<pdata> published;
      if (copy.size(n) && n > 0) (void)copy.pdata(published);
      return 0;
    }
  }
}
