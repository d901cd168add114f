// hwloc for the server: binding its threads (PMIX_BIND_PROGRESS_THREAD) and
// exporting the node topology to clients (PMIX_SERVER_SHARE_TOPOLOGY).
#pragma once

#include <pmix_common.h>

#include <atomic>
#include <memory>
#include <string>

namespace pmix::server {

// A CPU set the server's threads bind to. Thread-safe after creation.
class thread_binding {
 public:
  // `cpus` is a CPU list ("0-1,4"). PMIX_ERR_BAD_PARAM (and `error`) when
  // none of those CPUs is available here, or the list is malformed.
  static pmix_status_t create(const std::string& cpus, std::shared_ptr<thread_binding>& out,
                              std::string& error);
  ~thread_binding();
  thread_binding(const thread_binding&) = delete;
  thread_binding& operator=(const thread_binding&) = delete;

  // Binds the calling thread; false (and counted) when the OS refuses.
  bool bind_this_thread();
  int failures() const { return failures_.load(); }
  // The CPUs asked for that this node does not have (empty if none).
  const std::string& missing() const { return missing_; }

 private:
  thread_binding() = default;
  void* topology_ = nullptr;  // hwloc_topology_t
  void* cpuset_ = nullptr;    // hwloc_bitmap_t
  std::string missing_;
  std::atomic<int> failures_{0};
};

// The node topology as hwloc XML (version 2): from the host's
// PMIX_TOPOLOGY2 if given, else discovered here with its important I/O
// devices (for PMIx_Compute_distances in clients). PMIX_ERR_INIT on failure.
pmix_status_t topology_xml(const pmix_topology_t* given, std::string& xml, std::string& error);

}  // namespace pmix::server
