// The CAF configuration that the daemon and the launcher share, and how
// often they beat to each other (liveness.hpp).
#pragma once

#include <chrono>

#include <caf/actor_system_config.hpp>

namespace pmixd {

// Every daemon beats to its peers and to its sessions' launchers, and the
// launcher to its daemons, this often; a peer silent for `peer_timeout` is
// lost.
constexpr std::chrono::seconds beat_interval{1};
constexpr std::chrono::seconds peer_timeout{10};

// The sharing scheduler with 2 threads (no idle spinning in a daemon:
// caf-0.17 notes), no BASP worker, the middleman loaded and our message
// types added. The middleman's own heartbeat and connection timeout are
// off: liveness.hpp says why and what replaces them.
// The daemon adds its session key (use_credentials), the launcher too
// once it has it.
void configure(caf::actor_system_config& cfg);

}  // namespace pmixd
