// The client's connection (client/connection.hpp) against a server played
// by the test on the other end of a Unix socket: what it does with the bytes
// the server sends, however they are split over reads.
#include "client/connection.hpp"

#include <doctest/doctest.h>
#include <poll.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <functional>
#include <memory>
#include <new>
#include <string>
#include <thread>
#include <vector>

#include "protocol/framing.hpp"
#include "protocol/messages.hpp"

namespace proto = pmix::protocol;
using pmix::client::connection;

namespace {
// The connection whose progress thread's allocations are counted (the
// replaced operator new and delete below), and the count.
std::atomic<const connection*> watched{nullptr};
std::atomic<int> watched_allocations{0};
void count_if_watched() {
  const auto* c = watched.load(std::memory_order_acquire);
  if (c != nullptr && c->on_own_thread()) watched_allocations.fetch_add(1, std::memory_order_relaxed);
}
}  // namespace

void* operator new(std::size_t size) {
  count_if_watched();
  if (void* p = std::malloc(size == 0 ? 1 : size)) return p;
  throw std::bad_alloc{};
}
void operator delete(void* p) noexcept {
  if (p != nullptr) count_if_watched();
  std::free(p);
}
void operator delete(void* p, std::size_t) noexcept { operator delete(p); }

namespace {

// A listening socket in a directory of its own, removed at the end.
struct listener {
  std::string dir, path;
  int fd = -1;
  listener() {
    char tmpl[] = "/tmp/pmix-conn-XXXXXX";
    REQUIRE(::mkdtemp(tmpl) != nullptr);
    dir = tmpl;
    path = dir + "/sock";
    fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    std::strncpy(addr.sun_path, path.c_str(), sizeof addr.sun_path - 1);
    REQUIRE(::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0);
    REQUIRE(::listen(fd, 4) == 0);
  }
  ~listener() {
    ::close(fd);
    ::unlink(path.c_str());
    ::rmdir(dir.c_str());
  }
};

// Reads the next frame the client writes; false if none comes within
// `seconds` (a guard against a hang, not a timing).
bool next_frame(int fd, proto::frame_reader& reader, proto::envelope& out, int seconds) {
  std::string payload;
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(seconds);
  while (reader.next(payload) != proto::frame_reader::status::complete) {
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(until - std::chrono::steady_clock::now()).count();
    if (left <= 0) return false;
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, static_cast<int>(left)) <= 0) continue;
    char buf[4096];
    const auto n = ::recv(fd, buf, sizeof buf, 0);
    if (n <= 0) return false;
    reader.feed(buf, static_cast<std::size_t>(n));
  }
  return proto::parse_envelope(std::move(payload), out);
}

// Opens `conn` to `srv` and plays the server's side of its handshake: the
// connect request (checked) is answered with answer(its id). Returns the
// server's end of the socket; `reader` keeps what came after the request.
int handshake_with(listener& srv, std::unique_ptr<connection>& conn, proto::frame_reader& reader,
                   const std::function<std::string(std::uint64_t)>& answer) {
  REQUIRE(connection::open("uds://" + srv.path, conn) == PMIX_SUCCESS);
  const int peer = ::accept4(srv.fd, nullptr, nullptr, SOCK_CLOEXEC);
  REQUIRE(peer >= 0);
  pmix_status_t rc = PMIX_ERROR;
  proto::envelope reply;
  std::thread client([&] { rc = conn->handshake(proto::body::connect, "", reply); });
  // However this ends, the handshake returns (its socket is shut) and its
  // thread is joined.
  struct joiner {
    std::thread& t;
    int fd;
    ~joiner() {
      if (!t.joinable()) return;
      ::shutdown(fd, SHUT_RDWR);
      t.join();
    }
  } join_client{client, peer};
  proto::envelope request;
  REQUIRE(next_frame(peer, reader, request, 60));
  CHECK(request.kind == proto::body::connect);
  const std::string bytes = answer(request.id);
  REQUIRE(::send(peer, bytes.data(), bytes.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(bytes.size()));
  client.join();
  REQUIRE(rc == PMIX_SUCCESS);
  CHECK(reply.kind == proto::body::connect_reply);
  return peer;
}

}  // namespace

TEST_CASE("frames that come in the same read as the handshake's reply are acted on, with nothing more sent") {
  // The server answers a connect and, at once, asks for the held commit
  // (commit_hold_end: another process asked for this one's data) and sends
  // an event; the client's handshake reads all three at once. The two behind
  // the reply were left in the reader, where the progress thread, waiting
  // for the socket, never looked: a process that made no further call held
  // its commit for good, and the process that asked for its data waited
  // (tests/e2e:job_test "a commit reaches the server though the client makes
  // no further call" hung once in CI).
  listener srv;
  std::unique_ptr<connection> conn;
  proto::frame_reader reader;
  const int peer = handshake_with(srv, conn, reader, [](std::uint64_t id) {
    return proto::to_frame(id, proto::body::connect_reply, "") + proto::to_frame(0, proto::body::commit_hold_end, "") +
           proto::to_frame(0, proto::body::event, "");
  });

  std::atomic<int> events{0};
  conn->on_unprompted([&](proto::envelope& e) {
    if (e.kind == proto::body::event) ++events;
  });
  conn->allow_hold(true);
  REQUIRE(conn->start() == PMIX_SUCCESS);

  proto::envelope ended;
  REQUIRE_MESSAGE(next_frame(peer, reader, ended, 30), "the client never answered commit_hold_end");
  CHECK(ended.kind == proto::body::commit_hold_ended);
  for (int k = 0; k < 3000 && events.load() == 0; ++k) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  CHECK(events.load() == 1);
  // The hold is over: a commit now goes out at once.
  REQUIRE(conn->send_held(proto::body::commit, "") == PMIX_SUCCESS);
  proto::envelope commit;
  REQUIRE(next_frame(peer, reader, commit, 30));
  CHECK(commit.kind == proto::body::commit);
  conn.reset();
  ::close(peer);
}

TEST_CASE("a progress thread that only starts and stops allocates and frees nothing") {
  // glibc gives a thread its own malloc arena at its first malloc or free:
  // a 128 MiB reservation, trimmed and protected, with TLB shootdowns in a
  // process of two threads. The progress thread of a process that makes
  // only blocking calls (which read their own replies) wakes once, to stop:
  // a std::thread's state freed there and an empty std::deque made there
  // cost every such process that arena at its PMIx_Finalize (issue 40).
  listener srv;
  std::unique_ptr<connection> conn;
  proto::frame_reader reader;
  const int peer = handshake_with(srv, conn, reader, [](std::uint64_t id) {
    return proto::to_frame(id, proto::body::connect_reply, "");
  });

  watched_allocations = 0;
  watched = conn.get();
  REQUIRE(conn->start() == PMIX_SUCCESS);
  // A blocking call: its reply is read by this thread (drive()).
  {
    connection::answered_here blocking;
    std::atomic<bool> done{false};
    pmix_status_t status = PMIX_ERROR;
    REQUIRE(conn->request(proto::body::commit, "", [&](pmix_status_t st, proto::envelope*) {
      status = st;
      done = true;
    }) == PMIX_SUCCESS);
    proto::envelope sent;
    REQUIRE(next_frame(peer, reader, sent, 60));
    const std::string back = proto::to_frame(sent.id, proto::body::status_reply, "");
    // The reply comes while this thread waits for it, as a server's does.
    // drive() has taken the socket from the progress thread by its third
    // look at done() (client/connection.cpp: it stops watching the socket
    // right before it). Sent before drive(), the reply could wake the
    // progress thread, which then read it and allocated for it (seen once,
    // in a cold CI run with the two CPUs busy).
    int looks = 0;
    ssize_t sent_back = 0;
    conn->drive([&] {
      if (++looks == 3) sent_back = ::send(peer, back.data(), back.size(), MSG_NOSIGNAL);
      return done.load();
    });
    CHECK(sent_back == static_cast<ssize_t>(back.size()));
    CHECK(done.load());
    CHECK(status == PMIX_SUCCESS);
  }
  conn->close();
  watched = nullptr;
  CHECK(watched_allocations.load() == 0);
  conn.reset();
  ::close(peer);
}
