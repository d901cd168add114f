// End-to-end: the calls that go through the server to its host (publish,
// lookup, unpublish, spawn, connect, disconnect, log), the Resolve calls,
// the server calls a host makes for other nodes and launches
// (dmodex_request, setup_application, setup_local_support, IOF_deliver),
// and the rule for directives a call does not support. Real client
// processes over real sockets; this test process is the host.
#include <doctest/doctest.h>
#include <fcntl.h>
#include <pmix_server.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <vector>

#include "protocol/codec.hpp"
#include "tests/e2e/host.hpp"

using namespace pmix::test;

namespace {

const std::string script = runfile("tests/e2e/script_client");

std::vector<child> run_ranks(const std::string& nspace, const std::vector<std::vector<std::string>>& steps,
                             const temp_dir& dir) {
  std::vector<child> ranks;
  for (pmix_rank_t r = 0; r < steps.size(); ++r) {
    std::vector<std::string> argv{script};
    argv.insert(argv.end(), steps[r].begin(), steps[r].end());
    ranks.push_back(launch(nspace, r, argv, dir.path()));
  }
  for (auto& c : ranks) c.wait();
  return ranks;
}

bool any_contains(const std::vector<std::string>& lines, const std::string& prefix, const std::string& needle) {
  for (const auto& l : lines)
    if (l.rfind(prefix, 0) == 0 && contains(l, needle)) return true;
  return false;
}

// This process's fd (1 or 2) goes to a file while the object lives.
class capture_fd {
 public:
  capture_fd(int fd, const std::string& path) : fd_(fd), saved_(::dup(fd)) {
    const int file = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    ::dup2(file, fd);
    ::close(file);
  }
  ~capture_fd() {
    ::dup2(saved_, fd_);
    ::close(saved_);
  }

 private:
  int fd_, saved_;
};

struct dmodex_answer {
  std::atomic<int> calls{0};
  pmix_status_t status = PMIX_ERROR;
  std::string data;
  std::mutex m;
};

void dmodex_done(pmix_status_t st, char* data, size_t sz, void* cbdata) {
  auto* a = static_cast<dmodex_answer*>(cbdata);
  {
    std::lock_guard<std::mutex> guard{a->m};
    a->status = st;
    a->data.assign(data == nullptr ? "" : data, sz);
  }
  ++a->calls;
}

// The value of `key` in a serialized wire::RankData, or "".
std::string committed_value(const std::string& rank_data, const std::string& key) {
  pmix::wire::RankData d;
  if (!d.ParseFromString(rank_data)) return "<unreadable>";
  for (const auto& item : d.data()) {
    pmix::info i;
    if (pmix::protocol::from_wire(item.info(), i) && i.key == key && i.val.as_string() != nullptr)
      return *i.val.as_string();
  }
  return "";
}

}  // namespace

TEST_SUITE("calls through the host") {
  TEST_CASE("publish, lookup (also waiting) and unpublish go to the host, with the caller's user id") {
    temp_dir dir;
    host_slots slots;
    slots.publish = true;
    server srv(dir.path(), slots);
    REQUIRE(srv.status() == PMIX_SUCCESS);
    REQUIRE(register_job("pub", 2, 2) == PMIX_SUCCESS);
    auto ranks = run_ranks(
        "pub",
        {{"init", "publish:svc=addr0", "publish:late=x", "publish:late=y", "fence", "unpublish:svc", "fence",
          "lookup:svc", "fence", "publish:svc=again", "lookup_nb:svc", "finalize"},
         {"init", "lookup:late:wait", "lookup:late:garbage", "fence", "fence", "lookup:svc", "fence",
          "unpublish:late", "finalize"}},
        dir);
    for (auto& c : ranks) CHECK_MESSAGE(c.exited_with(0), c.errors());
    const auto out0 = ranks[0].output(), out1 = ranks[1].output();
    CHECK(contains(out0, "publish:svc=addr0 PMIX_SUCCESS"));
    CHECK(contains(out0, "publish:late=y PMIX_ERR_DUPLICATE_KEY"));
    CHECK(contains(out0, "unpublish:svc PMIX_SUCCESS"));
    CHECK(contains(out0, "lookup:svc PMIX_ERR_NOT_FOUND"));
    CHECK(contains(out0, "lookup_nb:svc PMIX_SUCCESS 1 again"));
    // Asked before rank 0 published it, answered once it did.
    CHECK_MESSAGE(contains(out1, "lookup:late:wait PMIX_SUCCESS x from pub.0"), out1);
    // Into pdata the caller did not construct, as python3-pmix passes it
    // (issue 34.4: nothing was filled, and the lookup said PMIX_SUCCESS).
    CHECK_MESSAGE(contains(out1, "lookup:late:garbage PMIX_SUCCESS x from pub.0"), out1);
    CHECK(contains(out1, "lookup:svc PMIX_ERR_NOT_FOUND"));
    // Only the publisher may remove its data.
    CHECK(contains(out1, "unpublish:late PMIX_ERR_NOT_FOUND"));
    // The host was told who asked (Open MPI's data server needs it).
    const auto calls = dynamic_calls();
    CHECK(any_contains(calls, "publish:", PMIX_USERID));
    CHECK(any_contains(calls, "lookup:", PMIX_USERID));
    CHECK(any_contains(calls, "lookup:", PMIX_WAIT));
    CHECK(any_contains(calls, "unpublish:", PMIX_USERID));
    CHECK(deregister_job("pub") == PMIX_SUCCESS);
  }

  TEST_CASE("without the host's up-calls, publish, lookup, unpublish and spawn are not supported") {
    temp_dir dir;
    server srv(dir.path());
    REQUIRE(srv.status() == PMIX_SUCCESS);
    REQUIRE(register_job("bare", 1, 1) == PMIX_SUCCESS);
    auto ranks = run_ranks(
        "bare", {{"init", "publish:k=v", "lookup:k", "unpublish:k", "spawn:1:/bin/true", "finalize"}}, dir);
    REQUIRE_MESSAGE(ranks[0].exited_with(0), ranks[0].errors());
    const auto out = ranks[0].output();
    CHECK(contains(out, "publish:k=v PMIX_ERR_NOT_SUPPORTED"));
    CHECK(contains(out, "lookup:k PMIX_ERR_NOT_SUPPORTED"));
    CHECK(contains(out, "unpublish:k PMIX_ERR_NOT_SUPPORTED"));
    CHECK(contains(out, "spawn:1:/bin/true PMIX_ERR_NOT_SUPPORTED"));
    CHECK(deregister_job("bare") == PMIX_SUCCESS);
  }

  TEST_CASE("spawn: the host starts a job; parent and children connect and read each other's data") {
    temp_dir dir;
    host_slots slots;
    slots.spawn = true;
    slots.connect = true;
    server srv(dir.path(), slots);
    REQUIRE(srv.status() == PMIX_SUCCESS);
    set_spawn_capture_dir(dir.path());
    REQUIRE(register_job("par", 1, 1) == PMIX_SUCCESS);
    const std::string child_steps = script +
                                    "|init|put:childkey=c|commit|get_ns:parent:*:pmix.job.size|connect:parent,self|"
                                    "get_ns:parent:0:parentkey|get_ns:parent:*:pmix.local.size|finalize";
    auto ranks = run_ranks("par",
                           {{"init", "put:parentkey=p", "commit", "spawn:2:" + child_steps,
                             "get_ns:spawned:*:pmix.job.size", "connect:self,spawned",
                             "get_ns:spawned:1:childkey", "get_ns:spawned:*:pmix.local.size", "finalize"}},
                           dir);
    REQUIRE_MESSAGE(ranks[0].exited_with(0), ranks[0].errors());
    const auto out = ranks[0].output();
    CHECK_MESSAGE(contains(out, "PMIX_SUCCESS par.spawn0"), out);
    // The child job's data, before and after connecting.
    CHECK(contains(out, "get_ns:spawned:*:pmix.job.size PMIX_SUCCESS 2"));
    CHECK(contains(out, "connect:self,spawned PMIX_SUCCESS"));
    CHECK(contains(out, "get_ns:spawned:1:childkey PMIX_SUCCESS c"));
    CHECK(contains(out, "get_ns:spawned:*:pmix.local.size PMIX_SUCCESS 2"));
    std::lock_guard<std::mutex> guard{record().mutex};
    REQUIRE(record().spawned_children.size() == 2);
    for (auto& c : record().spawned_children) {
      CHECK_MESSAGE(c.exited_with(0), c.errors());
      const auto child_out = c.output();
      CHECK_MESSAGE(contains(child_out, "get_ns:parent:*:pmix.job.size PMIX_SUCCESS 1"), child_out);
      CHECK(contains(child_out, "connect:parent,self PMIX_SUCCESS"));
      CHECK(contains(child_out, "get_ns:parent:0:parentkey PMIX_SUCCESS p"));
      CHECK(contains(child_out, "get_ns:parent:*:pmix.local.size PMIX_SUCCESS 1"));
    }
    // Every participant ran here: the server completed the connect itself.
    CHECK(record().connects == 0);
  }

  TEST_CASE("a connect or disconnect spanning other nodes goes to the host; without its up-calls it is not supported") {
    temp_dir dir;
    {
      host_slots slots;
      slots.connect = true;
      server srv(dir.path(), slots);
      REQUIRE(srv.status() == PMIX_SUCCESS);
      REQUIRE(register_job("wide", 2, 1) == PMIX_SUCCESS);
      auto ranks = run_ranks("wide", {{"init", "connect:self", "disconnect:self", "finalize"}}, dir);
      REQUIRE_MESSAGE(ranks[0].exited_with(0), ranks[0].errors());
      CHECK(contains(ranks[0].output(), "connect:self PMIX_SUCCESS"));
      CHECK(contains(ranks[0].output(), "disconnect:self PMIX_SUCCESS"));
      CHECK(record().connects == 1);
      CHECK(record().disconnects == 1);
      CHECK(any_contains(dynamic_calls(), "connect:", "procs=1"));
      CHECK(deregister_job("wide") == PMIX_SUCCESS);
    }
    server srv(dir.path());
    REQUIRE(srv.status() == PMIX_SUCCESS);
    REQUIRE(register_job("wide2", 2, 1) == PMIX_SUCCESS);
    auto ranks = run_ranks("wide2", {{"init", "connect:self", "disconnect:self", "finalize"}}, dir);
    REQUIRE_MESSAGE(ranks[0].exited_with(0), ranks[0].errors());
    CHECK(contains(ranks[0].output(), "connect:self PMIX_ERR_NOT_SUPPORTED"));
    CHECK(contains(ranks[0].output(), "disconnect:self PMIX_ERR_NOT_SUPPORTED"));
    CHECK(deregister_job("wide2") == PMIX_SUCCESS);
  }

  TEST_CASE("a connect completes once every participant has called; one that dies fails the next") {
    temp_dir dir;
    server srv(dir.path());
    REQUIRE(srv.status() == PMIX_SUCCESS);
    REQUIRE(register_job("ord", 3, 3) == PMIX_SUCCESS);
    auto ranks = run_ranks("ord",
                           {{"init", "connect:self", "connect:self", "finalize"},
                            {"init", "connect:self", "connect:self", "finalize"},
                            {"init", "connect:self", "crash"}},
                           dir);
    for (int r = 0; r < 2; ++r) {
      CHECK_MESSAGE(ranks[r].exited_with(0), ranks[r].errors());
      const auto out = ranks[r].output();
      // The first completes for all three; the second waits for rank 2,
      // which dies instead.
      CHECK(contains(out, "connect:self PMIX_SUCCESS"));
      CHECK_MESSAGE(contains(out, "connect:self PMIX_ERR_PROC_TERM_WO_SYNC"), out);
    }
    CHECK(deregister_job("ord") == PMIX_SUCCESS);
  }

  TEST_CASE("PMIx_Log goes to the host's log up-call; without one the server writes the channel itself") {
    temp_dir dir;
    {
      host_slots slots;
      slots.log = true;
      server srv(dir.path(), slots);
      REQUIRE(srv.status() == PMIX_SUCCESS);
      REQUIRE(register_job("lg", 1, 1) == PMIX_SUCCESS);
      auto ranks = run_ranks("lg", {{"init", "log:stderr:hello host", "log_nb:stdout:again", "finalize"}}, dir);
      REQUIRE_MESSAGE(ranks[0].exited_with(0), ranks[0].errors());
      CHECK(contains(ranks[0].output(), "log:stderr:hello host PMIX_SUCCESS"));
      CHECK(contains(ranks[0].output(), "log_nb:stdout:again PMIX_SUCCESS"));
      std::lock_guard<std::mutex> guard{record().mutex};
      REQUIRE(record().logged.size() == 2);
      CHECK(record().logged[0] == "lg.0 " PMIX_LOG_STDERR "=hello host");
      CHECK(record().logged[1] == "lg.0 " PMIX_LOG_STDOUT "=again");
    }
    const std::string captured = dir.path() + "/server.stderr";
    {
      server srv(dir.path());
      REQUIRE(srv.status() == PMIX_SUCCESS);
      REQUIRE(register_job("lg2", 1, 1) == PMIX_SUCCESS);
      capture_fd err{STDERR_FILENO, captured};
      auto ranks = run_ranks("lg2", {{"init", "log:stderr:to the server", "finalize"}}, dir);
      REQUIRE(ranks[0].exited_with(0));
      CHECK(contains(ranks[0].output(), "log:stderr:to the server PMIX_SUCCESS"));
    }
    CHECK_MESSAGE(contains(read_file(captured), "[lg2:0] to the server"), read_file(captured));
    // A process without a server logs on its own.
    child alone({script, "init", "log:stderr:on my own", "finalize"}, environment_with({}), dir.path());
    REQUIRE(alone.exited_with(0));
    CHECK(contains(alone.output(), "log:stderr:on my own PMIX_SUCCESS"));
    CHECK_MESSAGE(contains(alone.errors(), "] on my own"), alone.errors());
  }

  TEST_CASE("Resolve_peers and Resolve_nodes answer from the job data") {
    temp_dir dir;
    server srv(dir.path());
    REQUIRE(srv.status() == PMIX_SUCCESS);
    REQUIRE(register_job("spread", 4, 2) == PMIX_SUCCESS);
    auto ranks = run_ranks("spread",
                           {{"init", "resolve_peers:-:self", "resolve_peers:othernode:self",
                             "resolve_peers:" + this_host() + ":*", "resolve_nodes:self", "resolve_nodes:*",
                             "resolve_peers:nowhere:self", "resolve_nodes:unknown.ns", "finalize"}},
                           dir);
    REQUIRE_MESSAGE(ranks[0].exited_with(0), ranks[0].errors());
    const auto out = ranks[0].output();
    CHECK_MESSAGE(contains(out, "resolve_peers:-:self PMIX_SUCCESS spread.0,spread.1\n"), out);
    CHECK(contains(out, "resolve_peers:othernode:self PMIX_SUCCESS spread.2,spread.3\n"));
    CHECK(contains(out, "resolve_peers:" + this_host() + ":* PMIX_SUCCESS spread.0,spread.1\n"));
    CHECK(contains(out, "resolve_nodes:self PMIX_SUCCESS " + this_host() + ",othernode\n"));
    CHECK(contains(out, "resolve_nodes:* PMIX_SUCCESS " + this_host() + ",othernode\n"));
    CHECK(contains(out, "resolve_peers:nowhere:self PMIX_ERR_NOT_FOUND"));
    CHECK(contains(out, "resolve_nodes:unknown.ns PMIX_ERR_NOT_FOUND"));
    CHECK(deregister_job("spread") == PMIX_SUCCESS);
  }

  TEST_CASE("a directive a call does not support is ignored, unless it is required: then PMIX_ERR_NOT_SUPPORTED") {
    temp_dir dir;
    server srv(dir.path());
    REQUIRE(srv.status() == PMIX_SUCCESS);
    REQUIRE(register_job("dirs", 1, 1) == PMIX_SUCCESS);
    std::vector<std::string> steps{"init"};
    for (const char* call : {"init", "finalize", "fence", "get", "connect", "handler"})
      for (const char* how : {"opt", "reqd"}) steps.push_back(std::string{"directive:"} + call + ":vendor.knob:" + how);
    // A directive the call acts on, required, is fine.
    steps.push_back("directive:fence:" PMIX_COLLECT_DATA ":reqd");
    steps.push_back("directive:get:" PMIX_OPTIONAL ":reqd");
    steps.push_back("finalize");
    auto ranks = run_ranks("dirs", {steps}, dir);
    REQUIRE_MESSAGE(ranks[0].exited_with(0), ranks[0].errors());
    const auto out = ranks[0].output();
    for (const char* call : {"init", "finalize", "fence", "get", "connect", "handler"}) {
      CAPTURE(call);
      CHECK_MESSAGE(contains(out, std::string{"directive:"} + call + ":vendor.knob:opt PMIX_SUCCESS"), out);
      CHECK(contains(out, std::string{"directive:"} + call + ":vendor.knob:reqd PMIX_ERR_NOT_SUPPORTED"));
    }
    CHECK(contains(out, "directive:fence:" PMIX_COLLECT_DATA ":reqd PMIX_SUCCESS"));
    CHECK(contains(out, "directive:get:" PMIX_OPTIONAL ":reqd PMIX_SUCCESS"));
    CHECK(deregister_job("dirs") == PMIX_SUCCESS);
  }
}

TEST_SUITE("server calls for other nodes and launches") {
  TEST_CASE("dmodex_request returns a local process's committed data, waiting for its namespace and commit") {
    temp_dir dir;
    server srv(dir.path());
    REQUIRE(srv.status() == PMIX_SUCCESS);
    pmix_proc_t target;
    PMIX_LOAD_PROCID(&target, "dmx", 0);
    dmodex_answer early;
    // Asked before the namespace exists (another node was quicker).
    REQUIRE(PMIx_server_dmodex_request(&target, dmodex_done, &early) == PMIX_SUCCESS);
    REQUIRE(register_job("dmx", 1, 1) == PMIX_SUCCESS);
    const std::string go = dir.path() + "/go";
    auto c = launch("dmx", 0, {script, "init", "put:k=v0", "commit", "wait_file:" + go, "finalize"}, dir.path());
    REQUIRE(eventually([&] { return early.calls == 1; }));
    {
      std::lock_guard<std::mutex> guard{early.m};
      CHECK(early.status == PMIX_SUCCESS);
      CHECK(committed_value(early.data, "k") == "v0");
    }
    dmodex_answer later;
    REQUIRE(PMIx_server_dmodex_request(&target, dmodex_done, &later) == PMIX_SUCCESS);
    REQUIRE(eventually([&] { return later.calls == 1; }));
    CHECK(committed_value(later.data, "k") == "v0");
    std::fclose(std::fopen(go.c_str(), "w"));
    CHECK(c.exited_with(0));
    // Bad arguments.
    CHECK(PMIx_server_dmodex_request(nullptr, dmodex_done, &later) == PMIX_ERR_BAD_PARAM);
    CHECK(PMIx_server_dmodex_request(&target, nullptr, nullptr) == PMIX_ERR_BAD_PARAM);
    // A namespace that never comes is answered when it is deregistered.
    pmix_proc_t never;
    PMIX_LOAD_PROCID(&never, "never.there", 0);
    dmodex_answer lost;
    REQUIRE(PMIx_server_dmodex_request(&never, dmodex_done, &lost) == PMIX_SUCCESS);
    CHECK(lost.calls == 0);
    CHECK(deregister_job("never.there") == PMIX_SUCCESS);
    REQUIRE(eventually([&] { return lost.calls == 1; }));
    CHECK(lost.status == PMIX_ERR_NOT_FOUND);
    CHECK(deregister_job("dmx") == PMIX_SUCCESS);
  }

  TEST_CASE("setup_application harvests the client settings; setup_local_support feeds setup_fork and the job data") {
    temp_dir dir;
    server srv(dir.path());
    REQUIRE(srv.status() == PMIX_SUCCESS);
    ::setenv("PMIX_CXX_TEST_SETTING", "42", 1);
    struct app_answer {
      std::atomic<int> calls{0};
      pmix_status_t status = PMIX_ERROR;
      std::vector<std::string> envars;
    } answer;
    auto cb = [](pmix_status_t st, pmix_info_t info[], size_t ninfo, void* provided, pmix_op_cbfunc_t release,
                 void* release_data) {
      auto* a = static_cast<app_answer*>(provided);
      a->status = st;
      for (size_t k = 0; k < ninfo; ++k)
        if (std::strcmp(info[k].key, PMIX_SET_ENVAR) == 0 && info[k].value.type == PMIX_ENVAR)
          a->envars.push_back(std::string{info[k].value.data.envar.envar} + "=" + info[k].value.data.envar.value);
      if (release != nullptr) release(PMIX_SUCCESS, release_data);
      ++a->calls;
    };
    pmix_info_t want;
    bool on = true;
    PMIX_INFO_LOAD(&want, PMIX_SETUP_APP_ENVARS, &on, PMIX_BOOL);
    REQUIRE(PMIx_server_setup_application("app", &want, 1, cb, &answer) == PMIX_SUCCESS);
    REQUIRE(eventually([&] { return answer.calls == 1; }));
    CHECK(answer.status == PMIX_SUCCESS);
    CHECK(std::find(answer.envars.begin(), answer.envars.end(), "PMIX_CXX_TEST_SETTING=42") != answer.envars.end());
    // Without asking for the environment there is nothing to give.
    app_answer none;
    REQUIRE(PMIx_server_setup_application("app", nullptr, 0, cb, &none) == PMIX_SUCCESS);
    REQUIRE(eventually([&] { return none.calls == 1; }));
    CHECK(none.envars.empty());
    // A required directive it does not know.
    pmix_info_t odd;
    PMIX_INFO_LOAD(&odd, "vendor.fabric", &on, PMIX_BOOL);
    PMIX_INFO_REQUIRED(&odd);
    CHECK(PMIx_server_setup_application("app", &odd, 1, cb, &none) == PMIX_ERR_NOT_SUPPORTED);
    PMIX_INFO_DESTRUCT(&odd);
    PMIX_INFO_DESTRUCT(&want);

    // On this node: an environment change and a job-level key, given
    // before the namespace is registered (as a launch does).
    pmix_info_t local[3];
    pmix_envar_t set{const_cast<char*>("APP_SETTING"), const_cast<char*>("from-setup"), ':'};
    PMIX_INFO_LOAD(&local[0], PMIX_SET_ENVAR, &set, PMIX_ENVAR);
    pmix_envar_t prepend{const_cast<char*>("APP_PATH"), const_cast<char*>("/first"), ':'};
    PMIX_INFO_LOAD(&local[1], PMIX_PREPEND_ENVAR, &prepend, PMIX_ENVAR);
    PMIX_INFO_LOAD(&local[2], "app.job.key", "job-value", PMIX_STRING);
    ::setenv("APP_PATH", "/second", 1);
    REQUIRE(PMIx_server_setup_local_support("app", local, 3, nullptr, nullptr) == PMIX_SUCCESS);
    for (auto& i : local) PMIX_INFO_DESTRUCT(&i);
    REQUIRE(register_job("app", 1, 1) == PMIX_SUCCESS);
    pmix_proc_t p;
    PMIX_LOAD_PROCID(&p, "app", 0);
    char** env = nullptr;
    pmix_argv_append_nosize(&env, "APP_PATH=/second");
    REQUIRE(PMIx_server_setup_fork(&p, &env) == PMIX_SUCCESS);
    std::vector<std::string> vars;
    for (char** e = env; e != nullptr && *e != nullptr; ++e) vars.emplace_back(*e);
    PMIX_ARGV_FREE(env);
    CHECK(std::find(vars.begin(), vars.end(), "APP_SETTING=from-setup") != vars.end());
    CHECK(std::find(vars.begin(), vars.end(), "APP_PATH=/first:/second") != vars.end());
    auto c = launch("app", 0, {script, "init", "get:*:app.job.key", "finalize"}, dir.path());
    REQUIRE_MESSAGE(c.exited_with(0), c.errors());
    CHECK_MESSAGE(contains(c.output(), "get:*:app.job.key PMIX_SUCCESS job-value"), c.output());
    CHECK(deregister_job("app") == PMIX_SUCCESS);
    // Deregistered: the next job of that name starts without them.
    REQUIRE(register_job("app", 1, 1) == PMIX_SUCCESS);
    env = nullptr;
    REQUIRE(PMIx_server_setup_fork(&p, &env) == PMIX_SUCCESS);
    bool still = false;
    for (char** e = env; e != nullptr && *e != nullptr; ++e) still = still || std::strncmp(*e, "APP_SETTING=", 12) == 0;
    PMIX_ARGV_FREE(env);
    CHECK_FALSE(still);
    CHECK(deregister_job("app") == PMIX_SUCCESS);
    ::unsetenv("PMIX_CXX_TEST_SETTING");
  }

  TEST_CASE("a PMIX_LOCAL_PEERS that setup_local_support adds later does not renumber this node's ranks") {
    // Registered by its maps alone, this node's ranks 0-2 get no entries in
    // the job data: a process derives them from their place in
    // PMIX_LOCAL_PEERS (JobInfo.local_ranks_by_peers). A peers list the host
    // adds after the registration is not the map's: the job data then
    // leaves them to the maps, where rank 2 is this node's third.
    temp_dir dir;
    server srv(dir.path());
    REQUIRE(srv.status() == PMIX_SUCCESS);
    REQUIRE(register_job("peers", 4, 3) == PMIX_SUCCESS);
    auto before = launch("peers", 1, {script, "init", "get:2:pmix.lrank", "finalize"}, dir.path());
    REQUIRE_MESSAGE(before.exited_with(0), before.errors());
    CHECK_MESSAGE(contains(before.output(), "get:2:pmix.lrank PMIX_SUCCESS 2"), before.output());
    pmix_info_t peers;
    PMIX_INFO_LOAD(&peers, PMIX_LOCAL_PEERS, "1,2", PMIX_STRING);
    REQUIRE(PMIx_server_setup_local_support("peers", &peers, 1, nullptr, nullptr) == PMIX_SUCCESS);
    PMIX_INFO_DESTRUCT(&peers);
    auto after = launch("peers", 1, {script, "init", "get:*:pmix.lpeers", "get:2:pmix.lrank", "finalize"}, dir.path());
    REQUIRE_MESSAGE(after.exited_with(0), after.errors());
    CHECK_MESSAGE(contains(after.output(), "get:*:pmix.lpeers PMIX_SUCCESS 1,2"), after.output());
    CHECK_MESSAGE(contains(after.output(), "get:2:pmix.lrank PMIX_SUCCESS 2"), after.output());
    CHECK(deregister_job("peers") == PMIX_SUCCESS);
  }

  TEST_CASE("a PMIX_LOCAL_PEERS that setup_local_support adds later decides which peers' PMIX_LOCAL data a process takes") {
    // The job data gives this node's 10 ranks as runs beside the list
    // (JobInfo.local_runs, read instead of parsing the list); a later list
    // drops them, else a process would go by the first list's ranks.
    temp_dir dir;
    server srv(dir.path());
    REQUIRE(srv.status() == PMIX_SUCCESS);
    REQUIRE(register_job("runs", 20, 10) == PMIX_SUCCESS);
    auto pair = [&](const char* tag) {
      const std::vector<std::string> steps{script, "init", std::string{"put:kl="} + tag + ":local",
                                           std::string{"put:kr="} + tag + ":remote", "commit",
                                           "fence:collect:ranks=0,1"};
      auto zero_steps = steps, one_steps = steps;
      zero_steps.push_back("finalize");
      for (const char* step : {"get:0:kl", "get:0:kr", "finalize"}) one_steps.push_back(step);
      auto r0 = launch("runs", 0, zero_steps, dir.path());
      auto r1 = launch("runs", 1, one_steps, dir.path());
      REQUIRE_MESSAGE(r0.exited_with(0), r0.errors());
      REQUIRE_MESSAGE(r1.exited_with(0), r1.errors());
      return r1.output();
    };
    const auto before = pair("a");  // rank 0 is local: its PMIX_LOCAL data, not its PMIX_REMOTE data
    CHECK_MESSAGE(contains(before, "get:0:kl PMIX_SUCCESS a"), before);
    CHECK_MESSAGE(contains(before, "get:0:kr PMIX_ERR_NOT_FOUND"), before);
    pmix_info_t peers;
    // As long as the first list, so that the first list's runs would fit it.
    PMIX_INFO_LOAD(&peers, PMIX_LOCAL_PEERS, "1,2,3,4,5,6,7,8,9,10", PMIX_STRING);
    REQUIRE(PMIx_server_setup_local_support("runs", &peers, 1, nullptr, nullptr) == PMIX_SUCCESS);
    PMIX_INFO_DESTRUCT(&peers);
    const auto after = pair("b");  // rank 0 is not in the new list: the other way round
    CHECK_MESSAGE(contains(after, "get:0:kl PMIX_ERR_NOT_FOUND"), after);
    CHECK_MESSAGE(contains(after, "get:0:kr PMIX_SUCCESS b"), after);
    CHECK(deregister_job("runs") == PMIX_SUCCESS);
  }

  TEST_CASE("IOF_deliver checks its arguments, answers through its callback, and writes locally when asked") {
    temp_dir dir;
    const std::string captured = dir.path() + "/server.stdout";
    std::atomic<int> answered{0};
    auto done = [](pmix_status_t st, void* cbdata) {
      if (st == PMIX_SUCCESS) ++*static_cast<std::atomic<int>*>(cbdata);
    };
    pmix_proc_t source;
    PMIX_LOAD_PROCID(&source, "out", 3);
    pmix_byte_object_t bo{const_cast<char*>("forwarded line\n"), 15};
    {
      pmix_info_t local;
      bool on = true;
      PMIX_INFO_LOAD(&local, PMIX_IOF_LOCAL_OUTPUT, &on, PMIX_BOOL);
      server srv(dir.path(), {}, {local});
      REQUIRE(srv.status() == PMIX_SUCCESS);
      capture_fd out{STDOUT_FILENO, captured};
      REQUIRE(PMIx_server_IOF_deliver(&source, PMIX_FWD_STDOUT_CHANNEL, &bo, nullptr, 0, done, &answered) ==
              PMIX_SUCCESS);
      REQUIRE(eventually([&] { return answered == 1; }));
      CHECK(PMIx_server_IOF_deliver(nullptr, PMIX_FWD_STDOUT_CHANNEL, &bo, nullptr, 0, done, &answered) ==
            PMIX_ERR_BAD_PARAM);
      CHECK(PMIx_server_IOF_deliver(&source, PMIX_FWD_STDOUT_CHANNEL, nullptr, nullptr, 0, done, &answered) ==
            PMIX_ERR_BAD_PARAM);
    }
    CHECK_MESSAGE(contains(read_file(captured), "forwarded line"), read_file(captured));
    server srv(dir.path());
    REQUIRE(srv.status() == PMIX_SUCCESS);
    REQUIRE(PMIx_server_IOF_deliver(&source, PMIX_FWD_STDERR_CHANNEL, &bo, nullptr, 0, done, &answered) ==
            PMIX_SUCCESS);
    REQUIRE(eventually([&] { return answered == 2; }));
  }
}
