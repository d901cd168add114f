// Sample payloads shared by the wire tests (codec_test, direct_test,
// messages_test).
#pragma once

#include <pmix_common.h>

#include <cstdint>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "common/value.hpp"
#include "protocol/codec.hpp"
#include "protocol/pmix.pb.h"

namespace pmix::test {

// A PMIX_PROC_INFO with every field set, a negative exit code included.
inline proc_info_value sample_proc_info() {
  proc_info_value p;
  p.proc = proc_id{"job-7", 3};
  p.hostname = "node001";
  p.executable = "/bin/a.out";
  p.pid = 4242;
  p.exit_code = -9;
  p.state = 255;
  return p;
}

// Every data type the value model can carry (anything but kind::unsupported).
inline std::vector<data_type> supported_types() {
  std::vector<data_type> out;
  for (std::uint32_t t = 0; t <= 0xffff; ++t)
    if (value::kind_of(static_cast<data_type>(t)) != value::kind::unsupported)
      out.push_back(static_cast<data_type>(t));
  return out;
}

// A PMIX_INFO value holding one info.
inline value info_value(std::string key, value v, std::uint32_t flags = 0) {
  return value{PMIX_INFO, std::make_shared<const info>(info{std::move(key), std::move(v), flags})};
}

// Values of type `t` of the kind the value model fixes for it, with the edge
// cases proto3 treats specially (zero and empty fields left out, negative
// int32/int64 in ten bytes) and a few special payloads (NaN, all byte values,
// a separator above 127, rank 0 and the special ranks).
inline std::vector<value> samples(data_type t) {
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
      return {value::real(t, 0.0), value::real(t, -0.0), value::real(t, -2.5), value::real(t, 1e300),
              value::real(t, std::numeric_limits<double>::quiet_NaN()),
              value::real(t, -std::numeric_limits<double>::infinity())};
    case value::kind::bytes: {
      std::string all;
      for (int c = 0; c < 256; ++c) all.push_back(static_cast<char>(c));
      return {value::bytes(t, ""), value::bytes(t, std::string{"b\0y\xfft", 5}), value::bytes(t, all)};
    }
    case value::kind::proc:
      return {value::proc(proc_id{"job-7", 12}), value::proc(proc_id{"", 0}), value::proc(proc_id{"job-7", 0}),
              value::proc(proc_id{"j", rank_wildcard}), value::proc(proc_id{"j", rank_undef})};
    case value::kind::timeval:
      return {value{t, timeval_value{1700000000, 999999}}, value{t, timeval_value{0, 0}},
              value{t, timeval_value{-5, -1}}};
    case value::kind::envar:
      return {value{t, std::make_shared<const envar_value>(envar_value{"PATH", "/usr/bin", ':'})},
              value{t, std::make_shared<const envar_value>(envar_value{"", "", 0})},
              value{t, std::make_shared<const envar_value>(envar_value{"X", "y", '\xff'})}};
    case value::kind::proc_info: {
      proc_info_value rank0 = sample_proc_info();
      rank0.proc = proc_id{"job-7", 0};
      rank0.pid = -1;
      return {value{t, std::make_shared<const proc_info_value>(sample_proc_info())},
              value{t, std::make_shared<const proc_info_value>(rank0)},
              value{t, std::make_shared<const proc_info_value>(proc_info_value{})}};
    }
    case value::kind::array: {
      auto inner = value::array(
          array_value{PMIX_UINT32, {value::unsigned_(PMIX_UINT32, 0), value::unsigned_(PMIX_UINT32, 9)}});
      auto infos = value::array(array_value{PMIX_INFO,
                                            {info_value(PMIX_RANK, value::unsigned_(PMIX_PROC_RANK, 5)),
                                             info_value("", value{}), info_value("k", inner, PMIX_INFO_REQD)}});
      return {inner, infos, value::array(array_value{0, {}}),
              value::array(array_value{PMIX_VALUE, {value{}, inner, value::string("s"), infos}}),
              value::array(array_value{PMIX_DATA_ARRAY, {inner, value::array(array_value{PMIX_BOOL, {}})}})};
    }
    case value::kind::info:
      return {info_value("inner.key", value::string("x"), PMIX_INFO_REQD), info_value("", value{}),
              info_value("nested", info_value("deeper", value::integer(PMIX_INT, -3)))};
    case value::kind::unsupported:
      return {value{t, std::monostate{}}, value{t, std::string{"ignored"}}};
  }
  return {};
}

// A RankData of `entries` string items ("key<i>" = "v<rank>.<i>", global
// scope), as the protobuf classes build it.
inline wire::RankData rank_data(const std::string& nspace, std::uint32_t rank, int entries) {
  wire::RankData d;
  d.mutable_proc()->set_nspace(nspace);
  d.mutable_proc()->set_rank(rank);
  for (int i = 0; i < entries; ++i) {
    auto* s = d.add_data();
    s->set_scope(PMIX_GLOBAL);
    info in{"key" + std::to_string(i), value::string("v" + std::to_string(rank) + "." + std::to_string(i)), 0};
    protocol::to_wire(in, s->mutable_info());
  }
  return d;
}

}  // namespace pmix::test
