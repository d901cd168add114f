// Fuzz target: what the server does with one received frame's payload from a
// peer it cannot trust (actors/peer_actor.cpp, on_frame and its handlers):
// parse the wire::Envelope (protocol::parse, on an arena as on_frame does),
// convert each request's procs, info, apps, queries and events with
// protocol::from_wire, then build the C arrays the host's up-calls receive
// (api/convert.hpp: info_array, proc_array, app_array, query_array,
// string_array; what api/host_module.cpp passes) and walk them as a host
// would (c_walk.hpp). A commit is stored and served as the server does
// (peer_state::rank_blob: the committed ScopedInfo, re-serialized as a
// RankData) and read back as a peer client reads it.
//
// Invariants, per Info the server accepted:
//  - protocol/direct.hpp writes byte for byte what protobuf writes for it;
//  - those bytes parse back (protobuf + from_wire) to the same info;
//  - the client's hand codec (protocol/messages.hpp) reads the same info
//    from them, and refuses exactly the canonical messages from_wire refuses.
// And per frame: a commit or fence the server reads with the hand codec
// (protocol::read_request, before protobuf) is read exactly as protobuf and
// the codec read it.
#include <pmix.h>

#include <cstdint>
#include <map>
#include <string>

#include "api/convert.hpp"
#include "protocol/codec.hpp"
#include "protocol/direct.hpp"
#include "protocol/messages.hpp"
#include "tests/fuzz/c_walk.hpp"
#include "tests/fuzz/fuzz_support.hpp"
#include "tests/protocol/server_reading.hpp"

using namespace pmix;

namespace {

// The codec's reading of one Info against the hand codec's, on the bytes
// protobuf writes for it. The one difference allowed (messages_test): an
// unknown group field, which protobuf keeps and writes again, the hand codec
// refuses; on the info written again without it the two agree.
void check_info_codecs(const wire::Info& in) {
  info from_codec;
  std::string codec_error;
  const bool codec_ok = protocol::from_wire(in, from_codec, &codec_error);
  const std::string canonical = in.SerializeAsString();
  info from_hand;
  std::string hand_error;
  const bool hand_ok = protocol::decode_info(canonical, from_hand, &hand_error);
  if (!codec_ok) {
    FUZZ_CHECK(!hand_ok);
    FUZZ_CHECK(!codec_error.empty() && !hand_error.empty());
    return;
  }
  if (hand_ok) FUZZ_CHECK(fuzz::same(from_codec, from_hand));
  else FUZZ_CHECK(hand_error == "malformed message");  // a group field

  // The direct writer against protobuf, and the round trip.
  std::string direct;
  protocol::append_info_body(direct, from_codec);
  wire::Info rewritten;
  protocol::to_wire(from_codec, &rewritten);
  const std::string generated = rewritten.SerializeAsString();
  FUZZ_CHECK(direct == generated);
  FUZZ_CHECK(protocol::info_size(from_codec) == direct.size());
  wire::Info reparsed;
  FUZZ_CHECK(reparsed.ParseFromString(direct));
  info again;
  FUZZ_CHECK(protocol::from_wire(reparsed, again));
  FUZZ_CHECK(fuzz::same(from_codec, again));
  info by_hand;
  FUZZ_CHECK(protocol::decode_info(direct, by_hand));
  FUZZ_CHECK(fuzz::same(from_codec, by_hand));
}

// An info list as a handler converts it; false when the handler would close
// the connection (protocol_error).
bool convert_infos(const google::protobuf::RepeatedPtrField<wire::Info>& in, info_list& out) {
  for (const auto& i : in) check_info_codecs(i);
  std::string error;
  const bool ok = protocol::from_wire(in, out, &error);
  if (!ok) {
    FUZZ_CHECK(!error.empty());
    return false;
  }
  FUZZ_CHECK(out.size() == static_cast<std::size_t>(in.size()));
  fuzz::check_as_host_sees(out);
  return true;
}

std::vector<proc_id> convert_procs(const google::protobuf::RepeatedPtrField<wire::Proc>& in) {
  std::vector<proc_id> out;
  for (const auto& p : in) out.push_back(protocol::from_wire(p));
  convert::proc_array c{out};
  for (std::size_t k = 0; k < c.size(); ++k) FUZZ_CHECK(c.data()[k].nspace[PMIX_MAX_NSLEN] == '\0');
  return out;
}

void keys_to_host(const google::protobuf::RepeatedPtrField<std::string>& in) {
  const std::vector<std::string> keys(in.begin(), in.end());
  convert::string_array c{keys};
  std::size_t n = 0;
  for (char** k = c.data(); *k != nullptr; ++k) ++n;
  FUZZ_CHECK(n == keys.size());
}

// on_commit (protocol::canonical_item) + peer_state::rank_blob, then a peer
// client's reading of it (client/session.cpp fetch: decode(rank_data),
// decode_checked_info): whatever the server accepts, every peer reads.
void commit_and_serve(const wire::CommitRequest& req) {
  std::map<std::string, wire::ScopedInfo> committed;
  for (const auto& sent : req.data()) {
    std::string bytes, key, error;
    const bool ok = protocol::canonical_item(sent, bytes, key, &error);
    info codec_item;
    FUZZ_CHECK(ok == protocol::from_wire(sent.info(), codec_item));
    if (!ok) return;  // the server closes the connection
    FUZZ_CHECK(key == codec_item.key);
    // What it writes is what protobuf writes for the item it read.
    wire::ScopedInfo item;
    item.set_scope(sent.scope());
    protocol::to_wire(codec_item, item.mutable_info());
    FUZZ_CHECK(bytes == item.SerializeAsString());
    committed[key] = std::move(item);
  }
  wire::RankData data;
  protocol::to_wire(proc_id{"fuzz-job", 3}, data.mutable_proc());
  for (const auto& [key, entry] : committed) *data.add_data() = entry;
  const std::string blob = data.SerializeAsString();

  protocol::rank_data read;
  std::string error;
  FUZZ_CHECK(protocol::decode(blob, read, &error));
  FUZZ_CHECK(read.items.size() == committed.size());
  std::size_t k = 0;
  for (const auto& [key, entry] : committed) {
    info item, codec_item;
    FUZZ_CHECK(protocol::decode_checked_info(read.items[k].second, item, &error));
    FUZZ_CHECK(protocol::from_wire(entry.info(), codec_item));
    FUZZ_CHECK(fuzz::same(item, codec_item));
    FUZZ_CHECK(item.key == key);
    FUZZ_CHECK(read.items[k].first == entry.scope());
    ++k;
  }
  // The same blob, appended to a fence's ModexData as the server does.
  std::string modex;
  protocol::append_length_delimited(modex, 1, blob);
  protocol::append_length_delimited(modex, 1, blob);
  std::size_t ranks = 0;
  FUZZ_CHECK(protocol::for_each_rank(modex, [&](const protocol::rank_data&) { return ++ranks, true; }));
  FUZZ_CHECK(ranks == 2);
}

void handle(const wire::Envelope& e) {
  info_list info, more;
  switch (e.body_case()) {
    case wire::Envelope::kConnect: {  // on_connect
      (void)protocol::from_wire(e.connect().proc());
      convert_infos(e.connect().info(), info);
      return;
    }
    case wire::Envelope::kCommit:  // on_commit
      for (const auto& item : e.commit().data()) check_info_codecs(item.info());
      return commit_and_serve(e.commit());
    case wire::Envelope::kFence:  // on_fence
      convert_procs(e.fence().procs());
      convert_infos(e.fence().info(), info);
      return;
    case wire::Envelope::kGet:  // on_get
      (void)protocol::from_wire(e.get().proc());
      convert_infos(e.get().info(), info);
      return;
    case wire::Envelope::kAbort:  // on_abort
      convert_procs(e.abort().procs());
      return;
    case wire::Envelope::kJobControl:  // on_job_control
      convert_procs(e.job_control().targets());
      convert_infos(e.job_control().directives(), info);
      return;
    case wire::Envelope::kQuery: {  // on_query
      std::vector<query> queries;
      for (const auto& q : e.query().queries()) {
        query item;
        for (const auto& k : q.keys()) item.keys.push_back(k);
        if (!convert_infos(q.qualifiers(), item.qualifiers)) return;
        queries.push_back(std::move(item));
      }
      convert::query_array c{queries};
      for (std::size_t k = 0; k < c.size(); ++k) fuzz::walk_c_infos(c.data()[k].qualifiers, c.data()[k].nqual);
      return;
    }
    case wire::Envelope::kNotify: {  // on_notify
      if (e.notify().has_source()) (void)protocol::from_wire(e.notify().source());
      convert_infos(e.notify().info(), info);
      event ev{e.notify().status(), {}, static_cast<pmix_data_range_t>(e.notify().range()), info};
      (void)reaches(ev, proc_id{"fuzz-job", 0}, proc_id{"fuzz-job", 1});
      (void)for_default_handlers(ev);
      return;
    }
    case wire::Envelope::kPublish:  // on_publish
      convert_infos(e.publish().info(), info);
      return;
    case wire::Envelope::kLookup:  // on_lookup
    case wire::Envelope::kUnpublish: {  // on_unpublish
      const auto& req = e.body_case() == wire::Envelope::kLookup ? e.lookup() : e.unpublish();
      if (convert_infos(req.info(), info)) keys_to_host(req.keys());
      return;
    }
    case wire::Envelope::kSpawn: {  // on_spawn
      if (!convert_infos(e.spawn().job_info(), info)) return;
      std::vector<app> apps(static_cast<std::size_t>(e.spawn().apps_size()));
      for (int k = 0; k < e.spawn().apps_size(); ++k) {
        for (const auto& i : e.spawn().apps(k).info()) check_info_codecs(i);
        std::string error;
        if (!protocol::from_wire(e.spawn().apps(k), apps[static_cast<std::size_t>(k)], &error)) return;
      }
      convert::app_array c{apps};
      for (std::size_t k = 0; k < c.size(); ++k) {
        fuzz::walk_c_infos(c.data()[k].info, c.data()[k].ninfo);
        FUZZ_CHECK(c.data()[k].cmd != nullptr && c.data()[k].argv != nullptr && c.data()[k].env != nullptr);
      }
      return;
    }
    case wire::Envelope::kConnectProcs:  // on_connect_procs
      convert_procs(e.connect_procs().procs());
      convert_infos(e.connect_procs().info(), info);
      return;
    case wire::Envelope::kLog:  // on_log
      if (convert_infos(e.log().data(), info)) convert_infos(e.log().directives(), more);
      return;
    default:  // finalize, replies, no body: nothing is converted
      return;
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view payload{reinterpret_cast<const char*>(data), size};
  // As on_frame: the request is parsed on an arena whose first block is on
  // the stack.
  protocol::stack_arena<2048> arena;
  auto& e = arena.make<wire::Envelope>();
  const bool parsed = protocol::parse(payload, e);
  // The client's reader refuses what protobuf refuses.
  protocol::envelope hand;
  if (protocol::parse_envelope(std::string{payload}, hand)) {
    FUZZ_CHECK(parsed);
    FUZZ_CHECK(hand.id == e.id());
    FUZZ_CHECK(static_cast<int>(hand.kind) == static_cast<int>(e.body_case()));
  }
  // The server reads a commit or fence with the hand codec first
  // (read_fence_request): whatever it reads there, protobuf reads the same.
  test::server_reading direct, by_protobuf;
  if (test::directly(payload, direct)) {
    FUZZ_CHECK(parsed);
    FUZZ_CHECK(test::by_protobuf(payload, by_protobuf));
    FUZZ_CHECK(test::same_reading(direct, by_protobuf));
  }
  if (!parsed) return 0;  // the server closes the connection
  handle(e);
  return 0;
}
