// intruder: a peer that tries to make a pmixd run a job, for multinode_test
// (docs/multinode.md, "Who may talk to a daemon").
//
//   intruder plain ADDR:PORT MARKER     CAF's plain middleman, no TLS (what any
//                                       CAF 0.17 program on the network could do)
//   intruder tls DIR ADDR:PORT MARKER   CAF's OpenSSL module with the key in DIR
//                                       (pmixd credentials DIR: another session's
//                                       key; or the session's own, as the control)
//   intruder anonymous ADDR:PORT MARKER CAF's OpenSSL module without any key (CAF
//                                       then offers anonymous ECDH only)
//   intruder garbage ADDR:PORT          raw TCP: random bytes, a broken TLS hello,
//                                       a connection that stays silent
//
// plain, anonymous and tls ask for the daemon's handle (10 s at most). Without one they
// print "intruder: no handle: ERROR" and exit 0. With one they print
// "intruder: got the daemon's handle", send a job plan of one process,
// `/bin/sh -c 'touch MARKER'`, print the daemon's answer, wait (10 s at most)
// for the job's end, print "intruder: MARKER made" if the file exists, and
// exit 3. garbage prints "intruder: garbage sent on 3 connections".
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <caf/actor_system.hpp>
#include <caf/actor_system_config.hpp>
#include <caf/io/middleman.hpp>
#include <caf/openssl/manager.hpp>
#include <caf/scoped_actor.hpp>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <set>
#include <string>
#include <thread>

#include "tools/pmixd/credentials.hpp"
#include "tools/pmixd/protocol.hpp"

namespace {

bool split(const std::string& text, std::string& host, uint16_t& port) {
  const auto colon = text.rfind(':');
  if (colon == std::string::npos) return false;
  host = text.substr(0, colon);
  port = static_cast<uint16_t>(std::atoi(text.c_str() + colon + 1));
  return port != 0;
}

int tcp_connect(const std::string& host, uint16_t port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(port);
  if (fd < 0 || ::inet_pton(AF_INET, host.c_str(), &a.sin_addr) != 1 ||
      ::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) {
    if (fd >= 0) ::close(fd);
    return -1;
  }
  return fd;
}

int garbage(const std::string& host, uint16_t port) {
  std::mt19937 rng{12345};
  std::string noise(64 * 1024, '\0');
  for (auto& c : noise) c = static_cast<char>(rng());
  // A TLS handshake record header that announces more than it carries, then junk.
  const std::string hello = std::string("\x16\x03\x01\x40\x00\x01\x00\x3f\xfc", 9) + noise.substr(0, 300);
  int sent = 0;
  for (const std::string* bytes : {static_cast<const std::string*>(&noise), &hello}) {
    const int fd = tcp_connect(host, port);
    if (fd < 0) {
      std::printf("intruder: cannot connect to %s:%u\n", host.c_str(), port);
      return 1;
    }
    // The daemon may close the connection before it took everything.
    const ssize_t n = ::send(fd, bytes->data(), bytes->size(), MSG_NOSIGNAL);
    if (n > 0) ++sent;
    ::usleep(200 * 1000);
    ::close(fd);
  }
  const int idle = tcp_connect(host, port);
  if (idle >= 0) {
    ++sent;
    ::sleep(2);
    ::close(idle);
  }
  std::printf("intruder: garbage sent on %d connections\n", sent);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string mode = argc > 1 ? argv[1] : "";
  std::string host;
  uint16_t port = 0;
  if (mode == "garbage" && argc == 3 && split(argv[2], host, port)) return garbage(host, port);
  const bool tls = mode == "tls" && argc == 5;
  const bool anonymous = mode == "anonymous" && argc == 4;
  if (!(tls || anonymous || (mode == "plain" && argc == 4)) || !split(argv[tls ? 3 : 2], host, port)) {
    std::fprintf(stderr,
                 "usage: intruder plain ADDR:PORT MARKER | anonymous ADDR:PORT MARKER | tls DIR ADDR:PORT MARKER |\n"
                 "                garbage ADDR:PORT\n");
    return 2;
  }
  const std::string marker = argv[tls ? 4 : 3];
  caf::actor_system_config cfg;
  cfg.set("scheduler.policy", caf::atom("sharing"));
  cfg.set("scheduler.max-threads", 2);
  cfg.load<caf::io::middleman>();
  pmixd::add_types(cfg);
  if (tls) {
    pmixd::credentials creds;
    std::string error;
    if (!pmixd::check_credentials(argv[2], creds, error)) {
      std::fprintf(stderr, "intruder: %s\n", error.c_str());
      return 2;
    }
    pmixd::use_credentials(cfg, creds);
  } else if (anonymous) {
    cfg.load<caf::openssl::manager>();
  }
  int code = 0;
  {
    caf::actor_system sys{cfg};
    caf::scoped_actor self{sys};
    auto mm = tls || anonymous ? sys.openssl_manager().actor_handle() : sys.middleman().actor_handle();
    caf::actor daemon;
    std::string why;
    // connection_timeout: CAF's heartbeat tick came before the daemon's
    // first bytes (pmixd's connect_peer in daemon.cpp); tried again.
    for (int attempt = 1; attempt <= 10; ++attempt) {
      bool timed_out = false;
      self->request(mm, std::chrono::seconds(10), caf::connect_atom::value, host, port)
          .receive(
              [&](const caf::node_id&, caf::strong_actor_ptr& ptr, const std::set<std::string>&) {
                if (ptr)
                  daemon = caf::actor_cast<caf::actor>(ptr);
                else
                  why = "no actor at that port";
              },
              [&](caf::error& e) {
                why = sys.render(e);
                timed_out = e == caf::sec::connection_timeout;
              });
      if (!timed_out) break;
    }
    if (!daemon) {
      std::printf("intruder: no handle: %s\n", why.c_str());
      std::fflush(stdout);
    } else {
      code = 3;
      std::printf("intruder: got the daemon's handle\n");
      std::fflush(stdout);
      pmixd::job_plan plan;
      plan.nspace = "intruder." + std::to_string(::getpid());
      pmixd::app_plan app;
      app.argv = {"/bin/sh", "-c", "touch '" + marker + "'"};
      app.nprocs = 1;
      plan.apps.push_back(app);
      plan.size = 1;
      plan.nodes = {"victim"};
      plan.daemons = {host + ":" + std::to_string(port)};
      plan.node_of = {0};
      plan.fence = "tree";
      plan.launcher = caf::actor_cast<caf::actor>(self);
      self->request(daemon, std::chrono::seconds(10), pmixd::job_atom::value, plan)
          .receive(
              [&](int32_t status, const std::string& error) {
                std::printf("intruder: the daemon answered the plan: %d %s\n", status, error.c_str());
              },
              [&](caf::error& e) { std::printf("intruder: the plan failed: %s\n", sys.render(e).c_str()); });
      // Until the job's end, 10 s at most (the output and exit messages
      // before it stay unread).
      self->receive([&](pmixd::jobdone_atom, const std::string&, uint32_t) {},
                    caf::after(std::chrono::seconds(10)) >> [] {});
      if (::access(marker.c_str(), F_OK) == 0) std::printf("intruder: %s made\n", marker.c_str());
      std::fflush(stdout);
    }
  }
  return code;
}
