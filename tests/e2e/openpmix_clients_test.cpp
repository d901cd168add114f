// Issue 35: processes linked with OpenPMIx (Debian's libpmix 4.2.2, built
// through pkg-config as a user builds them) served by our server, in
// OpenPMIx's own protocol over its loopback TCP listener, in one job with
// ours. The rest of the API under pmixrun: tests/tools/pmixrun_test.sh;
// another user's such processes and the listener's bounds:
// tests/e2e/security_test.cpp.
#include <doctest/doctest.h>
#include <pmix_server.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <string>
#include <vector>

#include "tests/e2e/host.hpp"

using namespace pmix::test;


TEST_SUITE("clients linked with OpenPMIx") {
  TEST_CASE("[issue 35] OpenPMIx 4.2.2 clients and ours in one job: init, job data, put, commit, fence, get of "
            "each other's data, finalize") {
    temp_dir dir;
    server srv(dir.path());
    REQUIRE(srv.status() == PMIX_SUCCESS);
    REQUIRE(register_job("opmx", 3, 3) == PMIX_SUCCESS);
    // Rank 0 in NON_DESC buffers (release builds' default), rank 1 in
    // FULLY_DESC ones (debug builds'), rank 2 on our library.
    std::vector<child> ranks;
    ranks.emplace_back(std::vector<std::string>{runfile("tests/e2e/openpmix_client_bin")},
                       environment_with(openpmix_env("opmx", 0, "PMIX_BFROP_BUFFER_NON_DESC")), dir.path());
    ranks.emplace_back(std::vector<std::string>{runfile("tests/e2e/openpmix_client_bin")},
                       environment_with(openpmix_env("opmx", 1, "PMIX_BFROP_BUFFER_FULLY_DESC")), dir.path());
    ranks.push_back(launch_script("opmx", 2,
                                  {"init", "put:mykey=hello-from-2", "commit", "fence:collect", "get:0:mykey",
                                   "get:1:mykey", "fence", "fence", "finalize"},
                                  dir.path()));
    for (pmix_rank_t r = 0; r < 2; ++r) {
      CHECK_MESSAGE(ranks[r].exited_with(0), ranks[r].errors());
      const auto out = ranks[r].output();
      CAPTURE(out);
      CAPTURE(ranks[r].errors());
      CHECK(contains(out, "init SUCCESS opmx " + std::to_string(r) + "\n"));
      CHECK(contains(out, "job_size SUCCESS 3\n"));
      CHECK(contains(out, "local_rank SUCCESS " + std::to_string(r) + "\n"));
      CHECK(contains(out, "local_size SUCCESS 3\n"));
      CHECK(contains(out, "hostname SUCCESS "));
      CHECK(contains(out, "commit SUCCESS\n"));
      CHECK(contains(out, "fence SUCCESS\n"));
      for (pmix_rank_t other = 0; other < 3; ++other)
        if (other != r)
          CHECK(contains(out, "get:" + std::to_string(other) + " SUCCESS hello-from-" + std::to_string(other) + "\n"));
      // This host has no publish or lookup up-call: answered, not left waiting
      // ("NOT-SUPPORTED" is OpenPMIx's name for it).
      CHECK(contains(out, "publish NOT-SUPPORTED\n"));
      CHECK(contains(out, "fence2 SUCCESS\n"));
      CHECK(contains(out, "lookup NOT-SUPPORTED\n"));
      CHECK(contains(out, "log SUCCESS\n"));
      CHECK(contains(out, "query SUCCESS 1\n"));
      CHECK(contains(out, "fence3 SUCCESS\n"));
      CHECK(contains(out, "finalize SUCCESS\n"));
    }
    CHECK_MESSAGE(ranks[2].exited_with(0), ranks[2].errors());
    const auto ours = ranks[2].output();
    CAPTURE(ours);
    CHECK(contains(ours, "get:0:mykey PMIX_SUCCESS hello-from-0"));
    CHECK(contains(ours, "get:1:mykey PMIX_SUCCESS hello-from-1"));
    CHECK(contains(ours, "finalize PMIX_SUCCESS"));
  }

  TEST_CASE("[issue 40] a process linked with OpenPMIx gets a remote rank's key from the data the collecting fence "
            "brought, without a direct modex; other keys still go to the host") {
    // OpenPMIx's processes ask the server for every peer's key (our server
    // writes no ds21 store). A remote rank's key that the fence across nodes
    // already brought was a direct-modex up-call per get.
    temp_dir dir;
    server srv(dir.path());
    REQUIRE(srv.status() == PMIX_SUCCESS);
    {
      std::lock_guard<std::mutex> guard{record().mutex};
      record().fence_reply_extra = remote_modex("cached", 2, {{"mykey", "hello-from-2"}});
      record().dmodex_reply = remote_rank_data("cached", 2, {{"late", "from-dmodex"}});
    }
    REQUIRE(register_job("cached", 3, 2) == PMIX_SUCCESS);
    std::vector<child> ranks;
    ranks.emplace_back(std::vector<std::string>{runfile("tests/e2e/openpmix_client_bin"), "fence-get", "2:mykey",
                                                "2:late", "1:mykey", "2:mykey:refresh", "2:pmix.hname",
                                                "2:pmix.lrank", "2:pmix.local.size", "2:pmix.lpeers", "2:pmix.lldr", "2:pmix.nodeid",
                                                "2:pmix.nodeid:job"},
                       environment_with(openpmix_env("cached", 0, "PMIX_BFROP_BUFFER_NON_DESC")), dir.path());
    ranks.push_back(
        launch_script("cached", 1,
                      {"init", "put:mykey=hello-from-1", "commit", "fence:collect", "get:2:pmix.local.size",
                       "get:2:pmix.lpeers", "get:2:pmix.lldr", "get:2:pmix.nodeid", "finalize"},
                      dir.path()));
    for (auto& c : ranks) CHECK_MESSAGE(c.exited_with(0), c.errors());
    const auto out = ranks[0].output(), ours = ranks[1].output();
    CAPTURE(out);
    CAPTURE(ours);
    // A remote rank's node-level keys describe its node, in both libraries
    // (OpenPMIx's client reads them from that node's PMIX_NODE_INFO_ARRAY;
    // ours from the maps), not this node: 2 ranks here, rank 2 alone there.
    CHECK(contains(ours, "get:2:pmix.local.size PMIX_SUCCESS 1\n"));
    CHECK(contains(ours, "get:2:pmix.lpeers PMIX_SUCCESS 2\n"));
    CHECK(contains(ours, "get:2:pmix.lldr PMIX_SUCCESS 2\n"));
    CHECK(contains(ours, "get:2:pmix.nodeid PMIX_SUCCESS 1\n"));
    CHECK(contains(out, "fence SUCCESS\n"));
    CHECK(contains(out, "get:2:mykey SUCCESS hello-from-2\n"));
    CHECK(contains(out, "get:2:late SUCCESS from-dmodex\n"));
    CHECK(contains(out, "get:1:mykey SUCCESS hello-from-1\n"));
    // PMIX_GET_REFRESH_CACHE: the host is asked again (below); OpenPMIx's
    // client keeps the value it had.
    CHECK(contains(out, "get:2:mykey:refresh SUCCESS hello-from-2\n"));
    // Rank 2 runs elsewhere and registered nothing of its own (the job is
    // registered by its maps alone): its items, derived from the maps, came
    // with the job data (actors/job_layout.hpp, add_derived_ranks).
    CHECK(contains(out, "get:2:pmix.hname SUCCESS othernode\n"));
    CHECK(contains(out, "get:2:pmix.lrank SUCCESS 0\n"));
    // OpenPMIx 4.2.2's client looks a remote rank's PMIX_NODEID up in the
    // node's array, where it never keeps one (NOT-FOUND under its own server
    // too); asked with PMIX_JOB_INFO, it reads the rank's own.
    CHECK(contains(out, "get:2:pmix.local.size SUCCESS 1\n"));
    CHECK(contains(out, "get:2:pmix.lpeers SUCCESS 2\n"));
    CHECK(contains(out, "get:2:pmix.lldr SUCCESS 2\n"));
    CHECK(contains(out, "get:2:pmix.nodeid:job SUCCESS 1\n"));
    CHECK(contains(out, "finalize SUCCESS\n"));
    std::lock_guard<std::mutex> guard{record().mutex};
    CHECK(record().fence_calls == 1);
    // The key the fence did not bring, and the refresh.
    CHECK(record().dmodex_calls == 2);
  }

  TEST_CASE("[issue 35] events both ways between an OpenPMIx 4.2.2 client and ours") {
    temp_dir dir;
    server srv(dir.path());
    REQUIRE(srv.status() == PMIX_SUCCESS);
    REQUIRE(register_job("opev", 2, 2) == PMIX_SUCCESS);
    child theirs({runfile("tests/e2e/openpmix_client_bin"), "events", "-3001", "-3002"},
                 environment_with(openpmix_env("opev", 0, "PMIX_BFROP_BUFFER_NON_DESC")), dir.path());
    auto ours = launch("opev", 1,
                       {runfile("tests/e2e/event_client"), "init", "on:h:-3002", "fence",
                        "notify:-3001:namespace:text=from ours", "wait_events:1", "fence", "finalize"},
                       dir.path());
    CHECK_MESSAGE(theirs.exited_with(0), theirs.errors());
    CHECK_MESSAGE(ours.exited_with(0), ours.errors());
    const auto out = theirs.output(), out2 = ours.output();
    CAPTURE(out);
    CAPTURE(out2);
    CHECK(contains(out, "notify SUCCESS\n"));
    CHECK(contains(out, "event -3001 from opev.1 text=from ours\n"));
    CHECK(contains(out, "finalize SUCCESS\n"));
    CHECK(contains(out2, "event h -3002 opev.0"));
    CHECK(contains(out2, "text=from OpenPMIx"));
  }

  TEST_CASE("[issue 35] an OpenPMIx 4.2.2 client connects with a job of ours, reads its job data, disconnects") {
    temp_dir dir;
    server srv(dir.path());
    REQUIRE(srv.status() == PMIX_SUCCESS);
    REQUIRE(register_job("opc", 1, 1) == PMIX_SUCCESS);
    REQUIRE(register_job("opd", 2, 2) == PMIX_SUCCESS);  // a size the other job's cannot be mistaken for
    child theirs({runfile("tests/e2e/openpmix_client_bin"), "connect", "opd"},
                 environment_with(openpmix_env("opc", 0, "PMIX_BFROP_BUFFER_NON_DESC")), dir.path());
    std::vector<child> ours;
    for (pmix_rank_t r = 0; r < 2; ++r)
      ours.push_back(launch_script(
          "opd", r, {"init", "connect:self,opc", "get_ns:opc:*:pmix.job.size", "disconnect:self,opc", "finalize"},
          dir.path()));
    CHECK_MESSAGE(theirs.exited_with(0), theirs.errors());
    const auto out = theirs.output();
    CAPTURE(out);
    CHECK(contains(out, "connect SUCCESS\n"));
    CHECK(contains(out, "other_size SUCCESS 2\n"));
    CHECK(contains(out, "disconnect SUCCESS\n"));
    CHECK(contains(out, "finalize SUCCESS\n"));
    for (auto& c : ours) {
      CHECK_MESSAGE(c.exited_with(0), c.errors());
      const auto out2 = c.output();
      CAPTURE(out2);
      CHECK(contains(out2, "connect:self,opc PMIX_SUCCESS"));
      CHECK(contains(out2, "get_ns:opc:*:pmix.job.size PMIX_SUCCESS 1"));
      CHECK(contains(out2, "disconnect:self,opc PMIX_SUCCESS"));
    }
  }

  TEST_CASE("[issue 35] a process linked with OpenPMIx naming a rank that is not registered is cut off") {
    temp_dir dir;
    server srv(dir.path());
    REQUIRE(srv.status() == PMIX_SUCCESS);
    REQUIRE(register_job("opmx2", 1, 1) == PMIX_SUCCESS);
    auto env = openpmix_env("opmx2", 0, "PMIX_BFROP_BUFFER_NON_DESC");
    env.push_back("PMIX_RANK=5");
    child c({runfile("tests/e2e/openpmix_client_bin")}, environment_with(env), dir.path());
    CHECK_MESSAGE(c.exited_with(0), c.errors());
    CHECK_FALSE(contains(c.output(), "init SUCCESS"));
    CHECK(contains(c.output(), "init "));
  }
}
