// The server's actor tree driven message by message with CAF's deterministic
// test scheduler: registration, deregistration and the rank lifecycle,
// without sockets or threads.
#include <doctest/doctest.h>

#include <caf/actor_system.hpp>
#include <caf/actor_system_config.hpp>
#include <caf/atom.hpp>
#include <caf/event_based_actor.hpp>
#include <caf/message_handler.hpp>
#include <caf/scheduler/test_coordinator.hpp>
#include <caf/send.hpp>
#include <caf/stateful_actor.hpp>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include "actors/nspace_actor.hpp"
#include "actors/server_actor.hpp"
#include "server/host_module.hpp"

using namespace pmix;
using namespace pmix::actors;

namespace {

struct probe_log {
  std::vector<connect_result> connects;
  std::vector<pmix_status_t> finalizes;
  std::vector<fence_result> fences;  // the answers' results
  std::vector<fence_answer_msg> answers;  // fences' answers, with their ids
  std::vector<pmix_status_t> gets;        // the gets' answers
  int boards = 0;                         // fence_board_msgs received
  int releases = 0;
};

// What a stand-in peer forwards: its connect, finalize and loss, recording
// the answers.
caf::message_handler forwarding_peer(caf::event_based_actor* self, std::shared_ptr<probe_log> log) {
  return {
      [=](connect_msg msg, caf::actor server) {
        msg.peer = caf::actor_cast<caf::actor>(self);
        self->request(server, caf::infinite, std::move(msg))
            .then([=](connect_result& r) { log->connects.push_back(r); });
      },
      [=](peer_finalize_msg msg, caf::actor rank) {
        msg.peer = caf::actor_cast<caf::actor>(self);
        self->request(rank, caf::infinite, std::move(msg))
            .then([=](pmix_status_t st) { log->finalizes.push_back(st); });
      },
      [=](peer_lost_msg msg, caf::actor rank) {
        msg.peer = caf::actor_cast<caf::actor>(self);
        self->send(rank, std::move(msg));
      },
  };
}

// Stands in for a peer actor: forwards requests and records the replies and
// the release the rank actor sends when it frees this peer.
caf::behavior fake_peer(caf::event_based_actor* self, std::shared_ptr<probe_log> log) {
  self->set_default_handler(caf::drop);
  return forwarding_peer(self, log).or_else(
      [=](fence_msg msg, caf::actor server) { self->send(server, std::move(msg)); },
      [=](get_msg msg, caf::actor server) {
        msg.asker = self->address();
        self->request(server, caf::infinite, std::move(msg))
            .then([=](get_result& r) { log->gets.push_back(r.status); });
      },
      [=](const fence_answer_msg& a) {
        log->answers.push_back(a);
        log->fences.push_back(a.result);
      },
      [=](const fence_board_msg&) { ++log->boards; },
      [=](const release_msg&) {
        ++log->releases;
        self->quit();
      });
}

using let_go_atom = caf::atom_constant<caf::atom("letgo")>;

// A fake peer that holds the answer to its release (as a peer whose epilog
// still runs does) until the test sends it let_go_atom.
caf::behavior holding_peer(caf::event_based_actor* self, std::shared_ptr<probe_log> log) {
  auto held = std::make_shared<std::vector<caf::response_promise>>();
  self->set_default_handler(caf::drop);
  return forwarding_peer(self, log).or_else(
      [=](const release_msg&) -> caf::result<bool> {
        ++log->releases;
        held->push_back(self->make_response_promise());
        return held->back();
      },
      [=](let_go_atom) {
        for (auto& rp : *held) rp.deliver(true);
        held->clear();
        self->quit();
      });
}

info_list single_node_job(std::uint32_t size) {
  return {{PMIX_JOB_SIZE, value::unsigned_(PMIX_UINT32, size), 0},
          {PMIX_NODE_MAP, value::string("node0"), 0},
          {PMIX_PROC_MAP, value::string(size == 1 ? "0" : "0-" + std::to_string(size - 1)), 0}};
}

struct fixture {
  caf::actor_system_config cfg;
  std::unique_ptr<caf::actor_system> sys;
  caf::scheduler::test_coordinator* sched = nullptr;
  caf::actor server;

  fixture() {
    cfg.set("scheduler.policy", caf::atom("testing"));
    sys = std::make_unique<caf::actor_system>(cfg);
    sched = &dynamic_cast<caf::scheduler::test_coordinator&>(sys->scheduler());
    auto ctx = std::make_shared<server_context>();
    ctx->server = proc_id{"srv", 0};
    ctx->hostname = "node0";
    ctx->host = std::make_shared<host::module>(nullptr);
    server = sys->spawn(server_actor, context_ptr{ctx});
    sched->run();
  }
  ~fixture() {
    caf::anon_send_exit(server, caf::exit_reason::user_shutdown);
    sched->run();
  }

  // Sends a facade-style request and returns the status it was answered with.
  template <class Msg>
  pmix_status_t call(Msg msg) {
    auto status = std::make_shared<pmix_status_t>(PMIX_ERR_TIMEOUT);
    msg.done = make_reply<no_result>([status](pmix_status_t st, no_result) { *status = st; });
    caf::anon_send(server, std::move(msg));
    sched->run();
    return *status;
  }

  server_snapshot snapshot() {
    auto snap = std::make_shared<server_snapshot>();
    caf::anon_send(server, snapshot_msg{make_reply<server_snapshot>(
                               [snap](pmix_status_t, server_snapshot s) { *snap = std::move(s); })});
    sched->run();
    return *snap;
  }

  caf::actor peer(std::shared_ptr<probe_log> log) {
    auto p = sys->spawn(fake_peer, std::move(log));
    sched->run();
    return p;
  }

  // The namespace "job" of 2 ranks on this node, and a peer for each with
  // its own log: {log0, log1, p0, p1}.
  std::tuple<std::shared_ptr<probe_log>, std::shared_ptr<probe_log>, caf::actor, caf::actor> two_rank_job() {
    REQUIRE(call(register_nspace_msg{"job", 2, single_node_job(2), nullptr}) == PMIX_SUCCESS);
    auto log0 = std::make_shared<probe_log>();
    auto log1 = std::make_shared<probe_log>();
    return {log0, log1, peer(log0), peer(log1)};
  }

  // The same with both ranks registered and rank 1's process connected
  // through p1 (log1->connects[0].rank is its rank actor).
  std::tuple<std::shared_ptr<probe_log>, std::shared_ptr<probe_log>, caf::actor, caf::actor>
  two_rank_job_rank1_connected() {
    auto job = two_rank_job();
    REQUIRE(call(register_client_msg{proc_id{"job", 0}, 0, 0, nullptr, nullptr}) == PMIX_SUCCESS);
    REQUIRE(call(register_client_msg{proc_id{"job", 1}, 0, 0, nullptr, nullptr}) == PMIX_SUCCESS);
    caf::anon_send(std::get<3>(job), connect_msg{proc_id{"job", 1}, {0, 0, 102}, peer_role::client, {}, 7}, server);
    sched->run();
    const auto& log1 = std::get<1>(job);
    REQUIRE(log1->connects.size() == 1);
    REQUIRE(log1->connects[0].status == PMIX_SUCCESS);
    return job;
  }
};


// A 2-rank job with rank 0 here (node0) and rank 1 on node1.
info_list two_node_job() {
  return {{PMIX_JOB_SIZE, value::unsigned_(PMIX_UINT32, 2), 0},
          {PMIX_NODE_MAP, value::string("node0,node1"), 0},
          {PMIX_PROC_MAP, value::string("0;1"), 0}};
}

const server_snapshot::nspace_view* find_ns(const server_snapshot& s, const std::string& name) {
  for (const auto& n : s.nspaces)
    if (n.name == name) return &n;
  return nullptr;
}

const server_snapshot::rank_view* find_rank(const server_snapshot::nspace_view& n, rank_t r) {
  for (const auto& v : n.ranks)
    if (v.rank == r) return &v;
  return nullptr;
}

}  // namespace

TEST_SUITE("server_actor") {
  TEST_CASE("register_nspace creates one namespace actor, deregister_nspace removes it") {
    fixture f;
    CHECK(f.call(register_nspace_msg{"job", 2, single_node_job(2), nullptr}) == PMIX_SUCCESS);
    auto snap = f.snapshot();
    REQUIRE(snap.nspaces.size() == 1);
    CHECK(snap.nspaces[0].name == "job");
    CHECK(snap.nspaces[0].nlocalprocs == 2);
    CHECK(f.call(deregister_nspace_msg{"job", nullptr}) == PMIX_SUCCESS);
    CHECK(f.snapshot().nspaces.empty());
  }

  TEST_CASE("a namespace registered twice is refused") {
    fixture f;
    CHECK(f.call(register_nspace_msg{"job", 1, single_node_job(1), nullptr}) == PMIX_SUCCESS);
    CHECK(f.call(register_nspace_msg{"job", 1, single_node_job(1), nullptr}) == PMIX_ERR_BAD_PARAM);
    CHECK(f.snapshot().nspaces.size() == 1);
  }

  TEST_CASE("register_client before register_nspace is kept until the namespace comes") {
    fixture f;
    // Open MPI's mpirun registers a job's clients first, each waited for.
    CHECK(f.call(register_client_msg{proc_id{"later", 1}, 1000, 1000, nullptr, nullptr}) == PMIX_SUCCESS);
    CHECK(f.snapshot().nspaces.empty());
    CHECK(f.call(register_nspace_msg{"later", 2, single_node_job(2), nullptr}) == PMIX_SUCCESS);
    auto snap = f.snapshot();
    const auto* ns = find_ns(snap, "later");
    REQUIRE(ns != nullptr);
    const auto* r1 = find_rank(*ns, 1);
    REQUIRE(r1 != nullptr);
    CHECK(r1->registered);
    CHECK(find_rank(*ns, 0) == nullptr);
    // One whose namespace never comes goes with its deregistration.
    CHECK(f.call(register_client_msg{proc_id{"never", 0}, 0, 0, nullptr, nullptr}) == PMIX_SUCCESS);
    CHECK(f.call(deregister_nspace_msg{"never", nullptr}) == PMIX_SUCCESS);
    CHECK(f.call(deregister_nspace_msg{"never", nullptr}) == PMIX_ERR_NOT_FOUND);
  }

  TEST_CASE("register_client of a special rank is refused") {
    fixture f;
    CHECK(f.call(register_nspace_msg{"job", 1, single_node_job(1), nullptr}) == PMIX_SUCCESS);
    CHECK(f.call(register_client_msg{proc_id{"job", rank_wildcard}, 0, 0, nullptr, nullptr}) ==
          PMIX_ERR_BAD_PARAM);
  }

  TEST_CASE("a namespace with unreadable maps is refused and not created") {
    fixture f;
    info_list bad = {{PMIX_NODE_MAP, value::string("pmix[node[2:1-]"), 0}};
    CHECK(f.call(register_nspace_msg{"bad", 1, bad, nullptr}) == PMIX_ERR_BAD_PARAM);
    info_list mismatched = {{PMIX_NODE_MAP, value::string("a,b"), 0},
                            {PMIX_PROC_MAP, value::string("0,1"), 0}};
    CHECK(f.call(register_nspace_msg{"bad", 1, mismatched, nullptr}) == PMIX_ERR_BAD_PARAM);
    CHECK(f.snapshot().nspaces.empty());
  }

  TEST_CASE("register_client creates the rank actor; deregister_client removes it") {
    fixture f;
    REQUIRE(f.call(register_nspace_msg{"job", 2, single_node_job(2), nullptr}) == PMIX_SUCCESS);
    CHECK(f.call(register_client_msg{proc_id{"job", 0}, 1000, 1000, nullptr, nullptr}) == PMIX_SUCCESS);
    CHECK(f.call(register_client_msg{proc_id{"job", 1}, 1000, 1000, nullptr, nullptr}) == PMIX_SUCCESS);
    auto snap = f.snapshot();
    REQUIRE(snap.nspaces.size() == 1);
    CHECK(snap.nspaces[0].ranks.size() == 2);
    CHECK(f.call(deregister_client_msg{proc_id{"job", 1}, nullptr}) == PMIX_SUCCESS);
    snap = f.snapshot();
    REQUIRE(snap.nspaces[0].ranks.size() == 1);
    CHECK(snap.nspaces[0].ranks[0].rank == 0);
    CHECK(f.call(deregister_client_msg{proc_id{"job", 1}, nullptr}) == PMIX_ERR_NOT_FOUND);
  }

  TEST_CASE("finalize leaves a tombstone; reconnect reclaims it; deregistration releases all") {
    fixture f;
    REQUIRE(f.call(register_nspace_msg{"job", 1, single_node_job(1), nullptr}) == PMIX_SUCCESS);
    REQUIRE(f.call(register_client_msg{proc_id{"job", 0}, 0, 0, nullptr, nullptr}) == PMIX_SUCCESS);

    auto log1 = std::make_shared<probe_log>();
    auto p1 = f.peer(log1);
    caf::anon_send(p1, connect_msg{proc_id{"job", 0}, {0, 0, 100}, peer_role::client, {}, 1}, f.server);
    f.sched->run();
    REQUIRE(log1->connects.size() == 1);
    REQUIRE(log1->connects[0].status == PMIX_SUCCESS);
    REQUIRE(log1->connects[0].job);
    const auto rank = log1->connects[0].rank;

    auto ns = f.snapshot();
    auto r = find_rank(*find_ns(ns, "job"), 0);
    REQUIRE(r != nullptr);
    CHECK(r->proc_cnt == 1);

    caf::anon_send(p1, peer_finalize_msg{}, rank);
    f.sched->run();
    REQUIRE(log1->finalizes.size() == 1);
    CHECK(log1->finalizes[0] == PMIX_SUCCESS);
    CHECK(find_ns(f.snapshot(), "job")->nfinalized == 1);

    caf::anon_send(p1, peer_lost_msg{{}, true}, rank);
    f.sched->run();
    ns = f.snapshot();
    r = find_rank(*find_ns(ns, "job"), 0);
    CHECK(r->proc_cnt == 0);
    CHECK(r->tombstones == 1);
    CHECK(find_ns(ns, "job")->nfinalized == 1);  // the tombstone still counts
    CHECK(log1->releases == 0);                   // kept, not freed

    // The client inits again: the tombstone is reclaimed, a fresh peer serves.
    auto log2 = std::make_shared<probe_log>();
    auto p2 = f.peer(log2);
    caf::anon_send(p2, connect_msg{proc_id{"job", 0}, {0, 0, 101}, peer_role::client, {}, 2}, f.server);
    f.sched->run();
    REQUIRE(log2->connects.size() == 1);
    CHECK(log2->connects[0].status == PMIX_SUCCESS);
    CHECK(log1->releases == 1);
    ns = f.snapshot();
    CHECK(find_ns(ns, "job")->nfinalized == 0);
    r = find_rank(*find_ns(ns, "job"), 0);
    CHECK(r->proc_cnt == 1);
    CHECK(r->peers == 1);
    CHECK(r->tombstones == 0);

    CHECK(f.call(deregister_nspace_msg{"job", nullptr}) == PMIX_SUCCESS);
    CHECK(log2->releases == 1);
    CHECK(f.snapshot().nspaces.empty());
  }

  TEST_CASE("[Tombstone mechanics: the two counters] \"all local processes finalized\" runs once per namespace, "
            "not again as deregistration walks the tombstoned ranks") {
    fixture f;
    REQUIRE(f.call(register_nspace_msg{"job", 2, single_node_job(2), nullptr}) == PMIX_SUCCESS);
    for (rank_t r : {0u, 1u})
      REQUIRE(f.call(register_client_msg{proc_id{"job", r}, 0, 0, nullptr, nullptr}) == PMIX_SUCCESS);
    // The namespace actor itself: the server asks it for its view (the job
    // the scheduler runs next).
    caf::actor nspace;
    {
      caf::anon_send(f.server, snapshot_msg{make_reply<server_snapshot>([](pmix_status_t, server_snapshot) {})});
      REQUIRE(f.sched->try_run_once());
      auto& next = f.sched->next_job<caf::scheduled_actor>();
      REQUIRE(std::string{next.name()} == nspace_state::name);
      nspace = caf::actor_cast<caf::actor>(&next);
      f.sched->run();
    }
    // Both ranks connect, finalize and drop their sockets: two tombstones.
    std::vector<std::shared_ptr<probe_log>> logs;
    std::vector<caf::actor> peers;
    for (rank_t r : {0u, 1u}) {
      logs.push_back(std::make_shared<probe_log>());
      peers.push_back(f.sys->spawn(holding_peer, logs.back()));
      caf::anon_send(peers.back(), connect_msg{proc_id{"job", r}, {0, 0, static_cast<pid_t>(200 + r)}, peer_role::client, {}, r + 1},
                     f.server);
      f.sched->run();
      REQUIRE(logs.back()->connects.size() == 1);
      REQUIRE(logs.back()->connects[0].status == PMIX_SUCCESS);
    }
    for (std::size_t k = 0; k < 2; ++k) {
      caf::anon_send(peers[k], peer_finalize_msg{}, logs[k]->connects[0].rank);
      f.sched->run();
      caf::anon_send(peers[k], peer_lost_msg{{}, true}, logs[k]->connects[0].rank);
      f.sched->run();
    }
    auto snap = f.snapshot();
    const auto* ns = find_ns(snap, "job");
    REQUIRE(ns != nullptr);
    CHECK(ns->nfinalized == 2);
    CHECK(find_rank(*ns, 0)->tombstones == 1);
    CHECK(find_rank(*ns, 1)->tombstones == 1);
    CHECK(ns->local_app_fini_fired);
    CHECK(ns->local_app_fini_runs == 1);

    // The namespace is deregistered. Its ranks free their tombstones, whose
    // answers are held: the namespace is mid-teardown, every rank walked.
    auto status = std::make_shared<pmix_status_t>(PMIX_ERR_TIMEOUT);
    caf::anon_send(f.server, deregister_nspace_msg{"job", make_reply<no_result>([status](pmix_status_t st, no_result) {
                     *status = st;
                   })});
    f.sched->run();
    CHECK(*status == PMIX_ERR_TIMEOUT);  // not answered yet
    CHECK(logs[0]->releases == 1);
    CHECK(logs[1]->releases == 1);
    auto during = std::make_shared<server_snapshot::nspace_view>();
    during->local_app_fini_runs = -1;
    f.sys->spawn([nspace, during](caf::event_based_actor* self) {
      self->request(nspace, caf::infinite, view_msg{})
          .then([during](server_snapshot::nspace_view& v) { *during = std::move(v); });
    });
    f.sched->run();
    CHECK(during->name == "job");
    CHECK(during->local_app_fini_fired);
    CHECK(during->local_app_fini_runs == 1);  // the equality held for every rank walked: still once

    for (const auto& p : peers) caf::anon_send(p, let_go_atom::value);
    f.sched->run();
    CHECK(*status == PMIX_SUCCESS);
    CHECK(f.snapshot().nspaces.empty());
  }

  TEST_CASE("a local fence completes in the server once every local rank contributed") {
    fixture f;
    REQUIRE(f.call(register_nspace_msg{"job", 2, single_node_job(2), nullptr}) == PMIX_SUCCESS);
    auto log = std::make_shared<probe_log>();
    auto p0 = f.peer(log);
    auto p1 = f.peer(log);
    const std::vector<proc_id> all{{"job", rank_wildcard}};
    caf::anon_send(p0, fence_msg{proc_id{"job", 0}, all, {}, false, {}}, f.server);
    f.sched->run();
    CHECK(log->fences.empty());
    CHECK(f.snapshot().fences_in_flight == 1);
    caf::anon_send(p1, fence_msg{proc_id{"job", 1}, all, {}, false, {}}, f.server);
    f.sched->run();
    REQUIRE(log->fences.size() == 2);
    CHECK(log->fences[0].status == PMIX_SUCCESS);
    CHECK(log->fences[1].status == PMIX_SUCCESS);
    CHECK(f.snapshot().fences_in_flight == 0);
  }

  TEST_CASE("a peer's fence is answered by message only when its reply is not on the board") {
    // A peer sends its fence (answer_id: its client's request id); the
    // server answers with a fence_answer_msg, and not at all when every
    // contributor reads the reply on the namespace's board, unless the
    // peer asks for every answer (answer_on_board: the fault plane's ledger).
    fixture f;
    std::shared_ptr<probe_log> log0, log1;
    caf::actor p0, p1;
    std::tie(log0, log1, p0, p1) = f.two_rank_job();
    const std::vector<proc_id> all{{"job", rank_wildcard}};
    auto contribution = [&](rank_t rank, std::uint64_t id, bool board_wait, bool every_answer) {
      fence_msg m{proc_id{"job", rank}, all, {}, true, {}};
      m.board_request = true;  // the first one makes the namespace's board
      m.board_wait = board_wait;
      m.answer_id = id;
      m.answer_on_board = every_answer;
      return m;
    };
    auto fence = [&](std::uint64_t id0, bool wait0, std::uint64_t id1, bool wait1, bool every_answer) {
      caf::anon_send(p0, contribution(0, id0, wait0, every_answer), f.server);
      f.sched->run();
      caf::anon_send(p1, contribution(1, id1, wait1, every_answer), f.server);
      f.sched->run();
      CHECK(f.snapshot().fences_in_flight == 0);
    };

    auto answered_once = [&](std::uint64_t id0, std::uint64_t id1) {
      REQUIRE(log0->answers.size() == 1);
      REQUIRE(log1->answers.size() == 1);
      CHECK(log0->answers[0].id == id0);
      CHECK(log1->answers[0].id == id1);
    };

    SUBCASE("both read the board: no answer, one post") {
      fence(11, true, 12, true, false);
      CHECK(log0->boards + log1->boards >= 1);
      CHECK(f.snapshot().board_posts == 1);
      CHECK(log0->answers.empty());
      CHECK(log1->answers.empty());
      CHECK(log0->fences.empty());
    }
    SUBCASE("both read the board, every answer asked for: each peer told it is on the board") {
      fence(11, true, 12, true, true);
      CHECK(f.snapshot().board_posts == 1);
      answered_once(11, 12);
      CHECK(log0->answers[0].result.on_board);
      CHECK(log1->answers[0].result.on_board);
    }
    SUBCASE("one does not read the board: both answered with the reply") {
      fence(21, true, 22, false, false);
      CHECK(f.snapshot().board_posts == 0);
      answered_once(21, 22);
      for (const auto* a : {&log0->answers[0], &log1->answers[0]}) {
        CHECK(a->result.status == PMIX_SUCCESS);
        CHECK_FALSE(a->result.on_board);
        CHECK(a->result.reply);
      }
      CHECK(log0->answers[0].result.reply == log1->answers[0].result.reply);  // encoded once
    }
  }

  TEST_CASE("a refused fence sent with an answer_id is answered with its error") {
    fixture f;
    REQUIRE(f.call(register_nspace_msg{"job", 1, two_node_job(), nullptr}) == PMIX_SUCCESS);
    auto log = std::make_shared<probe_log>();
    auto p0 = f.peer(log);
    fence_msg m{proc_id{"job", 0}, {{"job", rank_wildcard}}, {}, false, {}};
    m.board_wait = true;
    m.answer_id = 5;
    caf::anon_send(p0, m, f.server);
    f.sched->run();
    REQUIRE(log->answers.size() == 1);
    CHECK(log->answers[0].id == 5);
    CHECK(log->answers[0].result.status == PMIX_ERR_NOT_SUPPORTED);
    CHECK_FALSE(log->answers[0].result.on_board);
  }

  TEST_CASE("a fence waiting for a rank that dies fails with PMIX_ERR_PROC_TERM_WO_SYNC") {
    fixture f;
    std::shared_ptr<probe_log> log0, log1;
    caf::actor p0, p1;
    std::tie(log0, log1, p0, p1) = f.two_rank_job();
    REQUIRE(f.call(register_client_msg{proc_id{"job", 1}, 0, 0, nullptr, nullptr}) == PMIX_SUCCESS);
    caf::anon_send(p1, connect_msg{proc_id{"job", 1}, {0, 0, 102}, peer_role::client, {}, 7}, f.server);
    f.sched->run();
    REQUIRE(log1->connects.size() == 1);
    caf::anon_send(p0, fence_msg{proc_id{"job", 0}, {{"job", rank_wildcard}}, {}, true, {}}, f.server);
    f.sched->run();
    CHECK(log0->fences.empty());
    caf::anon_send(p1, peer_lost_msg{{}, false}, log1->connects[0].rank);
    f.sched->run();
    REQUIRE(log0->fences.size() == 1);
    CHECK(log0->fences[0].status == PMIX_ERR_PROC_TERM_WO_SYNC);
  }

  // tests/faults matrix_test, kill:nspace:at=fence:rank=1: a process still
  // in PMIx_Init when its namespace actor failed was never answered (its
  // client's watchdog stopped it, "SILENT :0 init"). The namespace held the
  // connect's promise while its rank actor answered, and CAF 0.17 drops the
  // promises of an actor that ends. Here the kill (rank 1's, through its
  // rank actor) reaches the namespace after it handed rank 0's connect to
  // rank 0's actor and before that actor's answer.
  TEST_CASE("a connect held by a namespace actor that fails is answered PMIX_ERR_UNREACH") {
    fixture f;
    std::shared_ptr<probe_log> log0, log1;
    caf::actor p0, p1;
    std::tie(log0, log1, p0, p1) = f.two_rank_job_rank1_connected();
    const auto rank1 = log1->connects[0].rank;

    caf::anon_send(p0, connect_msg{proc_id{"job", 0}, {0, 0, 101}, peer_role::client, {}, 8}, f.server);
    REQUIRE(f.sched->try_run_once());  // the peer asks the server
    REQUIRE(f.sched->try_run_once());  // the server hands the connect to the namespace
    caf::anon_send(rank1, fault_kill_nspace_atom::value);
    REQUIRE(f.sched->try_run_once());  // the namespace asks rank 0's actor
    REQUIRE(f.sched->try_run_once());  // rank 1's actor passes the kill on
    REQUIRE(f.sched->try_run_once());  // rank 0's actor answers, behind the kill
    f.sched->run();
    REQUIRE(log0->connects.size() == 1);
    CHECK(log0->connects[0].status == PMIX_ERR_UNREACH);
    // The server restarted the namespace: a new process of rank 0 is served.
    auto log2 = std::make_shared<probe_log>();
    auto p2 = f.peer(log2);
    caf::anon_send(p2, connect_msg{proc_id{"job", 0}, {0, 0, 103}, peer_role::client, {}, 9}, f.server);
    f.sched->run();
    REQUIRE(log2->connects.size() == 1);
    CHECK(log2->connects[0].status == PMIX_SUCCESS);
  }

  // The same for a get the namespace handed to a rank actor: rank 0 has no
  // process yet, so its actor keeps the get until one connects; the
  // namespace fails meanwhile (and its ranks with it).
  TEST_CASE("a get held for a rank when its namespace actor fails is answered PMIX_ERR_LOST_CONNECTION") {
    fixture f;
    std::shared_ptr<probe_log> log0, log1;
    caf::actor p0, p1;
    std::tie(log0, log1, p0, p1) = f.two_rank_job_rank1_connected();
    get_msg get;
    get.from = proc_id{"job", 1};
    get.target = proc_id{"job", 0};
    get.key = "k";
    get.request = 5;
    caf::anon_send(p1, std::move(get), f.server);
    f.sched->run();
    CHECK(log1->gets.empty());  // waits for a process of rank 0
    caf::anon_send(log1->connects[0].rank, fault_kill_nspace_atom::value);
    f.sched->run();
    REQUIRE(log1->gets.size() == 1);
    CHECK(log1->gets[0] == PMIX_ERR_LOST_CONNECTION);
  }

  TEST_CASE("a fence over a namespace with ranks elsewhere and no host is not supported") {
    fixture f;
    REQUIRE(f.call(register_nspace_msg{"job", 1, two_node_job(), nullptr}) == PMIX_SUCCESS);
    auto log = std::make_shared<probe_log>();
    auto p0 = f.peer(log);
    caf::anon_send(p0, fence_msg{proc_id{"job", 0}, {{"job", rank_wildcard}}, {}, false, {}}, f.server);
    f.sched->run();
    REQUIRE(log->fences.size() == 1);
    CHECK(log->fences[0].status == PMIX_ERR_NOT_SUPPORTED);
  }
}
