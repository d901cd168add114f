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

// Values of type `t` of the kind the value model fixes for it, including the
// edge cases proto3 treats specially (zero and empty fields are left out,
// negative int32/int64 take ten bytes).
std::vector<value> samples(data_type t) {
  switch (value::kind_of(t)) {
    case value::kind::none:
      return {value{}};
    case value::kind::boolean:
      return {value::boolean(true), value::boolean(false)};
    case value::kind::integer:
      return {value::integer(t, 0), value::integer(t, -1), value::integer(t, 77),
              value::integer(t, std::numeric_limits<std::int64_t>::min()),
              value::integer(t, std::numeric_limits<std::int64_t>::max())};
    case value::kind::unsigned_:
      return {value::unsigned_(t, 0), value::unsigned_(t, 127), value::unsigned_(t, 128),
              value::unsigned_(t, std::numeric_limits<std::uint64_t>::max())};
    case value::kind::real:
      return {value::real(t, 0.0), value::real(t, -2.5), value::real(t, 1e300)};
    case value::kind::bytes:
      return {value::bytes(t, ""), value::bytes(t, std::string{"b\0y\xfft", 5}),
              value::bytes(t, std::string(300, 'x'))};
    case value::kind::proc:
      return {value::proc(proc_id{"job-7", 12}), value::proc(proc_id{"", 0}),
              value::proc(proc_id{"j", pmix::rank_wildcard})};
    case value::kind::timeval:
      return {value{t, timeval_value{1700000000, 999999}}, value{t, timeval_value{0, 0}},
              value{t, timeval_value{-5, -1}}};
    case value::kind::envar:
      return {value{t, std::make_shared<const envar_value>(envar_value{"PATH", "/usr/bin", ':'})},
              value{t, std::make_shared<const envar_value>(envar_value{"", "", 0})}};
    case value::kind::proc_info:
      return {value{t, std::make_shared<const proc_info_value>(pmix::test::sample_proc_info())},
              value{t, std::make_shared<const proc_info_value>(proc_info_value{})}};
    case value::kind::array: {
      auto inner = value::array(array_value{PMIX_UINT32, {value::unsigned_(PMIX_UINT32, 0), value::unsigned_(PMIX_UINT32, 9)}});
      auto infos = value::array(array_value{
          PMIX_INFO,
          {value{PMIX_INFO, std::make_shared<const info>(info{PMIX_RANK, value::unsigned_(PMIX_PROC_RANK, 5), 0})},
           value{PMIX_INFO, std::make_shared<const info>(info{"", value{}, 0})},
           value{PMIX_INFO, std::make_shared<const info>(info{"k", inner, PMIX_INFO_REQD})}}});
      return {inner, infos, value::array(array_value{0, {}}),
              value::array(array_value{PMIX_VALUE, {value{}, inner, value::string("s")}})};
    }
    case value::kind::info:
      return {value{PMIX_INFO, std::make_shared<const info>(info{"inner.key", value::string("x"), PMIX_INFO_REQD})}};
    case value::kind::unsupported:
      return {value{t, std::monostate{}}, value{t, std::string{"ignored"}}};
  }
  return {};
}

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
