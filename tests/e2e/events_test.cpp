// Events (docs/events.md): PMIx_Register_event_handler, the handler chain,
// PMIx_Notify_event in every range from a client, a tool and the host, the
// host's notify_event up-call, and PMIX_ERR_LOST_CONNECTION. Real client
// processes on a real server; the test process is the host.
#include <doctest/doctest.h>
#include <pmix_server.h>

#include <atomic>
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "tests/e2e/host.hpp"

using namespace pmix::test;

namespace {

const std::string events = runfile("tests/e2e/event_client");

child run(const std::string& nspace, pmix_rank_t r, std::vector<std::string> steps,
          const std::string& dir) {
  steps.insert(steps.begin(), events);
  return launch(nspace, r, steps, dir);
}

child run_tool(std::vector<std::string> steps, const std::string& dir) {
  steps.insert(steps.begin(), events);
  return child(steps, environment_with({"TEST_SERVER_URI=" + server_uri(), "PMIX_NAMESPACE=",
                                        "PMIX_SERVER_URI41=", "PMIX_SERVER_URI4="}),
               dir);
}

host_slots with_notify() {
  host_slots s;
  s.notify = true;
  return s;
}

void touch(const std::string& path) {
  std::FILE* f = std::fopen(path.c_str(), "w");
  REQUIRE(f != nullptr);
  std::fclose(f);
}

std::vector<pmix_info_t> with_tools() {
  std::vector<pmix_info_t> d(1);
  bool yes = true;
  PMIX_INFO_LOAD(&d[0], PMIX_SERVER_TOOL_SUPPORT, &yes, PMIX_BOOL);
  return d;
}

// The "event ..." lines of a client's output, in order.
std::vector<std::string> event_lines(const std::string& out) {
  std::vector<std::string> lines;
  for (std::size_t at = 0; (at = out.find("event ", at)) != std::string::npos;) {
    if (at == 0 || out[at - 1] == '\n') lines.push_back(out.substr(at, out.find('\n', at) - at));
    at = out.find('\n', at);
  }
  return lines;
}

pmix_status_t notify_from_host(pmix_status_t code, const char* nspace, pmix_rank_t rank,
                               pmix_data_range_t range) {
  pmix_proc_t source;
  PMIX_LOAD_PROCID(&source, nspace, rank);
  return PMIx_Notify_event(code, &source, range, nullptr, 0, nullptr, nullptr);
}

}  // namespace

TEST_SUITE("events") {
  TEST_CASE("the host's event in PMIX_RANGE_NAMESPACE reaches every process of that namespace only") {
    temp_dir dir;
    server srv(dir.path());
    REQUIRE(srv.status() == PMIX_SUCCESS);
    REQUIRE(register_job("evA", 2, 2) == PMIX_SUCCESS);
    REQUIRE(register_job("evB", 1, 1) == PMIX_SUCCESS);
    const std::vector<std::string> steps{"init", "on:h:100,200", "wait_events:1", "finalize"};
    auto a0 = run("evA", 0, steps, dir.path());
    auto a1 = run("evA", 1, steps, dir.path());
    auto b0 = run("evB", 0, steps, dir.path());
    for (auto* c : {&a0, &a1, &b0}) REQUIRE(wait_for_output(*c, "on:h:100,200 PMIX_SUCCESS"));
    CHECK(notify_from_host(100, "evA", PMIX_RANK_WILDCARD, PMIX_RANGE_NAMESPACE) == PMIX_SUCCESS);
    CHECK(notify_from_host(200, "evB", 0, PMIX_RANGE_NAMESPACE) == PMIX_SUCCESS);
    for (auto* c : {&a0, &a1, &b0}) CHECK_MESSAGE(c->exited_with(0), c->errors());
    for (auto* c : {&a0, &a1}) {
      CAPTURE(c->output());
      CHECK(event_lines(c->output()) == std::vector<std::string>{"event h 100 evA.4294967294 prior=0"});
    }
    // evB's process got its own event, and never evA's (which the server
    // sent first: it would have arrived first).
    CHECK(event_lines(b0.output()) == std::vector<std::string>{"event h 200 evB.0 prior=0"});
    // The host's own event is not handed back to the host.
    CHECK(notifications().empty());
  }

  TEST_CASE("a client's event reaches the clients and tools in range, itself once, and the host") {
    temp_dir dir;
    server srv(dir.path(), with_notify(), with_tools());
    REQUIRE(srv.status() == PMIX_SUCCESS);
    REQUIRE(register_job("evC", 3, 3) == PMIX_SUCCESS);
    const std::string go = dir.path() + "/go";
    auto c0 = run("evC", 0, {"init", "on:h:300", "wait_file:" + go, "notify:300:session:text=hello",
                             "wait_events:1", "finalize"},
                  dir.path());
    auto c1 = run("evC", 1, {"init", "on:h:300", "wait_events:1", "finalize"}, dir.path());
    auto c2 = run("evC", 2, {"init", "on:h:300:nb", "wait_events:1", "finalize"}, dir.path());
    auto tool = run_tool({"tool_init", "on:h:300", "wait_events:1", "tool_finalize"}, dir.path());
    for (auto* c : {&c0, &c1, &c2, &tool}) REQUIRE(wait_for_output(*c, "on:h:300"));
    touch(go);
    for (auto* c : {&c0, &c1, &c2, &tool}) {
      CHECK_MESSAGE(c->exited_with(0), c->errors());
      CAPTURE(c->output());
      CHECK(event_lines(c->output()) ==
            std::vector<std::string>{"event h 300 evC.0 prior=0 text=hello"});
    }
    CHECK(contains(c0.output(), "notify:300:session:text=hello PMIX_SUCCESS"));
    // The host was asked to take it further (PMIX_RANGE_SESSION is 4).
    CHECK(notifications() == std::vector<std::string>{"300 evC.0 4"});
  }

  TEST_CASE("PMIX_RANGE_LOCAL stays on this node, PMIX_RANGE_RM goes to the host only") {
    temp_dir dir;
    server srv(dir.path(), with_notify());
    REQUIRE(srv.status() == PMIX_SUCCESS);
    REQUIRE(register_job("evL", 2, 2) == PMIX_SUCCESS);
    const std::string go = dir.path() + "/go";
    auto l0 = run("evL", 0, {"init", "on:h:all", "wait_file:" + go, "notify:301:local", "notify:302:rm",
                             "notify:303:namespace", "wait_events:2", "finalize"},
                  dir.path());
    auto l1 = run("evL", 1, {"init", "on:h:all", "wait_events:2", "finalize"}, dir.path());
    for (auto* c : {&l0, &l1}) REQUIRE(wait_for_output(*c, "on:h:all PMIX_SUCCESS"));
    touch(go);
    for (auto* c : {&l0, &l1}) {
      CHECK_MESSAGE(c->exited_with(0), c->errors());
      CAPTURE(c->output());
      // 302 was for the host: neither the notifier nor its peer ran a
      // handler for it (the peer would have had it before 303).
      CHECK(event_lines(c->output()) == std::vector<std::string>{"event h 301 evL.0 prior=0",
                                                                 "event h 303 evL.0 prior=0"});
    }
    for (const char* s : {"notify:301:local PMIX_SUCCESS", "notify:302:rm PMIX_SUCCESS",
                          "notify:303:namespace PMIX_SUCCESS"})
      CHECK(contains(l0.output(), s));
    // PMIX_RANGE_RM (1) and PMIX_RANGE_NAMESPACE (3) reached the host; the
    // local event did not.
    CHECK(notifications() == std::vector<std::string>{"302 evL.0 1", "303 evL.0 3"});
  }

  TEST_CASE("PMIX_RANGE_CUSTOM reaches exactly the processes it names") {
    temp_dir dir;
    server srv(dir.path());
    REQUIRE(srv.status() == PMIX_SUCCESS);
    REQUIRE(register_job("evD", 3, 3) == PMIX_SUCCESS);
    REQUIRE(register_job("evE", 1, 1) == PMIX_SUCCESS);
    const std::string go = dir.path() + "/go";
    auto d0 = run("evD", 0, {"init", "on:h:all", "wait_file:" + go, "notify:400:custom:custom=evD.2,evE.*",
                             "notify:401:namespace", "wait_events:1", "finalize"},
                  dir.path());
    auto d1 = run("evD", 1, {"init", "on:h:all", "wait_events:1", "finalize"}, dir.path());
    auto d2 = run("evD", 2, {"init", "on:h:all", "wait_events:2", "finalize"}, dir.path());
    auto e0 = run("evE", 0, {"init", "on:h:all", "wait_events:1", "finalize"}, dir.path());
    for (auto* c : {&d0, &d1, &d2, &e0}) REQUIRE(wait_for_output(*c, "on:h:all PMIX_SUCCESS"));
    touch(go);
    for (auto* c : {&d0, &d1, &d2, &e0}) CHECK_MESSAGE(c->exited_with(0), c->errors());
    const std::string custom = "event h 400 evD.0 prior=0";
    const std::string job = "event h 401 evD.0 prior=0";
    CAPTURE(d0.output());
    CAPTURE(d1.output());
    CHECK(event_lines(d0.output()) == std::vector<std::string>{job});  // not named: not its own
    CHECK(event_lines(d1.output()) == std::vector<std::string>{job});  // would have had 400 first
    CHECK(event_lines(d2.output()) == std::vector<std::string>{custom, job});
    CHECK(event_lines(e0.output()) == std::vector<std::string>{custom});
    CHECK(contains(d0.output(), "notify:400:custom:custom=evD.2,evE.* PMIX_SUCCESS"));
  }

  TEST_CASE("handlers run as one chain in the standard's order; results pass along; ACTION_COMPLETE ends it") {
    temp_dir dir;
    server srv(dir.path());
    REQUIRE(srv.status() == PMIX_SUCCESS);
    REQUIRE(register_job("evF", 1, 1) == PMIX_SUCCESS);
    auto f = run("evF", 0,
                 {"init", "on:dflt:all", "on:multi:500,501", "on:single:500", "on:lastone:all:last",
                  "on:firstone:500:first", "on:pre:500:prepend", "on:bef:500:before=single",
                  "on:aft:500,501:after=multi:nb", "on:again:all:first", "on:x:500:before=nobody",
                  "notify:500:proc_local", "wait_events:8",
                  "notify:501:proc_local:nondefault", "wait_events:10",
                  "on:stopper:502:complete", "notify:502:proc_local", "wait_events:11",
                  "off:single", "off:single", "notify:500:proc_local:nb", "wait_events:18", "finalize"},
                 dir.path());
    CHECK_MESSAGE(f.exited_with(0), f.errors());
    const auto out = f.output();
    CAPTURE(out);
    CHECK(contains(out, "on:again:all:first PMIX_ERR_EVENT_REGISTRATION"));
    CHECK(contains(out, "on:x:500:before=nobody PMIX_ERR_NOT_FOUND"));
    // A reference already gone still succeeds, as in OpenPMIx (issue 15).
    CHECK(contains(out, "off:single PMIX_SUCCESS\noff:single PMIX_SUCCESS"));
    const std::vector<std::string> expected{
        // 500: first, the single-code category (prepend, before=single,
        // single), the multi-code category (multi, after=multi), the
        // default handler, last.
        "event firstone 500 evF.0 prior=0", "event pre 500 evF.0 prior=1",
        "event bef 500 evF.0 prior=2", "event single 500 evF.0 prior=3",
        "event multi 500 evF.0 prior=4", "event aft 500 evF.0 prior=5",
        "event dflt 500 evF.0 prior=6", "event lastone 500 evF.0 prior=7",
        // 501 with PMIX_EVENT_NON_DEFAULT: the default handlers are skipped.
        "event multi 501 evF.0 prior=0", "event aft 501 evF.0 prior=1",
        // 502: the handler answers PMIX_EVENT_ACTION_COMPLETE; the default
        // and last handlers never see it.
        "event stopper 502 evF.0 prior=0",
        // 500 again without the deregistered handler.
        "event firstone 500 evF.0 prior=0", "event pre 500 evF.0 prior=1",
        "event bef 500 evF.0 prior=2", "event multi 500 evF.0 prior=3",
        "event aft 500 evF.0 prior=4", "event dflt 500 evF.0 prior=5",
        "event lastone 500 evF.0 prior=6"};
    CHECK(event_lines(out) == expected);
  }

  TEST_CASE("what a handler is handed stays valid until it returns, whatever it calls first (issue 34.1)") {
    // A handler that answers PMIX_EVENT_ACTION_COMPLETE (which ends the
    // chain), and the last handler of a chain, read their info and source
    // after calling back, as OpenPMIx programs do: the library freed them in
    // the callback (read garbage; a use after free under ASan).
    temp_dir dir;
    server srv(dir.path());
    REQUIRE(srv.status() == PMIX_SUCCESS);
    REQUIRE(register_job("evR", 1, 1) == PMIX_SUCCESS);
    auto c = run("evR", 0,
                 {"init", "on:stop:601:complete:read_after", "on:only:602:read_after", "notify:601:proc_local:text=one",
                  "wait_events:1", "notify:602:proc_local:text=two", "wait_events:2", "finalize"},
                 dir.path());
    CHECK_MESSAGE(c.exited_with(0), c.errors());
    const auto out = c.output();
    CAPTURE(out);
    CHECK(contains(out, "after stop evR.0 text=one\n"));
    CHECK(contains(out, "after only evR.0 text=two\n"));
  }

  TEST_CASE("the host's own handlers get its events in range, with the clients") {
    temp_dir dir;
    server srv(dir.path());
    REQUIRE(srv.status() == PMIX_SUCCESS);
    REQUIRE(register_job("evG", 1, 1) == PMIX_SUCCESS);
    static std::atomic<int> ran;
    static std::atomic<int> seen_source_rank;
    ran = 0;
    pmix_status_t code = 601;
    const pmix_status_t ref = PMIx_Register_event_handler(
        &code, 1, nullptr, 0,
        [](size_t, pmix_status_t, const pmix_proc_t* source, pmix_info_t[], size_t, pmix_info_t*,
           size_t, pmix_event_notification_cbfunc_fn_t cbfunc, void* cbdata) {
          seen_source_rank = static_cast<int>(source->rank);
          ++ran;
          cbfunc(PMIX_SUCCESS, nullptr, 0, nullptr, nullptr, cbdata);
        },
        nullptr, nullptr);
    REQUIRE(ref >= 0);
    auto g = run("evG", 0, {"init", "on:h:601", "wait_events:1", "finalize"}, dir.path());
    REQUIRE(wait_for_output(g, "on:h:601 PMIX_SUCCESS"));
    // The non-blocking form: cbfunc once the server has sent it.
    static std::atomic<int> done;
    done = 0;
    CHECK(PMIx_Notify_event(code, nullptr, PMIX_RANGE_LOCAL, nullptr, 0,
                            [](pmix_status_t st, void*) { done = st == PMIX_SUCCESS ? 1 : 2; },
                            nullptr) == PMIX_SUCCESS);
    CHECK(eventually([] { return done.load() == 1; }));
    CHECK(eventually([] { return ran.load() == 1; }));
    CHECK_MESSAGE(g.exited_with(0), g.errors());
    // Source NULL means the server itself.
    pmix_proc_t me;
    REQUIRE(runtime_table()->running(&me) == 1);
    CHECK(seen_source_rank.load() == static_cast<int>(me.rank));
    CHECK(event_lines(g.output()) ==
          std::vector<std::string>{"event h 601 " + std::string{me.nspace} + "." + std::to_string(me.rank) +
                                   " prior=0"});
    // A namespace the server is not in: its own handler is not called.
    CHECK(notify_from_host(601, "evG", PMIX_RANK_WILDCARD, PMIX_RANGE_NAMESPACE) == PMIX_SUCCESS);
    CHECK(ran.load() == 1);
    CHECK(PMIx_Deregister_event_handler(static_cast<size_t>(ref), nullptr, nullptr) == PMIX_SUCCESS);
  }

  TEST_CASE("handler references start at 0; deregistering an unknown one still calls back with success (as OpenPMIx)") {
    temp_dir dir;
    server srv(dir.path());
    REQUIRE(srv.status() == PMIX_SUCCESS);
    auto noop = [](size_t, pmix_status_t, const pmix_proc_t*, pmix_info_t[], size_t, pmix_info_t*, size_t,
                   pmix_event_notification_cbfunc_fn_t cbfunc, void* cbdata) {
      if (cbfunc != nullptr) cbfunc(PMIX_SUCCESS, nullptr, 0, nullptr, nullptr, cbdata);
    };
    pmix_status_t code = 777;
    // The first handler of the process is reference 0 (the blocking form
    // returns it as its status), the next 1.
    CHECK(PMIx_Register_event_handler(&code, 1, nullptr, 0, noop, nullptr, nullptr) == 0);
    CHECK(PMIx_Register_event_handler(&code, 1, nullptr, 0, noop, nullptr, nullptr) == 1);
    static std::atomic<int> called;
    called = 0;
    // A program that waits for the callback of an unknown reference does
    // not hang: it comes, with success.
    CHECK(PMIx_Deregister_event_handler(4242, [](pmix_status_t st, void*) { called = st == PMIX_SUCCESS ? 1 : 2; },
                                        nullptr) == PMIX_SUCCESS);
    CHECK(eventually([] { return called.load() == 1; }));
    CHECK(PMIx_Deregister_event_handler(0, nullptr, nullptr) == PMIX_SUCCESS);
    CHECK(PMIx_Deregister_event_handler(1, nullptr, nullptr) == PMIX_SUCCESS);
  }

  TEST_CASE("a client learns PMIX_ERR_LOST_CONNECTION when its server goes away") {
    temp_dir dir;
    std::optional<server> srv;
    srv.emplace(dir.path());
    REQUIRE(srv->status() == PMIX_SUCCESS);
    REQUIRE(register_job("evH", 1, 1) == PMIX_SUCCESS);
    pmix_proc_t me;
    REQUIRE(runtime_table()->running(&me) == 1);
    const std::string server_name = std::string{me.nspace} + "." + std::to_string(me.rank);
    auto h = run("evH", 0, {"init", "on:lost:-61", "wait_events:1"}, dir.path());
    REQUIRE(wait_for_output(h, "on:lost:-61 PMIX_SUCCESS"));
    srv.reset();  // PMIx_server_finalize with the client still connected
    CHECK_MESSAGE(h.exited_with(0), h.errors());
    CHECK(event_lines(h.output()) == std::vector<std::string>{"event lost -61 " + server_name + " prior=0"});
  }

  TEST_CASE("a client blocked in a fence when its server goes away fails the fence and learns of the loss") {
    // The blocked caller reads the socket itself while the progress thread
    // leaves it alone; the hang-up then comes to both.
    temp_dir dir;
    std::optional<server> srv;
    srv.emplace(dir.path());
    REQUIRE(srv->status() == PMIX_SUCCESS);
    REQUIRE(register_job("evL", 2, 2) == PMIX_SUCCESS);  // rank 1 never comes
    pmix_proc_t me;
    REQUIRE(runtime_table()->running(&me) == 1);
    const std::string server_name = std::string{me.nspace} + "." + std::to_string(me.rank);
    auto h = run("evL", 0, {"init", "on:lost:-61", "fence", "wait_events:1"}, dir.path());
    REQUIRE(wait_for_output(h, "on:lost:-61 PMIX_SUCCESS"));
    REQUIRE(eventually([] { return take_snapshot().fences == 1; }));  // rank 0's half of the fence
    srv.reset();
    CHECK_MESSAGE(h.exited_with(0), h.errors());
    const auto out = h.output();
    CAPTURE(out);
    CHECK(contains(out, "fence PMIX_ERR_LOST_CONNECTION"));
    CHECK(contains(out, "wait_events:1 PMIX_SUCCESS"));
    CHECK(event_lines(out) == std::vector<std::string>{"event lost -61 " + server_name + " prior=0"});
  }

  TEST_CASE("a client waiting on the fence board when its server goes away fails the fence and learns of the loss") {
    // The second fence brings the namespace's fence board; the third waits
    // on it (rank 1 never enters it) and not on the socket, which stays with
    // the progress thread: the hang-up must reach the waiting thread there.
    temp_dir dir;
    std::optional<server> srv;
    srv.emplace(dir.path());
    REQUIRE(srv->status() == PMIX_SUCCESS);
    REQUIRE(register_job("evB", 2, 2) == PMIX_SUCCESS);
    pmix_proc_t me;
    REQUIRE(runtime_table()->running(&me) == 1);
    const std::string server_name = std::string{me.nspace} + "." + std::to_string(me.rank);
    auto waiting = run("evB", 0, {"init", "on:lost:-61", "fence", "fence", "board_mappings", "fence", "wait_events:1"},
                       dir.path());
    auto other = run("evB", 1, {"init", "fence", "fence", "wait_file:" + dir.path() + "/never"}, dir.path());
    REQUIRE(wait_for_output(waiting, "board_mappings PMIX_SUCCESS mapped 1"));
    REQUIRE(eventually([] { return take_snapshot().fences == 1; }));  // rank 0's half of the third fence
    srv.reset();
    CHECK_MESSAGE(waiting.exited_with(0), waiting.errors());
    const auto out = waiting.output();
    CAPTURE(out);
    CHECK(contains(out, "fence PMIX_SUCCESS"));
    CHECK(contains(out, "fence PMIX_ERR_LOST_CONNECTION"));
    CHECK(event_lines(out) == std::vector<std::string>{"event lost -61 " + server_name + " prior=0"});
  }

  TEST_CASE("bad requests get a clear error and change nothing") {
    // Before any init there is nobody to register with or notify.
    pmix_status_t code = 1;
    CHECK(PMIx_Register_event_handler(&code, 1, nullptr, 0,
                                      [](size_t, pmix_status_t, const pmix_proc_t*, pmix_info_t[],
                                         size_t, pmix_info_t*, size_t,
                                         pmix_event_notification_cbfunc_fn_t, void*) {},
                                      nullptr, nullptr) == PMIX_ERR_INIT);
    CHECK(PMIx_Notify_event(1, nullptr, PMIX_RANGE_LOCAL, nullptr, 0, nullptr, nullptr) == PMIX_ERR_INIT);
    CHECK(PMIx_Deregister_event_handler(1, nullptr, nullptr) == PMIX_ERR_INIT);

    temp_dir dir;
    server srv(dir.path());  // a host without notify_event
    REQUIRE(srv.status() == PMIX_SUCCESS);
    CHECK(PMIx_Register_event_handler(&code, 1, nullptr, 0, nullptr, nullptr, nullptr) ==
          PMIX_ERR_BAD_PARAM);
    CHECK(PMIx_Register_event_handler(nullptr, 2, nullptr, 0,
                                      [](size_t, pmix_status_t, const pmix_proc_t*, pmix_info_t[],
                                         size_t, pmix_info_t*, size_t,
                                         pmix_event_notification_cbfunc_fn_t, void*) {},
                                      nullptr, nullptr) == PMIX_ERR_BAD_PARAM);
    REQUIRE(register_job("evI", 2, 2) == PMIX_SUCCESS);
    auto other = run("evI", 1, {"init", "on:h:all", "wait_events:1", "finalize"}, dir.path());
    REQUIRE(wait_for_output(other, "on:h:all PMIX_SUCCESS"));
    auto bad = run("evI", 0,
                   {"on:early:all", "notify:1:session", "init", "notify:1:99", "notify:1:custom",
                    "off:nothing", "notify:2:rm", "notify:3:namespace", "finalize"},
                   dir.path());
    CHECK_MESSAGE(bad.exited_with(0), bad.errors());
    const auto out = bad.output();
    CAPTURE(out);
    CHECK(contains(out, "on:early:all PMIX_ERR_INIT"));
    CHECK(contains(out, "notify:1:session PMIX_ERR_INIT"));
    CHECK(contains(out, "notify:1:99 PMIX_ERR_BAD_PARAM"));
    CHECK(contains(out, "notify:1:custom PMIX_ERR_BAD_PARAM"));
    CHECK(contains(out, "off:nothing PMIX_SUCCESS"));  // unknown: success, as OpenPMIx
    CHECK(contains(out, "notify:2:rm PMIX_ERR_NOT_SUPPORTED"));  // the host cannot take it
    CHECK(contains(out, "notify:3:namespace PMIX_SUCCESS"));
    // The other process is not disturbed: it got the one good event only.
    CHECK_MESSAGE(other.exited_with(0), other.errors());
    CHECK(event_lines(other.output()) == std::vector<std::string>{"event h 3 evI.0 prior=0"});
    CHECK(count(bad.errors(), "PMIx_Notify_event") >= 2);  // the log says why
  }
}
