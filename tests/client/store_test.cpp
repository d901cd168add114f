// The client's store (client/store.hpp): what it answers without asking the
// server after fences and direct-modex replies.
#include "client/store.hpp"

#include <doctest/doctest.h>
#include <pmix_common.h>

#include <memory>
#include <string>
#include <vector>

#include "protocol/codec.hpp"
#include "protocol/pmix.pb.h"

using pmix::info;
using pmix::proc_id;
using pmix::rank_wildcard;
using pmix::value;
using pmix::client::store;

namespace {

const proc_id self{"job", 9};

// A ModexData as a collecting fence delivers it: one RankData per rank that
// committed something, with one global key each.
std::string modex(const std::vector<std::pair<proc_id, std::string>>& ranks) {
  pmix::wire::ModexData m;
  for (const auto& [p, text] : ranks) {
    auto* r = m.add_ranks();
    pmix::protocol::to_wire(p, r->mutable_proc());
    auto* item = r->add_data();
    item->set_scope(PMIX_GLOBAL);
    pmix::protocol::to_wire(info{"k", value::string(text), 0}, item->mutable_info());
  }
  return m.SerializeAsString();
}

// A RankData whose process reads, but whose one item is not a well-formed
// Info: the tag byte 0xff starts a varint that never ends.
std::string unreadable_rank(pmix::rank_t rank) {
  pmix::wire::RankData r;
  pmix::protocol::to_wire(proc_id{"job", rank}, r.mutable_proc());
  std::string bytes = r.SerializeAsString();
  const std::string item = std::string{"\x08\x01\x12\x01\xff", 5};  // scope 1, info: 0xff
  bytes += '\x12';
  bytes += static_cast<char>(item.size());
  bytes += item;
  std::string out = "\x0a";  // ModexData.ranks
  out += static_cast<char>(bytes.size());
  return out + bytes;
}

// Hands the store `p`'s data as a direct-modex reply brings it: one key "k".
bool add_direct_modex(store& s, const proc_id& p, const std::string& text, const proc_id& me) {
  pmix::wire::ModexData m;
  REQUIRE(m.ParseFromString(modex({{p, text}})));
  const std::string bytes = m.ranks(0).SerializeAsString();
  pmix::protocol::rank_data data;  // views of `bytes`
  std::string error;
  REQUIRE(pmix::protocol::decode(bytes, data, &error));
  return s.add_peer_data(data, me, &error);
}

// keep_modex of `bytes`, which only the store then holds (its owner).
void keep(store& s, std::string bytes, const std::string& nspace, const proc_id& me) {
  auto owner = std::make_shared<const std::string>(std::move(bytes));
  const std::string_view view{*owner};
  s.keep_modex(std::move(owner), view, nspace, me);
}

// A collecting fence over the whole of "job" completed.
void wildcard_fence(store& s) {
  s.fence_completed();
  s.participants_complete({{"job", rank_wildcard}});
}

// One run of JobInfo.local_runs: little-endian first rank and count.
std::string run(std::uint32_t first, std::uint32_t count) {
  std::string out;
  for (std::uint32_t v : {first, count})
    for (int k = 0; k < 4; ++k) out += static_cast<char>((v >> (8 * k)) & 0xff);
  return out;
}

// One run of JobInfo.local_strided_runs: little-endian first rank, count
// and stride.
std::string strided(std::uint32_t first, std::uint32_t count, std::uint32_t stride) {
  return run(first, count) + run(stride, 0).substr(0, 4);
}

}  // namespace

TEST_SUITE("client store") {
  TEST_CASE("kept whole-namespace fence data is indexed at the first lookup; a newer one replaces it unread") {
    store s;
    const proc_id me{"job", 3};
    s.store_value(me, "k", value::string("mine"));
    std::string error;
    wildcard_fence(s);
    keep(s, modex({{{"job", 0}, "a0"}, {{"job", 1}, "a1"}, {{"job", 2}, "a2"}, {me, "a3"}}), "job", me);
    wildcard_fence(s);
    keep(s, modex({{{"job", 2}, "b2"}, {{"job", 0}, "b0"}, {me, "b3"}, {{"job", 1}, "b1"}}), "job", me);
    for (pmix::rank_t r : {0u, 1u, 2u}) {
      CAPTURE(r);
      REQUIRE(s.peer_value({"job", r}, "k") != nullptr);
      CHECK(*s.peer_value({"job", r}, "k")->as_string() == "b" + std::to_string(r));
      CHECK(s.has_complete_data({"job", r}));
    }
    CHECK(*s.peer_value(me, "k")->as_string() == "mine");

    // Kept unread, its items are checked only when indexed: a rank whose
    // item is malformed does not fail the fence; the ranks before it are
    // read, that rank and those after it have no data from that fence.
    wildcard_fence(s);
    keep(s, modex({{{"job", 0}, "c0"}, {me, "c3"}}) + unreadable_rank(1) + modex({{{"job", 2}, "c2"}}), "job",
         me);
    CHECK(*s.peer_value({"job", 0}, "k")->as_string() == "c0");
    // Ranks 1 and 2 keep what was decoded from the fence before.
    CHECK(*s.peer_value({"job", 1}, "k")->as_string() == "b1");
    CHECK(*s.peer_value({"job", 2}, "k")->as_string() == "b2");

    // Direct-modex data arriving after kept fence data wins over it.
    wildcard_fence(s);
    keep(s, modex({{{"job", 0}, "d0"}, {{"job", 1}, "d1"}, {{"job", 2}, "d2"}, {me, "d3"}}), "job", me);
    REQUIRE(add_direct_modex(s, {"job", 1}, "from direct modex", me));
    CHECK(*s.peer_value({"job", 1}, "k")->as_string() == "from direct modex");
    CHECK(*s.peer_value({"job", 2}, "k")->as_string() == "d2");

    // Kept data of another namespace is indexed before it is replaced.
    wildcard_fence(s);
    s.participants_complete({{"other", rank_wildcard}});
    keep(s, modex({{{"job", 0}, "e0"}}), "job", me);
    keep(s, modex({{{"other", 0}, "o0"}}), "other", me);
    CHECK(*s.peer_value({"job", 0}, "k")->as_string() == "e0");
    CHECK(*s.peer_value({"other", 0}, "k")->as_string() == "o0");
  }

  TEST_CASE("fence data decoded at a lookup after a later fence does not make its rank complete again") {
    // Rank 0's data came with one fence and is first read after the next
    // one: rank 0 may have committed more since, so a key it lacks must be
    // asked of the server, not answered "not found" from this data.
    store s;
    std::string error;
    s.fence_completed();
    s.participants_complete({{"job", 0}});
    REQUIRE(s.add_modex(modex({{{"job", 0}, "zero"}}), self, &error));
    CHECK(s.has_complete_data({"job", 0}));
    s.fence_completed();  // a fence that collects nothing
    REQUIRE(s.peer_value({"job", 0}, "k") != nullptr);
    CHECK(*s.peer_value({"job", 0}, "k")->as_string() == "zero");
    CHECK_FALSE(s.has_complete_data({"job", 0}));

    // Direct-modex data is everything the rank had committed: complete.
    REQUIRE(add_direct_modex(s, {"job", 0}, "from direct modex", self));
    CHECK(s.has_complete_data({"job", 0}));
  }

  TEST_CASE("fence data that is not kept is indexed and checked at once, after kept data") {
    store s;
    const proc_id me{"job", 3};
    std::string error;
    wildcard_fence(s);
    keep(s, modex({{{"job", 0}, "a0"}, {{"job", 1}, "a1"}, {{"job", 2}, "a2"}, {me, "a3"}}), "job", me);
    // A fence of rank 1 alone: its data is newer than the kept data.
    s.fence_completed();
    s.participants_complete({{"job", 1}});
    REQUIRE(s.add_modex(modex({{{"job", 1}, "c1"}}), me, &error));
    CHECK(*s.peer_value({"job", 1}, "k")->as_string() == "c1");
    CHECK(*s.peer_value({"job", 0}, "k")->as_string() == "a0");
    CHECK(s.has_complete_data({"job", 1}));
    CHECK_FALSE(s.has_complete_data({"job", 0}));

    // Not kept, a malformed item fails the fence.
    wildcard_fence(s);
    error.clear();
    CHECK_FALSE(s.add_modex(modex({{{"job", 0}, "e0"}, {me, "e3"}}) + unreadable_rank(1), me, &error));
    CHECK_FALSE(error.empty());
  }

  TEST_CASE("a collecting fence makes every participant complete, whether it sent data or not") {
    store s;
    s.fence_completed();
    std::string error;
    REQUIRE(s.add_modex(modex({{{"job", 0}, "zero"}, {{"job", 2}, "two"}}), self, &error));
    s.participants_complete({{"job", rank_wildcard}});
    for (pmix::rank_t r : {0u, 1u, 2u, 3u}) {
      CAPTURE(r);
      CHECK(s.has_complete_data({"job", r}));  // rank 1 and 3 sent nothing: they have nothing
    }
    CHECK_FALSE(s.has_complete_data({"other", 0}));
    REQUIRE(s.peer_value({"job", 2}, "k") != nullptr);
    CHECK(*s.peer_value({"job", 2}, "k")->as_string() == "two");
    CHECK(s.peer_value({"job", 1}, "k") == nullptr);

    // The next fence: peers may have committed more since.
    s.fence_completed();
    CHECK_FALSE(s.has_complete_data({"job", 0}));
    CHECK_FALSE(s.has_complete_data({"job", 1}));
  }

  TEST_CASE("explicit participants are complete, the other ranks are not") {
    store s;
    s.fence_completed();
    std::string error;
    REQUIRE(s.add_modex(modex({{{"job", 3}, "three"}}), self, &error));
    s.participants_complete({{"job", 1}, {"job", 3}});
    CHECK(s.has_complete_data({"job", 1}));
    CHECK(s.has_complete_data({"job", 3}));
    CHECK_FALSE(s.has_complete_data({"job", 2}));
    CHECK_FALSE(s.has_complete_data({"job", 0}));
  }

  TEST_CASE("ranks in the fence data are complete even without a participant list") {
    store s;
    s.fence_completed();
    std::string error;
    REQUIRE(s.add_modex(modex({{{"job", 4}, "four"}}), self, &error));
    CHECK(s.has_complete_data({"job", 4}));
    CHECK_FALSE(s.has_complete_data({"job", 5}));
    s.clear();
    CHECK_FALSE(s.has_complete_data({"job", 4}));
  }

  TEST_CASE("fence data is decoded per rank when looked up; a rank's newer data replaces its older") {
    store s;
    s.fence_completed();
    std::string error;
    // Rank 1's item has a value its decoder refuses (a data type beyond
    // 16 bits): structurally sound, so the fence is accepted, and only a
    // lookup of rank 1 decodes it.
    pmix::wire::ModexData m;
    m.ParseFromString(modex({{{"job", 0}, "zero"}}));
    auto* bad = m.add_ranks();
    pmix::protocol::to_wire(proc_id{"job", 1}, bad->mutable_proc());
    auto* item = bad->add_data();
    item->set_scope(PMIX_GLOBAL);
    item->mutable_info()->set_key("k");
    item->mutable_info()->mutable_value()->set_type(70000);
    REQUIRE(s.add_modex(m.SerializeAsString(), self, &error));
    REQUIRE(s.peer_value({"job", 0}, "k") != nullptr);
    CHECK(*s.peer_value({"job", 0}, "k")->as_string() == "zero");
    CHECK(s.peer_value({"job", 1}, "k") == nullptr);

    // A structurally malformed one still fails the whole fence.
    std::string broken = modex({{{"job", 2}, "two"}});
    broken.resize(broken.size() - 3);
    CHECK_FALSE(s.add_modex(broken, self, &error));

    // Two fences before any lookup: the second's data wins.
    s.fence_completed();
    REQUIRE(s.add_modex(modex({{{"job", 0}, "first"}}), self, &error));
    s.fence_completed();
    REQUIRE(s.add_modex(modex({{{"job", 0}, "second"}}), self, &error));
    CHECK(*s.peer_value({"job", 0}, "k")->as_string() == "second");
  }

  TEST_CASE("a value stored after a fence wins over that fence's undecoded data") {
    store s;
    s.fence_completed();
    std::string error;
    REQUIRE(s.add_modex(modex({{self, "committed"}}), self, &error));
    s.store_value(self, "k", value::string("put later"));
    CHECK(*s.peer_value(self, "k")->as_string() == "put later");

    // Direct-modex data arriving later wins too.
    s.fence_completed();
    REQUIRE(s.add_modex(modex({{{"job", 3}, "from the fence"}}), self, &error));
    REQUIRE(add_direct_modex(s, {"job", 3}, "from direct modex", self));
    CHECK(*s.peer_value({"job", 3}, "k")->as_string() == "from direct modex");
  }

  TEST_CASE("a put after the commit is not undone by the fence's copy of this process's own data") {
    store s;
    std::string error;
    s.store_value(self, "k", value::string("committed"));  // PMIx_Put, then PMIx_Commit
    s.store_value(self, "k", value::string("put after the commit"));
    s.fence_completed();
    REQUIRE(s.add_modex(modex({{self, "committed"}, {{"job", 0}, "zero"}}), self, &error));
    s.participants_complete({{"job", rank_wildcard}});
    CHECK(*s.peer_value(self, "k")->as_string() == "put after the commit");
    CHECK(*s.peer_value({"job", 0}, "k")->as_string() == "zero");
    CHECK(s.has_complete_data(self));
  }

  // A JobInfo as the server writes it with a rank index: the index first,
  // then ranks 0..n-1's RankInfos one after the other, each with PMIX_HOSTNAME
  // "host-R"; `bad_offset` (if below n): that entry's offset made 1.
  std::string indexed_job(pmix::rank_t n, pmix::rank_t bad_offset) {
    std::vector<std::string> payloads;
    for (pmix::rank_t r = 0; r < n; ++r) {
      pmix::wire::RankInfo ri;
      ri.set_rank(r);
      pmix::protocol::to_wire(info{PMIX_HOSTNAME, value::string("host-" + std::to_string(r)), 0}, ri.add_info());
      payloads.push_back(ri.SerializeAsString());
    }
    std::string out;
    pmix::protocol::append_length_delimited(out, pmix::wire::JobInfo::kNspaceFieldNumber, "ix");
    std::string field;  // one RankInfo's field, to measure its header
    std::size_t at = out.size() + 2 + (12 * n >= 128 ? 1 : 0) + 12 * n;  // past the index field (n < 1,365)
    std::string index;
    auto le32 = [&](std::uint32_t v) {
      for (int b = 0; b < 4; ++b) index.push_back(static_cast<char>((v >> (8 * b)) & 0xff));
    };
    for (pmix::rank_t r = 0; r < n; ++r) {
      field.clear();
      pmix::protocol::append_length_delimited(field, pmix::wire::JobInfo::kRanksFieldNumber, payloads[r]);
      at += field.size() - payloads[r].size();
      le32(r);
      le32(static_cast<std::uint32_t>(r == bad_offset ? 1 : at));
      le32(static_cast<std::uint32_t>(payloads[r].size()));
      at += payloads[r].size();
    }
    pmix::protocol::append_length_delimited(out, pmix::wire::JobInfo::kRankIndexFieldNumber, index);
    for (const auto& p : payloads) pmix::protocol::append_length_delimited(out, pmix::wire::JobInfo::kRanksFieldNumber, p);
    REQUIRE(out.size() == at);
    return out;
  }

  // The index is taken on trust at PMIx_Init, checked only where it ends:
  // an entry that points elsewhere costs its own rank's data (logged), not
  // the job's, and no other rank's.
  TEST_CASE("a job's rank index: each rank found by it; a bad entry loses only its rank's data") {
    for (pmix::rank_t bad : {100u, 5u}) {
      CAPTURE(bad);
      const auto bytes = indexed_job(20, bad);
      pmix::protocol::job_info j;
      REQUIRE(pmix::protocol::decode_lazy(bytes, j));
      REQUIRE(pmix::protocol::index_size(j.rank_index) == 20);
      store s;
      s.load_job(std::move(j));
      for (pmix::rank_t r = 0; r < 20; ++r) {
        CAPTURE(r);
        const auto* host = s.rank_value({"ix", r}, PMIX_HOSTNAME);
        if (r == bad) {
          CHECK(host == nullptr);
        } else {
          REQUIRE(host != nullptr);
          CHECK(*host->as_string() == "host-" + std::to_string(r));
        }
      }
      pmix::protocol::job_info whole;
      CHECK(pmix::protocol::decode(bytes, whole) == (bad >= 20));
    }
  }

  // Issue 40: a process reads only the job's own items at its start, and a
  // rank's when asked for; every answer is the one of reading them all.
  TEST_CASE("the job's per-rank items decoded at their first lookup answer as when decoded at once") {
    pmix::wire::JobInfo w;
    w.set_nspace("big");
    pmix::protocol::to_wire(info{PMIX_JOB_SIZE, value::unsigned_(PMIX_UINT32, 6), 0}, w.add_info());
    pmix::protocol::to_wire(info{PMIX_NODE_LIST, value::string("n0,n1"), 0}, w.add_info());
    for (pmix::rank_t r = 0; r < 6; ++r) {
      auto* ri = w.add_ranks();
      ri->set_rank(r);
      pmix::protocol::to_wire(info{PMIX_HOSTNAME, value::string(r < 3 ? "n0" : "n1"), 0}, ri->add_info());
      pmix::protocol::to_wire(info{PMIX_LOCAL_RANK, value::unsigned_(PMIX_UINT16, r % 3), 0}, ri->add_info());
    }
    // A second RankInfo for rank 4: its items join the first's, the later
    // winning.
    auto* again = w.add_ranks();
    again->set_rank(4);
    pmix::protocol::to_wire(info{PMIX_LOCAL_RANK, value::unsigned_(PMIX_UINT16, 7), 0}, again->add_info());
    pmix::protocol::to_wire(info{"extra", value::string("x"), 0}, again->add_info());
    const std::string bytes = w.SerializeAsString();

    store eager, lazy;
    pmix::protocol::job_info a, b;
    REQUIRE(pmix::protocol::decode(bytes, a));
    REQUIRE(pmix::protocol::decode_lazy(bytes, b));
    CHECK(b.ranks.empty());
    CHECK(b.encoded.size() == 7);
    CHECK(b.info.size() == 2);
    eager.load_job(std::move(a));
    lazy.load_job(std::move(b));
    auto text = [](const pmix::value* v) { return v == nullptr || v->as_string() == nullptr ? std::string{"-"} : *v->as_string(); };
    auto number = [](const pmix::value* v) { return v == nullptr || !v->as_uint() ? -1L : static_cast<long>(*v->as_uint()); };
    for (pmix::rank_t r = 0; r < 7; ++r) {
      const proc_id p{"big", r};
      CHECK(text(lazy.rank_value(p, PMIX_HOSTNAME)) == text(eager.rank_value(p, PMIX_HOSTNAME)));
      CHECK(number(lazy.rank_value(p, PMIX_LOCAL_RANK)) == number(eager.rank_value(p, PMIX_LOCAL_RANK)));
      CHECK(lazy.all_of(p).size() == eager.all_of(p).size());
    }
    CHECK(number(lazy.rank_value({"big", 4}, PMIX_LOCAL_RANK)) == 7);
    CHECK(text(lazy.rank_value({"big", 4}, "extra")) == "x");
    CHECK(lazy.rank_value({"big", 6}, PMIX_HOSTNAME) == nullptr);
    CHECK(number(lazy.job_value("big", PMIX_JOB_SIZE)) == 6);
    // Every rank at once, on a store that has decoded none yet.
    store fresh;
    pmix::protocol::job_info c;
    REQUIRE(pmix::protocol::decode_lazy(bytes, c));
    fresh.load_job(std::move(c));
    CHECK(fresh.ranks_on("big", "n1") == std::vector<pmix::rank_t>{3, 4, 5});
    CHECK(fresh.ranks_on("big", "n1") == eager.ranks_on("big", "n1"));
    CHECK(fresh.nodes_of("big") == eager.nodes_of("big"));
    // A message that is not well formed is refused whole, as by decode.
    pmix::protocol::job_info d;
    CHECK_FALSE(pmix::protocol::decode_lazy(bytes.substr(0, bytes.size() - 3), d));
  }

  TEST_CASE("a job's data is read in place, and a rank's items are checked when the rank is read") {
    // The message by hand (protobuf writes only well-formed ones): rank 0
    // with a hostname, rank 1 whose one Info is not a message, rank 2 with
    // a hostname.
    auto varint = [](std::string& out, std::uint64_t v) {
      do {
        out.push_back(static_cast<char>((v & 0x7f) | (v > 0x7f ? 0x80 : 0)));
        v >>= 7;
      } while (v != 0);
    };
    auto delimited = [&](std::string& out, int id, const std::string& bytes) {
      varint(out, static_cast<std::uint64_t>(id) << 3 | 2);
      varint(out, bytes.size());
      out += bytes;
    };
    auto rank_info = [&](std::uint32_t rank, const std::string& item) {
      std::string ri;
      varint(ri, 1 << 3 | 0);
      varint(ri, rank);
      delimited(ri, 2, item);
      return ri;
    };
    auto host = [](const char* h) {
      pmix::wire::Info i;
      pmix::protocol::to_wire(info{PMIX_HOSTNAME, value::string(h), 0}, &i);
      return i.SerializeAsString();
    };
    std::string bytes;
    delimited(bytes, 1, "inplace");
    delimited(bytes, 3, rank_info(0, host("n0")));
    delimited(bytes, 3, rank_info(1, std::string{"\x0a\x7f", 2}));  // a key field of 127 bytes, 0 there
    delimited(bytes, 3, rank_info(2, host("n2")));
    auto owner = std::make_shared<const std::string>(bytes);

    pmix::protocol::job_info eager;
    CHECK_FALSE(pmix::protocol::decode(*owner, eager));  // all at once: refused whole
    pmix::protocol::job_info job;
    REQUIRE(pmix::protocol::decode_lazy(*owner, owner, job));
    REQUIRE(job.encoded.size() == 3);
    for (const auto& [rank, view] : job.encoded) {  // views into the owner's bytes, not a copy
      CHECK(view.data() >= owner->data());
      CHECK(view.data() + view.size() <= owner->data() + owner->size());
    }
    pmix::info_list items;
    CHECK_FALSE(pmix::protocol::decode_rank_info(job.encoded[1].second, items));
    store s;
    s.load_job(std::move(job));
    auto text = [&](pmix::rank_t r) {
      const auto* v = s.rank_value({"inplace", r}, PMIX_HOSTNAME);
      return v == nullptr || v->as_string() == nullptr ? std::string{"-"} : *v->as_string();
    };
    CHECK(text(2) == "n2");
    CHECK(text(1) == "-");  // refused at its lookup (logged), nothing of it kept
    CHECK(text(0) == "n0");
    CHECK(s.ranks_on("inplace", "n2") == std::vector<pmix::rank_t>{2});
  }

  TEST_CASE("a rank the job data has no RankInfo for takes the items its node and proc maps give it") {
    // The server writes no RankInfo for a rank that runs elsewhere with
    // nothing registered of its own (actors/job_layout.hpp).
    pmix::wire::JobInfo w;
    w.set_nspace("mapped");
    pmix::protocol::to_wire(info{PMIX_JOB_SIZE, value::unsigned_(PMIX_UINT32, 7), 0}, w.add_info());
    pmix::protocol::to_wire(info{PMIX_NODE_MAP, value::string("n0,n1,n2"), 0}, w.add_info());
    // A PMIX_REGEX as hosts pass it: its bytes count the terminating NUL.
    pmix::protocol::to_wire(info{PMIX_PROC_MAP, value::bytes(PMIX_REGEX, std::string{"0,3,5;1,4;2,6", 14}), 0},
                            w.add_info());
    auto* mine = w.add_ranks();  // rank 1 on n1, with a key of its own
    mine->set_rank(1);
    pmix::protocol::to_wire(info{PMIX_HOSTNAME, value::string("n1"), 0}, mine->add_info());
    pmix::protocol::to_wire(info{"own", value::string("y"), 0}, mine->add_info());
    pmix::protocol::job_info job;
    REQUIRE(pmix::protocol::decode_lazy(w.SerializeAsString(), job));
    store s;
    s.load_job(std::move(job));
    auto text = [&](pmix::rank_t r, const char* key) {
      const auto* v = s.rank_value({"mapped", r}, key);
      return v == nullptr || v->as_string() == nullptr ? std::string{"-"} : *v->as_string();
    };
    auto number = [&](pmix::rank_t r, const char* key) {
      const auto* v = s.rank_value({"mapped", r}, key);
      return v == nullptr || !v->as_uint() ? -1L : static_cast<long>(*v->as_uint());
    };
    CHECK(text(5, PMIX_HOSTNAME) == "n0");
    CHECK(number(5, PMIX_NODEID) == 0);
    CHECK(number(5, PMIX_LOCAL_RANK) == 2);
    CHECK(number(5, PMIX_NODE_RANK) == 2);
    CHECK(number(5, PMIX_GLOBAL_RANK) == 5);
    CHECK(number(5, PMIX_APPNUM) == 0);
    CHECK(s.rank_value({"mapped", 5}, PMIX_LOCAL_RANK)->type == PMIX_UINT16);
    CHECK(text(6, PMIX_HOSTNAME) == "n2");
    CHECK(number(6, PMIX_LOCAL_RANK) == 1);
    // A rank written keeps its own items only.
    CHECK(text(1, "own") == "y");
    CHECK(number(1, PMIX_LOCAL_RANK) == -1);
    // Not in the maps: nothing.
    CHECK(s.rank_value({"mapped", 7}, PMIX_HOSTNAME) == nullptr);
    CHECK(s.ranks_on("mapped", "n1") == std::vector<pmix::rank_t>{1, 4});
    CHECK(s.ranks_on("mapped", "n0") == std::vector<pmix::rank_t>{0, 3, 5});
    // The node-level keys of a rank elsewhere describe its node.
    const auto size = s.other_node_value({"mapped", 5}, PMIX_LOCAL_SIZE, "n1");
    REQUIRE(size);
    CHECK(size->type == PMIX_UINT32);
    CHECK(*size->as_uint() == 3);
    const auto peers = s.other_node_value({"mapped", 6}, PMIX_LOCAL_PEERS, "n1");
    REQUIRE(peers);
    CHECK(*peers->as_string() == "2,6");
    const auto leader = s.other_node_value({"mapped", 4}, PMIX_LOCALLDR, "n0");
    REQUIRE(leader);
    CHECK(leader->type == PMIX_PROC_RANK);
    CHECK(*leader->as_uint() == 1);
    // This node's ranks, other keys and ranks of no known node are left to
    // the job-level values.
    CHECK_FALSE(s.other_node_value({"mapped", 4}, PMIX_LOCAL_SIZE, "n1"));
    CHECK_FALSE(s.other_node_value({"mapped", 5}, PMIX_JOB_SIZE, "n1"));
    CHECK_FALSE(s.other_node_value({"mapped", 7}, PMIX_LOCAL_SIZE, "n1"));
  }

  TEST_CASE("a remote rank's node-level keys come from its node's PMIX_NODE_INFO_ARRAY when the job data has one") {
    // As OpenPMIx's server sends them: one array per node, led by its name.
    auto node_array = [](const char* host, std::uint32_t id, std::uint32_t size) {
      pmix::array_value a{PMIX_INFO, {}};
      for (auto i : {info{PMIX_HOSTNAME, value::string(host), 0}, info{PMIX_NODEID, value::unsigned_(PMIX_UINT32, id), 0},
                     info{PMIX_LOCAL_SIZE, value::unsigned_(PMIX_UINT32, size), 0}})
        a.elements.push_back(value{PMIX_INFO, std::make_shared<const info>(std::move(i))});
      return info{PMIX_NODE_INFO_ARRAY, value::array(std::move(a)), 0};
    };
    pmix::protocol::job_info job;
    job.nspace = "arrays";
    job.info = {node_array("here", 0, 2), node_array("there", 1, 5),
                info{PMIX_LOCAL_SIZE, value::unsigned_(PMIX_UINT32, 2), 0}};
    job.ranks.emplace_back(0, pmix::info_list{info{PMIX_HOSTNAME, value::string("here"), 0}});
    job.ranks.emplace_back(3, pmix::info_list{info{PMIX_HOSTNAME, value::string("there"), 0}});
    store s;
    s.load_job(std::move(job));
    const auto id = s.other_node_value({"arrays", 3}, PMIX_NODEID, "here");
    REQUIRE(id);
    CHECK(*id->as_uint() == 1);
    const auto size = s.other_node_value({"arrays", 3}, PMIX_LOCAL_SIZE, "here");
    REQUIRE(size);
    CHECK(*size->as_uint() == 5);  // the array's, not made from the one rank known there
    CHECK_FALSE(s.other_node_value({"arrays", 0}, PMIX_NODEID, "here"));  // this node: the job-level values
    CHECK_FALSE(s.other_node_value({"arrays", 3}, PMIX_APPNUM, "here"));  // not in the node's array
  }

  TEST_CASE("with local_ranks_by_peers a local rank without a RankInfo takes its place in PMIX_LOCAL_PEERS") {
    // The server sets it when this node's list in the proc map is
    // PMIX_LOCAL_PEERS and the job's host name and node id are this node's
    // (actors/job_layout.hpp). No proc map here: the items must come from
    // the peers list, not from the maps.
    auto job_of = [](bool by_peers) {
      pmix::wire::JobInfo w;
      w.set_nspace("peers");
      pmix::protocol::to_wire(info{PMIX_LOCAL_PEERS, value::string("4,5,6"), 0}, w.add_info());
      pmix::protocol::to_wire(info{PMIX_HOSTNAME, value::string("n1"), 0}, w.add_info());
      pmix::protocol::to_wire(info{PMIX_NODEID, value::unsigned_(PMIX_UINT32, 1), 0}, w.add_info());
      auto* own = w.add_ranks();  // rank 6 registered a key of its own
      own->set_rank(6);
      pmix::protocol::to_wire(info{"own", value::string("y"), 0}, own->add_info());
      w.set_local_ranks_by_peers(by_peers);
      pmix::protocol::job_info job;
      REQUIRE(pmix::protocol::decode_lazy(w.SerializeAsString(), job));
      CHECK(job.local_ranks_by_peers == by_peers);
      return job;
    };
    store s;
    s.load_job(job_of(true));
    const auto* lrank = s.rank_value({"peers", 5}, PMIX_LOCAL_RANK);
    REQUIRE(lrank != nullptr);
    CHECK(lrank->type == PMIX_UINT16);
    CHECK(*lrank->as_uint() == 1);
    CHECK(*s.rank_value({"peers", 5}, PMIX_NODE_RANK)->as_uint() == 1);
    CHECK(*s.rank_value({"peers", 4}, PMIX_LOCAL_RANK)->as_uint() == 0);
    CHECK(*s.rank_value({"peers", 5}, PMIX_HOSTNAME)->as_string() == "n1");
    CHECK(*s.rank_value({"peers", 5}, PMIX_NODEID)->as_uint() == 1);
    CHECK(*s.rank_value({"peers", 5}, PMIX_GLOBAL_RANK)->as_uint() == 5);
    CHECK(*s.rank_value({"peers", 5}, PMIX_APPNUM)->as_uint() == 0);
    // A rank written keeps its own items; a rank not local gets nothing here.
    CHECK(*s.rank_value({"peers", 6}, "own")->as_string() == "y");
    CHECK(s.rank_value({"peers", 6}, PMIX_LOCAL_RANK) == nullptr);
    CHECK(s.rank_value({"peers", 7}, PMIX_HOSTNAME) == nullptr);
    // Without the flag a local rank is left to the maps (none here).
    store plain;
    plain.load_job(job_of(false));
    CHECK(plain.rank_value({"peers", 5}, PMIX_LOCAL_RANK) == nullptr);
    // A later PMIX_LOCAL_PEERS (merged job data) ends it for the ranks not read yet.
    store merged;
    merged.load_job(job_of(true));
    merged.merge_job("peers", {info{PMIX_LOCAL_PEERS, value::string("3,4,5"), 0}});
    CHECK(merged.rank_value({"peers", 4}, PMIX_LOCAL_RANK) == nullptr);
  }

  TEST_CASE("a compact proc map in the job data is read within the job's size") {
    pmix::wire::JobInfo w;
    w.set_nspace("huge");
    pmix::protocol::to_wire(info{PMIX_JOB_SIZE, value::unsigned_(PMIX_UINT32, 4), 0}, w.add_info());
    pmix::protocol::to_wire(info{PMIX_PROC_MAP, value::string("pmix[0-99999999]"), 0}, w.add_info());
    pmix::protocol::job_info job;
    REQUIRE(pmix::protocol::decode_lazy(w.SerializeAsString(), job));
    store s;
    s.load_job(std::move(job));
    CHECK(s.rank_value({"huge", 1}, PMIX_GLOBAL_RANK) == nullptr);  // refused, nothing allocated
  }

  TEST_CASE("with local_ranks_by_peers a local rank's place counts the runs before its own") {
    // The node's ranks as runs (JobInfo.local_runs: kept as runs, not
    // expanded into a vector at PMIx_Init): 0-1, 10-12, 20. A rank's place
    // among the node's ranks is its PMIX_LOCAL_RANK, as with the list; the
    // ranks between the runs and after them are not local.
    for (const bool runs : {true, false}) {
      CAPTURE(runs);
      pmix::protocol::job_info job;
      job.nspace = "runs";
      job.info.push_back(info{PMIX_LOCAL_PEERS, value::string("0,1,10,11,12,20"), 0});
      job.info.push_back(info{PMIX_HOSTNAME, value::string("n1"), 0});
      job.info.push_back(info{PMIX_NODEID, value::unsigned_(PMIX_UINT32, 1), 0});
      job.local_ranks_by_peers = true;
      if (runs) job.local_runs = run(0, 2) + run(10, 3) + run(20, 1);
      store s;
      s.load_job(std::move(job));
      const std::vector<std::pair<pmix::rank_t, std::uint64_t>> want = {{0, 0}, {1, 1}, {10, 2}, {11, 3}, {12, 4},
                                                                        {20, 5}};
      for (const auto& [rank, place] : want) {
        CAPTURE(rank);
        const auto* l = s.rank_value({"runs", rank}, PMIX_LOCAL_RANK);
        REQUIRE(l != nullptr);
        CHECK(*l->as_uint() == place);
      }
      for (pmix::rank_t other : {2u, 9u, 13u, 19u, 21u, 1000u}) {
        CAPTURE(other);
        CHECK(s.rank_value({"runs", other}, PMIX_LOCAL_RANK) == nullptr);
      }
      CHECK(s.local_ranks("runs") == std::vector<pmix::rank_t>{0, 1, 10, 11, 12, 20});
    }
  }

  TEST_CASE("with local_ranks_by_peers a local rank's place counts strided runs as the list") {
    // A node's ranks placed round-robin over 16 nodes, then a block, then
    // one alone (JobInfo.local_strided_runs): each rank's place, and only
    // theirs, as when the list is parsed.
    std::string text;
    std::vector<pmix::rank_t> ranks;
    for (pmix::rank_t r = 3; r < 3 + 16 * 40; r += 16) ranks.push_back(r);
    for (pmix::rank_t r = 700; r < 705; ++r) ranks.push_back(r);
    ranks.push_back(900);
    for (auto r : ranks) text += (text.empty() ? "" : ",") + std::to_string(r);
    for (const bool runs : {true, false}) {
      CAPTURE(runs);
      pmix::protocol::job_info job;
      job.nspace = "rr";
      job.info.push_back(info{PMIX_LOCAL_PEERS, value::string(text), 0});
      job.info.push_back(info{PMIX_HOSTNAME, value::string("n3"), 0});
      job.info.push_back(info{PMIX_NODEID, value::unsigned_(PMIX_UINT32, 3), 0});
      job.local_ranks_by_peers = true;
      if (runs) job.local_strided_runs = strided(3, 40, 16) + strided(700, 5, 1) + strided(900, 1, 1);
      store s;
      s.load_job(std::move(job));
      for (std::size_t k = 0; k < ranks.size(); ++k) {
        CAPTURE(ranks[k]);
        const auto* l = s.rank_value({"rr", ranks[k]}, PMIX_LOCAL_RANK);
        REQUIRE(l != nullptr);
        CHECK(*l->as_uint() == k);
      }
      for (pmix::rank_t other : {0u, 4u, 18u, 20u, 629u, 643u, 699u, 705u, 899u, 901u}) {
        CAPTURE(other);
        CHECK(s.rank_value({"rr", other}, PMIX_LOCAL_RANK) == nullptr);
      }
      CHECK(s.local_ranks("rr") == ranks);
    }
  }

  // Found by tests/fuzz client_reply: 16 bytes of compact proc map made the
  // client allocate over 2 GB.
  TEST_CASE("PMIX_LOCAL_PEERS is read within bounds its text sets") {
    auto local = [](const std::string& text) {
      store s;
      pmix::protocol::job_info job;
      job.nspace = "job";
      job.info.push_back(info{PMIX_LOCAL_PEERS, value::string(text), 0});
      s.load_job(std::move(job));
      const auto& r = s.local_ranks("job");
      return std::vector<pmix::rank_t>(r.begin(), r.end());
    };
    CHECK(local("0,1,5") == std::vector<pmix::rank_t>{0, 1, 5});
    CHECK(local("5,1,0,1") == std::vector<pmix::rank_t>{0, 1, 5});  // put in order, each once
    CHECK(local("pmix[0-3]") == std::vector<pmix::rank_t>{0, 1, 2, 3});
    CHECK(local("pmix[0-99999999]").empty());  // refused, nothing allocated
  }

  TEST_CASE("PMIX_LOCAL_PEERS comes from JobInfo.local_runs when they fit the list, else from the list") {
    // The runs are read instead of the list (a process of a node of 4,096
    // ranks parsed it at PMIx_Init: issue 40); runs the list could not hold,
    // or malformed ones, are not taken, and the list is parsed as before.
    auto local = [](const std::string& text, const std::string& runs) {
      store s;
      pmix::protocol::job_info job;
      job.nspace = "job";
      job.info.push_back(info{PMIX_LOCAL_PEERS, value::string(text), 0});
      job.local_runs = runs;
      s.load_job(std::move(job));
      const auto& r = s.local_ranks("job");
      return std::vector<pmix::rank_t>(r.begin(), r.end());
    };
    // Runs that say otherwise than the list show which was read.
    CHECK(local("7,8,9,10,11,12", run(0, 2) + run(4, 1)) == std::vector<pmix::rank_t>{0, 1, 4});
    CHECK(local("7,8,9,10,11,12", "") == std::vector<pmix::rank_t>{7, 8, 9, 10, 11, 12});
    // More ranks than a list of that length can hold (5 bytes: 3 ranks at
    // most): the list.
    CHECK(local("0,1,2", run(100, 4)) == std::vector<pmix::rank_t>{0, 1, 2});
    CHECK(local("0,1,2", run(100, 2)) == std::vector<pmix::rank_t>{100, 101});
    CHECK(local("0,1,2", run(5, 1) + run(0, 1)) == std::vector<pmix::rank_t>{0, 1, 2});  // out of order
    CHECK(local("0,1,2", run(0, 1).substr(2)) == std::vector<pmix::rank_t>{0, 1, 2});  // not 8 bytes a run
    CHECK(local("pmix[0-99999999]", run(0, 99999999)).empty());  // neither taken, nothing allocated
  }

  TEST_CASE("a peer's PMIX_LOCAL and PMIX_REMOTE data follow PMIX_LOCAL_PEERS, in whatever order it lists them") {
    store s;
    pmix::protocol::job_info job;
    job.nspace = "job";
    job.info.push_back(info{PMIX_LOCAL_PEERS, value::string("9,5,1"), 0});
    REQUIRE(s.load_job(std::move(job)));
    for (pmix::rank_t rank : {1u, 3u, 5u, 7u}) {
      pmix::wire::RankData r;
      pmix::protocol::to_wire(proc_id{"job", rank}, r.mutable_proc());
      auto* l = r.add_data();
      l->set_scope(PMIX_LOCAL);
      pmix::protocol::to_wire(info{"kl", value::string("local"), 0}, l->mutable_info());
      auto* g = r.add_data();
      g->set_scope(PMIX_REMOTE);
      pmix::protocol::to_wire(info{"kr", value::string("remote"), 0}, g->mutable_info());
      const std::string bytes = r.SerializeAsString();
      pmix::protocol::rank_data data;
      std::string error;
      REQUIRE(pmix::protocol::decode(bytes, data, &error));
      REQUIRE(s.add_peer_data(data, self, &error));
      const bool here = rank == 1 || rank == 5;
      CAPTURE(rank);
      CHECK((s.peer_value({"job", rank}, "kl") != nullptr) == here);
      CHECK((s.peer_value({"job", rank}, "kr") != nullptr) == !here);
    }
  }
}
