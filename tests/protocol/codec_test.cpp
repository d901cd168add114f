// The codec between the wire schema (protocol/pmix.proto) and the library's
// C++ values (common/value.hpp), envelope framing and length-delimited
// concatenation (protocol/codec.hpp).
#include "protocol/codec.hpp"

#include <doctest/doctest.h>
#include <pmix_common.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <memory>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "common/value.hpp"
#include "protocol/framing.hpp"
#include "protocol/pmix.pb.h"
#include "tests/protocol/samples.hpp"
#include "tests/protocol/wire_payloads.hpp"

namespace proto = pmix::protocol;
namespace wire = pmix::wire;
using pmix::array_value;
using pmix::data_type;
using pmix::envar_value;
using pmix::info;
using pmix::info_list;
using pmix::proc_id;
using pmix::proc_info_value;
using pmix::timeval_value;
using pmix::value;

namespace {

using pmix::test::nested_arrays;
using pmix::test::rank_data;
using pmix::test::supported_types;

// ---- deep equality of C++ values -------------------------------------------

bool same(const value& a, const value& b);

bool same(const info& a, const info& b) {
  return a.key == b.key && a.flags == b.flags && same(a.val, b.val);
}

bool same_payload(const std::monostate&, const std::monostate&) { return true; }
bool same_payload(bool a, bool b) { return a == b; }
bool same_payload(std::int64_t a, std::int64_t b) { return a == b; }
bool same_payload(std::uint64_t a, std::uint64_t b) { return a == b; }
bool same_payload(double a, double b) { return std::memcmp(&a, &b, sizeof a) == 0; }  // NaN, -0.0
bool same_payload(const std::string& a, const std::string& b) { return a == b; }
bool same_payload(const proc_id& a, const proc_id& b) { return a == b; }
bool same_payload(const timeval_value& a, const timeval_value& b) {
  return a.sec == b.sec && a.usec == b.usec;
}
bool same_payload(const std::shared_ptr<const envar_value>& pa, const std::shared_ptr<const envar_value>& pb) {
  if (!pa || !pb) return !pa && !pb;
  const auto &a = *pa, &b = *pb;
  return a.name == b.name && a.value == b.value && a.separator == b.separator;
}
bool same_payload(const std::shared_ptr<const proc_info_value>& pa,
                  const std::shared_ptr<const proc_info_value>& pb) {
  if (!pa || !pb) return !pa && !pb;
  const auto &a = *pa, &b = *pb;
  return a.proc == b.proc && a.hostname == b.hostname && a.executable == b.executable &&
         a.pid == b.pid && a.exit_code == b.exit_code && a.state == b.state;
}
bool same_payload(const std::shared_ptr<const array_value>& a,
                  const std::shared_ptr<const array_value>& b) {
  if (!a || !b) return !a && !b;
  if (a->type != b->type || a->elements.size() != b->elements.size()) return false;
  for (std::size_t i = 0; i < a->elements.size(); ++i)
    if (!same(a->elements[i], b->elements[i])) return false;
  return true;
}
bool same_payload(const std::shared_ptr<const info>& a, const std::shared_ptr<const info>& b) {
  if (!a || !b) return !a && !b;
  return same(*a, *b);
}

bool same(const value& a, const value& b) {
  if (a.type != b.type || a.data.index() != b.data.index()) return false;
  return std::visit(
      [&b](const auto& x) {
        using T = std::decay_t<decltype(x)>;
        return same_payload(x, std::get<T>(b.data));
      },
      a.data);
}

bool same(const info_list& a, const info_list& b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i)
    if (!same(a[i], b[i])) return false;
  return true;
}

// ---- sample values ----------------------------------------------------------

value make_info_value(std::string key, value v, std::uint32_t flags = 0) {
  return value{PMIX_INFO, std::make_shared<const info>(info{std::move(key), std::move(v), flags})};
}

value make_array(data_type element_type, std::vector<value> elements) {
  return value::array(array_value{element_type, std::move(elements)});
}

// A non-trivial value of type `t`, chosen by the kind the value model fixes
// for `t` (value::kind_of).
value sample(data_type t) {
  switch (value::kind_of(t)) {
    case value::kind::none:
      return value{};
    case value::kind::boolean:
      return value::boolean(true);
    case value::kind::integer:
      return value::integer(t, -1234567 - static_cast<std::int64_t>(t));
    case value::kind::unsigned_:
      return value::unsigned_(t, 0x8000000000000000ull + t);
    case value::kind::real:
      return value::real(t, -2.5 * (t + 1));
    case value::kind::bytes:
      return value::bytes(t, std::string{"b\0y\xfft", 5} + std::to_string(t));
    case value::kind::proc:
      return value::proc(proc_id{"job-7", 12});
    case value::kind::timeval:
      return value{t, timeval_value{1700000000, 999999}};
    case value::kind::envar:
      return value{t, std::make_shared<const envar_value>(envar_value{"PATH", "/usr/bin", ':'})};
    case value::kind::proc_info:
      return value{t, std::make_shared<const proc_info_value>(pmix::test::sample_proc_info())};
    case value::kind::array:
      return make_array(PMIX_UINT32, {value::unsigned_(PMIX_UINT32, 1), value::unsigned_(PMIX_UINT32, 2)});
    case value::kind::info:
      return make_info_value("inner.key", value::string("inner"), PMIX_INFO_REQD);
    case value::kind::unsupported:
      break;
  }
  return value{};
}

value round_trip(const value& v) {
  wire::Value w;
  proto::to_wire(v, &w);
  // Through the bytes too, not only the in-memory message.
  wire::Value parsed;
  REQUIRE(parsed.ParseFromString(w.SerializeAsString()));
  value out;
  std::string error;
  const bool ok = proto::from_wire(parsed, out, &error);
  REQUIRE_MESSAGE(ok, error);
  return out;
}

}  // namespace

TEST_SUITE("codec") {
  TEST_CASE("the sample covers every kind of the value model") {
    // Guards the round-trip test below: if value.cpp gains a type of a new
    // kind, sample() must learn it.
    const auto types = supported_types();
    std::vector<bool> seen(static_cast<std::size_t>(value::kind::unsupported) + 1, false);
    for (auto t : types) {
      seen[static_cast<std::size_t>(value::kind_of(t))] = true;
      CAPTURE(t);
      CHECK(sample(t).type == t);
    }
    for (std::size_t k = 0; k < static_cast<std::size_t>(value::kind::unsupported); ++k) {
      CAPTURE(k);
      CHECK(seen[k]);
    }
    // And it is exactly the table of value::kind_of.
    const std::vector<data_type> expected = {
        PMIX_UNDEF, PMIX_BOOL, PMIX_BYTE, PMIX_STRING, PMIX_SIZE, PMIX_PID, PMIX_INT, PMIX_INT8,
        PMIX_INT16, PMIX_INT32, PMIX_INT64, PMIX_UINT, PMIX_UINT8, PMIX_UINT16, PMIX_UINT32,
        PMIX_UINT64, PMIX_FLOAT, PMIX_DOUBLE, PMIX_TIMEVAL, PMIX_TIME, PMIX_STATUS, PMIX_INFO,
        PMIX_PROC, PMIX_BYTE_OBJECT, PMIX_PERSIST, PMIX_POINTER, PMIX_SCOPE, PMIX_DATA_RANGE,
        PMIX_PROC_STATE, PMIX_PROC_INFO, PMIX_DATA_ARRAY, PMIX_PROC_RANK, PMIX_INFO_DIRECTIVES,
        PMIX_DATA_TYPE, PMIX_ALLOC_DIRECTIVE, PMIX_IOF_CHANNEL, PMIX_JOB_STATE, PMIX_LINK_STATE,
        PMIX_PROC_NSPACE, PMIX_COMPRESSED_STRING, PMIX_ENVAR, PMIX_DEVTYPE, PMIX_LOCTYPE,
        PMIX_COMPRESSED_BYTE_OBJECT, PMIX_REGEX, PMIX_STOR_MEDIUM, PMIX_STOR_ACCESS,
        PMIX_STOR_PERSIST, PMIX_STOR_ACCESS_TYPE, PMIX_RESBLOCK_DIRECTIVE, PMIX_ALLOC_INHERIT};
    auto sorted = expected;
    std::sort(sorted.begin(), sorted.end());
    CHECK(types == sorted);
  }

  TEST_CASE("every supported data type survives value -> wire -> value") {
    for (auto t : supported_types()) {
      CAPTURE(t);
      const value v = sample(t);
      const value back = round_trip(v);
      CHECK(back.type == t);
      CHECK(same(v, back));
    }
  }

  TEST_CASE("each kind travels in its own payload field") {
    auto field_of = [](const value& v) {
      wire::Value w;
      proto::to_wire(v, &w);
      CHECK(w.type() == v.type);
      return w.data_case();
    };
    CHECK(field_of(value{}) == wire::Value::DATA_NOT_SET);
    CHECK(field_of(sample(PMIX_BOOL)) == wire::Value::kFlag);
    CHECK(field_of(sample(PMIX_INT16)) == wire::Value::kInteger);
    CHECK(field_of(sample(PMIX_PID)) == wire::Value::kInteger);
    CHECK(field_of(sample(PMIX_PROC_RANK)) == wire::Value::kUnsigned);
    CHECK(field_of(sample(PMIX_POINTER)) == wire::Value::kUnsigned);
    CHECK(field_of(sample(PMIX_FLOAT)) == wire::Value::kReal);
    CHECK(field_of(sample(PMIX_STRING)) == wire::Value::kBytes);
    CHECK(field_of(sample(PMIX_PROC_NSPACE)) == wire::Value::kBytes);
    CHECK(field_of(sample(PMIX_PROC)) == wire::Value::kProc);
    CHECK(field_of(sample(PMIX_TIMEVAL)) == wire::Value::kTimeval);
    CHECK(field_of(sample(PMIX_ENVAR)) == wire::Value::kEnvar);
    CHECK(field_of(sample(PMIX_PROC_INFO)) == wire::Value::kProcInfo);
    CHECK(field_of(sample(PMIX_DATA_ARRAY)) == wire::Value::kArray);
    CHECK(field_of(sample(PMIX_INFO)) == wire::Value::kInfo);
  }

  TEST_CASE("integer extremes survive the wire") {
    const std::int64_t smin = std::numeric_limits<std::int64_t>::min();
    const std::int64_t smax = std::numeric_limits<std::int64_t>::max();
    const std::uint64_t umax = std::numeric_limits<std::uint64_t>::max();
    for (auto v : {value::integer(PMIX_INT64, smin), value::integer(PMIX_INT64, smax),
                   value::integer(PMIX_INT64, -1), value::integer(PMIX_INT64, 0),
                   value::integer(PMIX_INT8, -128), value::integer(PMIX_INT32, INT32_MIN),
                   value::integer(PMIX_TIME, smax), value::unsigned_(PMIX_UINT64, umax),
                   value::unsigned_(PMIX_UINT64, 0), value::unsigned_(PMIX_SIZE, umax),
                   value::unsigned_(PMIX_PROC_RANK, 0xfffffffe),
                   value::unsigned_(PMIX_POINTER, 0xdeadbeefcafef00dull)}) {
      CAPTURE(v.type);
      CHECK(same(round_trip(v), v));
    }
    CHECK(*round_trip(value::integer(PMIX_INT64, smin)).as_int() == smin);
    CHECK(*round_trip(value::unsigned_(PMIX_UINT64, umax)).as_uint() == umax);
  }

  TEST_CASE("special doubles keep their bits") {
    const double values[] = {0.0,
                             -0.0,
                             std::numeric_limits<double>::infinity(),
                             -std::numeric_limits<double>::infinity(),
                             std::numeric_limits<double>::denorm_min(),
                             std::numeric_limits<double>::max(),
                             std::numeric_limits<double>::quiet_NaN()};
    for (double d : values) {
      CAPTURE(d);
      CHECK(same(round_trip(value::real(PMIX_DOUBLE, d)), value::real(PMIX_DOUBLE, d)));
    }
    CHECK(std::signbit(std::get<double>(round_trip(value::real(PMIX_DOUBLE, -0.0)).data)));
  }

  TEST_CASE("binary bytes with embedded NULs travel intact") {
    std::string blob;
    for (int i = 0; i < 256; ++i) blob.push_back(static_cast<char>(i));
    blob += std::string(3, '\0');
    for (data_type t : {PMIX_BYTE_OBJECT, PMIX_STRING, PMIX_COMPRESSED_BYTE_OBJECT, PMIX_REGEX}) {
      CAPTURE(t);
      const value back = round_trip(value::bytes(t, blob));
      REQUIRE(back.as_string() != nullptr);
      CHECK(back.as_string()->size() == blob.size());
      CHECK(*back.as_string() == blob);
    }
    // Keys, namespaces and envar text are bytes on the wire too.
    info in{std::string{"k\0ey", 4}, value::proc(proc_id{std::string{"n\0s", 3}, 1}), 0};
    wire::Info w;
    proto::to_wire(in, &w);
    info out;
    REQUIRE(proto::from_wire(w, out));
    CHECK(out.key == in.key);
    CHECK(out.val.as_proc()->nspace == std::string{"n\0s", 3});
  }

  TEST_CASE("an info keeps its key, flags and value") {
    info in{"pmix.test", value::unsigned_(PMIX_UINT32, 77), PMIX_INFO_REQD | PMIX_INFO_ARRAY_END};
    wire::Info w;
    proto::to_wire(in, &w);
    CHECK(w.key() == "pmix.test");
    CHECK(w.flags() == (PMIX_INFO_REQD | PMIX_INFO_ARRAY_END));
    info out;
    REQUIRE(proto::from_wire(w, out));
    CHECK(same(in, out));
  }

  TEST_CASE("an info without a value reads back as an unset value") {
    wire::Info w;
    w.set_key("flag.only");
    info out{"stale", value::boolean(true), 9};
    REQUIRE(proto::from_wire(w, out));
    CHECK(out.key == "flag.only");
    CHECK(out.flags == 0);
    CHECK_FALSE(out.val.is_set());
    CHECK(std::holds_alternative<std::monostate>(out.val.data));
  }

  TEST_CASE("an info list survives the wire in order and replaces what was there") {
    info_list list;
    for (auto t : supported_types()) list.push_back(info{"key." + std::to_string(t), sample(t), t});
    google::protobuf::RepeatedPtrField<wire::Info> w;
    proto::to_wire(list, &w);
    REQUIRE(w.size() == static_cast<int>(list.size()));
    info_list out{info{"old", value::boolean(false), 0}};
    REQUIRE(proto::from_wire(w, out));
    CHECK(same(out, list));

    // to_wire appends to a non-empty field.
    proto::to_wire(info_list{info{"extra", value::string("x"), 0}}, &w);
    CHECK(w.size() == static_cast<int>(list.size()) + 1);
    CHECK(w.Get(w.size() - 1).key() == "extra");
  }

  TEST_CASE("nested data arrays: arrays of info, of values, of arrays") {
    const value infos = make_array(
        PMIX_INFO, {make_info_value("a", value::string("x")),
                    make_info_value("b", value::unsigned_(PMIX_UINT32, 5), PMIX_INFO_REQD),
                    make_info_value("c", make_array(PMIX_STRING, {value::string("s1"), value::string("s2")}))});
    const value mixed = make_array(
        PMIX_VALUE, {value::string("str"), value::integer(PMIX_INT, -1), sample(PMIX_PROC_INFO),
                     sample(PMIX_ENVAR), infos, value{}});
    const value arrays = make_array(
        PMIX_DATA_ARRAY,
        {make_array(PMIX_PROC, {value::proc({"a", 0}), value::proc({"b", pmix::rank_wildcard})}),
         make_array(PMIX_DATA_ARRAY, {make_array(PMIX_BOOL, {value::boolean(false)})}),
         make_array(PMIX_UINT64, {}), mixed});
    for (const value* v : {&infos, &mixed, &arrays}) {
      const value back = round_trip(*v);
      CHECK(same(back, *v));
    }
    // Spot checks through the accessors.
    const value back = round_trip(arrays);
    const auto* outer = back.as_array();
    REQUIRE(outer != nullptr);
    CHECK(outer->type == PMIX_DATA_ARRAY);
    REQUIRE(outer->elements.size() == 4);
    CHECK(outer->elements[2].as_array()->elements.empty());
    const auto* inner_mixed = outer->elements[3].as_array();
    REQUIRE(inner_mixed != nullptr);
    const auto* inner_infos = inner_mixed->elements[4].as_array();
    REQUIRE(inner_infos != nullptr);
    CHECK(inner_infos->elements[1].as_info()->key == "b");
    CHECK(inner_infos->elements[1].as_info()->flags == PMIX_INFO_REQD);
  }

  TEST_CASE("a payload that does not match its type is rejected") {
    // One wire payload per field; each must be refused by every type that
    // uses a different field.
    const auto& payloads = pmix::test::wire_payloads();
    for (auto t : supported_types()) {
      if (t == PMIX_UNDEF) continue;
      wire::Value right;
      proto::to_wire(sample(t), &right);
      for (const auto& p : payloads) {
        wire::Value w;
        w.set_type(t);
        p.set(w);
        if (w.data_case() == right.data_case()) continue;
        CAPTURE(t);
        CAPTURE(p.name);
        value out;
        std::string error;
        CHECK_FALSE(proto::from_wire(w, out, &error));
        CHECK(error.find("does not match") != std::string::npos);
      }
      // No payload at all is not a value of that type either, except for
      // strings and byte objects, where it is NULL.
      wire::Value empty;
      empty.set_type(t);
      value out;
      CAPTURE(t);
      if (value::kind_of(t) == value::kind::bytes) {
        REQUIRE(proto::from_wire(empty, out));
        CHECK(out.type == t);
        CHECK(out.as_string() == nullptr);
      } else {
        CHECK_FALSE(proto::from_wire(empty, out));
      }
    }
  }

  TEST_CASE("PMIX_UNDEF with a payload is rejected") {
    wire::Value w;
    w.set_type(PMIX_UNDEF);
    w.set_integer(5);
    value out;
    std::string error;
    CHECK_FALSE(proto::from_wire(w, out, &error));
    CHECK_FALSE(error.empty());

    wire::Value bare;
    bare.set_type(PMIX_UNDEF);
    REQUIRE(proto::from_wire(bare, out));
    CHECK_FALSE(out.is_set());
  }

  TEST_CASE("a data array element of another type is rejected") {
    wire::Value w;
    proto::to_wire(make_array(PMIX_UINT32, {value::unsigned_(PMIX_UINT32, 1), value::string("intruder")}), &w);
    value out;
    std::string error;
    CHECK_FALSE(proto::from_wire(w, out, &error));
    CHECK(error.find("wrong type") != std::string::npos);

    // An array of PMIX_VALUE takes any element type.
    wire::Value any;
    proto::to_wire(make_array(PMIX_VALUE, {value::unsigned_(PMIX_UINT32, 1), value::string("ok")}), &any);
    CHECK(proto::from_wire(any, out));

    // A bad element deep inside an array is found too.
    wire::Value deep;
    proto::to_wire(make_array(PMIX_DATA_ARRAY, {make_array(PMIX_BOOL, {value::boolean(true)})}), &deep);
    deep.mutable_array()->mutable_elements(0)->mutable_array()->mutable_elements(0)->set_integer(3);
    CHECK_FALSE(proto::from_wire(deep, out, &error));
    CHECK(error.find("does not match") != std::string::npos);
  }

  TEST_CASE("data types outside 16 bits are rejected") {
    value out;
    std::string error;
    wire::Value w;
    w.set_type(0x10000 + PMIX_BOOL);
    w.set_flag(true);
    CHECK_FALSE(proto::from_wire(w, out, &error));
    CHECK(error.find("out of range") != std::string::npos);

    wire::Value a;
    a.set_type(PMIX_DATA_ARRAY);
    a.mutable_array()->set_type(0x10000 + PMIX_UINT8);
    CHECK_FALSE(proto::from_wire(a, out));
  }

  TEST_CASE("unsupported types are sent as PMIX_UNDEF and refused when received") {
    for (data_type t : {data_type{PMIX_TOPO}, data_type{PMIX_QUERY}, data_type{PMIX_VALUE},
                        data_type{PMIX_APP}, data_type{0xffff}}) {
      CAPTURE(t);
      REQUIRE(value::kind_of(t) == value::kind::unsupported);
      wire::Value w;
      proto::to_wire(value{t, std::string{"opaque"}}, &w);
      CHECK(w.type() == PMIX_UNDEF);
      CHECK(w.data_case() == wire::Value::DATA_NOT_SET);

      wire::Value incoming;
      incoming.set_type(t);
      incoming.set_bytes("opaque");
      value out;
      std::string error;
      CHECK_FALSE(proto::from_wire(incoming, out, &error));
      CHECK(error.find("cannot travel") != std::string::npos);
    }
  }

  TEST_CASE("values nested deeper than the limit are rejected, moderate nesting is not") {
    value out;
    std::string error;
    CHECK(proto::from_wire(nested_arrays(1), out, &error));
    CHECK(proto::from_wire(nested_arrays(30), out, &error));
    // The 30-level value reads back with its leaf intact.
    const value* v = &out;
    for (int i = 0; i < 30; ++i) {
      REQUIRE(v->as_array() != nullptr);
      REQUIRE(v->as_array()->elements.size() == 1);
      v = &v->as_array()->elements[0];
    }
    CHECK(v->type == PMIX_UINT8);
    CHECK(*v->as_uint() == 7);

    // 40 levels survive protobuf's own parser but not the codec.
    wire::Value deep;
    REQUIRE(deep.ParseFromString(nested_arrays(40).SerializeAsString()));
    error.clear();
    CHECK_FALSE(proto::from_wire(deep, out, &error));
    CHECK(error.find("nested too deeply") != std::string::npos);

    // The same through infos whose values are infos.
    wire::Value chain;
    chain.set_type(PMIX_STRING);
    chain.set_bytes("leaf");
    for (int i = 0; i < 40; ++i) {
      wire::Value outer;
      outer.set_type(PMIX_INFO);
      outer.mutable_info()->set_key("k" + std::to_string(i));
      *outer.mutable_info()->mutable_value() = chain;
      chain = std::move(outer);
    }
    error.clear();
    CHECK_FALSE(proto::from_wire(chain, out, &error));
    CHECK(error.find("nested too deeply") != std::string::npos);

    // And inside an info list.
    google::protobuf::RepeatedPtrField<wire::Info> list;
    list.Add()->set_key("shallow");
    auto* i = list.Add();
    i->set_key("deep");
    *i->mutable_value() = nested_arrays(40);
    info_list parsed;
    CHECK_FALSE(proto::from_wire(list, parsed, &error));
  }

  TEST_CASE("a nil error pointer is allowed") {
    wire::Value w;
    w.set_type(PMIX_BOOL);
    w.set_integer(1);
    value out;
    CHECK_FALSE(proto::from_wire(w, out, nullptr));
    CHECK_FALSE(proto::from_wire(nested_arrays(40), out));
  }

  TEST_CASE("procs keep namespace and rank, including the special ranks") {
    for (pmix::rank_t r : {pmix::rank_t{0}, pmix::rank_t{17}, pmix::rank_wildcard, pmix::rank_undef}) {
      wire::Proc w;
      proto::to_wire(proc_id{"ns.1", r}, &w);
      CHECK(w.nspace() == "ns.1");
      CHECK(w.rank() == r);
      CHECK(proto::from_wire(w) == proc_id{"ns.1", r});
    }
  }

  TEST_CASE("to_frame produces one frame that the frame reader and parse turn back into the envelope") {
    wire::Envelope e;
    e.set_id(0x0123456789abcdefull);
    auto* fence = e.mutable_fence();
    for (std::uint32_t r : {0u, 1u, 5u}) proto::to_wire(proc_id{"job", r}, fence->add_procs());
    const info_list directives{info{PMIX_COLLECT_DATA, value::boolean(true), PMIX_INFO_REQD},
                               info{"pmix.timeout", value::integer(PMIX_INT, 30), 0},
                               info{"blob", value::bytes(PMIX_BYTE_OBJECT, std::string(5000, '\0')), 0}};
    proto::to_wire(directives, fence->mutable_info());
    fence->set_collect_data(true);

    const std::string frame = proto::to_frame(e);
    // Same bytes as append_frame over the serialized message.
    std::string expected;
    proto::append_frame(expected, e.SerializeAsString());
    CHECK(frame == expected);

    // Two envelopes back to back, fed in uneven pieces.
    wire::Envelope second;
    second.set_id(2);
    second.mutable_status_reply()->set_status(PMIX_ERR_NOT_FOUND);
    const std::string stream = frame + proto::to_frame(second);
    proto::frame_reader reader;
    std::vector<std::string> payloads;
    std::string p;
    for (std::size_t off = 0; off < stream.size(); off += 777) {
      reader.feed(stream.data() + off, std::min<std::size_t>(777, stream.size() - off));
      while (reader.next(p) == proto::frame_reader::status::complete) payloads.push_back(p);
    }
    REQUIRE(payloads.size() == 2);

    wire::Envelope back;
    REQUIRE(proto::parse(payloads[0], back));
    CHECK(back.id() == e.id());
    REQUIRE(back.body_case() == wire::Envelope::kFence);
    REQUIRE(back.fence().procs_size() == 3);
    CHECK(proto::from_wire(back.fence().procs(2)) == proc_id{"job", 5});
    CHECK(back.fence().collect_data());
    info_list infos;
    REQUIRE(proto::from_wire(back.fence().info(), infos));
    CHECK(same(infos, directives));

    wire::Envelope back2;
    REQUIRE(proto::parse(payloads[1], back2));
    CHECK(back2.id() == 2);
    REQUIRE(back2.body_case() == wire::Envelope::kStatusReply);
    CHECK(back2.status_reply().status() == PMIX_ERR_NOT_FOUND);
  }

  TEST_CASE("an empty envelope is a 4-byte zero-length frame") {
    wire::Envelope e;
    CHECK(proto::to_frame(e) == std::string(4, '\0'));
    wire::Envelope back;
    back.set_id(99);
    REQUIRE(proto::parse("", back));
    CHECK(back.id() == 0);
    CHECK(back.body_case() == wire::Envelope::BODY_NOT_SET);
  }

  TEST_CASE("random garbage given to parse never crashes and is mostly rejected") {
    std::mt19937 rng(20240611);
    std::uniform_int_distribution<int> byte(0, 255);
    std::uniform_int_distribution<int> length(1, 300);
    int rejected = 0;
    constexpr int trials = 20000;
    for (int n = 0; n < trials; ++n) {
      std::string bytes(static_cast<std::size_t>(length(rng)), '\0');
      for (auto& c : bytes) c = static_cast<char>(byte(rng));
      wire::Envelope e;
      if (!proto::parse(bytes, e)) {
        ++rejected;
        continue;
      }
      // Whatever parsed must be usable: decode every value it carries and
      // serialize it again.
      value v;
      info_list list;
      if (e.has_fence()) (void)proto::from_wire(e.fence().info(), list);
      if (e.has_commit())
        for (const auto& s : e.commit().data()) (void)proto::from_wire(s.info().value(), v);
      if (e.has_get()) (void)proto::from_wire(e.get().info(), list);
      if (e.has_finalize()) (void)proto::from_wire(e.finalize().info(), list);
      CHECK(proto::to_frame(e).size() == proto::frame_header_size + e.ByteSizeLong());
    }
    MESSAGE(rejected << " of " << trials << " random buffers rejected");
    CHECK(rejected > trials * 3 / 4);
  }

  TEST_CASE("corrupted real envelopes never crash the parser or the codec") {
    wire::Envelope e;
    e.set_id(7);
    auto* commit = e.mutable_commit();
    const info_list data{info{"a", sample(PMIX_DATA_ARRAY), 0}, info{"b", sample(PMIX_PROC_INFO), 0},
                         info{"c", sample(PMIX_INFO), 0}, info{"d", sample(PMIX_ENVAR), 0},
                         info{"e", value::integer(PMIX_INT64, -5), 0}};
    for (const auto& i : data) {
      auto* s = commit->add_data();
      s->set_scope(PMIX_LOCAL);
      proto::to_wire(i, s->mutable_info());
    }
    const std::string good = e.SerializeAsString();
    std::mt19937 rng(7);
    std::uniform_int_distribution<std::size_t> where(0, good.size() - 1);
    std::uniform_int_distribution<int> byte(0, 255);
    int parsed = 0;
    for (int n = 0; n < 20000; ++n) {
      std::string bad = good;
      const int flips = 1 + n % 4;
      for (int f = 0; f < flips; ++f) bad[where(rng)] = static_cast<char>(byte(rng));
      if (n % 5 == 0) bad.resize(where(rng));  // truncated too
      wire::Envelope out;
      if (!proto::parse(bad, out)) continue;
      ++parsed;
      for (const auto& s : out.commit().data()) {
        info i;
        std::string error;
        if (!proto::from_wire(s.info(), i, &error)) CHECK_FALSE(error.empty());
      }
    }
    // Some corruptions are still well-formed protobuf; the codec saw them.
    CHECK(parsed > 0);
  }

  TEST_CASE("append_length_delimited concatenates RankData blobs into a ModexData") {
    std::vector<wire::RankData> ranks;
    std::string modex;
    for (std::uint32_t r = 0; r < 20; ++r) {
      // Sizes from empty to multi-kilobyte: 1-, 2- and 3-byte length varints.
      ranks.push_back(rank_data("job", r, static_cast<int>(r * r * 10)));
      proto::append_length_delimited(modex, wire::ModexData::kRanksFieldNumber,
                                     ranks.back().SerializeAsString());
    }
    wire::ModexData parsed;
    REQUIRE(parsed.ParseFromString(modex));
    REQUIRE(parsed.ranks_size() == 20);
    for (int r = 0; r < 20; ++r) {
      CAPTURE(r);
      CHECK(parsed.ranks(r).SerializeAsString() == ranks[static_cast<std::size_t>(r)].SerializeAsString());
      CHECK(parsed.ranks(r).proc().rank() == static_cast<std::uint32_t>(r));
      CHECK(parsed.ranks(r).data_size() == r * r * 10);
    }
    // The biggest blob needed a 3-byte length.
    CHECK(ranks.back().ByteSizeLong() >= (1u << 14));
  }

  TEST_CASE("append_length_delimited appends and handles empty blobs and large field numbers") {
    std::string out = "prefix";
    proto::append_length_delimited(out, 1, "");
    CHECK(out == std::string{"prefix\x0a\x00", 8});

    // Field 16 needs a two-byte tag: Envelope.get.
    wire::GetRequest get;
    get.set_key("pmix.hname");
    proto::to_wire(proc_id{"ns", 3}, get.mutable_proc());
    std::string env;
    proto::append_length_delimited(env, wire::Envelope::kGetFieldNumber, get.SerializeAsString());
    wire::Envelope e;
    REQUIRE(proto::parse(env, e));
    REQUIRE(e.has_get());
    CHECK(e.get().key() == "pmix.hname");
    CHECK(proto::from_wire(e.get().proc()) == proc_id{"ns", 3});

    // An empty RankData is still an entry.
    std::string modex;
    proto::append_length_delimited(modex, 1, "");
    proto::append_length_delimited(modex, 1, rank_data("x", 1, 1).SerializeAsString());
    wire::ModexData m;
    REQUIRE(m.ParseFromString(modex));
    REQUIRE(m.ranks_size() == 2);
    CHECK_FALSE(m.ranks(0).has_proc());
    CHECK(m.ranks(1).proc().nspace() == "x");
  }

  TEST_CASE("two serialized ModexData messages concatenated give their union") {
    wire::ModexData a;
    wire::ModexData b;
    *a.add_ranks() = rank_data("job", 0, 2);
    *a.add_ranks() = rank_data("job", 1, 0);
    *b.add_ranks() = rank_data("job", 2, 3);
    *b.add_ranks() = rank_data("other", 0, 1);
    *b.add_ranks() = rank_data("job", 3, 1);

    wire::ModexData both;
    REQUIRE(both.ParseFromString(a.SerializeAsString() + b.SerializeAsString()));
    REQUIRE(both.ranks_size() == 5);
    const std::pair<const char*, std::uint32_t> expected[] = {
        {"job", 0}, {"job", 1}, {"job", 2}, {"other", 0}, {"job", 3}};
    for (int i = 0; i < 5; ++i) {
      CAPTURE(i);
      CHECK(both.ranks(i).proc().nspace() == expected[i].first);
      CHECK(both.ranks(i).proc().rank() == expected[i].second);
    }
    CHECK(both.ranks(2).data_size() == 3);
    info first;
    REQUIRE(proto::from_wire(both.ranks(2).data(1).info(), first));
    CHECK(first.key == "key1");
    CHECK(*first.val.as_string() == "v2.1");

    // A fence's concatenated blob followed by another node's ModexData.
    std::string mixed;
    proto::append_length_delimited(mixed, 1, rank_data("job", 9, 1).SerializeAsString());
    mixed += a.SerializeAsString();
    wire::ModexData m;
    REQUIRE(m.ParseFromString(mixed));
    REQUIRE(m.ranks_size() == 3);
    CHECK(m.ranks(0).proc().rank() == 9);
    CHECK(m.ranks(2).proc().rank() == 1);
  }
}

// What a client commits is served to its peers only as the library writes it
// (actors/peer_actor.cpp on_commit; found by tests/fuzz server_envelope: an
// unknown group field kept by protobuf and refused by the clients' reader
// made every peer's fence fail).
TEST_CASE("canonical_item: a committed item is read and written again, or refused") {
  wire::ScopedInfo sent;
  sent.set_scope(PMIX_GLOBAL);
  proto::to_wire(pmix::info{"key", pmix::value::string("v"), 0}, sent.mutable_info());
  // An empty group as field 2 of the ScopedInfo: protobuf keeps it.
  std::string bytes = sent.SerializeAsString() + std::string{"\x13\x14", 2};
  wire::ScopedInfo with_group;
  REQUIRE(with_group.ParseFromString(bytes));
  REQUIRE(with_group.SerializeAsString() == bytes);

  std::string kept;
  std::string key;
  REQUIRE(proto::canonical_item(with_group, kept, key));
  CHECK(key == "key");
  CHECK(kept == sent.SerializeAsString());

  // A value whose payload does not match its type is refused, with a reason.
  wire::ScopedInfo bad = sent;
  bad.mutable_info()->mutable_value()->set_flag(true);  // a PMIX_STRING with a bool
  std::string error;
  CHECK_FALSE(proto::canonical_item(bad, kept, key, &error));
  CHECK_FALSE(error.empty());
}

// The bytes canonical_item writes itself are those protobuf writes for the
// same item, whatever the scope (0 is left out, as proto3 does) and value.
TEST_CASE("canonical_item: its bytes are protobuf's, for every scope and kind of value") {
  const std::vector<pmix::value> values = {
      pmix::value::string("v"), pmix::value::string(""),
      pmix::value::bytes(PMIX_BYTE_OBJECT, std::string(64, '\x7f')), pmix::value::boolean(true),
      pmix::value::unsigned_(PMIX_UINT32, 0), pmix::value::unsigned_(PMIX_UINT32, 4000000000u),
      pmix::value::integer(PMIX_INT64, -5), pmix::value::real(PMIX_DOUBLE, 0.5),
      pmix::value::proc(pmix::proc_id{"job", 7}), pmix::value{}};
  for (const std::uint32_t scope : {0u, static_cast<std::uint32_t>(PMIX_LOCAL), static_cast<std::uint32_t>(PMIX_GLOBAL)})
    for (std::size_t k = 0; k < values.size(); ++k) {
      CAPTURE(scope);
      CAPTURE(k);
      wire::ScopedInfo sent;
      sent.set_scope(scope);
      proto::to_wire(pmix::info{"key" + std::to_string(k), values[k], k % 2 ? PMIX_INFO_REQD : 0u},
                     sent.mutable_info());
      std::string kept, key;
      REQUIRE(proto::canonical_item(sent, kept, key));
      CHECK(key == "key" + std::to_string(k));
      CHECK(kept == sent.SerializeAsString());
    }
}
