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

using results = std::vector<std::pair<std::string, pmix_status_t>>;

void check_all_refused(const results& r) {
  CHECK(r.size() >= 14);
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
    results seen;
    {
      std::lock_guard<std::mutex> guard{record().mutex};
      record().upcall_probe = [&seen] { seen = call_every_blocking_form("upcall"); };
    }
    auto c = launch("upcall", 0, {script, "init", "finalize"}, dir.path());
    CHECK_MESSAGE(c.exited_with(0), c.errors());
    check_all_refused(seen);
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
    int refused = 0;
    for (std::size_t at = 0; (at = out.find("probe ", at)) != std::string::npos; ++at) {
      const auto line = out.substr(at, out.find('\n', at) - at);
      CAPTURE(line);
      CHECK(contains(line, " PMIX_ERR_WOULD_BLOCK"));
      ++refused;
    }
    CHECK(refused >= 14);
    CHECK(contains(out, "probe_in_callback PMIX_SUCCESS"));
    // Outside the callback the same process's blocking calls work, and the
    // refused Finalize left it initialized.
    CHECK(contains(out, "\nfence PMIX_SUCCESS"));
    CHECK(contains(out, "get:0:pmix.lrank PMIX_SUCCESS 0"));
    CHECK(contains(out, "finalize PMIX_SUCCESS"));
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
    CHECK(PMIx_server_init(nullptr, nullptr, 0) == PMIX_SUCCESS);  // count 2
    CHECK(PMIx_server_finalize() == PMIX_SUCCESS);                 // back to 1
    PMIx_server_deregister_client(&p, nullptr, nullptr);
    CHECK(take_snapshot().nspace("mine")->rank(0) == nullptr);
    PMIx_server_deregister_nspace("mine", nullptr, nullptr);
    CHECK(take_snapshot().nspace("mine") == nullptr);
  }
}
