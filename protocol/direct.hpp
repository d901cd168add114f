// Writes C++ values straight into their protobuf wire form, without building
// wire::Value / wire::Info messages first. The output is byte for byte what
// protobuf writes for the same message (tests/protocol/direct_test.cpp), so
// readers parse it with the generated classes as usual.
//
// Used where the server serializes large amounts of registered data once (a
// namespace's registration and its client blob: 60,000 values for a
// 10,000-rank job), where building and freeing a message per value cost more
// than the encoding itself.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "common/value.hpp"

namespace pmix::protocol {

// The encoded size of a wire::Value / wire::Info holding `v` / `i`.
std::size_t value_size(const value& v);
std::size_t info_size(const info& i);

// Appends `i` as field `field_number` (a wire::Info, length-delimited) of the
// message being written into `out`.
void append_info(std::string& out, int field_number, const info& i);
// The same for an info given as its parts.
void append_info(std::string& out, int field_number, std::string_view key, const value& v,
                 std::uint32_t flags);
// Replaces `out` with a wire::ScopedInfo of `scope` and `i` (a committed
// item as the server keeps it).
void write_scoped_item(std::string& out, std::uint32_t scope, const info& i);
// Appends a varint field (uint32/uint64) unless it is 0, as proto3 does.
void append_uint(std::string& out, int field_number, std::uint64_t v);

// Lower level, for writers that stream a message whose parts they encode
// one by one: the body of a wire::Info (no tag, no length); the tag and
// length of a length-delimited field; what those fields take.
void append_info_body(std::string& out, const info& i);
// The same for an info given as its parts.
void append_info_body(std::string& out, std::string_view key, const value& v, std::uint32_t flags);
// A wire::Proc field (always written, even when empty, as a set message
// field is), and what it takes.
void append_proc(std::string& out, int field_number, const proc_id& p);
std::size_t proc_size(int field_number, const proc_id& p);
// A length-delimited field holding `bytes` as they are (tag, length, bytes).
void append_delimited(std::string& out, int field_number, std::string_view bytes);
// The body of a wire::Value (what PMIx_Data_pack stores per value).
void append_value_body(std::string& out, const value& v);
void append_header(std::string& out, int field_number, std::size_t length);
std::size_t header_size(int field_number, std::size_t length);
std::size_t uint_size(int field_number, std::uint64_t v);           // 0 for v == 0
std::size_t bytes_size(int field_number, const std::string& s);     // 0 for ""
void append_bytes(std::string& out, int field_number, const std::string& s);  // nothing for ""

}  // namespace pmix::protocol
