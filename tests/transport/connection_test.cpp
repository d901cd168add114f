// A connection's queue of output the peer has not read (issue 14.5): each
// byte that does not fit at once is copied into the queue exactly once and
// never again while it drains; a peer over its backlog is disconnected.
#include "transport/connection.hpp"

#include <doctest/doctest.h>
#include <fcntl.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include <string>
#include <utility>
#include <vector>

#include "transport/io_thread.hpp"
#include "transport/shared_data.hpp"

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

// Shared data (transport/shared_data.hpp): a descriptor passed with a frame
// arrives with that frame's first byte, also when the frame waited in the
// queue behind output the peer had not read.
namespace {

// Reads what is there, collecting the descriptors that came with it.
// `within`: for each descriptor, the stream offsets [first, end) of the bytes
// read with it (`base` bytes were read before). The kernel hands a
// descriptor over with the read that reaches the byte it was sent with.
using span = std::pair<std::size_t, std::size_t>;
std::string drain_with_fds(int fd, std::vector<int>& fds, std::vector<span>& within, std::size_t base) {
  std::string got;
  char buf[65536];
  for (;;) {
    iovec part{buf, sizeof buf};
    msghdr m{};
    m.msg_iov = &part;
    m.msg_iovlen = 1;
    alignas(cmsghdr) char control[CMSG_SPACE(8 * sizeof(int))];
    m.msg_control = control;
    m.msg_controllen = sizeof control;
    const auto n = ::recvmsg(fd, &m, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
    if (n <= 0) return got;
    for (cmsghdr* c = CMSG_FIRSTHDR(&m); c != nullptr; c = CMSG_NXTHDR(&m, c)) {
      if (c->cmsg_type != SCM_RIGHTS) continue;
      for (std::size_t k = 0; k < (c->cmsg_len - CMSG_LEN(0)) / sizeof(int); ++k) {
        int received;
        std::memcpy(&received, CMSG_DATA(c) + k * sizeof(int), sizeof received);
        fds.push_back(received);
        within.emplace_back(base + got.size(), base + got.size() + static_cast<std::size_t>(n));
      }
    }
    got.append(buf, static_cast<std::size_t>(n));
  }
}

std::string read_all(int fd) {
  std::string out;
  char buf[4096];
  ::lseek(fd, 0, SEEK_SET);
  for (;;) {
    const auto n = ::read(fd, buf, sizeof buf);
    if (n <= 0) return out;
    out.append(buf, static_cast<std::size_t>(n));
  }
}

}  // namespace

TEST_SUITE("connection") {
  TEST_CASE("shared data: a sealed memfd's descriptor arrives with its frame's first byte, queued or not") {
    const std::string data(100000, 'd');
    auto shared = shared_data::make(data);
    REQUIRE(shared);
    // Sealed: nobody, the server included, can write or shrink it.
    CHECK(::write(shared->fd(), "x", 1) < 0);
    CHECK(::ftruncate(shared->fd(), 10) < 0);

    int fds[2];
    REQUIRE(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) == 0);
    int small = 4096;
    ::setsockopt(fds[0], SOL_SOCKET, SO_SNDBUF, &small, sizeof small);
    io_thread io{[](std::shared_ptr<connection>) { return caf::actor{}; }};
    peer_credentials cred;
    cred.pid = ::getpid();  // a Unix socket's peer: descriptors can pass
    {
      connection c{1, fds[0], cred, &io, 64u << 20};
      REQUIRE(c.passes_descriptors());
      // First with nothing queued, then behind 1 MB the peer has not read.
      std::string expected;
      std::vector<std::size_t> frame_starts;
      auto send = [&](const std::string& head, const std::string& body, bool attach) {
        frame_starts.push_back(expected.size());
        expected += head + body;
        CHECK(c.send(head, body, attach ? shared : nullptr));
      };
      send("H1", "first frame", true);
      for (int k = 0; k < 16; ++k) send("P", frame_of(k, 65536), false);
      CHECK(c.has_pending_output());
      send("H2", "second frame", true);
      send("P", frame_of(99, 1000), false);
      send("H3", "third frame", true);
      std::vector<int> got_fds;
      std::vector<span> within;
      std::string got = drain_with_fds(fds[1], got_fds, within, 0);
      while (c.has_pending_output()) {
        REQUIRE(c.flush());
        got += drain_with_fds(fds[1], got_fds, within, got.size());
      }
      CHECK(got == expected);
      REQUIRE(got_fds.size() == 3);
      // Each came with the read holding its own frame's first byte, so a
      // reader that takes descriptors in order as frames ask for them gets
      // each frame's own.
      const std::size_t carrying[] = {frame_starts[0], frame_starts[17], frame_starts[19]};
      for (std::size_t k = 0; k < 3; ++k) {
        CAPTURE(k);
        CHECK(within[k].first <= carrying[k]);
        CHECK(carrying[k] < within[k].second);
      }
      for (int fd : got_fds) {
        CHECK(read_all(fd) == data);  // the same memfd, read-only for the reader in effect
        ::close(fd);
      }
    }
    ::close(fds[1]);
  }
}

// The fence board (transport/shared_data.hpp, docs/wire-format.md): written
// by the server only, read by every client of the namespace.
TEST_SUITE("fence board") {
  TEST_CASE("a client maps it read-only and can never write it; it sees each post; a post too large changes nothing") {
    auto board = fence_board::make(4096);
    REQUIRE(board);
    const int fd = board->file()->fd();
    CHECK(board->file()->size() == board_data_offset + 4096);
    // What a client receives is the same file: no writable mapping, no
    // write, no resize, and the seals stay.
    errno = 0;
    CHECK(::mmap(nullptr, board->file()->size(), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0) == MAP_FAILED);
    CHECK(errno == EPERM);
    CHECK(::pwrite(fd, "x", 1, board_data_offset) < 0);
    CHECK(::ftruncate(fd, 10) < 0);
    CHECK(::fcntl(fd, F_ADD_SEALS, 0) < 0);  // F_SEAL_SEAL

    const board_header* seen = nullptr;
    auto mapped = map_board(::dup(fd), board->file()->size(), seen);
    REQUIRE(mapped);
    REQUIRE(seen != nullptr);
    // Read-only: mprotect to writable is refused too.
    CHECK(::mprotect(const_cast<board_header*>(seen), 4096, PROT_READ | PROT_WRITE) != 0);
    const auto g0 = board_generation(seen);
    CHECK(g0 == board->generation());

    std::string out;
    REQUIRE(board->post("first reply"));
    CHECK(board_generation(seen) == g0 + 1);
    CHECK(board_read(seen, g0 + 1, out));
    CHECK(out == "first reply");
    const std::string full(4096, 'f');
    REQUIRE(board->post(full));
    CHECK(board_read(seen, g0 + 2, out));
    CHECK(out == full);
    // A copy taken while the generation moved is not trusted.
    CHECK_FALSE(board_read(seen, g0 + 1, out));
    CHECK_FALSE(board->post(std::string(4097, 'x')));
    CHECK(board_generation(seen) == g0 + 2);
    CHECK(board_read(seen, g0 + 2, out));
    CHECK(out == full);
  }

  TEST_CASE("each post says which CPU it was written on") {
    auto board = fence_board::make(4096);
    REQUIRE(board);
    const board_header* seen = nullptr;
    auto mapped = map_board(::dup(board->file()->fd()), board->file()->size(), seen);
    REQUIRE(mapped);
    CHECK(board_poster_cpu(seen) == -1);  // no post yet
    // Held on one CPU while it posts, so that the CPU is known.
    cpu_set_t all, one;
    CPU_ZERO(&all);
    REQUIRE(::sched_getaffinity(0, sizeof all, &all) == 0);
    for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
      if (!CPU_ISSET(cpu, &all)) continue;
      CPU_ZERO(&one);
      CPU_SET(cpu, &one);
      REQUIRE(::sched_setaffinity(0, sizeof one, &one) == 0);
      REQUIRE(board->post("reply"));
      CHECK(board_poster_cpu(seen) == cpu);
    }
    REQUIRE(::sched_setaffinity(0, sizeof all, &all) == 0);
  }

  TEST_CASE("a client refuses a board descriptor that is not a sealed board of the announced size") {
    const board_header* seen = nullptr;
    // Shared data (sealed against all writes): not a board.
    auto shared = shared_data::make(std::string(4096 + board_data_offset, 'x'));
    REQUIRE(shared);
    CHECK_FALSE(map_board(::dup(shared->fd()), shared->size(), seen));
    // A plain memfd anyone could write.
    const int plain = ::memfd_create("plain", MFD_CLOEXEC);
    REQUIRE(plain >= 0);
    REQUIRE(::ftruncate(plain, 8192) == 0);
    CHECK_FALSE(map_board(plain, 8192, seen));
    // A real board, announced with another size.
    auto board = fence_board::make(4096);
    REQUIRE(board);
    CHECK_FALSE(map_board(::dup(board->file()->fd()), board->file()->size() + 4096, seen));
    CHECK(seen == nullptr);
  }
}

TEST_SUITE("fence board") {
  TEST_CASE("PMIX_CXX_FENCE_BOARD_BYTES: a number of bytes up to 1 GiB, 0 for no board; anything else is logged and the default used") {
    // What the server's log says while `f` runs (stderr, redirected).
    auto logged = [](auto f) {
      char path[] = "/tmp/board-log-XXXXXX";
      const int file = ::mkstemp(path);
      REQUIRE(file >= 0);
      std::fflush(stderr);
      const int saved = ::dup(2);
      ::dup2(file, 2);
      f();
      std::fflush(stderr);
      ::dup2(saved, 2);
      ::close(saved);
      std::string text = read_all(file);
      ::close(file);
      ::unlink(path);
      return text;
    };
    const std::size_t fallback = 1u << 20;
    std::size_t got = 0;
    ::unsetenv("PMIX_CXX_FENCE_BOARD_BYTES");
    CHECK(fence_board_capacity() == fallback);
    for (const auto& [value, want] : std::vector<std::pair<std::string, std::size_t>>{
             {"0", 0}, {"4096", 4096}, {"1073741824", 1u << 30}}) {
      CAPTURE(value);
      ::setenv("PMIX_CXX_FENCE_BOARD_BYTES", value.c_str(), 1);
      CHECK(logged([&] { got = fence_board_capacity(); }).empty());
      CHECK(got == want);
    }
    for (const char* bad : {"lots", "-1", "4k", "1073741825"}) {
      CAPTURE(bad);
      ::setenv("PMIX_CXX_FENCE_BOARD_BYTES", bad, 1);
      const auto text = logged([&] { got = fence_board_capacity(); });
      CHECK(got == fallback);
      CHECK(text.find(std::string{"PMIX_CXX_FENCE_BOARD_BYTES='"} + bad + "'") != std::string::npos);
    }
    ::unsetenv("PMIX_CXX_FENCE_BOARD_BYTES");
  }
}
