#include "caf_config.hpp"

#include <cerrno>
#include <cstdlib>

#include <caf/io/middleman.hpp>

#include "protocol.hpp"

namespace pmixd {
namespace {

std::chrono::seconds configured_peer_timeout{10};

}  // namespace

bool number_from_env(const char* name, unsigned long long low, unsigned long long high, unsigned long long& out,
                     std::string& error) {
  const char* text = std::getenv(name);
  if (text == nullptr || *text == '\0') return true;
  char* end = nullptr;
  errno = 0;
  const auto v = std::strtoull(text, &end, 10);
  if (*end != '\0' || errno != 0 || v < low || v > high) {
    error = std::string{name} + "='" + text + "' must be a number from " + std::to_string(low) + " to " +
            std::to_string(high);
    return false;
  }
  out = v;
  return true;
}

bool configure_peer_timeout(std::string& error) {
  unsigned long long seconds = 10;
  if (!number_from_env("PMIX_CXX_DAEMON_PEER_TIMEOUT_S", 2, 3600, seconds, error)) return false;
  configured_peer_timeout = std::chrono::seconds{static_cast<long>(seconds)};
  return true;
}

std::chrono::seconds peer_timeout() { return configured_peer_timeout; }

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
