// The progress-thread rule (spec 002, 19.2.260.7): every blocking form of
// the client, server and tool APIs, called from a thread that runs library
// code -- a host up-call, the completion of one (the host's release
// function), a server cbfunc, a client or tool cbfunc, an event handler --
// returns PMIX_ERR_WOULD_BLOCK at once, with a diagnostic naming the call,
// and does nothing; from the user's own thread the same calls work.
#include <doctest/doctest.h>
#include <fcntl.h>
#include <pmix_server.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <mutex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "tests/e2e/host.hpp"

using namespace pmix::test;

namespace {

const std::string script = runfile("tests/e2e/script_client");
const std::string events = runfile("tests/e2e/event_client");

// What call_every_blocking_form tries (the client, server, tool and event
// APIs' blocking forms that return a status).
constexpr std::size_t kBlockingForms = 52;

// The "probe <call> <STATUS>" lines of a client's output: the calls, in order.
std::vector<std::string> probed_calls(const std::string& out) {
  std::vector<std::string> calls;
  for (std::size_t at = 0; (at = out.find("probe ", at)) != std::string::npos; ++at) {
    if (at > 0 && out[at - 1] != '\n') continue;
    const auto line = out.substr(at + 6, out.find('\n', at) - at - 6);
    calls.push_back(line.substr(0, line.rfind(' ')));
  }
  return calls;
}

// Counts the "probe <call> <STATUS>" lines of a client's output and checks
// each says PMIX_ERR_WOULD_BLOCK.
std::size_t count_refused_probes(const std::string& out) {
  std::size_t refused = 0;
  for (std::size_t at = 0; (at = out.find("probe ", at)) != std::string::npos; ++at) {
    if (at > 0 && out[at - 1] != '\n') continue;
    const auto line = out.substr(at, out.find('\n', at) - at);
    CAPTURE(line);
    CHECK(contains(line, " PMIX_ERR_WOULD_BLOCK"));
    ++refused;
  }
  return refused;
}

// The diagnostic that goes with every refusal (19.2.260.7: "accompanied by
// a diagnostic naming the call"): for each refused call, a log line on the
// process's stderr naming that call, saying why it was refused and what to
// do instead; and no more lines than refusals.
void check_diagnostics(const std::vector<std::string>& calls, const std::string& err) {
  for (const auto& probe : calls) {
    const auto call = probe.substr(0, probe.find_first_of(" ("));  // "PMIx_Fence_nb(NULL cbfunc)" -> PMIx_Fence_nb
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
  CHECK(calls.size() == kBlockingForms);
  // The two forms with no status (deregister_client, deregister_nspace)
  // have theirs too: one line per refusal, no more.
  for (const std::string call : {"PMIx_server_deregister_client", "PMIx_server_deregister_nspace"}) {
    CAPTURE(call);
    CHECK(contains(err, "api: " + call + " with a NULL cbfunc called from a PMIx library thread"));
  }
  CHECK(count(err, "called from a PMIx library thread") == kBlockingForms + 2);
}

void check_diagnostics(const std::string& out, const std::string& err) { check_diagnostics(probed_calls(out), err); }

using results = std::vector<std::pair<std::string, pmix_status_t>>;

std::vector<std::string> names_of(const results& r) {
  std::vector<std::string> names;
  for (const auto& entry : r) names.push_back(entry.first);
  return names;
}

void check_all_refused(const results& r) {
  CHECK(r.size() == kBlockingForms);
  for (const auto& [name, status] : r) {
    CAPTURE(name);
    CHECK(status == PMIX_ERR_WOULD_BLOCK);
  }
}

// This process's stderr (fd 2: both shared objects' log lines) goes to a
// file from construction to finish(), which returns what was written and
// copies it to the real stderr (so the test log keeps it).
class stderr_capture {
 public:
  explicit stderr_capture(const std::string& dir) : path_(dir + "/stderr.log") {
    std::fflush(stderr);
    saved_ = ::dup(STDERR_FILENO);
    const int fd = ::open(path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    REQUIRE(saved_ >= 0);
    REQUIRE(fd >= 0);
    ::dup2(fd, STDERR_FILENO);
    ::close(fd);
  }
  ~stderr_capture() { finish(); }
  stderr_capture(const stderr_capture&) = delete;
  stderr_capture& operator=(const stderr_capture&) = delete;

  std::string finish() {
    if (saved_ < 0) return text_;
    std::fflush(stderr);
    ::dup2(saved_, STDERR_FILENO);
    ::close(saved_);
    saved_ = -1;
    std::ifstream in(path_);
    text_.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
    std::fputs(text_.c_str(), stderr);
    return text_;
  }

 private:
  std::string path_;
  int saved_ = -1;
  std::string text_;
};

// The host up-calls the refused client forms would reach: each records its
// call (host.hpp), so none recorded shows none was made.
host_slots watching() {
  host_slots slots;
  slots.publish = slots.spawn = slots.job_control = slots.log = slots.connect = slots.group = slots.requests =
      slots.iof = true;
  return slots;
}

// Nothing the refused calls would have done happened: the server's state,
// and (for a client's or tool's refused forms, which would have reached
// them) the host's up-calls.
void check_nothing_done(const std::string& nspace) {
  const auto s = take_snapshot();
  CHECK(s.nspace("probe.ns") == nullptr);  // register_nspace did not run
  REQUIRE(s.nspace(nspace) != nullptr);     // deregister_nspace did not run
  CHECK(s.nspace(nspace)->rank(0) != nullptr);  // deregister_client did not run
  CHECK(s.iof_registrations == 0);              // IOF_pull registered nothing
  auto& r = record();
  std::lock_guard<std::mutex> guard{r.mutex};
  CHECK(r.store.empty());                // PMIx_Publish: nothing published
  CHECK(r.spawned.empty());              // PMIx_Spawn: the spawn up-call was not made
  CHECK(r.job_control_calls.load() == 0);  // PMIx_Job_control
  CHECK(r.logged.empty());               // PMIx_Log
  CHECK(r.connects.load() == 0);         // PMIx_Connect
  CHECK(r.disconnects.load() == 0);      // PMIx_Disconnect
  CHECK(r.aborts.load() == 0);           // PMIx_Abort
  // Groups, allocation, monitoring, credentials, stdin, output and the
  // fabric: no up-call recorded (a lookup the test itself made afterwards
  // is the only one allowed).
  for (const auto& call : r.dynamic_calls) {
    CAPTURE(call);
    CHECK(call.rfind("lookup:", 0) == 0);
  }
}

// The refused PMIx_Register_event_handler and PMIx_Notify_event in this
// (the server's) process: a handler for the probe's notification code,
// registered before the probe, counts what reaches it.
std::atomic<int> refused_notifications{0};
std::atomic<int> handler_code_runs{0};
int refused_handler_runs_before = 0;  // refused_handler_runs() before the probe

void count_refused_notification(size_t, pmix_status_t, const pmix_proc_t*, pmix_info_t[], size_t, pmix_info_t*,
                                size_t, pmix_event_notification_cbfunc_fn_t cbfunc, void* cbdata) {
  ++refused_notifications;
  cbfunc(PMIX_SUCCESS, nullptr, 0, nullptr, nullptr, cbdata);
}

void count_handler_code(size_t, pmix_status_t, const pmix_proc_t*, pmix_info_t[], size_t, pmix_info_t*, size_t,
                        pmix_event_notification_cbfunc_fn_t cbfunc, void* cbdata) {
  ++handler_code_runs;
  cbfunc(PMIX_SUCCESS, nullptr, 0, nullptr, nullptr, cbdata);
}

size_t watch_refused_notification() {
  refused_notifications = 0;
  refused_handler_runs_before = refused_handler_runs();
  pmix_status_t code = kRefusedNotifyCode;
  const pmix_status_t ref =
      PMIx_Register_event_handler(&code, 1, nullptr, 0, count_refused_notification, nullptr, nullptr);
  REQUIRE(ref >= 0);
  return static_cast<size_t>(ref);
}

// After the probe, from this thread: kRefusedHandlerCode reaches the
// handler registered for it now, not the probe's (whose registration was
// refused); the probe's notification reached nobody (it comes before this
// one, on the same path, so it would have arrived by now).
void check_events_did_nothing(size_t watcher) {
  handler_code_runs = 0;
  pmix_status_t code = kRefusedHandlerCode;
  const pmix_status_t ref = PMIx_Register_event_handler(&code, 1, nullptr, 0, count_handler_code, nullptr, nullptr);
  REQUIRE(ref >= 0);
  REQUIRE(PMIx_Notify_event(code, nullptr, PMIX_RANGE_PROC_LOCAL, nullptr, 0, nullptr, nullptr) == PMIX_SUCCESS);
  CHECK(eventually([] { return handler_code_runs.load() == 1; }));
  CHECK(refused_handler_runs() == refused_handler_runs_before);
  CHECK(refused_notifications.load() == 0);
  CHECK(PMIx_Deregister_event_handler(static_cast<size_t>(ref), nullptr, nullptr) == PMIX_SUCCESS);
  CHECK(PMIx_Deregister_event_handler(watcher, nullptr, nullptr) == PMIX_SUCCESS);
}

// The same in a client or tool (event_client): steps before the probe
// (a watcher of the probe's notification code) and after it (a handler for
// the refused registration's code, and its notification), and the checks
// of the output. `wait_events` counts the handlers of the steps after.
const std::vector<std::string> watch_steps{"on:watch:" + std::to_string(kRefusedNotifyCode) + ":nb"};
const std::vector<std::string> after_probe_steps{"on:seen:" + std::to_string(kRefusedHandlerCode) + ":nb",
                                                 "notify:" + std::to_string(kRefusedHandlerCode) + ":proc_local"};

void check_client_events_did_nothing(const std::string& out) {
  CHECK_MESSAGE(contains(out, "event seen " + std::to_string(kRefusedHandlerCode) + " "), out);
  CHECK_MESSAGE(!contains(out, "refused-handler ran"), out);
  CHECK_MESSAGE(!contains(out, "event watch "), out);
}

std::vector<std::string> operator+(std::vector<std::string> a, const std::vector<std::string>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

// A server whose host is test::make_module's with another fence_nb: it
// answers from a thread of its own, and its release function (which the
// library calls once it is done with the data, on a library thread: the
// completion of the up-call) runs the probe.
struct release_probe {
  std::mutex mutex;
  results seen;
  bool done = false;
};

release_probe& in_release() {
  static release_probe p;
  return p;
}

struct held_fence_data {
  std::string bytes;
};

void probing_release(void* cbdata) {
  delete static_cast<held_fence_data*>(cbdata);
  auto refused = call_every_blocking_form("relctx");
  auto& p = in_release();
  std::lock_guard<std::mutex> guard{p.mutex};
  p.seen = std::move(refused);
  p.done = true;
}

pmix_status_t fence_released_by_probe(const pmix_proc_t[], size_t, const pmix_info_t[], size_t, char* data,
                                      size_t ndata, pmix_modex_cbfunc_t cbfunc, void* cbdata) {
  auto* held = new held_fence_data{std::string(data == nullptr ? "" : data, ndata)};
  std::thread([cbfunc, cbdata, held] {
    cbfunc(PMIX_SUCCESS, held->bytes.data(), held->bytes.size(), cbdata, probing_release, held);
  }).detach();
  return PMIX_SUCCESS;
}

class releasing_server {
 public:
  explicit releasing_server(const std::string& tmpdir) {
    record().reset();
    module_ = make_module(watching());
    module_.fence_nb = fence_released_by_probe;
    pmix_info_t dir;
    PMIX_INFO_LOAD(&dir, PMIX_SERVER_TMPDIR, tmpdir.c_str(), PMIX_STRING);
    status_ = PMIx_server_init(&module_, &dir, 1);
    PMIX_INFO_DESTRUCT(&dir);
  }
  ~releasing_server() {
    if (status_ == PMIX_SUCCESS) PMIx_server_finalize();
  }
  releasing_server(const releasing_server&) = delete;
  releasing_server& operator=(const releasing_server&) = delete;
  pmix_status_t status() const { return status_; }

 private:
  pmix_server_module_t module_;
  pmix_status_t status_;
};

}  // namespace

TEST_SUITE("would block") {
  TEST_CASE("[19.2.260.7] inside a host up-call every blocking form returns PMIX_ERR_WOULD_BLOCK and does nothing") {
    temp_dir dir;
    server srv(dir.path(), watching());
    REQUIRE(srv.status() == PMIX_SUCCESS);
    REQUIRE(register_job("upcall", 1, 1) == PMIX_SUCCESS);
    const auto watcher = watch_refused_notification();
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
    stderr_capture err(dir.path());
    auto c = launch("upcall", 0, {script, "init", "finalize"}, dir.path());
    CHECK_MESSAGE(c.exited_with(0), c.errors());
    results refused;
    {
      std::lock_guard<std::mutex> guard{record().mutex};
      refused = seen;
    }
    check_diagnostics(names_of(refused), err.finish());
    check_all_refused(refused);
    check_nothing_done("upcall");
    check_events_did_nothing(watcher);
    // The server's reference count was not touched by the refused
    // init/finalize: the test's own server (count 1) is still running.
    CHECK(take_snapshot().nspace("upcall") != nullptr);
  }

  TEST_CASE("[19.2.260.7] inside a host's release function (the completion of a host up-call) every blocking form "
            "returns PMIX_ERR_WOULD_BLOCK and does nothing") {
    // The host answers a fence from a thread of its own; the library calls
    // the release function the host handed it, once it is done with the
    // data, on a library thread: there the probe runs.
    temp_dir dir;
    {
      std::lock_guard<std::mutex> guard{in_release().mutex};
      in_release().seen.clear();
      in_release().done = false;
    }
    releasing_server srv(dir.path());
    REQUIRE(srv.status() == PMIX_SUCCESS);
    REQUIRE(register_job("relctx", 2, 1) == PMIX_SUCCESS);  // rank 1 elsewhere: the fence is the host's
    const auto watcher = watch_refused_notification();
    stderr_capture err(dir.path());
    auto c = launch("relctx", 0, {script, "init", "fence", "finalize"}, dir.path());
    CHECK_MESSAGE(c.exited_with(0), c.errors());
    CHECK(contains(c.output(), "\nfence PMIX_SUCCESS"));
    REQUIRE(eventually([] {
      std::lock_guard<std::mutex> guard{in_release().mutex};
      return in_release().done;
    }));
    results refused;
    {
      std::lock_guard<std::mutex> guard{in_release().mutex};
      refused = in_release().seen;
    }
    check_diagnostics(names_of(refused), err.finish());
    check_all_refused(refused);
    check_nothing_done("relctx");
    check_events_did_nothing(watcher);
  }

  TEST_CASE("[19.2.260.7] inside a server cbfunc every blocking form returns PMIX_ERR_WOULD_BLOCK and does nothing") {
    temp_dir dir;
    server srv(dir.path(), watching());
    REQUIRE(srv.status() == PMIX_SUCCESS);
    REQUIRE(register_job("cbctx", 1, 1) == PMIX_SUCCESS);
    const auto watcher = watch_refused_notification();
    struct ctx {
      results seen;
      std::atomic<bool> done{false};
    } c;
    stderr_capture err(dir.path());
    REQUIRE(PMIx_server_register_nspace(
                "another", 1, nullptr, 0,
                [](pmix_status_t, void* cbdata) {
                  auto* x = static_cast<ctx*>(cbdata);
                  x->seen = call_every_blocking_form("cbctx");
                  x->done = true;
                },
                &c) == PMIX_SUCCESS);
    REQUIRE(eventually([&] { return c.done.load(); }));
    check_diagnostics(names_of(c.seen), err.finish());
    check_all_refused(c.seen);
    check_nothing_done("cbctx");
    check_events_did_nothing(watcher);
  }

  TEST_CASE("[19.2.260.7] inside a client cbfunc every blocking form returns PMIX_ERR_WOULD_BLOCK and does nothing") {
    temp_dir dir;
    server srv(dir.path(), watching());
    REQUIRE(srv.status() == PMIX_SUCCESS);
    REQUIRE(register_job("clientcb", 1, 1) == PMIX_SUCCESS);
    auto c = launch("clientcb", 0,
                    {script, "init", "probe_in_callback", "fence", "get:0:pmix.lrank", "lookup:probe.key", "finalize"},
                    dir.path());
    CHECK_MESSAGE(c.exited_with(0), c.errors());
    const auto out = c.output();
    CHECK(count_refused_probes(out) == kBlockingForms);
    check_diagnostics(out, c.errors());
    CHECK(contains(out, "probe_in_callback PMIX_SUCCESS"));
    // Outside the callback the same process's blocking calls work, and the
    // refused Finalize left it initialized; the refused Publish left
    // nothing to find.
    CHECK(contains(out, "\nfence PMIX_SUCCESS"));
    CHECK(contains(out, "get:0:pmix.lrank PMIX_SUCCESS 0"));
    CHECK_MESSAGE(contains(out, "lookup:probe.key PMIX_ERR_NOT_FOUND"), out);
    CHECK(contains(out, "finalize PMIX_SUCCESS"));
    check_nothing_done("clientcb");
  }

  TEST_CASE("[19.2.260.7] inside a server's event handler every blocking form returns PMIX_ERR_WOULD_BLOCK and does nothing") {
    temp_dir dir;
    server srv(dir.path(), watching());
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
    const auto watcher = watch_refused_notification();
    stderr_capture err(dir.path());
    REQUIRE(PMIx_Notify_event(code, nullptr, PMIX_RANGE_PROC_LOCAL, nullptr, 0, nullptr, nullptr) ==
            PMIX_SUCCESS);
    REQUIRE(eventually([] { return done.load(); }));
    check_diagnostics(names_of(seen), err.finish());
    check_all_refused(seen);
    check_nothing_done("evsrv");
    check_events_did_nothing(watcher);
    // The refused deregistration (of reference 1: this handler) did nothing.
    CHECK(PMIx_Deregister_event_handler(static_cast<size_t>(ref), nullptr, nullptr) == PMIX_SUCCESS);
  }

  TEST_CASE("[19.2.260.7] inside a client's event handler every blocking form returns PMIX_ERR_WOULD_BLOCK and does nothing") {
    temp_dir dir;
    server srv(dir.path(), watching());
    REQUIRE(srv.status() == PMIX_SUCCESS);
    REQUIRE(register_job("evcli", 1, 1) == PMIX_SUCCESS);
    auto c = launch("evcli", 0,
                    std::vector<std::string>{events, "init"} + watch_steps +
                        std::vector<std::string>{"probe_in_handler", "on:after:5:nb", "notify:5:proc_local"} +
                        after_probe_steps + std::vector<std::string>{"wait_events:2", "finalize"},
                    dir.path());
    CHECK_MESSAGE(c.exited_with(0), c.errors());
    const auto out = c.output();
    CHECK(count_refused_probes(out) == kBlockingForms);
    check_diagnostics(out, c.errors());
    CHECK(contains(out, "probe_in_handler PMIX_SUCCESS"));
    // Outside the handler the same calls work; the process is still
    // initialized (the refused finalize did nothing).
    CHECK(contains(out, "notify:5:proc_local PMIX_SUCCESS"));
    CHECK(contains(out, "event after 5 evcli.0"));
    CHECK(contains(out, "wait_events:2 PMIX_SUCCESS"));
    CHECK(contains(out, "finalize PMIX_SUCCESS"));
    check_client_events_did_nothing(out);
    check_nothing_done("evcli");
  }

  TEST_CASE("[19.2.260.7] inside a tool's callback and its event handler every blocking form returns PMIX_ERR_WOULD_BLOCK") {
    // A tool's library threads are library threads too: its cbfunc (of
    // PMIx_Query_info_nb) and its event handler refuse every blocking form,
    // PMIx_tool_finalize among them, and the tool goes on.
    temp_dir dir;
    std::vector<pmix_info_t> tools(1);
    bool yes = true;
    PMIX_INFO_LOAD(&tools[0], PMIX_SERVER_TOOL_SUPPORT, &yes, PMIX_BOOL);
    server srv(dir.path(), watching(), tools);
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
    check_nothing_done("toolcb");

    child handler(std::vector<std::string>{events, "tool_init"} + watch_steps +
                      std::vector<std::string>{"probe_in_handler", "on:after:5:nb", "notify:5:proc_local"} +
                      after_probe_steps + std::vector<std::string>{"wait_events:2", "tool_finalize"},
                  env, dir.path());
    CHECK_MESSAGE(handler.exited_with(0), handler.errors());
    out = handler.output();
    CHECK(count_refused_probes(out) == kBlockingForms);
    check_diagnostics(out, handler.errors());
    CHECK(contains(out, "probe_in_handler PMIX_SUCCESS"));
    CHECK(contains(out, "notify:5:proc_local PMIX_SUCCESS"));
    CHECK(contains(out, "wait_events:2 PMIX_SUCCESS"));
    CHECK(contains(out, "tool_finalize PMIX_SUCCESS"));
    check_client_events_did_nothing(out);
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
