// End-to-end: isolation between users, and bounds on what one job can make
// the server hold (issue 33, docs/security.md). The server runs as root, as
// inside slurmstepd or a launcher; the processes of another user (uid 65534)
// try, over the real socket, to read, forge and block what belongs to a
// root job. Needs root, as CI has.
#include <doctest/doctest.h>
#include <poll.h>
#include <pmix_server.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <syslog.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <ctime>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "protocol/codec.hpp"
#include "protocol/framing.hpp"
#include "tests/e2e/host.hpp"
#include "tests/e2e/hostile.hpp"
#include "tests/support/memory.hpp"

using namespace pmix::test;

namespace {

constexpr uid_t nobody = 65534;

// The expiry (seconds since the epoch) a credential the server issued
// carries: after its magic (8 bytes), uid, gid and pid (4 each), as 8
// bytes little-endian (actors/credential.cpp).
std::int64_t expiry_of(const std::string& path) {
  const auto bytes = read_file(path);
  REQUIRE(bytes.size() > 28);
  std::uint64_t v = 0;
  for (int k = 0; k < 8; ++k) v |= static_cast<std::uint64_t>(static_cast<unsigned char>(bytes[20 + k])) << (8 * k);
  return static_cast<std::int64_t>(v);
}

// The "env NAME=value" lines a server_host printed.
std::vector<std::string> server_host_env(const child& host) {
  std::vector<std::string> env;
  const auto out = host.output();
  for (std::size_t at = 0; (at = out.find("env ", at)) != std::string::npos;) {
    const auto end = out.find('\n', at);
    env.push_back(out.substr(at + 4, end - at - 4));
    at = end;
  }
  return env;
}

// Moves what one read of `from` gives to `to`, descriptors passed with it
// (SCM_RIGHTS: the server passes its shared data that way) included; false
// at the end of `from`.
bool relay(int from, int to) {
  char buf[65536];
  iovec part{buf, sizeof buf};
  alignas(cmsghdr) char control[CMSG_SPACE(8 * sizeof(int))];
  msghdr m{};
  m.msg_iov = &part;
  m.msg_iovlen = 1;
  m.msg_control = control;
  m.msg_controllen = sizeof control;
  const auto n = ::recvmsg(from, &m, MSG_CMSG_CLOEXEC);
  if (n <= 0) return false;
  part.iov_len = static_cast<std::size_t>(n);
  m.msg_controllen = m.msg_controllen;  // as received
  std::vector<int> passed;
  for (cmsghdr* c = CMSG_FIRSTHDR(&m); c != nullptr; c = CMSG_NXTHDR(&m, c))
    if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS)
      for (std::size_t k = 0; k < (c->cmsg_len - CMSG_LEN(0)) / sizeof(int); ++k) {
        int fd;
        std::memcpy(&fd, CMSG_DATA(c) + k * sizeof(int), sizeof fd);
        passed.push_back(fd);
      }
  if (passed.empty()) {
    m.msg_control = nullptr;
    m.msg_controllen = 0;
  }
  const bool sent = ::sendmsg(to, &m, MSG_NOSIGNAL) == n;
  for (int fd : passed) ::close(fd);
  return sent;
}

// What this process (the server runs in it) has allocated and not freed,
// in kB: what the server holds (the resident set also keeps what the
// allocator has not given back).
std::size_t held_heap_kb() { return static_cast<std::size_t>(heap_in_use_kb()); }

// A GetRequest frame for `key` of `ns`:`rank`, with an info item of
// `pad` bytes when `pad` > 0.
std::string get_frame(std::uint64_t id, const std::string& ns, pmix_rank_t rank, const std::string& key,
                      std::size_t pad = 0) {
  pmix::wire::Envelope e;
  e.set_id(id);
  auto* g = e.mutable_get();
  g->mutable_proc()->set_nspace(ns);
  g->mutable_proc()->set_rank(rank);
  g->set_key(key);
  if (pad > 0) {
    auto* i = g->add_info();
    i->set_key("test.pad");
    i->mutable_value()->set_type(PMIX_STRING);
    i->mutable_value()->set_bytes(std::string(pad, 'p'));
  }
  return pmix::protocol::to_frame(e);
}

// Reads `n` replies from `fd` (a guard of 60 s against hangs); how many
// came with each status.
std::map<int, int> reply_statuses(int fd, int n) {
  std::map<int, int> out;
  pmix::protocol::frame_reader reader;
  std::string payload;
  char buf[65536];
  for (int got = 0; got < n;) {
    if (reader.next(payload) == pmix::protocol::frame_reader::status::complete) {
      pmix::wire::Envelope e;
      if (e.ParseFromString(payload)) ++out[e.get_reply().status()];
      ++got;
      continue;
    }
    const auto r = ::recv(fd, buf, sizeof buf, 0);
    if (r <= 0) break;
    reader.feed(buf, static_cast<std::size_t>(r));
  }
  return out;
}

void require_root() {
  if (::getuid() != 0) FAIL("this test runs processes as another user: run it as root (CI does)");
}

}  // namespace

TEST_SUITE("isolation between users") {
  TEST_CASE("[issue 33.1] a process of another user reads nothing of a root job, and joins nothing of it; the same "
            "user's other jobs and root see what they may") {
    require_root();
    temp_dir dir;
    ::chmod(dir.path().c_str(), 0711);
    const auto bin = stage_for_other_user(dir.path());
    const std::string done = dir.path() + "/done";
    host_slots slots;
    slots.publish = slots.iof = slots.query = slots.connect = true;
    server srv(dir.path(), slots);
    REQUIRE(srv.status() == PMIX_SUCCESS);
    REQUIRE(register_job("rootjob", 2, 2) == PMIX_SUCCESS);
    REQUIRE(register_job("userjob", 1, 1, nobody) == PMIX_SUCCESS);
    REQUIRE(register_job("userjob2", 1, 1, nobody) == PMIX_SUCCESS);

    // Root's rank 0 commits and publishes a secret, and stays.
    auto root0 = launch("rootjob", 0,
                        {runfile("tests/e2e/script_client"), "init", "put:secret=xyz", "commit",
                         "publish:rsecret=xyz", "wait_file:" + done, "finalize"},
                        dir.path());
    REQUIRE(wait_for_output(root0, "publish:rsecret=xyz PMIX_SUCCESS"));

    // Another user's process asks for all of it.
    auto user0 = launch_as(nobody, "userjob", 0,
                           {"init", "put:mine=abc", "commit", "get_ns:rootjob:0:secret",
                            "get_ns:rootjob:*:pmix.job.size", "get_ns:rootjob:*:pmix.local.size", "lookup:rsecret",
                            "lookup:rsecret:uid=0", "connect:rootjob,self", "fence_with:rootjob,self",
                            "group_construct:g1:0,rootjob/0", "iof_pull:rootjob:*:all",
                            "query_ns:rootjob:pmix.qry.ptable", "query_ns:self:pmix.qry.ptable", "wait_file:" + done,
                            "finalize"},
                           bin, dir.path());
    REQUIRE(wait_for_output(user0, "query_ns:self:pmix.qry.ptable "));
    // The same user's other job reads its data; so does root.
    auto user2 = launch_as(nobody, "userjob2", 0, {"init", "get_ns:userjob:0:mine", "finalize"}, bin, dir.path());
    CHECK_MESSAGE(user2.exited_with(0), user2.errors());
    CHECK_MESSAGE(contains(user2.output(), "get_ns:userjob:0:mine PMIX_SUCCESS abc"), user2.output());
    auto root1 = launch("rootjob", 1,
                        {runfile("tests/e2e/script_client"), "init", "get_ns:userjob:0:mine", "lookup:rsecret",
                         "finalize"},
                        dir.path());
    CHECK_MESSAGE(root1.exited_with(0), root1.errors());
    CHECK_MESSAGE(contains(root1.output(), "get_ns:userjob:0:mine PMIX_SUCCESS abc"), root1.output());
    CHECK_MESSAGE(contains(root1.output(), "lookup:rsecret PMIX_SUCCESS xyz from rootjob.0"), root1.output());

    std::fclose(std::fopen(done.c_str(), "w"));
    CHECK_MESSAGE(user0.exited_with(0), user0.errors());
    CHECK_MESSAGE(root0.exited_with(0), root0.errors());
    const auto out = user0.output();
    CAPTURE(out);
    // Its data, its job-level and node-level data: not there for this user.
    CHECK(contains(out, "get_ns:rootjob:0:secret PMIX_ERR_NOT_FOUND"));
    CHECK(contains(out, "get_ns:rootjob:*:pmix.job.size PMIX_ERR_NOT_FOUND"));
    CHECK(contains(out, "get_ns:rootjob:*:pmix.local.size PMIX_ERR_NOT_FOUND"));
    // Its published data, also when the directives claim root's uid: the
    // host hears the caller's own.
    CHECK(contains(out, "lookup:rsecret PMIX_ERR_NOT_FOUND"));
    CHECK(contains(out, "lookup:rsecret:uid=0 PMIX_ERR_NOT_FOUND"));
    // Collectives naming its processes, and its output.
    CHECK(contains(out, "connect:rootjob,self PMIX_ERR_NOT_FOUND"));
    CHECK(contains(out, "fence_with:rootjob,self PMIX_ERR_NOT_FOUND"));
    CHECK(contains(out, "group_construct:g1:0,rootjob/0 PMIX_ERR_NOT_FOUND"));
    CHECK(contains(out, "iof_pull:rootjob:*:all PMIX_ERR_NOT_FOUND"));
    // Queries about it do not reach the host; queries about its own job do.
    CHECK(contains(out, "query_ns:rootjob:pmix.qry.ptable PMIX_ERR_NOT_FOUND"));
    CHECK(contains(out, "query_ns:self:pmix.qry.ptable PMIX_SUCCESS 1"));
    CHECK(calls_starting("iof_pull:").empty());
    CHECK(calls_starting("query: userjob.0").size() == 1);
    CHECK(deregister_job("rootjob") == PMIX_SUCCESS);
    CHECK(deregister_job("userjob") == PMIX_SUCCESS);
    CHECK(deregister_job("userjob2") == PMIX_SUCCESS);
  }

  TEST_CASE("[issue 33.2] an event another user's process raises names that process as its source, whatever it says") {
    require_root();
    temp_dir dir;
    ::chmod(dir.path().c_str(), 0711);
    const auto bin = stage_for_other_user(dir.path());
    host_slots slots;
    slots.notify = true;
    server srv(dir.path(), slots);
    REQUIRE(srv.status() == PMIX_SUCCESS);
    REQUIRE(register_job("rootjob", 1, 1) == PMIX_SUCCESS);
    REQUIRE(register_job("userjob", 1, 1, nobody) == PMIX_SUCCESS);
    auto root0 = launch("rootjob", 0, {runfile("tests/e2e/event_client"), "init", "on:h:all", "wait_events:1", "finalize"},
                        dir.path());
    REQUIRE(wait_for_output(root0, "on:h:all PMIX_SUCCESS"));
    // Both claim root's rank as their source: the first to its namespace
    // (which would route it there), the second to the whole session.
    auto user0 = launch_program_as(nobody, "event_client", "userjob", 0,
                                   {"init", "notify:-4242:namespace:source=rootjob.0",
                                    "notify:-4243:session:source=rootjob.0", "finalize"},
                                   bin, dir.path());
    CHECK_MESSAGE(user0.exited_with(0), user0.errors());
    CHECK(contains(user0.output(), "notify:-4243:session:source=rootjob.0 PMIX_SUCCESS"));
    CHECK_MESSAGE(root0.exited_with(0), root0.errors());
    const auto out = root0.output();
    CAPTURE(out);
    CHECK(contains(out, "event h -4243 userjob.0 "));
    CHECK_FALSE(contains(out, "-4242"));
    // The host heard both, from their real source.
    const auto heard = notifications();
    CAPTURE(heard.size());
    std::size_t from_user = 0;
    for (const auto& n : heard) {
      CHECK_FALSE(contains(n, "rootjob.0"));
      if (contains(n, " userjob.0 ")) ++from_user;
    }
    CHECK(from_user == 2);
  }

  TEST_CASE("[issue 33.3] rendezvous files another user planted: a root server starts beside them and leaves them, "
            "root's tools never trust them") {
    require_root();
    temp_dir dir;
    ::chmod(dir.path().c_str(), 0755);
    // Sticky, world-writable directories, as /tmp is.
    const std::string sys = dir.path() + "/sys", tmp = dir.path() + "/tmp";
    for (const auto& d : {sys, tmp}) {
      ::mkdir(d.c_str(), 0777);
      ::chmod(d.c_str(), 01777);
    }
    // The attacker: a listener of uid 65534 that notes whether anyone came.
    const std::string sock = tmp + "/evil.sock", came = tmp + "/came";
    const std::string listen =
        "import socket, sys\n"
        "s = socket.socket(socket.AF_UNIX)\n"
        "s.bind(sys.argv[1]); s.listen(8)\n"
        "open(sys.argv[2], 'w').write('listening')\n"
        "c, _ = s.accept()\n"
        "open(sys.argv[2], 'w').write('connected')\n"
        "c.recv(100)\n";
    child attacker({"/usr/bin/python3", "-c", listen, sock, came}, environment_with({}), dir.path(), nobody);
    REQUIRE(eventually([&] { return read_file(came) == "listening"; }));
    const std::string host = this_host();
    const std::string live = "evil.0;uds://" + sock + "\n4.2.2\n" + std::to_string(attacker.pid()) + "\n";
    const std::string dead = "evil.0;uds://" + sock + "\n4.2.2\n999999999\n";
    // Planted where the system server's, the session server's, a server
    // with a small PID's and the root server's own namespace file go.
    const std::vector<std::pair<std::string, std::string>> planted{
        {sys + "/pmix.sys." + host, live},
        {tmp + "/pmix." + host + ".tool", live},
        {tmp + "/pmix." + host + ".tool.1", live},
        {tmp + "/pmix." + host + ".tool.rootsrv", dead},
    };
    for (const auto& [path, text] : planted) {
      child plant({"/bin/sh", "-c", "umask 022; printf '%s' \"$1\" > \"$2\"", "plant", text, path},
                  environment_with({}), dir.path(), nobody);
      REQUIRE(plant.exited_with(0));
    }
    std::vector<pmix_info_t> directives(5);
    const bool yes = true;
    PMIX_INFO_LOAD(&directives[0], PMIX_SERVER_TOOL_SUPPORT, &yes, PMIX_BOOL);
    PMIX_INFO_LOAD(&directives[1], PMIX_SERVER_SYSTEM_SUPPORT, &yes, PMIX_BOOL);
    PMIX_INFO_LOAD(&directives[2], PMIX_SERVER_SESSION_SUPPORT, &yes, PMIX_BOOL);
    PMIX_INFO_LOAD(&directives[3], PMIX_SYSTEM_TMPDIR, sys.c_str(), PMIX_STRING);
    PMIX_INFO_LOAD(&directives[4], PMIX_SERVER_NSPACE, "rootsrv", PMIX_STRING);
    const std::string log_file = dir.path() + "/server.log";
    {
      capture_stderr capture{log_file};
      server srv(tmp, {}, directives);
      // The server starts (a planted file named a live process of the
      // attacker: PMIX_ERR_EXISTS made init fail), and leaves every planted
      // file as it was.
      CHECK(srv.status() == PMIX_SUCCESS);
      for (const auto& [path, text] : planted) {
        CAPTURE(path);
        CHECK(read_file(path) == text);
      }
      // Root's tools: the default search passes over the planted session
      // and PID files and finds the real server; the system server's file
      // is the attacker's, so there is none to connect to.
      const std::vector<std::string> env{"PMIX_SERVER_TMPDIR=" + tmp, "PMIX_SYSTEM_TMPDIR=" + sys};
      child search({runfile("tests/e2e/script_client"), "tool_init", "tool_finalize"}, environment_with(env),
                   dir.path());
      CHECK_MESSAGE(search.exited_with(0), search.errors());
      CHECK_MESSAGE(contains(search.output(), "tool_init PMIX_SUCCESS"), search.output());
      CHECK_MESSAGE(contains(search.errors(), "ignoring rendezvous file " + tmp + "/pmix." + host + ".tool.1: owned by uid 65534"),
                    search.errors());
      child system({runfile("tests/e2e/script_client"), "tool_init_system"}, environment_with(env), dir.path());
      CHECK_MESSAGE(system.exited_with(0), system.errors());
      CHECK_FALSE(contains(system.output(), "tool_init_system PMIX_SUCCESS"));
    }
    CHECK(read_file(came) == "listening");  // nobody connected to the attacker
    const auto logged = read_file(log_file);
    CAPTURE(logged);
    CHECK(contains(logged, sys + "/pmix.sys." + host + " belongs to uid 65534"));
    CHECK(contains(logged, tmp + "/pmix." + host + ".tool.rootsrv belongs to uid 65534"));
    for (auto& d : directives) PMIX_INFO_DESTRUCT(&d);
    for (const auto& [path, text] : planted) CHECK(read_file(path) == text);  // finalize left them too
  }

  TEST_CASE("[issue 33.4] PMIx_Log of another user's process: its own name as the source, its text escaped, the "
            "server's facility") {
    require_root();
    temp_dir dir;
    ::chmod(dir.path().c_str(), 0711);
    const auto bin = stage_for_other_user(dir.path());
    const std::string stop = dir.path() + "/stop", syslog_file = dir.path() + "/syslog";
    // A root server without a log up-call, in a process of its own: its
    // stderr is captured, its syslog() calls recorded by a preloaded shim.
    std::vector<std::string> host_env{"SERVER_HOST_STOP=" + stop, "SERVER_HOST_JOB=userjob:1:65534",
                                      "LD_PRELOAD=" + runfile("tests/e2e/libsyslog_shim.so"),
                                      "SYSLOG_SHIM_FILE=" + syslog_file};
#if defined(__SANITIZE_ADDRESS__)
    // The shim comes before ASan's runtime, which it does not interpose on.
    const char* asan = std::getenv("ASAN_OPTIONS");
    host_env.push_back(std::string{"ASAN_OPTIONS="} + (asan != nullptr ? asan : "") + ":verify_asan_link_order=0");
#endif
    child host({runfile("tests/e2e/server_host"), std::string{PMIX_SERVER_TMPDIR} + "=" + dir.path()},
               environment_with(host_env), dir.path());
    REQUIRE(wait_for_output(host, "ready"));
    auto env = server_host_env(host);
    env.push_back("LD_LIBRARY_PATH=" + bin);
    const std::string evil = "hello\n[rootjob:0] forged line\x1b[31m";
    const int authpriv_emerg = LOG_AUTHPRIV | LOG_EMERG;
    const std::string priority = std::to_string(authpriv_emerg);
    child user({bin + "/script_client", "init", "log_as:rootjob.0:" + priority + ":stderr:" + evil,
                "log_as:rootjob.0:" + priority + ":syslog:" + evil, "finalize"},
               environment_with(env), dir.path(), nobody);
    CHECK_MESSAGE(user.exited_with(0), user.errors());
    CHECK(count(user.output(), "log_as PMIX_SUCCESS") == 2);
    std::fclose(std::fopen(stop.c_str(), "w"));
    CHECK(host.exited_with(0));
    const auto errors = host.errors();
    CAPTURE(errors);
    const std::string escaped = "hello\\x0a[rootjob:0] forged line\\x1b[31m";
    CHECK(contains(errors, "[userjob:0] " + escaped + "\n"));
    CHECK(errors.find('\x1b') == std::string::npos);
    std::size_t start = 0;
    while (start < errors.size()) {  // no line claims to be root's rank
      const auto end = errors.find('\n', start);
      CHECK(errors.compare(start, 9, "[rootjob:") != 0);
      if (end == std::string::npos) break;
      start = end + 1;
    }
    const auto logged = read_file(syslog_file);
    CAPTURE(logged);
    // The severity it asked for, the server's facility (the default).
    CHECK(contains(logged, "pri=" + std::to_string(LOG_EMERG) + " [userjob:0] " + escaped + "\n"));
    CHECK_FALSE(contains(logged, "pri=" + priority + " "));
  }

  TEST_CASE("[issue 33.5] what one process or one job makes the server hold is bounded: committed data, requests "
            "waiting for a rank that never starts, replies never read; a closed connection leaves nothing behind") {
    temp_dir dir;
    const std::size_t six = 6u << 20;
    scoped_env commit{"PMIX_CXX_MAX_COMMIT", std::to_string(8u << 20)};
    scoped_env commit_job{"PMIX_CXX_MAX_COMMIT_JOB", std::to_string(12u << 20)};
    scoped_env backlog_job{"PMIX_CXX_MAX_SEND_BACKLOG_JOB", std::to_string(32u << 20)};
    const std::string log_file = dir.path() + "/server.log", done = dir.path() + "/done";
    const std::string script = runfile("tests/e2e/script_client");
    std::string big0, big1, other;
    std::size_t commit_growth_kb = 0, gets_growth_kb = 0, replies_growth_kb = 0;
    std::map<int, int> long_keys, padded;
    int held = 0, held_after_close = -1;
    bool reader_cut = false;
    {
      capture_stderr capture{log_file};
      server srv(dir.path());
      REQUIRE(srv.status() == PMIX_SUCCESS);
      for (const auto& [ns, n] : std::vector<std::pair<std::string, int>>{
               {"big", 2}, {"other", 1}, {"never", 1}, {"asker", 1}, {"holder", 1}, {"reader", 1}})
        REQUIRE(register_job(ns, static_cast<std::uint32_t>(n), static_cast<std::uint32_t>(n)) == PMIX_SUCCESS);

      // Committed data: rank 0 commits 6 MiB eight times under new keys
      // (over PMIX_CXX_MAX_COMMIT at the second: cut off); rank 1 then
      // commits 5 and 2 MiB, over the job's 12 MiB with rank 0's 6 (cut
      // off); another job goes on.
      auto rss = held_heap_kb();
      std::vector<std::string> steps{script, "init"};
      for (int k = 0; k < 8; ++k) {
        steps.push_back("put_pattern:k" + std::to_string(k) + "=" + std::to_string(six));
        steps.push_back("commit");
      }
      steps.push_back("fence");
      auto c0 = launch("big", 0, steps, dir.path());
      CHECK_MESSAGE(c0.exited_with(0), c0.errors());
      big0 = c0.output();
      commit_growth_kb = held_heap_kb() - std::min(rss, held_heap_kb());
      auto c1 = launch("big", 1,
                       {script, "init", "put_pattern:c=" + std::to_string(5u << 20), "commit",
                        "put_pattern:d=" + std::to_string(2u << 20), "commit", "fence"},
                       dir.path());
      CHECK_MESSAGE(c1.exited_with(0), c1.errors());
      big1 = c1.output();
      auto c2 = launch("other", 0, {script, "init", "put:x=1", "commit", "fence", "finalize"}, dir.path());
      CHECK_MESSAGE(c2.exited_with(0), c2.errors());
      other = c2.output();

      // Gets for a rank that never starts: 3,000 with 32 KiB keys, then
      // 3,000 with 30 KiB of directives each, from a connection that then
      // closes.
      rss = held_heap_kb();
      pmix_proc_t asker;
      PMIX_LOAD_PROCID(&asker, "asker", 0);
      const int a = raw_client(asker);
      REQUIRE(a >= 0);
      std::string frames;
      for (int k = 0; k < 3000; ++k) frames += get_frame(100 + k, "never", 0, std::string(32 * 1024, 'k'));
      send_all(a, frames);
      long_keys = reply_statuses(a, 3000);
      std::string{}.swap(frames);  // this test's own 96 MiB go
      for (int k = 0; k < 3000; ++k) frames += get_frame(10000 + k, "never", 0, "key", 30 * 1024);
      send_all(a, frames);
      std::string{}.swap(frames);
      // The refused ones are answered at once; the rest wait for the rank.
      REQUIRE(eventually([&] {
        const auto s = take_snapshot();
        return s.nspace("never")->rank(0) != nullptr;
      }));
      const auto refused = reply_statuses(a, 1);  // at least one over the limit is answered
      padded = refused;
      held = take_snapshot().nspace("never")->rank(0)->waiting_gets;
      ::close(a);
      eventually([] { return take_snapshot().nspace("never")->rank(0)->waiting_gets == 0; });
      held_after_close = take_snapshot().nspace("never")->rank(0)->waiting_gets;
      gets_growth_kb = held_heap_kb() - std::min(rss, held_heap_kb());

      // Replies never read: a process of the job "reader" asks 50 times for
      // a rank's 4 MiB of data and reads nothing (200 MiB).
      auto holder = launch("holder", 0,
                           {script, "init", "put_pattern:blob=" + std::to_string(4u << 20), "commit",
                            "wait_file:" + done, "finalize"},
                           dir.path());
      REQUIRE(wait_for_output(holder, "commit PMIX_SUCCESS"));
      rss = held_heap_kb();
      pmix_proc_t reader;
      PMIX_LOAD_PROCID(&reader, "reader", 0);
      const int r = raw_client(reader);
      REQUIRE(r >= 0);
      int small = 4096;
      ::setsockopt(r, SOL_SOCKET, SO_RCVBUF, &small, sizeof small);
      for (int k = 0; k < 50; ++k) frames += get_frame(1 + k, "holder", 0, "blob");
      send_all(r, frames);
      reader_cut = eventually([] { return take_snapshot().connections <= 1; });  // the holder's is left
      replies_growth_kb = held_heap_kb() - std::min(rss, held_heap_kb());
      ::close(r);
      std::fclose(std::fopen(done.c_str(), "w"));
      CHECK(holder.exited_with(0));
      for (const auto* ns : {"big", "other", "never", "asker", "holder", "reader"}) CHECK(deregister_job(ns) == PMIX_SUCCESS);
    }
    const auto logged = read_file(log_file);
    CAPTURE(logged);
    // Committed data.
    CAPTURE(big0);
    CAPTURE(big1);
    CHECK(count(big0, "commit PMIX_SUCCESS") >= 1);
    CHECK_FALSE(contains(big0, "fence PMIX_SUCCESS"));
    CHECK_FALSE(contains(big1, "fence PMIX_SUCCESS"));
    CHECK(contains(logged, "big:0 (uid 0): a commit would make the server hold 12582962 bytes of its data, over "
                           "PMIX_CXX_MAX_COMMIT (8388608): closing its connection"));
    CHECK(contains(logged, "big:1 (uid 0): a commit would make the server hold more than 12582912 bytes of its job's "
                           "data (PMIX_CXX_MAX_COMMIT_JOB)"));
    CHECK_MESSAGE(contains(other, "fence PMIX_SUCCESS"), other);
    CHECK(commit_growth_kb < 24 * 1024);  // 48 MiB were sent; 6 are kept
    // Gets for a rank that never starts.
    CHECK(long_keys[PMIX_ERR_BAD_PARAM] == 3000);
    CHECK(padded[PMIX_ERR_OUT_OF_RESOURCE] == 1);
    CHECK(held > 0);
    CHECK(held < 3000);  // PMIX_CXX_MAX_REQUEST_BYTES (16 MiB) let in about 540
    CHECK(held_after_close == 0);
    CHECK(gets_growth_kb < 16 * 1024);
    CHECK(contains(logged, "(PMIX_CXX_MAX_REQUEST_BYTES)"));
    // Replies never read.
    CHECK(reader_cut);
    CHECK(contains(logged, "(PMIX_CXX_MAX_SEND_BACKLOG_JOB, for the peers of its job together): closing that connection"));
    CHECK(replies_growth_kb < 64 * 1024);
  }

  TEST_CASE("[issue 33.6] connections that never send a byte do not keep a new job out, with more of them than the "
            "server has descriptors") {
    // The server in a process of its own with 1,024 descriptors; 1,100
    // connections that never send anything, and whose handshake never
    // times out here (an hour): they held every place in the handshake
    // queue and the rest of them the listen queue, so a new job's
    // processes were never taken.
    temp_dir dir;
    rlimit mine{};
    ::getrlimit(RLIMIT_NOFILE, &mine);
    if (mine.rlim_max < 1300) FAIL("this test needs 1,300 descriptors (the hard limit is ", mine.rlim_max, ")");
    const rlimit raised{std::max<rlim_t>(mine.rlim_cur, 1300), mine.rlim_max};
    REQUIRE(::setrlimit(RLIMIT_NOFILE, &raised) == 0);
    const std::string stop = dir.path() + "/stop";
    child host({"/usr/bin/prlimit", "--nofile=1024:1024", runfile("tests/e2e/server_host"),
                std::string{PMIX_SERVER_TMPDIR} + "=" + dir.path()},
               environment_with({"SERVER_HOST_STOP=" + stop, "SERVER_HOST_JOB=flooded:2",
                                 "PMIX_CXX_HANDSHAKE_TIMEOUT_MS=3600000"}),
               dir.path());
    REQUIRE(wait_for_output(host, "ready"));
    auto env = server_host_env(host);
    std::string uri;
    for (const auto& e : env)
      if (e.rfind("PMIX_CXX_SERVER_URI=", 0) == 0) uri = e.substr(20);
    std::vector<int> idle;
    for (int k = 0; k < 1100; ++k) {
      const int fd = connect_raw(uri);
      REQUIRE(fd >= 0);
      idle.push_back(fd);
    }
    // The job's two processes start, fence and finish.
    std::vector<child> ranks;
    for (const char* rank : {"0", "1"}) {
      auto with_rank = env;
      with_rank.push_back(std::string{"PMIX_RANK="} + rank);
      ranks.emplace_back(std::vector<std::string>{runfile("tests/e2e/script_client"), "init", "fence", "finalize"},
                         environment_with(with_rank), dir.path());
    }
    for (auto& c : ranks) {
      CHECK_MESSAGE(c.exited_with(0), c.errors());
      CHECK_MESSAGE(contains(c.output(), "fence PMIX_SUCCESS"), c.output());
    }
    for (int fd : idle) ::close(fd);
    std::fclose(std::fopen(stop.c_str(), "w"));
    CHECK(host.exited_with(0));
    CHECK_MESSAGE(contains(host.errors(), "(PMIX_CXX_HANDSHAKE_GRACE_MS) closed for newer ones"), host.errors());
    ::setrlimit(RLIMIT_NOFILE, &mine);
  }

  TEST_CASE("[issue 33.6] a process the server turns away before reading anything tries again, and only then") {
    // A stand-in listener between the client and the server: it answers the
    // first `busy` connections as a server with a full handshake queue does
    // (a ConnectReply of id 0 saying PMIX_ERR_OUT_OF_RESOURCE, then the
    // end), and relays the next one to the real server.
    temp_dir dir;
    server srv(dir.path());
    REQUIRE(srv.status() == PMIX_SUCCESS);
    REQUIRE(register_job("turned", 1, 1) == PMIX_SUCCESS);
    const auto real = server_uri();
    const std::string front = dir.path() + "/front.sock";
    const int listener = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    std::strncpy(addr.sun_path, front.c_str(), sizeof addr.sun_path - 1);
    REQUIRE(::bind(listener, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0);
    REQUIRE(::listen(listener, 16) == 0);
    pmix::wire::Envelope e;
    e.set_id(0);
    e.mutable_connect_reply()->set_status(PMIX_ERR_OUT_OF_RESOURCE);
    const auto busy_frame = pmix::protocol::to_frame(e);
    std::atomic<int> accepted{0};
    // `busy` connections turned away, then one more relayed (`relay`) or
    // closed unanswered, or none.
    enum class then { relay, close, none };
    auto stand_in = [&](int busy, then next) {
      return std::thread([&, busy, next] {
        for (int k = 0; k < busy + (next == then::none ? 0 : 1); ++k) {
          const int c = ::accept(listener, nullptr, nullptr);
          if (c < 0) return;
          ++accepted;
          if (k < busy) {
            send_all(c, busy_frame);
            ::close(c);
            continue;
          }
          if (next == then::relay) {
            const int s = connect_raw(real);
            pollfd fds[2] = {{c, POLLIN, 0}, {s, POLLIN, 0}};
            for (bool open = true; open && ::poll(fds, 2, 60000) > 0;)
              for (int i = 0; i < 2 && open; ++i)
                if (fds[i].revents != 0) open = relay(fds[i].fd, fds[1 - i].fd);
            ::close(s);
          }
          ::close(c);
          return;
        }
      });
    };
    auto run_client = [&] {
      pmix_proc_t p;
      PMIX_LOAD_PROCID(&p, "turned", 0);
      char** env = nullptr;
      PMIx_server_setup_fork(&p, &env);
      std::vector<std::string> vars;
      for (char** v = env; v != nullptr && *v != nullptr; ++v) {
        std::string var = *v;
        if (var.rfind("PMIX_SERVER_URI", 0) == 0 || var.rfind("PMIX_CXX_SERVER_URI", 0) == 0)
          var = var.substr(0, var.find('=') + 1) + "turned-front.0;uds://" + front;
        vars.push_back(var);
      }
      PMIX_ARGV_FREE(env);
      child c({runfile("tests/e2e/script_client"), "init", "finalize"}, environment_with(vars), dir.path());
      c.wait();
      return c.output();
    };
    // Turned away twice, then served.
    auto t = stand_in(2, then::relay);
    auto out = run_client();
    t.join();
    CHECK_MESSAGE(contains(out, "init PMIX_SUCCESS"), out);
    CHECK(accepted == 3);
    // Always turned away: it gives up after six attempts, saying why.
    accepted = 0;
    t = stand_in(6, then::none);
    out = run_client();
    t.join();
    CHECK_MESSAGE(contains(out, "init PMIX_ERR_OUT_OF_RESOURCE"), out);
    CHECK(accepted == 6);
    // Closed without that answer (the server may have read the request):
    // no second attempt.
    accepted = 0;
    t = stand_in(0, then::close);
    out = run_client();
    t.join();
    CHECK_MESSAGE(contains(out, "init PMIX_ERR_LOST_CONNECTION"), out);
    CHECK(accepted == 1);
    ::close(listener);
    CHECK(deregister_job("turned") == PMIX_SUCCESS);
  }

  TEST_CASE("[issue 33.9] PMIX_TIMEOUT ends a fence, a get, a connect, a disconnect, a group construct and destruct, "
            "a waiting lookup and a query, and leaves nothing behind: a late contribution starts afresh") {
    temp_dir dir;
    host_slots slots;
    slots.publish = slots.query_held = true;  // a lookup with PMIX_WAIT, and queries, the host never answers
    const std::string go = dir.path() + "/go", log_file = dir.path() + "/server.log";
    std::string out;
    {
      capture_stderr capture{log_file};
      server srv(dir.path(), slots);
      REQUIRE(srv.status() == PMIX_SUCCESS);
      REQUIRE(register_job("timed", 2, 2) == PMIX_SUCCESS);
      REQUIRE(register_job("absent", 1, 1) == PMIX_SUCCESS);  // its process never starts
      const std::string script = runfile("tests/e2e/script_client");
      // Rank 1 makes group h with rank 0, then fences only once rank 0 has
      // timed out of everything (h's destruct among it).
      auto late = launch("timed", 1, {script, "init", "group_construct:h:0,1", "wait_file:" + go, "fence", "finalize"},
                         dir.path());
      auto c = launch("timed", 0,
                      {script, "init", "group_construct:h:0,1", "fence:timeout=1", "get_ns:absent:0:never:timeout=1",
                       "connect:self,absent:timeout=1", "disconnect:self,absent:timeout=1",
                       "group_construct:g:0,1:timeout=1", "group_destruct:h:timeout=1",
                       "lookup:nokey:wait:timeout=1", "query_ns:self:pmix.qry.ptable:timeout=1", "touch:" + go,
                       "fence", "finalize"},
                      dir.path());
      CHECK_MESSAGE(c.exited_with(0), c.errors());
      CHECK_MESSAGE(late.exited_with(0), late.errors());
      out = c.output();
      CHECK_MESSAGE(contains(late.output(), "fence PMIX_SUCCESS"), late.output());
      // Nothing the timed-out requests made the server hold is left.
      const auto snap = take_snapshot();
      CHECK(snap.fences == 0);
      const auto* absent = snap.nspace("absent");
      REQUIRE(absent != nullptr);
      REQUIRE(absent->rank(0) != nullptr);
      CHECK(absent->rank(0)->waiting_gets == 0);
      CHECK(deregister_job("timed") == PMIX_SUCCESS);
      CHECK(deregister_job("absent") == PMIX_SUCCESS);
    }
    CAPTURE(out);
    CHECK(contains(out, "fence:timeout=1 PMIX_ERR_TIMEOUT"));
    CHECK(contains(out, "get_ns:absent:0:never:timeout=1 PMIX_ERR_TIMEOUT"));
    CHECK(contains(out, "connect:self,absent:timeout=1 PMIX_ERR_TIMEOUT"));
    CHECK(contains(out, "disconnect:self,absent:timeout=1 PMIX_ERR_TIMEOUT"));
    CHECK(contains(out, "group_construct:h:0,1 PMIX_SUCCESS"));
    CHECK(contains(out, "group_construct:g:0,1:timeout=1 PMIX_ERR_TIMEOUT"));
    CHECK(contains(out, "group_destruct:h:timeout=1 PMIX_ERR_TIMEOUT"));
    CHECK(contains(out, "lookup:nokey:wait:timeout=1 PMIX_ERR_TIMEOUT"));
    CHECK(contains(out, "query_ns:self:pmix.qry.ptable:timeout=1 PMIX_ERR_TIMEOUT"));
    // The late contribution did not complete the fence that timed out: the
    // two ranks' next fence is a new one.
    CHECK(contains(out, "\nfence PMIX_SUCCESS"));
    const auto logged = read_file(log_file);
    CAPTURE(logged);
    CHECK(contains(logged, "a fence timed out (PMIX_TIMEOUT): 1 of 2 local participants came; waiting for timed:1"));
    CHECK(contains(logged, "PMIx_Get of absent:0 timed out (PMIX_TIMEOUT)"));
  }

  TEST_CASE("[issue 33.9] PMIX_TIMEOUT ends a publish and an unpublish the host never answers") {
    // The timeout audit of 2026-12-08: the server handed PMIX_TIMEOUT to
    // the host and timed nothing itself, so these waited for ever.
    temp_dir dir;
    host_slots slots;
    slots.publish_held = true;
    const std::string log_file = dir.path() + "/server.log";
    std::string out;
    {
      capture_stderr capture{log_file};
      server srv(dir.path(), slots);
      REQUIRE(srv.status() == PMIX_SUCCESS);
      REQUIRE(register_job("pub", 1, 1) == PMIX_SUCCESS);
      auto c = launch("pub", 0,
                      {runfile("tests/e2e/script_client"), "init", "publish:held=1:timeout=1",
                       "unpublish:held:timeout=1", "finalize"},
                      dir.path());
      CHECK_MESSAGE(c.exited_with(0), c.errors());
      out = c.output();
      CHECK(deregister_job("pub") == PMIX_SUCCESS);
    }  // the server object answers the held calls now, late: dropped
    CAPTURE(out);
    CHECK(contains(out, "publish:held=1:timeout=1 PMIX_ERR_TIMEOUT"));
    CHECK(contains(out, "unpublish:held:timeout=1 PMIX_ERR_TIMEOUT"));
    CHECK(contains(out, "finalize PMIX_SUCCESS"));
    const auto logged = read_file(log_file);
    CAPTURE(logged);
    CHECK(contains(logged, "PMIx_Publish timed out (PMIX_TIMEOUT)"));
    CHECK(contains(logged, "PMIx_Unpublish timed out (PMIX_TIMEOUT)"));
  }

  TEST_CASE("[issue 33.5] a process waits for at most PMIX_CXX_MAX_REQUESTS gets, a job for "
            "PMIX_CXX_MAX_REQUESTS_JOB: the next are refused at once, the rest wait") {
    // The resource audit of 2026-12-08: these two counts had no test (33.5
    // above trips the request bytes only).
    temp_dir dir;
    scoped_env per_process{"PMIX_CXX_MAX_REQUESTS", "3"};
    scoped_env per_job{"PMIX_CXX_MAX_REQUESTS_JOB", "5"};
    server srv(dir.path());
    REQUIRE(srv.status() == PMIX_SUCCESS);
    REQUIRE(register_job("never", 1, 1) == PMIX_SUCCESS);
    REQUIRE(register_job("askers", 2, 2) == PMIX_SUCCESS);
    pmix_proc_t p0, p1;
    PMIX_LOAD_PROCID(&p0, "askers", 0);
    PMIX_LOAD_PROCID(&p1, "askers", 1);
    const int a0 = raw_client(p0), a1 = raw_client(p1);
    REQUIRE(a0 >= 0);
    REQUIRE(a1 >= 0);
    const auto waiting = [] {
      const auto s = take_snapshot();
      const auto* n = s.nspace("never");
      return n != nullptr && n->rank(0) != nullptr ? n->rank(0)->waiting_gets : -1;
    };
    std::string frames;
    for (int k = 0; k < 4; ++k) frames += get_frame(100 + k, "never", 0, "key");
    // Rank 0: three wait, the fourth is refused (the process's limit).
    send_all(a0, frames);
    CHECK(reply_statuses(a0, 1) == std::map<int, int>{{PMIX_ERR_OUT_OF_RESOURCE, 1}});
    CHECK(eventually([&] { return waiting() == 3; }));
    // Rank 1: two more wait, then the job's five are taken: two refused.
    send_all(a1, frames);
    CHECK(reply_statuses(a1, 2) == std::map<int, int>{{PMIX_ERR_OUT_OF_RESOURCE, 2}});
    CHECK(eventually([&] { return waiting() == 5; }));
    ::close(a0);
    ::close(a1);
    CHECK(eventually([&] { return waiting() == 0; }));
  }

  TEST_CASE("[issue 33.8] a credential the server issues lives at most its cap, computed without overflow") {
    require_root();
    temp_dir dir;
    const std::string script = runfile("tests/e2e/script_client");
    const std::string far = dir.path() + "/far", max = dir.path() + "/max", plain = dir.path() + "/plain",
                      capped = dir.path() + "/capped";
    {
      server srv(dir.path());
      REQUIRE(srv.status() == PMIX_SUCCESS);
      REQUIRE(register_job("creds", 1, 1) == PMIX_SUCCESS);
      const auto before = static_cast<std::int64_t>(std::time(nullptr));
      auto c = launch("creds", 0,
                      {script, "init", "credential:" + far + ":1000000000000",
                       "credential:" + max + ":9223372036854775807", "credential:" + plain, "validate:" + far,
                       "validate:" + max, "finalize"},
                      dir.path());
      CHECK_MESSAGE(c.exited_with(0), c.errors());
      const auto after = static_cast<std::int64_t>(std::time(nullptr));
      const auto out = c.output();
      CAPTURE(out);
      CHECK(contains(out, "validate:" + far + " PMIX_SUCCESS"));
      CHECK(contains(out, "validate:" + max + " PMIX_SUCCESS"));
      // The default cap is a day; without PMIX_TIMEOUT, an hour.
      for (const auto& path : {far, max}) {
        CAPTURE(path);
        CHECK(expiry_of(path) >= before + 86400);
        CHECK(expiry_of(path) <= after + 86400);
      }
      CHECK(expiry_of(plain) >= before + 3600);
      CHECK(expiry_of(plain) <= after + 3600);
      CHECK(deregister_job("creds") == PMIX_SUCCESS);
    }
    scoped_env cap{"PMIX_CXX_MAX_CREDENTIAL_LIFETIME_S", "60"};
    server srv(dir.path());
    REQUIRE(srv.status() == PMIX_SUCCESS);
    REQUIRE(register_job("creds", 1, 1) == PMIX_SUCCESS);
    const auto before = static_cast<std::int64_t>(std::time(nullptr));
    auto c = launch("creds", 0, {script, "init", "credential:" + capped + ":3600", "finalize"}, dir.path());
    CHECK_MESSAGE(c.exited_with(0), c.errors());
    const auto after = static_cast<std::int64_t>(std::time(nullptr));
    CHECK(expiry_of(capped) >= before + 60);
    CHECK(expiry_of(capped) <= after + 60);
    CHECK(deregister_job("creds") == PMIX_SUCCESS);
  }
}
