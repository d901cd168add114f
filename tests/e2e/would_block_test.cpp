// The progress-thread rule (spec 002, 19.2.260.7): every blocking form of
// the client, server and tool APIs, called from a thread that runs library
// code -- a host up-call, a server cbfunc, a client cbfunc -- returns
// PMIX_ERR_WOULD_BLOCK at once and does nothing; from the user's own thread
// the same calls work.
#include <doctest/doctest.h>
#include <pmix_server.h>

#include <atomic>
#include <mutex>
#include <string>
#include <vector>

#include "tests/e2e/host.hpp"

using namespace pmix::test;

namespace {

const std::string script = runfile("tests/e2e/script_client");
const std::string events = runfile("tests/e2e/event_client");

// What call_every_blocking_form tries (the client, server, tool and event
// APIs' blocking forms that return a status).
constexpr std::size_t kBlockingForms = 45;

// Counts the "probe <call> <STATUS>" lines of a client's output and checks
// each says PMIX_ERR_WOULD_BLOCK.
std::size_t count_refused_probes(const std::string& out) {
  std::size_t refused = 0;
  for (std::size_t at = 0; (at = out.find("probe ", at)) != std::string::npos; ++at) {
    if (out.compare(at, 16, "probe_in_handler") == 0 || out.compare(at, 17, "probe_in_callback") == 0)
      continue;
    const auto line = out.substr(at, out.find('\n', at) - at);
    CAPTURE(line);
    CHECK(contains(line, " PMIX_ERR_WOULD_BLOCK"));
    ++refused;
  }
  return refused;
}

// The diagnostic that goes with every refusal (19.2.260.7: "accompanied by
// a diagnostic naming the call"): for each "probe <call> ..." line of the
// output, a log line on stderr naming that call, saying why it was refused
// and what to do instead.
void check_diagnostics(const std::string& out, const std::string& err) {
  std::size_t probes = 0;
  for (std::size_t at = 0; (at = out.find("probe ", at)) != std::string::npos; ++at) {
    if (out.compare(at, 16, "probe_in_handler") == 0 || out.compare(at, 17, "probe_in_callback") == 0)
      continue;
    ++probes;
    const auto line = out.substr(at + 6, out.find('\n', at) - at - 6);
    auto call = line.substr(0, line.find_first_of(" ("));  // "PMIx_Fence_nb(NULL cbfunc)" -> PMIx_Fence_nb
    CAPTURE(call);
    bool named = false;
    for (std::size_t d = 0; (d = err.find("api: " + call + " ", d)) != std::string::npos; ++d) {
      const auto text = err.substr(d, err.find('\n', d) - d);
      if (contains(text, "called from a PMIx library thread") && contains(text, "PMIX_ERR_WOULD_BLOCK") &&
          contains(text, "thread of your own"))
        named = true;
    }
    CHECK_MESSAGE(named, err);
  }
  CHECK(probes == kBlockingForms);
  // The two forms with no status (deregister_client, deregister_nspace)
  // have theirs too: one line per refusal, no more.
  for (const std::string call : {"PMIx_server_deregister_client", "PMIx_server_deregister_nspace"}) {
    CAPTURE(call);
    CHECK(contains(err, "api: " + call + " with a NULL cbfunc called from a PMIx library thread"));
  }
  std::size_t lines = 0;
  for (std::size_t d = 0; (d = err.find("called from a PMIx library thread", d)) != std::string::npos; ++d) ++lines;
  CHECK(lines == kBlockingForms + 2);
}

using results = std::vector<std::pair<std::string, pmix_status_t>>;

void check_all_refused(const results& r) {
  CHECK(r.size() == kBlockingForms);
  for (const auto& [name, status] : r) {
    CAPTURE(name);
    CHECK(status == PMIX_ERR_WOULD_BLOCK);
  }
}

// Nothing the refused calls would have done happened.
void check_nothing_done(const std::string& nspace) {
  const auto s = take_snapshot();
  CHECK(s.nspace("probe.ns") == nullptr);  // register_nspace did not run
  REQUIRE(s.nspace(nspace) != nullptr);     // deregister_nspace did not run
  CHECK(s.nspace(nspace)->rank(0) != nullptr);  // deregister_client did not run
}

}  // namespace

TEST_SUITE("would block") {
  TEST_CASE("[19.2.260.7] inside a host up-call every blocking form returns PMIX_ERR_WOULD_BLOCK and does nothing") {
    temp_dir dir;
    server srv(dir.path());
    REQUIRE(srv.status() == PMIX_SUCCESS);
    REQUIRE(register_job("upcall", 1, 1) == PMIX_SUCCESS);
    // Written on the server's thread, read here once the client has exited:
    // under the record's mutex, since a child's exit orders nothing between
    // this process's threads.
    results seen;
    {
      std::lock_guard<std::mutex> guard{record().mutex};
      record().upcall_probe = [&seen] {
        auto refused = call_every_blocking_form("upcall");
        std::lock_guard<std::mutex> guard{record().mutex};
        seen = std::move(refused);
      };
    }
    auto c = launch("upcall", 0, {script, "init", "finalize"}, dir.path());
    CHECK_MESSAGE(c.exited_with(0), c.errors());
    results refused;
    {
      std::lock_guard<std::mutex> guard{record().mutex};
      refused = seen;
    }
    check_all_refused(refused);
    check_nothing_done("upcall");
    // The server's reference count was not touched by the refused
    // init/finalize: the test's own server (count 1) is still running.
    CHECK(take_snapshot().nspace("upcall") != nullptr);
  }

  TEST_CASE("[19.2.260.7] inside a server cbfunc every blocking form returns PMIX_ERR_WOULD_BLOCK and does nothing") {
    temp_dir dir;
    server srv(dir.path());
    REQUIRE(srv.status() == PMIX_SUCCESS);
    REQUIRE(register_job("cbctx", 1, 1) == PMIX_SUCCESS);
    struct ctx {
      results seen;
      std::atomic<bool> done{false};
    } c;
    REQUIRE(PMIx_server_register_nspace(
                "another", 1, nullptr, 0,
                [](pmix_status_t, void* cbdata) {
                  auto* x = static_cast<ctx*>(cbdata);
                  x->seen = call_every_blocking_form("cbctx");
                  x->done = true;
                },
                &c) == PMIX_SUCCESS);
    REQUIRE(eventually([&] { return c.done.load(); }));
    check_all_refused(c.seen);
    check_nothing_done("cbctx");
  }

  TEST_CASE("[19.2.260.7] inside a client cbfunc every blocking form returns PMIX_ERR_WOULD_BLOCK") {
    temp_dir dir;
    server srv(dir.path());
    REQUIRE(srv.status() == PMIX_SUCCESS);
    REQUIRE(register_job("clientcb", 1, 1) == PMIX_SUCCESS);
    auto c = launch("clientcb", 0, {script, "init", "probe_in_callback", "fence", "get:0:pmix.lrank", "finalize"},
                    dir.path());
    CHECK_MESSAGE(c.exited_with(0), c.errors());
    const auto out = c.output();
    CHECK(count_refused_probes(out) == kBlockingForms);
    check_diagnostics(out, c.errors());
    CHECK(contains(out, "probe_in_callback PMIX_SUCCESS"));
    // Outside the callback the same process's blocking calls work, and the
    // refused Finalize left it initialized.
    CHECK(contains(out, "\nfence PMIX_SUCCESS"));
    CHECK(contains(out, "get:0:pmix.lrank PMIX_SUCCESS 0"));
    CHECK(contains(out, "finalize PMIX_SUCCESS"));
  }

  TEST_CASE("[19.2.260.7] inside a server's event handler every blocking form returns PMIX_ERR_WOULD_BLOCK") {
    temp_dir dir;
    server srv(dir.path());
    REQUIRE(srv.status() == PMIX_SUCCESS);
    REQUIRE(register_job("evsrv", 1, 1) == PMIX_SUCCESS);
    static results seen;
    static std::atomic<bool> done;
    seen.clear();
    done = false;
    pmix_status_t code = 8888;
    const pmix_status_t ref = PMIx_Register_event_handler(
        &code, 1, nullptr, 0,
        [](size_t, pmix_status_t, const pmix_proc_t*, pmix_info_t[], size_t, pmix_info_t*, size_t,
           pmix_event_notification_cbfunc_fn_t cbfunc, void* cbdata) {
          seen = call_every_blocking_form("evsrv");
          cbfunc(PMIX_EVENT_ACTION_COMPLETE, nullptr, 0, nullptr, nullptr, cbdata);
          done = true;
        },
        nullptr, nullptr);
    REQUIRE(ref >= 0);
    REQUIRE(PMIx_Notify_event(code, nullptr, PMIX_RANGE_PROC_LOCAL, nullptr, 0, nullptr, nullptr) ==
            PMIX_SUCCESS);
    REQUIRE(eventually([] { return done.load(); }));
    check_all_refused(seen);
    check_nothing_done("evsrv");
    // The refused deregistration (of reference 1: this handler) did nothing.
    CHECK(PMIx_Deregister_event_handler(static_cast<size_t>(ref), nullptr, nullptr) == PMIX_SUCCESS);
  }

  TEST_CASE("[19.2.260.7] inside a client's event handler every blocking form returns PMIX_ERR_WOULD_BLOCK") {
    temp_dir dir;
    server srv(dir.path());
    REQUIRE(srv.status() == PMIX_SUCCESS);
    REQUIRE(register_job("evcli", 1, 1) == PMIX_SUCCESS);
    auto c = launch("evcli", 0,
                    {events, "init", "probe_in_handler", "on:after:5:nb", "notify:5:proc_local",
                     "wait_events:1", "finalize"},
                    dir.path());
    CHECK_MESSAGE(c.exited_with(0), c.errors());
    const auto out = c.output();
    CHECK(count_refused_probes(out) == kBlockingForms);
    CHECK(contains(out, "probe_in_handler PMIX_SUCCESS"));
    // Outside the handler the same calls work; the process is still
    // initialized (the refused finalize did nothing).
    CHECK(contains(out, "notify:5:proc_local PMIX_SUCCESS"));
    CHECK(contains(out, "event after 5 evcli.0"));
    CHECK(contains(out, "finalize PMIX_SUCCESS"));
  }

  TEST_CASE("[19.2.260.7] inside a tool's callback and its event handler every blocking form returns PMIX_ERR_WOULD_BLOCK") {
    // A tool's library threads are library threads too: its cbfunc (of
    // PMIx_Query_info_nb) and its event handler refuse every blocking form,
    // PMIx_tool_finalize among them, and the tool goes on.
    temp_dir dir;
    std::vector<pmix_info_t> tools(1);
    bool yes = true;
    PMIX_INFO_LOAD(&tools[0], PMIX_SERVER_TOOL_SUPPORT, &yes, PMIX_BOOL);
    server srv(dir.path(), {}, tools);
    REQUIRE(srv.status() == PMIX_SUCCESS);
    REQUIRE(register_job("toolcb", 1, 1) == PMIX_SUCCESS);
    const auto env = environment_with({"TEST_SERVER_URI=" + server_uri(), "PMIX_NAMESPACE=",
                                       "PMIX_SERVER_URI41=", "PMIX_SERVER_URI4="});
    child cb({script, "tool_init", "probe_in_query_callback", "query:" PMIX_QUERY_NUM_PSETS, "tool_finalize"}, env,
             dir.path());
    CHECK_MESSAGE(cb.exited_with(0), cb.errors());
    auto out = cb.output();
    CHECK(contains(out, "tool_init PMIX_SUCCESS"));
    CHECK(count_refused_probes(out) == kBlockingForms);
    check_diagnostics(out, cb.errors());
    CHECK(contains(out, "probe_in_query_callback PMIX_SUCCESS"));
    CHECK_MESSAGE(contains(out, "query:" PMIX_QUERY_NUM_PSETS " PMIX_SUCCESS"), out);  // still served
    CHECK(contains(out, "tool_finalize PMIX_SUCCESS"));

    child handler({events, "tool_init", "probe_in_handler", "on:after:5:nb", "notify:5:proc_local",
                   "wait_events:1", "tool_finalize"},
                  env, dir.path());
    CHECK_MESSAGE(handler.exited_with(0), handler.errors());
    out = handler.output();
    CHECK(count_refused_probes(out) == kBlockingForms);
    CHECK(contains(out, "probe_in_handler PMIX_SUCCESS"));
    CHECK(contains(out, "notify:5:proc_local PMIX_SUCCESS"));
    CHECK(contains(out, "tool_finalize PMIX_SUCCESS"));
    check_nothing_done("toolcb");
    PMIX_INFO_DESTRUCT(&tools[0]);
  }

  TEST_CASE("[19.2.260.7] from the user's own thread the same calls do their work") {
    temp_dir dir;
    server srv(dir.path());
    REQUIRE(srv.status() == PMIX_SUCCESS);
    REQUIRE(register_job("mine", 1, 1) == PMIX_SUCCESS);
    CHECK(PMIx_server_register_nspace("probe.ns", 1, nullptr, 0, nullptr, nullptr) == PMIX_SUCCESS);
    CHECK(take_snapshot().nspace("probe.ns") != nullptr);
    pmix_proc_t p;
    PMIX_LOAD_PROCID(&p, "mine", 0);
    pmix_data_buffer_t buf;
    PMIX_DATA_BUFFER_CONSTRUCT(&buf);
    CHECK(PMIx_server_collect_job_info(&p, 1, &buf) == PMIX_SUCCESS);
    CHECK(buf.bytes_used > 0);
    PMIX_DATA_BUFFER_DESTRUCT(&buf);
    // The event calls' blocking forms: a handler registered, run and removed.
    static std::atomic<int> ran;
    ran = 0;
    pmix_status_t code = 9999;
    const pmix_status_t ref = PMIx_Register_event_handler(
        &code, 1, nullptr, 0,
        [](size_t, pmix_status_t, const pmix_proc_t*, pmix_info_t[], size_t, pmix_info_t*, size_t,
           pmix_event_notification_cbfunc_fn_t cbfunc, void* cbdata) {
          ++ran;
          cbfunc(PMIX_SUCCESS, nullptr, 0, nullptr, nullptr, cbdata);
        },
        nullptr, nullptr);
    CHECK(ref >= 0);
    CHECK(PMIx_Notify_event(code, nullptr, PMIX_RANGE_PROC_LOCAL, nullptr, 0, nullptr, nullptr) ==
          PMIX_SUCCESS);
    CHECK(eventually([] { return ran.load() == 1; }));
    CHECK(PMIx_Deregister_event_handler(static_cast<size_t>(ref), nullptr, nullptr) == PMIX_SUCCESS);
    CHECK(PMIx_Deregister_event_handler(static_cast<size_t>(ref), nullptr, nullptr) == PMIX_SUCCESS);
    CHECK(PMIx_server_init(nullptr, nullptr, 0) == PMIX_SUCCESS);  // count 2
    CHECK(PMIx_server_finalize() == PMIX_SUCCESS);                 // back to 1
    PMIx_server_deregister_client(&p, nullptr, nullptr);
    CHECK(take_snapshot().nspace("mine")->rank(0) == nullptr);
    PMIx_server_deregister_nspace("mine", nullptr, nullptr);
    CHECK(take_snapshot().nspace("mine") == nullptr);
  }
}
