#include "actors/openpmix_job.hpp"

#include "actors/job_layout.hpp"
#include "protocol/codec.hpp"

namespace pmix::actors {

std::string encode_openpmix_job(const wire::JobInfo& job, openpmix::buffer_type type, std::size_t& skipped) {
  openpmix::writer w{type};
  w.string(job.nspace());
  std::string error;
  for (const auto& wi : job.info()) {
    pmix::info i;
    if (!protocol::from_wire(wi, i, &error) || !w.try_kval(i.key, i.val)) ++skipped;
  }
  // The other nodes' arrays, where it looks a remote rank's node-level keys
  // up (PMIX_LOCAL_SIZE, PMIX_LOCAL_PEERS, PMIX_LOCALLDR), as OpenPMIx's
  // server sends them.
  for (const auto& i : node_info_arrays(job))
    if (!w.try_kval(i.key, i.val)) ++skipped;
  for (const auto& r : job.ranks()) {
    openpmix::writer blob{type};
    blob.rank(r.rank());
    for (const auto& wi : r.info()) {
      pmix::info i;
      if (!protocol::from_wire(wi, i, &error) || !blob.try_kval(i.key, i.val)) ++skipped;
    }
    w.kval("pmix.pblob", value::bytes(PMIX_BYTE_OBJECT, blob.take()));
  }
  return w.take();
}

std::shared_ptr<const openpmix_job_form> make_openpmix_job_form(const std::string& bytes, openpmix::buffer_type type) {
  wire::JobInfo job;
  if (!job.ParseFromString(bytes)) return nullptr;
  add_derived_ranks(job);
  auto form = std::make_shared<openpmix_job_form>();
  std::string error;
  for (const auto& wi : job.info()) {
    pmix::info i;
    if (protocol::from_wire(wi, i, &error)) form->job_level.push_back(std::move(i));
  }
  form->payload = encode_openpmix_job(job, type, form->skipped);
  return form;
}

}  // namespace pmix::actors
