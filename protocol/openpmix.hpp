// OpenPMIx's own data format, "bfrops v41" (issue 35: serving processes
// linked with OpenPMIx 4.2.x and 5.x). Written from the facts of the format
// (docs/wire-format.md, "OpenPMIx's format"), not from its code.
//
// A buffer is a sequence of packs. A pack is a count (INT32) and that many
// elements of one type; a FULLY_DESC buffer puts the type of the count
// (INT32) before it and the elements' type after it, a NON_DESC buffer
// neither. Integers are base-128 varints, little end first (at most 8
// seven-bit groups, then one byte holding the top 8 bits), signed ones
// zigzag-encoded; strings carry their length with the terminating NUL and
// the NUL; a value is its type (a varint) and its body.
//
// Plain functions on strings: no sockets, no actors.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

#include "common/value.hpp"

namespace pmix::openpmix {

enum class buffer_type : std::uint8_t { non_desc = 1, fully_desc = 2 };

// One pmix_regattr_t: an attribute's name ("PMIX_TIMEOUT"), key string,
// value type and description lines.
struct regattr {
  std::string name;
  std::string key;
  std::uint16_t type = 0;
  std::vector<std::string> description;
};

// What a PMIX_QUERY_ATTRIBUTE_SUPPORT answer holds for one function: its
// name and its attributes.
struct function_attributes {
  std::string function;
  std::vector<regattr> attributes;
};

// Appends packs to `out`.
class writer {
 public:
  explicit writer(buffer_type type = buffer_type::non_desc) : type_(type) {}

  writer& command(std::uint8_t cmd);
  writer& status(std::int32_t status);
  writer& statuses(const std::vector<std::int32_t>& list);  // one pack of list.size() STATUSes
  writer& string(std::string_view s);
  writer& size(std::uint64_t n);
  writer& rank(rank_t r);  // PMIX_PROC_RANK
  writer& byte_object(std::string_view bytes);
  writer& proc(const proc_id& p);
  writer& procs(const std::vector<proc_id>& list);  // one pack of list.size() PROCs (none: count 0)
  writer& kval(std::string_view key, const value& v);
  writer& info(const pmix::info& i);
  writer& infos(const info_list& list);  // one pack of list.size() INFOs (none: count 0)
  writer& scope(std::uint8_t scope);
  writer& range(std::uint8_t range);  // PMIX_DATA_RANGE
  writer& iof_channel(std::uint16_t channels);  // PMIX_IOF_CHANNEL
  writer& uint32(std::uint32_t v);
  writer& time(std::uint64_t t);                   // PMIX_TIME
  writer& alloc_directive(std::uint8_t directive);  // PMIX_ALLOC_DIRECTIVE
  // One pack of queries.size() PMIX_QUERYs (keys, qualifiers each).
  writer& queries(const std::vector<std::pair<std::vector<std::string>, info_list>>& list);
  // One pack of PMIX_PDATA (a lookup's answer): the publisher, key and
  // value of each; false (the writer unchanged) if a value has no form.
  bool pdata(const std::vector<std::tuple<proc_id, std::string, value>>& data);
  writer& buffer(std::string_view bytes);  // a nested buffer of this writer's type
  writer& apps(const std::vector<app>& list);  // one pack of list.size() APPs (PMIx_Spawn's)
  // One pack of INFOs: `list`, then one INFO per function of `table`, keyed
  // `key`, holding a DATA_ARRAY of one INFO (the function's name, a
  // DATA_ARRAY of REGATTRs), as OpenPMIx's tools read an attribute-support
  // answer.
  writer& infos(const info_list& list, std::string_view key, const std::vector<function_attributes>& table);
  // False if `v` holds a type this format cannot carry (the writer is then
  // unchanged).
  bool try_kval(std::string_view key, const value& v);

  const std::string& bytes() const { return out_; }
  std::string take() { return std::move(out_); }

 private:
  void begin(data_type element, std::int32_t count);
  buffer_type type_;
  std::string out_;
};

// Reads packs from a buffer it only views (keep the buffer alive). Each
// call reads one pack of one element (or of any number, for procs and
// infos); false at the end of the buffer or on malformed input (then
// `error()` says which, and at_end() is false).
class reader {
 public:
  reader(std::string_view in, buffer_type type = buffer_type::non_desc) : in_(in), type_(type) {}

  bool command(std::uint8_t& cmd);
  bool status(std::int32_t& status);
  bool string(std::string& s);
  bool size(std::uint64_t& n);
  bool rank(rank_t& r);
  bool byte_object(std::string& bytes);
  bool kval(std::string& key, value& v);
  bool procs(std::vector<proc_id>& out);  // one pack of any number of PROCs
  bool infos(info_list& out);             // one pack of any number of INFOs
  bool int32(std::int32_t& v);
  bool scope(std::uint8_t& scope);  // PMIX_SCOPE
  bool range(std::uint8_t& range);  // PMIX_DATA_RANGE
  bool alloc_directive(std::uint8_t& directive);  // PMIX_ALLOC_DIRECTIVE
  bool iof_channel(std::uint16_t& channels);      // PMIX_IOF_CHANNEL
  bool uint32(std::uint32_t& v);
  bool time(std::uint64_t& t);  // PMIX_TIME
  // One pack of any number of PMIX_QUERY: (keys, qualifiers) each.
  bool queries(std::vector<std::pair<std::vector<std::string>, info_list>>& out);
  // A PMIX_BUFFER (a nested buffer: its type byte, length and bytes), as a
  // commit carries its key/values.
  bool buffer(std::string& bytes);
  // One pack of any number of PMIX_APP (PMIx_Spawn's applications).
  bool apps(std::vector<app>& out);
  // One pack of any number of PMIX_PDATA (a lookup's answer).
  bool pdata(std::vector<pmix::pdata>& out);

  bool at_end() const { return pos_ >= in_.size(); }
  buffer_type type() const { return type_; }
  const std::string& error() const { return error_; }

 private:
  bool begin(data_type element, std::int32_t& count);
  // One pack of exactly one `element`, whose body `read` takes from a
  // cursor over the buffer (protocol/openpmix.cpp).
  template <class Read>
  bool single(data_type element, Read&& read);
  std::string_view in_;
  std::size_t pos_ = 0;
  buffer_type type_;
  std::string error_;
};

// The handshake's numbers and the message header's fields: 32 bits,
// big-endian.
void put_be32(std::string& out, std::uint32_t v);
std::uint32_t get_be32(const char* p);
// A message's 16-byte header after the handshake: the sender's index, the
// tag, the payload's length, 4 bytes of padding.
inline constexpr std::size_t header_size = 16;
void message_header(char (&out)[header_size], std::uint32_t index, std::uint32_t tag, std::uint32_t length);

// The varints on their own (exposed for tests).
void put_unsigned(std::string& out, std::uint64_t v);
void put_signed(std::string& out, std::int64_t v);
bool get_unsigned(std::string_view in, std::size_t& pos, std::uint64_t& v);
bool get_signed(std::string_view in, std::size_t& pos, std::int64_t& v);

}  // namespace pmix::openpmix
