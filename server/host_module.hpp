// The host's pmix_server_module_t, wrapped once (style.md #4).
//
// A NULL slot (or no module) means "not supported": the call returns false and
// the actor answers the client PMIX_ERR_NOT_SUPPORTED. Otherwise the up-call
// is made inside a progress::scope (so a blocking PMIx call from it gets
// PMIX_ERR_WOULD_BLOCK), with C copies of its arguments that we own until
// the host's callback has run, and `done` is called exactly once with the
// result: from the host's cbfunc, or at once when the host returned
// PMIX_OPERATION_SUCCEEDED (success) or an error. Data the host returns is
// copied before its release function is called.
#pragma once

#include <pmix_server.h>

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/value.hpp"

namespace pmix::faults {
class plane;
}

namespace pmix::host {

using done_fn = std::function<void(pmix_status_t, std::string)>;

// The library's answer to an attribute-support query (the runtime's library
// hook, pmix_cxx_library_hooks_t::attribute_support): the host's part comes
// from what the host registered with PMIx_Register_attributes.
using attribute_answer_fn = pmix_status_t (*)(const pmix_info_t* qualifiers, size_t nqualifiers,
                                              pmix_info_t** results, size_t* nresults);

// The host's release functions (of the data its callbacks hand us) run
// after the callback has returned, on a thread of ours, as OpenPMIx
// thread-shifts them: Slurm's pmix plugin calls back holding its
// collective's lock, which its release function takes (calling it inside
// the callback hung every fence across nodes). The server runtime gives the
// runner (its loop or server actor; false: not taken) and takes it back at
// finalize; without one, a release runs on a thread of its own.
using release_runner = std::function<bool(std::function<void()>)>;
void set_release_runner(release_runner r);
void release_later(pmix_release_cbfunc_t release, void* data);

class module {
 public:
  // How many slots of pmix_server_module_t the host's struct has
  // (PMIX_CXX_SERVER_MODULE_SLOTS): 4.2.2's, OpenPMIx 5.0's (with
  // session_control at slot 28), ours and OpenPMIx 6.0's.
  static constexpr std::uint32_t kSlotsV4 = 28, kSlotsV5 = 29, kSlotsV6 = 32;  // common/module_copy.hpp

  // `m` may be NULL (no host support at all); its first `nslots` slots are
  // copied (the rest are NULL). `attributes` answers attribute-support
  // queries (none: they go to the host's query up-call like any other).
  explicit module(const pmix_server_module_t* m, attribute_answer_fn attributes = nullptr,
                  std::uint32_t nslots = kSlotsV4);
  module(const module&) = delete;
  module& operator=(const module&) = delete;

  // Spec 000: a module given to a later PMIx_server_init is adopted when
  // none was set before. Returns true when it was adopted.
  bool adopt(const pmix_server_module_t* m, std::uint32_t nslots = kSlotsV4);
  bool has_module() const { return slots_.load(std::memory_order_acquire) != nullptr; }
  // Who frees the data fence_nb hands the host. Spec 000: the library owns
  // it. Open MPI's ORTE and PRRTE free it (OpenPMIx gives it away): for their
  // fence_nb (found by the shared object it lives in: Open MPI's
  // mca_pmix_*.so glue, libprrte) the host gets a malloc'd copy it may free.
  // `given`: PMIX_CXX_HOST_FREES_FENCE_DATA, which overrides the guess. Set
  // before any up-call.
  void set_host_frees_fence_data(std::optional<bool> given);
  bool host_frees_fence_data() const { return host_frees_fence_data_.value_or(guessed_frees_fence_data_); }
  // The fault plane (docs/fault-injection.md), set once before any up-call
  // when a plan is given: each up-call's answer may then be changed.
  void set_faults(std::shared_ptr<faults::plane> p) { faults_ = std::move(p); }

  // client_connected2 if the host has it (answered through its callback);
  // else client_connected, called with a NULL callback as OpenPMIx calls it:
  // its return value is the answer.
  bool client_connected(const proc_id& proc, void* server_object, const info_list& info,
                        done_fn done) const;
  bool client_finalized(const proc_id& proc, void* server_object, done_fn done) const;
  bool abort(const proc_id& proc, void* server_object, int status, const std::string& message,
             const std::vector<proc_id>& procs, done_fn done) const;
  // `done` receives the data the host returns (all nodes' contributions).
  bool fence_nb(const std::vector<proc_id>& procs, const info_list& info, const std::string& data,
                done_fn done) const;
  bool direct_modex(const proc_id& proc, const info_list& info, done_fn done) const;
  // PMIx_Job_control directives the server does not serve itself.
  bool job_control(const proc_id& requestor, const std::vector<proc_id>& targets,
                   const info_list& directives,
                   std::function<void(pmix_status_t, info_list)> done) const;
  // PMIx_Query_info from a client or tool: the host answers with info.
  // Queries for PMIX_QUERY_ATTRIBUTE_SUPPORT are answered for the host from
  // its registrations, without the up-call (the host said it with
  // PMIx_Register_attributes); the rest go to the up-call. False only when
  // something is left for a host that has no query up-call.
  bool query(const proc_id& requestor, const std::vector<pmix::query>& queries,
             std::function<void(pmix_status_t, info_list)> done) const;
  // An event a client notified, for the host to deliver beyond this node.
  bool notify_event(pmix_status_t status, const proc_id& source, pmix_data_range_t range,
                    const info_list& info, done_fn done) const;
  // The host gives a connecting tool its identity.
  bool tool_connected(const info_list& info,
                      std::function<void(pmix_status_t, proc_id)> done) const;

  // PMIx_Publish / _Lookup / _Unpublish of a client: the host keeps the data.
  bool publish(const proc_id& proc, const info_list& info, done_fn done) const;
  bool lookup(const proc_id& proc, const std::vector<std::string>& keys, const info_list& info,
              std::function<void(pmix_status_t, std::vector<pdata>)> done) const;
  bool unpublish(const proc_id& proc, const std::vector<std::string>& keys, const info_list& info,
                 done_fn done) const;
  // PMIx_Spawn: `done` gets the new job's namespace.
  bool spawn(const proc_id& proc, const info_list& job_info, const std::vector<app>& apps,
             std::function<void(pmix_status_t, std::string)> done) const;
  // PMIx_Connect / PMIx_Disconnect, once every local participant has called.
  bool connect(const std::vector<proc_id>& procs, const info_list& info, done_fn done) const;
  bool disconnect(const std::vector<proc_id>& procs, const info_list& info, done_fn done) const;
  // PMIx_Log from a client.
  bool log(const proc_id& proc, const info_list& data, const info_list& directives, done_fn done) const;

  // The requests a client hands to its host through the server (protocol
  // HostRequest): the answer is a status, info, and for a credential its
  // bytes. False when the host has no such up-call.
  using reply_fn = std::function<void(pmix_status_t, info_list, std::string)>;
  // PMIx_Allocation_request.
  bool allocate(const proc_id& client, pmix_alloc_directive_t directive, const info_list& data,
                reply_fn done) const;
  // PMIx_Process_monitor: `monitor` is the one item saying what to watch.
  bool monitor(const proc_id& requestor, const info& monitor, pmix_status_t error, const info_list& directives,
               reply_fn done) const;
  // PMIx_Get_credential / PMIx_Validate_credential.
  bool get_credential(const proc_id& proc, const info_list& directives, reply_fn done) const;
  bool validate_credential(const proc_id& proc, const std::string& credential, const info_list& directives,
                           reply_fn done) const;
  // PMIx_IOF_pull (the host starts forwarding those processes' output to
  // this server) and PMIx_IOF_push (bytes for the targets' stdin; none:
  // the end of input).
  bool iof_pull(const std::vector<proc_id>& procs, const info_list& directives, pmix_iof_channel_t channels,
                done_fn done) const;
  bool push_stdin(const proc_id& source, const std::vector<proc_id>& targets, const info_list& directives,
                  const std::optional<std::string>& bytes, done_fn done) const;
  // PMIx_Fabric_register / _update / _deregister.
  bool fabric(const proc_id& requestor, pmix_fabric_operation_t op, const info_list& directives,
              reply_fn done) const;
  // PMIx_Session_control (OpenPMIx 5.0): the host's info answers.
  bool session_control(const proc_id& requestor, std::uint32_t session, const info_list& directives,
                       reply_fn done) const;
  // PMIx_Resource_block (OpenPMIx 6.0): a status only.
  bool resource_block(const proc_id& requestor, pmix_resource_block_directive_t directive, const std::string& block,
                      const std::vector<pmix_resource_unit_t>& units, const info_list& info, reply_fn done) const;
  // PMIx_Group_* once every local member has called.
  bool group(pmix_group_operation_t op, const std::string& group, const std::vector<proc_id>& procs,
             const info_list& directives, reply_fn done) const;

 private:
  const pmix_server_module_t* slots() const { return slots_.load(std::memory_order_acquire); }
  // The host's query up-call; false when it has none.
  bool ask_host(const proc_id& requestor, const std::vector<pmix::query>& queries,
                std::function<void(pmix_status_t, info_list)> done) const;

  std::atomic<const pmix_server_module_t*> slots_{nullptr};
  std::shared_ptr<faults::plane> faults_;
  attribute_answer_fn attributes_ = nullptr;
  std::unique_ptr<pmix_server_module_t> first_;
  std::unique_ptr<pmix_server_module_t> adopted_;
  std::optional<bool> host_frees_fence_data_;
  bool guessed_frees_fence_data_ = false;
};

}  // namespace pmix::host
