// The direct encoder (protocol/direct.hpp) writes exactly the bytes protobuf
// writes for the same wire::Info built by the codec (protocol/codec.hpp):
// every data type, zero and negative edge values, empty strings, nested
// arrays and info elements, and types the wire cannot carry.
#include "protocol/direct.hpp"

#include <doctest/doctest.h>
#include <pmix_common.h>

#include <cstdint>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "common/value.hpp"
#include "protocol/codec.hpp"
#include "protocol/pmix.pb.h"
#include "tests/protocol/samples.hpp"

namespace proto = pmix::protocol;
namespace wire = pmix::wire;
using namespace pmix;  // the value model's types: value, info, proc_id, ...

namespace {

using pmix::test::rank_data;
using pmix::test::samples;


std::string via_messages(const info& i) {
  wire::Info w;
  proto::to_wire(i, &w);
  return w.SerializeAsString();
}

std::string direct(const info& i) {
  std::string out;
  proto::append_info(out, 1, i);
  // Drop the outer field's tag and length: what remains is the Info itself.
  wire::JobInfo probe;  // nspace (field 1) is a bytes field holding exactly those bytes
  REQUIRE(probe.ParseFromString(out));
  return probe.nspace();
}

}  // namespace

TEST_CASE("[wire] the direct encoder writes what protobuf writes, for every data type") {
  int checked = 0;
  for (std::uint32_t t = 0; t <= 0xffff; ++t) {
    for (const auto& v : samples(static_cast<data_type>(t))) {
      for (std::uint32_t flags : {0u, 1u, 0x80000000u}) {
        for (const char* key : {"", "pmix.hname", "a.key.longer.than.fifteen.characters"}) {
          const info i{key, v, flags};
          const auto expected = via_messages(i);
          CHECK_MESSAGE(direct(i) == expected, "type ", t, " key '", key, "' flags ", flags);
          CHECK(proto::info_size(i) == expected.size());
          ++checked;
        }
      }
    }
  }
  CHECK(checked > 1000);
}

TEST_CASE("[wire] append_uint writes a varint field, and nothing for 0") {
  std::string out;
  proto::append_uint(out, 1, 0);
  CHECK(out.empty());
  proto::append_uint(out, 1, 300);
  wire::RankInfo r;
  REQUIRE(r.ParseFromString(out));
  CHECK(r.rank() == 300);
}

TEST_CASE("a RankData written field by field has the bytes of the message's own serializer") {
  // What a peer sends as its committed data (actors/peer_actor.cpp,
  // rank_blob). Entries from none to multi-kilobyte (1-, 2- and 3-byte lengths), and
  // the special ranks, whose varints are the longest.
  for (const auto rank : {0u, 7u, 300u, static_cast<std::uint32_t>(PMIX_RANK_WILDCARD)}) {
    // A process without a namespace (only its rank, or nothing at all).
    std::string no_ns;
    proto::append_proc(no_ns, wire::RankData::kProcFieldNumber, proc_id{"", rank});
    wire::RankData empty;
    empty.mutable_proc()->set_rank(rank);
    CHECK(no_ns == empty.SerializeAsString());
    for (const int entries : {0, 1, 3, 200, 2000}) {
      CAPTURE(rank);
      CAPTURE(entries);
      const auto expected = rank_data("job.a", rank, entries);
      std::string out;
      proto::append_proc(out, wire::RankData::kProcFieldNumber, proc_id{"job.a", rank});
      for (const auto& item : expected.data())
        proto::append_delimited(out, wire::RankData::kDataFieldNumber, item.SerializeAsString());
      CHECK(out == expected.SerializeAsString());
      wire::RankData back;
      REQUIRE(back.ParseFromString(out));
      CHECK(proto::from_wire(back.proc()) == proc_id{"job.a", rank});
      CHECK(back.data_size() == entries);
    }
  }
  // A long key, value and namespace (lengths of two bytes and more).
  wire::RankData big;
  proto::to_wire(proc_id{std::string(300, 'n'), 1}, big.mutable_proc());
  auto* s = big.add_data();
  s->set_scope(PMIX_LOCAL);
  proto::to_wire(info{std::string(200, 'k'), value::string(std::string(70000, 'v')), 0}, s->mutable_info());
  std::string out;
  proto::append_proc(out, wire::RankData::kProcFieldNumber, proc_id{std::string(300, 'n'), 1});
  proto::append_delimited(out, wire::RankData::kDataFieldNumber, s->SerializeAsString());
  CHECK(out == big.SerializeAsString());
}
