// End-to-end: a host process (this test) runs the PMIx server and launches
// real client processes that talk to it over real sockets.
#include <doctest/doctest.h>
#include <pmix_server.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <cstdlib>
#include <string>
#include <atomic>
#include <memory>
#include <thread>
#include <vector>

#include "tests/e2e/host.hpp"
#include "tests/e2e/hostile.hpp"

using namespace pmix::test;

namespace {

const std::string demo = runfile("tools/demo/pmix_demo");
const std::string script = runfile("tests/e2e/script_client");

// Runs `n` ranks of `argv` as one job and returns them after they exit.
std::vector<child> run_job(const std::string& nspace, std::uint32_t n,
                           const std::vector<std::string>& argv, const temp_dir& dir) {
  REQUIRE(register_job(nspace, n, n) == PMIX_SUCCESS);
  std::vector<child> ranks;
  for (pmix_rank_t r = 0; r < n; ++r) ranks.push_back(launch(nspace, r, argv, dir.path()));
  for (auto& c : ranks) c.wait();
  return ranks;
}

}  // namespace

TEST_SUITE("end to end") {
  TEST_CASE("1, 2, 4 and 16 clients put, commit, fence and get, with and without collection") {
    temp_dir dir;
    server srv(dir.path());
    REQUIRE(srv.status() == PMIX_SUCCESS);
    int job = 0;
    // The second pass sends every job's data and every fence's data as
    // shared data (a sealed memfd passed with the reply), however small.
    for (const char* min : {"", "1"}) {
      CAPTURE(min);
      if (*min != '\0') ::setenv("PMIX_CXX_SHARED_DATA_MIN", min, 1);
      for (std::uint32_t n : {1u, 2u, 4u, 16u}) {
        for (bool collect : {true, false}) {
          CAPTURE(n);
          CAPTURE(collect);
          const std::string nspace = "job" + std::to_string(job++);
          std::vector<std::string> argv{demo, "--rounds", "2"};
          if (!collect) argv.push_back("--no-collect");
          const int connected_before = record().connected;
          auto ranks = run_job(nspace, n, argv, dir);
          for (auto& c : ranks) {
            CHECK_MESSAGE(c.exited_with(0), c.errors());
            CHECK(contains(c.output(), collect ? "(collected)" : "(direct modex)"));
          }
          CHECK(record().connected - connected_before == static_cast<int>(n));
          CHECK(deregister_job(nspace) == PMIX_SUCCESS);
        }
      }
      ::unsetenv("PMIX_CXX_SHARED_DATA_MIN");
    }
    // Every fence was local: the host's fence_nb was never needed.
    CHECK(record().fence_calls == 0);
  }

  TEST_CASE("after a collecting fence a rank that committed nothing has nothing, the others their data") {
    temp_dir dir;
    server srv(dir.path());
    REQUIRE(srv.status() == PMIX_SUCCESS);
    REQUIRE(register_job("sparse", 3, 3) == PMIX_SUCCESS);
    std::vector<child> ranks;
    for (pmix_rank_t r = 0; r < 3; ++r) {
      std::vector<std::string> argv{script, "init"};
      if (r != 1) argv.push_back("put:k=v" + std::to_string(r));
      argv.insert(argv.end(), {"commit", "fence:collect", "get:0:k", "get:1:k", "get:2:k", "fence", "finalize"});
      ranks.push_back(launch("sparse", r, argv, dir.path()));
    }
    for (auto& c : ranks) {
      CHECK_MESSAGE(c.exited_with(0), c.errors());
      const auto out = c.output();
      CHECK(contains(out, "fence:collect PMIX_SUCCESS"));
      CHECK_MESSAGE(contains(out, "get:0:k PMIX_SUCCESS v0"), out);
      CHECK_MESSAGE(contains(out, "get:1:k PMIX_ERR_NOT_FOUND"), out);
      CHECK_MESSAGE(contains(out, "get:2:k PMIX_SUCCESS v2"), out);
    }
    CHECK(deregister_job("sparse") == PMIX_SUCCESS);
  }

  TEST_CASE("a collecting fence carries megabytes to every client intact, shared or inline") {
    // Each reply's data is 6 MB. By default it goes to the clients as one
    // sealed memfd whose descriptor comes with each reply (shared data,
    // PMIX_CXX_SHARED_DATA_MIN); with 0 it goes inline, far larger than a
    // socket buffer: the server writes it in pieces as each client reads.
    for (const char* mode : {"shared", "inline"}) {
      CAPTURE(mode);
      if (std::string{mode} == "inline") ::setenv("PMIX_CXX_SHARED_DATA_MIN", "0", 1);
      temp_dir dir;
      server srv(dir.path());
      REQUIRE(srv.status() == PMIX_SUCCESS);
      const std::string bytes = std::to_string(1536 * 1024);
      // The store keeps the fence's data encoded until each rank's is read:
      // mapped after the fence, let go once all four were read.
      std::vector<std::string> argv{script, "init", "put_pattern:big=" + bytes, "commit", "fence:collect",
                                    "shared_mappings"};
      for (int r = 0; r < 4; ++r) argv.push_back("get_pattern:" + std::to_string(r) + ":big=" + bytes);
      argv.push_back("shared_mappings:after");
      argv.push_back("finalize");
      auto ranks = run_job("big", 4, argv, dir);
      ::unsetenv("PMIX_CXX_SHARED_DATA_MIN");
      for (auto& c : ranks) {
        CHECK_MESSAGE(c.exited_with(0), c.errors());
        const auto out = c.output();
        CHECK(contains(out, "fence:collect PMIX_SUCCESS"));
        for (int r = 0; r < 4; ++r)
          CHECK_MESSAGE(contains(out, "get_pattern:" + std::to_string(r) + ":big=" + bytes + " PMIX_SUCCESS intact"), out);
        CHECK_MESSAGE(contains(out, std::string{"shared_mappings PMIX_SUCCESS mapped "} +
                                        (std::string{mode} == "shared" ? "1" : "0")),
                      out);
        CHECK_MESSAGE(contains(out, "shared_mappings:after PMIX_SUCCESS mapped 0"), out);
      }
      CHECK(deregister_job("big") == PMIX_SUCCESS);
    }
  }

  TEST_CASE("fences over the whole namespace are answered on its fence board, one post for all clients") {
    // The first two fences are answered by socket (the second asks for the
    // board: a process that fences once never maps it); every later one
    // waits on the board: one post per fence, each round's data intact in
    // every client. With PMIX_CXX_FENCE_BOARD_BYTES=0 there is no
    // board and every fence is answered by socket.
    for (const char* capacity : {"", "0"}) {
      CAPTURE(capacity);
      if (*capacity != '\0') ::setenv("PMIX_CXX_FENCE_BOARD_BYTES", capacity, 1);
      temp_dir dir;
      server srv(dir.path());
      REQUIRE(srv.status() == PMIX_SUCCESS);
      std::vector<std::string> argv{script, "init"};
      for (int round = 1; round <= 4; ++round) {
        const std::string key = "r" + std::to_string(round), bytes = std::to_string(100 * round);
        argv.insert(argv.end(), {"put_pattern:" + key + "=" + bytes, "commit", "fence:collect"});
        for (int r = 0; r < 4; ++r) argv.push_back("get_pattern:" + std::to_string(r) + ":" + key + "=" + bytes);
        if (round == 1) argv.push_back("board_mappings");  // one fence: no board mapped
      }
      argv.insert(argv.end(), {"fence", "board_mappings", "finalize"});
      auto ranks = run_job("board", 4, argv, dir);
      ::unsetenv("PMIX_CXX_FENCE_BOARD_BYTES");
      const bool board = *capacity == '\0';
      for (auto& c : ranks) {
        CHECK_MESSAGE(c.exited_with(0), c.errors());
        const auto out = c.output();
        CAPTURE(out);
        CHECK(count(out, "fence:collect PMIX_SUCCESS") == 4);
        CHECK(contains(out, "\nfence PMIX_SUCCESS"));
        CHECK(count(out, " PMIX_SUCCESS intact") == 16);
        CHECK(count(out, "board_mappings PMIX_SUCCESS mapped 0") == (board ? 1 : 2));
        CHECK(count(out, "board_mappings PMIX_SUCCESS mapped 1") == (board ? 1 : 0));
      }
      CHECK(take_snapshot().board_posts == (board ? 3u : 0u));
      CHECK(deregister_job("board") == PMIX_SUCCESS);
    }
  }

  TEST_CASE("a client waiting on the fence board through a long fence sleeps, and is not woken for nothing") {
    // Rank 1 enters the third fence (the first on the board) 3 s after
    // rank 0. Rank 0's thread sleeps on the board with a timeout that only
    // guards against a missed wake-up: it was 100 ms, and 1,024 processes
    // in a 0.3 s fence each woke three times for nothing (issue 40). A
    // second now: a few sleeps in 3 s, where 100 ms made about 30.
    temp_dir dir;
    server srv(dir.path());
    REQUIRE(srv.status() == PMIX_SUCCESS);
    auto ranks = run_job("longboard", 2,
                         {script, "init", "fence", "fence", "board_mappings", "@0:sleeps", "@1:sleep:3000", "fence",
                          "@0:sleeps", "finalize"},
                         dir);
    for (auto& c : ranks) CHECK_MESSAGE(c.exited_with(0), c.errors());
    const auto out = ranks.at(0).output();
    CAPTURE(out);
    CHECK(count(out, "fence PMIX_SUCCESS") == 3);
    CHECK(contains(out, "board_mappings PMIX_SUCCESS mapped 1"));
    const auto at = out.rfind("sleeps PMIX_SUCCESS slept ");
    REQUIRE(at != std::string::npos);
    const long slept = std::atol(out.c_str() + at + std::strlen("sleeps PMIX_SUCCESS slept "));
    CHECK(slept >= 1);
    CHECK(slept < 10);
    CHECK(deregister_job("longboard") == PMIX_SUCCESS);
  }

  TEST_CASE("a fence the board cannot carry, or one a client waits for by socket, is answered by socket") {
    // A 4 kB board, asked for by the second round. In the third round rank 0
    // waits through a callback (PMIx_Fence_nb), so the others, waiting on
    // the board, get their answer by socket too; the fourth and fifth are
    // posted; the sixth's data (each rank's committed keys: 5 x 100 bytes
    // and 1000) does not fit.
    ::setenv("PMIX_CXX_FENCE_BOARD_BYTES", "4096", 1);
    temp_dir dir;
    server srv(dir.path());
    REQUIRE(srv.status() == PMIX_SUCCESS);
    std::vector<std::string> argv{script, "init"};
    const char* sizes[] = {"100", "100", "100", "100", "100", "1000"};
    for (int round = 0; round < 6; ++round) {
      const std::string key = "r" + std::to_string(round), bytes = sizes[round];
      argv.insert(argv.end(), {"put_pattern:" + key + "=" + bytes, "commit"});
      if (round == 2) {
        argv.push_back("@0:fence_nb:collect");
        for (int r = 1; r < 4; ++r) argv.push_back("@" + std::to_string(r) + ":fence:collect");
      } else {
        argv.push_back("fence:collect");
      }
      for (int r = 0; r < 4; ++r) argv.push_back("get_pattern:" + std::to_string(r) + ":" + key + "=" + bytes);
    }
    argv.push_back("finalize");
    auto ranks = run_job("board2", 4, argv, dir);
    ::unsetenv("PMIX_CXX_FENCE_BOARD_BYTES");
    for (auto& c : ranks) {
      CHECK_MESSAGE(c.exited_with(0), c.errors());
      const auto out = c.output();
      CAPTURE(out);
      CHECK(count(out, "fence:collect PMIX_SUCCESS") + count(out, "fence_nb:collect PMIX_SUCCESS") == 6);
      CHECK(count(out, " PMIX_SUCCESS intact") == 24);
    }
    // The fourth and fifth rounds only: the second asked for the board.
    CHECK(take_snapshot().board_posts == 2u);
    CHECK(deregister_job("board2") == PMIX_SUCCESS);
  }

  TEST_CASE("the host's client_connected and client_finalized see every client") {
    temp_dir dir;
    server srv(dir.path());
    REQUIRE(srv.status() == PMIX_SUCCESS);
    auto ranks = run_job("hooks", 4, {demo}, dir);
    for (auto& c : ranks) CHECK_MESSAGE(c.exited_with(0), c.errors());
    CHECK(record().connected == 4);
    CHECK(record().finalized == 4);
    // All four finalized: once the server has seen their sockets close, each
    // rank keeps one tombstone and no live process.
    auto settled = [&] {
      auto v = srv.view();
      bool done = v.nnspaces == 1 && v.nspaces[0].nranks == 4;
      for (std::size_t k = 0; done && k < v.nspaces[0].nranks; ++k)
        done = v.nspaces[0].ranks[k].proc_cnt == 0;
      runtime_table()->view_free(&v);
      return done;
    };
    REQUIRE(eventually(settled));
    auto v = srv.view();
    REQUIRE(v.nnspaces == 1);
    CHECK(v.nspaces[0].nfinalized == 4);
    CHECK(v.nspaces[0].local_app_fini_fired == 1);
    for (std::size_t k = 0; k < v.nspaces[0].nranks; ++k) {
      CHECK(v.nspaces[0].ranks[k].proc_cnt == 0);
      CHECK(v.nspaces[0].ranks[k].tombstones == 1);
      CHECK(v.nspaces[0].ranks[k].peers == 1);
    }
    runtime_table()->view_free(&v);
  }

  TEST_CASE("a client that aborts reaches the host's abort up-call") {
    temp_dir dir;
    server srv(dir.path());
    REQUIRE(srv.status() == PMIX_SUCCESS);
    auto ranks = run_job("aborting", 2, {script, "init", "abort:42", "finalize"}, dir);
    for (auto& c : ranks) {
      CHECK_MESSAGE(c.exited_with(0), c.errors());
      CHECK(contains(c.output(), "abort:42 PMIX_SUCCESS"));
    }
    CHECK(record().aborts == 2);
    CHECK(record().abort_status == 42);
    CHECK(record().abort_message == "script_client abort");
  }

  TEST_CASE("without a host abort the client gets PMIX_ERR_NOT_SUPPORTED") {
    temp_dir dir;
    host_slots slots;
    slots.abort = false;
    server srv(dir.path(), slots);
    REQUIRE(srv.status() == PMIX_SUCCESS);
    auto ranks = run_job("noabort", 1, {script, "init", "abort:3", "finalize"}, dir);
    CHECK_MESSAGE(ranks[0].exited_with(0), ranks[0].errors());
    CHECK(contains(ranks[0].output(), "abort:3 PMIX_ERR_NOT_SUPPORTED"));
  }

  TEST_CASE("a key that merely begins with \"pmix\" is the application's, fetched like any other (issue 15)") {
    // OpenPMIx examples build keys from the namespace; pmixrun's namespaces
    // begin with "pmix". Only "pmix." keys are the Standard's.
    temp_dir dir;
    server srv(dir.path());
    REQUIRE(srv.status() == PMIX_SUCCESS);
    REQUIRE(register_job("pmixrun.77-0", 2, 2) == PMIX_SUCCESS);
    auto r1 = launch("pmixrun.77-0", 1, {script, "init", "put:pmixrun.77-0-1-key=mine", "commit", "fence", "finalize"},
                     dir.path());
    auto r0 = launch("pmixrun.77-0", 0, {script, "init", "fence", "get:1:pmixrun.77-0-1-key", "finalize"}, dir.path());
    CHECK_MESSAGE(r0.exited_with(0), r0.errors());
    CHECK_MESSAGE(r1.exited_with(0), r1.errors());
    CHECK_MESSAGE(contains(r0.output(), "get:1:pmixrun.77-0-1-key PMIX_SUCCESS mine"), r0.output());
  }

  TEST_CASE("the Standard ABI versions are answered by the client library itself, before init too (issue 15)") {
    temp_dir dir;
    server srv(dir.path());  // a host without a query up-call
    REQUIRE(srv.status() == PMIX_SUCCESS);
    REQUIRE(register_job("abiq", 1, 1) == PMIX_SUCCESS);
    const std::string both = std::string{PMIX_QUERY_STABLE_ABI_VERSION} + "," + PMIX_QUERY_PROVISIONAL_ABI_VERSION;
    auto c = launch("abiq", 0,
                    {script, "query:" + both, "init", "query:" + both, "query_nb:" + both,
                     "query:" + both + "," + PMIX_QUERY_NAMESPACES, "finalize"},
                    dir.path());
    CHECK_MESSAGE(c.exited_with(0), c.errors());
    const auto out = c.output();
    const std::string answer = std::string{" PMIX_SUCCESS 2 "} + PMIX_QUERY_STABLE_ABI_VERSION + "=0.0 " +
                               PMIX_QUERY_PROVISIONAL_ABI_VERSION + "=0.0\n";
    CHECK_MESSAGE(contains(out, "query:" + both + answer + "init PMIX_SUCCESS"), out);  // before init
    CHECK_MESSAGE(contains(out, "init PMIX_SUCCESS abiq 0\nquery:" + both + answer), out);
    CHECK_MESSAGE(contains(out, "query_nb:" + both + answer), out);
    // With a key only the host can answer (and this host cannot): the
    // library's answers come back as a partial success.
    CHECK_MESSAGE(contains(out, "," + std::string{PMIX_QUERY_NAMESPACES} + " PMIX_ERR_PARTIAL_SUCCESS 2 "), out);
  }

  TEST_CASE("a blocking call from a second thread returns while the first waits in a fence for other processes") {
    // Rank 0's main thread waits in a fence, reading the socket; its second
    // thread then asks the server something. Rank 1 enters the fence only
    // once that answer came: a client whose second thread waited for the
    // reading thread's own call to end would never let it come (rank 1 gives
    // up after 120 s).
    // The same with the main thread's fence on the fence board (the third
    // fence over the namespace on: docs/wire-format.md, "Fence board"),
    // where the progress thread keeps the socket.
    for (const bool on_board : {false, true}) {
      CAPTURE(on_board);
      temp_dir dir;
      server srv(dir.path());
      REQUIRE(srv.status() == PMIX_SUCCESS);
      const std::string nspace = on_board ? "twothreadsb" : "twothreads";
      REQUIRE(register_job(nspace, 2, 2) == PMIX_SUCCESS);
      const std::string answered = dir.path() + "/answered";
      std::vector<std::string> s0{script, "init"}, s1{script, "init"};
      if (on_board)
        for (auto* s : {&s0, &s1}) s->insert(s->end(), {"fence", "fence"});
      s0.insert(s0.end(), {"thread:wait_main_blocked|query:" + std::string{PMIX_QUERY_NAMESPACES} + "|touch:" + answered,
                           "fence", "join", "board_mappings", "finalize"});
      s1.insert(s1.end(), {"wait_file:" + answered, "fence", "finalize"});
      auto r0 = launch(nspace, 0, s0, dir.path());
      auto r1 = launch(nspace, 1, s1, dir.path());
      CHECK_MESSAGE(r1.exited_with(0), r1.errors());
      CHECK_MESSAGE(r0.exited_with(0), r0.errors());
      CHECK_MESSAGE(contains(r0.output(), "wait_main_blocked PMIX_SUCCESS"), r0.output());
      // This host has no query up-call: the server's answer is an error, but an answer.
      CHECK_MESSAGE(contains(r0.output(), "query:" + std::string{PMIX_QUERY_NAMESPACES} + " PMIX_ERR_NOT_SUPPORTED"),
                    r0.output());
      CHECK_MESSAGE(contains(r1.output(), "wait_file:" + answered + " PMIX_SUCCESS"), r1.output());
      CHECK_MESSAGE(contains(r0.output(), "fence PMIX_SUCCESS"), r0.output());
      CHECK_MESSAGE(contains(r1.output(), "fence PMIX_SUCCESS"), r1.output());
      // The board is mapped only when it is used.
      CHECK_MESSAGE(contains(r0.output(), on_board ? "board_mappings PMIX_SUCCESS mapped 1" : "board_mappings PMIX_SUCCESS mapped 0"),
                    r0.output());
    }
  }

  TEST_CASE("a call blocked for seconds wakes a few times, not once a second") {
    // Rank 0 waits in a fence for 7 s or more while rank 1 sleeps. Nothing
    // wakes it but its reply; the guard against a missed wake-up, which
    // doubles from 1 s, expires at 1, 3 and 7 s. Waking every second (as the
    // guard did) made 7 or more sleeps; a node of thousands of processes
    // waiting at start-up paid 6-12% of their CPU for them.
    temp_dir dir;
    server srv(dir.path());
    REQUIRE(srv.status() == PMIX_SUCCESS);
    REQUIRE(register_job("longwait", 2, 2) == PMIX_SUCCESS);
    auto r1 = launch("longwait", 1, {script, "init", "sleep:7000", "fence", "finalize"}, dir.path());
    auto r0 = launch("longwait", 0, {script, "init", "sleeps", "fence", "sleeps", "finalize"}, dir.path());
    CHECK_MESSAGE(r0.exited_with(0), r0.errors());
    CHECK_MESSAGE(r1.exited_with(0), r1.errors());
    const auto out = r0.output();
    const auto at = out.find("fence PMIX_SUCCESS\nsleeps PMIX_SUCCESS slept ");
    REQUIRE_MESSAGE(at != std::string::npos, out);
    const int slept = std::atoi(out.c_str() + at + std::strlen("fence PMIX_SUCCESS\nsleeps PMIX_SUCCESS slept "));
    CHECK_MESSAGE(slept >= 1, out);
    CHECK_MESSAGE(slept <= 5, out);
  }

  TEST_CASE("a client that dies without finalizing makes the fence fail instead of hang") {
    temp_dir dir;
    server srv(dir.path());
    REQUIRE(srv.status() == PMIX_SUCCESS);
    REQUIRE(register_job("crash", 4, 4) == PMIX_SUCCESS);
    std::vector<child> ranks;
    for (pmix_rank_t r = 0; r < 4; ++r) {
      std::vector<std::string> argv{script, "init"};
      argv.push_back(r == 1 ? "crash" : "fence:collect");
      argv.push_back("finalize");
      ranks.push_back(launch("crash", r, argv, dir.path()));
    }
    for (auto& c : ranks) REQUIRE(c.wait() != -1);  // -1: it hung and was killed
    CHECK(WIFSIGNALED(ranks[1].wait()));
    for (pmix_rank_t r : {0u, 2u, 3u}) {
      CHECK_MESSAGE(ranks[r].exited_with(0), ranks[r].errors());
      CHECK_MESSAGE(contains(ranks[r].output(), "fence:collect PMIX_ERR_PROC_TERM_WO_SYNC"),
                    (ranks[r].output() + ranks[r].errors()));
    }
  }

  TEST_CASE("a fence spanning other nodes goes through the host's fence_nb") {
    temp_dir dir;
    server srv(dir.path());
    REQUIRE(srv.status() == PMIX_SUCCESS);
    {
      std::lock_guard<std::mutex> guard{record().mutex};
      record().fence_reply_extra = remote_modex("wide", 2, {{"color", "blue from rank 2"}}) +
                                   remote_modex("wide", 3, {{"color", "blue from rank 3"}});
    }
    REQUIRE(register_job("wide", 4, 2) == PMIX_SUCCESS);
    std::vector<child> ranks;
    for (pmix_rank_t r = 0; r < 2; ++r)
      ranks.push_back(launch("wide", r,
                             {script, "init", "put:color=local " + std::to_string(r), "commit",
                              "fence:collect", "get:0:color", "get:1:color", "get:3:color",
                              "get:*:pmix.job.size", "finalize"},
                             dir.path()));
    for (auto& c : ranks) {
      CHECK_MESSAGE(c.exited_with(0), c.errors());
      const auto out = c.output();
      CHECK(contains(out, "fence:collect PMIX_SUCCESS"));
      CHECK(contains(out, "get:0:color PMIX_SUCCESS local 0"));
      CHECK(contains(out, "get:1:color PMIX_SUCCESS local 1"));
      CHECK(contains(out, "get:3:color PMIX_SUCCESS blue from rank 3"));
      CHECK(contains(out, "get:*:pmix.job.size PMIX_SUCCESS 4"));
    }
    CHECK(record().fence_calls == 1);
    CHECK(record().fence_nprocs == 1);  // the namespace, as a wildcard
    CHECK(record().fence_ndata > 0);    // our two ranks' data
    // [20.2.247.3] data the host returns is released (its release_fn) once
    // the server has taken it.
    CHECK(eventually([] { return record().releases == 1; }));
  }

  TEST_CASE("a host that frees fence_nb's data, as ORTE does, gets a copy of its own") {
    // Open MPI 4.1.4's mpirun and orteds load the data into a buffer they
    // release (OpenPMIx hands it over): found running mpirun across nodes,
    // where it freed the library's own bytes. Told so, the server hands the
    // host a malloc'd copy; Open MPI's own glue (mca_pmix_*.so) is
    // recognised without being told (tests/hosts/mpi:mpirun_nodes_test).
    temp_dir dir;
    pmix_info_t frees;
    const bool yes = true;
    PMIX_INFO_LOAD(&frees, PMIX_CXX_HOST_FREES_FENCE_DATA, &yes, PMIX_BOOL);
    server srv(dir.path(), {}, {frees});
    REQUIRE(srv.status() == PMIX_SUCCESS);
    {
      std::lock_guard<std::mutex> guard{record().mutex};
      record().fence_frees_data = true;
      record().fence_reply_extra = remote_modex("freed", 2, {{"color", "blue from rank 2"}});
    }
    REQUIRE(register_job("freed", 3, 2) == PMIX_SUCCESS);
    std::vector<child> ranks;
    for (pmix_rank_t r = 0; r < 2; ++r)
      ranks.push_back(launch("freed", r,
                             {script, "init", "put:color=local " + std::to_string(r), "commit",
                              "fence:collect", "get:1:color", "get:2:color", "fence:collect", "finalize"},
                             dir.path()));
    for (auto& c : ranks) {
      CHECK_MESSAGE(c.exited_with(0), c.errors());
      const auto out = c.output();
      CHECK_MESSAGE(count(out, "fence:collect PMIX_SUCCESS") == 2, out);
      CHECK(contains(out, "get:1:color PMIX_SUCCESS local 1"));
      CHECK(contains(out, "get:2:color PMIX_SUCCESS blue from rank 2"));
    }
    CHECK(record().fence_calls == 2);
    CHECK(record().fence_ndata > 0);
  }

  TEST_CASE("a host that answers fence_nb at once, under a lock its release function takes, as Slurm does") {
    // Slurm 22.05's pmix plugin calls the modex callback inside its
    // collective's lock, and its release function takes that lock: calling
    // the release inside the callback hung every fence across nodes
    // (tests/hosts/slurm:slurm_nodes_test). It runs later, on our thread.
    temp_dir dir;
    server srv(dir.path());
    REQUIRE(srv.status() == PMIX_SUCCESS);
    {
      std::lock_guard<std::mutex> guard{record().mutex};
      record().fence_inline_locked = true;
      record().fence_reply_extra = remote_modex("inline", 2, {{"color", "blue from rank 2"}});
    }
    REQUIRE(register_job("inline", 3, 2) == PMIX_SUCCESS);
    std::vector<child> ranks;
    for (pmix_rank_t r = 0; r < 2; ++r)
      ranks.push_back(launch("inline", r,
                             {script, "init", "put:color=local " + std::to_string(r), "commit", "fence:collect",
                              "get:2:color", "fence", "finalize"},
                             dir.path()));
    for (auto& c : ranks) {
      CHECK_MESSAGE(c.exited_with(0), c.errors());
      const auto out = c.output();
      CHECK_MESSAGE(contains(out, "fence:collect PMIX_SUCCESS"), out);
      CHECK(contains(out, "get:2:color PMIX_SUCCESS blue from rank 2"));
      CHECK(contains(out, "fence PMIX_SUCCESS"));
    }
    CHECK(record().fence_calls == 2);
    CHECK(eventually([] { return record().releases == 2; }));
  }

  TEST_CASE("the host is always told whether a fence collects data, and given data, as Slurm needs for a real barrier") {
    // Slurm 22.05's plugin reads the presence of PMIX_COLLECT_DATA, not its
    // value: without the key, its fence completed on each node at once, and
    // Open MPI's ranks left MPI_Init early (tests/hosts/slurm:slurm_nodes_test).
    temp_dir dir;
    server srv(dir.path());
    REQUIRE(srv.status() == PMIX_SUCCESS);
    REQUIRE(register_job("barrier", 3, 2) == PMIX_SUCCESS);
    std::vector<child> ranks;
    for (pmix_rank_t r = 0; r < 2; ++r)
      ranks.push_back(launch("barrier", r, {script, "init", "fence", "finalize"}, dir.path()));
    for (auto& c : ranks) {
      CHECK_MESSAGE(c.exited_with(0), c.errors());
      CHECK(contains(c.output(), "fence PMIX_SUCCESS"));
    }
    CHECK(record().fence_calls == 1);
    std::lock_guard<std::mutex> guard{record().mutex};
    CHECK(record().fence_collect == "false");
    // Slurm runs its ring, a real barrier, only for data: one byte per node,
    // dropped from the result.
    CHECK(record().fence_ndata == 1);
  }

  TEST_CASE("without fence_nb a fence spanning other nodes is not supported") {
    temp_dir dir;
    host_slots slots;
    slots.fence = false;
    server srv(dir.path(), slots);
    REQUIRE(srv.status() == PMIX_SUCCESS);
    REQUIRE(register_job("nofence", 2, 1) == PMIX_SUCCESS);
    auto c = launch("nofence", 0, {script, "init", "fence", "finalize"}, dir.path());
    CHECK_MESSAGE(c.exited_with(0), c.errors());
    CHECK(contains(c.output(), "fence PMIX_ERR_NOT_SUPPORTED"));
  }

  TEST_CASE("a get for a rank on another node goes through the host's direct_modex") {
    temp_dir dir;
    server srv(dir.path());
    REQUIRE(srv.status() == PMIX_SUCCESS);
    {
      std::lock_guard<std::mutex> guard{record().mutex};
      record().dmodex_reply = remote_rank_data("far", 1, {{"addr", "endpoint-of-1"}});
    }
    REQUIRE(register_job("far", 2, 1) == PMIX_SUCCESS);
    auto c = launch("far", 0, {script, "init", "get:1:addr", "get:1:other", "finalize"}, dir.path());
    CHECK_MESSAGE(c.exited_with(0), c.errors());
    CHECK(contains(c.output(), "get:1:addr PMIX_SUCCESS endpoint-of-1"));
    // The reply held all of rank 1's data: no second up-call for another key.
    CHECK(contains(c.output(), "get:1:other PMIX_ERR_NOT_FOUND"));
    CHECK(record().dmodex_calls == 1);
    CHECK(record().releases == 1);
    CHECK(record().dmodex_proc.rank == 1);
    CHECK(std::string{record().dmodex_proc.nspace} == "far");
  }

  TEST_CASE("without a host direct_modex a get for a rank elsewhere is not supported") {
    temp_dir dir;
    host_slots slots;
    slots.dmodex = false;
    server srv(dir.path(), slots);
    REQUIRE(srv.status() == PMIX_SUCCESS);
    REQUIRE(register_job("faraway", 2, 1) == PMIX_SUCCESS);
    auto c = launch("faraway", 0, {script, "init", "get:1:addr", "finalize"}, dir.path());
    CHECK_MESSAGE(c.exited_with(0), c.errors());
    CHECK(contains(c.output(), "get:1:addr PMIX_ERR_NOT_SUPPORTED"));
  }

  TEST_CASE("direct modex waits for a local peer's commit") {
    temp_dir dir;
    server srv(dir.path());
    REQUIRE(srv.status() == PMIX_SUCCESS);
    REQUIRE(register_job("late", 2, 2) == PMIX_SUCCESS);
    // Rank 0 asks before rank 1 has even started; rank 1 commits later.
    auto early = launch("late", 0, {script, "init", "get:1:k", "finalize"}, dir.path());
    auto late = launch("late", 1, {script, "sleep:200", "init", "put:k=v1", "commit", "sleep:100",
                                   "finalize"},
                       dir.path());
    CHECK_MESSAGE(early.exited_with(0), early.errors());
    CHECK_MESSAGE(late.exited_with(0), late.errors());
    CHECK(contains(early.output(), "get:1:k PMIX_SUCCESS v1"));
  }

  TEST_CASE("a commit reaches the server though the client makes no further call") {
    // Commit pushes the data to the server (the Standard: in the
    // background) even when no request follows it: here rank 1 makes no
    // PMIx call after its commit until rank 0 has read its key through
    // direct modex. The client holds its commit for its next frame, and the
    // server, asked for the data, ends the hold (commit_hold_end): a client
    // that held on, or a server that did not ask, fails this.
    temp_dir dir;
    server srv(dir.path());
    REQUIRE(srv.status() == PMIX_SUCCESS);
    REQUIRE(register_job("quiet", 2, 2) == PMIX_SUCCESS);
    const auto read = dir.path() + "/read";
    auto writer = launch("quiet", 1, {script, "init", "put:k=v1", "commit", "wait_file:" + read, "finalize"},
                         dir.path());
    auto reader = launch("quiet", 0, {script, "init", "get:1:k", "touch:" + read, "finalize"}, dir.path());
    CHECK_MESSAGE(reader.exited_with(0), reader.errors());
    CHECK_MESSAGE(writer.exited_with(0), writer.errors());
    CHECK(contains(reader.output(), "get:1:k PMIX_SUCCESS v1"));
    CHECK(contains(writer.output(), "wait_file:" + read + " PMIX_SUCCESS"));
  }

  TEST_CASE("a peer asking after a fence gets what was committed since, not what the fence carried") {
    // Rank 1 has committed before (the server holds k) and commits k2 after
    // the fence, then makes no call: the server must end the hold before it
    // answers, or rank 0 would get the data of before the fence.
    temp_dir dir;
    server srv(dir.path());
    REQUIRE(srv.status() == PMIX_SUCCESS);
    REQUIRE(register_job("newer", 2, 2) == PMIX_SUCCESS);
    const auto committed = dir.path() + "/committed", read = dir.path() + "/read";
    auto writer = launch("newer", 1,
                         {script, "init", "put:k=v1", "commit", "fence", "put:k2=v2", "commit", "touch:" + committed,
                          "wait_file:" + read, "finalize"},
                         dir.path());
    auto reader = launch("newer", 0,
                         {script, "init", "fence", "wait_file:" + committed, "get:1:k2", "get:1:k", "touch:" + read,
                          "finalize"},
                         dir.path());
    CHECK_MESSAGE(reader.exited_with(0), reader.errors());
    CHECK_MESSAGE(writer.exited_with(0), writer.errors());
    CHECK(contains(reader.output(), "get:1:k2 PMIX_SUCCESS v2"));
    CHECK(contains(reader.output(), "get:1:k PMIX_SUCCESS v1"));
  }

  TEST_CASE("once a peer has asked for a process's data, its later commits reach the server at once") {
    // The hold ends for good at the first request for rank 1's data (rank
    // 0's): its next commit, followed by no call, must be at the server for
    // rank 2, which has none of rank 1's data yet (rank 0 keeps what it got,
    // and would not ask again).
    temp_dir dir;
    server srv(dir.path());
    REQUIRE(srv.status() == PMIX_SUCCESS);
    REQUIRE(register_job("after", 3, 3) == PMIX_SUCCESS);
    const auto c1 = dir.path() + "/c1", r1 = dir.path() + "/r1", c2 = dir.path() + "/c2", r2 = dir.path() + "/r2";
    auto writer = launch("after", 1,
                         {script, "init", "put:a=1", "commit", "touch:" + c1, "wait_file:" + r1, "put:b=2", "commit",
                          "touch:" + c2, "wait_file:" + r2, "finalize"},
                         dir.path());
    auto first = launch("after", 0, {script, "init", "wait_file:" + c1, "get:1:a", "touch:" + r1, "finalize"},
                        dir.path());
    auto second = launch("after", 2, {script, "init", "wait_file:" + c2, "get:1:b", "touch:" + r2, "finalize"},
                         dir.path());
    CHECK_MESSAGE(first.exited_with(0), first.errors());
    CHECK_MESSAGE(second.exited_with(0), second.errors());
    CHECK_MESSAGE(writer.exited_with(0), writer.errors());
    CHECK_MESSAGE(contains(first.output(), "get:1:a PMIX_SUCCESS 1"), first.output());
    CHECK_MESSAGE(contains(second.output(), "get:1:b PMIX_SUCCESS 2"), second.output());
  }

  TEST_CASE("a commit held by a process that dies before any further call goes with it") {
    // What was chosen (docs/wire-format.md, "A commit held for the next
    // frame"): no one had asked for rank 1's data, so its commit was still
    // held when it died; a peer asking afterwards learns it ended without
    // giving any.
    temp_dir dir;
    server srv(dir.path());
    REQUIRE(srv.status() == PMIX_SUCCESS);
    REQUIRE(register_job("lost", 2, 2) == PMIX_SUCCESS);
    auto writer = launch("lost", 1, {script, "init", "put:k=v1", "commit", "crash"}, dir.path());
    CHECK(WIFSIGNALED(writer.wait()));
    auto reader = launch("lost", 0, {script, "init", "get:1:k", "finalize"}, dir.path());
    CHECK_MESSAGE(reader.exited_with(0), reader.errors());
    CHECK_MESSAGE(contains(reader.output(), "get:1:k PMIX_ERR_PROC_TERM_WO_SYNC"), reader.output());
  }

  TEST_CASE("malformed, oversized, truncated and out-of-order frames close only that connection") {
    temp_dir dir;
    server srv(dir.path());
    REQUIRE(srv.status() == PMIX_SUCCESS);
    REQUIRE(register_job("sturdy", 2, 2) == PMIX_SUCCESS);
    const auto uri = server_uri();
    REQUIRE(uri.find("uds://") != std::string::npos);

    const int garbage = connect_raw(uri);
    const int oversized = connect_raw(uri);
    const int truncated = connect_raw(uri);
    const int wrong_first = connect_raw(uri);
    REQUIRE(garbage >= 0);
    REQUIRE(oversized >= 0);
    REQUIRE(truncated >= 0);
    REQUIRE(wrong_first >= 0);

    // A job runs while the bad connections misbehave.
    std::vector<child> ranks;
    for (pmix_rank_t r = 0; r < 2; ++r) ranks.push_back(launch("sturdy", r, {demo}, dir.path()));

    const unsigned char junk[] = {0, 0, 0, 8, 0xff, 0xfe, 0xfd, 0xfc, 0xfb, 0xfa, 0xf9, 0xf8};
    CHECK(::send(garbage, junk, sizeof junk, 0) == static_cast<ssize_t>(sizeof junk));
    const unsigned char huge[] = {0xff, 0xff, 0xff, 0xf0, 1, 2, 3};
    CHECK(::send(oversized, huge, sizeof huge, 0) == static_cast<ssize_t>(sizeof huge));
    // A frame that announces 100 bytes, delivers 10, and is then cut off.
    const unsigned char partial[] = {0, 0, 0, 100, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10};
    CHECK(::send(truncated, partial, sizeof partial, 0) == static_cast<ssize_t>(sizeof partial));
    ::shutdown(truncated, SHUT_WR);
    // A well-formed Envelope{id: 1, fence: {}} before any connect request.
    const unsigned char fence_first[] = {0, 0, 0, 4, 0x08, 0x01, 0x72, 0x00};
    CHECK(::send(wrong_first, fence_first, sizeof fence_first, 0) ==
          static_cast<ssize_t>(sizeof fence_first));

    CHECK(closed_by_server(garbage));
    CHECK(closed_by_server(oversized));
    CHECK(closed_by_server(truncated));
    CHECK(closed_by_server(wrong_first));
    for (int fd : {garbage, oversized, truncated, wrong_first}) ::close(fd);
    for (auto& c : ranks) CHECK_MESSAGE(c.exited_with(0), c.errors());

    // The server still serves new clients afterwards.
    REQUIRE(register_job("after", 2, 2) == PMIX_SUCCESS);
    std::vector<child> again;
    for (pmix_rank_t r = 0; r < 2; ++r) again.push_back(launch("after", r, {demo}, dir.path()));
    for (auto& c : again) CHECK_MESSAGE(c.exited_with(0), c.errors());
  }

  TEST_CASE("a client of a namespace the server does not know is refused") {
    temp_dir dir;
    server srv(dir.path());
    REQUIRE(srv.status() == PMIX_SUCCESS);
    REQUIRE(register_job("known", 1, 1) == PMIX_SUCCESS);
    auto c = launch("unknown", 0, {script, "init"}, dir.path());
    CHECK_MESSAGE(c.exited_with(0), c.errors());
    CHECK(contains(c.output(), "init PMIX_ERR_NOT_FOUND"));
  }

  TEST_CASE("a second live process for a rank is refused unless clones are allowed") {
    temp_dir dir;
    server srv(dir.path());
    REQUIRE(srv.status() == PMIX_SUCCESS);
    REQUIRE(register_job("single", 1, 1) == PMIX_SUCCESS);
    const std::string go = dir.path() + "/go";
    auto first = launch("single", 0, {script, "init", "wait_file:" + go, "finalize"}, dir.path());
    REQUIRE(wait_for_output(first, "init PMIX_SUCCESS"));
    // The first process is connected and stays so until the second has tried.
    auto second = launch("single", 0, {script, "init"}, dir.path());
    CHECK_MESSAGE(second.exited_with(0), second.errors());
    std::fclose(std::fopen(go.c_str(), "w"));
    CHECK_MESSAGE(first.exited_with(0), first.errors());
    CHECK(contains(first.output(), "finalize PMIX_SUCCESS"));
    CHECK(contains(second.output(), "init PMIX_ERR_NOT_SUPPORTED"));
  }

  TEST_CASE("a blocking server call from inside a host up-call returns PMIX_ERR_WOULD_BLOCK") {
    temp_dir dir;
    server srv(dir.path());
    REQUIRE(srv.status() == PMIX_SUCCESS);
    record().block_in_upcall = true;
    auto ranks = run_job("upcall", 1, {script, "init", "finalize"}, dir);
    CHECK_MESSAGE(ranks[0].exited_with(0), ranks[0].errors());
    CHECK(record().blocking_call_status == PMIX_ERR_WOULD_BLOCK);
  }
}

TEST_SUITE("end to end") {
  TEST_CASE("a server with no host module still serves job data and local fences") {
    temp_dir dir;
    pmix_info_t tmp;
    PMIX_INFO_LOAD(&tmp, PMIX_SERVER_TMPDIR, dir.path().c_str(), PMIX_STRING);
    REQUIRE(PMIx_server_init(nullptr, &tmp, 1) == PMIX_SUCCESS);
    PMIX_INFO_DESTRUCT(&tmp);
    REQUIRE(register_job("bare", 2, 2) == PMIX_SUCCESS);
    std::vector<child> ranks;
    for (pmix_rank_t r = 0; r < 2; ++r)
      ranks.push_back(launch("bare", r,
                             {script, "init", "get:*:pmix.job.size", "put:k=v" + std::to_string(r),
                              "commit", "fence:collect", "get:1:k", "abort:1", "finalize"},
                             dir.path()));
    for (auto& c : ranks) {
      CHECK_MESSAGE(c.exited_with(0), c.errors());
      const auto out = c.output();
      CHECK(contains(out, "get:*:pmix.job.size PMIX_SUCCESS 2"));
      CHECK(contains(out, "fence:collect PMIX_SUCCESS"));
      CHECK(contains(out, "get:1:k PMIX_SUCCESS v1"));
      CHECK(contains(out, "abort:1 PMIX_ERR_NOT_SUPPORTED"));
    }
    CHECK(PMIx_server_finalize() == PMIX_SUCCESS);
  }

  TEST_CASE("[20.2.247.2] an empty module struct means no host support at all") {
    temp_dir dir;
    host_slots none;
    none.connected = none.finalized = none.abort = none.fence = none.dmodex = false;
    server srv(dir.path(), none);
    REQUIRE(srv.status() == PMIX_SUCCESS);
    REQUIRE(register_job("empty", 2, 1) == PMIX_SUCCESS);
    auto c = launch("empty", 0, {script, "init", "get:*:pmix.job.size", "fence", "get:1:x", "abort:2", "finalize"},
                    dir.path());
    CHECK_MESSAGE(c.exited_with(0), c.errors());
    const auto out = c.output();
    CHECK(contains(out, "get:*:pmix.job.size PMIX_SUCCESS 2"));  // job data still served
    CHECK(contains(out, "fence PMIX_ERR_NOT_SUPPORTED"));       // rank 1 is elsewhere
    CHECK(contains(out, "get:1:x PMIX_ERR_NOT_SUPPORTED"));
    CHECK(contains(out, "abort:2 PMIX_ERR_NOT_SUPPORTED"));
  }

  TEST_CASE("server init is reference counted and finalize after the last is PMIX_ERR_INIT") {
    temp_dir dir;
    pmix_info_t tmp;
    PMIX_INFO_LOAD(&tmp, PMIX_SERVER_TMPDIR, dir.path().c_str(), PMIX_STRING);
    CHECK(PMIx_server_register_nspace("early", 1, nullptr, 0, nullptr, nullptr) == PMIX_ERR_INIT);
    REQUIRE(PMIx_server_init(nullptr, &tmp, 1) == PMIX_SUCCESS);
    // A later init adopts a module when none was set.
    auto module = make_module();
    REQUIRE(PMIx_server_init(&module, &tmp, 1) == PMIX_SUCCESS);
    PMIX_INFO_DESTRUCT(&tmp);
    record().reset();
    REQUIRE(register_job("adopt", 1, 1) == PMIX_SUCCESS);
    auto c = launch("adopt", 0, {script, "init", "finalize"}, dir.path());
    CHECK_MESSAGE(c.exited_with(0), c.errors());
    CHECK(record().connected == 1);  // the adopted module's up-call ran
    CHECK(PMIx_server_finalize() == PMIX_SUCCESS);
    // Still initialized once: the server keeps serving.
    CHECK(PMIx_server_register_nspace("still", 1, nullptr, 0, nullptr, nullptr) == PMIX_SUCCESS);
    CHECK(PMIx_server_finalize() == PMIX_SUCCESS);
    CHECK(PMIx_server_finalize() == PMIX_ERR_INIT);
    CHECK(PMIx_server_register_nspace("late", 1, nullptr, 0, nullptr, nullptr) == PMIX_ERR_INIT);
  }

  TEST_CASE("PMIX_SERVER_NSPACE and PMIX_SERVER_RANK name the server; setup_fork gives the client's environment") {
    temp_dir dir;
    pmix_rank_t rank = 7;
    std::vector<pmix_info_t> extra(2);
    PMIX_INFO_LOAD(&extra[0], PMIX_SERVER_NSPACE, "my-server", PMIX_STRING);
    PMIX_INFO_LOAD(&extra[1], PMIX_SERVER_RANK, &rank, PMIX_PROC_RANK);
    server srv(dir.path(), {}, extra);
    REQUIRE(srv.status() == PMIX_SUCCESS);
    pmix_proc_t p;
    PMIX_LOAD_PROCID(&p, "envjob", 3);
    char** env = nullptr;
    REQUIRE(PMIx_server_setup_fork(&p, &env) == PMIX_SUCCESS);
    std::string all;
    for (char** e = env; e != nullptr && *e != nullptr; ++e) all += std::string{*e} + "\n";
    PMIX_ARGV_FREE(env);
    CHECK(contains(all, "PMIX_NAMESPACE=envjob\n"));
    CHECK(contains(all, "PMIX_RANK=3\n"));
    CHECK(contains(all, "PMIX_SERVER_NSPACE=my-server\n"));
    CHECK(contains(all, "PMIX_SERVER_RANK=7\n"));
    CHECK(contains(all, "PMIX_CXX_SERVER_URI=my-server.7;uds://" + dir.path() + "/"));
    // For processes linked with OpenPMIx: its listener, in every variable
    // its versions read, with the modules to use there (issue 35).
    for (const char* name : {"PMIX_SERVER_URI41", "PMIX_SERVER_URI4", "PMIX_SERVER_URI3", "PMIX_SERVER_URI21",
                             "PMIX_SERVER_URI2"})
      CHECK(contains(all, std::string{name} + "=my-server.7;tcp4://127.0.0.1:"));
    CHECK(contains(all, "PMIX_SECURITY_MODE=native\n"));
    CHECK(contains(all, "PMIX_BFROP_BUFFER_TYPE=PMIX_BFROP_BUFFER_NON_DESC\n"));
    CHECK(contains(all, "PMIX_GDS_MODULE=hash\n"));
    CHECK(contains(all, "PMIX_VERSION=4.2.2\n"));
    CHECK(PMIx_server_setup_fork(nullptr, &env) == PMIX_ERR_BAD_PARAM);
    for (auto& i : extra) PMIX_INFO_DESTRUCT(&i);
  }

  TEST_CASE("bad server arguments get PMIX_ERR_BAD_PARAM") {
    temp_dir dir;
    server srv(dir.path());
    REQUIRE(srv.status() == PMIX_SUCCESS);
    CHECK(PMIx_server_register_nspace(nullptr, 1, nullptr, 0, nullptr, nullptr) == PMIX_ERR_BAD_PARAM);
    CHECK(PMIx_server_register_nspace("", 1, nullptr, 0, nullptr, nullptr) == PMIX_ERR_BAD_PARAM);
    CHECK(PMIx_server_register_nspace("neg", -1, nullptr, 0, nullptr, nullptr) == PMIX_ERR_BAD_PARAM);
    CHECK(PMIx_server_register_client(nullptr, 0, 0, nullptr, nullptr, nullptr) == PMIX_ERR_BAD_PARAM);
    CHECK(PMIx_server_register_nspace("dup", 1, nullptr, 0, nullptr, nullptr) == PMIX_SUCCESS);
    CHECK(PMIx_server_register_nspace("dup", 1, nullptr, 0, nullptr, nullptr) == PMIX_ERR_BAD_PARAM);
    pmix_proc_t p;
    PMIX_LOAD_PROCID(&p, "nowhere", PMIX_RANK_WILDCARD);
    CHECK(PMIx_server_register_client(&p, 0, 0, nullptr, nullptr, nullptr) == PMIX_ERR_BAD_PARAM);
    // A namespace not registered yet: the client waits for it (mpirun's order).
    PMIX_LOAD_PROCID(&p, "nowhere", 0);
    CHECK(PMIx_server_register_client(&p, 0, 0, nullptr, nullptr, nullptr) == PMIX_SUCCESS);
    pmix_info_t bad;
    PMIX_INFO_LOAD(&bad, PMIX_NODE_MAP, "pmix[a[2:3-]", PMIX_STRING);
    CHECK(PMIx_server_register_nspace("badmap", 1, &bad, 1, nullptr, nullptr) == PMIX_ERR_BAD_PARAM);
    PMIX_INFO_DESTRUCT(&bad);
    char* out = nullptr;
    CHECK(PMIx_generate_regex(nullptr, &out) == PMIX_ERR_BAD_PARAM);
    CHECK(PMIx_generate_regex("a,,b", &out) == PMIX_ERR_BAD_PARAM);
    REQUIRE(PMIx_generate_regex("node1,node2,node3", &out) == PMIX_SUCCESS);
    CHECK(std::string{out}.rfind("pmix[", 0) == 0);
    std::free(out);
    REQUIRE(PMIx_generate_ppn("0-3;4-7", &out) == PMIX_SUCCESS);
    CHECK(std::string{out}.rfind("pmix[", 0) == 0);
    std::free(out);
  }

  // The loop thread sends a run of register_client calls to the server actor
  // as one message (server/server_runtime.cpp, send_posted): each call must
  // still get its own answer, in call order, refusals included.
  TEST_CASE("a burst of register_client calls: each gets its own status, in call order") {
    temp_dir dir;
    server srv(dir.path());
    REQUIRE(srv.status() == PMIX_SUCCESS);
    REQUIRE(register_job("burst", 64, 64) == PMIX_SUCCESS);
    struct answers {
      std::mutex m;
      std::vector<std::pair<std::size_t, pmix_status_t>> got;  // call index, status
    } a;
    struct call {
      answers* to;
      std::size_t index;
    };
    constexpr std::size_t n = 3000;
    std::vector<call> calls(n);
    std::vector<pmix_status_t> expected(n);
    for (std::size_t k = 0; k < n; ++k) {
      calls[k] = call{&a, k};
      pmix_proc_t p;
      if (k % 97 == 13) {
        // A namespace not registered yet: kept for it (docs/hosts.md).
        PMIX_LOAD_PROCID(&p, "notyet", static_cast<pmix_rank_t>(k));
        expected[k] = PMIX_SUCCESS;
      } else if (k % 89 == 7) {
        PMIX_LOAD_PROCID(&p, "burst", PMIX_RANK_WILDCARD);  // not a rank
        expected[k] = PMIX_ERR_BAD_PARAM;
      } else {
        PMIX_LOAD_PROCID(&p, "burst", static_cast<pmix_rank_t>(k % 64));
        expected[k] = PMIX_SUCCESS;
      }
      const auto rc = PMIx_server_register_client(
          &p, getuid(), getgid(), nullptr,
          [](pmix_status_t st, void* cbdata) {
            auto* c = static_cast<call*>(cbdata);
            std::lock_guard<std::mutex> guard{c->to->m};
            c->to->got.emplace_back(c->index, st);
          },
          &calls[k]);
      REQUIRE(rc == PMIX_SUCCESS);
    }
    REQUIRE(eventually([&] {
      std::lock_guard<std::mutex> guard{a.m};
      return a.got.size() == n;
    }));
    std::lock_guard<std::mutex> guard{a.m};
    for (std::size_t k = 0; k < n; ++k) {
      CAPTURE(k);
      CHECK(a.got[k].first == k);
      CHECK(a.got[k].second == expected[a.got[k].first]);
    }
  }

  TEST_CASE("register_client calls racing the server's finalize are each answered once: success or not-available") {
    // Calls queued for the loop thread when finalize stops it are dropped and
    // answered PMIX_ERR_NOT_AVAILABLE; a call after finalize is PMIX_ERR_INIT.
    constexpr std::size_t n = 20000;
    for (int round = 0; round < 10; ++round) {
      CAPTURE(round);
      temp_dir dir;
      auto srv = std::make_unique<server>(dir.path());
      REQUIRE(srv->status() == PMIX_SUCCESS);
      REQUIRE(register_job("racing", 64, 64) == PMIX_SUCCESS);
      struct answer {
        std::atomic<int> calls{0};
        std::atomic<int> status{PMIX_ERR_NOT_SUPPORTED};
      };
      std::vector<answer> answers(n);
      std::vector<pmix_status_t> returned(n, PMIX_ERR_NOT_SUPPORTED);
      std::atomic<bool> started{false};
      std::thread host([&] {
        for (std::size_t k = 0; k < n; ++k) {
          if (k == 100) started = true;
          pmix_proc_t p;
          PMIX_LOAD_PROCID(&p, "racing", static_cast<pmix_rank_t>(k % 64));
          returned[k] = PMIx_server_register_client(
              &p, getuid(), getgid(), nullptr,
              [](pmix_status_t st, void* cbdata) {
                auto* a = static_cast<answer*>(cbdata);
                a->status = st;
                ++a->calls;
              },
              &answers[k]);
        }
      });
      while (!started) std::this_thread::yield();
      srv.reset();  // PMIx_server_finalize while the host is still registering
      host.join();
      std::size_t accepted = 0, not_available = 0;
      for (std::size_t k = 0; k < n; ++k) {
        CAPTURE(k);
        if (returned[k] == PMIX_SUCCESS) {
          ++accepted;
          REQUIRE(answers[k].calls == 1);
          REQUIRE((answers[k].status == PMIX_SUCCESS || answers[k].status == PMIX_ERR_NOT_AVAILABLE));
          if (answers[k].status == PMIX_ERR_NOT_AVAILABLE) ++not_available;
        } else {
          REQUIRE(returned[k] == PMIX_ERR_INIT);  // after finalize: no callback
          REQUIRE(answers[k].calls == 0);
        }
      }
      CHECK(accepted >= 100);
      MESSAGE("accepted ", accepted, ", not available ", not_available);
    }
  }

  TEST_CASE("a PMIX_CXX_SPIN_US that is not a number of microseconds is refused with a warning; the client still works") {
    temp_dir dir;
    server srv(dir.path());
    REQUIRE(srv.status() == PMIX_SUCCESS);
    for (const char* bad : {"fast", "-5", "100001"}) {
      CAPTURE(bad);
      const std::string nspace = std::string{"spin"} + (bad[0] == '-' ? "neg" : bad[0] == 'f' ? "word" : "big");
      auto ranks = run_job(nspace, 1, {script, std::string{"setenv:PMIX_CXX_SPIN_US="} + bad, "init", "fence", "finalize"},
                           dir);
      REQUIRE(ranks.size() == 1);
      CHECK_MESSAGE(ranks[0].exited_with(0), ranks[0].errors());
      CHECK(contains(ranks[0].output(), "fence PMIX_SUCCESS"));
      CHECK(contains(ranks[0].errors(), std::string{"PMIX_CXX_SPIN_US='"} + bad + "'"));
      CHECK(deregister_job(nspace) == PMIX_SUCCESS);
    }
  }

  TEST_CASE("clients get the job data derived from the node and proc maps") {
    temp_dir dir;
    server srv(dir.path());
    REQUIRE(srv.status() == PMIX_SUCCESS);
    REQUIRE(register_job("derived", 5, 3) == PMIX_SUCCESS);  // ranks 3, 4 on othernode
    auto c = launch("derived", 2,
                    {script, "init", "get:*:pmix.lpeers", "get:*:pmix.local.size", "get:*:pmix.num.nodes",
                     "get:2:pmix.lrank", "get:4:pmix.lrank", "get:4:pmix.hname", "get:0:pmix.nodeid",
                     "get:4:pmix.nodeid", "initialized", "finalize", "initialized"},
                    dir.path());
    CHECK_MESSAGE(c.exited_with(0), c.errors());
    const auto out = c.output();
    CHECK(contains(out, "get:*:pmix.lpeers PMIX_SUCCESS 0,1,2"));
    CHECK(contains(out, "get:*:pmix.local.size PMIX_SUCCESS 3"));
    CHECK(contains(out, "get:*:pmix.num.nodes PMIX_SUCCESS 2"));
    CHECK(contains(out, "get:2:pmix.lrank PMIX_SUCCESS 2"));
    CHECK(contains(out, "get:4:pmix.lrank PMIX_SUCCESS 1"));
    CHECK(contains(out, "get:4:pmix.hname PMIX_SUCCESS othernode"));
    CHECK(contains(out, "get:0:pmix.nodeid PMIX_SUCCESS 0"));
    CHECK(contains(out, "get:4:pmix.nodeid PMIX_SUCCESS 1"));
    CHECK(contains(out, "initialized PMIX_SUCCESS 1\nfinalize PMIX_SUCCESS\ninitialized PMIX_SUCCESS 0"));
  }

  TEST_CASE("clients of a job placed round-robin find their node's ranks, places and scopes (strided runs)") {
    // 48 ranks over 3 nodes, round-robin: this node holds 0, 3, ..., 45,
    // whose list the server writes as one run of ranks 3 apart
    // (JobInfo.local_strided_runs); each process answers from it which
    // peers are local, their places, and whose PMIX_LOCAL data it takes.
    temp_dir dir;
    server srv(dir.path());
    REQUIRE(srv.status() == PMIX_SUCCESS);
    std::string ppn;
    for (int n = 0; n < 3; ++n) {
      ppn += n ? ";" : "";
      for (int r = n; r < 48; r += 3) ppn += (r == n ? "" : ",") + std::to_string(r);
    }
    REQUIRE(register_by_maps("cyclic", 48, this_host() + ",othernode,thirdnode", ppn, 16, {3, 45}, getuid(),
                             getgid()) == PMIX_SUCCESS);
    auto asker = launch("cyclic", 3,
                        {script, "init", "get:*:pmix.lpeers", "get:3:pmix.lrank", "get:9:pmix.lrank",
                         "get:45:pmix.lrank", "get:4:pmix.lrank", "get:4:pmix.hname", "get:44:pmix.nodeid",
                         "fence:collect:ranks=3,45", "get:45:app.near", "get:45:app.far", "finalize"},
                        dir.path());
    auto putter = launch("cyclic", 45,
                         {script, "init", "put:app.near=here:local", "put:app.far=away:remote", "commit",
                          "fence:collect:ranks=3,45", "finalize"},
                         dir.path());
    REQUIRE_MESSAGE(putter.exited_with(0), putter.errors());
    REQUIRE_MESSAGE(asker.exited_with(0), asker.errors());
    const auto out = asker.output();
    CAPTURE(out);
    CHECK(contains(out, "get:*:pmix.lpeers PMIX_SUCCESS 0,3,6,9,12,15,18,21,24,27,30,33,36,39,42,45\n"));
    CHECK(contains(out, "get:3:pmix.lrank PMIX_SUCCESS 1\n"));
    CHECK(contains(out, "get:9:pmix.lrank PMIX_SUCCESS 3\n"));
    CHECK(contains(out, "get:45:pmix.lrank PMIX_SUCCESS 15\n"));
    CHECK(contains(out, "get:4:pmix.lrank PMIX_SUCCESS 1\n"));  // othernode's 1, 4, 7, ...
    CHECK(contains(out, "get:4:pmix.hname PMIX_SUCCESS othernode"));
    CHECK(contains(out, "get:44:pmix.nodeid PMIX_SUCCESS 2"));
    CHECK(contains(out, "fence:collect:ranks=3,45 PMIX_SUCCESS"));
    // Rank 45 is local: its PMIX_LOCAL item is taken, its PMIX_REMOTE one not.
    CHECK(contains(out, "get:45:app.near PMIX_SUCCESS here"));
    CHECK_FALSE(contains(out, "get:45:app.far PMIX_SUCCESS"));
  }

  TEST_CASE("Fence_nb and Get_nb complete through their callbacks, where blocking calls are refused") {
    temp_dir dir;
    server srv(dir.path());
    REQUIRE(srv.status() == PMIX_SUCCESS);
    REQUIRE(register_job("nb", 2, 2) == PMIX_SUCCESS);
    std::vector<child> ranks;
    for (pmix_rank_t r = 0; r < 2; ++r)
      ranks.push_back(launch("nb", r,
                             {script, "init", "put:k=nb" + std::to_string(r), "commit", "fence_nb",
                              "get_nb:" + std::to_string(1 - r) + ":k", "get_nb:*:pmix.job.size",
                              "fence_nb:collect", "finalize"},
                             dir.path()));
    for (pmix_rank_t r = 0; r < 2; ++r) {
      auto& c = ranks[r];
      CHECK_MESSAGE(c.exited_with(0), c.errors());
      const auto out = c.output();
      CHECK(contains(out, "fence_nb PMIX_SUCCESS"));
      CHECK(contains(out, "get_nb:" + std::to_string(1 - r) + ":k PMIX_SUCCESS nb" +
                              std::to_string(1 - r) + " (callback: blocking calls refused)"));
      CHECK(contains(out, "get_nb:*:pmix.job.size PMIX_SUCCESS 2 (callback: blocking calls refused)"));
      CHECK(contains(out, "fence_nb:collect PMIX_SUCCESS"));
    }
  }
}
