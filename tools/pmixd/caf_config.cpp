#include "caf_config.hpp"

#include <caf/io/middleman.hpp>

#include "protocol.hpp"

namespace pmixd {

void configure(caf::actor_system_config& cfg) {
  cfg.set("scheduler.policy", caf::atom("sharing"));
  cfg.set("scheduler.max-threads", 2);
  // No middleman heartbeat, so no connection timeout either: CAF 0.17 drops
  // a connection it opened while its handshake runs at the first tick
  // (liveness.hpp). The daemons' and the launcher's beats find a peer that
  // stops answering.
  cfg.set("middleman.heartbeat-interval", caf::timespan{0});
  cfg.set("middleman.connection-timeout", caf::timespan{0});
  // No BASP worker: messages from other daemons are deserialized and
  // delivered by the multiplexer thread itself, where the daemon actor (a
  // broker, daemon.cpp) runs: a message between two daemon actors wakes no
  // thread but the receiving multiplexer (docs/multinode.md, "Where a
  // fence's time goes").
  cfg.set("middleman.workers", 0);
  cfg.load<caf::io::middleman>();
  add_types(cfg);
}

}  // namespace pmixd
