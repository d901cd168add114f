// A recording host for end-to-end tests: a pmix_server_module_t whose
// up-calls record what the server asked, plus helpers to start the server,
// register a job and launch clients the way a resource manager does.
#pragma once

#include <pmix_server.h>

#include <atomic>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "api/server_runtime_abi.h"
#include "tests/support/process.hpp"

namespace pmix::test {

struct host_record {
  std::mutex mutex;
  std::atomic<int> connected{0};
  std::atomic<int> finalized{0};
  std::atomic<int> aborts{0};
  int abort_status = 0;
  std::string abort_message;
  pmix_proc_t abort_proc{};
  std::atomic<int> fence_calls{0};
  std::size_t fence_nprocs = 0;
  std::size_t fence_ndata = 0;
  std::string fence_reply_extra;  // appended to our data, as other nodes' data
  std::atomic<int> dmodex_calls{0};
  pmix_proc_t dmodex_proc{};
  pmix_status_t dmodex_status = PMIX_SUCCESS;
  std::string dmodex_reply;
  // Set to make client_connected try a blocking call and record its status.
  std::atomic<bool> block_in_upcall{false};
  std::atomic<int> blocking_call_status{0};

  void reset();
};

host_record& record();

// Which up-calls the module provides.
struct host_slots {
  bool connected = true, finalized = true, abort = true, fence = true, dmodex = true;
};
pmix_server_module_t make_module(host_slots slots = {});

// The server runtime's table (introspection); valid after PMIx_server_init.
const pmix_cxx_server_runtime_t* runtime_table();

// A server for the duration of a test case.
class server {
 public:
  explicit server(const std::string& tmpdir, host_slots slots = {},
                  std::vector<pmix_info_t> extra_directives = {});
  ~server();
  pmix_status_t status() const { return status_; }
  // Snapshot of the server's actors and counters.
  pmix_cxx_server_view_t view() const;

 private:
  pmix_server_module_t module_;
  pmix_status_t status_;
};

std::string this_host();

// Registers `nspace` with `size` ranks of which `local` (the first ranks) run
// here; the rest run on "othernode". Registers the local clients too.
pmix_status_t register_job(const std::string& nspace, std::uint32_t size, std::uint32_t local);

// Launches rank r of nspace running argv, with the environment setup_fork gives.
child launch(const std::string& nspace, pmix_rank_t r, const std::vector<std::string>& argv,
             const std::string& capture_dir);

// Blocking deregistration of a whole namespace.
pmix_status_t deregister_job(const std::string& nspace);

// A serialized wire::RankData holding string values, as another node's
// server would produce for one of its ranks.
std::string remote_rank_data(const std::string& nspace, pmix_rank_t rank,
                             const std::vector<std::pair<std::string, std::string>>& values);
// The same wrapped as a one-entry wire::ModexData (what a fence returns).
std::string remote_modex(const std::string& nspace, pmix_rank_t rank,
                         const std::vector<std::pair<std::string, std::string>>& values);

}  // namespace pmix::test
