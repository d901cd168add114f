// A connection's queue of output the peer has not read (issue 14.5): each
// byte that does not fit at once is copied into the queue exactly once and
// never again while it drains; a peer over its backlog is disconnected.
#include "transport/connection.hpp"

#include <doctest/doctest.h>
#include <sys/socket.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "transport/io_thread.hpp"

using namespace pmix::transport;

namespace {

std::string frame_of(int k, std::size_t size) {
  std::string f(size, static_cast<char>('a' + k % 26));
  f.replace(0, std::to_string(k).size(), std::to_string(k));
  return f;
}

// Reads whatever is there without waiting.
std::string drain(int fd) {
  std::string got;
  char buf[65536];
  for (;;) {
    const auto n = ::recv(fd, buf, sizeof buf, MSG_DONTWAIT);
    if (n <= 0) return got;
    got.append(buf, static_cast<std::size_t>(n));
  }
}

}  // namespace

TEST_SUITE("connection") {
  TEST_CASE("[issue 14.5] output a slow reader leaves is copied once, drained in order, never copied again") {
    int fds[2];
    REQUIRE(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) == 0);
    int small = 4096;
    ::setsockopt(fds[0], SOL_SOCKET, SO_SNDBUF, &small, sizeof small);
    io_thread io{[](std::shared_ptr<connection>) { return caf::actor{}; }};  // not started: want_write does nothing
    {
      connection c{1, fds[0], {}, &io, 64u << 20};
      std::string expected;
      std::size_t total = 0;
      for (int k = 0; k < 200; ++k) {
        const auto f = frame_of(k, 65536);
        REQUIRE(c.send(f));
        expected += f;
        total += f.size();
      }
      const auto first = total - c.pending_bytes();  // what the socket took at once
      CHECK(c.pending_bytes() > 0);
      CHECK(c.bytes_queued() == total - first);  // each queued byte copied once
      std::string got;
      while (c.has_pending_output()) {
        got += drain(fds[1]);
        REQUIRE(c.flush());
      }
      got += drain(fds[1]);
      CHECK(c.bytes_queued() == total - first);  // draining copied nothing more
      CHECK(got.size() == expected.size());
      CHECK(got == expected);
    }
    ::close(fds[1]);
  }

  TEST_CASE("[issue 14.4] a peer over its send backlog is disconnected, and what it had is dropped") {
    int fds[2];
    REQUIRE(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) == 0);
    int small = 4096;
    ::setsockopt(fds[0], SOL_SOCKET, SO_SNDBUF, &small, sizeof small);
    io_thread io{[](std::shared_ptr<connection>) { return caf::actor{}; }};
    {
      connection c{1, fds[0], {}, &io, 1u << 20};
      int accepted = 0;
      for (int k = 0; k < 64; ++k) {
        if (!c.send(frame_of(k, 65536))) break;
        ++accepted;
      }
      CHECK(accepted < 64);
      CHECK(c.broken());
      CHECK(c.pending_bytes() == 0);
      CHECK_FALSE(c.send("more"));
      // The reader sees the end after what the socket took.
      std::string got;
      char buf[65536];
      for (;;) {
        const auto n = ::recv(fds[1], buf, sizeof buf, 0);
        if (n <= 0) break;
        got.append(buf, static_cast<std::size_t>(n));
      }
      CHECK(got.size() < (1u << 20));
    }
    ::close(fds[1]);
  }
}
