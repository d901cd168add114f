// Fuzz target: what the client library does with what its server sends
// (client/session.cpp and client/store.cpp), over one connection's byte
// stream: frames split by the frame reader the client uses
// (protocol/framing.hpp), each payload read by the hand codec
// (protocol::parse_envelope), then by kind as the session does:
//   connect_reply        decode, then its JobInfo into the store (load_job:
//                        PMIX_LOCAL_PEERS parsed as a proc map)
//   fence_reply          status, then the ModexData into the store
//                        (store::add_modex: every RankData, scopes applied)
//   get_reply            the RankData (add_peer_data) and a JobInfo
//   connect_procs_reply  every JobInfo of another namespace (load_job)
//   info_reply, event, lookup_reply, spawn_reply, status_reply: decoded,
//                        their data converted to C as the API hands it out
// After the stream: every key the replies named is looked up in the store
// and copied out as PMIx_Get does (convert::to_c, then freed), and the
// store's node and peer queries (PMIx_Resolve_peers / _nodes) are run.
//
// Invariants: the decoders never read outside their input (ASan); what the
// hand codec reads from a message, protobuf reads the same (the envelope,
// and every JobInfo / RankData / Value canonically re-encoded: the codec's
// from_wire gives the same values); a value copied out to C is stable
// under C -> C++ -> C.
#include <pmix.h>

#include <algorithm>
#include <cstdint>
#include <set>
#include <string>
#include <tuple>

#include "api/convert.hpp"
#include "client/store.hpp"
#include "common/event.hpp"
#include "protocol/codec.hpp"
#include "protocol/framing.hpp"
#include "protocol/messages.hpp"
#include "tests/fuzz/c_walk.hpp"
#include "tests/fuzz/fuzz_support.hpp"

using namespace pmix;

namespace {

struct client_state {
  client::store store;
  proc_id self{"fuzz-job", 0};
  bool connected = false;
  // (nspace, rank, key) named by the replies, for the lookups at the end.
  std::set<std::tuple<std::string, rank_t, std::string>> keys;
};

// A value as PMIx_Get hands it out (api/client_api.cpp copy_out).
void copy_out(const value& v) {
  pmix_value_t out;
  std::memset(&out, 0, sizeof out);
  if (convert::to_c(v, out) == PMIX_SUCCESS) {
    fuzz::walk_c_value(out);
    value back;
    if (convert::from_c(out, back) == PMIX_SUCCESS) {
      pmix_value_t again;
      std::memset(&again, 0, sizeof again);
      FUZZ_CHECK(convert::to_c(back, again) == PMIX_SUCCESS);
      value twice;
      FUZZ_CHECK(convert::from_c(again, twice) == PMIX_SUCCESS);
      FUZZ_CHECK(fuzz::same(back, twice));
      PMIx_Value_destruct(&again);
    }
  }
  PMIx_Value_destruct(&out);
}

// protobuf's reading of a JobInfo the hand codec read.
void check_job_against_codec(std::string_view bytes, const protocol::job_info& job) {
  wire::JobInfo parsed;
  FUZZ_CHECK(parsed.ParseFromArray(bytes.data(), static_cast<int>(bytes.size())));
  // The rank index counts bytes of the message as it came, which protobuf
  // re-serializes in another order: its offsets would point elsewhere, and
  // the hand reader refuses an index that does not index its message.
  parsed.clear_rank_index();
  // On the canonical bytes the two readers agree exactly.
  const std::string canonical = parsed.SerializeAsString();
  protocol::job_info hand;
  info_list codec_info;
  const bool codec_ok = protocol::from_wire(parsed.info(), codec_info);
  bool codec_ranks_ok = true;
  for (const auto& r : parsed.ranks()) {
    info_list items;
    codec_ranks_ok = codec_ranks_ok && protocol::from_wire(r.info(), items);
  }
  const bool hand_ok = protocol::decode(canonical, hand);
  FUZZ_CHECK(hand_ok == (codec_ok && codec_ranks_ok));
  if (!hand_ok) return;
  FUZZ_CHECK(hand.nspace == parsed.nspace());
  FUZZ_CHECK(fuzz::same(hand.info, codec_info));
  FUZZ_CHECK(hand.ranks.size() == static_cast<std::size_t>(parsed.ranks_size()));
  (void)job;
}

void note_keys(client_state& c, const std::string& nspace, rank_t rank, const info_list& list) {
  for (const auto& i : list)
    if (c.keys.size() < 256) c.keys.emplace(nspace, rank, i.key);
}

// As the client: the ranks' items stay encoded until looked up
// (decode_lazy); checked against reading them all at once (decode).
bool load_job(client_state& c, std::string_view bytes, bool skip_own) {
  protocol::job_info lazy, job;
  std::string error;
  if (!protocol::decode_lazy(bytes, lazy, &error)) {
    FUZZ_CHECK(!error.empty());
    FUZZ_CHECK(!protocol::decode(bytes, job));
    return false;
  }
  const bool eager = protocol::decode(bytes, job);
  if (eager) {
    check_job_against_codec(bytes, job);
    FUZZ_CHECK(lazy.nspace == job.nspace);
    FUZZ_CHECK(fuzz::same(lazy.info, job.info));
    const auto encoded = protocol::encoded_ranks(lazy);
    FUZZ_CHECK(encoded.size() == job.ranks.size());
    for (std::size_t k = 0; k < encoded.size() && k < job.ranks.size(); ++k) {
      info_list items;
      FUZZ_CHECK(protocol::decode_rank_info(encoded[k].second, items));
      FUZZ_CHECK(encoded[k].first == job.ranks[k].first);
      FUZZ_CHECK(fuzz::same(items, job.ranks[k].second));
    }
  }
  if (skip_own && lazy.nspace == c.self.nspace) return true;
  note_keys(c, lazy.nspace, rank_wildcard, lazy.info);
  if (eager)
    for (const auto& [rank, items] : job.ranks) note_keys(c, job.nspace, rank, items);
  c.store.load_job(std::move(lazy));
  return true;
}

// The rank data a get reply or a fence brings, as store::add_rank reads it,
// checked against protobuf.
void note_rank(client_state& c, const protocol::rank_data& r) {
  for (const auto& [scope, item] : r.items) {
    info i;
    if (protocol::decode_checked_info(item, i) && c.keys.size() < 256)
      c.keys.emplace(r.proc.nspace, r.proc.rank, i.key);
  }
}

// False: the connection is dropped (a malformed reply).
bool on_reply(client_state& c, protocol::envelope& e) {
  std::string error;
  switch (e.kind) {
    case protocol::body::connect_reply: {  // session::connect
      if (c.connected) return true;        // a second one is no reply we wait for
      protocol::connect_reply cr;
      if (!protocol::decode(e.message, cr, &error)) return false;
      if (cr.status != PMIX_SUCCESS) return false;
      c.connected = true;
      if (cr.assigned) c.self = *cr.assigned;
      return load_job(c, cr.job, false);
    }
    case protocol::body::fence_reply: {  // session::fence
      protocol::status_reply r;
      if (!protocol::decode(e.message, e.kind, r, &error)) return true;  // PMIX_ERR_UNPACK_FAILURE
      if (r.status != PMIX_SUCCESS) return true;
      c.store.fence_completed();
      c.store.participants_complete({{c.self.nspace, rank_wildcard}});
      if (r.has_data) {
        (void)protocol::for_each_rank(r.data, [&](const protocol::rank_data& d) { return note_rank(c, d), true; });
        if (!c.store.add_modex(r.data, c.self, &error)) FUZZ_CHECK(!error.empty());
        // protobuf reads every ModexData the hand codec reads.
        wire::ModexData parsed;
        if (protocol::for_each_rank(r.data, [](const protocol::rank_data&) { return true; }))
          FUZZ_CHECK(parsed.ParseFromArray(r.data.data(), static_cast<int>(r.data.size())));
      }
      return true;
    }
    case protocol::body::get_reply: {  // session::fetch
      protocol::status_reply r;
      if (!protocol::decode(e.message, e.kind, r, &error)) return true;
      if (r.status != PMIX_SUCCESS && r.status != PMIX_ERR_NOT_FOUND) return true;
      protocol::rank_data data;
      if (r.has_data) {
        if (!protocol::decode(r.data, data, &error)) return true;
        note_rank(c, data);
        if (!c.store.add_peer_data(data, c.self, &error)) return true;
      }
      if (!r.job.empty()) load_job(c, r.job, true);
      return true;
    }
    case protocol::body::connect_procs_reply: {  // session::connect_procs
      protocol::connect_procs_reply r;
      if (!protocol::decode(e.message, r, &error)) return true;
      for (auto job : r.jobs) load_job(c, job, true);
      return true;
    }
    case protocol::body::info_reply: {  // job_control, query: results to C
      protocol::info_reply r;
      if (!protocol::decode(e.message, r, &error)) return true;
      fuzz::check_as_host_sees(r.info);
      return true;
    }
    case protocol::body::event: {  // the event handler chain gets the info in C
      event ev;
      if (!protocol::decode(e.message, ev, &error)) return true;
      (void)custom_range(ev.info);
      (void)reaches(ev, ev.source, c.self);
      (void)for_default_handlers(ev);
      fuzz::check_as_host_sees(ev.info);
      return true;
    }
    case protocol::body::lookup_reply: {  // PMIx_Lookup: pmix_pdata_t out
      protocol::lookup_reply r;
      if (!protocol::decode(e.message, r, &error)) return true;
      for (const auto& d : r.data) {
        pmix_pdata_t out;
        if (convert::to_c(d, out) == PMIX_SUCCESS) fuzz::walk_c_value(out.value);
        PMIx_Value_destruct(&out.value);
      }
      return true;
    }
    case protocol::body::spawn_reply: {
      protocol::spawn_reply r;
      (void)protocol::decode(e.message, r, &error);
      return true;
    }
    case protocol::body::status_reply: {
      protocol::status_reply r;
      (void)protocol::decode(e.message, e.kind, r, &error);
      return true;
    }
    default:
      return true;  // ignored (an unprompted message of another kind)
  }
}

// Every key named, looked up and copied out as PMIx_Get does; the
// resolve calls.
void query_store(client_state& c) {
  for (const auto& [nspace, rank, key] : c.keys) {
    const proc_id p{nspace, rank};
    if (const auto* v = c.store.rank_value(p, key)) copy_out(*v);
    if (const auto* v = c.store.job_value(nspace, key)) copy_out(*v);
    if (const auto* v = c.store.peer_value(p, key)) copy_out(*v);
    (void)c.store.has_complete_data(p);
  }
  // session::resolve_nodes and resolve_peers.
  for (const auto& ns : c.store.nspaces()) {
    const auto nodes = c.store.nodes_of(ns);
    for (const auto& node : nodes) {
      const auto ranks = c.store.ranks_on(ns, node);
      FUZZ_CHECK(std::is_sorted(ranks.begin(), ranks.end()));
    }
    (void)c.store.local_ranks(ns);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  client_state c;
  protocol::frame_reader reader;
  reader.feed(reinterpret_cast<const char*>(data), size);
  std::string payload;
  while (reader.next(payload) == protocol::frame_reader::status::complete) {
    const std::string copy = payload;
    protocol::envelope e;
    if (!protocol::parse_envelope(std::move(payload), e)) break;  // connection closed
    // protobuf reads what the hand codec reads: the same id and body.
    wire::Envelope parsed;
    FUZZ_CHECK(parsed.ParseFromString(copy));
    FUZZ_CHECK(parsed.id() == e.id);
    FUZZ_CHECK(static_cast<int>(parsed.body_case()) == static_cast<int>(e.kind));
    if (!on_reply(c, e)) break;
    payload.clear();
  }
  query_store(c);
  return 0;
}
