// The client's side of OpenPMIx's protocol (issue 36: our client library
// under a server of OpenPMIx's): the handshake, each request as a process
// linked with OpenPMIx 4.2.2 writes it, and what the server sends (job data,
// events, output). Plain functions over protocol/openpmix's codec (the one
// our server reads OpenPMIx's processes with): no sockets, no threads.
// docs/wire-format.md, "Our client under OpenPMIx's servers".
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/event.hpp"
#include "common/value.hpp"
#include "protocol/messages.hpp"
#include "protocol/openpmix.hpp"

namespace pmix::client::openpmix_wire {

using openpmix::buffer_type;

// The commands (pmix_cmd_t) this client sends.
enum command_code : std::uint8_t {
  req = 0, abort_cmd = 1, commit_cmd = 2, fence_cmd = 3, get_cmd = 4, finalize_cmd = 5, publish_cmd = 6,
  lookup_cmd = 7, unpublish_cmd = 8, spawn_cmd = 9, connect_cmd = 10, disconnect_cmd = 11, notify_cmd = 12,
  regevents_cmd = 13, deregevents_cmd = 14, query_cmd = 15, log_cmd = 16, alloc_cmd = 17, job_control_cmd = 18,
  monitor_cmd = 19, get_credential_cmd = 20, validate_credential_cmd = 21, iof_pull_cmd = 22, iof_push_cmd = 23,
  group_construct_cmd = 24, group_destruct_cmd = 28, iof_deregister_cmd = 29, fabric_register_cmd = 30,
  fabric_update_cmd = 31,
};

// What this library announces itself as: the release whose protocol it
// speaks (a server branches on it: older than 4.2 gets other forms).
inline constexpr const char* announced_version = "4.2.2";

// The handshake's body. `security`: the first of PMIX_SECURITY_MODE's
// modules this library has ("native": the credential is this process's uid
// and gid; "none"). A client names itself; a tool (`tool`) gives its user,
// its group and, unless it needs one assigned (`proposed` with an empty
// namespace), its identity, then its directives.
std::string handshake(const std::string& security, buffer_type type, bool tool, const proc_id& proposed,
                      const info_list& tool_info);
// The security module to announce, from PMIX_SECURITY_MODE's list (null:
// native).
std::string security_module(const char* modes);
// The buffer type PMIX_BFROP_BUFFER_TYPE names (null: NON_DESC).
buffer_type buffer_from_env(const char* name);
// "<nspace>.<rank>;..." -> the server's identity; false if it names none.
bool server_of(const std::string& uri, proc_id& out);
// The major number of a version string ("4.2.2rc2" -> 4; "v5.0.3" -> 5); 0
// if none.
std::uint32_t major_of(const std::string& version);

std::string command(buffer_type t, std::uint8_t cmd);
std::string abort(buffer_type t, int status, const std::string& message, const std::vector<proc_id>& procs);
// The commit of `data`: one buffer for PMIX_LOCAL (the LOCAL and GLOBAL
// puts), one for PMIX_REMOTE (the REMOTE and GLOBAL ones). False if a
// value has no form in OpenPMIx's format (`error` names its key).
bool commit(buffer_type t, const std::vector<protocol::scoped_info>& data, std::string& out, std::string& error);
std::string fence(buffer_type t, const std::vector<proc_id>& procs, const info_list& info);
std::string get(buffer_type t, const proc_id& p, const info_list& info, const std::string& key);
std::string job_control(buffer_type t, const std::vector<proc_id>& targets, const info_list& directives);
std::string query(buffer_type t, const std::vector<pmix::query>& queries);
std::string notify(buffer_type t, const event& ev);
std::string publish(buffer_type t, const info_list& info);
// A lookup (lookup_cmd) or unpublish (unpublish_cmd) of `keys`.
std::string keys(buffer_type t, std::uint8_t cmd, const std::vector<std::string>& keys, const info_list& info);
std::string spawn(buffer_type t, const info_list& job_info, const std::vector<app>& apps);
std::string connect(buffer_type t, bool disconnect, const std::vector<proc_id>& procs, const info_list& info);
std::string log(buffer_type t, const info_list& data, const info_list& directives);
std::string register_events(buffer_type t, const std::vector<pmix_status_t>& codes);

// A namespace's job data as an OpenPMIx server gives it (its "hash" store's
// form: key/values to the end of `r`; each rank's in a "pmix.pblob" byte
// object; the session's, each node's and each application's in arrays),
// into our form: the session's keys, this node's and this process's
// application's keys become job-level keys (the node is `host`, else the one
// `self`'s data names; `self` may be of another namespace). False on
// malformed data (`error` says why).
bool read_job(openpmix::reader& r, const std::string& nspace, const proc_id& self, const std::string& host,
              protocol::job_info& out, std::string& error);
// An event (tag 0): the command, the code, the source, the info, and (not
// in cached events) the range.
bool read_event(std::string_view payload, buffer_type t, event& out, std::string& error);
// Output (tag 2): the source, the channel, the pull's reference, the
// directives, the bytes.
bool read_output(std::string_view payload, buffer_type t, protocol::iof_data& out, std::string& error);
// A get's answer after its status: byte objects to the end, each a process
// (a rank; the wildcard for its job's data; PMIX_RANK_UNDEF, this process's
// own rank `self`) and its key/values.
bool read_data(openpmix::reader& r, rank_t self, std::vector<std::pair<proc_id, info_list>>& out, std::string& error);
// `[SIZE n][INFO x n]` after a reply's status, absent at the end.
bool read_results(openpmix::reader& r, info_list& out);

}  // namespace pmix::client::openpmix_wire
