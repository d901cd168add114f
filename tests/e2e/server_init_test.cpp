// PMIx_server_init (spec 000): every directive, the rendezvous files with
// their modes and PID rules, tool access by user, and failures that leave
// nothing behind. Each test names the spec section it shows.
#include <arpa/inet.h>
#include <dirent.h>
#include <doctest/doctest.h>
#include <hwloc.h>
#include <hwloc/export.h>
#include <netinet/in.h>
#include <pmix.h>
#include <pmix_server.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "server/rendezvous.hpp"
#include "tests/e2e/host.hpp"
#include "tests/e2e/hostile.hpp"

using namespace pmix::test;

namespace {

const std::string script = runfile("tests/e2e/script_client");
const std::string server_host = runfile("tests/e2e/server_host");
const std::string host = this_host();

struct directives {
  std::vector<pmix_info_t> v;
  directives() = default;
  directives(const directives&) = delete;
  ~directives() {
    for (auto& i : v) PMIX_INFO_DESTRUCT(&i);
  }
  directives& flag(const char* key, bool on = true) {
    v.emplace_back();
    PMIX_INFO_LOAD(&v.back(), key, &on, PMIX_BOOL);
    return *this;
  }
  // A bool directive marked PMIX_INFO_REQD.
  directives& required(const char* key, bool on = true) {
    flag(key, on);
    v.back().flags |= PMIX_INFO_REQD;
    return *this;
  }
  directives& text(const char* key, const std::string& s) {
    v.emplace_back();
    PMIX_INFO_LOAD(&v.back(), key, s.c_str(), PMIX_STRING);
    return *this;
  }
  directives& integer(const char* key, int n) {
    v.emplace_back();
    PMIX_INFO_LOAD(&v.back(), key, &n, PMIX_INT);
    return *this;
  }
  directives& pointer(const char* key, void* p) {
    v.emplace_back();
    PMIX_INFO_LOAD(&v.back(), key, p, PMIX_POINTER);
    return *this;
  }
};

pmix_status_t init(const directives& d, pmix_server_module_t* module = nullptr) {
  return PMIx_server_init(module, const_cast<pmix_info_t*>(d.v.data()), d.v.size());
}

std::set<std::string> entries(const std::string& dir) {
  std::set<std::string> out;
  if (DIR* d = ::opendir(dir.c_str())) {
    while (auto* e = ::readdir(d))
      if (std::strcmp(e->d_name, ".") != 0 && std::strcmp(e->d_name, "..") != 0) out.insert(e->d_name);
    ::closedir(d);
  }
  return out;
}

int mode_of(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 ? static_cast<int>(st.st_mode & 07777) : -1;
}

bool exists(const std::string& path) { return ::access(path.c_str(), F_OK) == 0; }

std::set<std::string> threads() { return entries("/proc/self/task"); }

// No thread that `before` did not have (one of those may have ended since:
// a thread another test joined can stay listed in /proc for a moment).
bool no_new_threads(const std::set<std::string>& before) {
  for (const auto& t : threads())
    if (before.count(t) == 0) return false;
  return true;
}
// Each open descriptor with what it refers to ("7 -> socket:[4711]"): a
// number closed and reused for something else counts as new.
std::set<std::string> fds() {
  std::set<std::string> out;
  for (const auto& n : entries("/proc/self/fd")) {
    char target[512];
    const auto len = ::readlink(("/proc/self/fd/" + n).c_str(), target, sizeof target - 1);
    if (len >= 0) out.insert(n + " -> " + std::string(target, static_cast<std::size_t>(len)));
  }
  return out;
}

bool no_new_fds(const std::set<std::string>& before) {
  for (const auto& f : fds())
    if (before.count(f) == 0 && f.find(" -> /proc/") == std::string::npos) return false;
  return true;
}

// What a process can observe of a server that is not running: no thread or
// descriptor it did not have before (one it had may have ended since, as a
// thread of an earlier test's server still listed in /proc for a moment),
// and nothing new in its directories.
struct baseline {
  std::set<std::string> thread_ids = threads();
  std::set<std::string> descriptors = fds();
  std::vector<std::pair<std::string, std::set<std::string>>> dirs;
  explicit baseline(const std::vector<std::string>& watched) {
    for (const auto& d : watched) dirs.emplace_back(d, entries(d));
  }
  bool unchanged() const {
    const bool settled = eventually([&] { return no_new_threads(thread_ids) && no_new_fds(descriptors); });
    if (!settled) {
      for (const auto& t : threads())
        if (thread_ids.count(t) == 0) MESSAGE("new thread " << t);
      for (const auto& f : fds())
        if (descriptors.count(f) == 0) MESSAGE("new descriptor " << f);
    }
    bool same = settled;
    for (const auto& [d, before] : dirs) {
      const auto now = entries(d);
      if (now != before) MESSAGE(d << " has " << now.size() << " entries, had " << before.size());
      same = same && now == before;
    }
    return same;
  }
};

pmix::server::rendezvous_contents contents_of(const std::string& path) {
  pmix::server::rendezvous_contents c;
  REQUIRE_MESSAGE(pmix::server::read_file(path, c), path);
  return c;
}

// A tool process; its environment has no launcher variables.
child run_tool(const std::vector<std::string>& steps, const std::string& dir,
               std::vector<std::string> env = {}, uid_t as = static_cast<uid_t>(-1),
               const std::string& program = script) {
  std::vector<std::string> argv{program};
  argv.insert(argv.end(), steps.begin(), steps.end());
  env.push_back("PMIX_NAMESPACE=");
  env.push_back("PMIX_SERVER_URI41=");
  env.push_back("PMIX_SERVER_URI4=");
  return child(argv, environment_with(env), dir, as);
}

bool can_connect_tcp4(int port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<std::uint16_t>(port));
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  const bool ok = ::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0;
  ::close(fd);
  return ok;
}

// A TCP port on 127.0.0.1 held for the test's duration.
struct held_port {
  int fd = -1;
  int port = 0;
  held_port() {
    fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    REQUIRE(::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0);
    REQUIRE(::listen(fd, 1) == 0);
    socklen_t len = sizeof a;
    ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
    port = ntohs(a.sin_port);
  }
  ~held_port() { ::close(fd); }
};

constexpr uid_t nobody = 65534;

std::string stage_for_nobody(const std::string& dir) { return stage_for_other_user(dir); }

}  // namespace

TEST_SUITE("server init: identity and directories") {
  TEST_CASE("[20.2.247.4.1 PMIX_SERVER_TMPDIR] a missing server tmpdir is created and removed at finalize") {
    temp_dir dir;
    const auto tmp = dir.path() + "/made/for/server";
    directives d;
    d.text(PMIX_SERVER_TMPDIR, tmp);
    REQUIRE(init(d) == PMIX_SUCCESS);
    CHECK(exists(tmp));
    CHECK(mode_of(dir.path() + "/made") == (0700 & ~[] { mode_t m = ::umask(0); ::umask(m); return m; }()));
    // The server's own directory (issue 14: nobody else can create, replace
    // or remove anything in it), which other users can pass through but not
    // list, holding the socket any user may reach: who connects is decided
    // by the peer credentials against the host's registration.
    const auto made = entries(tmp);
    REQUIRE(made.size() == 1);
    const auto own = tmp + "/" + *made.begin();
    CHECK(own.rfind(tmp + "/pmix-cxx." + std::to_string(::getpid()) + ".", 0) == 0);
    CHECK(mode_of(own) == 0711);
    CHECK(entries(own) == std::set<std::string>{"sock"});
    const auto sock = own + "/sock";
    struct stat st;
    REQUIRE(::stat(sock.c_str(), &st) == 0);
    CHECK(S_ISSOCK(st.st_mode));
    CHECK(mode_of(sock) == 0777);
    CHECK(PMIx_server_finalize() == PMIX_SUCCESS);
    CHECK_FALSE(exists(dir.path() + "/made"));
  }

  TEST_CASE("[20.2.247.4.1 PMIX_SERVER_RANK] a rank in the environment that is not a simple non-negative number fails init, leaving nothing") {
    temp_dir dir;
    baseline before({dir.path()});
    ::setenv("PMIX_SERVER_RANK", "7x", 1);
    directives d;
    d.text(PMIX_SERVER_TMPDIR, dir.path());
    CHECK(init(d) == PMIX_ERR_BAD_PARAM);
    ::unsetenv("PMIX_SERVER_RANK");
    CHECK(PMIx_server_finalize() == PMIX_ERR_INIT);
    CHECK(before.unchanged());
    ::setenv("PMIX_SERVER_RANK", "7", 1);
    REQUIRE(init(d) == PMIX_SUCCESS);
    ::unsetenv("PMIX_SERVER_RANK");
    pmix_proc_t p;
    PMIX_LOAD_PROCID(&p, "x", 0);
    char** env = nullptr;
    PMIx_server_setup_fork(&p, &env);
    std::string all;
    for (char** e = env; *e != nullptr; ++e) all += std::string{*e} + "\n";
    PMIX_ARGV_FREE(env);
    CHECK(contains(all, "PMIX_SERVER_RANK=7\n"));
    CHECK(PMIx_server_finalize() == PMIX_SUCCESS);
  }
}

TEST_SUITE("server init: rendezvous files") {
  TEST_CASE("[20.2.247.6.1 PMIX_SERVER_TOOL_SUPPORT] pmix.<host>.tool.<pid> and .<nspace>, mode 0600, found by PID and by namespace") {
    temp_dir dir;
    const mode_t old = ::umask(022);
    directives d;
    d.text(PMIX_SERVER_TMPDIR, dir.path()).text(PMIX_SERVER_NSPACE, "tooly").flag(PMIX_SERVER_TOOL_SUPPORT);
    REQUIRE(init(d) == PMIX_SUCCESS);
    ::umask(old);
    const auto by_pid = dir.path() + "/pmix." + host + ".tool." + std::to_string(getpid());
    const auto by_ns = dir.path() + "/pmix." + host + ".tool.tooly";
    CHECK(mode_of(by_pid) == 0600);
    CHECK(mode_of(by_ns) == 0600);
    const auto c = contents_of(by_pid);
    CHECK(c.pid == getpid());
    CHECK(c.version == "4.2.2");
    // The first line names the loopback listener that OpenPMIx's tools
    // can reach too (issue 35); our socket comes next.
    CHECK(contains(c.uri, "tooly.0;tcp4://127.0.0.1:"));
    REQUIRE_FALSE(c.alt_uris.empty());
    CHECK(contains(c.alt_uris[0], "tooly.0;uds://"));
    CHECK_FALSE(exists(dir.path() + "/pmix." + host + ".tool"));  // no session file
    auto t1 = run_tool({"tool_init", "tool_finalize"}, dir.path(),
                       {"PMIX_SERVER_TMPDIR=" + dir.path()});  // default search
    CHECK_MESSAGE(t1.exited_with(0), t1.errors());
    CHECK(contains(t1.output(), "tool_init PMIX_SUCCESS"));
    CHECK(PMIx_server_finalize() == PMIX_SUCCESS);
    CHECK_FALSE(exists(by_pid));
    CHECK_FALSE(exists(by_ns));
  }

  TEST_CASE("[20.2.247.6.1] a tool finds its server by PMIX_SERVER_PIDINFO and by PMIX_SERVER_NSPACE; tmpdir choices are read at every tool init") {
    temp_dir dir;
    directives d;
    d.text(PMIX_SERVER_TMPDIR, dir.path()).text(PMIX_SERVER_NSPACE, "findme").flag(PMIX_SERVER_TOOL_SUPPORT);
    REQUIRE(init(d) == PMIX_SUCCESS);
    // One tool process, three inits: PMIX_SERVER_TMPDIR points elsewhere
    // first (nothing found), then here (found by namespace, then by PID).
    temp_dir empty;
    auto t = run_tool({"setenv:PMIX_SERVER_TMPDIR=" + empty.path(), "tool_init",
                       "setenv:PMIX_SERVER_TMPDIR=" + dir.path(), "tool_init_ns:findme", "tool_finalize",
                       "tool_init_pid:" + std::to_string(getpid()), "tool_finalize"},
                      dir.path());
    CHECK_MESSAGE(t.exited_with(0), t.errors());
    const auto out = t.output();
    CHECK(contains(out, "tool_init PMIX_ERR_UNREACH"));
    CHECK(contains(out, "tool_init_ns:findme PMIX_SUCCESS"));
    CHECK(contains(out, "tool_init_pid:" + std::to_string(getpid()) + " PMIX_SUCCESS"));
    CHECK(PMIx_server_finalize() == PMIX_SUCCESS);
  }

  TEST_CASE("[20.2.247.6.1] a server the tool names wins over a launcher's PMIX_SERVER_URI41 in its environment") {
    temp_dir dir;
    directives d;
    d.text(PMIX_SERVER_TMPDIR, dir.path()).text(PMIX_SERVER_NSPACE, "named").flag(PMIX_SERVER_TOOL_SUPPORT);
    REQUIRE(init(d) == PMIX_SUCCESS);
    // The environment names a server nobody runs: without a directive the
    // tool tries it (and fails); by PID or namespace it finds this one.
    const std::string nowhere = "PMIX_SERVER_URI41=nobody.0;uds://" + dir.path() + "/nowhere.sock";
    auto t = run_tool({"setenv:PMIX_SERVER_TMPDIR=" + dir.path(), "setenv:" + nowhere, "tool_init", "tool_init_pid:" + std::to_string(getpid()), "tool_finalize",
                       "tool_init_ns:named", "tool_finalize"},
                      dir.path());
    CHECK_MESSAGE(t.exited_with(0), t.errors());
    const auto out = t.output();
    CAPTURE(out);
    CHECK(contains(out, "tool_init PMIX_ERR_UNREACH"));
    CHECK(contains(out, "tool_init_pid:" + std::to_string(getpid()) + " PMIX_SUCCESS"));
    CHECK(contains(out, "tool_init_ns:named PMIX_SUCCESS"));
    CHECK(PMIx_server_finalize() == PMIX_SUCCESS);
  }

  TEST_CASE("[20.2.247.6.1 PMIX_SERVER_SYSTEM_SUPPORT] pmix.sys.<host> in the system tmpdir; PMIX_CONNECT_TO_SYSTEM finds it") {
    temp_dir dir, sys;
    directives d;
    d.text(PMIX_SERVER_TMPDIR, dir.path()).text(PMIX_SYSTEM_TMPDIR, sys.path()).flag(PMIX_SERVER_TOOL_SUPPORT)
        .flag(PMIX_SERVER_SYSTEM_SUPPORT);
    REQUIRE(init(d) == PMIX_SUCCESS);
    const auto file = sys.path() + "/pmix.sys." + host;
    CHECK(exists(file));
    CHECK(exists(dir.path() + "/pmix." + host + ".tool." + std::to_string(getpid())));
    auto t = run_tool({"tool_init_system", "tool_finalize"}, dir.path(), {"PMIX_SYSTEM_TMPDIR=" + sys.path()});
    CHECK_MESSAGE(t.exited_with(0), t.errors());
    CHECK(contains(t.output(), "tool_init_system PMIX_SUCCESS"));
    CHECK(PMIx_server_finalize() == PMIX_SUCCESS);
    CHECK_FALSE(exists(file));
  }

  TEST_CASE("[20.2.247.5] no thread to be had (RLIMIT_NPROC): PMIX_ERR_OUT_OF_RESOURCE, nothing left behind, and the same init succeeds once there is") {
    // A host of user 65534 whose soft RLIMIT_NPROC leaves it no thread: the
    // server's loop thread cannot start (std::terminate in the host's
    // process, before). server_host prints what the failed init left and
    // the finalize answer, raises the soft limit to the hard one and calls
    // the same init again.
    if (::getuid() != 0) FAIL("this test runs a host as another user: run it as root (CI does)");
    temp_dir dir;
    REQUIRE(::chmod(dir.path().c_str(), 0777) == 0);
    const auto bin = stage_for_nobody(dir.path());
    std::filesystem::copy_file(server_host, bin + "/server_host");
    std::filesystem::copy_file(runfile("api/libpmix-server.so.2"), bin + "/libpmix-server.so.2");
    const auto tmpdir = dir.path() + "/server";  // made by the server, removed at finalize
    child host({"/usr/bin/prlimit", "--nproc=1:", bin + "/server_host", std::string{PMIX_SERVER_TMPDIR} + "=" + tmpdir},
               // The default mode, also in the pool variant of this test:
               // with PMIX_CXX_LOOP=0 CAF's own threads start inside its
               // actor system, which cannot be unwound (docs/server-init.md).
               environment_with({"SERVER_HOST_RETRY=1", "SERVER_HOST_STOP=/", "LD_LIBRARY_PATH=" + bin,
                                 "PMIX_CXX_LOOP="}),
               bin, nobody);
    CHECK_MESSAGE(host.exited_with(0), host.errors());
    const auto out = host.output();
    CAPTURE(out);
    std::istringstream lines{out};
    std::vector<std::string> got;
    for (std::string line; std::getline(lines, line);) got.push_back(line);
    REQUIRE(got.size() == 6);
    CHECK(got[0].rfind("before ", 0) == 0);
    CHECK(got[1] == "init PMIX_ERR_OUT_OF_RESOURCE");
    CHECK(got[2] == "left " + got[0].substr(7));  // as many threads and descriptors as before
    CHECK(got[3] == "finalize PMIX_ERR_INIT");
    CHECK(got[4] == "init PMIX_SUCCESS");
    CHECK(got[5] == "finalize PMIX_SUCCESS");
    CHECK(contains(host.errors(), "cannot start the server's loop thread"));
    CHECK_FALSE(exists(tmpdir));
  }

  TEST_CASE("[Tool-Side Teardown] a changed PMIX_SERVER_TMPDIR or PMIX_SYSTEM_TMPDIR counts at the next init, after a cycle that found the server") {
    // Spec 004: tool finalize frees the tmpdir choices, so a surviving one
    // cannot pin the previous cycle's directory. One tool process, cycles
    // that succeed, then the variable names an empty directory: the next
    // init must look there (and find nothing), then where it points again.
    temp_dir dir, sys, empty;
    directives d;
    d.text(PMIX_SERVER_TMPDIR, dir.path()).text(PMIX_SYSTEM_TMPDIR, sys.path()).flag(PMIX_SERVER_TOOL_SUPPORT)
        .flag(PMIX_SERVER_SYSTEM_SUPPORT);
    REQUIRE(init(d) == PMIX_SUCCESS);
    const auto by_pid = "tool_init_pid:" + std::to_string(getpid());
    auto t = run_tool({"setenv:PMIX_SERVER_TMPDIR=" + dir.path(), by_pid, "tool_finalize",
                       "setenv:PMIX_SERVER_TMPDIR=" + empty.path(), by_pid,
                       "setenv:PMIX_SERVER_TMPDIR=" + dir.path(), by_pid, "tool_finalize",
                       "setenv:PMIX_SYSTEM_TMPDIR=" + sys.path(), "tool_init_system", "tool_finalize",
                       "setenv:PMIX_SYSTEM_TMPDIR=" + empty.path(), "tool_init_system",
                       "setenv:PMIX_SYSTEM_TMPDIR=" + sys.path(), "tool_init_system", "tool_finalize"},
                      dir.path());
    CHECK_MESSAGE(t.exited_with(0), t.errors());
    const auto out = t.output();
    CAPTURE(out);
    // Each init's step and status, in order.
    std::vector<std::string> inits;
    std::istringstream lines{out};
    for (std::string line; std::getline(lines, line);)
      if (line.rfind("tool_init", 0) == 0) inits.push_back(line.substr(0, line.find(' ', line.find(' ') + 1)));
    const std::vector<std::string> want{by_pid + " PMIX_SUCCESS", by_pid + " PMIX_ERR_UNREACH",
                                       by_pid + " PMIX_SUCCESS", "tool_init_system PMIX_SUCCESS",
                                       "tool_init_system PMIX_ERR_UNREACH", "tool_init_system PMIX_SUCCESS"};
    CHECK(inits == want);
    CHECK(PMIx_server_finalize() == PMIX_SUCCESS);
  }

  TEST_CASE("[20.2.247.6.1] system and session support without tool support write no files") {
    temp_dir dir, sys;
    directives d;
    d.text(PMIX_SERVER_TMPDIR, dir.path()).text(PMIX_SYSTEM_TMPDIR, sys.path()).flag(PMIX_SERVER_SYSTEM_SUPPORT)
        .flag(PMIX_SERVER_SESSION_SUPPORT);
    REQUIRE(init(d) == PMIX_SUCCESS);
    CHECK(entries(sys.path()).empty());
    CHECK(entries(dir.path()).size() == 1);  // only the socket's directory
    // And tools are refused: no tool support.
    auto t = run_tool({"tool_init"}, dir.path(), {"TEST_SERVER_URI=" + server_uri()});
    CHECK_MESSAGE(t.exited_with(0), t.errors());
    CHECK(contains(t.output(), "tool_init PMIX_ERR_NOT_SUPPORTED"));
    CHECK(PMIx_server_finalize() == PMIX_SUCCESS);
  }

  TEST_CASE("[20.2.247.6.1 PMIX_SERVER_SESSION_SUPPORT] pmix.<host>.tool in the server tmpdir, found first by a tool's default search") {
    temp_dir dir;
    directives d;
    d.text(PMIX_SERVER_TMPDIR, dir.path()).flag(PMIX_SERVER_TOOL_SUPPORT).flag(PMIX_SERVER_SESSION_SUPPORT);
    REQUIRE(init(d) == PMIX_SUCCESS);
    const auto file = dir.path() + "/pmix." + host + ".tool";
    CHECK(exists(file));
    CHECK(contents_of(file).pid == getpid());
    // With the session file the only one left, a tool's default search
    // must find the server by it; without it, nothing is found.
    REQUIRE(exists(dir.path() + "/pmix." + host + ".tool." + std::to_string(getpid())));
    int removed = 0;
    for (const auto& name : entries(dir.path()))
      if (name.rfind("pmix." + host + ".tool.", 0) == 0 && ::unlink((dir.path() + "/" + name).c_str()) == 0) ++removed;
    REQUIRE(removed == 2);  // by PID and by namespace
    auto t = run_tool({"tool_init", "tool_finalize"}, dir.path(), {"PMIX_SERVER_TMPDIR=" + dir.path()});
    CHECK_MESSAGE(t.exited_with(0), t.errors());
    CHECK_MESSAGE(contains(t.output(), "tool_init PMIX_SUCCESS"), t.output());
    CHECK(contains(t.output(), "tool_finalize PMIX_SUCCESS"));
    const auto kept = dir.path() + "/session.kept";
    REQUIRE(::rename(file.c_str(), kept.c_str()) == 0);
    auto none = run_tool({"tool_init"}, dir.path(), {"PMIX_SERVER_TMPDIR=" + dir.path()});
    CHECK_MESSAGE(none.exited_with(0), none.errors());
    CHECK_MESSAGE(contains(none.output(), "tool_init PMIX_ERR_UNREACH"), none.output());
    REQUIRE(::rename(kept.c_str(), file.c_str()) == 0);
    CHECK(PMIx_server_finalize() == PMIX_SUCCESS);
    CHECK_FALSE(exists(file));
  }

  TEST_CASE("[20.2.247.6.1 PMIX_SERVER_SCHEDULER, PMIX_SERVER_SYS_CONTROLLER] each writes only its own file") {
    for (const char* role : {PMIX_SERVER_SCHEDULER, PMIX_SERVER_SYS_CONTROLLER}) {
      CAPTURE(role);
      temp_dir dir, sys;
      directives d;
      d.text(PMIX_SERVER_TMPDIR, dir.path()).text(PMIX_SYSTEM_TMPDIR, sys.path()).flag(role)
          .flag(PMIX_SERVER_TOOL_SUPPORT).flag(PMIX_SERVER_SYSTEM_SUPPORT);
      REQUIRE(init(d) == PMIX_SUCCESS);
      const std::string name = std::string{role} == PMIX_SERVER_SCHEDULER ? "pmix.sched." : "pmix.sysctrlr.";
      CHECK(entries(sys.path()) == std::set<std::string>{name + host});
      CHECK(entries(dir.path()).size() == 1);  // no tool files: only the socket's directory
      CHECK(PMIx_server_finalize() == PMIX_SUCCESS);
      CHECK(entries(sys.path()).empty());
    }
  }

  TEST_CASE("[20.2.247.4.3 PMIX_LAUNCHER_RENDEZVOUS_FILE] written with missing directories created 0700, all removed at finalize") {
    temp_dir dir;
    const mode_t old = ::umask(022);
    const auto file = dir.path() + "/a/b/launcher.rv";
    directives d;
    d.text(PMIX_SERVER_TMPDIR, dir.path()).text(PMIX_LAUNCHER_RENDEZVOUS_FILE, file);
    REQUIRE(init(d) == PMIX_SUCCESS);
    ::umask(old);
    CHECK(mode_of(dir.path() + "/a") == 0700);
    CHECK(mode_of(dir.path() + "/a/b") == 0700);
    CHECK(mode_of(file) == 0600);
    const auto c = contents_of(file);
    CHECK(c.pid == getpid());
    CHECK(contains(c.uri, ";tcp4://127.0.0.1:"));
    REQUIRE_FALSE(c.alt_uris.empty());
    CHECK(contains(c.alt_uris[0], ";uds://"));
    CHECK(PMIx_server_finalize() == PMIX_SUCCESS);
    CHECK_FALSE(exists(dir.path() + "/a"));
  }

  TEST_CASE("[20.2.247.4.3 PMIX_LAUNCHER_RENDEZVOUS_FILE] a tool finds the launcher by that file (PMIX_TOOL_ATTACHMENT_FILE); a missing or untrusted file finds nothing") {
    temp_dir dir, other;
    const auto file = dir.path() + "/launcher.rv";
    directives d;
    d.text(PMIX_SERVER_TMPDIR, dir.path()).flag(PMIX_SERVER_TOOL_SUPPORT).text(PMIX_LAUNCHER_RENDEZVOUS_FILE, file);
    REQUIRE(init(d) == PMIX_SUCCESS);
    // The same contents in a file others may write: planted, not trusted.
    const auto planted = other.path() + "/planted.rv";
    {
      std::ifstream in(file);
      std::ofstream out(planted);
      out << in.rdbuf();
    }
    REQUIRE(::chmod(planted.c_str(), 0666) == 0);
    // The tool looks in an empty tmpdir: only the named file can lead it
    // to the server.
    auto t = run_tool({"tool_init_file:" + file, "tool_finalize", "tool_init_file:" + other.path() + "/none.rv",
                       "tool_init_file:" + planted},
                      dir.path(), {"PMIX_SERVER_TMPDIR=" + other.path()});
    CHECK_MESSAGE(t.exited_with(0), t.errors());
    const auto out = t.output();
    CAPTURE(out);
    CHECK(contains(out, "tool_init_file:" + file + " PMIX_SUCCESS"));
    CHECK(contains(out, "tool_init_file:" + other.path() + "/none.rv PMIX_ERR_UNREACH"));
    CHECK(contains(out, "tool_init_file:" + planted + " PMIX_ERR_UNREACH"));
    CHECK(contains(t.errors(), "ignoring rendezvous file " + planted + ": writable by others"));
    CHECK(PMIx_server_finalize() == PMIX_SUCCESS);
  }

  TEST_CASE("[20.2.247.6.1 PMIX_SERVER_ALLOW_FOREIGN_TOOLS] files 0644 and new directories 0755, subject to the umask; existing directories never changed") {
    for (mode_t mask : {mode_t{022}, mode_t{077}}) {
      CAPTURE(mask);
      temp_dir dir;
      ::chmod(dir.path().c_str(), 0711);
      const mode_t old = ::umask(mask);
      const auto file = dir.path() + "/new/launcher.rv";
      directives d;
      d.text(PMIX_SERVER_TMPDIR, dir.path()).flag(PMIX_SERVER_TOOL_SUPPORT).flag(PMIX_SERVER_ALLOW_FOREIGN_TOOLS)
          .text(PMIX_LAUNCHER_RENDEZVOUS_FILE, file);
      REQUIRE(init(d) == PMIX_SUCCESS);
      ::umask(old);
      CHECK(mode_of(file) == (0644 & ~static_cast<int>(mask)));
      CHECK(mode_of(dir.path() + "/new") == (0755 & ~static_cast<int>(mask)));
      CHECK(mode_of(dir.path() + "/pmix." + host + ".tool." + std::to_string(getpid())) ==
            (0644 & ~static_cast<int>(mask)));
      CHECK(mode_of(dir.path()) == 0711);  // existing: as found
      CHECK(PMIx_server_finalize() == PMIX_SUCCESS);
      CHECK(mode_of(dir.path()) == 0711);
    }
  }

  TEST_CASE("[20.2.247.6.1] every rendezvous file: 0600 without foreign tools, 0644 with them, subject to the umask") {
    // The files of the table: the launcher's, the tool files by PID and by
    // namespace, the session and system files (one server), then the
    // scheduler's and the system controller's (each written alone).
    for (bool foreign : {false, true}) {
      for (mode_t mask : {mode_t{022}, mode_t{077}, mode_t{0}}) {
        CAPTURE(foreign);
        CAPTURE(mask);
        const int want = (foreign ? 0644 : 0600) & ~static_cast<int>(mask);
        for (const char* flag : {static_cast<const char*>(nullptr), PMIX_SERVER_SCHEDULER, PMIX_SERVER_SYS_CONTROLLER}) {
          CAPTURE((flag ? flag : "tool support"));
          temp_dir dir, sys;
          const mode_t old = ::umask(mask);
          directives d;
          d.text(PMIX_SERVER_TMPDIR, dir.path()).text(PMIX_SYSTEM_TMPDIR, sys.path())
              .text(PMIX_SERVER_NSPACE, "modes").flag(PMIX_SERVER_TOOL_SUPPORT);
          if (foreign) d.flag(PMIX_SERVER_ALLOW_FOREIGN_TOOLS);
          std::vector<std::string> files;
          if (flag == nullptr) {
            d.flag(PMIX_SERVER_SYSTEM_SUPPORT).flag(PMIX_SERVER_SESSION_SUPPORT)
                .text(PMIX_LAUNCHER_RENDEZVOUS_FILE, dir.path() + "/launcher.rv");
            files = {dir.path() + "/launcher.rv",
                     dir.path() + "/pmix." + host + ".tool." + std::to_string(getpid()),
                     dir.path() + "/pmix." + host + ".tool.modes", dir.path() + "/pmix." + host + ".tool",
                     sys.path() + "/pmix.sys." + host};
          } else {
            d.flag(flag);
            files = {sys.path() + (std::string{flag} == PMIX_SERVER_SCHEDULER ? "/pmix.sched." : "/pmix.sysctrlr.") +
                     host};
          }
          REQUIRE(init(d) == PMIX_SUCCESS);
          ::umask(old);
          for (const auto& f : files) {
            CAPTURE(f);
            CHECK(mode_of(f) == want);
            CHECK(contents_of(f).pid == getpid());
          }
          CHECK(PMIx_server_finalize() == PMIX_SUCCESS);
          for (const auto& f : files) CHECK_FALSE(exists(f));
        }
      }
    }
  }

  TEST_CASE("[20.2.247.6.1] a file whose recorded PID is dead is replaced") {
    temp_dir dir;
    const pid_t dead = ::fork();
    if (dead == 0) ::_exit(0);
    ::waitpid(dead, nullptr, 0);
    const auto file = dir.path() + "/pmix." + host + ".tool.stale";
    std::ofstream(file) << "old;uds:///nowhere\n4.2.2\n" << dead << "\n";
    directives d;
    d.text(PMIX_SERVER_TMPDIR, dir.path()).text(PMIX_SERVER_NSPACE, "stale").flag(PMIX_SERVER_TOOL_SUPPORT);
    REQUIRE(init(d) == PMIX_SUCCESS);
    CHECK(contents_of(file).pid == getpid());
    CHECK(PMIx_server_finalize() == PMIX_SUCCESS);
    CHECK_FALSE(exists(file));
  }

  TEST_CASE("[20.2.247.6.1, 20.2.247.5] a file whose PID is alive belongs to another server: init fails and leaves nothing") {
    temp_dir dir;
    // Another server, in its own process, holds the namespace's file.
    const std::string stop = dir.path() + "/stop";
    child other({server_host, std::string{PMIX_SERVER_TMPDIR} + "=" + dir.path(),
                 std::string{PMIX_SERVER_NSPACE} + "=taken", std::string{PMIX_SERVER_TOOL_SUPPORT} + "=true"},
                environment_with({"SERVER_HOST_STOP=" + stop}), dir.path());
    REQUIRE(wait_for_output(other, "init PMIX_SUCCESS"));
    const auto file = dir.path() + "/pmix." + host + ".tool.taken";
    REQUIRE(contents_of(file).pid == other.pid());
    baseline before({dir.path()});
    directives d;
    d.text(PMIX_SERVER_TMPDIR, dir.path()).text(PMIX_SERVER_NSPACE, "taken").flag(PMIX_SERVER_TOOL_SUPPORT);
    CHECK(init(d) == PMIX_ERR_EXISTS);
    CHECK(PMIx_server_finalize() == PMIX_ERR_INIT);
    CHECK(before.unchanged());
    CHECK(contents_of(file).pid == other.pid());  // not taken over
    std::fclose(std::fopen(stop.c_str(), "w"));
    CHECK(other.exited_with(0));
    // Once it is gone, the same directives work.
    REQUIRE(init(d) == PMIX_SUCCESS);
    CHECK(PMIx_server_finalize() == PMIX_SUCCESS);
  }

  TEST_CASE("[20.2.247.6.1] a crashed server's files are replaced by the next one") {
    temp_dir dir;
    child crashed({server_host, std::string{PMIX_SERVER_TMPDIR} + "=" + dir.path(),
                   std::string{PMIX_SERVER_NSPACE} + "=phoenix", std::string{PMIX_SERVER_TOOL_SUPPORT} + "=true"},
                  environment_with({}), dir.path());
    REQUIRE(wait_for_output(crashed, "init PMIX_SUCCESS"));
    ::kill(crashed.pid(), SIGKILL);
    crashed.wait();
    const auto file = dir.path() + "/pmix." + host + ".tool.phoenix";
    REQUIRE(exists(file));  // left behind by the crash
    directives d;
    d.text(PMIX_SERVER_TMPDIR, dir.path()).text(PMIX_SERVER_NSPACE, "phoenix").flag(PMIX_SERVER_TOOL_SUPPORT);
    REQUIRE(init(d) == PMIX_SUCCESS);
    CHECK(contents_of(file).pid == getpid());
    CHECK(PMIx_server_finalize() == PMIX_SUCCESS);
  }
}

TEST_SUITE("server init: tools of other users") {
  TEST_CASE("[20.2.247.4.2 PMIX_SERVER_ALLOW_FOREIGN_TOOLS] a tool of another user is refused by its socket credentials") {
    if (::getuid() != 0) FAIL("this test runs a tool as another user: run it as root (CI does)");
    temp_dir dir;
    ::chmod(dir.path().c_str(), 0711);
    const auto bin = stage_for_nobody(dir.path());
    directives d;
    d.text(PMIX_SERVER_TMPDIR, dir.path()).flag(PMIX_SERVER_TOOL_SUPPORT);
    REQUIRE(init(d) == PMIX_SUCCESS);
    // It knows the URI (the 0600 files would not even let it read it).
    auto t = run_tool({"tool_init"}, bin, {"TEST_SERVER_URI=" + server_uri(), "LD_LIBRARY_PATH=" + bin}, nobody,
                      bin + "/script_client");
    CHECK_MESSAGE(t.exited_with(0), t.errors());
    CHECK(contains(t.output(), "tool_init PMIX_ERR_NO_PERMISSIONS"));
    // Nor can it find the server through the files.
    auto t2 = run_tool({"tool_init"}, bin, {"PMIX_SERVER_TMPDIR=" + dir.path(), "LD_LIBRARY_PATH=" + bin}, nobody,
                       bin + "/script_client");
    CHECK_MESSAGE(t2.exited_with(0), t2.errors());
    CHECK(contains(t2.output(), "tool_init PMIX_ERR_UNREACH"));
    CHECK(PMIx_server_finalize() == PMIX_SUCCESS);
  }

  TEST_CASE("[20.2.247.6.1 PMIX_SERVER_ALLOW_FOREIGN_TOOLS] a directory other users cannot search keeps their tools out, "
            "foreign tools allowed or not") {
    if (::getuid() != 0) FAIL("this test runs a tool as another user: run it as root (CI does)");
    temp_dir staging;
    ::chmod(staging.path().c_str(), 0711);
    const auto bin = stage_for_nobody(staging.path());
    temp_dir dir;
    REQUIRE(::chmod(dir.path().c_str(), 0700) == 0);
    const mode_t old = ::umask(022);
    directives d;
    d.text(PMIX_SERVER_TMPDIR, dir.path()).flag(PMIX_SERVER_TOOL_SUPPORT).flag(PMIX_SERVER_ALLOW_FOREIGN_TOOLS);
    REQUIRE(init(d) == PMIX_SUCCESS);
    ::umask(old);
    // The file is marked readable by all; the directory is as found.
    CHECK(mode_of(dir.path() + "/pmix." + host + ".tool." + std::to_string(getpid())) == 0644);
    CHECK(mode_of(dir.path()) == 0700);
    const std::vector<std::string> env{"PMIX_SERVER_TMPDIR=" + dir.path(), "LD_LIBRARY_PATH=" + bin};
    auto t = run_tool({"tool_init"}, bin, env, nobody, bin + "/script_client");
    CHECK_MESSAGE(t.exited_with(0), t.errors());
    CHECK_MESSAGE(contains(t.output(), "tool_init PMIX_ERR_UNREACH"), t.output());
    // Even told the URI, it cannot reach the socket in that directory.
    auto told = run_tool({"tool_init"}, bin, {"TEST_SERVER_URI=" + server_uri(), "LD_LIBRARY_PATH=" + bin}, nobody,
                         bin + "/script_client");
    CHECK_MESSAGE(told.exited_with(0), told.errors());
    CHECK(contains(told.output(), "tool_init PMIX_ERR"));
    CHECK_FALSE(contains(told.output(), "tool_init PMIX_SUCCESS"));
    // The directory alone kept it out: made searchable, the same tool gets in.
    REQUIRE(::chmod(dir.path().c_str(), 0755) == 0);
    auto in = run_tool({"tool_init", "tool_finalize"}, bin, env, nobody, bin + "/script_client");
    CHECK_MESSAGE(in.exited_with(0), in.errors());
    CHECK_MESSAGE(contains(in.output(), "tool_init PMIX_SUCCESS"), in.output());
    CHECK(PMIx_server_finalize() == PMIX_SUCCESS);
  }

  TEST_CASE("[20.2.247.4.2 PMIX_SERVER_ALLOW_FOREIGN_TOOLS] with it, another user's tool finds the server and connects") {
    if (::getuid() != 0) FAIL("this test runs a tool as another user: run it as root (CI does)");
    temp_dir dir;
    ::chmod(dir.path().c_str(), 0711);
    const auto bin = stage_for_nobody(dir.path());
    ::chmod(dir.path().c_str(), 0755);  // a directory other users can search
    directives d;
    d.text(PMIX_SERVER_TMPDIR, dir.path()).flag(PMIX_SERVER_TOOL_SUPPORT).flag(PMIX_SERVER_ALLOW_FOREIGN_TOOLS);
    REQUIRE(init(d) == PMIX_SUCCESS);
    auto t = run_tool({"tool_init", "tool_finalize"}, bin, {"PMIX_SERVER_TMPDIR=" + dir.path(), "LD_LIBRARY_PATH=" + bin},
                      nobody, bin + "/script_client");
    CHECK_MESSAGE(t.exited_with(0), t.errors());
    CHECK(contains(t.output(), "tool_init PMIX_SUCCESS"));
    CHECK(PMIx_server_finalize() == PMIX_SUCCESS);
  }
}

TEST_SUITE("server init: connection directives") {
  TEST_CASE("[20.2.247.4.3 PMIX_TCP_REPORT_URI] to a descriptor (then closed), and to a file removed at finalize") {
    temp_dir dir;
    int fds_pipe[2];
    REQUIRE(::pipe(fds_pipe) == 0);
    {
      directives d;
      d.text(PMIX_SERVER_TMPDIR, dir.path()).text(PMIX_TCP_REPORT_URI, std::to_string(fds_pipe[1]));
      REQUIRE(init(d) == PMIX_SUCCESS);
      char buf[512] = {};
      const auto n = ::read(fds_pipe[0], buf, sizeof buf - 1);
      CHECK(n > 0);
      CHECK(contains(buf, ";uds://"));
      CHECK(::read(fds_pipe[0], buf, 1) == 0);  // the server closed its end
      ::close(fds_pipe[0]);
      CHECK(PMIx_server_finalize() == PMIX_SUCCESS);
    }
    const auto file = dir.path() + "/uri.txt";
    const mode_t old = ::umask(022);
    directives d;
    d.text(PMIX_SERVER_TMPDIR, dir.path()).text(PMIX_TCP_REPORT_URI, file);
    REQUIRE(init(d) == PMIX_SUCCESS);
    ::umask(old);
    CHECK(mode_of(file) == 0644);
    std::string line;
    std::getline(std::ifstream(file), line);
    CHECK(contains(line, ";uds://"));
    CHECK(PMIx_server_finalize() == PMIX_SUCCESS);
    CHECK_FALSE(exists(file));
  }

  TEST_CASE("[20.2.247.4.3 PMIX_TCP_REPORT_URI] '-' writes the URI to stdout, '+' to stderr") {
    temp_dir dir;
    for (const char* where : {"-", "+"}) {
      CAPTURE(where);
      const std::string stop = dir.path() + "/stop" + where;
      child c({server_host, std::string{PMIX_SERVER_TMPDIR} + "=" + dir.path(),
               std::string{PMIX_TCP_REPORT_URI} + "=" + where},
              environment_with({"SERVER_HOST_STOP=" + stop}), dir.path());
      REQUIRE(wait_for_output(c, "init PMIX_SUCCESS"));
      std::fclose(std::fopen(stop.c_str(), "w"));
      CHECK(c.exited_with(0));
      const auto& stream = std::string{where} == "-" ? c.output() : c.errors();
      CHECK(contains(stream, ";uds://"));
    }
  }

  TEST_CASE("[20.2.247.4.3 PMIX_TCP_IPV4_PORT] the given port; a list tried in order; and a tool connecting over TCP") {
    temp_dir dir;
    held_port taken;
    held_port second;
    const int free_port = second.port;
    ::close(second.fd);
    second.fd = -1;
    directives d;
    d.text(PMIX_SERVER_TMPDIR, dir.path()).text(PMIX_TCP_IPV4_PORT, std::to_string(taken.port) + "," +
                                                                        std::to_string(free_port))
        .flag(PMIX_TCP_DISABLE_IPV6).flag(PMIX_SERVER_TOOL_SUPPORT).flag(PMIX_SERVER_ALLOW_FOREIGN_TOOLS);
    REQUIRE(init(d) == PMIX_SUCCESS);
    CHECK(can_connect_tcp4(free_port));
    const auto file = dir.path() + "/pmix." + host + ".tool." + std::to_string(getpid());
    const auto c = contents_of(file);
    // The listener both libraries reach, the local socket, then loopback
    // TCP at the given port.
    REQUIRE(c.alt_uris.size() == 2);
    CHECK(contains(c.alt_uris[0], ";uds://"));
    CHECK(contains(c.alt_uris[1], "tcp4://127.0.0.1:" + std::to_string(free_port)));
    // A tool over TCP (an unknown user: foreign tools allowed here).
    auto t = run_tool({"tool_init", "tool_finalize"}, dir.path(), {"TEST_SERVER_URI=" + c.alt_uris[1]});
    CHECK_MESSAGE(t.exited_with(0), t.errors());
    CHECK(contains(t.output(), "tool_init PMIX_SUCCESS"));
    CHECK(PMIx_server_finalize() == PMIX_SUCCESS);
    CHECK_FALSE(can_connect_tcp4(free_port));
  }

  TEST_CASE("[20.2.247.4.3, issue 35.4] over TCP from this host the kernel names the peer: the server's user's tool "
            "and ranks connect as over the local socket; another user's tool is foreign and cannot become a rank") {
    if (::getuid() != 0) FAIL("this test runs processes as another user: run it as root (CI does)");
    temp_dir dir;
    ::chmod(dir.path().c_str(), 0711);
    const auto bin = stage_for_nobody(dir.path());
    directives d;
    d.text(PMIX_SERVER_TMPDIR, dir.path()).integer(PMIX_TCP_IPV4_PORT, 0).flag(PMIX_TCP_DISABLE_IPV6)
        .flag(PMIX_SERVER_TOOL_SUPPORT);
    REQUIRE(init(d) == PMIX_SUCCESS);
    const auto c = contents_of(dir.path() + "/pmix." + host + ".tool." + std::to_string(getpid()));
    REQUIRE(c.alt_uris.size() == 2);  // after the first line's: the local socket, then TCP
    const auto& tcp = c.alt_uris[1];
    REQUIRE(tcp.find(";tcp4://127.0.0.1:") != std::string::npos);
    // Tools: root's (the server's user) gets in; nobody's is foreign.
    auto mine = run_tool({"tool_init", "tool_finalize"}, dir.path(), {"TEST_SERVER_URI=" + tcp});
    CHECK_MESSAGE(mine.exited_with(0), mine.errors());
    CHECK_MESSAGE(contains(mine.output(), "tool_init PMIX_SUCCESS"), mine.output());
    auto theirs = run_tool({"tool_init"}, bin, {"TEST_SERVER_URI=" + tcp, "LD_LIBRARY_PATH=" + bin}, nobody,
                           bin + "/script_client");
    CHECK_MESSAGE(theirs.exited_with(0), theirs.errors());
    CHECK_MESSAGE(contains(theirs.output(), "tool_init PMIX_ERR_NO_PERMISSIONS"), theirs.output());
    // Ranks registered for root: root's process connects over TCP and
    // fences; nobody's cannot become rank 1, whatever it says.
    REQUIRE(register_job("overtcp", 2, 2) == PMIX_SUCCESS);
    auto rank_env = [&](pmix_rank_t r) {
      pmix_proc_t p;
      PMIX_LOAD_PROCID(&p, "overtcp", r);
      char** env = nullptr;
      REQUIRE(PMIx_server_setup_fork(&p, &env) == PMIX_SUCCESS);
      std::vector<std::string> out;
      for (char** e = env; e != nullptr && *e != nullptr; ++e) out.emplace_back(*e);
      PMIX_ARGV_FREE(env);
      out.push_back("PMIX_CXX_SERVER_URI=" + tcp);
      out.push_back("LD_LIBRARY_PATH=" + bin);
      return out;
    };
    child intruder({bin + "/script_client", "init", "finalize"}, environment_with(rank_env(1)), dir.path(), nobody);
    CHECK_MESSAGE(intruder.exited_with(0), intruder.errors());
    CHECK_MESSAGE(contains(intruder.output(), "init PMIX_ERR"), intruder.output());
    std::vector<child> ranks;
    for (pmix_rank_t r = 0; r < 2; ++r)
      ranks.emplace_back(std::vector<std::string>{bin + "/script_client", "init", "put:k=v" + std::to_string(r),
                                                  "commit", "fence:collect", "get:" + std::to_string(1 - r) + ":k",
                                                  "finalize"},
                         environment_with(rank_env(r)), dir.path());
    for (pmix_rank_t r = 0; r < 2; ++r) {
      CHECK_MESSAGE(ranks[r].exited_with(0), ranks[r].errors());
      const auto out = ranks[r].output();
      CAPTURE(out);
      CHECK(contains(out, "init PMIX_SUCCESS overtcp " + std::to_string(r)));
      CHECK(contains(out, "get:" + std::to_string(1 - r) + ":k PMIX_SUCCESS v" + std::to_string(1 - r)));
    }
    CHECK(PMIx_server_finalize() == PMIX_SUCCESS);
  }

  TEST_CASE("[20.2.247.4.2 PMIX_MYSERVER_ALT_URIS] the server process reads its URI and alternatives with PMIx_Get, as its contact files list them") {
    temp_dir dir;
    directives d;
    d.text(PMIX_SERVER_TMPDIR, dir.path()).integer(PMIX_TCP_IPV4_PORT, 0).integer(PMIX_TCP_IPV6_PORT, 0)
        .flag(PMIX_SERVER_TOOL_SUPPORT).text(PMIX_SERVER_NSPACE, "alts");
    REQUIRE(init(d) == PMIX_SUCCESS);
    const auto c = contents_of(dir.path() + "/pmix." + host + ".tool." + std::to_string(getpid()));
    // The first line is the listener OpenPMIx's tools reach (issue 35);
    // the server's own URI and alternatives follow it.
    REQUIRE(c.alt_uris.size() >= 2);
    std::string listed;
    for (std::size_t k = 1; k < c.alt_uris.size(); ++k) listed += (listed.empty() ? "" : ",") + c.alt_uris[k];
    pmix_proc_t self;
    PMIX_LOAD_PROCID(&self, "alts", 0);
    auto get = [&](const char* key) {
      pmix_value_t* v = nullptr;
      std::string out = "(none)";
      if (PMIx_Get(&self, key, nullptr, 0, &v) == PMIX_SUCCESS && v != nullptr) {
        out = v->type == PMIX_STRING && v->data.string ? v->data.string : "(not a string)";
        PMIX_VALUE_RELEASE(v);
      }
      return out;
    };
    CHECK(get(PMIX_MYSERVER_URI) == c.alt_uris[0]);
    CHECK(get(PMIX_SERVER_URI) == c.alt_uris[0]);
    CHECK(get(PMIX_MYSERVER_ALT_URIS) == listed);
    CHECK(PMIx_server_finalize() == PMIX_SUCCESS);
    // A server listening only on its local socket has no alternatives.
    directives plain;
    plain.text(PMIX_SERVER_TMPDIR, dir.path()).text(PMIX_SERVER_NSPACE, "alts");
    REQUIRE(init(plain) == PMIX_SUCCESS);
    CHECK(contains(get(PMIX_MYSERVER_URI), "alts.0;uds://"));
    CHECK(get(PMIX_MYSERVER_ALT_URIS) == "(none)");
    CHECK(PMIx_server_finalize() == PMIX_SUCCESS);
  }

  TEST_CASE("[20.2.247.4.3 PMIX_TCP_DISABLE_IPV4, PMIX_TCP_DISABLE_IPV6] only the family left is used") {
    temp_dir dir;
    directives d;
    d.text(PMIX_SERVER_TMPDIR, dir.path()).integer(PMIX_TCP_IPV6_PORT, 0).flag(PMIX_TCP_DISABLE_IPV4)
        .flag(PMIX_SERVER_TOOL_SUPPORT);
    REQUIRE(init(d) == PMIX_SUCCESS);
    const auto c = contents_of(dir.path() + "/pmix." + host + ".tool." + std::to_string(getpid()));
    REQUIRE(c.alt_uris.size() == 1);
    CHECK(contains(c.alt_uris[0], "tcp6://[::1]:"));
    CHECK(PMIx_server_finalize() == PMIX_SUCCESS);
  }
}

TEST_SUITE("server init: failures leave nothing behind") {
  // [20.2.247.5] for each failure class: the error, no file, directory,
  // socket, thread or listener left, PMIx_server_finalize answers
  // PMIX_ERR_INIT, and the corrected call succeeds.
  TEST_CASE("[20.2.247.5] bad param, not supported, port in use, live rendezvous file") {
    temp_dir dir, sys;
    held_port taken;
    const pid_t sleeper = ::fork();
    if (sleeper == 0) {
      ::pause();
      ::_exit(0);
    }
    const auto live = sys.path() + "/pmix.sys." + host;
    std::ofstream(live) << "other;uds:///x\n4.2.2\n" << sleeper << "\n";
    struct failure {
      const char* name;
      pmix_status_t expected;
      std::function<void(directives&)> add;
    };
    const std::vector<failure> failures = {
        {"bad param", PMIX_ERR_BAD_PARAM, [](directives& d) { d.text(PMIX_SINGLETON, "no-rank-here"); }},
        {"not supported", PMIX_ERR_NOT_SUPPORTED, [](directives& d) { d.required(PMIX_SERVER_ENABLE_MONITORING); }},
        {"port in use", PMIX_ERR_INIT,
         [&](directives& d) { d.integer(PMIX_TCP_IPV4_PORT, taken.port).flag(PMIX_TCP_DISABLE_IPV6); }},
        {"live rendezvous file", PMIX_ERR_EXISTS,
         [&](directives& d) { d.flag(PMIX_SERVER_SYSTEM_SUPPORT).text(PMIX_SYSTEM_TMPDIR, sys.path()); }},
    };
    for (const auto& f : failures) {
      // Each also with PMIX_CXX_PROGRESS_FD: the live rendezvous file fails
      // init after the host's descriptor is made, which must not be left
      // open, nor handed to the host.
      for (const bool hosted : {false, true}) {
        const std::string failure_name = f.name;
        CAPTURE(failure_name);
        CAPTURE(hosted);
        const auto tmp = dir.path() + "/tmpdir-not-there-yet";
        baseline before({dir.path(), sys.path()});
        int progress_fd = -1;
        directives d;
        d.text(PMIX_SERVER_TMPDIR, tmp).flag(PMIX_SERVER_TOOL_SUPPORT)
            .text(PMIX_LAUNCHER_RENDEZVOUS_FILE, dir.path() + "/launch/rv");
        if (hosted) d.pointer(PMIX_CXX_PROGRESS_FD, &progress_fd);
        f.add(d);
        CHECK(init(d) == f.expected);
        CHECK(before.unchanged());  // not even the tmpdir it would have created
        CHECK(progress_fd == -1);
        CHECK(PMIx_server_finalize() == PMIX_ERR_INIT);
      }
    }
    ::kill(sleeper, SIGKILL);
    ::waitpid(sleeper, nullptr, 0);
    directives ok;
    ok.text(PMIX_SERVER_TMPDIR, dir.path()).flag(PMIX_SERVER_TOOL_SUPPORT).flag(PMIX_SERVER_SYSTEM_SUPPORT)
        .text(PMIX_SYSTEM_TMPDIR, sys.path());
    REQUIRE(init(ok) == PMIX_SUCCESS);  // the stale file is replaced now
    CHECK(contents_of(live).pid == getpid());
    CHECK(PMIx_server_finalize() == PMIX_SUCCESS);
  }
}

TEST_SUITE("server init: topology and behaviour") {
  TEST_CASE("[20.2.247.4.4 PMIX_SERVER_SHARE_TOPOLOGY, PMIX_TOPOLOGY2] clients get the host's topology; its file goes at finalize") {
    temp_dir dir;
    hwloc_topology_t topo;
    REQUIRE(hwloc_topology_init(&topo) == 0);
    REQUIRE(hwloc_topology_load(topo) == 0);
    char* xml = nullptr;
    int len = 0;
    REQUIRE(hwloc_topology_export_xmlbuffer(topo, &xml, &len, 0) == 0);
    const std::string expected{xml, static_cast<std::size_t>(len - 1)};
    hwloc_free_xmlbuffer(topo, xml);
    pmix_topology_t given{const_cast<char*>("hwloc"), topo};
    directives d;
    d.text(PMIX_SERVER_TMPDIR, dir.path()).flag(PMIX_SERVER_SHARE_TOPOLOGY);
    d.v.emplace_back();
    std::strncpy(d.v.back().key, PMIX_TOPOLOGY2, PMIX_MAX_KEYLEN);
    d.v.back().value.type = PMIX_POINTER;
    d.v.back().value.data.ptr = &given;
    REQUIRE(init(d) == PMIX_SUCCESS);
    d.v.back().value.type = PMIX_UNDEF;  // not ours to free
    REQUIRE(register_job("topo", 1, 1) == PMIX_SUCCESS);
    auto c = launch("topo", 0, {script, "init", "get:*:pmix.topo.file", "xml_size", "finalize"}, dir.path());
    CHECK_MESSAGE(c.exited_with(0), c.errors());
    const auto out = c.output();
    CHECK(contains(out, "xml_size PMIX_SUCCESS " + std::to_string(expected.size())));
    const std::string prefix = "get:*:pmix.topo.file PMIX_SUCCESS ";
    const auto at = out.find(prefix);
    REQUIRE(at != std::string::npos);
    const auto start = at + prefix.size();
    const auto path = out.substr(start, out.find('\n', start) - start);
    CHECK(exists(path));
    std::stringstream content;
    content << std::ifstream(path).rdbuf();
    CHECK(content.str() == expected);
    CHECK(mode_of(path) == 0644);
    // Beside the socket, in the server's own directory under the tmpdir.
    CHECK(path.rfind(dir.path() + "/pmix-cxx.", 0) == 0);
    CHECK(exists(path.substr(0, path.rfind('/')) + "/sock"));
    CHECK(PMIx_server_finalize() == PMIX_SUCCESS);
    CHECK_FALSE(exists(path));
    for (const auto& e : entries(dir.path())) CHECK_MESSAGE(e.rfind("pmix-cxx.", 0) != 0, e);  // socket gone too
    hwloc_topology_destroy(topo);
  }

  TEST_CASE("[20.2.247.4.4 PMIX_SINGLETON] the singleton's namespace and rank are known before it connects") {
    temp_dir dir;
    directives d;
    d.text(PMIX_SERVER_TMPDIR, dir.path()).text(PMIX_SINGLETON, "lonely.job.0");
    REQUIRE(init(d) == PMIX_SUCCESS);
    pmix_proc_t p;
    PMIX_LOAD_PROCID(&p, "lonely.job", 0);
    char** env = nullptr;
    PMIx_server_setup_fork(&p, &env);
    std::vector<std::string> extra;
    for (char** e = env; *e != nullptr; ++e) extra.emplace_back(*e);
    PMIX_ARGV_FREE(env);
    child c({script, "init", "get:*:pmix.job.size", "finalize"}, environment_with(extra), dir.path());
    CHECK_MESSAGE(c.exited_with(0), c.errors());
    CHECK(contains(c.output(), "init PMIX_SUCCESS lonely.job 0"));
    CHECK(contains(c.output(), "get:*:pmix.job.size PMIX_SUCCESS 1"));
    CHECK(PMIx_server_finalize() == PMIX_SUCCESS);
  }

  TEST_CASE("[20.2.247.4.4 PMIX_BIND_PROGRESS_THREAD] the server's threads run on the CPUs given") {
    // Both thread set-ups: the default loop thread (one thread of ours), and
    // the socket thread with CAF's workers (PMIX_CXX_LOOP=0: three or more).
    std::size_t least = 1;
    SUBCASE("one loop thread") { ::unsetenv("PMIX_CXX_LOOP"); }
    SUBCASE("socket thread and workers") {
      ::setenv("PMIX_CXX_LOOP", "0", 1);
      least = 3;
    }
    temp_dir dir;
    const auto before = threads();
    directives d;
    d.text(PMIX_SERVER_TMPDIR, dir.path()).text(PMIX_BIND_PROGRESS_THREAD, "0").flag(PMIX_BIND_REQUIRED);
    REQUIRE(init(d) == PMIX_SUCCESS);
    // Each new thread binds itself as it starts: wait until all have.
    auto unbound = [&] {
      std::string names;
      int bound = 0;
      for (const auto& tid : threads()) {
        if (before.count(tid) > 0) continue;
        std::ifstream status("/proc/self/task/" + tid + "/status");
        std::string line, name;
        std::getline(std::ifstream("/proc/self/task/" + tid + "/comm"), name);
        while (std::getline(status, line))
          if (line.rfind("Cpus_allowed_list:", 0) == 0) {
            if (line.substr(line.find_first_not_of(" \t", 18)) == "0") ++bound;
            else names += name + "(" + tid + ") ";
          }
      }
      return std::make_pair(bound, names);
    };
    const bool settled = eventually([&] {
      const auto [bound, names] = unbound();
      return bound >= static_cast<int>(least) && names.empty();
    });
    const auto [checked, names] = unbound();
    CHECK_MESSAGE(settled, "unbound threads: " << names);
    CHECK(checked >= static_cast<int>(least));
    CHECK(PMIx_server_finalize() == PMIX_SUCCESS);
    ::unsetenv("PMIX_CXX_LOOP");
  }

  TEST_CASE("[20.2.247.4.4 PMIX_BIND_REQUIRED] CPUs this node does not have: an error when required, a warning otherwise") {
    temp_dir dir;
    baseline before({dir.path()});
    directives d;
    d.text(PMIX_SERVER_TMPDIR, dir.path()).text(PMIX_BIND_PROGRESS_THREAD, "9999").flag(PMIX_BIND_REQUIRED);
    CHECK(init(d) == PMIX_ERR_BAD_PARAM);
    CHECK(before.unchanged());
    directives lenient;
    lenient.text(PMIX_SERVER_TMPDIR, dir.path()).text(PMIX_BIND_PROGRESS_THREAD, "9999");
    CHECK(init(lenient) == PMIX_SUCCESS);
    CHECK(PMIx_server_finalize() == PMIX_SUCCESS);
  }

  TEST_CASE("[20.2.247.4] directives that need nothing from this server are accepted, also when required") {
    temp_dir dir;
    directives d;
    d.text(PMIX_SERVER_TMPDIR, dir.path()).flag(PMIX_SERVER_GATEWAY).flag(PMIX_HOMOGENEOUS_SYSTEM)
        .flag(PMIX_IOF_LOCAL_OUTPUT);
    d.v.emplace_back();
    int base = 0;
    PMIX_INFO_LOAD(&d.v.back(), PMIX_EXTERNAL_AUX_EVENT_BASE, &base, PMIX_POINTER);
    REQUIRE(init(d) == PMIX_SUCCESS);
    CHECK(PMIx_server_finalize() == PMIX_SUCCESS);
    // They are supported (docs/server-init.md says what each does), so
    // PMIX_INFO_REQD changes nothing.
    temp_dir sys;
    directives required;
    required.text(PMIX_SERVER_TMPDIR, dir.path()).text(PMIX_SYSTEM_TMPDIR, sys.path())
        .required(PMIX_SERVER_GATEWAY).required(PMIX_HOMOGENEOUS_SYSTEM).required(PMIX_IOF_LOCAL_OUTPUT)
        .required(PMIX_SERVER_SCHEDULER);
    REQUIRE(init(required) == PMIX_SUCCESS);
    CHECK(exists(sys.path() + "/pmix.sched." + host));
    CHECK(PMIx_server_finalize() == PMIX_SUCCESS);
  }

  TEST_CASE("[20.2.247.5 PMIX_ERR_NOT_SUPPORTED] monitoring is ignored, and refused only when required") {
    temp_dir dir;
    {
      directives d;
      d.text(PMIX_SERVER_TMPDIR, dir.path()).flag(PMIX_SERVER_ENABLE_MONITORING).flag("vendor.unknown.knob");
      REQUIRE(init(d) == PMIX_SUCCESS);
      CHECK(PMIx_server_finalize() == PMIX_SUCCESS);
    }
    directives d;
    d.text(PMIX_SERVER_TMPDIR, dir.path()).required(PMIX_SERVER_ENABLE_MONITORING);
    CHECK(init(d) == PMIX_ERR_NOT_SUPPORTED);
    CHECK(PMIx_server_finalize() == PMIX_ERR_INIT);
  }

  TEST_CASE("[20.2.247.4.4 PMIX_EXTERNAL_PROGRESS] no threads of the library; the host's PMIx_Progress serves a job") {
    temp_dir dir;
    const auto before = threads();
    directives d;
    d.text(PMIX_SERVER_TMPDIR, dir.path()).flag(PMIX_EXTERNAL_PROGRESS);
    REQUIRE(init(d) == PMIX_SUCCESS);
    CHECK(no_new_threads(before));  // no progress thread, no socket thread, no workers
    // A non-blocking call completes only when the host progresses.
    std::atomic<int> answered{0};
    REQUIRE(PMIx_server_register_nspace(
                "later", 1, nullptr, 0,
                [](pmix_status_t st, void* cb) { static_cast<std::atomic<int>*>(cb)->store(st == PMIX_SUCCESS ? 1 : 2); },
                &answered) == PMIX_SUCCESS);
    CHECK(answered == 0);
    PMIx_Progress();
    CHECK(answered == 1);
    // A blocking call progresses by itself while it waits.
    REQUIRE(register_job("driven", 2, 2) == PMIX_SUCCESS);
    std::vector<child> ranks;
    for (pmix_rank_t r = 0; r < 2; ++r)
      ranks.push_back(launch("driven", r, {runfile("tools/demo/pmix_demo"), "--rounds", "2"}, dir.path()));
    // The host's loop: progress until every client has exited.
    int running = 2;
    for (int spins = 0; running > 0 && spins < 600000; ++spins) {
      PMIx_Progress();
      running = 0;
      for (auto& c : ranks)
        if (c.wait(std::chrono::seconds(0)) == -2) ++running;
      if (running > 0) ::usleep(100);
    }
    CHECK(running == 0);
    for (auto& c : ranks) {
      CHECK_MESSAGE(c.exited_with(0), c.errors());
      CHECK(contains(c.output(), "checked 2 peers' values over 2 round(s)"));
    }
    CHECK(no_new_threads(before));
    CHECK(PMIx_server_finalize() == PMIX_SUCCESS);
    CHECK(no_new_threads(before));
  }

  TEST_CASE("[PMIX_CXX_PROGRESS_FD] no threads of the library; the host's loop serves a job when the descriptor is "
            "readable, timeouts included") {
    temp_dir dir;
    scoped_env timeout{"PMIX_CXX_HANDSHAKE_TIMEOUT_MS", "300"};
    const auto before = threads();
    int fd = -1;
    directives d;
    d.text(PMIX_SERVER_TMPDIR, dir.path()).pointer(PMIX_CXX_PROGRESS_FD, &fd);
    REQUIRE(init(d) == PMIX_SUCCESS);
    REQUIRE(fd >= 0);
    CHECK(no_new_threads(before));
    auto readable = [fd](int ms) {
      pollfd p{fd, POLLIN, 0};
      return ::poll(&p, 1, ms) == 1;
    };
    // A non-blocking call makes the descriptor readable; it completes in
    // the host's turn.
    std::atomic<int> answered{0};
    REQUIRE(PMIx_server_register_nspace(
                "later", 1, nullptr, 0,
                [](pmix_status_t st, void* cb) { static_cast<std::atomic<int>*>(cb)->store(st == PMIX_SUCCESS ? 1 : 2); },
                &answered) == PMIX_SUCCESS);
    CHECK(readable(10000));
    CHECK(answered == 0);
    PMIx_Progress();
    CHECK(answered == 1);
    // Idle, it stays unreadable (a host's loop does not spin).
    CHECK(eventually([&] {
      if (readable(0)) PMIx_Progress();
      return !readable(0);
    }));
    // A blocking call progresses by itself while it waits.
    REQUIRE(register_job("hosted", 2, 2) == PMIX_SUCCESS);
    // The host's loop on a thread of its own: a turn whenever the
    // descriptor is readable, and only then.
    std::atomic<bool> stop{false};
    std::thread loop([&] {
      while (!stop)
        if (readable(50)) PMIx_Progress();
    });
    std::vector<child> ranks;
    for (pmix_rank_t r = 0; r < 2; ++r)
      ranks.push_back(launch("hosted", r, {runfile("tools/demo/pmix_demo"), "--rounds", "2"}, dir.path()));
    for (auto& c : ranks) {
      CHECK_MESSAGE(c.exited_with(0), c.errors());
      CHECK(contains(c.output(), "checked 2 peers' values over 2 round(s)"));
    }
    // A silent connection is closed when its handshake's time is up: the
    // timeout makes the descriptor readable, nothing else happening.
    const int idle = connect_raw(server_uri());
    REQUIRE(idle >= 0);
    CHECK(closed_by_server(idle));
    ::close(idle);
    stop = true;
    loop.join();
    CHECK(no_new_threads(before));
    CHECK(PMIx_server_finalize() == PMIX_SUCCESS);
    CHECK(no_new_threads(before));
    ::close(fd);
  }

  TEST_CASE("[PMIX_CXX_PROGRESS_FD] anything but a pointer is refused with PMIX_ERR_BAD_PARAM") {
    temp_dir dir;
    directives d;
    d.text(PMIX_SERVER_TMPDIR, dir.path()).integer(PMIX_CXX_PROGRESS_FD, 5);
    CHECK(init(d) == PMIX_ERR_BAD_PARAM);
    CHECK(PMIx_server_finalize() == PMIX_ERR_INIT);
  }
}
