// A tool connected to several servers at once (issue 15; PMIx Standard 4.2,
// chapter 18 "Tools and Debuggers"): PMIx_tool_attach_to_server (and the
// deprecated PMIx_tool_connect_to_server), PMIx_tool_get_servers,
// PMIx_tool_set_server and PMIx_tool_disconnect, with real processes. The
// tool is script_client (tests/e2e/tool_steps.hpp). The servers are
// server_host processes: "srvA" hosting job "jobA" of 2 ranks and "srvB"
// hosting job "jobB" of 3 ranks, each of whose hosts answers every query key
// with its own job's namespace, so the tool sees which server served a
// request. Two cases need a server whose state the test can see or whose
// events it can raise: there server A is this process instead (no query
// up-call, so its answer is PMIX_ERR_NOT_SUPPORTED).
#include <doctest/doctest.h>
#include <signal.h>

#include <cstdio>
#include <sstream>
#include <string>
#include <vector>

#include "tests/e2e/host.hpp"

using namespace pmix::test;

namespace {

const std::string script = runfile("tests/e2e/script_client");
const std::string server_host = runfile("tests/e2e/server_host");

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in{text};
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

// A server in a process of its own: server_host as <name>, hosting <job> of
// <size> ranks, whose host answers queries with "<job>".
class server_proc {
 public:
  server_proc(const std::string& dir, const std::string& name, const std::string& job, int size)
      : stop_(dir + "/stop." + name),
        proc_(
            {server_host, std::string{PMIX_SERVER_TMPDIR} + "=" + dir,
             std::string{PMIX_SERVER_NSPACE} + "=" + name, std::string{PMIX_SERVER_TOOL_SUPPORT} + "=true"},
            environment_with({"SERVER_HOST_STOP=" + stop_,
                              "SERVER_HOST_JOB=" + job + ":" + std::to_string(size), "SERVER_HOST_QUERY=1"}),
            dir) {}
  ~server_proc() { stop(); }
  // Waits until it serves; reads its URI.
  bool up() {
    if (!wait_for_output(proc_, "ready")) return false;
    const auto out = proc_.output();
    const std::string tag = "env PMIX_CXX_SERVER_URI=";
    const auto at = out.find(tag);
    if (at == std::string::npos) return false;
    const auto start = at + tag.size();
    uri_ = out.substr(start, out.find('\n', start) - start);
    return true;
  }
  // Asks it to finalize and waits; its output says how finalize went.
  std::string stop() {
    if (!stopped_) {
      std::fclose(std::fopen(stop_.c_str(), "w"));
      proc_.wait();
      stopped_ = true;
    }
    return proc_.output();
  }
  const std::string& uri() const { return uri_; }
  pid_t pid() const { return proc_.pid(); }
  void crash() {
    ::kill(proc_.pid(), SIGKILL);
    proc_.wait();
    stopped_ = true;
  }

 private:
  std::string stop_;
  child proc_;
  std::string uri_;
  bool stopped_ = false;
};

// Server A in this process (srvA, job jobA of 2 ranks here, no query
// up-call): the test sees its state and raises its events.
struct server_here {
  std::vector<pmix_info_t> d;
  std::unique_ptr<server> srv;
  explicit server_here(const std::string& dir) : d(2) {
    bool yes = true;
    PMIX_INFO_LOAD(&d[0], PMIX_SERVER_TOOL_SUPPORT, &yes, PMIX_BOOL);
    PMIX_INFO_LOAD(&d[1], PMIX_SERVER_NSPACE, "srvA", PMIX_STRING);
    srv = std::make_unique<server>(dir, host_slots{}, d);
  }
  ~server_here() {
    srv.reset();
    for (auto& i : d) PMIX_INFO_DESTRUCT(&i);
  }
  bool up() const { return srv->status() == PMIX_SUCCESS && register_job("jobA", 2, 2) == PMIX_SUCCESS; }
};

// Server A holds nothing of any tool: its own job only, no connection, no
// actor outside the tree.
bool holds_no_tool() {
  const auto snap = take_snapshot();
  return snap.nspaces.size() == 1 && snap.connections == 0 && snap.actors == snap.accounted_actors();
}

// A tool's steps, each with the start of the line it must print after
// "<step> " (the status, then what the step prints).
struct script_steps {
  std::vector<std::string> steps, expected;
  script_steps& step(const std::string& s, const std::string& expect) {
    steps.push_back(s);
    expected.push_back(expect);
    return *this;
  }
};

// Runs the tool (its PMIx_tool_init connects to $TEST_SERVER_URI = `first`;
// $SERVER_A_URI and $SERVER_B_URI name the servers for its attach steps,
// $NOWHERE_URI a socket nobody listens on) and
// checks every line. Returns its output lines.
std::vector<std::string> run_tool(const script_steps& s, const std::string& dir, const std::string& first,
                                  const std::string& a_uri, const std::string& b_uri) {
  std::vector<std::string> argv{script};
  argv.insert(argv.end(), s.steps.begin(), s.steps.end());
  child t(
      argv,
      environment_with({"TEST_SERVER_URI=" + first, "SERVER_A_URI=" + a_uri, "SERVER_B_URI=" + b_uri,
                        "NOWHERE_URI=srvC.0;uds://" + dir + "/no-such-socket", "PMIX_SERVER_TMPDIR=" + dir,
                        "PMIX_NAMESPACE=", "PMIX_SERVER_URI41=", "PMIX_SERVER_URI4="}),
      dir);
  CHECK_MESSAGE(t.exited_with(0), t.errors());
  auto lines = lines_of(t.output());
  REQUIRE_MESSAGE(lines.size() >= s.steps.size(), t.output() << t.errors());
  for (std::size_t k = 0; k < s.steps.size(); ++k) {
    const auto want = s.steps[k] + " " + s.expected[k];
    CHECK_MESSAGE(lines[k].compare(0, want.size(), want) == 0, "line " << k << ": '" << lines[k]
                                                                       << "', wanted '" << want << "...'\n"
                                                                       << t.errors());
  }
  return lines;
}

// The identity a tool_init line printed ("tool_init <status> <nspace> <rank>"),
// as "<nspace>.<rank>".
std::string identity_of(const std::string& line) {
  std::istringstream in{line};
  std::string step, status, nspace, rank;
  in >> step >> status >> nspace >> rank;
  return nspace + "." + rank;
}

}  // namespace

TEST_SUITE("tool servers") {
  TEST_CASE(
      "[18.4 PMIx_tool_attach_to_server, _get_servers, _set_server, _disconnect] a tool with two servers") {
    temp_dir dir;
    server_proc a(dir.path(), "srvA", "jobA", 2);
    server_proc b(dir.path(), "srvB", "jobB", 3);
    REQUIRE(a.up());
    REQUIRE(b.up());
    script_steps s;
    // Before PMIx_tool_init.
    s.step("tool_servers", "PMIX_ERR_INIT (none)")
        .step("tool_attach:uri_env=SERVER_B_URI", "PMIX_ERR_INIT")
        .step("tool_set_server:srvB:0", "PMIX_ERR_INIT")
        .step("tool_disconnect:srvB:0", "PMIX_ERR_INIT")
        // Server A is the first, so the primary one.
        .step("tool_init", "PMIX_SUCCESS srvA.tool.")
        .step("tool_servers", "PMIX_SUCCESS srvA.0")
        .step("get_ns:jobA:*:pmix.job.size", "PMIX_SUCCESS 2")
        .step("query:pmix.qry.ns", "PMIX_SUCCESS 1 pmix.qry.ns=jobA")
        // Server B besides: A stays the primary one.
        .step("tool_attach:uri_env=SERVER_B_URI", "PMIX_SUCCESS srvA.tool.")
        .step("tool_servers", "PMIX_SUCCESS srvA.0,srvB.0")
        .step("query:pmix.qry.ns", "PMIX_SUCCESS 1 pmix.qry.ns=jobA")
        // B becomes the primary server: the client calls go there.
        .step("tool_set_server:srvB:0", "PMIX_SUCCESS")
        .step("tool_servers", "PMIX_SUCCESS srvB.0,srvA.0")
        .step("query:pmix.qry.ns", "PMIX_SUCCESS 1 pmix.qry.ns=jobB")
        .step("get_ns:jobB:*:pmix.job.size", "PMIX_SUCCESS 3")
        // A server already connected: its identity, no second connection (by
        // URI, namespace and PID).
        .step("tool_attach:uri_env=SERVER_A_URI", "PMIX_SUCCESS srvA.tool.")
        .step("tool_attach:nspace=srvB", "PMIX_SUCCESS srvA.tool.")
        .step("tool_attach:pid=" + std::to_string(a.pid()), "PMIX_SUCCESS srvA.tool.")
        .step("tool_servers", "PMIX_SUCCESS srvB.0,srvA.0")
        .step("query:pmix.qry.ns", "PMIX_SUCCESS 1 pmix.qry.ns=jobB")
        // Back to A and to B again.
        .step("tool_set_server:srvA:0", "PMIX_SUCCESS")
        .step("query:pmix.qry.ns", "PMIX_SUCCESS 1 pmix.qry.ns=jobA")
        .step("tool_set_server:srvB:0", "PMIX_SUCCESS")
        // Disconnecting the other server leaves the primary one working.
        .step("tool_disconnect:srvA:0", "PMIX_SUCCESS")
        .step("tool_servers", "PMIX_SUCCESS srvB.0")
        .step("query:pmix.qry.ns", "PMIX_SUCCESS 1 pmix.qry.ns=jobB")
        .step("get_ns:jobB:*:pmix.job.size", "PMIX_SUCCESS 3")
        // Unknown servers.
        .step("tool_disconnect:srvA:0", "PMIX_ERR_NOT_FOUND")
        .step("tool_disconnect:srvC:0", "PMIX_ERR_NOT_FOUND")
        .step("tool_set_server:srvA:0", "PMIX_ERR_UNREACH")
        .step("tool_set_server:srvC:0:wait=1", "PMIX_ERR_NOT_FOUND waited_ms=")
        // Attaching to nowhere.
        .step("tool_attach:none", "PMIX_ERR_BAD_PARAM")
        .step("tool_attach:nspace=srvC", "PMIX_ERR_UNREACH")
        .step("tool_attach:pid=999999999", "PMIX_ERR_UNREACH")
        .step("tool_attach:uri_env=NOWHERE_URI", "PMIX_ERR_UNREACH")
        .step("tool_servers", "PMIX_SUCCESS srvB.0")
        // Disconnecting the primary server: calls that need one are unreachable.
        .step("tool_disconnect:srvB:0", "PMIX_SUCCESS")
        .step("tool_servers", "PMIX_ERR_UNREACH (none)")
        .step("query:pmix.qry.ns", "PMIX_ERR_UNREACH")
        .step("tool_set_server:srvB:0", "PMIX_ERR_UNREACH")
        // Attached again without PMIX_PRIMARY_SERVER: listed, but not the
        // primary one (as OpenPMIx 4.2.2) until the tool says so.
        .step("tool_attach:pid=" + std::to_string(a.pid()), "PMIX_SUCCESS srvA.tool.")
        .step("tool_servers", "PMIX_SUCCESS srvA.0")
        .step("query:pmix.qry.ns", "PMIX_ERR_UNREACH")
        .step("tool_set_server:srvA:0", "PMIX_SUCCESS")
        .step("query:pmix.qry.ns", "PMIX_SUCCESS 1 pmix.qry.ns=jobA")
        // With PMIX_PRIMARY_SERVER, the new server is the primary one at once.
        .step("tool_attach:uri_env=SERVER_B_URI:primary", "PMIX_SUCCESS srvA.tool.")
        .step("tool_servers", "PMIX_SUCCESS srvB.0,srvA.0")
        .step("query:pmix.qry.ns", "PMIX_SUCCESS 1 pmix.qry.ns=jobB")
        // The deprecated form attaches too (not as the primary server).
        .step("tool_disconnect:srvA:0", "PMIX_SUCCESS")
        .step("tool_connect:uri_env=SERVER_A_URI", "PMIX_SUCCESS srvA.tool.")
        .step("tool_servers", "PMIX_SUCCESS srvB.0,srvA.0")
        .step("query:pmix.qry.ns", "PMIX_SUCCESS 1 pmix.qry.ns=jobB")
        // Finalize closes every connection.
        .step("tool_finalize", "PMIX_SUCCESS")
        .step("tool_servers", "PMIX_ERR_INIT (none)");
    const auto lines = run_tool(s, dir.path(), a.uri(), a.uri(), b.uri());
    // The tool keeps its identity on every server [18.1].
    const auto me = identity_of(lines[4]);
    for (std::size_t k = 0; k < s.steps.size(); ++k)
      if (s.steps[k].rfind("tool_attach:", 0) == 0 && contains(lines[k], "PMIX_SUCCESS"))
        CHECK_MESSAGE(contains(lines[k], "PMIX_SUCCESS " + me + " "), lines[k]);
    // Both servers finalize cleanly after the tool has gone.
    CHECK(contains(a.stop(), "finalize PMIX_SUCCESS"));
    CHECK(contains(b.stop(), "finalize PMIX_SUCCESS"));
  }

  TEST_CASE("[18.1] a tool that started without a server; the search passes over servers it holds") {
    temp_dir dir;
    server_proc a(dir.path(), "srvA", "jobA", 2);
    server_proc b(dir.path(), "srvB", "jobB", 3);
    REQUIRE(a.up());
    REQUIRE(b.up());
    script_steps s;
    s.step("tool_init:standalone:ns=lonely", "PMIX_SUCCESS lonely 0")
        .step("tool_servers", "PMIX_ERR_UNREACH (none)")
        .step("query:pmix.qry.ns", "PMIX_ERR_UNREACH")
        .step("tool_attach:nspace=srvB", "PMIX_SUCCESS lonely.0 srvB.0")
        .step("tool_servers", "PMIX_SUCCESS srvB.0")
        .step("query:pmix.qry.ns", "PMIX_ERR_UNREACH")  // not the primary one yet
        .step("tool_set_server:srvB:0", "PMIX_SUCCESS")
        .step("query:pmix.qry.ns", "PMIX_SUCCESS 1 pmix.qry.ns=jobB")
        // The rendezvous search finds A: B is held.
        .step("tool_attach:search", "PMIX_SUCCESS lonely.0 srvA.0")
        .step("tool_servers", "PMIX_SUCCESS srvB.0,srvA.0")
        // Nothing new to find.
        .step("tool_attach:search", "PMIX_ERR_UNREACH")
        // PMIX_PRIMARY_SERVER on a server already held makes it the primary one.
        .step("tool_attach:uri_env=SERVER_A_URI:primary", "PMIX_SUCCESS lonely.0 srvA.0")
        .step("tool_servers", "PMIX_SUCCESS srvA.0,srvB.0")
        .step("query:pmix.qry.ns", "PMIX_SUCCESS 1 pmix.qry.ns=jobA")
        // The tool itself named: no primary server.
        .step("tool_set_server:lonely:0", "PMIX_SUCCESS")
        .step("tool_servers", "PMIX_SUCCESS srvB.0,srvA.0")
        .step("query:pmix.qry.ns", "PMIX_ERR_UNREACH")
        .step("tool_set_server:srvB:0", "PMIX_SUCCESS")
        .step("query:pmix.qry.ns", "PMIX_SUCCESS 1 pmix.qry.ns=jobB")
        // No server named: the tool leaves its primary server but keeps both
        // connections (as OpenPMIx 4.2.2).
        .step("tool_disconnect:null", "PMIX_SUCCESS")
        .step("query:pmix.qry.ns", "PMIX_ERR_UNREACH")
        .step("tool_servers", "PMIX_SUCCESS srvB.0,srvA.0")
        .step("tool_set_server:srvA:0", "PMIX_SUCCESS")
        .step("query:pmix.qry.ns", "PMIX_SUCCESS 1 pmix.qry.ns=jobA")
        .step("tool_finalize", "PMIX_SUCCESS");
    run_tool(s, dir.path(), a.uri(), a.uri(), b.uri());
    CHECK(contains(a.stop(), "finalize PMIX_SUCCESS"));
    CHECK(contains(b.stop(), "finalize PMIX_SUCCESS"));
  }

  TEST_CASE(
      "[18.4 PMIx_tool_set_server PMIX_WAIT_FOR_CONNECTION] set_server waits for the connection another "
      "thread makes") {
    temp_dir dir;
    server_proc a(dir.path(), "srvA", "jobA", 2);
    server_proc b(dir.path(), "srvB", "jobB", 3);
    REQUIRE(a.up());
    REQUIRE(b.up());
    script_steps s;
    s.step("tool_init", "PMIX_SUCCESS srvA.tool.")
        .step("tool_attach_later:300:uri_env=SERVER_B_URI", "PMIX_SUCCESS")
        .step("tool_set_server:srvB:0:wait=60", "PMIX_SUCCESS waited_ms=")
        .step("tool_join", "PMIX_SUCCESS")
        .step("tool_servers", "PMIX_SUCCESS srvB.0,srvA.0")
        .step("query:pmix.qry.ns", "PMIX_SUCCESS 1 pmix.qry.ns=jobB")
        .step("tool_finalize", "PMIX_SUCCESS");
    run_tool(s, dir.path(), a.uri(), a.uri(), b.uri());
  }

  TEST_CASE(
      "events from every server reach the tool's handlers; a lost server leaves the list; finalize closes "
      "the rest") {
    temp_dir dir;
    server_here a(dir.path());
    REQUIRE(a.up());
    server_proc b(dir.path(), "srvB", "jobB", 3);
    REQUIRE(b.up());
    const std::string attached = dir.path() + "/attached", go = dir.path() + "/go",
                      done = dir.path() + "/done", release = dir.path() + "/release";
    constexpr pmix_status_t code = PMIX_EXTERNAL_ERR_BASE - 15;
    std::vector<std::string> steps{script,
                                   "tool_init",
                                   "tool_attach:uri_env=SERVER_B_URI",
                                   "on_event:" + std::to_string(code),
                                   "on_event:" + std::to_string(PMIX_ERR_LOST_CONNECTION),
                                   "touch:" + attached,
                                   "wait_event:" + std::to_string(code),
                                   "wait_file:" + go,
                                   "wait_event:" + std::to_string(PMIX_ERR_LOST_CONNECTION),
                                   "tool_servers",
                                   "query:pmix.qry.ns",
                                   "tool_set_server:srvB:0",
                                   "tool_disconnect:srvB:0",
                                   "tool_servers",
                                   "tool_finalize",
                                   "touch:" + done,
                                   "wait_file:" + release};
    child t(steps,
            environment_with({"TEST_SERVER_URI=" + server_uri(), "SERVER_B_URI=" + b.uri(),
                              "PMIX_NAMESPACE=", "PMIX_SERVER_URI41=", "PMIX_SERVER_URI4="}),
            dir.path());
    REQUIRE(eventually([&] { return ::access(attached.c_str(), F_OK) == 0; }));
    // An event from server A (the primary one)...
    pmix_proc_t source;
    PMIX_LOAD_PROCID(&source, "srvA", 0);
    CHECK(PMIx_Notify_event(code, &source, PMIX_RANGE_GLOBAL, nullptr, 0, nullptr, nullptr) == PMIX_SUCCESS);
    REQUIRE(wait_for_output(t, "wait_event:" + std::to_string(code) + " PMIX_SUCCESS srvA.0"));
    // ...and the loss of server B (not the primary one).
    b.crash();
    std::fclose(std::fopen(go.c_str(), "w"));
    REQUIRE(eventually([&] { return ::access(done.c_str(), F_OK) == 0; }));
    // The tool's finalize closed its connection to A while the tool lives on.
    CHECK(eventually(holds_no_tool));
    std::fclose(std::fopen(release.c_str(), "w"));
    CHECK_MESSAGE(t.exited_with(0), t.errors());
    const auto out = t.output();
    CHECK(contains(out, "wait_event:" + std::to_string(PMIX_ERR_LOST_CONNECTION) + " PMIX_SUCCESS srvB.0"));
    CHECK(contains(out, "tool_servers PMIX_SUCCESS srvA.0\n"));
    CHECK(contains(out, "query:pmix.qry.ns PMIX_ERR_NOT_SUPPORTED"));  // A (no query up-call) still serves
    CHECK(
        contains(out, "tool_set_server:srvB:0 PMIX_ERR_UNREACH"));  // a lost server cannot be the primary one
    CHECK(contains(out, "tool_disconnect:srvB:0 PMIX_SUCCESS"));    // the lost connection is closed
    CHECK(contains(out, "tool_finalize PMIX_SUCCESS"));
  }

  TEST_CASE(
      "[Tool-Side Teardown] 100 attach/disconnect cycles leave no descriptor, memory or server state "
      "behind") {
    temp_dir dir;
    server_here a(dir.path());
    REQUIRE(a.up());
    server_proc b(dir.path(), "srvB", "jobB", 3);
    REQUIRE(b.up());
    const std::string cycled = dir.path() + "/cycled", go = dir.path() + "/go";
    // The primary server is B; the cycles attach to A, this process, whose
    // state the test can see.
    child t({script, "tool_init", "tool_attach_cycles:uri_env=SERVER_A_URI:100", "touch:" + cycled,
             "wait_file:" + go, "tool_servers", "tool_finalize"},
            environment_with({"TEST_SERVER_URI=" + b.uri(), "SERVER_A_URI=" + server_uri(),
                              "PMIX_NAMESPACE=", "PMIX_SERVER_URI41=", "PMIX_SERVER_URI4="}),
            dir.path());
    REQUIRE(eventually([&] { return ::access(cycled.c_str(), F_OK) == 0; }));
    // While the tool still runs, A holds nothing of it.
    CHECK(eventually(holds_no_tool));
    std::fclose(std::fopen(go.c_str(), "w"));
    REQUIRE_MESSAGE(t.exited_with(0), t.errors());
    const auto out = t.output();
    MESSAGE("tool: " << out);
    long ok = -1, failed = -1, rss = -1, before = -1, start = -2, end = -3;
    const auto at = out.find(" ok=");
    REQUIRE(at != std::string::npos);
    char first_error[64] = {0};
    std::sscanf(
        out.c_str() + at,
        " ok=%ld failed=%ld first_error=%63s rss_growth_kb=%ld fds_before=%ld fds_start=%ld fds_end=%ld", &ok,
        &failed, first_error, &rss, &before, &start, &end);
    CHECK(ok == 100);
    CHECK(failed == 0);
    CHECK(end == before);
    CHECK(end == start);
    CHECK(rss <= 512);  // allocator noise only (lifecycle_test's bound for 1,000 tool cycles)
    CHECK(contains(out, "tool_servers PMIX_SUCCESS srvB.0\n"));
    CHECK(contains(out, "tool_finalize PMIX_SUCCESS"));
  }
}
