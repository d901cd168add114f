// The CAF configuration that the daemon and the launcher share, and how
// often they beat to each other (liveness.hpp).
#pragma once

#include <chrono>
#include <string>

#include <caf/actor_system_config.hpp>

namespace pmixd {

// Every daemon beats to its peers and to its sessions' launchers, and the
// launcher to its daemons, this often; a peer silent for peer_timeout() is
// lost.
constexpr std::chrono::seconds beat_interval{1};

// PMIX_CXX_DAEMON_PEER_TIMEOUT_S: how long a daemon or launcher may be
// silent before its peers lose it, 2 to 3600 s, 10 by default. Read once at
// start (daemon and launcher alike); false, with `error`, for another value.
bool configure_peer_timeout(std::string& error);
std::chrono::seconds peer_timeout();

// The number in environment variable `name`, from `low` to `high`, into
// `out` (left as it is when the variable is unset or empty); false, with
// `error`, for anything else.
bool number_from_env(const char* name, unsigned long long low, unsigned long long high, unsigned long long& out,
                     std::string& error);

// The sharing scheduler with 2 threads (no idle spinning in a daemon:
// caf-0.17 notes), no BASP worker, the middleman loaded and our message
// types added. The middleman's own heartbeat and connection timeout are
// off: liveness.hpp says why and what replaces them.
// The daemon adds its session key (use_credentials), the launcher too
// once it has it.
void configure(caf::actor_system_config& cfg);

}  // namespace pmixd
