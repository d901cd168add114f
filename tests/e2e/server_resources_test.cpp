// The server calls of a host that manages more than jobs: process sets
// (PMIx_server_define_process_set / _delete_process_set, their events and
// queries), node-level resources (PMIx_server_register_resources /
// _deregister_resources, seen by real clients in their job data) and
// inventory (PMIx_server_collect_inventory / _deliver_inventory).
#include <doctest/doctest.h>
#include <pmix.h>
#include <pmix_server.h>

#include <condition_variable>
#include <cstring>
#include <mutex>
#include <string>
#include <vector>

#include "tests/e2e/host.hpp"

using namespace pmix::test;

namespace {

std::string finish(child& c) {
  CHECK_MESSAGE(c.exited_with(0), c.errors());
  return c.output();
}

// A callback's answer, waited for (a guard of 120 s against hangs).
struct answer {
  std::mutex m;
  std::condition_variable cv;
  bool done = false;
  pmix_status_t rc = PMIX_ERR_NOT_AVAILABLE;
  std::vector<std::pair<std::string, std::string>> items;  // key, string value ("" otherwise)
  pmix_status_t wait(pmix_status_t started) {
    if (started != PMIX_SUCCESS) return started;
    std::unique_lock<std::mutex> g{m};
    REQUIRE(cv.wait_for(g, std::chrono::seconds(120), [&] { return done; }));
    return rc;
  }
  std::string value_of(const std::string& key) const {
    for (const auto& [k, v] : items)
      if (k == key) return v;
    return "(absent)";
  }
};

void op_done(pmix_status_t st, void* cbdata) {
  auto* a = static_cast<answer*>(cbdata);
  std::lock_guard<std::mutex> g{a->m};
  a->rc = st;
  a->done = true;
  a->cv.notify_all();
}

void info_done(pmix_status_t st, pmix_info_t* info, size_t n, void* cbdata, pmix_release_cbfunc_t release,
               void* release_data) {
  auto* a = static_cast<answer*>(cbdata);
  {
    std::lock_guard<std::mutex> g{a->m};
    a->rc = st;
    for (size_t k = 0; k < n; ++k)
      a->items.emplace_back(info[k].key,
                            info[k].value.type == PMIX_STRING && info[k].value.data.string != nullptr
                                ? info[k].value.data.string
                                : "");
    a->done = true;
    // Under the mutex: the waiter owns `a` and destroys it as soon as it
    // sees `done`, so nothing may touch `a` after the mutex is released
    // (ThreadSanitizer caught the broadcast racing the condvar's destruction).
    a->cv.notify_all();
  }
  if (release != nullptr) release(release_data);
}

pmix_info_t string_info(const char* key, const char* text) {
  pmix_info_t i;
  PMIX_INFO_LOAD(&i, key, text, PMIX_STRING);
  return i;
}

}  // namespace

TEST_SUITE("server resources") {
  TEST_CASE("before PMIx_server_init every call is PMIX_ERR_INIT") {
    pmix_proc_t p;
    PMIX_LOAD_PROCID(&p, "x", 0);
    char name[] = "s";
    auto rack = string_info("site.rack", "r7");
    CHECK(PMIx_server_define_process_set(&p, 1, "s") == PMIX_ERR_INIT);
    CHECK(PMIx_server_delete_process_set(name) == PMIX_ERR_INIT);
    CHECK(PMIx_server_register_resources(&rack, 1, nullptr, nullptr) == PMIX_ERR_INIT);
    CHECK(PMIx_server_deregister_resources(&rack, 1, nullptr, nullptr) == PMIX_ERR_INIT);
    answer a;
    CHECK(PMIx_server_collect_inventory(nullptr, 0, info_done, &a) == PMIX_ERR_INIT);
    CHECK(PMIx_server_deliver_inventory(&rack, 1, nullptr, 0, nullptr, nullptr) == PMIX_ERR_INIT);
    PMIX_INFO_DESTRUCT(&rack);
  }

  TEST_CASE("a process set is told to the local clients, which query it, until it is deleted") {
    temp_dir dir;
    server srv(dir.path());  // no query up-call: the server answers these itself
    REQUIRE(srv.status() == PMIX_SUCCESS);
    REQUIRE(register_job("ps", 2, 2) == PMIX_SUCCESS);
    const std::string define = std::to_string(PMIX_PROCESS_SET_DEFINE);
    const std::string del = std::to_string(PMIX_PROCESS_SET_DELETE);
    auto r0 = launch_script(
        "ps", 0,
        {"init", "psets", "on_group_event:" + define, "on_group_event:" + del, "wait_group_event:" + define,
         "psets", "pset_members:blue", "pset_members:green", "wait_group_event:" + del, "psets", "finalize"},
        dir.path());
    REQUIRE(wait_for_output(r0, "on_group_event:" + del + " PMIX_SUCCESS"));
    pmix_proc_t members[2];
    PMIX_LOAD_PROCID(&members[0], "ps", 0);
    PMIX_LOAD_PROCID(&members[1], "ps", 1);
    CHECK(PMIx_server_define_process_set(members, 2, "blue") == PMIX_SUCCESS);
    CHECK(PMIx_server_define_process_set(members, 1, "blue") == PMIX_ERR_EXISTS);
    CHECK(PMIx_server_define_process_set(nullptr, 0, "red") == PMIX_ERR_BAD_PARAM);
    CHECK(PMIx_server_define_process_set(members, 2, "") == PMIX_ERR_BAD_PARAM);
    REQUIRE(wait_for_output(r0, "pset_members:green"));
    char blue[] = "blue";
    char none[] = "none";
    CHECK(PMIx_server_delete_process_set(blue) == PMIX_SUCCESS);
    CHECK(PMIx_server_delete_process_set(blue) == PMIX_ERR_NOT_FOUND);
    CHECK(PMIx_server_delete_process_set(none) == PMIX_ERR_NOT_FOUND);
    const auto out = finish(r0);
    CAPTURE(out);
    CHECK(contains(out, "psets PMIX_SUCCESS num=0 names=\n"));
    // (from the server itself)
    CHECK(contains(out, " id=? pset=blue members=2\npsets PMIX_SUCCESS num=1 names=blue\n"));
    CHECK(contains(out, "pset_members:blue PMIX_SUCCESS ps.0,ps.1\n"));
    CHECK(contains(out, "pset_members:green PMIX_ERR_NOT_FOUND"));
    CHECK(contains(out, "wait_group_event:" + define + " PMIX_SUCCESS "));
    CHECK(contains(out, "wait_group_event:" + del + " PMIX_SUCCESS "));
    CHECK(contains(out, " id=? pset=blue\npsets PMIX_SUCCESS num=0 names=\nfinalize"));
  }

  TEST_CASE("resources reach the jobs registered before and after; deregistered, they are gone") {
    temp_dir dir;
    server srv(dir.path());
    REQUIRE(srv.status() == PMIX_SUCCESS);
    REQUIRE(register_job("early", 3, 3) == PMIX_SUCCESS);
    pmix_info_t rack[2] = {string_info("site.rack", "r7"), string_info("site.row", "north")};
    CHECK(PMIx_server_register_resources(rack, 2, nullptr, nullptr) == PMIX_SUCCESS);
    // A second registration of a key replaces its value (non-blocking form).
    auto row = string_info("site.row", "south");
    answer a;
    CHECK(a.wait(PMIx_server_register_resources(&row, 1, op_done, &a)) == PMIX_SUCCESS);
    REQUIRE(register_job("late", 1, 1) == PMIX_SUCCESS);
    auto e0 =
        launch_script("early", 0, {"init", "get:*:site.rack", "get:*:site.row", "finalize"}, dir.path());
    auto l0 = launch_script("late", 0, {"init", "get:*:site.rack", "get:*:site.row", "finalize"}, dir.path());
    const auto early = finish(e0);
    const auto late = finish(l0);
    CAPTURE(early);
    CAPTURE(late);
    for (const auto& out : {early, late}) {
      CHECK(contains(out, "get:*:site.rack PMIX_SUCCESS r7"));
      CHECK(contains(out, "get:*:site.row PMIX_SUCCESS south"));
    }
    CHECK(!contains(early, "north"));

    // Deregistered: neither a new process of a job registered before nor a
    // new job sees it; the other resource stays.
    auto gone = string_info("site.rack", "any");
    CHECK(PMIx_server_deregister_resources(&gone, 1, nullptr, nullptr) == PMIX_SUCCESS);
    REQUIRE(register_job("after", 1, 1) == PMIX_SUCCESS);
    auto e1 =
        launch_script("early", 1, {"init", "get:*:site.rack", "get:*:site.row", "finalize"}, dir.path());
    auto a0 =
        launch_script("after", 0, {"init", "get:*:site.rack", "get:*:site.row", "finalize"}, dir.path());
    const auto early1 = finish(e1);
    const auto after = finish(a0);
    CAPTURE(early1);
    CAPTURE(after);
    for (const auto& out : {early1, after}) {
      CHECK(contains(out, "get:*:site.rack PMIX_ERR_NOT_FOUND"));
      CHECK(contains(out, "get:*:site.row PMIX_SUCCESS south"));
    }
    CHECK(PMIx_server_register_resources(nullptr, 0, nullptr, nullptr) == PMIX_ERR_BAD_PARAM);
    for (auto& i : rack) PMIX_INFO_DESTRUCT(&i);
    PMIX_INFO_DESTRUCT(&row);
    PMIX_INFO_DESTRUCT(&gone);
  }

  TEST_CASE("inventory: this node's is collected; another node's is delivered, kept and given back") {
    temp_dir dir;
    server srv(dir.path());
    REQUIRE(srv.status() == PMIX_SUCCESS);
    answer own;
    REQUIRE(own.wait(PMIx_server_collect_inventory(nullptr, 0, info_done, &own)) == PMIX_SUCCESS);
    CHECK(own.value_of(PMIX_HOSTNAME) == this_host());

    pmix_info_t inventory[2] = {string_info(PMIX_HOSTNAME, "node7"), string_info("inv.gpus", "4")};
    CHECK(PMIx_server_deliver_inventory(inventory, 2, nullptr, 0, nullptr, nullptr) == PMIX_SUCCESS);
    auto ask = string_info(PMIX_HOSTNAME, "node7");
    answer kept;
    REQUIRE(kept.wait(PMIx_server_collect_inventory(&ask, 1, info_done, &kept)) == PMIX_SUCCESS);
    CHECK(kept.value_of("inv.gpus") == "4");
    CHECK(kept.value_of(PMIX_HOSTNAME) == "node7");

    // A second delivery for the node replaces the first (non-blocking form).
    pmix_info_t again[2] = {string_info(PMIX_HOSTNAME, "node7"), string_info("inv.gpus", "2")};
    answer delivered;
    CHECK(delivered.wait(PMIx_server_deliver_inventory(again, 2, nullptr, 0, op_done, &delivered)) ==
          PMIX_SUCCESS);
    answer replaced;
    REQUIRE(replaced.wait(PMIx_server_collect_inventory(&ask, 1, info_done, &replaced)) == PMIX_SUCCESS);
    CHECK(replaced.value_of("inv.gpus") == "2");

    auto other = string_info(PMIX_HOSTNAME, "node8");
    answer missing;
    CHECK(missing.wait(PMIx_server_collect_inventory(&other, 1, info_done, &missing)) == PMIX_ERR_NOT_FOUND);
    CHECK(PMIx_server_deliver_inventory(&inventory[1], 1, nullptr, 0, nullptr, nullptr) ==
          PMIX_ERR_BAD_PARAM);
    CHECK(PMIx_server_collect_inventory(nullptr, 0, nullptr, nullptr) == PMIX_ERR_BAD_PARAM);
    for (auto& i : inventory) PMIX_INFO_DESTRUCT(&i);
    for (auto& i : again) PMIX_INFO_DESTRUCT(&i);
    PMIX_INFO_DESTRUCT(&ask);
    PMIX_INFO_DESTRUCT(&other);
  }
}
