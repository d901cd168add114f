// The client's hand-written protobuf codec (protocol/messages.hpp) is exactly
// equivalent to the generated classes (protocol/pmix.pb.h) plus the codec
// (protocol/codec.hpp) that the server keeps using. In plain words:
//
// 1. Writing: every request encoder (connect, finalize, commit, fence, get,
//    abort, job control, query, event) writes byte for byte what protobuf's
//    SerializeAsString() writes for the same message built with the generated
//    classes, for empty lists and strings, negative statuses and pids, the
//    special ranks, and info lists holding samples of every data type.
//    to_frame() writes the same frame as the codec's to_frame(Envelope).
// 2. Reading: every reply protobuf writes (ConnectReply, JobInfo, StatusReply,
//    FenceReply, GetReply, RankData, ModexData, InfoReply, Event, Value,
//    Envelope) reads back into the same C++ values that the generated classes
//    and codec's from_wire() give.
// 3. Refusing: a Value that protobuf parses but from_wire() refuses (payload
//    not matching its type, type beyond 16 bits, array element of another
//    type, nesting deeper than 32, a type that cannot travel) is refused by
//    decode_value() too, with an error text; and what from_wire() accepts,
//    decode_value() accepts.
// 4. Malformed input: every prefix of a few real messages is read iff
//    protobuf (+ from_wire) reads it; and under 20,000 seeded random
//    mutations our readers never crash, and whatever they read protobuf reads
//    too, with the same result. The one difference allowed: protobuf merges a
//    repeated occurrence of a singular message field, where the hand codec
//    keeps the last one (and the hand codec refuses groups, wire types 3/4).
//    A small schema-aware walker (`scan`) recognises those inputs. A few
//    hand-picked inputs protobuf refuses (a malformed oneof member replaced by
//    another, tags and lengths longer than 5 bytes) must be refused too.
//
// "The codec's reading" is what the client did before the hand codec (see
// client/session.cpp and store.cpp in the commit before it): an absent Proc reads
// as rank 0, an Event's range is cut to pmix_data_range_t, a FenceReply's
// empty data is no data, a GetReply's RankData is data when present.
#include "protocol/messages.hpp"

#include <doctest/doctest.h>
#include <pmix_common.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <limits>
#include <memory>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

#include "common/event.hpp"
#include "common/value.hpp"
#include "protocol/codec.hpp"
#include "protocol/direct.hpp"
#include "protocol/framing.hpp"
#include "protocol/pmix.pb.h"
#include "tests/protocol/samples.hpp"
#include "tests/protocol/server_reading.hpp"
#include "tests/protocol/wire_payloads.hpp"

namespace proto = pmix::protocol;
namespace wire = pmix::wire;
using namespace pmix;  // the value model: value, info, proc_id, ...

namespace {

using google::protobuf::RepeatedPtrField;

// ---- helpers ----------------------------------------------------------------

std::string hex(std::string_view s) {
  static const char digits[] = "0123456789abcdef";
  std::string out;
  for (unsigned char c : s) {
    if (!out.empty()) out += ' ';
    out += digits[c >> 4];
    out += digits[c & 15];
  }
  return out;
}

// "08 03 3a" -> the bytes 0x08 0x03 0x3a.
std::string unhex(std::string_view h) {
  std::string out;
  for (std::size_t i = 0; i + 1 < h.size();) {
    if (h[i] == ' ') {
      ++i;
      continue;
    }
    out.push_back(static_cast<char>(std::stoi(std::string{h.substr(i, 2)}, nullptr, 16)));
    i += 2;
  }
  return out;
}

// Where two byte strings first differ, with some context (full dumps of
// 20 KB messages help nobody).
std::string difference(std::string_view ours, std::string_view theirs) {
  std::size_t at = 0;
  while (at < ours.size() && at < theirs.size() && ours[at] == theirs[at]) ++at;
  const std::size_t from = at < 8 ? 0 : at - 8;
  return "sizes " + std::to_string(ours.size()) + " (ours) vs " + std::to_string(theirs.size()) +
         " (protobuf), first difference at byte " + std::to_string(at) + "\n  ours:     ..." +
         hex(ours.substr(std::min(from, ours.size()), 24)) + "\n  protobuf: ..." +
         hex(theirs.substr(std::min(from, theirs.size()), 24));
}

// Checks that our encoder's output is what protobuf serializes for `expected`.
#define CHECK_SAME_BYTES(ours, expected_message)                                   \
  do {                                                                             \
    const std::string ours_bytes_ = (ours);                                        \
    const std::string pb_bytes_ = (expected_message).SerializeAsString();          \
    CHECK_MESSAGE(ours_bytes_ == pb_bytes_, difference(ours_bytes_, pb_bytes_));   \
  } while (0)

// ---- deep equality of C++ values ---------------------------------------------

bool same(const value& a, const value& b);

bool same(const info& a, const info& b) { return a.key == b.key && a.flags == b.flags && same(a.val, b.val); }

bool same(const info_list& a, const info_list& b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i)
    if (!same(a[i], b[i])) return false;
  return true;
}

// Same type, same alternative, same payload; the boxes (envar, proc info,
// array, info) are compared by content, doubles by their bits (NaN, -0.0).
bool same(const value& a, const value& b) {
  if (a.type != b.type || a.data.index() != b.data.index()) return false;
  return std::visit(
      [&b](const auto& x) -> bool {
        using T = std::decay_t<decltype(x)>;
        const T& y = std::get<T>(b.data);
        if constexpr (std::is_same_v<T, std::monostate>) {
          return true;
        } else if constexpr (std::is_same_v<T, double>) {
          return std::memcmp(&x, &y, sizeof x) == 0;
        } else if constexpr (std::is_same_v<T, timeval_value>) {
          return x.sec == y.sec && x.usec == y.usec;
        } else if constexpr (std::is_same_v<T, std::shared_ptr<const envar_value>>) {
          if (!x || !y) return !x && !y;
          return x->name == y->name && x->value == y->value && x->separator == y->separator;
        } else if constexpr (std::is_same_v<T, std::shared_ptr<const proc_info_value>>) {
          if (!x || !y) return !x && !y;
          return x->proc == y->proc && x->hostname == y->hostname && x->executable == y->executable &&
                 x->pid == y->pid && x->exit_code == y->exit_code && x->state == y->state;
        } else if constexpr (std::is_same_v<T, std::shared_ptr<const array_value>>) {
          if (!x || !y) return !x && !y;
          if (x->type != y->type || x->elements.size() != y->elements.size()) return false;
          for (std::size_t i = 0; i < x->elements.size(); ++i)
            if (!same(x->elements[i], y->elements[i])) return false;
          return true;
        } else if constexpr (std::is_same_v<T, std::shared_ptr<const info>>) {
          if (!x || !y) return !x && !y;
          return same(*x, *y);
        } else {
          return x == y;  // bool, integers, bytes, proc
        }
      },
      a.data);
}

// ---- sample values -------------------------------------------------------------

using pmix::test::info_value;
using pmix::test::nested_arrays;
using pmix::test::samples;

// Every data type the value model carries, plus a few it does not (sent as
// PMIX_UNDEF by both encoders).
std::vector<data_type> sample_types() {
  std::vector<data_type> out = pmix::test::supported_types();
  for (data_type t : {data_type{PMIX_TOPO}, data_type{PMIX_QUERY}, data_type{PMIX_VALUE}, data_type{PMIX_APP},
                      data_type{0xffff}})
    out.push_back(t);
  return out;
}

std::vector<value> every_sample() {
  std::vector<value> out;
  for (auto t : sample_types())
    for (auto& v : samples(t)) out.push_back(std::move(v));
  return out;
}

// Infos holding every sample, with keys and flags of every size class.
info_list every_type_infos() {
  static const char* const keys[] = {"", "pmix.hname", "a.key.longer.than.fifteen.characters"};
  static const std::uint32_t flags[] = {0u, PMIX_INFO_REQD, 0x80000000u};
  info_list out;
  std::size_t n = 0;
  for (auto& v : every_sample()) {
    out.push_back(info{keys[n % 3], std::move(v), flags[(n / 3) % 3]});
    ++n;
  }
  return out;
}

info_list small_infos() {
  return {info{PMIX_COLLECT_DATA, value::boolean(true), PMIX_INFO_REQD},
          info{"pmix.timeout", value::integer(PMIX_INT, 30), 0}};
}

// Every sample plus a value large enough for 3-byte lengths.
info_list big_infos() {
  auto out = every_type_infos();
  out.push_back(info{"blob", value::bytes(PMIX_BYTE_OBJECT, std::string(20000, '\x80')), 0});
  return out;
}

std::vector<info_list> info_lists() { return {{}, small_infos(), every_type_infos()}; }

std::vector<std::vector<proc_id>> proc_lists() {
  return {{},
          {proc_id{"", 0}},
          {proc_id{"job", 0}, proc_id{"job", rank_wildcard}, proc_id{"other", rank_undef},
           proc_id{std::string{"n\0s", 3}, 7}, proc_id{std::string(200, 'n'), 123456}}};
}

const proc_id single_procs[] = {proc_id{"", 0}, proc_id{"job", 0}, proc_id{"job", rank_wildcard},
                                proc_id{"ns", rank_undef}, proc_id{std::string(130, 'q'), 1}};

const pmix_status_t statuses[] = {0, 1, -1, PMIX_ERR_NOT_FOUND, std::numeric_limits<std::int32_t>::min(),
                                  std::numeric_limits<std::int32_t>::max()};

void add_procs(const std::vector<proc_id>& procs, RepeatedPtrField<wire::Proc>* out) {
  for (const auto& p : procs) proto::to_wire(p, out->Add());
}

// A RankData as the server builds it: the proc, then each item with a scope.
wire::RankData rank_data_wire(const proc_id& p, const info_list& items) {
  static const std::uint32_t scopes[] = {0u, PMIX_LOCAL, PMIX_REMOTE, PMIX_GLOBAL, 0xffffffffu};
  wire::RankData d;
  proto::to_wire(p, d.mutable_proc());
  std::size_t n = 0;
  for (const auto& i : items) {
    auto* s = d.add_data();
    s->set_scope(scopes[n++ % 5]);
    proto::to_wire(i, s->mutable_info());
  }
  return d;
}

wire::JobInfo job_info_wire(const std::string& nspace, const info_list& job_level) {
  wire::JobInfo j;
  j.set_nspace(nspace);
  proto::to_wire(job_level, j.mutable_info());
  auto* r0 = j.add_ranks();  // rank 0: the field is left out
  proto::to_wire(small_infos(), r0->mutable_info());
  j.add_ranks()->set_rank(1);  // no info at all
  auto* r2 = j.add_ranks();
  r2->set_rank(rank_wildcard);
  proto::to_wire(job_level, r2->mutable_info());
  auto* r3 = j.add_ranks();
  r3->set_rank(7);
  proto::to_wire(info_list{info{"k", value::string("v"), 0}}, r3->mutable_info());
  return j;
}

std::string modex_bytes(const info_list& items) {
  wire::ModexData m;
  *m.add_ranks() = rank_data_wire(proc_id{"job", 0}, items);
  *m.add_ranks() = rank_data_wire(proc_id{"job", 1}, small_infos());
  m.add_ranks();  // an empty RankData (no proc)
  *m.add_ranks() = rank_data_wire(proc_id{"other", rank_wildcard}, {});
  return m.SerializeAsString();
}

// The Envelope's body for `k`, set (a oneof member set even when empty).
google::protobuf::MessageLite* body_of(wire::Envelope& e, proto::body k) {
  switch (k) {
    case proto::body::connect: return e.mutable_connect();
    case proto::body::connect_reply: return e.mutable_connect_reply();
    case proto::body::finalize: return e.mutable_finalize();
    case proto::body::commit: return e.mutable_commit();
    case proto::body::fence: return e.mutable_fence();
    case proto::body::fence_reply: return e.mutable_fence_reply();
    case proto::body::get: return e.mutable_get();
    case proto::body::get_reply: return e.mutable_get_reply();
    case proto::body::abort: return e.mutable_abort();
    case proto::body::status_reply: return e.mutable_status_reply();
    case proto::body::job_control: return e.mutable_job_control();
    case proto::body::info_reply: return e.mutable_info_reply();
    case proto::body::notify: return e.mutable_notify();
    case proto::body::event: return e.mutable_event();
    case proto::body::query: return e.mutable_query();
    default: break;  // the bodies this test builds are all_bodies
  }
  return nullptr;
}

const proto::body all_bodies[] = {
    proto::body::connect,      proto::body::connect_reply, proto::body::finalize,    proto::body::commit,
    proto::body::fence,        proto::body::fence_reply,   proto::body::get,         proto::body::get_reply,
    proto::body::abort,        proto::body::status_reply,  proto::body::job_control, proto::body::info_reply,
    proto::body::notify,       proto::body::event,         proto::body::query};

void fill_event(wire::Event* w, const info_list& infos) {
  w->set_status(PMIX_ERR_NOT_FOUND);
  proto::to_wire(proc_id{"job", 0}, w->mutable_source());
  w->set_range(PMIX_RANGE_NAMESPACE);
  proto::to_wire(infos, w->mutable_info());
}

// Fills the body `k` of `e` with generated classes only: empty (set, no
// field), small, or big (every sample, lengths of 2 and 3 bytes).
void fill_body(wire::Envelope& e, proto::body k, int size) {
  auto* m = body_of(e, k);
  REQUIRE(m != nullptr);
  if (size == 0) return;
  const info_list infos = size == 1 ? small_infos() : big_infos();
  switch (k) {
    case proto::body::connect: {
      auto* w = e.mutable_connect();
      w->set_protocol_version(3);
      w->set_role(wire::ROLE_TOOL);
      proto::to_wire(proc_id{"job", 0}, w->mutable_proc());
      w->set_pid(-7);
      w->set_library_version("5.0");
      proto::to_wire(infos, w->mutable_info());
      break;
    }
    case proto::body::connect_reply: {
      auto* w = e.mutable_connect_reply();
      w->set_status(-2);
      proto::to_wire(proc_id{"srv", 0}, w->mutable_server());
      w->set_job(job_info_wire("job", infos).SerializeAsString());
      proto::to_wire(proc_id{"tool", 1}, w->mutable_assigned());
      w->set_commit_hold(true);
      break;
    }
    case proto::body::finalize: proto::to_wire(infos, e.mutable_finalize()->mutable_info()); break;
    case proto::body::commit:
      for (const auto& i : infos) {
        auto* s = e.mutable_commit()->add_data();
        s->set_scope(PMIX_GLOBAL);
        proto::to_wire(i, s->mutable_info());
      }
      break;
    case proto::body::fence:
      add_procs({proc_id{"job", rank_wildcard}}, e.mutable_fence()->mutable_procs());
      proto::to_wire(infos, e.mutable_fence()->mutable_info());
      e.mutable_fence()->set_collect_data(true);
      break;
    case proto::body::fence_reply:
      e.mutable_fence_reply()->set_status(-1);
      e.mutable_fence_reply()->set_data(modex_bytes(infos));
      break;
    case proto::body::get:
      proto::to_wire(proc_id{"job", 1}, e.mutable_get()->mutable_proc());
      e.mutable_get()->set_key("pmix.hname");
      proto::to_wire(infos, e.mutable_get()->mutable_info());
      break;
    case proto::body::get_reply:
      e.mutable_get_reply()->set_status(PMIX_ERR_NOT_FOUND);
      *e.mutable_get_reply()->mutable_data() = rank_data_wire(proc_id{"job", 0}, infos);
      break;
    case proto::body::abort:
      e.mutable_abort()->set_status(-9);
      e.mutable_abort()->set_message(size == 1 ? "bye" : std::string(20000, 'm'));
      add_procs({proc_id{"job", 0}}, e.mutable_abort()->mutable_procs());
      break;
    case proto::body::status_reply: e.mutable_status_reply()->set_status(PMIX_ERR_NOT_FOUND); break;
    case proto::body::job_control:
      add_procs({proc_id{"job", 1}}, e.mutable_job_control()->mutable_targets());
      proto::to_wire(infos, e.mutable_job_control()->mutable_directives());
      break;
    case proto::body::info_reply:
      e.mutable_info_reply()->set_status(-3);
      proto::to_wire(infos, e.mutable_info_reply()->mutable_info());
      e.mutable_info_reply()->set_data("credential");
      break;
    case proto::body::notify: fill_event(e.mutable_notify(), infos); break;
    case proto::body::event: fill_event(e.mutable_event(), infos); break;
    case proto::body::query: {
      auto* q = e.mutable_query()->add_queries();
      q->add_keys("pmix.qry.ns");
      q->add_keys("");
      proto::to_wire(infos, q->mutable_qualifiers());
      break;
    }
    default: break;  // the bodies this test builds are all_bodies
  }
}

// ---- what a client reads from a message, two ways ------------------------------
//
// `ours_*` read with protocol/messages.hpp; `ref_*` with the generated classes
// and the codec, as the client did before (client/session.cpp, store.cpp).
// Both fill the same `reading`, compared field by field.

struct rank_reading {
  proc_id proc;
  std::vector<std::pair<std::uint32_t, info>> items;
};

struct reading {
  std::uint64_t id = 0;
  std::uint32_t kind = 0;
  pmix_status_t status = 0;
  bool has_data = false;
  std::string bytes;  // ConnectReply.job, FenceReply.data, InfoReply.data: verbatim
  proc_id proc{"", 0};  // ConnectReply.server, Event.source
  std::optional<proc_id> assigned;
  bool commit_hold = false;  // ConnectReply.commit_hold
  std::uint32_t range = 0;
  std::string nspace;
  info_list info;  // JobInfo (job level), InfoReply, Event
  std::vector<std::pair<rank_t, info_list>> ranks;  // JobInfo
  std::vector<rank_reading> data;  // GetReply's RankData, or every RankData of a fence's ModexData
  value val;  // a Value
};

bool same(const rank_reading& a, const rank_reading& b) {
  if (a.proc != b.proc || a.items.size() != b.items.size()) return false;
  for (std::size_t i = 0; i < a.items.size(); ++i)
    if (a.items[i].first != b.items[i].first || !same(a.items[i].second, b.items[i].second)) return false;
  return true;
}

bool same(const reading& a, const reading& b) {
  if (a.id != b.id || a.kind != b.kind || a.status != b.status || a.has_data != b.has_data || a.bytes != b.bytes ||
      a.proc != b.proc || a.assigned != b.assigned || a.commit_hold != b.commit_hold || a.range != b.range ||
      a.nspace != b.nspace ||
      !same(a.info, b.info) || a.ranks.size() != b.ranks.size() || a.data.size() != b.data.size() ||
      !same(a.val, b.val))
    return false;
  for (std::size_t i = 0; i < a.ranks.size(); ++i)
    if (a.ranks[i].first != b.ranks[i].first || !same(a.ranks[i].second, b.ranks[i].second)) return false;
  for (std::size_t i = 0; i < a.data.size(); ++i)
    if (!same(a.data[i], b.data[i])) return false;
  return true;
}

enum class outcome { read, refused, not_for_client };

const char* name(outcome o) {
  return o == outcome::read ? "read" : o == outcome::refused ? "refused" : "not for a client";
}

// Refusals of our decoders that came without an error text.
int silent_refusals = 0;
outcome refused(const std::string& error) {
  if (error.empty()) ++silent_refusals;
  return outcome::refused;
}

bool ours_rank(std::string_view in, rank_reading& out, std::string* error) {
  proto::rank_data d;
  if (!proto::decode(in, d, error)) return false;
  out.proc = d.proc;
  for (const auto& [scope, bytes] : d.items) {
    info i;
    if (!proto::decode_info(bytes, i, error)) return false;
    out.items.emplace_back(scope, std::move(i));
  }
  return true;
}

bool ref_rank(const wire::RankData& w, rank_reading& out, std::string* error) {
  out.proc = proto::from_wire(w.proc());
  for (const auto& s : w.data()) {
    info i;
    if (!proto::from_wire(s.info(), i, error)) return false;
    out.items.emplace_back(s.scope(), std::move(i));
  }
  return true;
}

bool ours_modex(std::string_view in, std::vector<rank_reading>& out, std::string* error) {
  return proto::for_each_rank(
      in,
      [&](const proto::rank_data& d) {
        rank_reading r;
        r.proc = d.proc;
        for (const auto& [scope, bytes] : d.items) {
          info i;
          if (!proto::decode_info(bytes, i, error)) return false;
          r.items.emplace_back(scope, std::move(i));
        }
        out.push_back(std::move(r));
        return true;
      },
      error);
}

bool ref_modex(std::string_view in, std::vector<rank_reading>& out, std::string* error) {
  wire::ModexData m;
  if (!m.ParseFromArray(in.data(), static_cast<int>(in.size()))) return false;
  for (const auto& r : m.ranks()) {
    out.emplace_back();
    if (!ref_rank(r, out.back(), error)) return false;
  }
  return true;
}

// An Envelope as a client reads it: the id, the kind, and the body decoded
// (a fence's data as a ModexData, a get's data as a RankData). Requests are
// not for a client: the hand codec has no reader for them.
outcome ours_envelope(std::string_view in, reading& r) {
  proto::envelope e;
  if (!proto::parse_envelope(std::string{in}, e)) return outcome::refused;
  r.id = e.id;
  r.kind = static_cast<std::uint32_t>(e.kind);
  std::string error;
  switch (e.kind) {
    case proto::body::none: return outcome::read;
    case proto::body::connect_reply: {
      proto::connect_reply c;
      if (!proto::decode(e.message, c, &error)) return refused(error);
      r.status = c.status;
      r.proc = c.server;
      r.bytes = std::string{c.job};
      r.assigned = c.assigned;
      r.commit_hold = c.commit_hold;
      return outcome::read;
    }
    case proto::body::status_reply:
    case proto::body::fence_reply:
    case proto::body::get_reply: {
      proto::status_reply s;
      if (!proto::decode(e.message, e.kind, s, &error)) return refused(error);
      r.status = s.status;
      r.has_data = s.has_data;
      if (e.kind == proto::body::fence_reply) {
        r.bytes = std::string{s.data};
        if (!ours_modex(s.data, r.data, &error)) return refused(error);
      } else if (e.kind == proto::body::get_reply && s.has_data) {
        r.data.emplace_back();
        if (!ours_rank(s.data, r.data.back(), &error)) return refused(error);
      }
      return outcome::read;
    }
    case proto::body::info_reply: {
      proto::info_reply i;
      if (!proto::decode(e.message, i, &error)) return refused(error);
      r.status = i.status;
      r.info = std::move(i.info);
      r.bytes = std::move(i.data);
      return outcome::read;
    }
    case proto::body::event:
    case proto::body::notify: {
      pmix::event ev;
      if (!proto::decode(e.message, ev, &error)) return refused(error);
      r.status = ev.status;
      r.proc = ev.source;
      r.range = ev.range;
      r.info = std::move(ev.info);
      return outcome::read;
    }
    default: return outcome::not_for_client;
  }
}

outcome ref_envelope(std::string_view in, reading& r) {
  wire::Envelope e;
  if (!e.ParseFromArray(in.data(), static_cast<int>(in.size()))) return outcome::refused;
  r.id = e.id();
  r.kind = static_cast<std::uint32_t>(e.body_case());
  std::string error;
  switch (e.body_case()) {
    case wire::Envelope::BODY_NOT_SET: return outcome::read;
    case wire::Envelope::kConnectReply: {
      const auto& c = e.connect_reply();
      r.status = c.status();
      r.proc = proto::from_wire(c.server());
      r.bytes = c.job();
      if (c.has_assigned()) r.assigned = proto::from_wire(c.assigned());
      r.commit_hold = c.commit_hold();
      return outcome::read;
    }
    case wire::Envelope::kStatusReply: r.status = e.status_reply().status(); return outcome::read;
    case wire::Envelope::kFenceReply:
      r.status = e.fence_reply().status();
      r.has_data = !e.fence_reply().data().empty();
      r.bytes = e.fence_reply().data();
      return ref_modex(r.bytes, r.data, &error) ? outcome::read : outcome::refused;
    case wire::Envelope::kGetReply:
      r.status = e.get_reply().status();
      r.has_data = e.get_reply().has_data();
      if (r.has_data) {
        r.data.emplace_back();
        if (!ref_rank(e.get_reply().data(), r.data.back(), &error)) return outcome::refused;
      }
      return outcome::read;
    case wire::Envelope::kInfoReply:
      r.status = e.info_reply().status();
      r.bytes = e.info_reply().data();
      return proto::from_wire(e.info_reply().info(), r.info, &error) ? outcome::read : outcome::refused;
    case wire::Envelope::kEvent:
    case wire::Envelope::kNotify: {
      const auto& w = e.body_case() == wire::Envelope::kEvent ? e.event() : e.notify();
      r.status = w.status();
      r.proc = proto::from_wire(w.source());
      r.range = static_cast<pmix_data_range_t>(w.range());
      return proto::from_wire(w.info(), r.info, &error) ? outcome::read : outcome::refused;
    }
    default: return outcome::not_for_client;
  }
}

outcome ours_job(std::string_view in, reading& r) {
  proto::job_info j;
  std::string error;
  if (!proto::decode(in, j, &error)) return refused(error);
  r.nspace = j.nspace;
  r.info = std::move(j.info);
  r.ranks = std::move(j.ranks);
  return outcome::read;
}

outcome ref_job(std::string_view in, reading& r) {
  wire::JobInfo j;
  if (!j.ParseFromArray(in.data(), static_cast<int>(in.size()))) return outcome::refused;
  r.nspace = j.nspace();
  if (!proto::from_wire(j.info(), r.info)) return outcome::refused;
  for (const auto& rank : j.ranks()) {
    r.ranks.emplace_back(rank.rank(), info_list{});
    if (!proto::from_wire(rank.info(), r.ranks.back().second)) return outcome::refused;
  }
  return outcome::read;
}

outcome ours_value(std::string_view in, reading& r) {
  std::string error;
  return proto::decode_value(in, r.val, &error) ? outcome::read : refused(error);
}

outcome ref_value(std::string_view in, reading& r) {
  wire::Value w;
  if (!w.ParseFromArray(in.data(), static_cast<int>(in.size()))) return outcome::refused;
  return proto::from_wire(w, r.val) ? outcome::read : outcome::refused;
}

// ---- a walker over protobuf's wire format, knowing pmix.proto's messages --------
//
// Tells why the two readers may legitimately disagree: protobuf merges a
// repeated occurrence of a singular message field (or of the active message
// member of a oneof), where the hand codec keeps the last one; groups (wire
// types 3 and 4) protobuf skips, the hand codec refuses.

enum class schema {
  none, envelope, connect_request, connect_reply, finalize_request, commit_request, fence_request, fence_reply,
  get_request, get_reply, abort_request, status_reply, job_control_request, info_reply, event, query,
  query_request, job_info, rank_info, scoped_info, rank_data, modex_data, info, value, data_array, proc,
  timeval, envar, proc_info
};

struct member {
  schema type = schema::none;  // a message-typed field (none: anything else)
  bool repeated = false;
  bool oneof = false;
  bool bytes = false;  // a bytes field the client reads as a message
};

member field_of(schema m, std::uint32_t f) {
  constexpr bool rep = true;
  switch (m) {
    case schema::envelope: {
      static const schema bodies[] = {
          schema::connect_request, schema::connect_reply, schema::finalize_request, schema::commit_request,
          schema::fence_request,   schema::fence_reply,   schema::get_request,      schema::get_reply,
          schema::abort_request,   schema::status_reply,  schema::job_control_request, schema::info_reply,
          schema::event,           schema::event,         schema::query_request};
      if (f >= 10 && f <= 24) return member{bodies[f - 10], false, true};
      break;
    }
    case schema::connect_request:
      if (f == 3) return {schema::proc};
      if (f == 6) return {schema::info, rep};
      break;
    case schema::connect_reply:
      if (f == 2 || f == 4) return {schema::proc};
      break;
    case schema::finalize_request:
      if (f == 1) return {schema::info, rep};
      break;
    case schema::commit_request:
      if (f == 1) return {schema::scoped_info, rep};
      break;
    case schema::fence_request:
      if (f == 1) return {schema::proc, rep};
      if (f == 2) return {schema::info, rep};
      break;
    case schema::fence_reply:
      if (f == 2) return {schema::modex_data, false, false, true};
      break;
    case schema::get_request:
      if (f == 1) return {schema::proc};
      if (f == 3) return {schema::info, rep};
      break;
    case schema::get_reply:
      if (f == 2) return {schema::rank_data};
      break;
    case schema::abort_request:
      if (f == 3) return {schema::proc, rep};
      break;
    case schema::job_control_request:
      if (f == 1) return {schema::proc, rep};
      if (f == 2) return {schema::info, rep};
      break;
    case schema::info_reply:
      if (f == 2) return {schema::info, rep};
      break;
    case schema::event:
      if (f == 2) return {schema::proc};
      if (f == 4) return {schema::info, rep};
      break;
    case schema::query:
      if (f == 2) return {schema::info, rep};
      break;
    case schema::query_request:
      if (f == 1) return {schema::query, rep};
      break;
    case schema::job_info:
      if (f == 2) return {schema::info, rep};
      if (f == 3) return {schema::rank_info, rep};
      break;
    case schema::rank_info:
      if (f == 2) return {schema::info, rep};
      break;
    case schema::scoped_info:
      if (f == 2) return {schema::info};
      break;
    case schema::rank_data:
      if (f == 1) return {schema::proc};
      if (f == 2) return {schema::scoped_info, rep};
      break;
    case schema::modex_data:
      if (f == 1) return {schema::rank_data, rep};
      break;
    case schema::info:
      if (f == 2) return {schema::value};
      break;
    case schema::value: {
      static const schema payloads[] = {schema::proc, schema::timeval, schema::data_array, schema::envar,
                                        schema::proc_info, schema::info};
      if (f >= 7 && f <= 12) return member{payloads[f - 7], false, true};
      break;
    }
    case schema::data_array:
      if (f == 2) return {schema::value, rep};
      break;
    case schema::proc_info:
      if (f == 1) return {schema::proc};
      break;
    default: break;
  }
  return {};
}

// Value's scalar oneof members, with the wire type that sets them.
bool value_scalar_member(std::uint32_t f, std::uint32_t wt) {
  return ((f == 2 || f == 3 || f == 4) && wt == 0) || (f == 5 && wt == 1) || (f == 6 && wt == 2);
}

struct findings {
  bool merge = false;         // a singular message field protobuf merges
  bool group = false;         // a group (wire type 3 or 4)
  bool oneof_switch = false;  // a oneof message member replaced by another member
};

bool walk_varint(std::string_view in, std::size_t& pos, std::uint64_t& v) {
  v = 0;
  for (int shift = 0; shift < 70 && pos < in.size(); shift += 7) {
    const auto b = static_cast<std::uint8_t>(in[pos++]);
    if (shift < 64) v |= static_cast<std::uint64_t>(b & 0x7f) << shift;
    if ((b & 0x80) == 0) return true;
  }
  return false;
}

void walk(std::string_view in, schema m, findings& found) {
  std::size_t pos = 0;
  std::set<std::uint32_t> seen;
  std::uint32_t active = 0;  // the oneof member set last (0: none)
  bool active_is_message = false;
  while (pos < in.size()) {
    std::uint64_t tag, v;
    if (!walk_varint(in, pos, tag)) return;
    const auto f = static_cast<std::uint32_t>(tag >> 3);
    const auto wt = static_cast<std::uint32_t>(tag & 7);
    switch (wt) {
      case 0:
        if (!walk_varint(in, pos, v)) return;
        break;
      case 1: pos += 8; break;
      case 5: pos += 4; break;
      case 2: {
        if (!walk_varint(in, pos, v) || v > in.size() - pos) return;
        const auto body = in.substr(pos, static_cast<std::size_t>(v));
        pos += static_cast<std::size_t>(v);
        const member s = field_of(m, f);
        if (s.type != schema::none) {
          if (s.oneof) {
            if (active == f) found.merge = true;
            else if (active_is_message) found.oneof_switch = true;
            active = f;
            active_is_message = true;
          } else if (!s.repeated && !s.bytes && !seen.insert(f).second) {
            found.merge = true;
          }
          walk(body, s.type, found);
          continue;
        }
        break;
      }
      default: found.group = true; return;
    }
    if (m == schema::value && value_scalar_member(f, wt)) {
      if (active_is_message) found.oneof_switch = true;
      active = f;
      active_is_message = false;
    }
  }
}

findings scan(std::string_view in, schema m) {
  findings f;
  walk(in, m, f);
  return f;
}

std::string describe(const findings& f) {
  return std::string{"merge="} + (f.merge ? "yes" : "no") + " group=" + (f.group ? "yes" : "no") +
         " oneof_switch=" + (f.oneof_switch ? "yes" : "no");
}

// ---- the messages parts 4 works on ------------------------------------------------

using read_fn = outcome (*)(std::string_view, reading&);

struct subject {
  const char* name;
  std::string bytes;
  schema type;
  read_fn ours;
  read_fn ref;
};

// A value of nested arrays of mixed elements.
value array_sample() {
  auto inner = value::array(array_value{PMIX_UINT32, {value::unsigned_(PMIX_UINT32, 1), value::unsigned_(PMIX_UINT32, 0)}});
  return value::array(array_value{
      PMIX_VALUE,
      {value::string("text"), value::integer(PMIX_INT, -5), value::real(PMIX_DOUBLE, 0.5), value::boolean(true),
       value::proc(proc_id{"job", 0}), value{PMIX_TIMEVAL, timeval_value{12, -3}},
       value{PMIX_ENVAR, std::make_shared<const envar_value>(envar_value{"A", "b", ':'})},
       value{PMIX_PROC_INFO, std::make_shared<const proc_info_value>(pmix::test::sample_proc_info())},
       value::array(array_value{PMIX_INFO, {info_value("k", inner, PMIX_INFO_REQD), info_value("", value{})}}),
       inner, value{}}});
}

std::vector<subject> subjects() {
  wire::Envelope fence;
  fence.set_id(77);
  fence.mutable_fence_reply()->set_status(-25);
  info_list items = small_infos();
  items.push_back(info{"pmix.hname", value::string("node001"), 0});
  items.push_back(info{"arr", array_sample(), 0});
  fence.mutable_fence_reply()->set_data(modex_bytes(items));

  info_list job_level = small_infos();
  job_level.push_back(info{"pmix.univ.size", value::unsigned_(PMIX_UINT32, 4), 0});
  job_level.push_back(info{"pmix.pinfo", samples(PMIX_PROC_INFO)[1], PMIX_INFO_REQD});
  job_level.push_back(info{"pmix.env", samples(PMIX_ENVAR)[0], 0});

  wire::Value array;
  proto::to_wire(array_sample(), &array);

  return {{"Envelope with a FenceReply", fence.SerializeAsString(), schema::envelope, ours_envelope, ref_envelope},
          {"JobInfo", job_info_wire("job-1", job_level).SerializeAsString(), schema::job_info, ours_job, ref_job},
          {"Value of an array", array.SerializeAsString(), schema::value, ours_value, ref_value}};
}

// A value nested `depth` levels deep through infos whose values are infos.
wire::Value nested_infos(int depth) {
  wire::Value chain;
  chain.set_type(PMIX_STRING);
  chain.set_bytes("leaf");
  for (int i = 0; i < depth; ++i) {
    wire::Value outer;
    outer.set_type(PMIX_INFO);
    outer.mutable_info()->set_key("k" + std::to_string(i));
    *outer.mutable_info()->mutable_value() = chain;
    chain = std::move(outer);
  }
  return chain;
}

// decode_value() and protobuf + from_wire() agree on `bytes`: both refuse
// (ours with an error text), or both read the same value. Returns whether
// the codec accepted it.
bool value_agrees(const std::string& bytes) {
  wire::Value w;
  const bool parsed = w.ParseFromString(bytes);
  value expected;
  const bool ref_ok = parsed && proto::from_wire(w, expected);
  value got;
  std::string error;
  const bool ok = proto::decode_value(bytes, got, &error);
  CHECK_MESSAGE(ok == ref_ok, "ours ", ok ? "reads" : "refuses", ", the codec ", ref_ok ? "reads" : "refuses",
                ": ", hex(bytes.substr(0, 64)), " (error '", error, "')");
  if (!ok) CHECK_MESSAGE(!error.empty(), hex(bytes.substr(0, 64)));
  if (ok && ref_ok) CHECK_MESSAGE(same(got, expected), hex(bytes.substr(0, 64)));
  return ref_ok;
}

}  // namespace

// =============================================================================
// 1. The encoders write what protobuf writes.
// =============================================================================

TEST_SUITE("messages") {
  TEST_CASE("[write] connect_request") {
    const std::uint32_t versions[] = {0u, 1u, 0xffffffffu};
    const std::int32_t pids[] = {0, 1, -1, std::numeric_limits<std::int32_t>::min(),
                                 std::numeric_limits<std::int32_t>::max()};
    const std::string library_versions[] = {"", "5.0.0-cxx", std::string(300, 'v')};
    int checked = 0;
    for (auto version : versions)
      for (auto r : {proto::role::client, proto::role::tool})
        for (const auto& p : single_procs)
          for (auto pid : pids)
            for (const auto& lib : library_versions)
              for (const auto& infos : info_lists())
                for (bool hold : {false, true}) {
                  wire::ConnectRequest w;
                  w.set_protocol_version(version);
                  w.set_role(r == proto::role::tool ? wire::ROLE_TOOL : wire::ROLE_CLIENT);
                  proto::to_wire(p, w.mutable_proc());
                  w.set_pid(pid);
                  w.set_library_version(lib);
                  proto::to_wire(infos, w.mutable_info());
                  w.set_commit_hold(hold);
                  CAPTURE(version);
                  CAPTURE(pid);
                  CAPTURE(p.rank);
                  CAPTURE(hold);
                  CHECK_SAME_BYTES(proto::connect_request(version, r, p, pid, lib, infos, hold), w);
                  ++checked;
                }
    CHECK(checked == 3 * 2 * 5 * 5 * 3 * 3 * 2);
  }

  TEST_CASE("[write] finalize_request") {
    for (const auto& infos : info_lists()) {
      wire::FinalizeRequest w;
      proto::to_wire(infos, w.mutable_info());
      CHECK_SAME_BYTES(proto::finalize_request(infos), w);
    }
    CHECK(proto::finalize_request({}).empty());
  }

  TEST_CASE("[write] commit_request") {
    const std::uint32_t scopes[] = {0u, PMIX_LOCAL, PMIX_REMOTE, PMIX_GLOBAL, 0xffffffffu};
    std::vector<std::vector<proto::scoped_info>> cases = {{}, {{0, info{"", value{}, 0}}}};
    std::vector<proto::scoped_info> every;
    std::size_t n = 0;
    for (auto& i : big_infos()) every.push_back({scopes[n++ % 5], std::move(i)});
    cases.push_back(std::move(every));
    for (const auto& data : cases) {
      wire::CommitRequest w;
      for (const auto& d : data) {
        auto* s = w.add_data();
        s->set_scope(d.scope);
        proto::to_wire(d.item, s->mutable_info());
      }
      CAPTURE(data.size());
      CHECK_SAME_BYTES(proto::commit_request(data), w);
    }
  }

  TEST_CASE("[write] fence_request") {
    for (const auto& procs : proc_lists())
      for (const auto& infos : info_lists())
        for (bool collect : {false, true})
          for (int board : {0, 1, 2, 3}) {
            wire::FenceRequest w;
            add_procs(procs, w.mutable_procs());
            proto::to_wire(infos, w.mutable_info());
            w.set_collect_data(collect);
            w.set_board_wait((board & 1) != 0);
            w.set_board_request((board & 2) != 0);
            CAPTURE(procs.size());
            CAPTURE(infos.size());
            CAPTURE(collect);
            CAPTURE(board);
            CHECK_SAME_BYTES(proto::fence_request(procs, infos, collect, (board & 1) != 0, (board & 2) != 0), w);
          }
    CHECK(proto::fence_request({}, {}, false).empty());
  }

  TEST_CASE("[write] get_request") {
    const std::string keys[] = {"", "pmix.hname", std::string{"k\0", 2}, std::string(200, 'k')};
    for (const auto& p : single_procs)
      for (const auto& key : keys)
        for (const auto& infos : info_lists()) {
          wire::GetRequest w;
          proto::to_wire(p, w.mutable_proc());
          w.set_key(key);
          proto::to_wire(infos, w.mutable_info());
          CAPTURE(p.rank);
          CAPTURE(key.size());
          CHECK_SAME_BYTES(proto::get_request(p, key, infos), w);
        }
  }

  TEST_CASE("[write] abort_request") {
    const std::string messages[] = {"", "bye", std::string(5000, 'm')};
    for (auto status : statuses)
      for (const auto& message : messages)
        for (const auto& procs : proc_lists()) {
          wire::AbortRequest w;
          w.set_status(status);
          w.set_message(message);
          add_procs(procs, w.mutable_procs());
          CAPTURE(status);
          CAPTURE(message.size());
          CAPTURE(procs.size());
          CHECK_SAME_BYTES(proto::abort_request(status, message, procs), w);
        }
  }

  TEST_CASE("[write] job_control_request") {
    for (const auto& procs : proc_lists())
      for (const auto& infos : info_lists()) {
        wire::JobControlRequest w;
        add_procs(procs, w.mutable_targets());
        proto::to_wire(infos, w.mutable_directives());
        CAPTURE(procs.size());
        CAPTURE(infos.size());
        CHECK_SAME_BYTES(proto::job_control_request(procs, infos), w);
      }
  }

  TEST_CASE("[write] query_request") {
    const std::vector<std::vector<pmix::query>> cases = {
        {},
        {pmix::query{}},                                 // no keys, no qualifiers
        {pmix::query{{""}, {}}},                         // one empty key
        {pmix::query{{}, small_infos()}},                // qualifiers only
        {pmix::query{{"pmix.qry.ns", "", std::string(300, 'k')}, small_infos()},
         pmix::query{{}, every_type_infos()}, pmix::query{}, pmix::query{{"pmix.qry.pst"}, {}}}};
    for (const auto& queries : cases) {
      wire::QueryRequest w;
      for (const auto& q : queries) {
        auto* wq = w.add_queries();
        for (const auto& k : q.keys) wq->add_keys(k);
        proto::to_wire(q.qualifiers, wq->mutable_qualifiers());
      }
      CAPTURE(queries.size());
      CHECK_SAME_BYTES(proto::query_request(queries), w);
    }
  }

  TEST_CASE("[write] event_message") {
    const pmix_data_range_t ranges[] = {PMIX_RANGE_UNDEF, PMIX_RANGE_NAMESPACE, PMIX_RANGE_PROC_LOCAL,
                                        PMIX_RANGE_INVALID};
    for (auto status : statuses)
      for (const auto& source : single_procs)
        for (auto range : ranges)
          for (const auto& infos : info_lists()) {
            pmix::event ev;
            ev.status = status;
            ev.source = source;
            ev.range = range;
            ev.info = infos;
            wire::Event w;
            w.set_status(status);
            proto::to_wire(source, w.mutable_source());
            w.set_range(range);
            proto::to_wire(infos, w.mutable_info());
            CAPTURE(status);
            CAPTURE(source.rank);
            CAPTURE(static_cast<int>(range));
            CHECK_SAME_BYTES(proto::event_message(ev), w);
          }
  }

  TEST_CASE("[write] to_frame writes the codec's frame, for every body kind and id") {
    const std::uint64_t ids[] = {0u, 1u, 127u, 128u, 0xffffffffu, 1ull << 32, std::numeric_limits<std::uint64_t>::max()};
    int checked = 0;
    for (auto k : all_bodies)
      for (int size : {0, 1, 2})
        for (auto id : ids) {
          wire::Envelope e;
          e.set_id(id);
          fill_body(e, k, size);
          const std::string message = body_of(e, k)->SerializeAsString();
          const std::string expected = proto::to_frame(e);
          const std::string got = proto::to_frame(id, k, message);
          CAPTURE(static_cast<int>(k));
          CAPTURE(size);
          CAPTURE(id);
          CHECK_MESSAGE(got == expected, difference(got, expected));
          CHECK(got.size() == proto::frame_header_size + e.ByteSizeLong());
          ++checked;
        }
    CHECK(checked == 15 * 3 * 7);
  }

  // ===========================================================================
  // 2. The decoders read what protobuf writes, as the codec reads it.
  // ===========================================================================

  TEST_CASE("[read] ConnectReply") {
    const std::string job = job_info_wire("job", small_infos()).SerializeAsString();
    const std::optional<proc_id> assigned[] = {std::nullopt, proc_id{"", 0}, proc_id{"tool-ns", 0},
                                               proc_id{"t", rank_wildcard}};
    for (auto status : statuses)
      for (int server = -1; server < 3; ++server)  // -1: no server field at all
        for (const auto& j : {std::string{}, job})
          for (const auto& a : assigned) {
            wire::ConnectReply w;
            w.set_status(status);
            if (server >= 0) proto::to_wire(single_procs[server], w.mutable_server());
            w.set_job(j);
            if (a) proto::to_wire(*a, w.mutable_assigned());
            w.set_commit_hold(server == 1);
            const std::string bytes = w.SerializeAsString();
            proto::connect_reply got;
            std::string error;
            CAPTURE(status);
            CAPTURE(server);
            CAPTURE(hex(bytes.substr(0, 40)));
            REQUIRE(proto::decode(bytes, got, &error));
            CHECK(got.status == w.status());
            CHECK(got.server == proto::from_wire(w.server()));
            CHECK(got.job == w.job());
            REQUIRE(got.assigned.has_value() == w.has_assigned());
            if (got.assigned) CHECK(*got.assigned == proto::from_wire(w.assigned()));
            CHECK(got.commit_hold == w.commit_hold());
          }
  }

  TEST_CASE("[read] JobInfo") {
    for (const std::string nspace : {"", "job-1"})
      for (const auto& infos : info_lists()) {
        const auto w = job_info_wire(nspace, infos);
        reading ours, ref;
        REQUIRE(ref_job(w.SerializeAsString(), ref) == outcome::read);
        REQUIRE(ours_job(w.SerializeAsString(), ours) == outcome::read);
        CHECK(ours.nspace == ref.nspace);
        CHECK(same(ours.info, ref.info));
        REQUIRE(ours.ranks.size() == ref.ranks.size());
        for (std::size_t i = 0; i < ours.ranks.size(); ++i) {
          CAPTURE(i);
          CHECK(ours.ranks[i].first == ref.ranks[i].first);
          CHECK(same(ours.ranks[i].second, ref.ranks[i].second));
        }
        CHECK(ours.ranks.size() == 4);
      }
    // An info the codec refuses makes the whole JobInfo unreadable, in the
    // job-level info and in a rank's.
    for (bool in_rank : {false, true}) {
      wire::JobInfo w = job_info_wire("job", small_infos());
      auto* bad = in_rank ? w.mutable_ranks(2)->add_info() : w.add_info();
      bad->set_key("bad");
      bad->mutable_value()->set_type(PMIX_BOOL);
      bad->mutable_value()->set_bytes("not a bool");
      proto::job_info got;
      std::string error;
      reading ref;
      CHECK(ref_job(w.SerializeAsString(), ref) == outcome::refused);
      CHECK_FALSE(proto::decode(w.SerializeAsString(), got, &error));
      CHECK_FALSE(error.empty());
    }
  }

  TEST_CASE("[read] StatusReply, FenceReply and GetReply") {
    const std::string modex = modex_bytes(small_infos());
    for (auto status : statuses) {
      CAPTURE(status);
      {
        wire::StatusReply w;
        w.set_status(status);
        proto::status_reply got;
        got.has_data = true;
        REQUIRE(proto::decode(w.SerializeAsString(), proto::body::status_reply, got));
        CHECK(got.status == status);
        CHECK_FALSE(got.has_data);
      }
      for (const auto& data : {std::string{}, std::string{"x"}, modex}) {
        wire::FenceReply w;
        w.set_status(status);
        w.set_data(data);
        const std::string bytes = w.SerializeAsString();  // `data` points into it
        proto::status_reply got;
        REQUIRE(proto::decode(bytes, proto::body::fence_reply, got));
        CHECK(got.status == status);
        CHECK(got.has_data == !w.data().empty());
        CHECK(got.data == w.data());
        // Read as a plain StatusReply, the data is ignored.
        proto::status_reply plain;
        REQUIRE(proto::decode(w.SerializeAsString(), proto::body::status_reply, plain));
        CHECK(plain.status == status);
        CHECK_FALSE(plain.has_data);
      }
      {
        // An explicitly empty data field (protobuf leaves it out, a peer may
        // not): still no data, as FenceReply.data() is empty.
        wire::FenceReply w;
        w.set_status(status);
        const std::string bytes = w.SerializeAsString() + std::string{"\x12\x00", 2};
        REQUIRE(w.ParseFromString(bytes));
        proto::status_reply got;
        REQUIRE(proto::decode(bytes, proto::body::fence_reply, got));
        CHECK(got.status == status);
        CHECK_FALSE(got.has_data);
        CHECK(got.data.empty());
      }
      for (int variant = 0; variant < 3; ++variant) {  // no data, an empty RankData, a full one
        wire::GetReply w;
        w.set_status(status);
        if (variant == 1) w.mutable_data();
        if (variant == 2) *w.mutable_data() = rank_data_wire(proc_id{"job", 0}, every_type_infos());
        const std::string bytes = w.SerializeAsString();
        proto::status_reply got;
        CAPTURE(variant);
        REQUIRE(proto::decode(bytes, proto::body::get_reply, got));
        CHECK(got.status == status);
        CHECK(got.has_data == w.has_data());
        CHECK(got.data == w.data().SerializeAsString());
      }
    }
  }

  TEST_CASE("[write] publish, lookup/unpublish (keys), spawn, connect_procs and log requests") {
    const std::vector<std::vector<std::string>> key_lists = {{}, {"svc"}, {"", std::string{"k\0", 2}, std::string(300, 'k')}};
    for (const auto& infos : info_lists()) {
      wire::PublishRequest w;
      proto::to_wire(infos, w.mutable_info());
      CHECK_SAME_BYTES(proto::publish_request(infos), w);
      for (const auto& keys : key_lists) {
        wire::KeysRequest k;
        for (const auto& key : keys) k.add_keys(key);
        proto::to_wire(infos, k.mutable_info());
        CAPTURE(keys.size());
        CHECK_SAME_BYTES(proto::keys_request(keys, infos), k);
      }
      for (const auto& procs : proc_lists())
        for (bool disconnect : {false, true}) {
          wire::ConnectProcsRequest c;
          add_procs(procs, c.mutable_procs());
          proto::to_wire(infos, c.mutable_info());
          c.set_disconnect(disconnect);
          CHECK_SAME_BYTES(proto::connect_procs_request(procs, infos, disconnect), c);
        }
      for (const auto& directives : info_lists()) {
        wire::LogRequest l;
        proto::to_wire(infos, l.mutable_data());
        proto::to_wire(directives, l.mutable_directives());
        CHECK_SAME_BYTES(proto::log_request(infos, directives), l);
      }
    }
    std::vector<pmix::app> apps(3);
    apps[1].cmd = "/bin/prog";
    apps[1].argv = {"/bin/prog", "", "--flag"};
    apps[1].env = {"A=1", "B="};
    apps[1].cwd = "/tmp";
    apps[1].maxprocs = 16;
    apps[1].info = small_infos();
    apps[2].cmd = "x";
    apps[2].maxprocs = -1;
    apps[2].info = every_type_infos();
    for (std::size_t n = 0; n <= apps.size(); ++n)
      for (const auto& job_info : info_lists()) {
        std::vector<pmix::app> some(apps.begin(), apps.begin() + static_cast<std::ptrdiff_t>(n));
        wire::SpawnRequest w;
        proto::to_wire(job_info, w.mutable_job_info());
        for (const auto& a : some) {
          auto* wa = w.add_apps();
          wa->set_cmd(a.cmd);
          for (const auto& v : a.argv) wa->add_argv(v);
          for (const auto& v : a.env) wa->add_env(v);
          wa->set_cwd(a.cwd);
          wa->set_maxprocs(a.maxprocs);
          proto::to_wire(a.info, wa->mutable_info());
        }
        CAPTURE(n);
        CHECK_SAME_BYTES(proto::spawn_request(job_info, some), w);
        // And the server reads back what the client wrote.
        wire::SpawnRequest back;
        REQUIRE(back.ParseFromString(proto::spawn_request(job_info, some)));
        REQUIRE(back.apps_size() == static_cast<int>(n));
        for (std::size_t k = 0; k < n; ++k) {
          pmix::app got;
          REQUIRE(proto::from_wire(back.apps(static_cast<int>(k)), got));
          CHECK(got.cmd == some[k].cmd);
          CHECK(got.argv == some[k].argv);
          CHECK(got.env == some[k].env);
          CHECK(got.cwd == some[k].cwd);
          CHECK(got.maxprocs == some[k].maxprocs);
          info_list expected;  // as the codec reads what protobuf wrote
          REQUIRE(proto::from_wire(w.apps(static_cast<int>(k)).info(), expected));
          CHECK(same(got.info, expected));
        }
      }
  }

  TEST_CASE("[read] LookupReply, SpawnReply, ConnectProcsReply and a GetReply with job data") {
    const auto job = job_info_wire("other.job", small_infos()).SerializeAsString();
    for (auto status : statuses) {
      CAPTURE(status);
      for (const auto& values : {info_list{}, small_infos(), every_type_infos()}) {
        wire::LookupReply w;
        w.set_status(status);
        std::vector<pmix::pdata> expected;
        rank_t r = 0;
        for (const auto& i : values) {
          pmix::pdata d{proc_id{"pub", r++}, i.key, i.val};
          auto* wd = w.add_data();
          proto::to_wire(d, wd);
          REQUIRE(proto::from_wire(wd->value(), d.val));  // as the codec reads it
          expected.push_back(d);
        }
        w.add_data();  // an entry with nothing set: protobuf's defaults
        expected.push_back(pmix::pdata{proc_id{"", 0}, "", value{}});
        proto::lookup_reply got;
        std::string error;
        REQUIRE_MESSAGE(proto::decode(w.SerializeAsString(), got, &error), error);
        CHECK(got.status == status);
        REQUIRE(got.data.size() == expected.size());
        for (std::size_t k = 0; k < expected.size(); ++k) {
          CHECK(got.data[k].proc == expected[k].proc);
          CHECK(got.data[k].key == expected[k].key);
          CHECK(same(got.data[k].val, expected[k].val));
        }
      }
      for (const auto& ns : {std::string{}, std::string{"spawned.1"}, std::string(255, 'n')}) {
        wire::SpawnReply w;
        w.set_status(status);
        w.set_nspace(ns);
        proto::spawn_reply got;
        REQUIRE(proto::decode(w.SerializeAsString(), got));
        CHECK(got.status == status);
        CHECK(got.nspace == ns);
      }
      for (int jobs = 0; jobs < 3; ++jobs) {
        wire::ConnectProcsReply w;
        w.set_status(status);
        for (int k = 0; k < jobs; ++k) w.add_jobs(job);
        const auto bytes = w.SerializeAsString();
        // The server writes the jobs after the status (connect_procs_reply_body).
        CHECK(proto::connect_procs_reply_body(status, [&] {
                std::string fields;
                for (int k = 0; k < jobs; ++k) proto::append_length_delimited(fields, 2, job);
                return fields;
              }()) == bytes);
        proto::connect_procs_reply got;
        REQUIRE(proto::decode(bytes, got));
        CHECK(got.status == status);
        REQUIRE(got.jobs.size() == static_cast<std::size_t>(jobs));
        for (auto j : got.jobs) {
          proto::job_info decoded;
          REQUIRE(proto::decode(j, decoded));
          CHECK(decoded.nspace == "other.job");
        }
      }
      wire::GetReply g;
      g.set_status(status);
      g.set_job(job);
      const auto get_bytes = g.SerializeAsString();  // `job` points into it
      proto::status_reply got;
      REQUIRE(proto::decode(get_bytes, proto::body::get_reply, got));
      CHECK(got.status == status);
      CHECK_FALSE(got.has_data);
      CHECK(got.job == job);
    }
    // Every prefix of a reply is read iff protobuf reads it.
    wire::LookupReply l;
    l.set_status(-46);
    proto::to_wire(pmix::pdata{proc_id{"pub", 3}, "svc", value::string("port")}, l.add_data());
    wire::ConnectProcsReply c;
    c.set_status(0);
    c.add_jobs(job);
    wire::SpawnReply sp;
    sp.set_status(0);
    sp.set_nspace("ns");
    for (const auto& [name, full] : {std::pair<std::string, std::string>{"lookup", l.SerializeAsString()},
                                     {"connect", c.SerializeAsString()},
                                     {"spawn", sp.SerializeAsString()}}) {
      for (std::size_t n = 0; n < full.size(); ++n) {
        const std::string prefix = full.substr(0, n);
        CAPTURE(name);
        CAPTURE(n);
        bool ref = false, ours = false;
        if (name == "lookup") {
          wire::LookupReply w;
          ref = w.ParseFromString(prefix);
          proto::lookup_reply r;
          ours = proto::decode(prefix, r);
        } else if (name == "connect") {
          wire::ConnectProcsReply w;
          ref = w.ParseFromString(prefix);
          proto::connect_procs_reply r;
          ours = proto::decode(prefix, r);
        } else {
          wire::SpawnReply w;
          ref = w.ParseFromString(prefix);
          proto::spawn_reply r;
          ours = proto::decode(prefix, r);
        }
        CHECK(ours == ref);
      }
    }
  }

  TEST_CASE("[read] RankData: the proc, and each item's scope and Info") {
    std::vector<wire::RankData> cases;
    for (const auto& p : single_procs) cases.push_back(rank_data_wire(p, every_type_infos()));
    cases.emplace_back();  // nothing at all: no proc
    wire::RankData odd = rank_data_wire(proc_id{"job", 3}, small_infos());
    odd.add_data()->set_scope(PMIX_LOCAL);  // an item without an Info
    odd.add_data();                         // an empty item
    cases.push_back(odd);
    for (const auto& w : cases) {
      const std::string bytes = w.SerializeAsString();  // the items point into it
      proto::rank_data got;
      std::string error;
      REQUIRE(proto::decode(bytes, got, &error));
      CAPTURE(w.proc().nspace());
      CAPTURE(w.proc().rank());
      CHECK(got.proc == proto::from_wire(w.proc()));
      REQUIRE(got.items.size() == static_cast<std::size_t>(w.data_size()));
      for (int i = 0; i < w.data_size(); ++i) {
        CAPTURE(i);
        CHECK(got.items[static_cast<std::size_t>(i)].first == w.data(i).scope());
        CHECK(got.items[static_cast<std::size_t>(i)].second == w.data(i).info().SerializeAsString());
        info ours, expected;
        REQUIRE(proto::from_wire(w.data(i).info(), expected));
        REQUIRE(proto::decode_info(got.items[static_cast<std::size_t>(i)].second, ours, &error));
        CHECK(same(ours, expected));
      }
    }
  }

  TEST_CASE("[read] ModexData: for_each_rank visits every RankData in order, across concatenations") {
    wire::ModexData a, b;
    *a.add_ranks() = rank_data_wire(proc_id{"job", 0}, every_type_infos());
    *a.add_ranks() = rank_data_wire(proc_id{"job", 1}, {});
    a.add_ranks();
    *b.add_ranks() = rank_data_wire(proc_id{"job", 2}, small_infos());
    *b.add_ranks() = rank_data_wire(proc_id{"other", rank_wildcard}, small_infos());
    std::string one_blob;  // the host's way: RankData blobs appended one by one
    proto::append_length_delimited(one_blob, 1, rank_data_wire(proc_id{"job", 9}, small_infos()).SerializeAsString());
    for (const std::string& modex : {std::string{}, a.SerializeAsString(), a.SerializeAsString() + b.SerializeAsString(),
                                     one_blob + b.SerializeAsString() + a.SerializeAsString()}) {
      std::vector<rank_reading> ours, expected;
      std::string error;
      REQUIRE(ref_modex(modex, expected, &error));
      REQUIRE(ours_modex(modex, ours, &error));
      REQUIRE(ours.size() == expected.size());
      for (std::size_t i = 0; i < ours.size(); ++i) {
        CAPTURE(i);
        CHECK(ours[i].proc == expected[i].proc);
        CHECK(same(ours[i], expected[i]));
      }
    }
    CHECK(b.ranks_size() == 2);
    // `each` refusing stops the walk.
    int calls = 0;
    CHECK_FALSE(proto::for_each_rank(a.SerializeAsString() + b.SerializeAsString(), [&](const proto::rank_data&) {
      ++calls;
      return calls < 2;
    }));
    CHECK(calls == 2);
    // A truncated ModexData is refused with an error.
    const std::string cut = a.SerializeAsString().substr(0, 10);
    wire::ModexData m;
    CHECK_FALSE(m.ParseFromString(cut));
    std::string error;
    CHECK_FALSE(proto::for_each_rank(cut, [](const proto::rank_data&) { return true; }, &error));
    CHECK_FALSE(error.empty());
  }

  TEST_CASE("[read] InfoReply") {
    for (auto status : statuses)
      for (const auto& infos : info_lists())
        for (const std::string& data : {std::string{}, std::string{"cred\0ential", 11}}) {
          wire::InfoReply w;
          w.set_status(status);
          proto::to_wire(infos, w.mutable_info());
          w.set_data(data);
          proto::info_reply got;
          info_list expected;
          std::string error;
          REQUIRE(proto::from_wire(w.info(), expected));
          REQUIRE(proto::decode(w.SerializeAsString(), got, &error));
          CHECK(got.status == status);
          CHECK(same(got.info, expected));
          CHECK(got.data == data);
        }
  }

  TEST_CASE("[read] IofData") {
    for (const auto& infos : info_lists())
      for (std::uint64_t ref : {std::uint64_t{0}, std::uint64_t{7}, ~std::uint64_t{0}})
        for (const std::string& data : {std::string{}, std::string{"out\0put", 7}, std::string(70000, 'x')}) {
          wire::IofData w;
          w.set_ref(ref);
          proto::to_wire(proc_id{"job", 3}, w.mutable_source());
          w.set_channel(PMIX_FWD_STDERR_CHANNEL);
          w.set_data(data);
          proto::to_wire(infos, w.mutable_info());
          proto::iof_data got;
          info_list expected;
          REQUIRE(proto::from_wire(w.info(), expected));
          REQUIRE(proto::decode(w.SerializeAsString(), got));
          CHECK(got.ref == ref);
          CHECK(got.source == proc_id{"job", 3});
          CHECK(got.channel == PMIX_FWD_STDERR_CHANNEL);
          CHECK(got.data == data);
          CHECK(same(got.info, expected));
        }
  }

  TEST_CASE("[write] HostRequest") {
    const proto::host_call calls[] = {proto::host_call::allocate, proto::host_call::monitor,
                                      proto::host_call::validate_credential, proto::host_call::iof_push,
                                      proto::host_call::iof_deregister};
    const std::optional<std::string> datas[] = {std::nullopt, std::string{}, std::string{"x\0y", 3}};
    for (auto call : calls)
      for (std::int32_t code : {0, 1, -25, 0x7fffffff})
        for (const auto& procs : proc_lists())
          for (const auto& infos : info_lists())
            for (const auto& data : datas) {
              proto::host_request r;
              r.call = call;
              r.code = code;
              r.procs = procs;
              r.info = infos;
              r.directives = small_infos();
              r.data = data;
              r.ref = static_cast<std::uint64_t>(code) * 3u;
              wire::HostRequest w;
              w.set_ref(r.ref);
              w.set_call(static_cast<wire::HostCall>(call));
              w.set_code(code);
              add_procs(procs, w.mutable_procs());
              proto::to_wire(infos, w.mutable_info());
              proto::to_wire(r.directives, w.mutable_directives());
              if (data) {
                w.set_data(*data);
                w.set_has_data(true);
              }
              CHECK_SAME_BYTES(proto::encode(r), w);
            }
  }

  TEST_CASE("[write] GroupRequest") {
    const proto::group_op ops[] = {proto::group_op::construct, proto::group_op::destruct, proto::group_op::invite,
                                   proto::group_op::join, proto::group_op::leave};
    const std::optional<proc_id> leaders[] = {std::nullopt, proc_id{"job", 0}, proc_id{"", pmix::rank_wildcard}};
    for (auto op : ops)
      for (const std::string& name : {std::string{"g"}, std::string(PMIX_MAX_NSLEN, 'n')})
        for (const auto& procs : proc_lists())
          for (const auto& infos : info_lists())
            for (const auto& leader : leaders)
              for (bool accept : {false, true}) {
                proto::group_request r;
                r.op = op;
                r.name = name;
                r.procs = procs;
                r.directives = infos;
                r.leader = leader;
                r.accept = accept;
                wire::GroupRequest w;
                w.set_op(static_cast<wire::GroupOp>(op));
                w.set_name(name);
                add_procs(procs, w.mutable_procs());
                proto::to_wire(infos, w.mutable_directives());
                if (leader) proto::to_wire(*leader, w.mutable_leader());
                w.set_accept(accept);
                CHECK_SAME_BYTES(proto::encode(r), w);
              }
  }

  TEST_CASE("[read] Event") {
    const std::uint32_t ranges[] = {0u, PMIX_RANGE_NAMESPACE, 255u, 0x100u, 0x105u, 0xffffffffu};
    for (auto status : statuses)
      for (int source = -1; source < 5; ++source)  // -1: no source field
        for (auto range : ranges)
          for (const auto& infos : info_lists()) {
            wire::Event w;
            w.set_status(status);
            if (source >= 0) proto::to_wire(single_procs[source], w.mutable_source());
            w.set_range(range);
            proto::to_wire(infos, w.mutable_info());
            pmix::event got;
            info_list expected;
            std::string error;
            REQUIRE(proto::from_wire(w.info(), expected));
            REQUIRE(proto::decode(w.SerializeAsString(), got, &error));
            CAPTURE(status);
            CAPTURE(source);
            CAPTURE(range);
            CHECK(got.status == status);
            CHECK(got.source == proto::from_wire(w.source()));
            CHECK(got.range == static_cast<pmix_data_range_t>(w.range()));
            CHECK(same(got.info, expected));
          }
  }

  TEST_CASE("[read] decode_value and decode_info read every sample as the codec does") {
    int checked = 0;
    for (const auto& v : every_sample()) {
      wire::Value w;
      proto::to_wire(v, &w);
      const std::string bytes = w.SerializeAsString();
      CAPTURE(v.type);
      CAPTURE(hex(bytes.substr(0, 40)));
      value expected, got;
      REQUIRE(proto::from_wire(w, expected));
      std::string error;
      REQUIRE_MESSAGE(proto::decode_value(bytes, got, &error), error);
      CHECK(same(got, expected));
      ++checked;
    }
    for (const auto& i : every_type_infos()) {
      wire::Info w;
      proto::to_wire(i, &w);
      info expected, got;
      REQUIRE(proto::from_wire(w, expected));
      REQUIRE(proto::decode_info(w.SerializeAsString(), got));
      CAPTURE(i.val.type);
      CHECK(same(got, expected));
    }
    // An Info without a value reads as an unset value, replacing what was there.
    wire::Info bare;
    bare.set_key("flag.only");
    info got{"stale", value::boolean(true), 9};
    REQUIRE(proto::decode_info(bare.SerializeAsString(), got));
    CHECK(got.key == "flag.only");
    CHECK(got.flags == 0);
    CHECK(same(got.val, value{}));
    CHECK(checked > 150);
  }

  TEST_CASE("[read] parse_envelope gives the id, the kind and the body's bytes") {
    const std::uint64_t ids[] = {0u, 1u, 300u, std::numeric_limits<std::uint64_t>::max()};
    for (auto k : all_bodies)
      for (int size : {0, 1, 2})
        for (auto id : ids) {
          wire::Envelope e;
          e.set_id(id);
          fill_body(e, k, size);
          proto::envelope got;
          CAPTURE(static_cast<int>(k));
          CAPTURE(size);
          CAPTURE(id);
          REQUIRE(proto::parse_envelope(e.SerializeAsString(), got));
          CHECK(got.id == id);
          CHECK(got.kind == k);
          CHECK(static_cast<std::uint32_t>(got.kind) == static_cast<std::uint32_t>(e.body_case()));
          CHECK(got.message == body_of(e, k)->SerializeAsString());
        }
    // No body, no id.
    for (const std::string& payload : {std::string{}, wire::Envelope{}.SerializeAsString()}) {
      proto::envelope got;
      got.id = 5;
      REQUIRE(proto::parse_envelope(payload, got));
      CHECK(got.id == 0);
      CHECK(got.kind == proto::body::none);
      CHECK(got.message.empty());
    }
    // Garbage is refused.
    proto::envelope got;
    CHECK_FALSE(proto::parse_envelope(std::string{"\x08", 1}, got));
    CHECK_FALSE(proto::parse_envelope(std::string{"\x7a\x05\x08", 3}, got));
  }

  TEST_CASE("[read] a FenceBoard frame is read as fence_board, announcing its size") {
    for (std::uint64_t size : {0ull, 64ull + 4096, 1ull << 40}) {
      wire::Envelope e;
      e.mutable_fence_board()->set_size(size);
      proto::envelope got;
      got.id = 9;
      CAPTURE(size);
      REQUIRE(proto::parse_envelope(e.SerializeAsString(), got));
      CHECK(got.id == 0);
      CHECK(got.kind == proto::body::fence_board);
      CHECK(proto::shared_size(got.kind, got.message) == size);
    }
  }

  TEST_CASE("[read] a moved envelope's message points into its own bytes") {
    auto check_moves = [](const std::string& payload, std::size_t expected_size) {
      wire::Envelope parsed;
      REQUIRE(parsed.ParseFromString(payload));
      const std::string body = body_of(parsed, proto::body::status_reply)->SerializeAsString();
      REQUIRE(body.size() == expected_size);
      auto within = [](const proto::envelope& e) {
        return e.message.data() >= e.bytes.data() && e.message.data() + e.message.size() <= e.bytes.data() + e.bytes.size();
      };

      proto::envelope a;
      REQUIRE(proto::parse_envelope(payload, a));
      REQUIRE(a.message == body);
      CHECK(within(a));

      proto::envelope b{std::move(a)};  // move construction
      CHECK(b.id == parsed.id());
      CHECK(b.kind == proto::body::status_reply);
      CHECK(b.message == body);
      CHECK(within(b));

      proto::envelope c;  // move assignment over an envelope holding another message
      wire::Envelope other;
      other.set_id(9);
      other.mutable_event()->set_status(-1);
      REQUIRE(proto::parse_envelope(other.SerializeAsString(), c));
      c = std::move(b);
      CHECK(c.id == parsed.id());
      CHECK(c.kind == proto::body::status_reply);
      CHECK(c.message == body);
      CHECK(within(c));

      // And again, from a vector that reallocates.
      std::vector<proto::envelope> many;
      for (int i = 0; i < 40; ++i) {
        many.emplace_back();
        REQUIRE(proto::parse_envelope(payload, many.back()));
      }
      for (const auto& e : many) {
        CHECK(e.message == body);
        CHECK(within(e));
      }
    };
    wire::Envelope small;  // a few bytes: kept inside the std::string object (SSO)
    small.set_id(1);
    small.mutable_status_reply()->set_status(-3);
    REQUIRE(small.ByteSizeLong() < 15);
    check_moves(small.SerializeAsString(), 2);

    wire::Envelope large;  // on the heap: the status padded by a field unknown to StatusReply
    large.set_id(0x123456789);
    wire::StatusReply status;
    status.set_status(-3);
    std::string padded_body = status.SerializeAsString();
    proto::append_length_delimited(padded_body, 9, std::string(100, 'p'));
    std::string long_payload = large.SerializeAsString();  // the id alone
    proto::append_length_delimited(long_payload, 19, padded_body);
    REQUIRE(long_payload.size() > 100);
    check_moves(long_payload, padded_body.size());
  }

  // ===========================================================================
  // 3. Refusals match the codec's.
  // ===========================================================================

  TEST_CASE("[refuse] payloads that do not match their type") {
    const auto& payloads = pmix::test::wire_payloads();
    int refused = 0;
    for (std::uint32_t t = 0; t <= 0xffff; ++t) {
      const auto type = static_cast<data_type>(t);
      if (value::kind_of(type) == value::kind::unsupported) continue;
      wire::Value right;
      proto::to_wire(samples(type)[0], &right);
      for (const auto& p : payloads) {
        wire::Value w;
        w.set_type(type);
        p.set(w);
        CAPTURE(t);
        CAPTURE(p.name);
        if (w.data_case() == right.data_case()) {
          CHECK(value_agrees(w.SerializeAsString()));  // the right payload: read
          continue;
        }
        CHECK_FALSE(value_agrees(w.SerializeAsString()));
        ++refused;
      }
      if (type == PMIX_UNDEF) continue;
      // No payload at all is not a value of that type either, except for
      // strings and byte objects, where it is NULL (read alike).
      wire::Value empty;
      empty.set_type(type);
      CAPTURE(t);
      CHECK(value_agrees(empty.SerializeAsString()) == (value::kind_of(type) == value::kind::bytes));
    }
    CHECK(refused > 400);
  }

  TEST_CASE("[refuse] data types outside 16 bits") {
    wire::Value w;
    w.set_type(0x10000 + PMIX_BOOL);
    w.set_flag(true);
    CHECK_FALSE(value_agrees(w.SerializeAsString()));
    w.set_type(0xffffffffu);
    w.set_bytes("x");
    CHECK_FALSE(value_agrees(w.SerializeAsString()));
    wire::Value bare;
    bare.set_type(0x10000);  // PMIX_UNDEF, were it cut to 16 bits
    CHECK_FALSE(value_agrees(bare.SerializeAsString()));

    wire::Value a;
    a.set_type(PMIX_DATA_ARRAY);
    a.mutable_array()->set_type(0x10000 + PMIX_UINT8);
    CHECK_FALSE(value_agrees(a.SerializeAsString()));
    auto* e = a.mutable_array()->add_elements();
    e->set_type(PMIX_UINT8);
    e->set_unsigned_(1);
    CHECK_FALSE(value_agrees(a.SerializeAsString()));
    // The same element inside an array of 16-bit type is fine.
    a.mutable_array()->set_type(PMIX_UINT8);
    CHECK(value_agrees(a.SerializeAsString()));
  }

  TEST_CASE("[refuse] array elements of the wrong type") {
    auto bytes_of = [](const value& v) {
      wire::Value w;
      proto::to_wire(v, &w);
      return w.SerializeAsString();
    };
    CHECK_FALSE(value_agrees(bytes_of(value::array(
        array_value{PMIX_UINT32, {value::unsigned_(PMIX_UINT32, 1), value::string("intruder")}}))));
    CHECK_FALSE(value_agrees(bytes_of(value::array(array_value{PMIX_UINT32, {value::unsigned_(PMIX_UINT64, 1)}}))));
    CHECK_FALSE(value_agrees(bytes_of(value::array(array_value{PMIX_INFO, {value::string("not an info")}}))));
    // An array of PMIX_VALUE takes any element type; an empty array any type.
    CHECK(value_agrees(bytes_of(value::array(
        array_value{PMIX_VALUE, {value::unsigned_(PMIX_UINT32, 1), value::string("ok"), value{}}}))));
    CHECK(value_agrees(bytes_of(value::array(array_value{PMIX_PROC, {}}))));
    // A bad element deep inside is found too.
    wire::Value deep;
    proto::to_wire(value::array(array_value{PMIX_DATA_ARRAY, {value::array(array_value{PMIX_BOOL, {value::boolean(true)}})}}),
                   &deep);
    CHECK(value_agrees(deep.SerializeAsString()));
    deep.mutable_array()->mutable_elements(0)->mutable_array()->mutable_elements(0)->set_integer(3);
    CHECK_FALSE(value_agrees(deep.SerializeAsString()));
    deep.mutable_array()->mutable_elements(0)->mutable_array()->mutable_elements(0)->set_type(PMIX_INT);
    CHECK_FALSE(value_agrees(deep.SerializeAsString()));  // now an int in a bool array
  }

  TEST_CASE("[refuse] nesting deeper than 32, and the limit itself") {
    int deepest_read = -1;
    for (int depth = 0; depth <= 40; ++depth) {
      CAPTURE(depth);
      if (value_agrees(nested_arrays(depth).SerializeAsString())) deepest_read = depth;
      value_agrees(nested_infos(depth).SerializeAsString());
    }
    CHECK(deepest_read == 32);  // the codec's limit, the same for both
    value out;
    std::string error;
    CHECK_FALSE(proto::decode_value(nested_arrays(40).SerializeAsString(), out, &error));
    CHECK(error.find("nested too deeply") != std::string::npos);
    error.clear();
    CHECK_FALSE(proto::decode_value(nested_infos(40).SerializeAsString(), out, &error));
    CHECK(error.find("nested too deeply") != std::string::npos);

    // Inside the info lists of the replies.
    wire::InfoReply reply;
    reply.add_info()->set_key("shallow");
    auto* i = reply.add_info();
    i->set_key("deep");
    *i->mutable_value() = nested_arrays(40);
    info_list parsed;
    CHECK_FALSE(proto::from_wire(reply.info(), parsed));
    proto::info_reply got;
    error.clear();
    CHECK_FALSE(proto::decode(reply.SerializeAsString(), got, &error));
    CHECK_FALSE(error.empty());

    wire::Event ev;
    *ev.add_info() = *i;
    pmix::event got_event;
    error.clear();
    CHECK_FALSE(proto::decode(ev.SerializeAsString(), got_event, &error));
    CHECK_FALSE(error.empty());
  }

  TEST_CASE("[refuse] data types that cannot travel") {
    int checked = 0;
    for (std::uint32_t t = 0; t <= 0xffff; ++t) {
      const auto type = static_cast<data_type>(t);
      if (value::kind_of(type) != value::kind::unsupported) continue;
      for (int payload = 0; payload < 3; ++payload) {
        wire::Value w;
        w.set_type(type);
        if (payload == 1) w.set_bytes("opaque");
        if (payload == 2) w.set_unsigned_(5);
        CAPTURE(t);
        CAPTURE(payload);
        CHECK_FALSE(value_agrees(w.SerializeAsString()));
        ++checked;
      }
    }
    CHECK(checked > 3 * 60000);
    value out;
    std::string error;
    wire::Value topo;
    topo.set_type(PMIX_TOPO);
    CHECK_FALSE(proto::decode_value(topo.SerializeAsString(), out, &error));
    CHECK(error.find("cannot travel") != std::string::npos);
  }

  // ===========================================================================
  // 4. Malformed input.
  // ===========================================================================

  TEST_CASE("[malformed] every prefix is read iff protobuf reads it") {
    silent_refusals = 0;
    for (const auto& s : subjects()) {
      int read = 0;
      for (std::size_t n = 0; n <= s.bytes.size(); ++n) {
        const std::string_view prefix{s.bytes.data(), n};
        reading ours, ref;
        const outcome o = s.ours(prefix, ours);
        const outcome p = s.ref(prefix, ref);
        CAPTURE(s.name);
        CAPTURE(n);
        REQUIRE(o != outcome::not_for_client);
        CHECK_MESSAGE(o == p, "ours: ", name(o), ", protobuf: ", name(p), ", bytes ", hex(prefix.substr(0, 80)));
        if (o == outcome::read && p == outcome::read) {
          CHECK(same(ours, ref));
          ++read;
        }
      }
      CAPTURE(s.name);
      CHECK(read >= 2);  // the empty prefix and the whole message at least
      CHECK(read < static_cast<int>(s.bytes.size()) / 2);
    }
    CHECK(silent_refusals == 0);
  }

  TEST_CASE("[malformed] seeded mutations: never a crash, and what we read protobuf reads the same") {
    const auto sources = subjects();
    std::mt19937 rng(12345);
    auto pick = [&rng](std::size_t n) { return static_cast<std::size_t>(rng() % n); };
    int agreed = 0, both_refused = 0, not_for_client = 0, explained_by_merge = 0, unexplained = 0;
    int stricter = 0, stricter_groups = 0, stricter_merge = 0, unexplained_oneof = 0;
    std::vector<std::string> stricter_other;
    silent_refusals = 0;
    constexpr int trials = 20000;
    for (int n = 0; n < trials; ++n) {
      const subject& s = sources[static_cast<std::size_t>(n) % sources.size()];
      std::string bytes = s.bytes;
      const int edits = 1 + static_cast<int>(pick(3));
      for (int k = 0; k < edits; ++k) {
        const std::size_t size = bytes.size();
        switch (pick(8)) {
          case 0:  // overwrite one byte
          case 1:
            if (size > 0) bytes[pick(size)] = static_cast<char>(rng());
            break;
          case 2:  // overwrite a run of bytes
            if (size > 0) {
              const std::size_t at = pick(size);
              for (std::size_t i = at; i < size && i < at + 1 + pick(4); ++i) bytes[i] = static_cast<char>(rng());
            }
            break;
          case 3:  // flip a bit
            if (size > 0) bytes[pick(size)] ^= static_cast<char>(1u << pick(8));
            break;
          case 4:  // insert a byte
            bytes.insert(bytes.begin() + static_cast<std::ptrdiff_t>(pick(size + 1)), static_cast<char>(rng()));
            break;
          case 5:  // delete a few bytes
            if (size > 0) bytes.erase(pick(size), 1 + pick(3));
            break;
          case 6:  // truncate
            if (size > 0) bytes.resize(pick(size));
            break;
          case 7:  // copy a slice elsewhere (repeats fields)
            if (size > 0) {
              const std::size_t from = pick(size);
              const std::string slice = bytes.substr(from, 1 + pick(12));
              bytes.insert(pick(size + 1), slice);
            }
            break;
        }
      }
      reading ours, ref;
      const outcome o = s.ours(bytes, ours);
      const outcome p = s.ref(bytes, ref);
      if (o == outcome::not_for_client) {
        ++not_for_client;
        continue;
      }
      if (o == outcome::refused) {
        if (p == outcome::refused) {
          ++both_refused;
        } else {
          ++stricter;
          const auto why = scan(bytes, s.type);
          if (why.group) ++stricter_groups;
          else if (why.merge) ++stricter_merge;
          else if (stricter_other.size() < 5) stricter_other.push_back(std::string{s.name} + ": " + hex(bytes));
        }
        continue;
      }
      if (p == outcome::read && same(ours, ref)) {
        ++agreed;
        continue;
      }
      const auto why = scan(bytes, s.type);
      if (why.merge) {
        ++explained_by_merge;
        continue;
      }
      ++unexplained;
      if (why.oneof_switch) ++unexplained_oneof;
      if (unexplained <= 10) {
        const std::string what = std::string{s.name} + ": ours reads, protobuf " +
                                 (p == outcome::read ? "reads something else" : name(p)) + " (" + describe(why) +
                                 "); bytes: " + hex(bytes);
        FAIL_CHECK(what);
      }
    }
    MESSAGE(trials << " mutations: " << agreed << " read alike, " << both_refused << " refused by both, "
                   << not_for_client << " turned into requests, " << explained_by_merge
                   << " differ by protobuf's merging, " << stricter << " refused by us only (" << stricter_groups
                   << " with groups, " << stricter_merge << " with merges), " << unexplained << " unexplained (" << unexplained_oneof
                   << " of them with a oneof message member replaced by another member)");
    for (const auto& s : stricter_other) MESSAGE("refused by us only, neither group nor merge: " << s);
    CHECK(unexplained == 0);
    CHECK(silent_refusals == 0);
    CHECK(agreed > 500);
    CHECK(both_refused > 1000);
  }

  TEST_CASE("[malformed] hand-picked inputs protobuf refuses are refused") {
    // Whatever the hand codec reads, protobuf must read: inputs no encoder
    // writes, but that a broken or hostile peer may send.
    struct input {
      const char* what;
      const char* bytes;
      read_fn ours;
      read_fn ref;
    };
    const input inputs[] = {
        // A oneof payload replaced by another member is still parsed by
        // protobuf: a malformed Proc (a truncated tag) then an empty bytes
        // payload of a PMIX_STRING.
        {"Value: malformed proc payload, then bytes", "08 03 3a 01 ff 32 00", ours_value, ref_value},
        {"Value: truncated array payload, then an integer", "08 06 4a 02 12 05 18 09", ours_value, ref_value},
        // The same for the Envelope's body: a malformed FenceReply, then a StatusReply.
        {"Envelope: malformed fence reply, then a status reply", "7a 01 ff 9a 01 00", ours_envelope, ref_envelope},
        // protobuf reads a length in at most 5 bytes, a tag in at most 5.
        {"Value: a proc's nspace length in 6 bytes", "08 16 3a 08 0a 81 80 80 80 80 00 78", ours_value, ref_value},
        {"Value: the flag's tag in 6 bytes", "08 01 90 80 80 80 80 00 01", ours_value, ref_value},
        // And what the hand codec refuses already.
        {"Value: a varint in 11 bytes", "08 04 20 ff ff ff ff ff ff ff ff ff ff 01", ours_value, ref_value},
        {"Value: field number 0", "08 01 10 01 02 00", ours_value, ref_value},
        {"Value: an end-group tag", "08 01 10 01 0c", ours_value, ref_value},
        {"Value: wire type 6", "08 01 10 01 0e", ours_value, ref_value},
        {"Value: a fixed64 payload cut short", "08 12 29 00 00 00", ours_value, ref_value},
        {"JobInfo: a rank's info cut short", "1a 04 12 02 0a 05", ours_job, ref_job},
        {"Envelope: a body longer than the payload", "08 01 7a 05 08 01", ours_envelope, ref_envelope},
        // Found by tests/fuzz server_envelope: a HostRequest's ResourceUnit
        // (field 9) was not checked as the message it is.
        {"Envelope: a host request's resource unit cut short", "92 02 04 4a 02 08 80", ours_envelope, ref_envelope},
    };
    for (const auto& in : inputs) {
      const std::string bytes = unhex(in.bytes);
      reading ours, ref;
      CAPTURE(std::string{in.what});
      CAPTURE(std::string{in.bytes});
      REQUIRE(in.ref(bytes, ref) == outcome::refused);  // the input is what it says
      const outcome o = in.ours(bytes, ours);
      CHECK_MESSAGE(o == outcome::refused, "ours: ", std::string{name(o)});
    }
  }

  // Found by tests/fuzz client_reply: a RankInfo whose second item has a
  // type its payload does not match kept that item half read (type
  // PMIX_ENVAR, no envar), and a get of it threw bad_variant_access.
  TEST_CASE("a RankInfo item that does not read is left out; the items before it are kept whole") {
    pmix::wire::RankInfo ri;
    ri.set_rank(3);
    auto* good = ri.add_info();
    good->set_key("good");
    good->mutable_value()->set_type(PMIX_STRING);
    good->mutable_value()->set_bytes("text");
    auto* bad = ri.add_info();
    bad->set_key("bad");
    bad->mutable_value()->set_type(PMIX_ENVAR);
    bad->mutable_value()->set_bytes("not an envar");
    pmix::info_list items;
    std::string error;
    CHECK_FALSE(pmix::protocol::decode_rank_info(ri.SerializeAsString(), items, &error));
    CHECK(error.find("payload does not match") != std::string::npos);
    REQUIRE(items.size() == 1);
    CHECK(items[0].key == "good");
    CHECK(*items[0].val.as_string() == "text");
  }

  // ---- The server's reading of commits and fences (protocol::read_request) ----
  //
  // The server reads the two requests of every fence with the hand codec
  // and leaves everything else to protobuf (actors/peer_actor.cpp,
  // read_fence_request). What it reads must be what protobuf and the codec
  // read: each committed item's key and the bytes the server keeps, and the
  // fence's participants, directives and flags.

  // An Envelope's bytes (a frame without its length).
  std::string envelope_bytes(std::uint64_t id, proto::body kind, const std::string& message) {
    return proto::to_frame(id, kind, message).substr(proto::frame_header_size);
  }

  std::vector<std::string> client_requests() {
    static const std::uint32_t scopes[] = {0u, PMIX_LOCAL, PMIX_REMOTE, PMIX_GLOBAL, 0xffffffffu};
    std::vector<std::vector<proto::scoped_info>> commits = {{}, {{0, info{"", value{}, 0}}}};
    std::vector<proto::scoped_info> every;
    std::size_t n = 0;
    for (auto& i : big_infos()) every.push_back({scopes[n++ % 5], std::move(i)});
    commits.push_back(std::move(every));
    commits.push_back({{PMIX_GLOBAL, info{"bench.key", value::bytes(PMIX_BYTE_OBJECT, std::string(64, 'x')), 0}}});
    std::vector<std::string> out;
    std::uint64_t id = 0;
    for (const auto& data : commits) out.push_back(envelope_bytes(id++, proto::body::commit, proto::commit_request(data)));
    for (const auto& procs : proc_lists())
      for (const auto& infos : info_lists())
        for (bool collect : {false, true})
          for (int board : {0, 1, 2, 3})
            out.push_back(envelope_bytes(id++ << 20, proto::body::fence,
                                         proto::fence_request(procs, infos, collect, (board & 1) != 0, (board & 2) != 0)));
    return out;
  }

  TEST_CASE("[server] every commit and fence our client writes is read directly, as protobuf and the codec read it") {
    int commits = 0, fences = 0;
    for (const auto& payload : client_requests()) {
      pmix::test::server_reading ours, ref;
      CAPTURE(hex(payload.substr(0, 64)));
      REQUIRE(pmix::test::by_protobuf(payload, ref));
      REQUIRE(pmix::test::directly(payload, ours));
      CHECK(pmix::test::same_reading(ours, ref));
      (ours.kind == proto::body::commit ? commits : fences) += 1;
    }
    CHECK(commits == 4);
    CHECK(fences == 3 * 3 * 2 * 4);
  }

  TEST_CASE("[server] what protobuf would read differently, or not at all, is left to it") {
    // ScopedInfo{scope 4, Info{key "k", Value{type PMIX_STRING}, Value{bytes "merged"}}}:
    // protobuf merges the two occurrences of Info.value into one string.
    const std::string merged_item = "08 04 12 11 0a 01 6b 12 02 08 03 12 08 32 06 6d 65 72 67 65 64";
    struct input {
      const char* what;
      std::string bytes;
      bool served_by_protobuf;  // the server's protobuf path reads it as a commit or fence
    };
    const input inputs[] = {
        {"a commit whose item's value comes in two parts", unhex("08 07 6a 17 0a 15 " + std::string{merged_item}), true},
        {"a commit item's scope given twice", unhex("6a 08 0a 06 08 01 08 02 12 00"), true},
        {"an envelope's id given twice", unhex("08 01 08 02 6a 00"), true},
        {"a commit and then a fence in one envelope", unhex("6a 00 72 02 18 01"), true},
        {"an unknown field in the envelope", unhex("08 01 6a 00 a0 06 05"), true},
        {"a group in a commit item", unhex("6a 06 0a 04 08 01 2b 2c"), true},
        {"a get request", unhex("08 01 82 01 00"), false},
        {"an empty envelope", "", false},
        {"a value whose payload does not match its type", unhex("6a 0a 0a 08 12 06 12 04 08 03 18 0a"), false},
        {"a fence's info with a value of another type", unhex("72 08 12 06 12 04 08 01 18 04"), false},
        {"a fence cut short", unhex("72 04 0a 05 0a 01"), false},
    };
    for (const auto& in : inputs) {
      CAPTURE(std::string{in.what});
      pmix::test::server_reading ours, ref;
      CHECK_FALSE(pmix::test::directly(in.bytes, ours));
      CHECK(pmix::test::by_protobuf(in.bytes, ref) == in.served_by_protobuf);
    }
    pmix::test::server_reading ref;
    REQUIRE(pmix::test::by_protobuf(unhex("08 07 6a 17 0a 15 " + std::string{merged_item}), ref));
    REQUIRE(ref.items.size() == 1);
    info kept;
    REQUIRE(proto::decode_info(ref.items[0].second.substr(4), kept));  // after scope 4 and the Info's header
    CHECK(kept.key == "k");
    CHECK(*kept.val.as_string() == "merged");
  }

  TEST_CASE("[server] seeded mutations of commits and fences: what is read directly, protobuf reads the same") {
    const auto sources = client_requests();
    std::mt19937 rng(4040);
    auto pick = [&rng](std::size_t n) { return static_cast<std::size_t>(rng() % n); };
    int read_directly = 0, left_and_read = 0, refused = 0;
    constexpr int trials = 40000;
    for (int n = 0; n < trials; ++n) {
      std::string bytes = sources[pick(sources.size())];
      if (bytes.size() > 4096) bytes.resize(4096 + pick(64));  // the big commit: its start
      for (int k = 1 + static_cast<int>(pick(3)); k > 0; --k) {
        const std::size_t size = bytes.size();
        switch (pick(6)) {
          case 0:
            if (size > 0) bytes[pick(size)] = static_cast<char>(rng());
            break;
          case 1:
            if (size > 0) bytes[pick(size)] ^= static_cast<char>(1u << pick(8));
            break;
          case 2:
            bytes.insert(bytes.begin() + static_cast<std::ptrdiff_t>(pick(size + 1)), static_cast<char>(rng()));
            break;
          case 3:
            if (size > 0) bytes.erase(pick(size), 1 + pick(3));
            break;
          case 4:
            if (size > 0) bytes.resize(pick(size));
            break;
          case 5:  // repeats a slice: fields given twice
            if (size > 0) bytes.insert(pick(size + 1), bytes.substr(pick(size), 1 + pick(12)));
            break;
        }
      }
      pmix::test::server_reading ours, ref;
      const bool by_hand = pmix::test::directly(bytes, ours);
      const bool by_pb = pmix::test::by_protobuf(bytes, ref);
      if (by_hand) {
        ++read_directly;
        CAPTURE(hex(bytes));
        REQUIRE(by_pb);
        REQUIRE(pmix::test::same_reading(ours, ref));
      } else if (by_pb) {
        ++left_and_read;
      } else {
        ++refused;
      }
    }
    MESSAGE(trials << " mutations: " << read_directly << " read directly, " << left_and_read
                   << " left to protobuf and read by it, " << refused << " refused");
    CHECK(read_directly > 2000);
    CHECK(left_and_read > 200);
    CHECK(refused > 30000);
  }
}
