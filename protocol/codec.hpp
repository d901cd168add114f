// Conversion between the wire schema (pmix.proto) and the library's C++ values
// (common/value.hpp). Only this file and the peers that (de)serialize
// envelopes include the generated protobuf header.
#pragma once

#include <google/protobuf/arena.h>
#include <pmix_common.h>

#include <cstddef>
#include <string>
#include <string_view>

#include "common/value.hpp"
#include "protocol/pmix.pb.h"

namespace pmix::protocol {

// A protobuf arena whose first block (Size bytes) is part of this object,
// for a message made, used and dropped within one call: its parts cost no
// allocation while they fit and no destructor each. Nothing may keep a
// reference to them past the arena.
template <std::size_t Size>
class stack_arena {
 public:
  stack_arena() : arena_{options()} {}
  stack_arena(const stack_arena&) = delete;
  stack_arena& operator=(const stack_arena&) = delete;
  template <class Message>
  Message& make() {
    return *google::protobuf::Arena::CreateMessage<Message>(&arena_);
  }

 private:
  google::protobuf::ArenaOptions options() {
    google::protobuf::ArenaOptions o;
    o.initial_block = block_;
    o.initial_block_size = Size;
    return o;
  }
  alignas(std::max_align_t) char block_[Size];  // outlives arena_ (declared first)
  google::protobuf::Arena arena_;
};

void to_wire(const proc_id& p, wire::Proc* out);
proc_id from_wire(const wire::Proc& p);

// Values of a type the wire cannot carry (value::kind::unsupported) are sent
// as PMIX_UNDEF; the facade refuses them before they get here.
void to_wire(const value& v, wire::Value* out);
void to_wire(const info& i, wire::Info* out);
void to_wire(const info_list& list, google::protobuf::RepeatedPtrField<wire::Info>* out);

// False when the message is inconsistent (a payload that does not match its
// type, nesting deeper than a sane limit); `error` says why.
bool from_wire(const wire::Value& in, value& out, std::string* error = nullptr);
bool from_wire(const wire::Info& in, info& out, std::string* error = nullptr);
bool from_wire(const google::protobuf::RepeatedPtrField<wire::Info>& in, info_list& out,
               std::string* error = nullptr);

bool from_wire(const wire::App& in, app& out, std::string* error = nullptr);

// A committed item as the server keeps and serves it to peers
// (actors/peer_actor.cpp, on_commit): its info read and written again, so
// that peers receive only what the library itself writes. `bytes` is the
// serialized wire::ScopedInfo (written directly, protocol/direct.hpp: the
// bytes protobuf would write). False, with `error`, when the info does not
// read (a payload that does not match its type, ...). `key` is the item's
// key.
bool canonical_item(const wire::ScopedInfo& in, std::string& bytes, std::string& key,
                    std::string* error = nullptr);
void to_wire(const pdata& d, wire::PData* out);

// Serializes an envelope into one complete frame (length prefix included).
std::string to_frame(const wire::Envelope& e);
// A serialized wire::FenceReply: encoded once for all of a fence's
// contributors, each sends it under its own envelope id
// (protocol::to_frame(id, body::fence_reply, ...) in protocol/messages.hpp).
std::string fence_reply(pmix_status_t status, std::string_view data, bool whole_namespace = false);
// The same whose data travels as shared data of `size` bytes (FenceReply.shared).
std::string fence_reply_shared(pmix_status_t status, std::uint64_t size, bool whole_namespace = false);
// A serialized wire::ConnectProcsReply; `jobs` are its already encoded
// `jobs` fields (protocol::append_length_delimited(.., 2, job) each).
std::string connect_procs_reply_body(pmix_status_t status, std::string_view jobs);
// Parses one frame's payload. False on garbage.
bool parse(std::string_view payload, wire::Envelope& out);

// Appends `bytes` to `out` as one length-delimited protobuf field. Used to
// build a ModexData from already serialized RankData without re-parsing.
void append_length_delimited(std::string& out, int field_number, std::string_view bytes);


}  // namespace pmix::protocol
