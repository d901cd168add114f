// A daemon reaches a peer whose TLS handshake is slow (tools/pmixd/caf_config.hpp,
// liveness.hpp).
//
// Two actor systems talk through CAF's OpenSSL module with a session key, as
// pmixd's daemons do. The accepting one has its multiplexer thread busy for
// 2.5 s (a broker, which runs on that thread, sleeps), as a loaded machine
// makes a daemon slow to answer a new connection. With pmixd's configuration
// the connection is made once the peer answers. With CAF 0.17's middleman
// heartbeat (1 s) and connection timeout (10 s), which pmixd used before,
// the connecting side drops it at its first heartbeat tick with
// connection_timeout: the control, which shows the first case could fail.
#include <doctest/doctest.h>

#include <caf/all.hpp>
#include <caf/io/all.hpp>
#include <caf/openssl/all.hpp>

#include <chrono>
#include <cstdio>
#include <functional>
#include <future>
#include <string>
#include <thread>

#include "tests/tools/in_child.hpp"
#include "tools/pmixd/caf_config.hpp"
#include "tools/pmixd/credentials.hpp"

namespace {

using pmixd_test::in_child;
using nap_atom = caf::atom_constant<caf::atom("ctnap")>;

constexpr int busy_ms = 2500;

// Exit statuses of the child: 0 reached, 10 connection_timeout, 11 another
// error, 2-5 set-up failures.
int reach_busy_peer(const std::function<void(caf::actor_system_config&)>& configure) {
  pmixd::credentials creds;
  std::string error;
  creds.dir = pmixd::make_private_dir("connect_test");
  if (creds.dir.empty() || !pmixd::make_credentials(creds.dir, creds, error)) return 2;
  caf::actor_system_config cfg_a, cfg_b;
  for (auto* cfg : {&cfg_a, &cfg_b}) {
    configure(*cfg);
    cfg->set("logger.verbosity", caf::atom("quiet"));
    pmixd::use_credentials(*cfg, creds);
  }
  caf::actor_system a{cfg_a};
  caf::actor_system b{cfg_b};
  auto echo = a.spawn([]() -> caf::behavior { return {[](int x) { return x; }}; });
  auto port = caf::openssl::publish(echo, 0, "127.0.0.1", true);
  if (!port) return 3;
  // A broker runs on the middleman's multiplexer thread: while it sleeps,
  // `a` accepts no connection and answers no handshake.
  std::promise<void> asleep;
  auto napper = a.middleman().spawn_broker([&asleep](caf::io::broker*) -> caf::behavior {
    return {[&asleep](nap_atom, int ms) {
      asleep.set_value();
      std::this_thread::sleep_for(std::chrono::milliseconds(ms));
    }};
  });
  caf::anon_send(napper, nap_atom::value, busy_ms);
  if (asleep.get_future().wait_for(std::chrono::seconds(30)) != std::future_status::ready) return 4;
  const auto t0 = std::chrono::steady_clock::now();
  auto peer = caf::openssl::remote_actor(b, "127.0.0.1", *port);
  const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  pmixd::remove_credentials(creds);
  std::printf("remote_actor after %.2f s: %s\n", took, peer ? "reached" : b.render(peer.error()).c_str());
  std::fflush(stdout);
  int code = 0;
  if (!peer)
    code = peer.error() == caf::sec::connection_timeout ? 10 : 11;
  else if (took < busy_ms / 1000.0 - 0.5)
    code = 5;  // then the peer was not busy: the case shows nothing
  // Ending the actor systems is not what is tested.
  ::_exit(code);
}

}  // namespace

TEST_CASE("pmixd's configuration reaches a peer that answers its TLS handshake 2.5 s late") {
  CHECK(in_child([] { return reach_busy_peer(pmixd::configure); }) == 0);
}

TEST_CASE("control: CAF 0.17's heartbeat drops that connection during its handshake") {
  // pmixd's configuration before: heartbeat every second, connection
  // timeout 10 s. The connection this side opens has a last-seen time of
  // zero until the peer's first bytes, so the first tick drops it.
  auto with_heartbeat = [](caf::actor_system_config& cfg) {
    pmixd::configure(cfg);
    cfg.set("middleman.heartbeat-interval", caf::timespan{std::chrono::seconds(1)});
    cfg.set("middleman.connection-timeout", caf::timespan{std::chrono::seconds(10)});
  };
  CHECK(in_child([&] { return reach_busy_peer(with_heartbeat); }) == 10);
}
