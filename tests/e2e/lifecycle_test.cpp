// Spec 004, the client init/finalize lifecycle, with real processes: tool
// peers, clones, cycling, counters and the invariants. Test names cite the
// spec's sections.
#include <doctest/doctest.h>
#include <pmix_server.h>
#include <sys/wait.h>

#include <string>
#include <vector>

#include "tests/e2e/host.hpp"

using namespace pmix::test;

namespace {

const std::string script = runfile("tests/e2e/script_client");

// A tool process: no PMIX_NAMESPACE of its own, the server's URI to connect to.
child launch_tool(const std::vector<std::string>& steps, const std::string& dir) {
  std::vector<std::string> argv{script};
  argv.insert(argv.end(), steps.begin(), steps.end());
  return child(argv, environment_with({"TEST_SERVER_URI=" + server_uri(), "PMIX_NAMESPACE=",
                                       "PMIX_SERVER_URI41=", "PMIX_SERVER_URI4="}),
               dir);
}

// No namespace, peer or actor is left over by processes that are gone.
bool no_orphans(std::size_t expected_nspaces) {
  return eventually([&] {
    const auto s = take_snapshot();
    return s.nspaces.size() == expected_nspaces && s.actors == s.accounted_actors() &&
           s.connections == 0;
  });
}

}  // namespace

TEST_SUITE("lifecycle: tools") {
  TEST_CASE("[Tombstone mechanics] a pure tool gets an identity from the server and is freed at socket close") {
    temp_dir dir;
    server srv(dir.path());
    REQUIRE(srv.status() == PMIX_SUCCESS);
    auto t = launch_tool({"tool_init", "get:*:pmix.job.size", "tool_finalize"}, dir.path());
    CHECK_MESSAGE(t.exited_with(0), t.errors());
    CHECK(contains(t.output(), "tool_init PMIX_SUCCESS pmix-server."));
    CHECK(contains(t.output(), ".tool.1 0"));
    CHECK(contains(t.output(), "tool_finalize PMIX_SUCCESS"));
    // Nothing of the tool remains: its namespace and peer are gone.
    CHECK(no_orphans(0));
  }

  TEST_CASE("[Invariants: no orphaned peers] 50 tool cycles with the same namespace and rank leave nothing behind") {
    temp_dir dir;
    server srv(dir.path());
    REQUIRE(srv.status() == PMIX_SUCCESS);
    auto t = launch_tool({"repeat:50", "tool_init:ns=cycler:rank=2", "get:*:pmix.job.size",
                          "tool_finalize"},
                         dir.path());
    CHECK_MESSAGE(t.exited_with(0), t.errors());
    const auto out = t.output();
    std::size_t inits = 0;
    for (std::size_t pos = 0; (pos = out.find("tool_init:ns=cycler:rank=2 PMIX_SUCCESS cycler 2", pos)) !=
                              std::string::npos;
         ++pos)
      ++inits;
    CHECK(inits == 50);
    CHECK_FALSE(contains(out, "tool_finalize PMIX_ERR"));
    CHECK(no_orphans(0));
  }

  TEST_CASE("[Tombstone mechanics] a departing tool's peerid moves to a live sibling, then is unset") {
    temp_dir dir;
    server srv(dir.path());
    REQUIRE(srv.status() == PMIX_SUCCESS);
    const std::string first_go = dir.path() + "/first", second_go = dir.path() + "/second";
    auto a = launch_tool({"tool_init:ns=twins:rank=0", "wait_file:" + first_go, "tool_finalize"},
                         dir.path());
    REQUIRE(wait_for_output(a, "tool_init:ns=twins:rank=0 PMIX_SUCCESS"));
    auto b = launch_tool({"tool_init:ns=twins:rank=0", "wait_file:" + second_go, "tool_finalize"},
                         dir.path());
    REQUIRE(wait_for_output(b, "tool_init:ns=twins:rank=0 PMIX_SUCCESS"));
    auto both = take_snapshot();
    REQUIRE(both.nspace("twins") != nullptr);
    CHECK(both.nspace("twins")->rank(0)->proc_cnt == 2);

    std::fclose(std::fopen(second_go.c_str(), "w"));  // the newer one (at peerid) leaves
    CHECK_MESSAGE(b.exited_with(0), b.errors());
    REQUIRE(eventually([] {
      const auto s = take_snapshot();
      return s.nspace("twins") != nullptr && s.nspace("twins")->rank(0)->proc_cnt == 1;
    }));
    auto one = take_snapshot();
    const auto* r = one.nspace("twins")->rank(0);
    CHECK(r->has_peerid == 1);  // repointed to the surviving sibling
    CHECK(r->peers == 1);       // the departed tool was freed, not kept
    CHECK(r->tombstones == 0);

    std::fclose(std::fopen(first_go.c_str(), "w"));
    CHECK_MESSAGE(a.exited_with(0), a.errors());
    CHECK(no_orphans(0));  // no live sibling: peerid unset, the namespace goes
  }

  TEST_CASE("[20.2.247 tool_connected] the host's tool_connected names the tool") {
    temp_dir dir;
    host_slots slots;
    slots.tool = true;
    server srv(dir.path(), slots);
    REQUIRE(srv.status() == PMIX_SUCCESS);
    {
      std::lock_guard<std::mutex> guard{record().mutex};
      PMIX_LOAD_PROCID(&record().tool_identity, "host-named", 5);
    }
    auto t = launch_tool({"tool_init", "tool_finalize"}, dir.path());
    CHECK_MESSAGE(t.exited_with(0), t.errors());
    CHECK(contains(t.output(), "tool_init PMIX_SUCCESS host-named 5"));
    CHECK(record().tool_calls == 1);
    CHECK(contains(record().tool_info_keys, PMIX_USERID));
    CHECK(contains(record().tool_info_keys, PMIX_PROC_PID));
    CHECK(no_orphans(0));
  }

  TEST_CASE("[Reclaim on reconnect] a tool registered as a client keeps client tombstones and reconnects through the tool path") {
    temp_dir dir;
    server srv(dir.path());
    REQUIRE(srv.status() == PMIX_SUCCESS);
    REQUIRE(register_job("launched", 1, 1) == PMIX_SUCCESS);
    // A launcher child: its environment names a registered rank; it connects
    // with PMIx_tool_init, three times.
    auto c = launch("launched", 0, {script, "repeat:3", "tool_init", "tool_finalize"}, dir.path());
    CHECK_MESSAGE(c.exited_with(0), c.errors());
    CHECK(contains(c.output(), "tool_init PMIX_SUCCESS launched 0"));
    REQUIRE(eventually([] {
      const auto s = take_snapshot();
      return s.nspace("launched") != nullptr && s.nspace("launched")->rank(0)->proc_cnt == 0;
    }));
    const auto s = take_snapshot();
    const auto* r = s.nspace("launched")->rank(0);
    CHECK(r->tombstones == 1);  // a client's tombstone, kept at peerid
    CHECK(r->peers == 1);       // the earlier cycles' tombstones were reclaimed
    CHECK(s.nspace("launched")->nfinalized == 1);
    CHECK(s.actors == s.accounted_actors());
  }
}
