// Job placement derived at register_nspace (actors/job_layout.hpp) and the
// JobInfo a client receives at connect.
#include "actors/job_layout.hpp"

#include <array>
#include <doctest/doctest.h>
#include <pmix_common.h>

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <new>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "common/regex/regex.hpp"
#include "common/value.hpp"
#include "protocol/codec.hpp"
#include "protocol/direct.hpp"
#include "protocol/messages.hpp"
#include "protocol/pmix.pb.h"

using pmix::array_value;
using pmix::info;
using pmix::info_list;
using pmix::rank_t;
using pmix::value;
using pmix::actors::compute_layout;
using pmix::actors::job_layout;
using pmix::actors::serialize_job_info;

// Bytes asked of operator new while `counting` holds (this binary's own
// operator new): what serialize_job_info allocates, temporaries included.
namespace {
std::atomic<bool> counting{false};
std::atomic<std::size_t> allocated{0};
}  // namespace

void* operator new(std::size_t n) {
  if (counting.load(std::memory_order_relaxed)) allocated.fetch_add(n, std::memory_order_relaxed);
  if (void* p = std::malloc(n == 0 ? 1 : n)) return p;
  throw std::bad_alloc();
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }

namespace {

const char* const node_list = "node01,node02,node03";
const char* const proc_list = "0-3;4-7;8-11";  // 4 ranks per node, block mapped

std::string compact_nodes(const std::string& plain) {
  auto r = pmix::regex::generate_node_map(plain);
  REQUIRE_MESSAGE(r.ok(), r.error().what);
  REQUIRE(r.value().rfind("pmix[", 0) == 0);
  return r.value();
}

std::string compact_procs(const std::string& plain) {
  auto r = pmix::regex::generate_proc_map(plain);
  REQUIRE_MESSAGE(r.ok(), r.error().what);
  REQUIRE(r.value().rfind("pmix[", 0) == 0);
  return r.value();
}

info entry(const char* key, value v) { return info{key, std::move(v), 0}; }

info proc_data(std::vector<info> entries) {
  array_value a{PMIX_INFO, {}};
  for (auto& e : entries) a.elements.push_back(value{PMIX_INFO, std::make_shared<const info>(std::move(e))});
  return entry(PMIX_PROC_DATA, value::array(std::move(a)));
}

info rank_entry(rank_t r) { return entry(PMIX_RANK, value::unsigned_(PMIX_PROC_RANK, r)); }

job_layout layout_of(const info_list& in, int nlocalprocs, const std::string& host) {
  job_layout out;
  std::string error;
  const auto rc = compute_layout(in, nlocalprocs, host, out, error);
  REQUIRE_MESSAGE(rc == PMIX_SUCCESS, error);
  return out;
}

// compute_layout must refuse `in`; returns its message.
std::string refusal(const info_list& in, int nlocalprocs = 0, const std::string& host = "node01") {
  job_layout out;
  std::string error;
  CHECK(compute_layout(in, nlocalprocs, host, out, error) == PMIX_ERR_BAD_PARAM);
  CHECK_FALSE(error.empty());
  return error;
}

const std::vector<std::vector<rank_t>> block_ranks{{0, 1, 2, 3}, {4, 5, 6, 7}, {8, 9, 10, 11}};

// The decoded JobInfo a client would receive, and what its readers see:
// `rank_order` lists the ranks it holds a RankInfo for, as written;
// `ranks` has every rank's items, those of the ranks it leaves to its readers
// derived from the maps (add_derived_ranks).
struct decoded_job {
  std::string nspace;
  info_list job;
  std::map<rank_t, info_list> ranks;
  std::vector<rank_t> rank_order;
  bool local_ranks_by_peers = false;
};

decoded_job decode(const std::string& bytes) {
  pmix::wire::JobInfo j;
  REQUIRE(j.ParseFromString(bytes));
  decoded_job out;
  out.nspace = j.nspace();
  for (const auto& r : j.ranks()) out.rank_order.push_back(r.rank());
  out.local_ranks_by_peers = j.local_ranks_by_peers();
  pmix::actors::add_derived_ranks(j);
  std::string error;
  REQUIRE_MESSAGE(pmix::protocol::from_wire(j.info(), out.job, &error), error);
  for (const auto& r : j.ranks()) {
    info_list list;
    REQUIRE_MESSAGE(pmix::protocol::from_wire(r.info(), list, &error), error);
    out.ranks[r.rank()] = std::move(list);
  }
  return out;
}

const value& get(const info_list& list, const char* key) {
  const auto* i = pmix::find(list, key);
  REQUIRE_MESSAGE(i != nullptr, "missing " << key);
  return i->val;
}

std::size_t count(const info_list& list, const std::string& key) {
  std::size_t n = 0;
  for (const auto& i : list) n += i.key == key ? 1 : 0;
  return n;
}

}  // namespace

TEST_SUITE("job_layout") {
  TEST_CASE("compact node and proc maps give nodes, ranks per node, local ranks and job size") {
    const info_list in{entry(PMIX_NODE_MAP, value::string(compact_nodes(node_list))),
                       entry(PMIX_PROC_MAP, value::string(compact_procs(proc_list)))};
    const auto l = layout_of(in, 4, "node02");
    CHECK(l.nodes == std::vector<std::string>{"node01", "node02", "node03"});
    CHECK(pmix::regex::expand(l.node_ranks) == block_ranks);
    CHECK(l.local_node == 1);
    CHECK(l.local_ranks == std::vector<rank_t>{4, 5, 6, 7});
    REQUIRE(l.job_size.has_value());
    CHECK(*l.job_size == 12);
    CHECK_FALSE(l.all_local());
    CHECK(l.is_local(4));
    CHECK(l.is_local(7));
    CHECK_FALSE(l.is_local(3));
    CHECK_FALSE(l.is_local(8));
    // The maps are passed on as job info too: clients may read them.
    REQUIRE(pmix::find(l.job_info, PMIX_NODE_MAP) != nullptr);
    REQUIRE(pmix::find(l.job_info, PMIX_PROC_MAP) != nullptr);
    CHECK(*pmix::find(l.job_info, PMIX_NODE_MAP)->val.as_string() == compact_nodes(node_list));
  }

  TEST_CASE("plain maps and PMIX_REGEX values give the same layout as compact strings") {
    const auto compact = layout_of({entry(PMIX_NODE_MAP, value::string(compact_nodes(node_list))),
                                    entry(PMIX_PROC_MAP, value::string(compact_procs(proc_list)))},
                                   4, "node03");
    const auto plain = layout_of({entry(PMIX_NODE_MAP, value::string(node_list)),
                                  entry(PMIX_PROC_MAP, value::string(proc_list))},
                                 4, "node03");
    const auto regex = layout_of({entry(PMIX_NODE_MAP, value::bytes(PMIX_REGEX, compact_nodes(node_list))),
                                  entry(PMIX_PROC_MAP, value::bytes(PMIX_REGEX, compact_procs(proc_list)))},
                                 4, "node03");
    for (const auto* l : {&compact, &plain, &regex}) {
      CHECK(l->nodes == compact.nodes);
      CHECK(pmix::regex::expand(l->node_ranks) == block_ranks);
      CHECK(l->local_node == 2);
      CHECK(l->local_ranks == std::vector<rank_t>{8, 9, 10, 11});
      CHECK(*l->job_size == 12);
    }
  }

  TEST_CASE("a cyclic compact map keeps each node's ranks in order") {
    // 3 nodes, 9 ranks round-robin.
    const std::string procs = compact_procs("0,3,6;1,4,7;2,5,8");
    const auto l = layout_of({entry(PMIX_NODE_MAP, value::string(compact_nodes("c1,c2,c3"))),
                              entry(PMIX_PROC_MAP, value::string(procs))},
                             3, "c2");
    CHECK(pmix::regex::expand(l.node_ranks) == std::vector<std::vector<rank_t>>{{0, 3, 6}, {1, 4, 7}, {2, 5, 8}});
    CHECK(l.local_ranks == std::vector<rank_t>{1, 4, 7});
    CHECK(*l.job_size == 9);
  }

  TEST_CASE("a host absent from the node map has no local ranks") {
    const auto l = layout_of({entry(PMIX_NODE_MAP, value::string(node_list)),
                              entry(PMIX_PROC_MAP, value::string(proc_list))},
                             0, "login");
    CHECK(l.local_node == -1);
    CHECK(l.local_ranks.empty());
    CHECK(*l.job_size == 12);
  }

  TEST_CASE("a proc map without a node map describes this node alone") {
    const auto l = layout_of({entry(PMIX_PROC_MAP, value::string("0-2"))}, 3, "anywhere");
    CHECK(l.nodes.empty());
    CHECK(l.local_node == -1);
    CHECK(l.local_ranks == std::vector<rank_t>{0, 1, 2});
    CHECK(*l.job_size == 3);
    CHECK(l.all_local());

    // Several nodes without names: which one is ours is unknown.
    const auto m = layout_of({entry(PMIX_PROC_MAP, value::string("0-1;2-3"))}, 2, "anywhere");
    CHECK(m.local_ranks.empty());
    CHECK(*m.job_size == 4);
  }

  TEST_CASE("PMIX_LOCAL_PEERS overrides the maps") {
    const info_list in{entry(PMIX_NODE_MAP, value::string(node_list)),
                       entry(PMIX_PROC_MAP, value::string(proc_list)),
                       entry(PMIX_LOCAL_PEERS, value::string("9,4,5-6,4"))};
    const auto l = layout_of(in, 4, "node02");
    CHECK(l.local_node == 1);
    CHECK(l.local_ranks == std::vector<rank_t>{4, 5, 6, 9});  // sorted, no duplicates
    CHECK(pmix::find(l.job_info, PMIX_LOCAL_PEERS) == nullptr);

    // Peers alone: no job size can be derived, and no nlocalprocs fallback.
    const auto p = layout_of({entry(PMIX_LOCAL_PEERS, value::string("3,1"))}, 2, "h");
    CHECK(p.local_ranks == std::vector<rank_t>{1, 3});
    CHECK_FALSE(p.job_size.has_value());
    CHECK_FALSE(p.all_local());

    // An empty list means no local ranks at all.
    const auto e = layout_of({entry(PMIX_NODE_MAP, value::string(node_list)),
                              entry(PMIX_PROC_MAP, value::string(proc_list)),
                              entry(PMIX_LOCAL_PEERS, value::string(""))},
                             0, "node02");
    CHECK(e.local_ranks.empty());
  }

  TEST_CASE("PMIX_LOCAL_PEERS that is not one list of ranks is refused") {
    CHECK(refusal({entry(PMIX_LOCAL_PEERS, value::string("0,1;2"))}).find("PMIX_LOCAL_PEERS") !=
          std::string::npos);
    CHECK(refusal({entry(PMIX_LOCAL_PEERS, value::string("zero"))}).find("PMIX_LOCAL_PEERS") !=
          std::string::npos);
  }

  TEST_CASE("PMIX_JOB_SIZE wins over the size derived from the proc map and stays in the job info") {
    const auto l = layout_of({entry(PMIX_JOB_SIZE, value::unsigned_(PMIX_UINT32, 100)),
                              entry(PMIX_NODE_MAP, value::string(node_list)),
                              entry(PMIX_PROC_MAP, value::string(proc_list))},
                             4, "node01");
    CHECK(*l.job_size == 100);
    REQUIRE(pmix::find(l.job_info, PMIX_JOB_SIZE) != nullptr);
    CHECK(*get(l.job_info, PMIX_JOB_SIZE).as_uint() == 100);
  }

  TEST_CASE("nlocalprocs alone describes a single-node job of that many ranks") {
    const auto l = layout_of({entry("custom.key", value::string("x"))}, 4, "solo");
    REQUIRE(l.job_size.has_value());
    CHECK(*l.job_size == 4);
    CHECK(l.local_ranks == std::vector<rank_t>{0, 1, 2, 3});
    CHECK(l.all_local());
    CHECK(l.local_node == -1);
    CHECK(l.nodes.empty());
    CHECK(l.node_ranks.empty());
    REQUIRE(l.job_info.size() == 1);
    CHECK(l.job_info[0].key == "custom.key");

    // Nothing at all: nothing known.
    const auto none = layout_of({}, 0, "solo");
    CHECK_FALSE(none.job_size.has_value());
    CHECK(none.local_ranks.empty());
    CHECK_FALSE(none.all_local());
  }

  TEST_CASE("node and proc maps of different lengths are refused with a message") {
    const auto error = refusal({entry(PMIX_NODE_MAP, value::string("a,b")),
                                entry(PMIX_PROC_MAP, value::string(proc_list))});
    CHECK(error.find("PMIX_NODE_MAP") != std::string::npos);
    CHECK(error.find('2') != std::string::npos);
    CHECK(error.find('3') != std::string::npos);
  }

  TEST_CASE("unparseable maps are refused with a message naming the key") {
    CHECK(refusal({entry(PMIX_NODE_MAP, value::string("pmix[node[1-]")),
                   entry(PMIX_PROC_MAP, value::string("0"))})
              .find("PMIX_NODE_MAP") != std::string::npos);
    CHECK(refusal({entry(PMIX_NODE_MAP, value::string("a,,b"))}).find("PMIX_NODE_MAP") != std::string::npos);
    CHECK(refusal({entry(PMIX_NODE_MAP, value::string("a")), entry(PMIX_PROC_MAP, value::string("0-x"))})
              .find("PMIX_PROC_MAP") != std::string::npos);
    CHECK(refusal({entry(PMIX_PROC_MAP, value::string("pmix[0-3*0]"))}).find("PMIX_PROC_MAP") !=
          std::string::npos);
    // Not text at all.
    CHECK(refusal({entry(PMIX_NODE_MAP, value::unsigned_(PMIX_UINT32, 3))}).find("PMIX_NODE_MAP") !=
          std::string::npos);
    CHECK(refusal({entry(PMIX_PROC_MAP, value::boolean(true))}).find("PMIX_PROC_MAP") != std::string::npos);
  }

  TEST_CASE("PMIX_PROC_DATA arrays land in rank_info without their leading PMIX_RANK") {
    const info_list in{
        entry(PMIX_NODE_MAP, value::string(node_list)), entry(PMIX_PROC_MAP, value::string(proc_list)),
        proc_data({rank_entry(5), entry(PMIX_LOCAL_RANK, value::unsigned_(PMIX_UINT16, 1)),
                   entry("app.key", value::string("five"))}),
        proc_data({rank_entry(0), entry(PMIX_HOSTNAME, value::string("renamed"))}),
        proc_data({rank_entry(5), entry("more", value::boolean(true))}),
        entry("job.key", value::integer(PMIX_INT, -1))};
    const auto l = layout_of(in, 4, "node02");
    REQUIRE(l.ranks_with_data() == 2);
    REQUIRE(l.rank_data.size() == 3);  // rank 5's two arrays stay two entries, in order
    const auto five = l.rank_info(5);
    REQUIRE(five.size() == 3);
    CHECK(five[0].key == PMIX_LOCAL_RANK);
    CHECK(five[1].key == "app.key");
    CHECK(*five[1].val.as_string() == "five");
    CHECK(five[2].key == "more");  // a second array for the same rank adds to it
    CHECK(pmix::find(five, PMIX_RANK) == nullptr);
    CHECK(*get(l.rank_info(0), PMIX_HOSTNAME).as_string() == "renamed");
    // Job info keeps the rest (the maps and job.key), and no PMIX_PROC_DATA.
    REQUIRE(l.job_info.size() == 3);
    CHECK(l.job_info[0].key == PMIX_NODE_MAP);
    CHECK(l.job_info[1].key == PMIX_PROC_MAP);
    CHECK(l.job_info[2].key == "job.key");
    CHECK(pmix::find(l.job_info, PMIX_PROC_DATA) == nullptr);
  }

  TEST_CASE("a PMIX_PROC_DATA that is not an info array led by a valid PMIX_RANK is refused") {
    // Not led by PMIX_RANK.
    CHECK(refusal({proc_data({entry(PMIX_HOSTNAME, value::string("h")), rank_entry(1)})}).find("PMIX_RANK") !=
          std::string::npos);
    // Empty.
    CHECK(refusal({proc_data({})}).find("PMIX_PROC_DATA") != std::string::npos);
    // Not an array, or an array of something else.
    CHECK(refusal({entry(PMIX_PROC_DATA, value::string("rank 1"))}).find("PMIX_PROC_DATA") != std::string::npos);
    CHECK(refusal({entry(PMIX_PROC_DATA,
                         value::array(array_value{PMIX_UINT32, {value::unsigned_(PMIX_UINT32, 1)}}))})
              .find("PMIX_PROC_DATA") != std::string::npos);
    // A rank that is not a valid rank (wildcard) or not a number.
    CHECK(refusal({proc_data({rank_entry(PMIX_RANK_WILDCARD)})}).find("PMIX_RANK") != std::string::npos);
    CHECK(refusal({proc_data({entry(PMIX_RANK, value::string("3"))})}).find("PMIX_RANK") != std::string::npos);
    CHECK(refusal({proc_data({entry(PMIX_RANK, value::integer(PMIX_INT, -1))})}).find("PMIX_RANK") !=
          std::string::npos);
    // A rank given as a signed integer is fine.
    const auto l = layout_of({proc_data({entry(PMIX_RANK, value::integer(PMIX_INT, 3)),
                                         entry("k", value::string("v"))})},
                             0, "h");
    REQUIRE(l.ranks_with_data() == 1);
    REQUIRE(l.rank_data.front().rank == 3);
    CHECK(l.rank_info(3)[0].key == "k");
  }

  TEST_CASE("compute_layout starts from scratch") {
    job_layout l = layout_of({entry(PMIX_PROC_MAP, value::string("0-3"))}, 4, "h");
    std::string error;
    REQUIRE(compute_layout({entry("only", value::string("x"))}, 0, "h", l, error) == PMIX_SUCCESS);
    CHECK_FALSE(l.job_size.has_value());
    CHECK(l.local_ranks.empty());
    CHECK(l.node_ranks.empty());
    CHECK(l.job_info.size() == 1);
  }

  TEST_CASE("serialize_job_info adds the derived job-level and per-rank keys") {
    const auto l = layout_of({entry(PMIX_NODE_MAP, value::string(compact_nodes(node_list))),
                              entry(PMIX_PROC_MAP, value::string(compact_procs(proc_list))),
                              entry("app.setting", value::string("on"))},
                             4, "node02");
    const auto j = decode(serialize_job_info("job.1", l, "node02"));
    CHECK(j.nspace == "job.1");

    CHECK(*get(j.job, "app.setting").as_string() == "on");
    CHECK(*get(j.job, PMIX_LOCAL_PEERS).as_string() == "4,5,6,7");
    CHECK(*get(j.job, PMIX_LOCAL_SIZE).as_uint() == 4);
    CHECK(get(j.job, PMIX_LOCALLDR).type == PMIX_PROC_RANK);
    CHECK(*get(j.job, PMIX_LOCALLDR).as_uint() == 4);
    CHECK(*get(j.job, PMIX_NUM_NODES).as_uint() == 3);
    CHECK(*get(j.job, PMIX_NODE_LIST).as_string() == "node01,node02,node03");
    CHECK(*get(j.job, PMIX_JOB_SIZE).as_uint() == 12);
    CHECK(*get(j.job, PMIX_UNIV_SIZE).as_uint() == 12);
    CHECK(*get(j.job, PMIX_HOSTNAME).as_string() == "node02");
    CHECK(*get(j.job, PMIX_NODEID).as_uint() == 1);
    CHECK(*get(j.job, PMIX_NSPACE).as_string() == "job.1");
    CHECK(*get(j.job, PMIX_JOBID).as_string() == "job.1");
    for (const auto& i : j.job) {
      CAPTURE(i.key);
      CHECK(count(j.job, i.key) == 1);
    }

    // Every rank, local or not, learns where it runs from its readers: with
    // nothing registered of their own, the local ones from their place in
    // PMIX_LOCAL_PEERS (the same as in the proc map), the others from the
    // maps.
    REQUIRE(j.ranks.size() == 12);
    CHECK(j.rank_order.empty());
    CHECK(j.local_ranks_by_peers);
    for (rank_t r = 0; r < 12; ++r) {
      CAPTURE(r);
      const auto& list = j.ranks.at(r);
      const rank_t node = r / 4;
      CHECK(*get(list, PMIX_HOSTNAME).as_string() == std::string{"node0"} + std::to_string(node + 1));
      CHECK(get(list, PMIX_NODEID).type == PMIX_UINT32);
      CHECK(*get(list, PMIX_NODEID).as_uint() == node);
      CHECK(get(list, PMIX_LOCAL_RANK).type == PMIX_UINT16);
      CHECK(*get(list, PMIX_LOCAL_RANK).as_uint() == r % 4);
      CHECK(*get(list, PMIX_NODE_RANK).as_uint() == r % 4);
      CHECK(*get(list, PMIX_GLOBAL_RANK).as_uint() == r);
    }
  }

  TEST_CASE("node_info_arrays describes each other node of the maps, not this one nor one the host described") {
    // node03 described by the host with an array of its own.
    array_value host_array{PMIX_INFO, {}};
    for (auto e : {entry(PMIX_HOSTNAME, value::string("node03")), entry(PMIX_LOCAL_SIZE, value::unsigned_(PMIX_UINT32, 9))})
      host_array.elements.push_back(value{PMIX_INFO, std::make_shared<const info>(std::move(e))});
    const auto l = layout_of({entry(PMIX_NODE_MAP, value::string(compact_nodes(node_list))),
                              entry(PMIX_PROC_MAP, value::string("2,0,1,3;4-7;8-11")),
                              entry(PMIX_NODE_INFO_ARRAY, value::array(std::move(host_array)))},
                             4, "node02");
    pmix::wire::JobInfo j;
    REQUIRE(j.ParseFromString(serialize_job_info("job.1", l, "node02")));
    const auto arrays = pmix::actors::node_info_arrays(j);
    REQUIRE(arrays.size() == 1);  // node01 only
    CHECK(arrays[0].key == PMIX_NODE_INFO_ARRAY);
    const auto* a = arrays[0].val.as_array();
    REQUIRE(a != nullptr);
    CHECK(a->type == PMIX_INFO);
    info_list items;
    for (const auto& e : a->elements) {
      REQUIRE(e.as_info() != nullptr);
      items.push_back(*e.as_info());
    }
    CHECK(*get(items, PMIX_HOSTNAME).as_string() == "node01");
    CHECK(get(items, PMIX_NODEID).type == PMIX_UINT32);
    CHECK(*get(items, PMIX_NODEID).as_uint() == 0);
    // In rank order and led by the lowest, as this node's own.
    CHECK(*get(items, PMIX_LOCAL_PEERS).as_string() == "0,1,2,3");
    CHECK(get(items, PMIX_LOCALLDR).type == PMIX_PROC_RANK);
    CHECK(*get(items, PMIX_LOCALLDR).as_uint() == 0);
    CHECK(get(items, PMIX_LOCAL_SIZE).type == PMIX_UINT32);
    CHECK(*get(items, PMIX_LOCAL_SIZE).as_uint() == 4);

    // Without a proc map there is nothing to describe.
    pmix::wire::JobInfo none;
    REQUIRE(none.ParseFromString(serialize_job_info("job.2", layout_of({}, 2, "node01"), "node01")));
    CHECK(pmix::actors::node_info_arrays(none).empty());
  }

  TEST_CASE("serialize_job_info of 100,000 ranks on 16 nodes is canonical protobuf, fills its buffer exactly, "
            "writes no rank, and its readers give every rank its node") {
    // The blob is sized before it is written; later ranks' numbers and node
    // names are longer than the first's (the estimate from rank 0 came short).
    std::string nodes, procs;
    for (int n = 0; n < 16; ++n) {
      nodes += (n ? "," : "") + std::string{"simnode"} + std::to_string(n);
      procs += (n ? ";" : "") + std::to_string(n * 6250) + "-" + std::to_string(n * 6250 + 6249);
    }
    const auto l = layout_of({entry(PMIX_NODE_MAP, value::string(compact_nodes(nodes))),
                              entry(PMIX_PROC_MAP, value::string(compact_procs(procs)))},
                             6250, "simnode15");
    // The proc map is held as one run per node (16 x 16 bytes), not as
    // 100,000 ranks (400 kB, the registration's largest allocation before).
    REQUIRE(l.node_ranks.size() == 16);
    for (const auto& on_node : l.node_ranks) CHECK(on_node.size() == 1);
    CHECK(l.local_ranks.size() == 6250);
    CHECK(l.local_ranks.front() == 93750);
    allocated = 0;
    counting = true;
    const auto blob = serialize_job_info("sim.main", l, "simnode15");
    counting = false;
    CHECK(blob.capacity() == blob.size());
    // Memory the registration asks for and gives back stays with the
    // allocator, in the server's resident size: about the blob and the
    // peers list it holds (105 kB asked for a blob of 38 kB), not buffers
    // grown by doubling nor derived data for the 6,250 ranks left to
    // PMIX_LOCAL_PEERS (150 kB; 481 kB asked in all before).
    CHECK_MESSAGE(allocated.load() < 4 * blob.size(), allocated.load(), " bytes for a blob of ", blob.size());
    pmix::wire::JobInfo parsed;
    REQUIRE(parsed.ParseFromString(blob));
    // The same fields protobuf would write, the rank index before the ranks
    // (protobuf puts it last).
    CHECK(parsed.SerializeAsString() == blob);
    // No rank is written (none registered anything): this node's ranks are
    // derived from PMIX_LOCAL_PEERS, the others' from the maps, where they
    // are read. (It wrote this node's 6,250, 0.96 MB, before.)
    CHECK(parsed.local_ranks_by_peers());
    CHECK(parsed.ranks_size() == 0);
    CHECK(parsed.rank_index().empty());
    CHECK(blob.size() < 40'000);
    const auto j = decode(blob);
    REQUIRE(j.ranks.size() == 100000);
    for (rank_t r : {0u, 1u, 6249u, 6250u, 93749u, 93750u, 99999u}) {
      CAPTURE(r);
      const auto& list = j.ranks.at(r);
      CHECK(*get(list, PMIX_HOSTNAME).as_string() == "simnode" + std::to_string(r / 6250));
      CHECK(*get(list, PMIX_NODEID).as_uint() == r / 6250);
      CHECK(*get(list, PMIX_LOCAL_RANK).as_uint() == r % 6250);
      CHECK(*get(list, PMIX_GLOBAL_RANK).as_uint() == r);
      CHECK(*get(list, PMIX_APPNUM).as_uint() == 0);
    }
  }

  TEST_CASE("the rank index: a lazy read finds every rank without touching the ranks' pages") {
    // 4,096 local ranks, each with its own registered item: the RankInfos
    // span many pages.
    info_list in;
    for (rank_t r = 0; r < 4096; ++r)
      in.push_back(proc_data({rank_entry(r), entry("app.endpoint", value::string("endpoint-of-rank-" + std::to_string(r)))}));
    const auto blob = serialize_job_info("big.job", layout_of(in, 4096, "solo"), "solo");
    pmix::wire::JobInfo parsed;
    REQUIRE(parsed.ParseFromString(blob));
    REQUIRE(parsed.ranks_size() == 4096);
    REQUIRE(parsed.rank_index().size() == 12 * 4096);

    // The blob in pages of its own; every page wholly inside the RankInfos
    // is made unreadable: the lazy read must not touch one.
    const std::size_t page = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
    const std::size_t size = (blob.size() + page - 1) / page * page;
    void* map = ::mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    REQUIRE(map != MAP_FAILED);
    std::memcpy(map, blob.data(), blob.size());
    const std::string_view view{static_cast<const char*>(map), blob.size()};
    const std::size_t first = blob.find(parsed.ranks(0).SerializeAsString());
    const std::size_t last = blob.rfind(parsed.ranks(4095).SerializeAsString());
    REQUIRE(first != std::string::npos);
    const std::size_t lo = (first + page - 1) / page * page, hi = last / page * page;
    REQUIRE(hi > lo + 4 * page);
    REQUIRE(::mprotect(static_cast<char*>(map) + lo, hi - lo, PROT_NONE) == 0);
    pmix::protocol::job_info lazy;
    std::string error;
    const bool read = pmix::protocol::decode_lazy(view, nullptr, lazy, &error);
    REQUIRE(::mprotect(static_cast<char*>(map) + lo, hi - lo, PROT_READ) == 0);
    REQUIRE_MESSAGE(read, error);
    CHECK(lazy.nspace == "big.job");
    CHECK(*get(lazy.info, PMIX_LOCAL_SIZE).as_uint() == 4096);

    // The index is read where it is: no per-rank vector is made (each of
    // N processes made one of N entries at PMIx_Init).
    CHECK(lazy.encoded.empty());
    REQUIRE(pmix::protocol::index_size(lazy.rank_index) == 4096);
    // Every rank found, in order, with its own items (as the eager read
    // gives them).
    const auto encoded = pmix::protocol::encoded_ranks(lazy);
    REQUIRE(encoded.size() == 4096);
    pmix::protocol::job_info eager;
    REQUIRE(pmix::protocol::decode(blob, eager, &error));
    REQUIRE(eager.ranks.size() == 4096);
    for (rank_t r : {0u, 1u, 2047u, 4095u}) {
      CAPTURE(r);
      CHECK(encoded[r].first == r);
      CHECK(pmix::protocol::index_find(lazy.rank_index, r) == r);
      info_list items;
      REQUIRE(pmix::protocol::decode_rank_info(encoded[r].second, items, &error));
      CHECK(*get(items, "app.endpoint").as_string() == "endpoint-of-rank-" + std::to_string(r));
      CHECK(items.size() == eager.ranks[r].second.size());
    }
    ::munmap(map, size);
  }

  TEST_CASE("the rank index: info appended after the ranks is read; a bad index is refused, or its bad entry; none, all read") {
    const auto l = layout_of({entry("custom.key", value::string("x"))}, 64, "solo");
    const auto blob = serialize_job_info("small.job", l, "solo");
    std::string error;

    // PMIx_server_setup_local_support appends job info after the ranks.
    std::string extended = blob;
    pmix::protocol::append_info(extended, pmix::wire::JobInfo::kInfoFieldNumber,
                                info{"added.later", value::string("yes"), 0});
    pmix::protocol::job_info job;
    REQUIRE_MESSAGE(pmix::protocol::decode_lazy(extended, job, &error), error);
    CHECK(*get(job.info, "added.later").as_string() == "yes");
    CHECK(*get(job.info, "custom.key").as_string() == "x");
    CHECK(pmix::protocol::encoded_ranks(job).size() == 64);
    CHECK(pmix::protocol::index_find(job.rank_index, 64) == 64);  // no such rank
    pmix::protocol::job_info whole;
    REQUIRE_MESSAGE(pmix::protocol::decode(extended, whole, &error), error);
    CHECK(whole.ranks.size() == 64);

    // A RankInfo the index does not name, after the indexed ones: refused,
    // read lazily or whole (the index names them all).
    pmix::wire::JobInfo more;
    more.add_ranks()->set_rank(64);
    pmix::protocol::job_info longer;
    CHECK_FALSE(pmix::protocol::decode_lazy(blob + more.SerializeAsString(), longer, &error));
    CHECK_FALSE(pmix::protocol::decode(blob + more.SerializeAsString(), longer, &error));

    pmix::wire::JobInfo parsed;
    REQUIRE(parsed.ParseFromString(blob));
    const std::size_t at = blob.find(parsed.rank_index());
    REQUIRE(at != std::string::npos);
    const auto with_entry_field = [&](std::size_t k, int field, std::uint32_t v) {
      std::string bad = blob;
      for (int b = 0; b < 4; ++b) bad[at + 12 * k + 4 * field + b] = static_cast<char>((v >> (8 * b)) & 0xff);
      return bad;
    };
    const std::uint32_t huge = static_cast<std::uint32_t>(blob.size() + 1);
    // The last entry, which says where the RankInfos end, pointing past the
    // message's end, or with a length past it: refused at once.
    for (int field : {1, 2}) {
      CAPTURE(field);
      pmix::protocol::job_info refused;
      CHECK_FALSE(pmix::protocol::decode_lazy(with_entry_field(63, field, huge), refused, &error));
    }
    // Another entry is not read until its rank is: the lazy read takes the
    // job, and that entry gives no bytes (the client logs it and its rank
    // has no registered data); every other rank keeps its own. The whole
    // read refuses the job.
    const auto ok = pmix::protocol::encoded_ranks(job);
    for (auto [field, v] : {std::pair<int, std::uint32_t>{1, huge}, {2, huge}, {1, 3}}) {
      CAPTURE(field);
      CAPTURE(v);
      const auto bad = with_entry_field(10, field, v);
      pmix::protocol::job_info lazy, eager;
      REQUIRE_MESSAGE(pmix::protocol::decode_lazy(bad, lazy, &error), error);
      REQUIRE(pmix::protocol::index_size(lazy.rank_index) == 64);
      const auto entries = pmix::protocol::encoded_ranks(lazy);
      CHECK(entries[10].first == 10);
      CHECK(entries[10].second.data() == nullptr);
      for (std::size_t k : {0u, 9u, 11u, 63u}) {
        CAPTURE(k);
        CHECK(entries[k].second == ok[k].second);
      }
      CHECK_FALSE(pmix::protocol::decode(bad, eager, &error));
    }

    // Without the index (a writer that reordered the message dropped it):
    // every RankInfo read, the same ranks found.
    parsed.clear_rank_index();
    pmix::protocol::job_info scanned;
    REQUIRE_MESSAGE(pmix::protocol::decode_lazy(parsed.SerializeAsString(), scanned, &error), error);
    REQUIRE(scanned.encoded.size() == 64);
    for (std::size_t k = 0; k < 64; ++k) {
      CHECK(scanned.encoded[k].first == ok[k].first);
      CHECK(scanned.encoded[k].second == ok[k].second);
    }

    // An index out of rank order (two entries swapped): the lazy read takes
    // it on trust (a rank it then misses has no registered data); the whole
    // read, which checks every entry, refuses it.
    std::string swapped = blob;
    std::swap_ranges(swapped.begin() + static_cast<std::ptrdiff_t>(at + 12 * 3),
                     swapped.begin() + static_cast<std::ptrdiff_t>(at + 12 * 4),
                     swapped.begin() + static_cast<std::ptrdiff_t>(at + 12 * 7));
    pmix::protocol::job_info unordered;
    CHECK(pmix::protocol::decode_lazy(swapped, unordered, &error));
    CHECK_FALSE(pmix::protocol::decode(swapped, unordered, &error));
  }

  TEST_CASE("serialize_job_info numbers ranks by their place in the node's list") {
    const auto l = layout_of({entry(PMIX_NODE_MAP, value::string("a,b")),
                              entry(PMIX_PROC_MAP, value::string(compact_procs("0,2,4;1,3")))},
                             3, "a");
    const auto j = decode(serialize_job_info("cyc", l, "a"));
    CHECK(*get(j.ranks.at(4), PMIX_LOCAL_RANK).as_uint() == 2);
    CHECK(*get(j.ranks.at(3), PMIX_LOCAL_RANK).as_uint() == 1);
    CHECK(*get(j.ranks.at(3), PMIX_HOSTNAME).as_string() == "b");
    CHECK(*get(j.job, PMIX_LOCAL_PEERS).as_string() == "0,2,4");
    CHECK(*get(j.job, PMIX_LOCALLDR).as_uint() == 0);
  }

  TEST_CASE("serialize_job_info writes the registered ranks and the placed local ones, sparse or dense") {
    // Cyclic over three nodes, this node "b": its ranks 1, 4, 7 are not one
    // run. The host's peers list adds 9, which the proc map places nowhere;
    // ranks 5 (on c) and 11 (in no map) have registered data of their own.
    const info_list in{entry(PMIX_NODE_MAP, value::string("a,b,c")),
                       entry(PMIX_PROC_MAP, value::string(compact_procs("0,3,6;1,4,7;2,5,8"))),
                       entry(PMIX_LOCAL_PEERS, value::string("1,4,7,9")),
                       entry(PMIX_JOB_SIZE, value::unsigned_(PMIX_UINT32, 12)),
                       proc_data({rank_entry(11), entry("app.key", value::string("eleven"))}),
                       proc_data({rank_entry(5), entry("app.key", value::string("five"))})};
    const auto j = decode(serialize_job_info("sparse", layout_of(in, 4, "b"), "b"));
    CHECK(j.rank_order == std::vector<rank_t>{1, 4, 5, 7, 11});
    CHECK(*get(j.ranks.at(4), PMIX_LOCAL_RANK).as_uint() == 1);
    CHECK(*get(j.ranks.at(4), PMIX_HOSTNAME).as_string() == "b");
    CHECK(*get(j.ranks.at(5), PMIX_HOSTNAME).as_string() == "c");
    CHECK(*get(j.ranks.at(5), PMIX_NODEID).as_uint() == 2);
    CHECK(*get(j.ranks.at(5), PMIX_LOCAL_RANK).as_uint() == 1);
    CHECK(*get(j.ranks.at(5), "app.key").as_string() == "five");
    CHECK(*get(j.ranks.at(11), "app.key").as_string() == "eleven");
    CHECK(pmix::find(j.ranks.at(11), PMIX_NODEID) == nullptr);  // placed by no map
    CHECK(j.ranks.count(9) == 0);
    // The other ranks of the map are derived by the readers.
    CHECK(*get(j.ranks.at(6), PMIX_HOSTNAME).as_string() == "a");
    CHECK(*get(j.ranks.at(6), PMIX_LOCAL_RANK).as_uint() == 2);

    // The same job in blocks: this node's ranks are one run.
    const info_list blocks{entry(PMIX_NODE_MAP, value::string("a,b,c")),
                           entry(PMIX_PROC_MAP, value::string(compact_procs("0-3;4-7;8-11"))),
                           proc_data({rank_entry(9), entry("app.key", value::string("nine"))})};
    const auto k = decode(serialize_job_info("dense", layout_of(blocks, 4, "b"), "b"));
    CHECK(k.rank_order == std::vector<rank_t>{9});  // this node's are left to PMIX_LOCAL_PEERS
    CHECK(k.local_ranks_by_peers);
    CHECK(*get(k.ranks.at(9), PMIX_LOCAL_RANK).as_uint() == 1);
    CHECK(*get(k.ranks.at(9), PMIX_HOSTNAME).as_string() == "c");
    CHECK(*get(k.ranks.at(6), PMIX_LOCAL_RANK).as_uint() == 2);
    CHECK(*get(k.ranks.at(6), PMIX_HOSTNAME).as_string() == "b");
    CHECK_FALSE(j.local_ranks_by_peers);  // the cyclic job's peers are not its node's list
  }

  TEST_CASE("this node's ranks are written when the job's own items would not give theirs") {
    // Each of these breaks one thing a reader derives a local rank's items
    // from: its place in PMIX_LOCAL_PEERS, the job's PMIX_HOSTNAME and
    // PMIX_NODEID.
    const auto maps = [](info_list extra) {
      info_list in{entry(PMIX_NODE_MAP, value::string("a,b,c")),
                   entry(PMIX_PROC_MAP, value::string(compact_procs("0,1,2;5,3,4;6,7,8")))};
      for (auto& e : extra) in.push_back(std::move(e));
      return in;
    };
    struct variant {
      const char* what;
      info_list extra;
      const char* host;
      std::vector<rank_t> written;
    };
    const std::vector<variant> cases{
        {"node b lists its ranks out of order", {}, "b", {3, 4, 5}},
        {"the host's peers list is not the map's", {entry(PMIX_LOCAL_PEERS, value::string("0,1"))}, "a", {0, 1}},
        {"the host names this node otherwise", {entry(PMIX_HOSTNAME, value::string("a.example"))}, "a", {0, 1, 2}},
        {"the host numbers this node otherwise", {entry(PMIX_NODEID, value::unsigned_(PMIX_UINT32, 7))}, "a", {0, 1, 2}},
        {"all as the maps say", {}, "a", {}},
    };
    for (const auto& c : cases) {
      CAPTURE(c.what);
      const auto j = decode(serialize_job_info("x", layout_of(maps(c.extra), 3, c.host), c.host));
      CHECK(j.rank_order == c.written);
      CHECK(j.local_ranks_by_peers == c.written.empty());
    }
  }

  TEST_CASE("serialize_job_info does not override keys the host gave") {
    const info_list in{
        entry(PMIX_NODE_MAP, value::string(node_list)),
        entry(PMIX_PROC_MAP, value::string(proc_list)),
        entry(PMIX_NUM_NODES, value::unsigned_(PMIX_UINT32, 99)),
        entry(PMIX_HOSTNAME, value::string("alias")),
        entry(PMIX_LOCAL_SIZE, value::unsigned_(PMIX_UINT32, 77)),
        entry(PMIX_UNIV_SIZE, value::unsigned_(PMIX_UINT32, 1000)),
        entry(PMIX_NODE_LIST, value::string("host-given")),
        entry(PMIX_LOCALLDR, value::unsigned_(PMIX_PROC_RANK, 6)),
        proc_data({rank_entry(5), entry(PMIX_LOCAL_RANK, value::unsigned_(PMIX_UINT16, 42)),
                   entry(PMIX_HOSTNAME, value::string("special")),
                   entry(PMIX_NODEID, value::unsigned_(PMIX_UINT32, 8))})};
    const auto l = layout_of(in, 4, "node02");
    const auto j = decode(serialize_job_info("job", l, "node02"));
    CHECK(*get(j.job, PMIX_NUM_NODES).as_uint() == 99);
    CHECK(*get(j.job, PMIX_HOSTNAME).as_string() == "alias");
    CHECK(*get(j.job, PMIX_LOCAL_SIZE).as_uint() == 77);
    CHECK(*get(j.job, PMIX_UNIV_SIZE).as_uint() == 1000);
    CHECK(*get(j.job, PMIX_NODE_LIST).as_string() == "host-given");
    CHECK(*get(j.job, PMIX_LOCALLDR).as_uint() == 6);
    for (const char* key : {PMIX_NUM_NODES, PMIX_HOSTNAME, PMIX_LOCAL_SIZE, PMIX_UNIV_SIZE,
                            PMIX_NODE_LIST, PMIX_LOCALLDR}) {
      CAPTURE(key);
      CHECK(count(j.job, key) == 1);
    }
    // Derived keys the host did not give are still added.
    CHECK(*get(j.job, PMIX_JOB_SIZE).as_uint() == 12);

    const auto& five = j.ranks.at(5);
    CHECK(*get(five, PMIX_LOCAL_RANK).as_uint() == 42);
    CHECK(*get(five, PMIX_HOSTNAME).as_string() == "special");
    CHECK(*get(five, PMIX_NODEID).as_uint() == 8);
    CHECK(count(five, PMIX_LOCAL_RANK) == 1);
    CHECK(count(five, PMIX_HOSTNAME) == 1);
    CHECK(count(five, PMIX_NODEID) == 1);
    // What the host did not give for rank 5 is derived.
    CHECK(*get(five, PMIX_NODE_RANK).as_uint() == 1);
    CHECK(*get(five, PMIX_GLOBAL_RANK).as_uint() == 5);
    // Other ranks are untouched by rank 5's data.
    CHECK(*get(j.ranks.at(6), PMIX_LOCAL_RANK).as_uint() == 2);
  }

  TEST_CASE("serialize_job_info of a single-node job without maps") {
    const auto l = layout_of({}, 3, "solo-host");
    const auto j = decode(serialize_job_info("single", l, "solo-host"));
    CHECK(*get(j.job, PMIX_NUM_NODES).as_uint() == 1);
    CHECK(pmix::find(j.job, PMIX_NODE_LIST) == nullptr);
    CHECK(pmix::find(j.job, PMIX_NODEID) == nullptr);
    CHECK(*get(j.job, PMIX_LOCAL_PEERS).as_string() == "0,1,2");
    CHECK(*get(j.job, PMIX_LOCAL_SIZE).as_uint() == 3);
    CHECK(*get(j.job, PMIX_JOB_SIZE).as_uint() == 3);
    CHECK(*get(j.job, PMIX_LOCALLDR).as_uint() == 0);
    REQUIRE(j.ranks.size() == 3);
    for (rank_t r = 0; r < 3; ++r) {
      CAPTURE(r);
      CHECK(*get(j.ranks.at(r), PMIX_HOSTNAME).as_string() == "solo-host");
      CHECK(*get(j.ranks.at(r), PMIX_LOCAL_RANK).as_uint() == r);
      CHECK(*get(j.ranks.at(r), PMIX_NODE_RANK).as_uint() == r);
      CHECK(*get(j.ranks.at(r), PMIX_GLOBAL_RANK).as_uint() == r);
    }
  }

  TEST_CASE("serialize_job_info without local ranks has no PMIX_LOCALLDR and no peer list") {
    // As OpenPMIx: Open MPI splits a peer list it gets and reads its first
    // element, so an empty one crashed MPI_Comm_spawn across nodes (on the
    // parents' nodes, which have none of the children's ranks).
    const auto l = layout_of({entry(PMIX_NODE_MAP, value::string(node_list)),
                              entry(PMIX_PROC_MAP, value::string(proc_list))},
                             0, "elsewhere");
    const auto j = decode(serialize_job_info("job", l, "elsewhere"));
    CHECK(pmix::find(j.job, PMIX_LOCAL_PEERS) == nullptr);
    CHECK(*get(j.job, PMIX_LOCAL_SIZE).as_uint() == 0);
    CHECK(pmix::find(j.job, PMIX_LOCALLDR) == nullptr);
    CHECK(pmix::find(j.job, PMIX_NODEID) == nullptr);
    CHECK(j.ranks.size() == 12);
  }
}

TEST_SUITE("job_layout") {
  TEST_CASE("without maps, a job size equal to nlocalprocs puts every rank here") {
    const auto l = layout_of({entry(PMIX_JOB_SIZE, value::unsigned_(PMIX_UINT32, 4))}, 4, "node0");
    CHECK(l.local_ranks == std::vector<rank_t>{0, 1, 2, 3});
    CHECK(l.all_local());
  }

  TEST_CASE("without maps, a job larger than nlocalprocs leaves the local ranks to registration") {
    const auto l = layout_of({entry(PMIX_JOB_SIZE, value::unsigned_(PMIX_UINT32, 8))}, 4, "node0");
    CHECK(l.local_ranks.empty());
    REQUIRE(l.job_size.has_value());
    CHECK(*l.job_size == 8);
    CHECK_FALSE(l.all_local());
  }

  TEST_CASE("a PMIX_REGEX map whose bytes count the terminating NUL parses") {
    const std::string nodes = compact_nodes(node_list);
    const auto l = layout_of({entry(PMIX_NODE_MAP, value::bytes(PMIX_REGEX, nodes + std::string(1, '\0'))),
                              entry(PMIX_PROC_MAP, value::string(proc_list))},
                             4, "node03");
    CHECK(l.nodes == std::vector<std::string>{"node01", "node02", "node03"});
    CHECK(l.local_node == 2);
  }

  TEST_CASE("sort_unique sorts and removes duplicates, dense or sparse") {
    using pmix::actors::sort_unique;
    std::vector<rank_t> none;
    sort_unique(none);
    CHECK(none.empty());
    // Dense: sorted runs listed twice, as a registration's ranks are.
    std::vector<rank_t> dense;
    for (int pass = 0; pass < 2; ++pass)
      for (rank_t r = 0; r < 1000; ++r) dense.push_back(r);
    dense.push_back(5);
    sort_unique(dense);
    REQUIRE(dense.size() == 1000);
    for (rank_t r = 0; r < 1000; ++r) CHECK(dense[r] == r);
    // Gaps and disorder.
    std::vector<rank_t> gaps{9, 3, 3, 0, 7, 9};
    sort_unique(gaps);
    CHECK(gaps == std::vector<rank_t>{0, 3, 7, 9});
    // Sparse: a few ranks far apart.
    std::vector<rank_t> sparse{4000000000u, 12, 4000000000u, 70000000u};
    sort_unique(sparse);
    CHECK(sparse == std::vector<rank_t>{12, 70000000u, 4000000000u});
  }

  TEST_CASE("JobInfo.local_runs gives PMIX_LOCAL_PEERS as runs where they are shorter than the list") {
    // What a process reads at PMIx_Init instead of parsing the list (issue
    // 40): the same ranks, from the list the server writes.
    auto written = [](const info_list& in, int nlocalprocs, const std::string& host) {
      const auto blob = serialize_job_info("job.r", layout_of(in, nlocalprocs, host), host);
      pmix::protocol::job_info lazy;
      std::string error;
      REQUIRE_MESSAGE(pmix::protocol::decode_lazy(blob, lazy, &error), error);
      pmix::wire::JobInfo j;
      REQUIRE(j.ParseFromString(blob));
      CHECK(j.local_runs() == lazy.local_runs);  // the lazy read finds it where it is written
      return lazy;
    };
    auto peers_of = [](const pmix::protocol::job_info& j) {
      const auto* v = pmix::find(j.info, PMIX_LOCAL_PEERS);
      REQUIRE(v != nullptr);
      auto parsed = pmix::regex::parse_proc_map(*v->val.as_string());
      REQUIRE(parsed.ok());
      return parsed.value().at(0);
    };
    auto runs_of = [](const pmix::protocol::job_info& j) {
      std::vector<rank_t> ranks;
      REQUIRE(pmix::protocol::expand_local_runs(j.local_runs, 1u << 20, ranks));
      return ranks;
    };

    // A node of 4,096 ranks in one block: one run of 8 bytes.
    const auto dense = written({entry(PMIX_NODE_MAP, value::string("n0,n1")),
                                entry(PMIX_PROC_MAP, value::string("0-4095;4096-8191"))},
                               4096, "n1");
    CHECK(dense.local_runs.size() == 8);
    const auto dense_ranks = runs_of(dense);
    CHECK(dense_ranks.size() == 4096);
    CHECK(dense_ranks.front() == 4096);
    CHECK(dense_ranks == peers_of(dense));

    // Two blocks, and the host's own PMIX_LOCAL_PEERS out of order: the
    // server writes its sorted list, and the runs of it.
    const auto blocks = written({entry(PMIX_LOCAL_PEERS, value::string("300-399,0-99,50"))}, 200, "h");
    CHECK(blocks.local_runs.size() == 16);
    CHECK(runs_of(blocks) == peers_of(blocks));
    CHECK(peers_of(blocks).size() == 200);

    // Round robin over 4 nodes: a run per rank would be 8 bytes against the
    // list's 2 to 5; instead one run of ranks 4 apart (12 bytes,
    // JobInfo.local_strided_runs), the same ranks as the list.
    std::string cyclic;
    for (int n = 0; n < 4; ++n) {
      cyclic += n ? ";" : "";
      for (int k = 0; k < 64; ++k) cyclic += (k ? "," : "") + std::to_string(4 * k + n);
    }
    const auto scattered = written({entry(PMIX_NODE_MAP, value::string("a,b,c,d")),
                                    entry(PMIX_PROC_MAP, value::string(cyclic))},
                                   64, "b");
    CHECK(scattered.local_runs.empty());
    CHECK(scattered.local_strided_runs.size() == 12);
    std::vector<pmix::protocol::local_run> strided;
    REQUIRE(pmix::protocol::read_local_strided_runs(scattered.local_strided_runs, 1u << 20, strided));
    CHECK(pmix::protocol::expand_runs(strided) == peers_of(scattered));
    CHECK(peers_of(scattered).size() == 64);
    CHECK(peers_of(scattered).front() == 1);

    // Scattered with no pattern: neither is shorter than the list; none.
    const auto random = written({entry(PMIX_LOCAL_PEERS, value::string("3,10,12,40,41,77,90,91,95,130"))}, 10, "h");
    CHECK(random.local_runs.empty());
    CHECK(random.local_strided_runs.empty());

    // No local ranks: no list, no runs.
    const auto none = written({entry(PMIX_NODE_MAP, value::string("a,b")),
                               entry(PMIX_PROC_MAP, value::string("0-1;2-3"))},
                              0, "z");
    CHECK(pmix::find(none.info, PMIX_LOCAL_PEERS) == nullptr);
    CHECK(none.local_runs.empty());
    CHECK(none.local_strided_runs.empty());
  }

  TEST_CASE("read_local_strided_runs takes only runs in order, after each other, within valid ranks and the bound") {
    auto runs = [](std::vector<std::array<std::uint32_t, 3>> list) {
      std::string out;
      for (const auto& run : list)
        for (std::uint32_t v : run)
          for (int k = 0; k < 4; ++k) out += static_cast<char>((v >> (8 * k)) & 0xff);
      return out;
    };
    std::vector<pmix::protocol::local_run> out;
    REQUIRE(pmix::protocol::read_local_strided_runs(runs({{1, 3, 16}, {40, 2, 1}, {42, 2, 5}}), 7, out));
    CHECK(pmix::protocol::expand_runs(out) == std::vector<rank_t>{1, 17, 33, 40, 41, 42, 47});
    CHECK(pmix::protocol::read_local_strided_runs("", 5, out));
    CHECK(out.empty());
    for (const auto& bad : {runs({{0, 3, 2}}).substr(1),                  // not 12 bytes a run
                            runs({{10, 2, 1}, {0, 3, 1}}),                // out of order
                            runs({{0, 3, 16}, {32, 1, 1}}),               // its first is the last before
                            runs({{0, 3, 16}, {20, 1, 1}}),               // within the run before
                            runs({{0, 0, 1}}),                            // empty
                            runs({{0, 2, 0}}),                            // no stride
                            runs({{0xffffffffu - 60, 20, 1}}),            // past the valid ranks
                            runs({{5, 3, 0x7fffffffu}}),                  // strides past them
                            runs({{0, 0xffffffffu, 0xffffffffu}})}) {     // as far as 64 bits go
      out = {{7, 1, 1}};
      CHECK_FALSE(pmix::protocol::read_local_strided_runs(bad, 1u << 20, out));
      CHECK(out.empty());
    }
    CHECK_FALSE(pmix::protocol::read_local_strided_runs(runs({{0, 3, 2}, {10, 3, 2}}), 5, out));  // over the bound
    CHECK_FALSE(pmix::protocol::read_local_strided_runs(runs({{0, 4000000, 1}}), 1000, out));
  }

  TEST_CASE("expand_local_runs takes only runs in order, apart, within valid ranks and the bound") {
    auto runs = [](std::vector<std::pair<std::uint32_t, std::uint32_t>> list) {
      std::string out;
      for (const auto& [first, count] : list)
        for (std::uint32_t v : {first, count})
          for (int k = 0; k < 4; ++k) out += static_cast<char>((v >> (8 * k)) & 0xff);
      return out;
    };
    std::vector<rank_t> out{42};
    CHECK(pmix::protocol::expand_local_runs(runs({{0, 3}, {10, 2}}), 5, out));
    CHECK(out == std::vector<rank_t>{0, 1, 2, 10, 11});
    CHECK(pmix::protocol::expand_local_runs("", 5, out));
    CHECK(out.empty());
    for (const auto& bad : {runs({{0, 3}, {10, 2}}).substr(1),        // not 8 bytes a run
                            runs({{10, 2}, {0, 3}}),                   // out of order
                            runs({{0, 3}, {3, 2}}),                    // touching: one run
                            runs({{0, 3}, {2, 2}}),                    // overlapping
                            runs({{0, 0}}),                            // empty
                            runs({{0xffffffffu - 60, 20}}),            // past the valid ranks
                            runs({{0, 0xffffffffu}, {0, 1}})}) {       // wraps
      out = {42};
      CHECK_FALSE(pmix::protocol::expand_local_runs(bad, 1u << 20, out));
      CHECK(out.empty());
    }
    CHECK_FALSE(pmix::protocol::expand_local_runs(runs({{0, 3}, {10, 3}}), 5, out));  // over the bound
    CHECK_FALSE(pmix::protocol::expand_local_runs(runs({{0, 4000000}}), 1000, out));  // allocates nothing
  }
}
