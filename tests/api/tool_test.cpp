// The tool API as it stands: standalone tools, reference counting, clean
// re-initialization, and a clear refusal to connect (not yet supported).
#include <doctest/doctest.h>
#include <pmix_tool.h>

#include <cstring>

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

// The host functions a tool lends itself (PMIx_tool_set_server_module).
std::string alloc_seen, block_seen;

pmix_status_t own_allocate(const pmix_proc_t* client, pmix_alloc_directive_t directive, const pmix_info_t[],
                           size_t ndata, pmix_info_cbfunc_t cbfunc, void* cbdata) {
  alloc_seen = std::string{client->nspace} + "." + std::to_string(client->rank) + " directive=" +
               std::to_string(directive) + " n=" + std::to_string(ndata);
  pmix_info_t granted;
  PMIX_INFO_LOAD(&granted, "own.alloc", "granted", PMIX_STRING);
  cbfunc(PMIX_SUCCESS, &granted, 1, cbdata, nullptr, nullptr);
  PMIX_INFO_DESTRUCT(&granted);
  return PMIX_SUCCESS;
}

pmix_status_t own_resource_block(const pmix_proc_t* requestor, pmix_resource_block_directive_t directive,
                                 const char* block, const pmix_resource_unit_t* units, size_t nunits,
                                 const pmix_info_t*, size_t, pmix_op_cbfunc_t, void*) {
  block_seen = std::string{requestor->nspace} + " " + PMIx_Resource_block_directive_string(directive) + " " + block +
               " " + std::to_string(nunits) + "x" + std::to_string(nunits > 0 ? units[0].count : 0);
  return PMIX_OPERATION_SUCCEEDED;  // done at once: no callback
}

pmix_status_t init_with_slots(pmix_proc_t* me, const char* nspace, uint32_t slots) {
  pmix_info_t info[3];
  bool yes = true;
  PMIX_INFO_LOAD(&info[0], PMIX_TOOL_DO_NOT_CONNECT, &yes, PMIX_BOOL);
  PMIX_INFO_LOAD(&info[1], PMIX_TOOL_NSPACE, nspace, PMIX_STRING);
  PMIX_INFO_LOAD(&info[2], PMIX_CXX_SERVER_MODULE_SLOTS, &slots, PMIX_UINT32);
  const auto rc = PMIx_tool_init(me, info, 3);
  for (auto& i : info) PMIX_INFO_DESTRUCT(&i);
  return rc;
}

}  // namespace

TEST_SUITE("tool") {
  TEST_CASE("a tool's own host module serves its allocation and resource block requests") {
    pmix_server_module_t module;
    memset(&module, 0, sizeof module);
    module.allocate = own_allocate;
    module.resource_block = own_resource_block;
    CHECK(PMIx_tool_set_server_module(&module) == PMIX_ERR_INIT);  // before init
    CHECK_FALSE(PMIx_tool_is_connected());
    pmix_proc_t me;
    REQUIRE(init_with_slots(&me, "lender", 32) == PMIX_SUCCESS);
    CHECK_FALSE(PMIx_tool_is_connected());  // PMIX_TOOL_DO_NOT_CONNECT
    // Without a module (or a server) there is nobody to ask.
    pmix_info_t* results = nullptr;
    size_t nresults = 0;
    CHECK(PMIx_Allocation_request(PMIX_ALLOC_NEW, nullptr, 0, &results, &nresults) != PMIX_SUCCESS);
    CHECK(PMIx_tool_set_server_module(nullptr) == PMIX_ERR_BAD_PARAM);
    REQUIRE(PMIx_tool_set_server_module(&module) == PMIX_SUCCESS);
    CHECK(PMIx_tool_set_server_module(&module) == PMIX_ERR_INIT);  // once per init
    module.allocate = nullptr;  // the library kept its own copy
    pmix_info_t want;
    uint64_t nodes = 2;
    PMIX_INFO_LOAD(&want, PMIX_ALLOC_NUM_NODES, &nodes, PMIX_UINT64);
    REQUIRE(PMIx_Allocation_request(PMIX_ALLOC_NEW, &want, 1, &results, &nresults) == PMIX_SUCCESS);
    CHECK(alloc_seen == "lender.0 directive=1 n=1");
    REQUIRE(nresults == 1);
    CHECK(std::string{results[0].value.data.string} == "granted");
    PMIX_INFO_FREE(results, nresults);
    PMIX_INFO_DESTRUCT(&want);
    char block[] = "blk";
    pmix_resource_unit_t unit = {PMIX_DEVTYPE_GPU, 8};
    CHECK(PMIx_Resource_block(PMIX_RESOURCE_BLOCK_DEFINE, block, &unit, 1, nullptr, 0) == PMIX_SUCCESS);
    CHECK(block_seen == "lender DEFINE blk 1x8");
    CHECK(PMIx_tool_finalize() == PMIX_SUCCESS);
  }

  TEST_CASE("a tool's module is read no further than PMIx_tool_init said (4.2.2's 28 slots by default)") {
    pmix_server_module_t module;
    memset(&module, 0, sizeof module);
    module.resource_block = own_resource_block;  // slot 31: beyond a 4.2.2 struct
    block_seen.clear();
    pmix_proc_t me;
    REQUIRE(init_standalone(&me, "short", 0) == PMIX_SUCCESS);
    REQUIRE(PMIx_tool_set_server_module(&module) == PMIX_SUCCESS);
    char block[] = "blk";
    // Not read: the request goes to the server, and this tool has none.
    CHECK(PMIx_Resource_block(PMIX_RESOURCE_BLOCK_DEFINE, block, nullptr, 0, nullptr, 0) != PMIX_SUCCESS);
    CHECK(block_seen.empty());
    CHECK(PMIx_tool_finalize() == PMIX_SUCCESS);
    CHECK(init_with_slots(&me, "odd", 30) == PMIX_ERR_BAD_PARAM);
  }

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
