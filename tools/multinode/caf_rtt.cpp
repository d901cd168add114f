// caf_rtt: the round trip between two actors of two processes through CAF's
// middleman, configured as pmixd's daemons are (the sharing scheduler with 2
// threads, no BASP worker, each actor a broker on the multiplexer thread)
// and, with a session key, through CAF's OpenSSL module as they talk: the
// floor of each leg of a fence across nodes (docs/multinode.md, "Where a
// fence's time goes").
//
//   caf_rtt serve PORT [tls]            echoes each ping to its sender; with
//                                       `tls` makes a session key first;
//                                       prints "port P" (and "key DIR"), then
//                                       serves until its stdin closes
//   caf_rtt ping HOST PORT N [KEYDIR]   N round trips, one at a time, each
//                                       timed (CLOCK_MONOTONIC); prints
//                                       "caf_rtt_us MEDIAN P10 P90"
//
// With CAF_RTT_PAYLOAD set, each ping and pong carries what a fence's part
// between pmixd's daemons carries (a job's name, the fence's key, its round
// and a map of one node's 150 bytes) instead of a number alone.
//
// tools/multinode/caf_rtt.sh runs both across two network namespaces beside
// the TCP round trip of the same pair.
#include <caf/all.hpp>
#include <caf/io/all.hpp>
#include <caf/openssl/all.hpp>

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <future>
#include <map>
#include <string>
#include <vector>

#include "tools/pmixd/credentials.hpp"
#include "tools/pmixd/sigpipe_calls.hpp"

namespace {

using ping_atom = caf::atom_constant<caf::atom("rttping")>;
using pong_atom = caf::atom_constant<caf::atom("rttpong")>;

void configure(caf::actor_system_config& cfg) {
  cfg.set("scheduler.policy", caf::atom("sharing"));
  cfg.set("scheduler.max-threads", 2);
  cfg.set("logger.verbosity", caf::atom("quiet"));
  cfg.set("middleman.workers", 0);
  // Other settings to compare (not pmixd's): CAF_RTT_WORKERS (the BASP
  // workers), CAF_RTT_POLICY (sharing or stealing), CAF_RTT_THREADS, and
  // CAF_RTT_BROKER=0 (the actors on the scheduler's threads).
  if (const char* w = std::getenv("CAF_RTT_WORKERS")) cfg.set("middleman.workers", std::atoi(w));
  if (const char* p = std::getenv("CAF_RTT_POLICY")) cfg.set("scheduler.policy", caf::atom_from_string(p));
  if (const char* t = std::getenv("CAF_RTT_THREADS")) cfg.set("scheduler.max-threads", std::atoi(t));
  cfg.load<caf::io::middleman>();
}

// As pmixd's daemon actor, both actors are brokers: they run on the
// middleman's multiplexer thread. CAF_RTT_BROKER=0 puts them on the
// scheduler's threads instead.
bool as_broker() {
  const char* b = std::getenv("CAF_RTT_BROKER");
  return b == nullptr || std::string(b) != "0";
}

// A fence's part, as pmixd's daemons send it (tools/pmixd/protocol.hpp).
using blocks_t = std::map<std::string, std::string>;
bool with_payload() { return std::getenv("CAF_RTT_PAYLOAD") != nullptr; }
blocks_t payload() { return {{"node1", std::string(150, 'x')}}; }
const std::string job_name = "pmixrun.13887.2930";
const std::string fence_key = "pmixrun.13887.2930:*,#0";

template <class Self>
caf::behavior echo(Self* self) {
  return {[self](ping_atom, uint64_t seq) {
    self->send(caf::actor_cast<caf::actor>(self->current_sender()), pong_atom::value, seq);
  },
  [self](ping_atom, const std::string& a, const std::string& b, uint64_t seq, blocks_t& m) {
    self->send(caf::actor_cast<caf::actor>(self->current_sender()), pong_atom::value, a, b, seq, std::move(m));
  }};
}

struct pinger_state {
  uint64_t left = 0;
  uint64_t seq = 0;
  std::chrono::steady_clock::time_point sent;
  std::vector<double> us;
  std::promise<std::vector<double>>* done = nullptr;
};

template <class Self>
caf::behavior pinger(Self* self, caf::actor peer, uint64_t n, std::promise<std::vector<double>>* done) {
  self->state.left = n;
  self->state.done = done;
  self->state.us.reserve(n);
  self->state.sent = std::chrono::steady_clock::now();
  auto go = [self, peer, carry = with_payload()](uint64_t seq) {
    if (carry)
      self->send(peer, ping_atom::value, job_name, fence_key, seq, payload());
    else
      self->send(peer, ping_atom::value, seq);
  };
  go(self->state.seq);
  auto on_pong = [self, go](uint64_t seq) {
    auto& st = self->state;
    if (seq != st.seq) return;
    st.us.push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - st.sent).count());
    if (--st.left == 0) {
      st.done->set_value(std::move(st.us));
      self->quit();
      return;
    }
    st.sent = std::chrono::steady_clock::now();
    go(++st.seq);
  };
  return {[on_pong](pong_atom, uint64_t seq) { on_pong(seq); },
          [on_pong](pong_atom, const std::string&, const std::string&, uint64_t seq, blocks_t&) { on_pong(seq); }};
}

int serve(int port, bool tls) {
  pmixd::credentials creds;
  caf::actor_system_config cfg;
  configure(cfg);
  if (tls) {
    std::string error;
    creds.dir = pmixd::make_private_dir("caf_rtt");
    if (creds.dir.empty() || !pmixd::make_credentials(creds.dir, creds, error)) {
      std::fprintf(stderr, "caf_rtt: cannot make a session key: %s\n", error.c_str());
      return 1;
    }
    pmixd::use_credentials(cfg, creds);
  }
  int rc = 0;
  {
    caf::actor_system sys{cfg};
    auto e = as_broker() ? sys.middleman().spawn_broker(echo<caf::io::broker>) : sys.spawn(echo<caf::event_based_actor>);
    auto p = tls ? caf::openssl::publish(e, static_cast<uint16_t>(port), nullptr, true)
                 : sys.middleman().publish(e, static_cast<uint16_t>(port), nullptr, true);
    if (!p) {
      std::fprintf(stderr, "caf_rtt: publish: %s\n", sys.render(p.error()).c_str());
      rc = 1;
    } else {
      if (tls) std::printf("key %s\n", creds.dir.c_str());
      std::printf("port %u\n", static_cast<unsigned>(*p));
      std::fflush(stdout);
      char buf[64];
      while (::read(0, buf, sizeof buf) > 0) {
      }
    }
    caf::anon_send_exit(e, caf::exit_reason::user_shutdown);
  }
  pmixd::remove_credentials(creds);
  return rc;
}

void spawn_pinger(caf::actor_system& sys, caf::actor peer, uint64_t n, std::promise<std::vector<double>>* done) {
  if (as_broker())
    sys.middleman().spawn_broker(pinger<caf::stateful_actor<pinger_state, caf::io::broker>>, peer, n, done);
  else
    sys.spawn(pinger<caf::stateful_actor<pinger_state>>, peer, n, done);
}

int ping(const std::string& host, int port, uint64_t n, const std::string& keydir) {
  caf::actor_system_config cfg;
  configure(cfg);
  pmixd::credentials creds;
  if (!keydir.empty()) {
    std::string error;
    if (!pmixd::check_credentials(keydir, creds, error)) {
      std::fprintf(stderr, "caf_rtt: %s\n", error.c_str());
      return 1;
    }
    pmixd::use_credentials(cfg, creds);
  }
  caf::actor_system sys{cfg};
  auto peer = keydir.empty() ? sys.middleman().remote_actor(host, static_cast<uint16_t>(port))
                             : caf::openssl::remote_actor(sys, host, static_cast<uint16_t>(port));
  if (!peer) {
    std::fprintf(stderr, "caf_rtt: connect: %s\n", sys.render(peer.error()).c_str());
    return 1;
  }
  std::promise<std::vector<double>> done;
  auto result = done.get_future();
  // 20 untimed round trips first: the connection's first messages set up
  // proxies and buffers.
  {
    std::promise<std::vector<double>> warm;
    auto w = warm.get_future();
    spawn_pinger(sys, *peer, uint64_t{20}, &warm);
    w.get();
  }
  spawn_pinger(sys, *peer, n, &done);
  auto us = result.get();
  std::sort(us.begin(), us.end());
  auto at = [&](double q) { return us[static_cast<size_t>(q * static_cast<double>(us.size() - 1))]; };
  std::printf("caf_rtt_us %.1f %.1f %.1f\n", at(0.5), at(0.1), at(0.9));
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  // As pmixd does: SIGPIPE blocked in every thread, CAF's OpenSSL guard
  // without system calls (tools/pmixd/sigpipe_calls.hpp); CAF_RTT_GUARD=libc
  // leaves it to the C library, to compare.
  const char* guard = std::getenv("CAF_RTT_GUARD");
  if ((guard == nullptr || std::string(guard) != "libc") && !pmixd::sigpipe_calls::take_over())
    std::fprintf(stderr, "caf_rtt: SIGPIPE guard: not taken over\n");
  const std::string mode = argc > 1 ? argv[1] : "";
  if (mode == "serve" && (argc == 3 || (argc == 4 && std::string(argv[3]) == "tls")))
    return serve(std::atoi(argv[2]), argc == 4);
  if (mode == "ping" && (argc == 5 || argc == 6) && std::atoll(argv[4]) > 0)
    return ping(argv[2], std::atoi(argv[3]), static_cast<uint64_t>(std::atoll(argv[4])), argc == 6 ? argv[5] : "");
  std::fprintf(stderr, "usage: caf_rtt serve PORT [tls] | caf_rtt ping HOST PORT N [KEYDIR]\n");
  return 2;
}
