// script_client's steps for a tool connected to several servers
// (tests/e2e/tool_steps.cpp, tests/e2e/tool_servers_test.cpp). A server is
// written <nspace>:<rank>; a URI, which holds ':', is named by the
// environment variable that holds it.
#pragma once

#include <pmix_common.h>

#include <string>
#include <vector>

#include "tests/e2e/request_steps.hpp"

namespace pmix::test {

// Runs `step` if it is one of these; false if it is not.
//   tool_attach:<how>[:primary|:secondary]  PMIx_tool_attach_to_server, the server
//                                 found by <how>: uri_env=<VAR> (PMIX_SERVER_URI from $VAR),
//                                 nspace=<n> (PMIX_SERVER_NSPACE), pid=<p> (PMIX_SERVER_PIDINFO),
//                                 system (PMIX_CONNECT_TO_SYSTEM), search (PMIX_CONNECT_MAX_RETRIES
//                                 0: the default search) or none (no info); primary /
//                                 secondary: PMIX_PRIMARY_SERVER true / false. Prints
//                                 "<tool nspace>.<rank> <server nspace>.<rank>"
//   tool_connect:<how>            PMIx_tool_connect_to_server (the deprecated form);
//                                 prints the tool's identity
//   tool_servers                  PMIx_tool_get_servers; prints them, ','-joined
//   tool_set_server:<ns>:<rank>[:wait=<s>]  PMIx_tool_set_server (with
//                                 PMIX_WAIT_FOR_CONNECTION and PMIX_TIMEOUT <s>)
//   tool_disconnect:<ns>:<rank> | tool_disconnect:null  PMIx_tool_disconnect
//   tool_attach_later:<ms>:<how>  another thread attaches <ms> from now (not primary)
//   tool_join                     waits for that thread; prints its attach's status
//   on_event:<code>               registers a handler for that status code
//   wait_event:<code>             waits (up to 120 s) until the handler saw it;
//                                 prints the event's source
//   tool_attach_cycles:<how>:<n>  n attaches (not primary) each followed by a
//                                 disconnect; prints ok/failed counts, RSS growth (kB)
//                                 from cycle n/10 to n, and the open descriptors
//                                 before the first cycle, at n/10 and at the end
bool run_tool_step(const std::string& step, const std::vector<std::string>& parts, const say_fn& say);

}  // namespace pmix::test
