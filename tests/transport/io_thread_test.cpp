// The I/O thread hands a connection's frames to its peer actor in the order
// they came: the frames one read brings as one message (frames_atom) when
// there are several, at most 64 to a message, a lone frame as frame_atom,
// and the end of the connection after them (closed_atom).
#include <doctest/doctest.h>

#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <caf/actor_system.hpp>
#include <caf/actor_system_config.hpp>
#include <caf/scoped_actor.hpp>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <string>
#include <variant>
#include <vector>

#include "protocol/framing.hpp"
#include "transport/atoms.hpp"
#include "transport/io_thread.hpp"

using namespace pmix::transport;

namespace {

// What the peer actor was sent, one entry per message: the frames it
// carried, or "closed".
using delivery = std::variant<std::vector<std::string>, std::string>;

// CAF's test scheduler: no worker threads (the peer here is a blocking
// scoped actor on this thread).
caf::actor_system_config& single_threaded(caf::actor_system_config& cfg) {
  cfg.set("scheduler.policy", caf::atom("testing"));
  return cfg;
}

struct fixture {
  caf::actor_system_config cfg;
  caf::actor_system sys{single_threaded(cfg)};
  caf::scoped_actor self{sys};
  std::string dir;
  std::string path;
  io_thread io{[this](std::shared_ptr<connection>) { return caf::actor_cast<caf::actor>(self); }};

  fixture() {
    char tmpl[] = "/tmp/pmix-io-XXXXXX";
    REQUIRE(::mkdtemp(tmpl) != nullptr);
    dir = tmpl;
    path = dir + "/sock";
    const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    REQUIRE(fd >= 0);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    std::strncpy(addr.sun_path, path.c_str(), sizeof addr.sun_path - 1);
    REQUIRE(::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0);
    REQUIRE(::listen(fd, 16) == 0);
    io.add_listener(fd);
    // Driven from this thread (step(), as with PMIX_EXTERNAL_PROGRESS): the
    // messages go from the I/O side to the actor on one thread (Debian's
    // CAF is not built for ThreadSanitizer, which would not see its
    // mailbox order two threads).
    REQUIRE(io.open());
  }
  ~fixture() {
    io.stop();
    ::unlink(path.c_str());
    ::rmdir(dir.c_str());
  }

  int connect() {
    const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    REQUIRE(fd >= 0);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    std::strncpy(addr.sun_path, path.c_str(), sizeof addr.sun_path - 1);
    REQUIRE(::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0);
    return fd;
  }

  // The next message to the peer: the I/O side steps until there is one
  // (30 s only against a hang).
  delivery next() {
    delivery got = std::string{"nothing within 30 s"};
    bool any = false;
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (!any && std::chrono::steady_clock::now() < until) {
      self->receive(
          [&](frame_atom, const std::string& payload) { got = std::vector<std::string>{payload}, any = true; },
          [&](frames_atom, const frames_msg& m) { got = m.frames, any = true; },
          [&](closed_atom) { got = std::string{"closed"}, any = true; },
          caf::after(std::chrono::seconds(0)) >> [] {});
      if (!any) io.step(50);
    }
    return got;
  }
};

void write_all(int fd, const std::string& bytes) {
  std::size_t done = 0;
  while (done < bytes.size()) {
    const auto n = ::write(fd, bytes.data() + done, bytes.size() - done);
    REQUIRE(n > 0);
    done += static_cast<std::size_t>(n);
  }
}

std::string frames_of(const std::vector<std::string>& payloads) {
  std::string out;
  for (const auto& p : payloads) pmix::protocol::append_frame(out, p);
  return out;
}

// A few steps of the I/O side, for whatever has come.
void io_steps(fixture& f) {
  for (int k = 0; k < 3; ++k) f.io.step(10);
}

std::vector<std::string> numbered(int from, int count) {
  std::vector<std::string> out;
  for (int k = from; k < from + count; ++k) out.push_back("frame " + std::to_string(k));
  return out;
}

}  // namespace

TEST_SUITE("io_thread") {
  TEST_CASE("the frames of one write come in one message, in order; a lone frame in one of its own; then the end") {
    fixture f;
    const int fd = f.connect();
    // A client's held commit and its fence go out in one write.
    write_all(fd, frames_of({"commit", "fence"}));
    CHECK(f.next() == delivery{std::vector<std::string>{"commit", "fence"}});
    write_all(fd, frames_of({"get"}));
    CHECK(f.next() == delivery{std::vector<std::string>{"get"}});
    // A frame split over two writes is one frame, with the one after it.
    const auto two = frames_of({"split across writes", "after it"});
    write_all(fd, two.substr(0, 7));
    io_steps(f);  // the I/O side reads the first part alone
    write_all(fd, two.substr(7));
    auto got = f.next();
    std::vector<std::string> all;
    while (auto* v = std::get_if<std::vector<std::string>>(&got)) {
      all.insert(all.end(), v->begin(), v->end());
      if (all.size() >= 2) break;
      got = f.next();
    }
    CHECK(all == std::vector<std::string>{"split across writes", "after it"});
    ::close(fd);
    CHECK(f.next() == delivery{std::string{"closed"}});
  }

  TEST_CASE("one read of 100 frames: 64 in a message, then the other 36, in order") {
    fixture f;
    const int fd = f.connect();
    write_all(fd, frames_of(numbered(0, 100)));
    CHECK(f.next() == delivery{numbered(0, 64)});
    CHECK(f.next() == delivery{numbered(64, 36)});
    ::close(fd);
    CHECK(f.next() == delivery{std::string{"closed"}});
  }

  TEST_CASE("frames before one over the limit reach the peer, then the end") {
    fixture f;
    const int fd = f.connect();
    std::string bytes = frames_of({"first", "second"});
    // A header announcing more than any limit allows (4 GiB - 1).
    bytes += std::string("\xff\xff\xff\xfe", 4);
    write_all(fd, bytes);
    CHECK(f.next() == delivery{std::vector<std::string>{"first", "second"}});
    CHECK(f.next() == delivery{std::string{"closed"}});
    ::close(fd);
  }
}
