// The requests a client hands its host through the server (issue 15):
// PMIx_Allocation_request, PMIx_Process_monitor and PMIx_Heartbeat,
// PMIx_Get_credential / PMIx_Validate_credential, PMIx_IOF_push and the
// PMIx_Fabric_* calls, with real client processes: with the host's up-calls
// (they reach it and its answers come back), without them (the status
// OpenPMIx gives), and what the server serves itself (heartbeats,
// credentials).
#include <doctest/doctest.h>
#include <unistd.h>
#include <pmix.h>
#include <pmix_server.h>
#include <sys/stat.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "tests/e2e/host.hpp"

using namespace pmix::test;

namespace {

const std::string script = runfile("tests/e2e/script_client");


std::string run(const std::string& nspace, const std::vector<std::string>& steps, const std::string& dir) {
  std::vector<std::string> argv{script};
  argv.insert(argv.end(), steps.begin(), steps.end());
  auto c = launch(nspace, 0, argv, dir);
  CHECK_MESSAGE(c.exited_with(0), c.errors());
  return c.output();
}

}  // namespace

TEST_SUITE("host requests") {
  TEST_CASE("with the host's up-calls each request reaches the host and its answer comes back") {
    temp_dir dir;
    host_slots slots;
    slots.requests = true;
    server srv(dir.path(), slots);
    REQUIRE(srv.status() == PMIX_SUCCESS);
    REQUIRE(register_job("asks", 1, 1) == PMIX_SUCCESS);
    const auto cred = dir.path() + "/cred";
    const auto out = run("asks",
                         {"init", "allocate:1", "allocate_nb:2", "monitor_file:/tmp/watched", "credential:" + cred,
                          "validate:" + cred, "validate_nb:" + cred, "credential_nb:" + cred, "fabric", "fabric_nb",
                          "iof_push:0:hello", "iof_push_end:0", "finalize"},
                         dir.path());
    CAPTURE(out);
    CHECK(contains(out, "allocate:1 PMIX_SUCCESS host.alloc=granted"));
    CHECK(contains(out, "allocate_nb:2 PMIX_SUCCESS host.alloc=granted"));
    CHECK(contains(out, "monitor_file:/tmp/watched PMIX_SUCCESS host.monitor=on"));
    CHECK(contains(out, "credential:" + cred + " PMIX_SUCCESS 16"));  // "host-cred:asks.0"
    CHECK(contains(out, "validate:" + cred + " PMIX_SUCCESS uid=4242"));
    CHECK(contains(out, "validate_nb:" + cred + " PMIX_SUCCESS uid=4242"));
    CHECK(contains(out, "credential_nb:" + cred + " PMIX_SUCCESS 16 type=host"));
    CHECK(contains(out, "fabric:register PMIX_SUCCESS 1 host.fabric=fab0"));
    CHECK(contains(out, "fabric:update PMIX_SUCCESS 1"));
    CHECK(contains(out, "fabric:deregister PMIX_SUCCESS 0"));
    CHECK(contains(out, "fabric_nb:register PMIX_SUCCESS 1 host.fabric=fab0"));
    CHECK(contains(out, "fabric_nb:deregister PMIX_SUCCESS 0"));
    CHECK(contains(out, "iof_push:0:hello PMIX_SUCCESS"));
    CHECK(contains(out, "iof_push_end:0 PMIX_SUCCESS"));
    // What the host was handed.
    CHECK(calls_starting("allocate: asks.0 directive=1 keys: want.nodes").size() == 1);
    CHECK(calls_starting("allocate: asks.0 directive=2").size() == 1);
    CHECK(calls_starting("monitor: asks.0 pmix.monitor.fmon error=" + std::to_string(PMIX_MONITOR_FILE_ALERT)).size() ==
          1);
    CHECK(calls_starting("get_credential: asks.0").size() == 2);
    CHECK(calls_starting("validate_credential: asks.0 host-cred:asks.0").size() == 2);
    CHECK(calls_starting("fabric: asks.0 op=" + std::to_string(PMIX_FABRIC_REQUEST_INFO) + " keys: pmix.fab.id")
              .size() == 2);
    CHECK(calls_starting("fabric: asks.0 op=" + std::to_string(PMIX_FABRIC_UPDATE_INFO)).size() == 1);
    CHECK(calls_starting("push_stdin: asks.0 -> asks.0 [hello]").size() == 1);
    CHECK(calls_starting("push_stdin: asks.0 -> asks.0 EOF").size() == 1);
  }

  TEST_CASE("without them: allocation, fabrics, file monitors and stdin are not supported; bad requests are refused") {
    temp_dir dir;
    server srv(dir.path());  // no request up-calls
    REQUIRE(srv.status() == PMIX_SUCCESS);
    REQUIRE(register_job("alone", 1, 1) == PMIX_SUCCESS);
    const auto out = run("alone",
                         {"allocate:1", "init", "allocate:0", "allocate:1", "allocate_nb:1", "monitor_file:/tmp/x",
                          "fabric", "iof_push:0:x", "heartbeat:0:1", "finalize"},
                         dir.path());
    CAPTURE(out);
    CHECK(contains(out, "allocate:1 PMIX_ERR_INIT"));  // before init
    CHECK(contains(out, "allocate:0 PMIX_ERR_BAD_PARAM"));
    CHECK(contains(out, "init PMIX_SUCCESS alone 0\nallocate:0 PMIX_ERR_BAD_PARAM\nallocate:1 PMIX_ERR_NOT_SUPPORTED"));
    CHECK(contains(out, "allocate_nb:1 PMIX_ERR_NOT_SUPPORTED"));
    CHECK(contains(out, "monitor_file:/tmp/x PMIX_ERR_NOT_SUPPORTED"));
    CHECK(contains(out, "fabric:register PMIX_ERR_NOT_SUPPORTED 0"));
    CHECK(contains(out, "iof_push:0:x PMIX_ERR_NOT_SUPPORTED"));
    CHECK(contains(out, "heartbeat:0:1 PMIX_ERR_BAD_PARAM"));  // a heartbeat needs a period
    CHECK(contains(out, "finalize PMIX_SUCCESS"));
  }

  TEST_CASE("OpenPMIx 6.0's session control and resource blocks reach a host whose module says it has them") {
    temp_dir dir;
    host_slots slots;
    slots.later = true;
    pmix_info_t size;
    const uint32_t v6 = 32;
    PMIX_INFO_LOAD(&size, PMIX_CXX_SERVER_MODULE_SLOTS, &v6, PMIX_UINT32);
    server srv(dir.path(), slots, {size});
    REQUIRE(srv.status() == PMIX_SUCCESS);
    REQUIRE(register_job("later", 1, 1) == PMIX_SUCCESS);
    const auto out = run("later",
                         {"session_control:7", "init", "session_control:7", "session_control_nb:8",
                          "resource_block:1:gpus", "resource_block_nb:3:gpus", "resource_block:0:gpus", "finalize"},
                         dir.path());
    CAPTURE(out);
    CHECK(contains(out, "session_control:7 PMIX_ERR_INIT"));  // before init
    // The blocking form's success is PMIX_OPERATION_SUCCEEDED (OpenPMIx's man page).
    CHECK(contains(out, "session_control:7 PMIX_OPERATION_SUCCEEDED"));
    CHECK(contains(out, "session_control_nb:8 PMIX_SUCCESS host.session=paused"));
    CHECK(contains(out, "resource_block:1:gpus PMIX_SUCCESS"));
    CHECK(contains(out, "resource_block_nb:3:gpus PMIX_SUCCESS"));
    CHECK(contains(out, "resource_block:0:gpus PMIX_ERR_BAD_PARAM"));  // no directive 0
    CHECK(calls_starting("session_control: later.0 id=7 keys: pmix.ssn.pause").size() == 1);
    CHECK(calls_starting("session_control: later.0 id=8 keys: pmix.ssn.pause").size() == 1);
    CHECK(calls_starting("resource_block: later.0 directive=1 block=gpus units=GPU:4,CORE:16 keys: want.reason")
              .size() == 1);
    CHECK(calls_starting("resource_block: later.0 directive=3 block=gpus units=GPU:4,CORE:16").size() == 1);
  }

  TEST_CASE("a host module not said to be longer than 4.2.2's is read no further; 5.0's has session_control at 28") {
    {
      // The slots are set, but the host did not say its struct has them (a
      // 4.2.2 host's struct ends before them): never read, never called.
      temp_dir dir;
      host_slots slots;
      slots.later = true;
      server srv(dir.path(), slots);
      REQUIRE(srv.status() == PMIX_SUCCESS);
      REQUIRE(register_job("short", 1, 1) == PMIX_SUCCESS);
      const auto out = run("short", {"init", "session_control:1", "resource_block:1:b", "finalize"}, dir.path());
      CAPTURE(out);
      CHECK(contains(out, "session_control:1 PMIX_ERR_NOT_SUPPORTED"));
      CHECK(contains(out, "resource_block:1:b PMIX_ERR_NOT_SUPPORTED"));
      CHECK(calls_starting("session_control:").empty());
      CHECK(calls_starting("resource_block:").empty());
    }
    {
      temp_dir dir;
      host_slots slots;
      slots.later_v5 = true;
      pmix_info_t size;
      const uint32_t v5 = 29;
      PMIX_INFO_LOAD(&size, PMIX_CXX_SERVER_MODULE_SLOTS, &v5, PMIX_UINT32);
      server srv(dir.path(), slots, {size});
      REQUIRE(srv.status() == PMIX_SUCCESS);
      REQUIRE(register_job("five", 1, 1) == PMIX_SUCCESS);
      const auto out = run("five", {"init", "session_control_nb:5", "resource_block:1:b", "finalize"}, dir.path());
      CAPTURE(out);
      CHECK(contains(out, "session_control_nb:5 PMIX_SUCCESS host.session=paused"));
      CHECK(contains(out, "resource_block:1:b PMIX_ERR_NOT_SUPPORTED"));  // 5.0 has none
      CHECK(calls_starting("session_control: five.0 id=5").size() == 1);
    }
    {
      // Any other length is refused at init.
      temp_dir dir;
      pmix_info_t size;
      const uint32_t odd = 30;
      PMIX_INFO_LOAD(&size, PMIX_CXX_SERVER_MODULE_SLOTS, &odd, PMIX_UINT32);
      server srv(dir.path(), host_slots{}, {size});
      CHECK(srv.status() == PMIX_ERR_BAD_PARAM);
    }
  }

  TEST_CASE("the host stops and resumes a producer's stdin: its pushes wait, nothing is lost or reordered") {
    temp_dir dir;
    host_slots slots;
    slots.requests = true;
    server srv(dir.path(), slots);
    REQUIRE(srv.status() == PMIX_SUCCESS);
    REQUIRE(register_job("flow", 1, 1) == PMIX_SUCCESS);
    // Only stdin is flow-controlled.
    CHECK(PMIx_server_IOF_flow_control(nullptr, PMIX_FWD_STDOUT_CHANNEL, true, nullptr, 0, nullptr, nullptr) ==
          PMIX_ERR_NOT_SUPPORTED);
    // Every producer stopped; the blocking form's success.
    CHECK(PMIx_server_IOF_flow_control(nullptr, PMIX_FWD_STDIN_CHANNEL, true, nullptr, 0, nullptr, nullptr) ==
          PMIX_OPERATION_SUCCEEDED);
    auto c = launch("flow", 0,
                    {script, "init", "iof_push:0:one", "iof_push:0:stop", "iof_push:0:two", "finalize"}, dir.path());
    // Its first push waits at the server, unanswered, and the host has none.
    CHECK(eventually([&] { return srv.view().stdin_held == 1; }));
    CHECK(calls_starting("push_stdin:").empty());
    // Resumed for that namespace (the callback form): "one" goes on; the
    // host answers "stop" with PMIX_ERR_IOF_XOFF (taken: the producer sees
    // success) and "two" waits again.
    std::atomic<int> resumed{0};
    pmix_proc_t job;
    PMIX_LOAD_PROCID(&job, "flow", PMIX_RANK_WILDCARD);
    CHECK(PMIx_server_IOF_flow_control(
              &job, PMIX_FWD_STDIN_CHANNEL, false, nullptr, 0,
              [](pmix_status_t st, void* cbdata) { static_cast<std::atomic<int>*>(cbdata)->store(st == PMIX_SUCCESS ? 1 : -1); },
              &resumed) == PMIX_SUCCESS);
    CHECK(eventually([&] { return resumed.load() != 0; }));
    CHECK(resumed.load() == 1);
    CHECK(eventually([&] { return calls_starting("push_stdin: flow.0 -> flow.0 [stop]").size() == 1; }));
    CHECK(eventually([&] { return srv.view().stdin_held == 1; }));
    CHECK(calls_starting("push_stdin: flow.0 -> flow.0 [one]").size() == 1);
    CHECK(calls_starting("push_stdin: flow.0 -> flow.0 [two]").empty());
    // Resumed: "two" reaches the host, the client ends.
    CHECK(PMIx_server_IOF_flow_control(nullptr, PMIX_FWD_STDIN_CHANNEL, false, nullptr, 0, nullptr, nullptr) ==
          PMIX_OPERATION_SUCCEEDED);
    CHECK_MESSAGE(c.exited_with(0), c.errors());
    const auto out = c.output();
    CAPTURE(out);
    CHECK(contains(out, "iof_push:0:one PMIX_SUCCESS"));
    CHECK(contains(out, "iof_push:0:stop PMIX_SUCCESS"));
    CHECK(contains(out, "iof_push:0:two PMIX_SUCCESS"));
    CHECK(calls_starting("push_stdin: flow.0 -> flow.0 [two]").size() == 1);
    CHECK(srv.view().stdin_held == 0);
  }

  TEST_CASE("what the server holds for a stopped stdin is bounded: a push beyond is refused, the rest go on") {
    temp_dir dir;
    host_slots slots;
    slots.requests = true;
    ::setenv("PMIX_CXX_MAX_REQUESTS", "2", 1);
    server srv(dir.path(), slots);
    ::unsetenv("PMIX_CXX_MAX_REQUESTS");
    REQUIRE(srv.status() == PMIX_SUCCESS);
    REQUIRE(register_job("bounded", 1, 1) == PMIX_SUCCESS);
    CHECK(PMIx_server_IOF_flow_control(nullptr, PMIX_FWD_STDIN_CHANNEL, true, nullptr, 0, nullptr, nullptr) ==
          PMIX_OPERATION_SUCCEEDED);
    const std::string refused = dir.path() + "/refused";
    auto c = launch("bounded", 0, {script, "init", "iof_push_nb:0:3:" + refused, "finalize"}, dir.path());
    // Two held, the third refused at once: its answer came before stdin
    // resumes (with the server's actors on CAF's pool the third push could
    // otherwise arrive after XON, and pass).
    CHECK(eventually([&] { return ::access(refused.c_str(), F_OK) == 0; }));
    CHECK(srv.view().stdin_held == 2);
    CHECK(PMIx_server_IOF_flow_control(nullptr, PMIX_FWD_STDIN_CHANNEL, false, nullptr, 0, nullptr, nullptr) ==
          PMIX_OPERATION_SUCCEEDED);
    CHECK_MESSAGE(c.exited_with(0), c.errors());
    const auto out = c.output();
    CAPTURE(out);
    CHECK(contains(out, "iof_push_nb:0:3:" + refused + " PMIX_SUCCESS PMIX_SUCCESS PMIX_SUCCESS PMIX_ERR_OUT_OF_RESOURCE"));
    CHECK(calls_starting("push_stdin: bounded.0 -> bounded.0 [0]").size() == 1);
    CHECK(calls_starting("push_stdin: bounded.0 -> bounded.0 [1]").size() == 1);
    CHECK(calls_starting("push_stdin: bounded.0 -> bounded.0 [2]").empty());
  }

  TEST_CASE("after PMIx_Progress_thread_stop the calls that need the server answer PMIX_ERR_NOT_AVAILABLE") {
    temp_dir dir;
    host_slots slots;
    slots.requests = true;
    server srv(dir.path(), slots);
    REQUIRE(srv.status() == PMIX_SUCCESS);
    REQUIRE(register_job("stopped", 1, 1) == PMIX_SUCCESS);
    const auto out = run("stopped", {"init", "allocate:1", "progress_stop", "allocate:1", "allocate_nb:1",
                                     "iof_push:0:x", "session_control:1"},
                         dir.path());
    CAPTURE(out);
    // Before: the host answers; after: nothing reaches it.
    CHECK(contains(out, "allocate:1 PMIX_SUCCESS host.alloc=granted\nprogress_stop PMIX_SUCCESS\n"
                        "allocate:1 PMIX_ERR_NOT_AVAILABLE\nallocate_nb:1 PMIX_ERR_NOT_AVAILABLE\n"
                        "iof_push:0:x PMIX_ERR_NOT_AVAILABLE\nsession_control:1 PMIX_ERR_NOT_AVAILABLE"));
    CHECK(calls_starting("allocate: stopped.0").size() == 1);
    CHECK(calls_starting("push_stdin:").empty());
  }

  TEST_CASE("credentials the server issues itself: the user who asked, tamper-evident, valid at that server only") {
    if (::getuid() != 0) FAIL("this test runs a process as another user: run it as root (CI does)");
    temp_dir dir;
    ::chmod(dir.path().c_str(), 0711);
    const auto bin = stage_for_other_user(dir.path());
    const std::string mine = dir.path() + "/mine", theirs = dir.path() + "/theirs", cut = dir.path() + "/cut";
    {
      server srv(dir.path());
      REQUIRE(srv.status() == PMIX_SUCCESS);
      pmix_info_t info;
      const uint32_t size = 2;
      PMIX_INFO_LOAD(&info, PMIX_JOB_SIZE, &size, PMIX_UINT32);
      REQUIRE(PMIx_server_register_nspace("creds", 2, &info, 1, nullptr, nullptr) == PMIX_SUCCESS);
      PMIX_INFO_DESTRUCT(&info);
      pmix_proc_t p;
      PMIX_LOAD_PROCID(&p, "creds", 0);
      REQUIRE(PMIx_server_register_client(&p, 0, 0, nullptr, nullptr, nullptr) == PMIX_SUCCESS);
      PMIX_LOAD_PROCID(&p, "creds", 1);
      REQUIRE(PMIx_server_register_client(&p, 65534, 65534, nullptr, nullptr, nullptr) == PMIX_SUCCESS);
      // Rank 1 runs as uid 65534 and writes its credential where rank 0
      // can read it.
      ::mkdir((dir.path() + "/drop").c_str(), 0777);
      ::chmod((dir.path() + "/drop").c_str(), 0777);
      const std::string dropped = dir.path() + "/drop/cred";
      auto other = launch_as(65534, "creds", 1, {"init", "credential:" + dropped, "finalize"}, bin, dir.path());
      CHECK_MESSAGE(other.exited_with(0), other.errors());
      CHECK_MESSAGE(contains(other.output(), "credential:" + dropped + " PMIX_SUCCESS"), other.output());
      std::filesystem::copy_file(dropped, theirs);
      auto c = launch("creds", 0,
                      {script, "init", "credential:" + mine, "validate:" + mine, "credential_nb:" + cut,
                       "validate_nb:" + theirs, "corrupt:" + cut, "validate:" + cut, "finalize"},
                      dir.path());
      CHECK_MESSAGE(c.exited_with(0), c.errors());
      const auto out = c.output();
      CAPTURE(out);
      CHECK(contains(out, "validate:" + mine + " PMIX_SUCCESS uid=0 gid=0 type=pmix-cxx.hmac-sha256"));
      CHECK(contains(out, "credential_nb:" + cut + " PMIX_SUCCESS"));
      CHECK(contains(out, "type=pmix-cxx.hmac-sha256"));
      // Another user's credential says who that user is.
      CHECK(contains(out, "validate_nb:" + theirs + " PMIX_SUCCESS uid=65534 gid=65534"));
      // One bit changed: refused.
      CHECK(contains(out, "validate:" + cut + " PMIX_ERR_INVALID_CRED"));
    }
    // A server started later has another key: the old credentials are not
    // its own.
    server again(dir.path());
    REQUIRE(again.status() == PMIX_SUCCESS);
    REQUIRE(register_job("later", 1, 1) == PMIX_SUCCESS);
    const auto out = run("later", {"init", "validate:" + mine, "finalize"}, dir.path());
    CHECK_MESSAGE(contains(out, "validate:" + mine + " PMIX_ERR_INVALID_CRED"), out);
  }

  TEST_CASE("heartbeats the server watches itself: beats keep it quiet, silence raises the event once") {
    temp_dir dir;
    host_slots slots;
    slots.notify = true;  // the host hears the alert too
    server srv(dir.path(), slots);
    REQUIRE(srv.status() == PMIX_SUCCESS);
    REQUIRE(register_job("beating", 1, 1) == PMIX_SUCCESS);
    const std::string alert = std::to_string(PMIX_MONITOR_HEARTBEAT_ALERT);
    // A check every second, two missed checks allowed: beats every 200 ms
    // for 4 s keep it quiet; then silence.
    auto c = launch("beating", 0,
                    {script, "init", "on_event:" + alert, "heartbeat:1:2", "beats:20:200", "wait_event:" + alert,
                     "finalize"},
                    dir.path());
    REQUIRE(wait_for_output(c, "beats:20:200 PMIX_SUCCESS"));
    // While it beat, nothing was raised.
    for (const auto& n : notifications()) CHECK_FALSE(contains(n, alert));
    CHECK_MESSAGE(c.exited_with(0), c.errors());
    CHECK_MESSAGE(contains(c.output(), "wait_event:" + alert + " PMIX_SUCCESS beating.0"), c.output());
    // The host heard it once, with the process as its source.
    std::size_t heard = 0;
    for (const auto& n : notifications())
      if (contains(n, alert + " beating.0")) ++heard;
    CHECK(heard == 1);
  }

  TEST_CASE("a heartbeat monitor asked for as OpenPMIx programs do (a NULL pointer) is served by the server (issue 34.3)") {
    // The host has no monitor up-call: it went there and failed with
    // PMIX_ERR_NOT_SUPPORTED, where OpenPMIx serves it.
    temp_dir dir;
    server srv(dir.path());
    REQUIRE(srv.status() == PMIX_SUCCESS);
    REQUIRE(register_job("ptrbeat", 1, 1) == PMIX_SUCCESS);
    const std::string alert = std::to_string(PMIX_MONITOR_HEARTBEAT_ALERT);
    const auto out = run("ptrbeat", {"init", "on_event:" + alert, "heartbeat_ptr:1:1", "wait_event:" + alert, "finalize"},
                         dir.path());
    CHECK_MESSAGE(contains(out, "heartbeat_ptr:1:1 PMIX_SUCCESS"), out);
    CHECK_MESSAGE(contains(out, "wait_event:" + alert + " PMIX_SUCCESS ptrbeat.0"), out);
  }

  TEST_CASE("a cancelled heartbeat monitor raises nothing") {
    temp_dir dir;
    host_slots slots;
    slots.notify = true;
    server srv(dir.path(), slots);
    REQUIRE(srv.status() == PMIX_SUCCESS);
    REQUIRE(register_job("quiet", 1, 1) == PMIX_SUCCESS);
    const auto out = run("quiet", {"init", "heartbeat:1:1", "monitor_cancel", "sleep:3000", "finalize"}, dir.path());
    CHECK(contains(out, "monitor_cancel PMIX_SUCCESS"));
    for (const auto& n : notifications()) CHECK_FALSE(contains(n, std::to_string(PMIX_MONITOR_HEARTBEAT_ALERT)));
  }
}

namespace {

// Hands output of `source` to the server as the host does.
void deliver(const std::string& nspace, pmix_rank_t rank, pmix_iof_channel_t channel, const std::string& text) {
  pmix_proc_t p;
  PMIX_LOAD_PROCID(&p, nspace.c_str(), rank);
  pmix_byte_object_t bo{const_cast<char*>(text.data()), text.size()};
  REQUIRE(PMIx_server_IOF_deliver(&p, channel, &bo, nullptr, 0, nullptr, nullptr) == PMIX_SUCCESS);
}

}  // namespace

TEST_SUITE("host requests: forwarded output") {
  TEST_CASE("a pulled process's output reaches the puller, on the channels it asked for, until it deregisters") {
    temp_dir dir;
    host_slots slots;
    slots.iof = true;
    server srv(dir.path(), slots);
    REQUIRE(srv.status() == PMIX_SUCCESS);
    REQUIRE(register_job("out", 2, 2) == PMIX_SUCCESS);
    const std::string go = dir.path() + "/go", more = dir.path() + "/more";
    auto puller = launch("out", 1,
                         {script, "init", "iof_pull:out:0:out", "iof_pull_nb:out:*:err", "wait_file:" + go,
                          "wait_iof:3", "iof_deregister", "wait_file:" + more, "wait_iof:4", "sleep:500",
                          "wait_iof:4", "finalize"},
                         dir.path());
    REQUIRE(wait_for_output(puller, "iof_pull_nb:out:*:err PMIX_SUCCESS ref=1"));
    CHECK(contains(puller.output(), "iof_pull:out:0:out PMIX_SUCCESS ref=0"));
    // The host was asked to forward those processes' output here.
    CHECK(calls_starting("iof_pull: out.0 channels=" + std::to_string(PMIX_FWD_STDOUT_CHANNEL)).size() == 1);
    CHECK(calls_starting("iof_pull: out." + std::to_string(PMIX_RANK_WILDCARD) + " channels=" +
                         std::to_string(PMIX_FWD_STDERR_CHANNEL))
              .size() == 1);
    deliver("out", 0, PMIX_FWD_STDOUT_CHANNEL, "hello");
    deliver("out", 1, PMIX_FWD_STDOUT_CHANNEL, "not pulled");  // rank 1's stdout: nobody asked
    deliver("out", 1, PMIX_FWD_STDERR_CHANNEL, "oops");
    deliver("other", 0, PMIX_FWD_STDERR_CHANNEL, "another job");
    deliver("out", 0, PMIX_FWD_STDOUT_CHANNEL, "world");
    std::fclose(std::fopen(go.c_str(), "w"));
    // The stderr pull (the last one) is deregistered: stderr goes nowhere,
    // stdout still comes.
    REQUIRE(wait_for_output(puller, "iof_deregister PMIX_SUCCESS"));
    deliver("out", 1, PMIX_FWD_STDERR_CHANNEL, "late");
    deliver("out", 0, PMIX_FWD_STDOUT_CHANNEL, "still");
    std::fclose(std::fopen(more.c_str(), "w"));
    CHECK_MESSAGE(puller.exited_with(0), puller.errors());
    const std::string out = std::to_string(PMIX_FWD_STDOUT_CHANNEL), err = std::to_string(PMIX_FWD_STDERR_CHANNEL);
    const std::string first = out + "/out.0/hello|" + err + "/out.1/oops|" + out + "/out.0/world";
    const auto text = puller.output();
    CHECK_MESSAGE(contains(text, "wait_iof:3 PMIX_SUCCESS " + first + "\niof_deregister PMIX_SUCCESS"), text);
    // Half a second later still the same four: "late" never came.
    const std::string four = "wait_iof:4 PMIX_SUCCESS " + first + "|" + out + "/out.0/still\n";
    CHECK_MESSAGE(contains(text, four + four + "finalize PMIX_SUCCESS"), text);
    CHECK_FALSE(contains(text, "late"));
  }

  TEST_CASE("what a process's output pulls make the server hold is bounded: a pull beyond PMIX_CXX_MAX_REQUESTS is "
            "refused, the others serve") {
    temp_dir dir;
    host_slots slots;
    slots.iof = true;
    ::setenv("PMIX_CXX_MAX_REQUESTS", "2", 1);
    server srv(dir.path(), slots);
    ::unsetenv("PMIX_CXX_MAX_REQUESTS");
    REQUIRE(srv.status() == PMIX_SUCCESS);
    REQUIRE(register_job("pulls", 2, 2) == PMIX_SUCCESS);
    const std::string go = dir.path() + "/go";
    auto puller = launch("pulls", 1,
                         {script, "init", "iof_pull:pulls:0:out", "iof_pull:pulls:0:err", "iof_pull:pulls:*:out",
                          "wait_file:" + go, "wait_iof:2", "finalize"},
                         dir.path());
    REQUIRE(wait_for_output(puller, "iof_pull:pulls:*:out"));
    const auto before = puller.output();
    CAPTURE(before);
    CHECK(contains(before, "iof_pull:pulls:0:out PMIX_SUCCESS ref=0"));
    CHECK(contains(before, "iof_pull:pulls:0:err PMIX_SUCCESS ref=1"));
    CHECK(contains(before, "iof_pull:pulls:*:out PMIX_ERR_OUT_OF_RESOURCE"));
    CHECK(srv.view().iof_registrations == 2);
    // The host was not asked for the refused one.
    CHECK(calls_starting("iof_pull: pulls." + std::to_string(PMIX_RANK_WILDCARD)).empty());
    deliver("pulls", 0, PMIX_FWD_STDOUT_CHANNEL, "one");
    deliver("pulls", 0, PMIX_FWD_STDERR_CHANNEL, "two");
    std::fclose(std::fopen(go.c_str(), "w"));
    CHECK_MESSAGE(puller.exited_with(0), puller.errors());
    const std::string out = std::to_string(PMIX_FWD_STDOUT_CHANNEL), err = std::to_string(PMIX_FWD_STDERR_CHANNEL);
    CHECK_MESSAGE(contains(puller.output(), "wait_iof:2 PMIX_SUCCESS " + out + "/pulls.0/one|" + err + "/pulls.0/two"),
                  puller.output());
    CHECK(eventually([&] { return srv.view().iof_registrations == 0; }));  // gone with the puller
  }

  TEST_CASE("without the host's iof_pull a pull is not supported; a pull of nothing is refused") {
    temp_dir dir;
    server srv(dir.path());
    REQUIRE(srv.status() == PMIX_SUCCESS);
    REQUIRE(register_job("noout", 1, 1) == PMIX_SUCCESS);
    const auto out = run("noout", {"init", "iof_pull:noout:0:all", "iof_deregister", "finalize"}, dir.path());
    CHECK_MESSAGE(contains(out, "iof_pull:noout:0:all PMIX_ERR_NOT_SUPPORTED"), out);
    CHECK_MESSAGE(contains(out, "iof_deregister PMIX_ERR_NOT_FOUND"), out);
  }
}
