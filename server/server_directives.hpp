// PMIx_server_init's directives (spec 000, 20.2.247.4) read into settings:
// pure code, with the environment passed in, so every rule is testable
// without starting a server (tests/api/server_directives_test.cpp).
#pragma once

#include <pmix_common.h>

#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "common/value.hpp"

// Our server-init attributes for the fault plane (docs/fault-injection.md):
// the plan (a string) and its seed (an unsigned number).
#define PMIX_CXX_FAULTS_ATTR "pmix.cxx.faults"
#define PMIX_CXX_FAULTS_SEED_ATTR "pmix.cxx.faults.seed"

namespace pmix::server {

struct settings {
  // Identity and directories (20.2.247.4.1).
  proc_id server;
  std::string hostname;
  std::string tmpdir;         // PMIX_SERVER_TMPDIR
  std::string system_tmpdir;  // PMIX_SYSTEM_TMPDIR

  // Roles (20.2.247.4.2). system_support and session_support are already
  // false unless tool_support is set: they take effect only with it.
  bool tool_support = false;
  bool system_support = false;
  bool session_support = false;
  bool gateway = false;
  bool scheduler = false;
  bool sys_controller = false;
  bool remote_connections = false;
  bool foreign_tools = false;
  bool allow_clones = false;

  // Connection (20.2.247.4.3).
  std::string launcher_rendezvous;  // PMIX_LAUNCHER_RENDEZVOUS_FILE
  std::string report_uri;           // PMIX_TCP_REPORT_URI
  std::vector<std::string> if_include, if_exclude;
  std::string ipv4_ports = "0", ipv6_ports = "0";
  bool disable_ipv4 = false, disable_ipv6 = false;
  bool tcp_requested = false;  // a TCP directive was given: listen on TCP

  // Topology and behaviour (20.2.247.4.4).
  const pmix_topology_t* topology = nullptr;  // PMIX_TOPOLOGY2 (source "hwloc")
  bool share_topology = false;
  bool homogeneous = false;
  bool iof_local_output = false;
  std::optional<proc_id> singleton;
  std::string bind_cpus;  // PMIX_BIND_PROGRESS_THREAD, a CPU list such as "0-1,4"
  bool bind_required = false;
  bool aux_event_base = false;  // given: we need no auxiliary event base
  bool external_progress = false;  // PMIX_EXTERNAL_PROGRESS: no threads of ours
  // PMIX_CXX_PROGRESS_FD: no threads of ours either; the host's loop runs
  // the server's when this descriptor (stored here at init) is readable.
  int* progress_fd = nullptr;

  // The fault plane (docs/fault-injection.md): a plan and its seed, from
  // PMIX_CXX_FAULTS_ATTR / PMIX_CXX_FAULTS_SEED_ATTR or the environment
  // (PMIX_CXX_FAULTS, PMIX_CXX_FAULTS_SEED). Empty: no plane.
  std::string faults;
  std::uint64_t faults_seed = 0;
  // How far the host's pmix_server_module_t goes (PMIX_CXX_SERVER_MODULE_SLOTS).
  std::uint32_t module_slots = 28;
  // PMIX_CXX_HOST_FREES_FENCE_DATA; unset: guessed from the host (host_module.hpp).
  std::optional<bool> host_frees_fence_data;

  // Ours (environment): the actor scheduler and its worker threads.
  std::string scheduler_policy = "sharing";
  std::size_t threads = 2;
  // PMIX_CXX_SERVER_SPIN_US: how long the loop thread polls before it sleeps.
  std::chrono::microseconds loop_spin{50};

  // Bounds on what one peer can make the server hold (docs/security.md),
  // each from its environment variable: PMIX_CXX_MAX_FRAME,
  // PMIX_CXX_MAX_HANDSHAKE_FRAME, PMIX_CXX_MAX_SEND_BACKLOG (bytes),
  // PMIX_CXX_MAX_UNAUTHENTICATED (connections), PMIX_CXX_HANDSHAKE_TIMEOUT_MS.
  std::uint32_t max_frame = 64u << 20;
  std::uint32_t max_handshake_frame = 1u << 20;
  std::size_t max_send_backlog = 64u << 20;
  std::size_t max_unauthenticated = 128;
  std::uint32_t handshake_timeout_ms = 10000;
  // PMIX_CXX_HANDSHAKE_GRACE_MS: how long a connection may stay silent
  // before a newer one may take its place in a full handshake queue.
  std::uint32_t handshake_grace_ms = 200;
  // PMIX_CXX_MAX_CREDENTIAL_LIFETIME_S: the longest a credential the server
  // issues itself stays valid, whatever PMIX_TIMEOUT asks (seconds).
  std::uint32_t max_credential_lifetime_s = 86400;
  // What one process, and the processes of one job together, may make the
  // server hold (docs/security.md, "Limits"): committed data
  // (PMIX_CXX_MAX_COMMIT, _JOB), requests waiting for an answer and their
  // bytes (PMIX_CXX_MAX_REQUESTS, _JOB; PMIX_CXX_MAX_REQUEST_BYTES, _JOB),
  // output not read (PMIX_CXX_MAX_SEND_BACKLOG above, _JOB).
  std::size_t max_commit = 64u << 20;
  std::size_t max_commit_job = std::size_t{1} << 30;
  std::size_t max_requests = 16384;
  std::size_t max_requests_job = 262144;
  std::size_t max_request_bytes = 16u << 20;
  std::size_t max_request_bytes_job = 256u << 20;
  std::size_t max_send_backlog_job = 256u << 20;
};

using env_fn = std::function<const char*(const char* name)>;

// Reads `directives` (converted from pmix_info_t) and the environment into
// `out`. `topology` is PMIX_TOPOLOGY2's pointer, taken from the C array by
// the facade (a topology cannot be copied into a C++ value). Returns:
// - PMIX_ERR_BAD_PARAM for a value we cannot use (a rank that is not a
//   simple non-negative number, a PMIX_SINGLETON not of the form
//   "nspace.rank", both PMIX_TCP_IF_INCLUDE and _EXCLUDE, a malformed port
//   list or CPU list, a value of the wrong type);
// - PMIX_ERR_NOT_SUPPORTED for behaviour we do not provide (monitoring, a
//   non-hwloc topology, any unknown directive marked PMIX_INFO_REQD);
// - PMIX_ERR_INIT when remote connections are asked for with both IPv4 and
//   IPv6 disabled (a required transport explicitly disabled).
// `error` says which directive and why.
// PMIX_CXX_SERVER_MODULE_SLOTS's value: 28, 29 or 32 (else false and why).
bool module_slots(const info& d, std::uint32_t& out, std::string& error);

pmix_status_t read_settings(const info_list& directives, const pmix_topology_t* topology,
                            const env_fn& getenv, const std::string& hostname, pid_t pid,
                            settings& out, std::string& error);

// The temporary directory the environment names (the spec's fallbacks):
// PMIX_SERVER_TMPDIR (or PMIX_SYSTEM_TMPDIR when `system`), TMPDIR, TEMP,
// TMP, then /tmp. Servers and tools both use it.
std::string tmpdir_from_env(const env_fn& getenv, bool system);

// "0-3,8" style CPU list syntax check (the CPUs themselves are checked when
// binding).
bool valid_cpu_list(const std::string& text);

}  // namespace pmix::server
