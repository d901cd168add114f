// End-to-end: isolation between users, and bounds on what one job can make
// the server hold (issue 33, docs/security.md). The server runs as root, as
// inside slurmstepd or a launcher; the processes of another user (uid 65534)
// try, over the real socket, to read, forge and block what belongs to a
// root job. Needs root, as CI has.
#include <doctest/doctest.h>
#include <pmix_server.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <syslog.h>
#include <unistd.h>

#include <algorithm>
#include <ctime>
#include <fstream>
#include <string>
#include <vector>

#include "tests/e2e/host.hpp"
#include "tests/e2e/hostile.hpp"

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
    child host({runfile("tests/e2e/server_host"), std::string{PMIX_SERVER_TMPDIR} + "=" + dir.path()},
               environment_with({"SERVER_HOST_STOP=" + stop, "SERVER_HOST_JOB=userjob:1:65534",
                                 "LD_PRELOAD=" + runfile("tests/e2e/libsyslog_shim.so"),
                                 "SYSLOG_SHIM_FILE=" + syslog_file}),
               dir.path());
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
      if (e.rfind("PMIX_SERVER_URI41=", 0) == 0) uri = e.substr(18);
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
