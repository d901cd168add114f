// The tool API as it stands: standalone tools, reference counting, clean
// re-initialization, and a clear refusal to connect (not yet supported).
#include <doctest/doctest.h>
#include <pmix_tool.h>

#include <stdlib.h>
#include <unistd.h>

#include <string>

namespace {

pmix_status_t init_standalone(pmix_proc_t* me, const char* nspace, pmix_rank_t rank) {
  pmix_info_t info[3];
  bool yes = true;
  PMIX_INFO_LOAD(&info[0], PMIX_TOOL_DO_NOT_CONNECT, &yes, PMIX_BOOL);
  PMIX_INFO_LOAD(&info[1], PMIX_TOOL_NSPACE, nspace, PMIX_STRING);
  PMIX_INFO_LOAD(&info[2], PMIX_TOOL_RANK, &rank, PMIX_PROC_RANK);
  const auto rc = PMIx_tool_init(me, info, 3);
  for (auto& i : info) PMIX_INFO_DESTRUCT(&i);
  return rc;
}

}  // namespace

TEST_SUITE("tool") {
  TEST_CASE("a standalone tool takes the namespace and rank it is given") {
    pmix_proc_t me;
    REQUIRE(init_standalone(&me, "mytool", 3) == PMIX_SUCCESS);
    CHECK(std::string{me.nspace} == "mytool");
    CHECK(me.rank == 3);
    CHECK(PMIx_tool_finalize() == PMIX_SUCCESS);
  }

  TEST_CASE("tool init is reference counted; finalize after the last is PMIX_ERR_INIT") {
    pmix_proc_t me;
    REQUIRE(init_standalone(&me, "counted", 0) == PMIX_SUCCESS);
    pmix_proc_t again;
    REQUIRE(PMIx_tool_init(&again, nullptr, 0) == PMIX_SUCCESS);  // nested: same identity
    CHECK(std::string{again.nspace} == "counted");
    CHECK(PMIx_tool_finalize() == PMIX_SUCCESS);
    CHECK(PMIx_tool_finalize() == PMIX_SUCCESS);
    CHECK(PMIx_tool_finalize() == PMIX_ERR_INIT);
  }

  TEST_CASE("each tool init after the last finalize starts over with its own directives") {
    for (int cycle = 0; cycle < 100; ++cycle) {
      pmix_proc_t me;
      const std::string ns = "cycle" + std::to_string(cycle);
      REQUIRE(init_standalone(&me, ns.c_str(), static_cast<pmix_rank_t>(cycle)) == PMIX_SUCCESS);
      CHECK(std::string{me.nspace} == ns);
      CHECK(me.rank == static_cast<pmix_rank_t>(cycle));
      REQUIRE(PMIx_tool_finalize() == PMIX_SUCCESS);
    }
  }

  TEST_CASE("a tool with no server to connect to is refused, and nothing is left initialized") {
    // No server: the tool searches its temporary directories, which must be
    // empty ones (the servers of tests running beside this one leave their
    // rendezvous files in /tmp, and a tool rightly connects to them).
    char dir[] = "/tmp/pmix-tool-test.XXXXXX";
    REQUIRE(::mkdtemp(dir) != nullptr);
    const char* vars[] = {"TMPDIR", "PMIX_SERVER_TMPDIR", "PMIX_SYSTEM_TMPDIR"};
    std::string saved[3];
    bool had[3];
    for (int k = 0; k < 3; ++k) {
      const char* old = ::getenv(vars[k]);
      had[k] = old != nullptr;
      if (had[k]) saved[k] = old;
      ::setenv(vars[k], dir, 1);
    }
    pmix_proc_t me;
    CHECK(PMIx_tool_init(&me, nullptr, 0) == PMIX_ERR_UNREACH);
    CHECK(PMIx_tool_finalize() == PMIX_ERR_INIT);
    for (int k = 0; k < 3; ++k) {
      if (had[k]) ::setenv(vars[k], saved[k].c_str(), 1);
      else ::unsetenv(vars[k]);
    }
    ::rmdir(dir);
  }

  TEST_CASE("bad tool directives are refused") {
    pmix_info_t info;
    PMIX_INFO_LOAD(&info, PMIX_TOOL_NSPACE, "", PMIX_STRING);
    pmix_proc_t me;
    CHECK(PMIx_tool_init(&me, &info, 1) == PMIX_ERR_BAD_PARAM);
    PMIX_INFO_DESTRUCT(&info);
    pmix_rank_t wild = PMIX_RANK_WILDCARD;
    PMIX_INFO_LOAD(&info, PMIX_TOOL_RANK, &wild, PMIX_PROC_RANK);
    CHECK(PMIx_tool_init(&me, &info, 1) == PMIX_ERR_BAD_PARAM);
    PMIX_INFO_DESTRUCT(&info);
  }
}
