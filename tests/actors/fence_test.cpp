// The server's fence trackers (actors/fence.hpp), driven without actors.
#include "actors/fence.hpp"

#include <doctest/doctest.h>
#include <pmix_common.h>

#include <algorithm>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "actors/messages.hpp"
#include "common/value.hpp"
#include "protocol/codec.hpp"
#include "protocol/messages.hpp"
#include "protocol/pmix.pb.h"

using pmix::info;
using pmix::info_list;
using pmix::proc_id;
using pmix::rank_t;
using pmix::rank_wildcard;
using pmix::value;
using pmix::actors::fence_book;
using pmix::actors::fence_msg;
using pmix::actors::fence_result;
using pmix::actors::fence_tracker;
using pmix::actors::nspace_locality;

namespace {

// The server's view of namespaces, as the book's locality callback sees it.
struct world {
  std::map<std::string, nspace_locality> nspaces;
  fence_book book{[this](const std::string& ns) -> const nspace_locality* {
    auto it = nspaces.find(ns);
    return it == nspaces.end() ? nullptr : &it->second;
  }};
};

proc_id wild(const std::string& ns) { return proc_id{ns, rank_wildcard}; }

fence_msg msg(proc_id from, std::vector<proc_id> procs, bool collect = false, std::string data = {}) {
  fence_msg m;
  m.from = std::move(from);
  m.procs = std::move(procs);
  m.collect = collect;
  m.data = std::make_shared<const std::string>(std::move(data));
  return m;
}

// Counts the calls each reply gets and what it was given.
struct replies {
  std::vector<int> calls;
  std::vector<pmix_status_t> statuses;
  std::vector<std::shared_ptr<const std::string>> data;
  std::vector<std::shared_ptr<const std::string>> bodies;

  fence_tracker::reply_fn make() {
    const std::size_t index = calls.size();
    calls.push_back(0);
    statuses.push_back(PMIX_ERR_NOT_AVAILABLE);
    data.emplace_back();
    bodies.emplace_back();
    return [this, index](const fence_result& r) {
      ++calls[index];
      statuses[index] = r.status;
      data[index] = r.data;
      bodies[index] = r.reply;
    };
  }
};

fence_tracker* contribute(world& w, replies& r, const fence_msg& m, pmix_status_t expected = PMIX_SUCCESS) {
  pmix_status_t status = PMIX_ERR_NOT_AVAILABLE;
  auto* t = w.book.contribute(m, r.make(), status);
  CHECK(status == expected);
  CHECK((t != nullptr) == (expected == PMIX_SUCCESS));
  return t;
}

// A contributor's serialized wire::RankData with one committed key.
std::string rank_blob(const proc_id& p, const std::string& key, const std::string& text) {
  pmix::wire::RankData d;
  pmix::protocol::to_wire(p, d.mutable_proc());
  auto* s = d.add_data();
  s->set_scope(PMIX_GLOBAL);
  pmix::protocol::to_wire(info{key, value::string(text), 0}, s->mutable_info());
  return d.SerializeAsString();
}

}  // namespace

TEST_SUITE("fence") {
  TEST_CASE("canonical sorts and removes duplicates") {
    const auto c = fence_book::canonical({{"b", 2}, {"a", 7}, {"b", 0}, {"a", 7}, {"a", 1}, {"b", 2}});
    const std::vector<proc_id> expected{{"a", 1}, {"a", 7}, {"b", 0}, {"b", 2}};
    CHECK(c == expected);
    CHECK(fence_book::canonical({}).empty());
    CHECK(fence_book::canonical({{"x", 3}}) == std::vector<proc_id>{{"x", 3}});
  }

  TEST_CASE("canonical: a wildcard subsumes the ranks of its own namespace only") {
    const auto c = fence_book::canonical({{"a", 3}, wild("a"), {"b", 1}, {"a", 0}, wild("a"), {"c", 5}, wild("c")});
    const std::vector<proc_id> expected{wild("a"), {"b", 1}, wild("c")};
    CHECK(c == expected);
    // The special ranks above the wildcard (PMIX_RANK_UNDEF) are subsumed too.
    CHECK(fence_book::canonical({{"a", pmix::rank_undef}, wild("a"), {"a", 2}}) ==
          std::vector<proc_id>{wild("a")});
    CHECK(fence_book::canonical({{"a", pmix::rank_undef}, {"a", 2}}) ==
          std::vector<proc_id>{{"a", 2}, {"a", pmix::rank_undef}});
    // A namespace whose name is a prefix of another's is a different namespace.
    const auto d = fence_book::canonical({wild("ab"), {"a", 1}, {"abc", 2}});
    const std::vector<proc_id> expected_d{{"a", 1}, wild("ab"), {"abc", 2}};
    CHECK(d == expected_d);
  }

  TEST_CASE("an all-local wildcard fence is ready only when every local rank contributed") {
    world w;
    w.nspaces["job"] = nspace_locality{{0, 1, 2}, 3u};
    replies r;
    auto* t = contribute(w, r, msg({"job", 1}, {wild("job")}));
    REQUIRE(t != nullptr);
    const auto id = t->id;
    CHECK(t->all_local);
    CHECK(t->procs == std::vector<proc_id>{wild("job")});
    CHECK(t->expected == std::vector<proc_id>{{"job", 0}, {"job", 1}, {"job", 2}});
    CHECK_FALSE(t->ready());

    t = contribute(w, r, msg({"job", 0}, {wild("job")}));
    REQUIRE(t != nullptr);
    CHECK(t->id == id);  // the same tracker
    CHECK_FALSE(t->ready());
    t = contribute(w, r, msg({"job", 2}, {wild("job")}));
    REQUIRE(t != nullptr);
    CHECK(t->id == id);
    CHECK(t->ready());
    CHECK(t->arrived().size() == 3);
    CHECK(w.book.size() == 1);
    CHECK(r.calls == std::vector<int>{0, 0, 0});  // nobody is answered before complete
  }

  TEST_CASE("participant lists in any order and with duplicates share one tracker") {
    world w;
    w.nspaces["job"] = nspace_locality{{0, 1}, 2u};
    replies r;
    auto* a = contribute(w, r, msg({"job", 0}, {{"job", 1}, {"job", 0}}));
    auto* b = contribute(w, r, msg({"job", 1}, {{"job", 0}, {"job", 1}, {"job", 0}}));
    REQUIRE(a != nullptr);
    REQUIRE(b != nullptr);
    CHECK(a->id == b->id);
    CHECK(w.book.size() == 1);
    CHECK(b->ready());
    CHECK(b->all_local);

    // A different set is a different tracker.
    auto* c = contribute(w, r, msg({"job", 0}, {{"job", 0}}));
    REQUIRE(c != nullptr);
    CHECK(c->id != b->id);
    CHECK(w.book.size() == 2);
  }

  TEST_CASE("the same processes under different tags (groups) are different collectives") {
    world w;
    w.nspaces["job"] = nspace_locality{{0, 1}, 2u};
    replies r;
    auto tagged = [](proc_id from, std::string tag) {
      auto m = msg(std::move(from), {{"job", 0}, {"job", 1}});
      m.tag = std::move(tag);
      return m;
    };
    auto* a = contribute(w, r, tagged({"job", 0}, "red"));
    auto* b = contribute(w, r, tagged({"job", 1}, "blue"));
    auto* c = contribute(w, r, msg({"job", 0}, {{"job", 0}, {"job", 1}}));  // a fence: no tag
    REQUIRE(a != nullptr);
    REQUIRE(b != nullptr);
    REQUIRE(c != nullptr);
    CHECK(a->id != b->id);
    CHECK(c->id != a->id);
    CHECK(c->id != b->id);
    CHECK(w.book.size() == 3);
    CHECK(!a->ready());
    auto* a2 = contribute(w, r, tagged({"job", 1}, "red"));
    REQUIRE(a2 != nullptr);
    CHECK(a2->id == a->id);
    CHECK(a2->ready());
    CHECK(a2->tag == "red");
    // Completing it leaves the others, and frees the key for a new "red".
    w.book.complete(a2->id, fence_result{});
    CHECK(w.book.size() == 2);
    auto* again = contribute(w, r, tagged({"job", 0}, "red"));
    REQUIRE(again != nullptr);
    CHECK(!again->ready());
  }

  TEST_CASE("a fence over a namespace with remote ranks is not all_local") {
    world w;
    w.nspaces["job"] = nspace_locality{{0, 1}, 4u};  // ranks 2 and 3 run elsewhere
    replies r;
    auto* t = contribute(w, r, msg({"job", 0}, {wild("job")}));
    REQUIRE(t != nullptr);
    CHECK_FALSE(t->all_local);
    CHECK(t->expected == std::vector<proc_id>{{"job", 0}, {"job", 1}});
    CHECK_FALSE(t->ready());
    t = contribute(w, r, msg({"job", 1}, {wild("job")}));
    CHECK(t->ready());  // ready to go to the host: every local rank is in
    CHECK_FALSE(t->all_local);

    // Naming a remote rank explicitly is not all_local either, and the remote
    // rank is not expected here.
    auto* e = contribute(w, r, msg({"job", 0}, {{"job", 0}, {"job", 3}}));
    REQUIRE(e != nullptr);
    CHECK_FALSE(e->all_local);
    CHECK(e->expected == std::vector<proc_id>{{"job", 0}});
    CHECK(e->ready());

    // Only local ranks named explicitly: all_local.
    auto* l = contribute(w, r, msg({"job", 1}, {{"job", 0}, {"job", 1}}));
    REQUIRE(l != nullptr);
    CHECK(l->all_local);
    CHECK_FALSE(l->ready());
  }

  TEST_CASE("all_local needs a known job size and known namespaces") {
    world w;
    w.nspaces["nosize"] = nspace_locality{{0, 1}, std::nullopt};
    w.nspaces["job"] = nspace_locality{{0}, 1u};
    replies r;
    auto* t = contribute(w, r, msg({"nosize", 0}, {wild("nosize")}));
    REQUIRE(t != nullptr);
    CHECK_FALSE(t->all_local);

    // A second namespace the server does not know: the contributor is still
    // expected (it is local by definition), but the fence is not all_local.
    auto* u = contribute(w, r, msg({"job", 0}, {wild("job"), wild("elsewhere")}));
    REQUIRE(u != nullptr);
    CHECK_FALSE(u->all_local);
    CHECK(u->expected == std::vector<proc_id>{{"job", 0}});
    CHECK(u->ready());

    auto* v = contribute(w, r, msg({"ghost", 4}, {wild("ghost")}));
    REQUIRE(v != nullptr);
    CHECK_FALSE(v->all_local);
    CHECK(v->expected == std::vector<proc_id>{{"ghost", 4}});
    CHECK(v->ready());
  }

  TEST_CASE("a fence spanning two all-local namespaces is all_local") {
    world w;
    w.nspaces["a"] = nspace_locality{{0, 1}, 2u};
    w.nspaces["b"] = nspace_locality{{0}, 1u};
    replies r;
    auto* t = contribute(w, r, msg({"b", 0}, {wild("a"), wild("b")}));
    REQUIRE(t != nullptr);
    CHECK(t->all_local);
    CHECK(t->expected.size() == 3);
    contribute(w, r, msg({"a", 0}, {wild("b"), wild("a")}));
    CHECK_FALSE(t->ready());
    contribute(w, r, msg({"a", 1}, {wild("a"), wild("b"), {"a", 1}}));
    CHECK(t->ready());
  }

  TEST_CASE("a contributor the participants do not name is refused") {
    world w;
    w.nspaces["job"] = nspace_locality{{0, 1, 2}, 3u};
    replies r;
    // A new fence whose list leaves out the caller: no tracker is created.
    contribute(w, r, msg({"job", 2}, {{"job", 0}, {"job", 1}}), PMIX_ERR_BAD_PARAM);
    CHECK(w.book.size() == 0);
    contribute(w, r, msg({"other", 0}, {wild("job")}), PMIX_ERR_BAD_PARAM);
    CHECK(w.book.size() == 0);
    contribute(w, r, msg({"job", 0}, {}), PMIX_ERR_BAD_PARAM);
    CHECK(w.book.size() == 0);

    // An existing fence: the tracker is left as it was.
    auto* t = contribute(w, r, msg({"job", 0}, {{"job", 0}, {"job", 1}}));
    REQUIRE(t != nullptr);
    const auto id = t->id;
    contribute(w, r, msg({"job", 2}, {{"job", 1}, {"job", 0}}), PMIX_ERR_BAD_PARAM);
    t = w.book.find(id);
    REQUIRE(t != nullptr);
    CHECK(t->arrived() == std::vector<proc_id>{{"job", 0}});
    CHECK(t->expected == std::vector<proc_id>{{"job", 0}, {"job", 1}});
    CHECK(t->replies.size() == 1);
    // The refused callers' replies were never stored, so complete skips them.
    w.book.complete(id, fence_result{PMIX_SUCCESS, nullptr});
    CHECK(r.calls == std::vector<int>{0, 0, 0, 1, 0});
  }

  TEST_CASE("a collect-flag mismatch is refused") {
    world w;
    w.nspaces["job"] = nspace_locality{{0, 1}, 2u};
    replies r;
    auto* t = contribute(w, r, msg({"job", 0}, {wild("job")}, true, rank_blob({"job", 0}, "k", "v0")));
    REQUIRE(t != nullptr);
    const auto id = t->id;
    const auto data_before = t->data;
    contribute(w, r, msg({"job", 1}, {wild("job")}, false), PMIX_ERR_BAD_PARAM);
    t = w.book.find(id);
    REQUIRE(t != nullptr);
    CHECK(t->arrived().size() == 1);
    CHECK_FALSE(t->ready());
    CHECK(t->collect);
    CHECK(t->data == data_before);
    CHECK(t->replies.size() == 1);
    // The same proc may still contribute with the right flag.
    t = contribute(w, r, msg({"job", 1}, {wild("job")}, true, rank_blob({"job", 1}, "k", "v1")));
    REQUIRE(t != nullptr);
    CHECK(t->ready());

    // And the other way round: a non-collecting fence refuses a collecting one.
    world w2;
    w2.nspaces["job"] = nspace_locality{{0, 1}, 2u};
    replies r2;
    contribute(w2, r2, msg({"job", 0}, {wild("job")}, false));
    contribute(w2, r2, msg({"job", 1}, {wild("job")}, true, "x"), PMIX_ERR_BAD_PARAM);
  }

  TEST_CASE("a duplicate contribution from the same proc does not count twice") {
    world w;
    w.nspaces["job"] = nspace_locality{{0, 1}, 2u};
    replies r;
    auto* t = contribute(w, r, msg({"job", 0}, {wild("job")}, true, rank_blob({"job", 0}, "k", "first")));
    t = contribute(w, r, msg({"job", 0}, {wild("job")}, true, rank_blob({"job", 0}, "k", "second")));
    REQUIRE(t != nullptr);
    CHECK(t->arrived().size() == 1);
    CHECK_FALSE(t->ready());
    CHECK(w.book.waiting_for({"job", 1}) == std::vector<std::uint64_t>{t->id});

    t = contribute(w, r, msg({"job", 1}, {wild("job")}, true, rank_blob({"job", 1}, "k", "other")));
    CHECK(t->ready());
    // Only the first contribution's data was kept.
    pmix::wire::ModexData m;
    REQUIRE(m.ParseFromString(t->data));
    REQUIRE(m.ranks_size() == 2);
    info first;
    REQUIRE(pmix::protocol::from_wire(m.ranks(0).data(0).info(), first));
    CHECK(*first.val.as_string() == "first");
    // Every caller, the duplicate included, gets an answer exactly once.
    w.book.complete(t->id, fence_result{PMIX_SUCCESS, nullptr});
    CHECK(r.calls == std::vector<int>{1, 1, 1});
  }

  TEST_CASE("collected data is a parseable ModexData holding each contributor's RankData") {
    world w;
    w.nspaces["job"] = nspace_locality{{0, 1, 2, 3}, 4u};
    replies r;
    std::vector<std::string> blobs;
    fence_tracker* t = nullptr;
    for (rank_t rank : {2u, 0u, 3u, 1u}) {
      // A blob big enough for a multi-byte length prefix.
      blobs.push_back(rank_blob({"job", rank}, "key", std::string(200 + rank, static_cast<char>('a' + rank))));
      t = contribute(w, r, msg({"job", rank}, {wild("job")}, true, blobs.back()));
      REQUIRE(t != nullptr);
    }
    REQUIRE(t->ready());
    pmix::wire::ModexData m;
    REQUIRE(m.ParseFromString(t->data));
    REQUIRE(m.ranks_size() == 4);
    const rank_t order[] = {2, 0, 3, 1};  // arrival order
    for (int i = 0; i < 4; ++i) {
      CAPTURE(i);
      CHECK(m.ranks(i).SerializeAsString() == blobs[static_cast<std::size_t>(i)]);
      CHECK(pmix::protocol::from_wire(m.ranks(i).proc()) == proc_id{"job", order[i]});
    }

    // Completing hands the result (and the data given to it) to every caller.
    auto data = std::make_shared<const std::string>(t->data);
    w.book.complete(t->id, fence_result{PMIX_SUCCESS, data});
    for (std::size_t i = 0; i < 4; ++i) {
      CHECK(r.calls[i] == 1);
      CHECK(r.statuses[i] == PMIX_SUCCESS);
      CHECK(r.data[i] == data);
    }
    // Every caller gets the one reply body, encoded once, which carries the
    // status and the data as a FenceReply would.
    REQUIRE(r.bodies[0] != nullptr);
    for (std::size_t i = 1; i < 4; ++i) CHECK(r.bodies[i] == r.bodies[0]);
    pmix::wire::FenceReply reply;
    REQUIRE(reply.ParseFromString(*r.bodies[0]));
    CHECK(reply.status() == PMIX_SUCCESS);
    CHECK(reply.data() == *data);
  }

  TEST_CASE("the reply says when the data holds every rank of the fence's one namespace, and only then") {
    // Runs a collecting fence over `procs` of "job" (4 ranks) where each
    // rank in `with_data` commits a key; returns the reply the clients get.
    auto run = [](std::vector<proc_id> procs, std::vector<rank_t> contributors, std::vector<rank_t> with_data,
                  pmix_status_t status = PMIX_SUCCESS) {
      world w;
      w.nspaces["job"] = nspace_locality{{0, 1, 2, 3}, 4u};
      replies r;
      fence_tracker* t = nullptr;
      for (rank_t rank : contributors) {
        const bool has = std::find(with_data.begin(), with_data.end(), rank) != with_data.end();
        t = contribute(w, r, msg({"job", rank}, procs, true, has ? rank_blob({"job", rank}, "k", "v") : ""));
      }
      REQUIRE(t != nullptr);
      REQUIRE(t->ready());
      w.book.complete(t->id, fence_result{status, std::make_shared<const std::string>(t->data)});
      pmix::wire::FenceReply reply;
      REQUIRE(r.bodies[0] != nullptr);
      REQUIRE(reply.ParseFromString(*r.bodies[0]));
      // The client's own reader sees the same.
      pmix::protocol::status_reply mine;
      REQUIRE(pmix::protocol::decode(*r.bodies[0], pmix::protocol::body::fence_reply, mine));
      CHECK(mine.whole_namespace == reply.whole_namespace());
      return reply;
    };
    CHECK(run({wild("job")}, {3, 1, 0, 2}, {0, 1, 2, 3}).whole_namespace());
    // A rank that committed nothing is not in the data.
    CHECK_FALSE(run({wild("job")}, {3, 1, 0, 2}, {0, 1, 3}).whole_namespace());
    // The same ranks named one by one: not a wildcard.
    CHECK_FALSE(run({{"job", 0}, {"job", 1}, {"job", 2}, {"job", 3}}, {0, 1, 2, 3}, {0, 1, 2, 3}).whole_namespace());
    // A failed fence.
    CHECK_FALSE(run({wild("job")}, {0, 1, 2, 3}, {0, 1, 2, 3}, PMIX_ERR_TIMEOUT).whole_namespace());

    // Data from the host (other nodes' ranks) is looked at the same way: a
    // rank twice, or a rank beyond the job, is not the whole namespace.
    world w;
    w.nspaces["job"] = nspace_locality{{0, 1}, 4u};
    replies r;
    contribute(w, r, msg({"job", 0}, {wild("job")}, true, rank_blob({"job", 0}, "k", "v")));
    auto* t = contribute(w, r, msg({"job", 1}, {wild("job")}, true, rank_blob({"job", 1}, "k", "v")));
    REQUIRE(t->ready());
    const auto id = t->id;
    auto from_host = [&](std::vector<rank_t> ranks) {
      pmix::wire::ModexData m;
      for (rank_t rank : ranks) m.add_ranks()->ParseFromString(rank_blob({"job", rank}, "k", "v"));
      return std::make_shared<const std::string>(m.SerializeAsString());
    };
    pmix::wire::FenceReply reply;
    for (const auto& ranks : std::vector<std::vector<rank_t>>{{0, 1, 2, 2}, {0, 1, 2, 4}, {0, 1, 2}}) {
      world w2;
      w2.nspaces["job"] = nspace_locality{{0, 1}, 4u};
      replies r2;
      contribute(w2, r2, msg({"job", 0}, {wild("job")}, true, rank_blob({"job", 0}, "k", "v")));
      auto* t2 = contribute(w2, r2, msg({"job", 1}, {wild("job")}, true, rank_blob({"job", 1}, "k", "v")));
      w2.book.complete(t2->id, fence_result{PMIX_SUCCESS, from_host(ranks)});
      REQUIRE(reply.ParseFromString(*r2.bodies[0]));
      CHECK_FALSE(reply.whole_namespace());
    }
    w.book.complete(id, fence_result{PMIX_SUCCESS, from_host({2, 0, 3, 1})});
    REQUIRE(reply.ParseFromString(*r.bodies[0]));
    CHECK(reply.whole_namespace());
  }

  TEST_CASE("a non-collecting fence keeps no data, an empty contribution adds no entry") {
    world w;
    w.nspaces["job"] = nspace_locality{{0, 1}, 2u};
    replies r;
    auto* t = contribute(w, r, msg({"job", 0}, {wild("job")}, false, "ignored"));
    REQUIRE(t != nullptr);
    CHECK(t->data.empty());

    world w2;
    w2.nspaces["job"] = nspace_locality{{0, 1}, 2u};
    auto* c = contribute(w2, r, msg({"job", 0}, {wild("job")}, true, ""));
    c = contribute(w2, r, msg({"job", 1}, {wild("job")}, true, rank_blob({"job", 1}, "k", "v")));
    pmix::wire::ModexData m;
    REQUIRE(m.ParseFromString(c->data));
    REQUIRE(m.ranks_size() == 1);
    CHECK(m.ranks(0).proc().rank() == 1);
  }

  TEST_CASE("the first contributor's directives are kept") {
    world w;
    w.nspaces["job"] = nspace_locality{{0, 1}, 2u};
    replies r;
    auto first = msg({"job", 0}, {wild("job")});
    first.info = info_list{info{PMIX_TIMEOUT, value::integer(PMIX_INT, 10), 0}};
    auto* t = contribute(w, r, first);
    auto second = msg({"job", 1}, {wild("job")});
    second.info = info_list{info{"other", value::boolean(true), 0}};
    t = contribute(w, r, second);
    REQUIRE(t->info.size() == 1);
    CHECK(t->info[0].key == PMIX_TIMEOUT);
  }

  TEST_CASE("complete calls every reply exactly once and forgets the tracker") {
    world w;
    w.nspaces["job"] = nspace_locality{{0, 1, 2}, 3u};
    replies r;
    auto* t = contribute(w, r, msg({"job", 0}, {wild("job")}));
    contribute(w, r, msg({"job", 1}, {wild("job")}));
    const auto id = t->id;
    w.book.complete(id, fence_result{PMIX_ERR_PROC_ABORTED, nullptr});
    CHECK(r.calls == std::vector<int>{1, 1});
    CHECK(r.statuses == std::vector<pmix_status_t>{PMIX_ERR_PROC_ABORTED, PMIX_ERR_PROC_ABORTED});
    CHECK(w.book.find(id) == nullptr);
    CHECK(w.book.size() == 0);
    CHECK(w.book.waiting_for({"job", 2}).empty());
    CHECK(w.book.naming("job").empty());

    // Completing again, or an unknown id, calls nothing.
    w.book.complete(id, fence_result{PMIX_SUCCESS, nullptr});
    w.book.complete(12345, fence_result{PMIX_SUCCESS, nullptr});
    CHECK(r.calls == std::vector<int>{1, 1});

    // The same participants start a fresh tracker with a new id.
    auto* again = contribute(w, r, msg({"job", 2}, {wild("job")}));
    REQUIRE(again != nullptr);
    CHECK(again->id != id);
    CHECK(again->arrived() == std::vector<proc_id>{{"job", 2}});
  }

  TEST_CASE("a reply may start the next fence while complete runs") {
    world w;
    w.nspaces["job"] = nspace_locality{{0}, 1u};
    int next_calls = 0;
    std::uint64_t next_id = 0;
    pmix_status_t status = PMIX_ERR_NOT_AVAILABLE;
    auto* t = w.book.contribute(
        msg({"job", 0}, {wild("job")}),
        [&](const fence_result&) {
          // The client immediately enters the next fence over the same procs.
          pmix_status_t s = PMIX_ERR_NOT_AVAILABLE;
          auto* n = w.book.contribute(msg({"job", 0}, {wild("job")}),
                                      [&](const fence_result&) { ++next_calls; }, s);
          REQUIRE(n != nullptr);
          next_id = n->id;
        },
        status);
    REQUIRE(t != nullptr);
    const auto id = t->id;
    w.book.complete(id, fence_result{PMIX_SUCCESS, nullptr});
    CHECK(next_id != 0);
    CHECK(next_id != id);
    REQUIRE(w.book.find(next_id) != nullptr);
    CHECK(w.book.find(next_id)->ready());
    CHECK(next_calls == 0);
    w.book.complete(next_id, fence_result{PMIX_SUCCESS, nullptr});
    CHECK(next_calls == 1);
    CHECK(w.book.size() == 0);
  }

  TEST_CASE("waiting_for lists the trackers that expect a proc that has not arrived") {
    world w;
    w.nspaces["job"] = nspace_locality{{0, 1, 2}, 5u};
    replies r;
    auto* all = contribute(w, r, msg({"job", 0}, {wild("job")}));
    const auto all_id = all->id;
    auto* pair = contribute(w, r, msg({"job", 1}, {{"job", 1}, {"job", 2}}));
    const auto pair_id = pair->id;
    auto* solo = contribute(w, r, msg({"job", 0}, {{"job", 0}}));
    const auto solo_id = solo->id;

    CHECK(w.book.waiting_for({"job", 0}).empty());  // arrived wherever expected
    CHECK(w.book.waiting_for({"job", 1}) == std::vector<std::uint64_t>{all_id});
    CHECK(w.book.waiting_for({"job", 2}) == std::vector<std::uint64_t>{all_id, pair_id});
    CHECK(w.book.waiting_for({"job", 4}).empty());  // remote: never expected here
    CHECK(w.book.waiting_for({"other", 0}).empty());
    CHECK(w.book.find(solo_id)->ready());

    contribute(w, r, msg({"job", 2}, {{"job", 2}, {"job", 1}}));
    CHECK(w.book.waiting_for({"job", 2}) == std::vector<std::uint64_t>{all_id});
    CHECK(w.book.find(pair_id)->ready());
  }

  TEST_CASE("naming lists the trackers with a participant of a namespace") {
    world w;
    w.nspaces["a"] = nspace_locality{{0, 1}, 2u};
    w.nspaces["b"] = nspace_locality{{0, 1}, 2u};
    replies r;
    const auto only_a = contribute(w, r, msg({"a", 0}, {wild("a")}))->id;
    const auto both = contribute(w, r, msg({"b", 1}, {{"a", 0}, {"a", 1}, {"b", 1}}))->id;
    const auto only_b = contribute(w, r, msg({"b", 0}, {{"b", 0}}))->id;
    CHECK(w.book.naming("a") == std::vector<std::uint64_t>{only_a, both});  // each id once
    CHECK(w.book.naming("b") == std::vector<std::uint64_t>{both, only_b});
    CHECK(w.book.naming("c").empty());
    CHECK(w.book.naming("").empty());
  }

  TEST_CASE("includes matches explicit ranks and wildcards of the same namespace") {
    fence_tracker t;
    t.procs = {wild("a"), {"b", 3}};
    CHECK(t.includes({"a", 0}));
    CHECK(t.includes({"a", 99}));
    CHECK(t.includes({"b", 3}));
    CHECK_FALSE(t.includes({"b", 4}));
    CHECK_FALSE(t.includes({"c", 3}));
    CHECK_FALSE(t.includes({"", 3}));
  }

  TEST_CASE("ready means every expected proc has arrived") {
    fence_tracker t;
    CHECK(t.ready());  // nothing expected
    CHECK(t.expect({"a", 1}) == 0);
    CHECK(t.expect({"a", 0}) == 0);  // kept sorted
    CHECK(t.expect({"a", 1}) == 1);  // once each
    CHECK(t.expected == std::vector<proc_id>{{"a", 0}, {"a", 1}});
    CHECK_FALSE(t.ready());
    t.arrived_flags[1] = true;
    ++t.arrived_count;
    CHECK_FALSE(t.ready());
    CHECK(t.waits_for({"a", 0}));
    CHECK_FALSE(t.waits_for({"a", 1}));
    CHECK_FALSE(t.waits_for({"a", 7}));  // never expected
    t.arrived_flags[0] = true;
    ++t.arrived_count;
    CHECK(t.ready());
    CHECK(t.arrived() == t.expected);
  }
}
