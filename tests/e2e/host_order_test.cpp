// End-to-end: what real hosts do, in their order (docs/hosts.md). Open MPI's
// mpirun registers a job's clients before the job's namespace, registers
// unbound ranks' PMIX_LOCALITY_STRING as a NULL string, and stores its own
// data with PMIx_Store_internal in the server process; Slurm calls
// PMIx_server_setup_fork in the forked task, where none of the server's
// threads exist.
#include <doctest/doctest.h>
#include <pmix_server.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <string>
#include <vector>

#include "tests/e2e/host.hpp"

using namespace pmix::test;

namespace {

const std::string script = runfile("tests/e2e/script_client");

pmix_status_t register_client(const std::string& nspace, pmix_rank_t r) {
  pmix_proc_t p;
  PMIX_LOAD_PROCID(&p, nspace.c_str(), r);
  return PMIx_server_register_client(&p, getuid(), getgid(), nullptr, nullptr, nullptr);
}

// PMIX_PROC_DATA for rank r: PMIX_RANK, then PMIX_LOCALITY_STRING as a
// PMIX_STRING whose pointer is NULL (mpirun's unbound ranks).
void load_proc_data(pmix_info_t& out, pmix_rank_t r) {
  pmix_data_array_t* items = nullptr;
  PMIX_DATA_ARRAY_CREATE(items, 2, PMIX_INFO);
  auto* a = static_cast<pmix_info_t*>(items->array);
  PMIX_INFO_LOAD(&a[0], PMIX_RANK, &r, PMIX_PROC_RANK);
  PMIX_INFO_LOAD(&a[1], PMIX_LOCALITY_STRING, nullptr, PMIX_STRING);
  a[1].value.type = PMIX_STRING;
  a[1].value.data.string = nullptr;
  PMIX_INFO_LOAD(&out, PMIX_PROC_DATA, items, PMIX_DATA_ARRAY);
  PMIX_DATA_ARRAY_FREE(items);
}

}  // namespace

TEST_SUITE("hosts' calling orders") {
  TEST_CASE("mpirun's order: clients registered before their namespace, a NULL locality string, data of its own") {
    temp_dir dir;
    server srv(dir.path());
    REQUIRE(srv.status() == PMIX_SUCCESS);

    // The server process's own store (mpirun stores its URI right after init).
    pmix_proc_t me;
    PMIX_LOAD_PROCID(&me, "mpirun-self", 0);
    pmix_value_t uri;
    PMIX_VALUE_LOAD(&uri, "tcp://10.0.0.1:1234", PMIX_STRING);
    CHECK(PMIx_Store_internal(&me, PMIX_PROC_URI, &uri) == PMIX_SUCCESS);
    PMIX_VALUE_DESTRUCT(&uri);
    pmix_value_t* got = nullptr;
    REQUIRE(PMIx_Get(&me, PMIX_PROC_URI, nullptr, 0, &got) == PMIX_SUCCESS);
    REQUIRE(got->type == PMIX_STRING);
    CHECK(std::string{got->data.string} == "tcp://10.0.0.1:1234");
    PMIX_VALUE_RELEASE(got);

    // Each client first, answered at once (mpirun waits for each answer
    // before it registers the namespace); then the namespace.
    for (pmix_rank_t r = 0; r < 2; ++r) CHECK(register_client("early", r) == PMIX_SUCCESS);
    pmix_info_t info[3];
    const std::uint32_t size = 2;
    PMIX_INFO_LOAD(&info[0], PMIX_JOB_SIZE, &size, PMIX_UINT32);
    load_proc_data(info[1], 0);
    load_proc_data(info[2], 1);
    REQUIRE(PMIx_server_register_nspace("early", 2, info, 3, nullptr, nullptr) == PMIX_SUCCESS);
    for (auto& i : info) PMIX_INFO_DESTRUCT(&i);

    auto snap = take_snapshot();
    const auto* ns = snap.nspace("early");
    REQUIRE(ns != nullptr);
    REQUIRE(ns->rank(0) != nullptr);
    CHECK(ns->rank(0)->registered);
    REQUIRE(ns->rank(1) != nullptr);
    CHECK(ns->rank(1)->registered);

    std::vector<child> ranks;
    for (pmix_rank_t r = 0; r < 2; ++r)
      ranks.push_back(launch("early", r,
                             {script, "init", "get:0:" PMIX_LOCALITY_STRING, "get:*:" PMIX_JOB_SIZE,
                              "put:k=v", "commit", "fence:collect", "finalize"},
                             dir.path()));
    for (auto& c : ranks) {
      CHECK_MESSAGE(c.exited_with(0), c.errors());
      const auto out = c.output();
      CHECK_MESSAGE(contains(out, "get:0:pmix.locstr PMIX_SUCCESS (null)"), out);
      CHECK(contains(out, "get:*:pmix.job.size PMIX_SUCCESS 2"));
      CHECK(contains(out, "fence:collect PMIX_SUCCESS"));
    }
    CHECK(record().connected >= 2);
    CHECK(deregister_job("early") == PMIX_SUCCESS);
  }

  TEST_CASE("ORTE's daemons: a NULL-key Get answers all of one process's data as an array of PMIX_INFO") {
    // mpirun stores each orted's report with PMIx_Store_internal and, to
    // build the launch message, asks PMIx_Get(&daemon, NULL): it needs a
    // PMIX_DATA_ARRAY of PMIX_INFO (Open MPI's pmix3x component turns
    // nothing else into its list), even for one key.
    temp_dir dir;
    server srv(dir.path());
    REQUIRE(srv.status() == PMIX_SUCCESS);
    pmix_proc_t daemon, lone, empty;
    PMIX_LOAD_PROCID(&daemon, "orte-dvm", 1);
    PMIX_LOAD_PROCID(&lone, "orte-dvm", 2);
    PMIX_LOAD_PROCID(&empty, "orte-dvm", 3);
    pmix_value_t v;
    PMIX_VALUE_LOAD(&v, "tcp://10.0.0.2:4242", PMIX_STRING);
    CHECK(PMIx_Store_internal(&daemon, "opal.puri", &v) == PMIX_SUCCESS);
    CHECK(PMIx_Store_internal(&lone, "opal.puri", &v) == PMIX_SUCCESS);
    PMIX_VALUE_DESTRUCT(&v);
    const std::uint32_t port = 4243;
    PMIX_VALUE_LOAD(&v, &port, PMIX_UINT32);
    CHECK(PMIx_Store_internal(&daemon, "orte.port", &v) == PMIX_SUCCESS);
    PMIX_VALUE_DESTRUCT(&v);

    auto keys_of = [](const pmix_value_t* got) {
      std::vector<std::string> keys;
      if (got == nullptr || got->type != PMIX_DATA_ARRAY || got->data.darray == nullptr ||
          got->data.darray->type != PMIX_INFO)
        return keys;
      const auto* items = static_cast<const pmix_info_t*>(got->data.darray->array);
      for (std::size_t k = 0; k < got->data.darray->size; ++k) keys.emplace_back(items[k].key);
      return keys;
    };
    pmix_value_t* got = nullptr;
    REQUIRE(PMIx_Get(&daemon, nullptr, nullptr, 0, &got) == PMIX_SUCCESS);
    CHECK(keys_of(got) == std::vector<std::string>{"opal.puri", "orte.port"});
    const auto* items = static_cast<const pmix_info_t*>(got->data.darray->array);
    CHECK(std::string{items[0].value.data.string} == "tcp://10.0.0.2:4242");
    CHECK(items[1].value.type == PMIX_UINT32);
    CHECK(items[1].value.data.uint32 == 4243);
    PMIX_VALUE_RELEASE(got);
    REQUIRE(PMIx_Get(&lone, nullptr, nullptr, 0, &got) == PMIX_SUCCESS);
    CHECK(keys_of(got) == std::vector<std::string>{"opal.puri"});
    PMIX_VALUE_RELEASE(got);

    // Nothing of that process: not found (a server process asks no one).
    got = nullptr;
    CHECK(PMIx_Get(&empty, nullptr, nullptr, 0, &got) == PMIX_ERR_NOT_FOUND);
    CHECK(got == nullptr);
    // All of a namespace's data, or of no process: refused, as OpenPMIx does.
    pmix_proc_t all;
    PMIX_LOAD_PROCID(&all, "orte-dvm", PMIX_RANK_WILDCARD);
    CHECK(PMIx_Get(&all, nullptr, nullptr, 0, &got) == PMIX_ERR_BAD_PARAM);
    CHECK(PMIx_Get(nullptr, nullptr, nullptr, 0, &got) == PMIX_ERR_BAD_PARAM);
    // An empty key is still not a key.
    CHECK(PMIx_Get(&daemon, "", nullptr, 0, &got) == PMIX_ERR_BAD_PARAM);

    // The callback form answers the same.
    struct answer {
      pmix_status_t status = PMIX_ERROR;
      std::vector<std::string> keys;
    } a;
    auto cb = [](pmix_status_t st, pmix_value_t* val, void* cbdata) {
      auto* out = static_cast<answer*>(cbdata);
      out->status = st;
      if (val != nullptr && val->type == PMIX_DATA_ARRAY && val->data.darray->type == PMIX_INFO) {
        const auto* it = static_cast<const pmix_info_t*>(val->data.darray->array);
        for (std::size_t k = 0; k < val->data.darray->size; ++k) out->keys.emplace_back(it[k].key);
      }
    };
    REQUIRE(PMIx_Get_nb(&daemon, nullptr, nullptr, 0, cb, &a) == PMIX_SUCCESS);
    CHECK(a.status == PMIX_SUCCESS);
    CHECK(a.keys == std::vector<std::string>{"opal.puri", "orte.port"});
    answer none;
    REQUIRE(PMIx_Get_nb(&empty, nullptr, nullptr, 0, cb, &none) == PMIX_SUCCESS);
    CHECK(none.status == PMIX_ERR_NOT_FOUND);
    CHECK(PMIx_Get_nb(&all, nullptr, nullptr, 0, cb, &none) == PMIX_ERR_BAD_PARAM);
  }

  TEST_CASE("a client's NULL-key Get: a peer's registered and committed data, after a fence or from the server") {
    temp_dir dir;
    server srv(dir.path());
    REQUIRE(srv.status() == PMIX_SUCCESS);
    REQUIRE(register_job("nullkey", 2, 2) == PMIX_SUCCESS);
    std::vector<child> ranks;
    for (pmix_rank_t r = 0; r < 2; ++r) {
      const std::string other = std::to_string(1 - r);
      ranks.push_back(launch("nullkey", r,
                             {script, "init", "put:color=c" + std::to_string(r), "put:shape=s" + std::to_string(r),
                              "commit",
                              // Not collected: the peer's data comes from the server.
                              "fence", "get:" + other + ":-", "get_nb:" + other + ":-", "get:*:-",
                              "fence:collect", "get:" + other + ":-", "get:" + std::to_string(r) + ":-",
                              "finalize"},
                             dir.path()));
    }
    for (pmix_rank_t r = 0; r < 2; ++r) {
      auto& c = ranks[r];
      CHECK_MESSAGE(c.exited_with(0), c.errors());
      const auto out = c.output();
      const std::string other = std::to_string(1 - r);
      const std::string theirs = "color=c" + other + ",shape=s" + other + "]";
      const std::string mine = "color=c" + std::to_string(r) + ",shape=s" + std::to_string(r) + "]";
      for (const std::string& step : {"get:" + other + ":- PMIX_SUCCESS [", "get_nb:" + other + ":- PMIX_SUCCESS ["})
        CHECK_MESSAGE(contains(out, step), out);
      // The registered rank-level values come first, the committed data last.
      CHECK_MESSAGE(contains(out, "[pmix.appnum=0,pmix.grank=" + other + ","), out);
      CHECK_MESSAGE(contains(out, theirs + "\n"), out);
      CHECK_MESSAGE(contains(out, "get:*:- PMIX_ERR_BAD_PARAM"), out);
      CHECK_MESSAGE(contains(out, "get:" + std::to_string(r) + ":- PMIX_SUCCESS ["), out);
      CHECK_MESSAGE(contains(out, mine + "\n"), out);
    }
    CHECK(deregister_job("nullkey") == PMIX_SUCCESS);
  }

  TEST_CASE("an early registration is dropped by deregistering its client or namespace") {
    temp_dir dir;
    server srv(dir.path());
    REQUIRE(srv.status() == PMIX_SUCCESS);
    CHECK(register_client("never", 0) == PMIX_SUCCESS);
    CHECK(register_client("never", 1) == PMIX_SUCCESS);
    pmix_proc_t p;
    PMIX_LOAD_PROCID(&p, "never", 0);
    PMIx_server_deregister_client(&p, nullptr, nullptr);
    CHECK(deregister_job("never") == PMIX_SUCCESS);
    // Gone for good: a second deregistration finds nothing.
    CHECK(deregister_job("never") != PMIX_SUCCESS);
    // Registered again later, the namespace starts without them.
    REQUIRE(register_job("never", 1, 1) == PMIX_SUCCESS);
    auto snap = take_snapshot();
    const auto* ns = snap.nspace("never");
    REQUIRE(ns != nullptr);
    CHECK(ns->rank(1) == nullptr);
    CHECK(deregister_job("never") == PMIX_SUCCESS);
  }

  TEST_CASE("Slurm's order: setup_fork in the forked task, then exec; the client sees its real job") {
    temp_dir dir;
    server srv(dir.path());
    REQUIRE(srv.status() == PMIX_SUCCESS);
    REQUIRE(register_job("forked", 2, 2) == PMIX_SUCCESS);
    std::vector<pid_t> tasks;
    const std::string out_base = dir.path() + "/task";
    for (pmix_rank_t r = 0; r < 2; ++r) {
      const pid_t pid = ::fork();
      REQUIRE(pid >= 0);
      if (pid == 0) {
        // The child: no thread of the server exists here.
        pmix_proc_t p;
        PMIX_LOAD_PROCID(&p, "forked", r);
        char** env = nullptr;
        for (char** e = environ; *e != nullptr; ++e) pmix_argv_append_nosize(&env, *e);
        if (PMIx_server_setup_fork(&p, &env) != PMIX_SUCCESS) ::_exit(90);
        const std::string out = out_base + std::to_string(r);
        if (std::freopen(out.c_str(), "w", stdout) == nullptr) ::_exit(91);
        const char* argv[] = {script.c_str(), "init", "get:*:" PMIX_JOB_SIZE, "put:k=v", "commit",
                              "fence:collect", "get:0:k", "get:1:k", "finalize", nullptr};
        ::execve(script.c_str(), const_cast<char**>(argv), env);
        ::_exit(92);
      }
      tasks.push_back(pid);
    }
    for (std::size_t k = 0; k < tasks.size(); ++k) {
      int status = 0;
      REQUIRE(::waitpid(tasks[k], &status, 0) == tasks[k]);
      CHECK(WIFEXITED(status));
      CHECK(WEXITSTATUS(status) == 0);
      const auto out = read_file(out_base + std::to_string(k));
      CHECK_MESSAGE(contains(out, "get:*:pmix.job.size PMIX_SUCCESS 2"), out);
      CHECK(contains(out, "get:0:k PMIX_SUCCESS v"));
      CHECK(contains(out, "get:1:k PMIX_SUCCESS v"));
    }
    CHECK(deregister_job("forked") == PMIX_SUCCESS);
  }
}
