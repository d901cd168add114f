#include "protocol/messages.hpp"

#include <pmix_common.h>

#include <cstring>
#include <memory>

#include "protocol/direct.hpp"
#include "protocol/framing.hpp"
#include "protocol/pb.hpp"

namespace pmix::protocol {
namespace {

using pb::field;
using pb::reader;

constexpr int max_nesting = 32;  // as the codec

bool fail(std::string* error, const char* why) {
  if (error != nullptr) *error = why;
  return false;
}
bool malformed(std::string* error) { return fail(error, "malformed message"); }

// A little-endian 32-bit number (a rank index's fields: JobInfo.rank_index).
std::uint32_t load_le32(const char* at) {
  const auto* p = reinterpret_cast<const unsigned char*>(at);
  return static_cast<std::uint32_t>(p[0]) | static_cast<std::uint32_t>(p[1]) << 8 |
         static_cast<std::uint32_t>(p[2]) << 16 | static_cast<std::uint32_t>(p[3]) << 24;
}

// ---- writing ----------------------------------------------------------------

void append_infos(std::string& out, int field_number, const info_list& list) {
  for (const auto& i : list) append_info(out, field_number, i);
}
// int32 fields: negative values are sign-extended to ten bytes.
std::uint64_t int32_varint(std::int32_t v) { return static_cast<std::uint64_t>(static_cast<std::int64_t>(v)); }

// ---- reading ----------------------------------------------------------------

// pmix.proto's message types, for the structural check below.
enum class msg : std::uint8_t {
  none, proc, timeval, envar, proc_info, value, data_array, info, rank_info, job_info, scoped_info,
  rank_data, modex, connect_request, connect_reply, finalize, commit, fence_request, fence_reply,
  get_request, get_reply, abort, status_reply, job_control, query, query_request, info_reply, event,
  publish, keys, pdata, lookup_reply, app, spawn, spawn_reply, connect_procs, connect_procs_reply, log,
  host_request, resource_unit, iof_data, group_request, fence_board, commit_hold_end, envelope,
};

// The message type of field `id` of an `m`; none for scalar and bytes fields.
msg child(msg m, std::uint32_t id) {
  switch (m) {
    case msg::proc_info: return id == 1 ? msg::proc : msg::none;
    case msg::value:
      switch (id) {
        case 7: return msg::proc;
        case 8: return msg::timeval;
        case 9: return msg::data_array;
        case 10: return msg::envar;
        case 11: return msg::proc_info;
        case 12: return msg::info;
        default: return msg::none;
      }
    case msg::data_array: return id == 2 ? msg::value : msg::none;
    case msg::info: return id == 2 ? msg::value : msg::none;
    case msg::rank_info: return id == 2 ? msg::info : msg::none;
    case msg::job_info: return id == 2 ? msg::info : id == 3 ? msg::rank_info : msg::none;
    case msg::scoped_info: return id == 2 ? msg::info : msg::none;
    case msg::rank_data: return id == 1 ? msg::proc : id == 2 ? msg::scoped_info : msg::none;
    case msg::modex: return id == 1 ? msg::rank_data : msg::none;
    case msg::connect_request: return id == 3 ? msg::proc : id == 6 ? msg::info : msg::none;
    case msg::connect_reply: return id == 2 || id == 4 ? msg::proc : msg::none;
    case msg::finalize: return id == 1 ? msg::info : msg::none;
    case msg::commit: return id == 1 ? msg::scoped_info : msg::none;
    case msg::fence_request: return id == 1 ? msg::proc : id == 2 ? msg::info : msg::none;
    case msg::get_request: return id == 1 ? msg::proc : id == 3 ? msg::info : msg::none;
    case msg::get_reply: return id == 2 ? msg::rank_data : msg::none;
    case msg::abort: return id == 3 ? msg::proc : msg::none;
    case msg::job_control: return id == 1 ? msg::proc : id == 2 ? msg::info : msg::none;
    case msg::query: return id == 2 ? msg::info : msg::none;
    case msg::query_request: return id == 1 ? msg::query : msg::none;
    case msg::info_reply: return id == 2 ? msg::info : msg::none;
    case msg::event: return id == 2 ? msg::proc : id == 4 ? msg::info : msg::none;
    case msg::publish: return id == 1 ? msg::info : msg::none;
    case msg::keys: return id == 2 ? msg::info : msg::none;
    case msg::pdata: return id == 1 ? msg::proc : id == 3 ? msg::value : msg::none;
    case msg::lookup_reply: return id == 2 ? msg::pdata : msg::none;
    case msg::app: return id == 6 ? msg::info : msg::none;
    case msg::spawn: return id == 1 ? msg::info : id == 2 ? msg::app : msg::none;
    case msg::connect_procs: return id == 1 ? msg::proc : id == 2 ? msg::info : msg::none;
    case msg::log: return id == 1 || id == 2 ? msg::info : msg::none;
    case msg::host_request:
      return id == 3 ? msg::proc : id == 4 || id == 5 ? msg::info : id == 9 ? msg::resource_unit : msg::none;
    case msg::iof_data: return id == 2 ? msg::proc : id == 5 ? msg::info : msg::none;
    case msg::group_request: return id == 3 || id == 5 ? msg::proc : id == 4 ? msg::info : msg::none;
    case msg::envelope:
      switch (static_cast<body>(id)) {
        case body::connect: return msg::connect_request;
        case body::connect_reply: return msg::connect_reply;
        case body::finalize: return msg::finalize;
        case body::commit: return msg::commit;
        case body::fence: return msg::fence_request;
        case body::fence_reply: return msg::fence_reply;
        case body::get: return msg::get_request;
        case body::get_reply: return msg::get_reply;
        case body::abort: return msg::abort;
        case body::status_reply: return msg::status_reply;
        case body::job_control: return msg::job_control;
        case body::info_reply: return msg::info_reply;
        case body::notify: case body::event: return msg::event;
        case body::query: return msg::query_request;
        case body::publish: return msg::publish;
        case body::lookup: case body::unpublish: return msg::keys;
        case body::lookup_reply: return msg::lookup_reply;
        case body::spawn: return msg::spawn;
        case body::spawn_reply: return msg::spawn_reply;
        case body::connect_procs: return msg::connect_procs;
        case body::connect_procs_reply: return msg::connect_procs_reply;
        case body::log: return msg::log;
        case body::host: return msg::host_request;
        case body::iof: return msg::iof_data;
        case body::group: return msg::group_request;
        case body::fence_board: return msg::fence_board;
        // No fields, but what it holds must still be wire format, as
        // protobuf requires of any message's unknown fields.
        case body::commit_hold_end: case body::commit_hold_ended: return msg::commit_hold_end;
        default: return msg::none;
      }
    default: return msg::none;
  }
}

// The fields of `m` that are repeated (may come more than once), of the
// messages a commit or a fence holds (read_request).
bool repeated_field(msg m, std::uint32_t id) {
  switch (m) {
    case msg::commit: return id == 1;
    case msg::fence_request: return id == 1 || id == 2;
    case msg::data_array: return id == 2;
    default: return false;
  }
}

// Whether protobuf would parse `in` as an `m`: every field well formed, and
// every message field too, recursively (protobuf parses each occurrence of a
// field, also one a later oneof member replaces). The decoders below read
// lazily, the last occurrence only: each public entry checks this first.
// `once`: and no field that is not repeated comes twice, in `m` or in a
// message in it (protobuf merges such occurrences, where the decoders keep
// the last): the messages protobuf and this codec read alike.
constexpr int max_message_depth = 100;  // protobuf's default recursion limit
bool well_formed(msg m, std::string_view in, int depth = 0, bool once = false) {
  if (depth > max_message_depth) return false;
  std::uint64_t seen = 0;
  reader r{in};
  field f;
  while (r.next(f)) {
    if (once && f.id < 64 && !repeated_field(m, f.id)) {
      const auto bit = std::uint64_t{1} << f.id;
      if ((seen & bit) != 0) return false;
      seen |= bit;
    }
    if (f.type != pb::delimited) continue;
    const auto c = child(m, f.id);
    if (c != msg::none && !well_formed(c, f.bytes, depth + 1, once)) return false;
  }
  return r.ok();
}

// An absent Proc reads as protobuf's default one: rank 0, not rank_undef.
// (A function, not a static proc_id: that one's string would be a
// destructor every process linking the client library runs at exit.)
constexpr rank_t wire_default_rank = 0;
void to_wire_default(proc_id& proc) {
  proc.nspace.clear();
  proc.rank = wire_default_rank;
}

bool read_proc(std::string_view in, proc_id& out) {
  to_wire_default(out);
  reader r{in};
  field f;
  while (r.next(f)) {
    if (f.id == 1 && f.type == pb::delimited) out.nspace.assign(f.bytes.data(), f.bytes.size());
    else if (f.id == 2 && f.type == pb::varint) out.rank = static_cast<rank_t>(f.number);
  }
  return r.ok();
}

bool read_value(std::string_view in, value& out, std::string* error, int depth);

bool read_info(std::string_view in, info& out, std::string* error, int depth) {
  out.key.clear();
  out.flags = 0;
  bool has_value = false;
  std::string_view val;
  reader r{in};
  field f;
  while (r.next(f)) {
    if (f.id == 1 && f.type == pb::delimited) out.key.assign(f.bytes.data(), f.bytes.size());
    else if (f.id == 2 && f.type == pb::delimited) has_value = true, val = f.bytes;
    else if (f.id == 3 && f.type == pb::varint) out.flags = static_cast<std::uint32_t>(f.number);
  }
  if (!r.ok()) return malformed(error);
  if (!has_value) {
    out.val = value{};
    return true;
  }
  return read_value(val, out.val, error, depth);
}

// A status field (sint32).
pmix_status_t status_field(const field& f) { return pb::unzigzag32(static_cast<std::uint32_t>(f.number)); }

bool read_infos_field(const field& f, info_list& out, std::string* error) {
  out.emplace_back();
  if (read_info(f.bytes, out.back(), error, 0)) return true;
  // Only whole items stay: one read halfway has its type and not the payload
  // that type needs (a value of type PMIX_ENVAR holding nothing: the client
  // kept it, with the items before it, and converting it for a get threw;
  // tests/fuzz client_reply).
  out.pop_back();
  return false;
}

// The wire type each of Value's payload fields (2..12) must have.
pb::wire_type payload_type(std::uint32_t id) {
  switch (id) {
    case 2: case 3: case 4: return pb::varint;
    case 5: return pb::fixed64;
    default: return pb::delimited;
  }
}

bool read_value(std::string_view in, value& out, std::string* error, int depth) {
  if (depth > max_nesting) return fail(error, "values nested too deeply");
  std::uint64_t type = 0;
  field data;  // the payload field last seen (a oneof: the last one wins)
  data.id = 0;
  reader r{in};
  field f;
  while (r.next(f)) {
    if (f.id == 1 && f.type == pb::varint) type = static_cast<std::uint32_t>(f.number);
    else if (f.id >= 2 && f.id <= 12 && f.type == payload_type(f.id)) data = f;
  }
  if (!r.ok()) return malformed(error);
  if (type > 0xffff) return fail(error, "data type out of range");
  const auto t = static_cast<data_type>(type);
  out.type = t;
  auto mismatch = [&] {
    if (error != nullptr) *error = "payload does not match data type " + std::to_string(t);
    return false;
  };
  auto expect = [&](std::uint32_t id) { return data.id == id; };
  switch (value::kind_of(t)) {
    case value::kind::none:
      if (data.id != 0) return mismatch();
      out.data = std::monostate{};
      return true;
    case value::kind::unsupported:
      if (error != nullptr) *error = "data type " + std::to_string(t) + " cannot travel on the wire";
      return false;
    case value::kind::boolean:
      if (!expect(2)) return mismatch();
      out.data = data.number != 0;
      return true;
    case value::kind::integer:
      if (!expect(3)) return mismatch();
      out.data = pb::unzigzag64(data.number);
      return true;
    case value::kind::unsigned_:
      if (!expect(4)) return mismatch();
      out.data = static_cast<std::uint64_t>(data.number);
      return true;
    case value::kind::real: {
      if (!expect(5)) return mismatch();
      double d;
      std::memcpy(&d, &data.number, sizeof d);
      out.data = d;
      return true;
    }
    case value::kind::bytes:
      // No payload: a NULL string or byte object.
      if (data.id == 0) return out.data = std::monostate{}, true;
      if (!expect(6)) return mismatch();
      out.data = std::string{data.bytes};
      return true;
    case value::kind::proc: {
      if (!expect(7)) return mismatch();
      proc_id p;
      if (!read_proc(data.bytes, p)) return malformed(error);
      out.data = std::move(p);
      return true;
    }
    case value::kind::timeval: {
      if (!expect(8)) return mismatch();
      timeval_value tv{0, 0};
      reader tr{data.bytes};
      while (tr.next(f)) {
        if (f.id == 1 && f.type == pb::varint) tv.sec = static_cast<std::int64_t>(f.number);
        else if (f.id == 2 && f.type == pb::varint) tv.usec = static_cast<std::int64_t>(f.number);
      }
      if (!tr.ok()) return malformed(error);
      out.data = tv;
      return true;
    }
    case value::kind::envar: {
      if (!expect(10)) return mismatch();
      envar_value e{"", "", 0};
      reader er{data.bytes};
      while (er.next(f)) {
        if (f.id == 1 && f.type == pb::delimited) e.name.assign(f.bytes.data(), f.bytes.size());
        else if (f.id == 2 && f.type == pb::delimited) e.value.assign(f.bytes.data(), f.bytes.size());
        else if (f.id == 3 && f.type == pb::varint) e.separator = static_cast<char>(static_cast<std::uint32_t>(f.number));
      }
      if (!er.ok()) return malformed(error);
      out.data = std::make_shared<const envar_value>(std::move(e));
      return true;
    }
    case value::kind::proc_info: {
      if (!expect(11)) return mismatch();
      proc_info_value v;
      to_wire_default(v.proc);
      reader pr{data.bytes};
      while (pr.next(f)) {
        if (f.id == 1 && f.type == pb::delimited) {
          if (!read_proc(f.bytes, v.proc)) return malformed(error);
        } else if (f.id == 2 && f.type == pb::delimited) {
          v.hostname.assign(f.bytes.data(), f.bytes.size());
        } else if (f.id == 3 && f.type == pb::delimited) {
          v.executable.assign(f.bytes.data(), f.bytes.size());
        } else if (f.id == 4 && f.type == pb::varint) {
          v.pid = static_cast<std::int32_t>(f.number);
        } else if (f.id == 5 && f.type == pb::varint) {
          v.exit_code = static_cast<std::int32_t>(f.number);
        } else if (f.id == 6 && f.type == pb::varint) {
          v.state = static_cast<std::uint8_t>(static_cast<std::uint32_t>(f.number));
        }
      }
      if (!pr.ok()) return malformed(error);
      out.data = std::make_shared<const proc_info_value>(std::move(v));
      return true;
    }
    case value::kind::array: {
      if (!expect(9)) return mismatch();
      array_value arr;
      std::uint64_t element_type = 0;
      reader ar{data.bytes};
      while (ar.next(f)) {
        if (f.id == 1 && f.type == pb::varint) {
          element_type = static_cast<std::uint32_t>(f.number);
        } else if (f.id == 2 && f.type == pb::delimited) {
          arr.elements.emplace_back();
          if (!read_value(f.bytes, arr.elements.back(), error, depth + 1)) return false;
        }
      }
      if (!ar.ok()) return malformed(error);
      if (element_type > 0xffff) return mismatch();
      arr.type = static_cast<data_type>(element_type);
      if (arr.type != PMIX_VALUE)
        for (const auto& e : arr.elements)
          if (e.type != arr.type) return fail(error, "data array element of the wrong type");
      out.data = std::make_shared<const array_value>(std::move(arr));
      return true;
    }
    case value::kind::info: {
      if (!expect(12)) return mismatch();
      auto i = std::make_shared<info>();
      if (!read_info(data.bytes, *i, error, depth + 1)) return false;
      out.data = std::shared_ptr<const info>(std::move(i));
      return true;
    }
  }
  return mismatch();
}

}  // namespace

// ---- envelopes --------------------------------------------------------------

envelope& envelope::operator=(envelope&& o) noexcept {
  if (this == &o) return *this;
  // `message` points into `bytes`: keep its offset across the move (a short
  // string's characters move with the object).
  const auto offset = o.message.data() == nullptr ? 0 : static_cast<std::size_t>(o.message.data() - o.bytes.data());
  const auto length = o.message.size();
  id = o.id;
  kind = o.kind;
  bytes = std::move(o.bytes);
  message = std::string_view{bytes.data() + offset, length};
  shared_owner = std::move(o.shared_owner);
  shared = o.shared;
  o.shared = {};
  o.message = {};
  o.kind = body::none;
  return *this;
}

bool parse_envelope(std::string payload, envelope& out) {
  out.bytes = std::move(payload);
  out.id = 0;
  out.kind = body::none;
  out.message = {};
  if (!well_formed(msg::envelope, out.bytes)) return false;
  reader r{out.bytes};
  field f;
  while (r.next(f)) {
    if (f.id == 1 && f.type == pb::varint) {
      out.id = f.number;
    } else if (f.id >= static_cast<std::uint32_t>(body::connect) &&
               f.id <= static_cast<std::uint32_t>(body::commit_hold_ended) && f.type == pb::delimited) {
      out.kind = static_cast<body>(f.id);
      out.message = f.bytes;
    }
  }
  return r.ok();
}

bool read_request(std::string_view payload, request& out) {
  out = request{};
  bool id_seen = false;
  reader r{payload};
  field f;
  while (r.next(f)) {
    if (f.id == 1) {
      if (id_seen || f.type != pb::varint) return false;
      id_seen = true;
      out.id = f.number;
    } else if (f.id == static_cast<std::uint32_t>(body::commit) || f.id == static_cast<std::uint32_t>(body::fence)) {
      if (out.kind != body::none || f.type != pb::delimited) return false;
      out.kind = static_cast<body>(f.id);
      out.message = f.bytes;
    } else {
      return false;  // another body, or a field the server has no use for
    }
  }
  if (!r.ok() || out.kind == body::none) return false;
  // The body is a message of the Envelope: one level down, as protobuf counts.
  return well_formed(child(msg::envelope, static_cast<std::uint32_t>(out.kind)), out.message, 1, true);
}

bool read_commit(std::string_view message, std::vector<scoped_info>& out) {
  out.clear();
  reader r{message};
  field f;
  while (r.next(f)) {
    if (f.id != 1 || f.type != pb::delimited) continue;
    auto& item = out.emplace_back();
    bool has_info = false;
    reader sr{f.bytes};
    field g;
    while (sr.next(g)) {
      if (g.id == 1 && g.type == pb::varint) {
        item.scope = static_cast<std::uint32_t>(g.number);
      } else if (g.id == 2 && g.type == pb::delimited) {
        if (!read_info(g.bytes, item.item, nullptr, 0)) return false;
        has_info = true;
      }
    }
    if (!sr.ok()) return false;
    // An item without its Info: protobuf's default one (no key, no value).
    if (!has_info) item.item = info{};
  }
  return r.ok();
}

bool read_fence(std::string_view message, fence_request_data& out) {
  out.procs.clear();
  out.info.clear();
  out.collect_data = out.board_wait = out.board_request = false;
  reader r{message};
  field f;
  while (r.next(f)) {
    if (f.id == 1 && f.type == pb::delimited) {
      if (!read_proc(f.bytes, out.procs.emplace_back())) return false;
    } else if (f.id == 2 && f.type == pb::delimited) {
      if (!read_info(f.bytes, out.info.emplace_back(), nullptr, 0)) return false;
    } else if (f.type == pb::varint && f.id >= 3 && f.id <= 5) {
      (f.id == 3 ? out.collect_data : f.id == 4 ? out.board_wait : out.board_request) = f.number != 0;
    }
  }
  return r.ok();
}

frame_prefix::frame_prefix(std::uint64_t id, body kind, std::size_t message_size) {
  auto put_varint = [this](std::uint64_t v) {
    while (v >= 0x80) {
      bytes[size++] = static_cast<char>((v & 0x7f) | 0x80);
      v >>= 7;
    }
    bytes[size++] = static_cast<char>(v);
  };
  const int number = static_cast<int>(kind);
  const std::size_t envelope_size =
      uint_size(1, id) + (kind == body::none ? 0 : header_size(number, message_size) + message_size);
  const auto n = static_cast<std::uint32_t>(envelope_size);
  bytes[0] = static_cast<char>(n >> 24);
  bytes[1] = static_cast<char>(n >> 16);
  bytes[2] = static_cast<char>(n >> 8);
  bytes[3] = static_cast<char>(n);
  size = frame_header_size;
  if (id != 0) {  // proto3 leaves a zero out
    put_varint(std::uint64_t{1} << 3 | pb::varint);
    put_varint(id);
  }
  if (kind != body::none) {
    put_varint(static_cast<std::uint64_t>(number) << 3 | pb::delimited);
    put_varint(message_size);
  }
}

std::string to_frame(std::uint64_t id, body kind, std::string_view message) {
  const frame_prefix prefix{id, kind, kind == body::none ? 0 : message.size()};
  std::string out;
  out.reserve(prefix.view().size() + (kind == body::none ? 0 : message.size()));
  out.append(prefix.view());
  if (kind != body::none) out.append(message.data(), message.size());
  return out;
}

// ---- requests ---------------------------------------------------------------

std::string connect_request(std::uint32_t protocol_version, role r, const proc_id& proc, std::int32_t pid,
                            const std::string& library_version, const info_list& info, bool commit_hold) {
  std::string out;
  append_uint(out, 1, protocol_version);
  append_uint(out, 2, static_cast<std::uint32_t>(r));
  append_proc(out, 3, proc);
  append_uint(out, 4, int32_varint(pid));
  append_bytes(out, 5, library_version);
  append_infos(out, 6, info);
  if (commit_hold) append_uint(out, 7, 1);
  return out;
}

std::string finalize_request(const info_list& info) {
  std::string out;
  append_infos(out, 1, info);
  return out;
}

std::string commit_request(const std::vector<scoped_info>& data) {
  std::string out;
  for (const auto& d : data) {
    const auto scope_size = uint_size(1, d.scope);
    const auto item_size = info_size(d.item);
    append_header(out, 1, scope_size + header_size(2, item_size) + item_size);
    append_uint(out, 1, d.scope);
    append_info(out, 2, d.item);
  }
  return out;
}

std::string fence_request(const std::vector<proc_id>& procs, const info_list& info, bool collect_data,
                          bool board_wait, bool board_request) {
  std::string out;
  std::size_t size = uint_size(3, collect_data ? 1 : 0) + uint_size(4, board_wait ? 1 : 0) +
                     uint_size(5, board_request ? 1 : 0);
  for (const auto& p : procs) size += proc_size(1, p);
  for (const auto& i : info) size += header_size(2, info_size(i)) + info_size(i);
  out.reserve(size);
  for (const auto& p : procs) append_proc(out, 1, p);
  append_infos(out, 2, info);
  append_uint(out, 3, collect_data ? 1 : 0);
  append_uint(out, 4, board_wait ? 1 : 0);
  append_uint(out, 5, board_request ? 1 : 0);
  return out;
}

std::string get_request(const proc_id& proc, const std::string& key, const info_list& info) {
  std::string out;
  append_proc(out, 1, proc);
  append_bytes(out, 2, key);
  append_infos(out, 3, info);
  return out;
}

std::string abort_request(std::int32_t status, const std::string& message, const std::vector<proc_id>& procs) {
  std::string out;
  append_uint(out, 1, pb::zigzag32(status));
  append_bytes(out, 2, message);
  for (const auto& p : procs) append_proc(out, 3, p);
  return out;
}

std::string job_control_request(const std::vector<proc_id>& targets, const info_list& directives) {
  std::string out;
  for (const auto& p : targets) append_proc(out, 1, p);
  append_infos(out, 2, directives);
  return out;
}

std::string query_request(const std::vector<query>& queries) {
  std::string out, one;
  for (const auto& q : queries) {
    one.clear();
    for (const auto& k : q.keys) append_delimited(one, 1, k);
    append_infos(one, 2, q.qualifiers);
    append_delimited(out, 1, one);
  }
  return out;
}

std::string event_message(const event& ev) {
  std::string out;
  append_uint(out, 1, pb::zigzag32(ev.status));
  append_proc(out, 2, ev.source);
  append_uint(out, 3, static_cast<std::uint32_t>(ev.range));
  append_infos(out, 4, ev.info);
  return out;
}

std::string publish_request(const info_list& info) {
  std::string out;
  append_infos(out, 1, info);
  return out;
}

std::string keys_request(const std::vector<std::string>& keys, const info_list& info) {
  std::string out;
  for (const auto& k : keys) append_delimited(out, 1, k);
  append_infos(out, 2, info);
  return out;
}

std::string spawn_request(const info_list& job_info, const std::vector<app>& apps) {
  std::string out, one;
  append_infos(out, 1, job_info);
  for (const auto& a : apps) {
    one.clear();
    append_bytes(one, 1, a.cmd);
    for (const auto& v : a.argv) append_delimited(one, 2, v);
    for (const auto& v : a.env) append_delimited(one, 3, v);
    append_bytes(one, 4, a.cwd);
    append_uint(one, 5, int32_varint(a.maxprocs));
    append_infos(one, 6, a.info);
    append_delimited(out, 2, one);
  }
  return out;
}

std::string connect_procs_request(const std::vector<proc_id>& procs, const info_list& info, bool disconnect) {
  std::string out;
  for (const auto& p : procs) append_proc(out, 1, p);
  append_infos(out, 2, info);
  append_uint(out, 3, disconnect ? 1 : 0);
  return out;
}

std::string log_request(const info_list& data, const info_list& directives) {
  std::string out;
  append_infos(out, 1, data);
  append_infos(out, 2, directives);
  return out;
}

std::string encode(const host_request& r) {
  std::string out;
  append_uint(out, 1, static_cast<std::uint32_t>(r.call));
  append_uint(out, 2, pb::zigzag32(r.code));
  for (const auto& p : r.procs) append_proc(out, 3, p);
  append_infos(out, 4, r.info);
  append_infos(out, 5, r.directives);
  if (r.data) {
    append_bytes(out, 6, *r.data);
    append_uint(out, 7, 1);
  }
  append_uint(out, 8, r.ref);
  for (const auto& u : r.units) {
    std::string unit;
    append_uint(unit, 1, u.type);
    append_uint(unit, 2, u.count);
    append_bytes(out, 9, unit);
  }
  return out;
}

std::string encode(const group_request& r) {
  std::string out;
  append_uint(out, 1, static_cast<std::uint32_t>(r.op));
  append_bytes(out, 2, r.name);
  for (const auto& p : r.procs) append_proc(out, 3, p);
  append_infos(out, 4, r.directives);
  if (r.leader) append_proc(out, 5, *r.leader);
  append_uint(out, 6, r.accept ? 1 : 0);
  return out;
}

// ---- replies ----------------------------------------------------------------

bool decode(std::string_view in, connect_reply& out, std::string* error) {
  if (!well_formed(msg::connect_reply, in)) return malformed(error);
  out = connect_reply{};
  to_wire_default(out.server);
  reader r{in};
  field f;
  while (r.next(f)) {
    if (f.id == 1 && f.type == pb::varint) {
      out.status = status_field(f);
    } else if (f.id == 2 && f.type == pb::delimited) {
      if (!read_proc(f.bytes, out.server)) return malformed(error);
    } else if (f.id == 3 && f.type == pb::delimited) {
      out.job = f.bytes;
    } else if (f.id == 4 && f.type == pb::delimited) {
      out.assigned.emplace();
      if (!read_proc(f.bytes, *out.assigned)) return malformed(error);
    } else if (f.id == 5 && f.type == pb::varint) {
      out.job_shared = f.number;
    } else if (f.id == 6 && f.type == pb::varint) {
      out.commit_hold = f.number != 0;
    }
  }
  return r.ok() || malformed(error);
}

namespace {
// As well_formed(msg::job_info, in), but of each RankInfo only its own
// fields' framing (read_job_top reads them): its items are checked when the
// rank is read (decode_rank_info). `ranks`: how many RankInfos there are.
bool well_formed_job_top(std::string_view in, std::size_t& ranks) {
  ranks = 0;
  reader r{in};
  field f;
  while (r.next(f)) {
    if (f.type != pb::delimited) continue;
    if (f.id == 3) {
      ++ranks;
      continue;
    }
    const auto c = child(msg::job_info, f.id);
    if (c != msg::none && !well_formed(c, f.bytes, 1)) return false;
  }
  return r.ok();
}

bool read_rank_items(std::string_view in, info_list& out, std::string* error) {
  reader rr{in};
  field g;
  while (rr.next(g))
    if (g.id == 2 && g.type == pb::delimited && !read_infos_field(g, out, error)) return false;
  return rr.ok() || malformed(error);
}

// The lazy read of a JobInfo that has a rank index (JobInfo.rank_index,
// written before its RankInfos): the fields before the index, the index,
// then the fields after the RankInfos it names; the RankInfos themselves
// are not read (their pages not even touched) until a rank is looked up.
// False if `in` has no index before its first RankInfo (`has_index` false:
// read it all), or if the index or a field is malformed (`has_index` true).
bool read_indexed_job(std::string_view in, job_info& out, bool& has_index) {
  has_index = false;
  out = job_info{};
  reader r{in};
  field f;
  auto take_field = [&](const field& g) {
    if (g.id == 5 && g.type == pb::varint) out.local_ranks_by_peers = g.number != 0;
    if (g.type != pb::delimited) return true;
    if (g.id == 1) {
      out.nspace.assign(g.bytes.data(), g.bytes.size());
    } else if (g.id == 6) {
      out.local_runs.assign(g.bytes.data(), g.bytes.size());
    } else if (g.id == 7) {
      out.local_strided_runs.assign(g.bytes.data(), g.bytes.size());
    } else if (g.id == 2) {
      if (!well_formed(msg::info, g.bytes, 1) || !read_infos_field(g, out.info, nullptr)) return false;
    }
    return true;
  };
  // Found first, the fields before it only stepped over: without an index
  // the caller reads the whole message, and decodes them there.
  bool found = false;
  const char* index_at = in.data();
  while (!found) {
    index_at = r.position();
    if (!r.next(f) || f.id == 3) return false;  // no index before the RankInfos: none to use
    found = f.id == 4 && f.type == pb::delimited;
  }
  has_index = true;
  reader before{in.substr(0, static_cast<std::size_t>(index_at - in.data()))};
  field g;
  while (before.next(g))
    if (!take_field(g)) return false;
  if (f.bytes.size() % 12 != 0) return false;
  const std::size_t from = static_cast<std::size_t>(r.position() - in.data());
  const std::size_t count = f.bytes.size() / 12;
  // The RankInfos it names come one after the other from here, in rank
  // order (as the server writes them), so the last entry says where they
  // end: only it is read here, not every entry (a loop over every rank of
  // the job in every process at PMIx_Init: a third of a process's CPU
  // there in a job of 100,000 ranks). The others are checked against these
  // bounds when their rank is looked up (index_entry); the whole read
  // (decode) checks that the index names each RankInfo, in order.
  const std::string_view index = f.bytes;
  std::size_t end = from;
  if (count > 0) {
    const char* e = f.bytes.data() + 12 * (count - 1);
    const std::size_t offset = load_le32(e + 4), length = load_le32(e + 8);
    if (offset < from || offset > in.size() || length > in.size() - offset) return false;
    end = offset + length;
  }
  // The fields after the indexed RankInfos (info a host added later); a
  // RankInfo there is one the index does not name.
  reader rest{in.substr(end)};
  while (rest.next(f))
    if (f.id == 3 || !take_field(f)) return false;
  if (!rest.ok()) return false;
  out.rank_index = index;
  out.indexed = in.substr(0, end);
  return true;
}

}  // namespace

std::size_t index_size(std::string_view index) { return index.size() / 12; }

std::pair<rank_t, std::string_view> index_entry(std::string_view index, std::string_view indexed, std::size_t k) {
  const char* e = index.data() + 12 * k;
  const std::size_t offset = load_le32(e + 4), length = load_le32(e + 8);
  // The RankInfos lie between the index and the end of `indexed`.
  const auto from = static_cast<std::size_t>(index.data() + index.size() - indexed.data());
  if (offset < from || offset > indexed.size() || length > indexed.size() - offset)
    return {static_cast<rank_t>(load_le32(e)), std::string_view{}};
  return {static_cast<rank_t>(load_le32(e)), indexed.substr(offset, length)};
}

std::size_t index_find(std::string_view index, rank_t rank) {
  std::size_t lo = 0, hi = index_size(index);
  while (lo < hi) {
    const std::size_t mid = lo + (hi - lo) / 2;
    if (load_le32(index.data() + 12 * mid) < rank) lo = mid + 1;
    else hi = mid;
  }
  return lo < index_size(index) && load_le32(index.data() + 12 * lo) == rank ? lo : index_size(index);
}

std::vector<std::pair<rank_t, std::string_view>> encoded_ranks(const job_info& job) {
  if (job.rank_index.empty()) return job.encoded;
  std::vector<std::pair<rank_t, std::string_view>> out;
  out.reserve(index_size(job.rank_index));
  for (std::size_t k = 0; k < index_size(job.rank_index); ++k) out.push_back(index_entry(job.rank_index, job.indexed, k));
  return out;
}

namespace {
// A JobInfo's own fields and each RankInfo's rank and bytes (views into
// `in`), which decode reads at once and decode_lazy at each rank's lookup.
// `lazy`: the RankInfos' items are not checked here (decode_rank_info
// does, at the lookup): a process of an N-rank job checked every rank's
// items at PMIx_Init, O(N) in each process (issue 40).
bool read_job_top(std::string_view in, job_info& out, std::vector<std::pair<rank_t, std::string_view>>& ranks,
                  std::string* error, bool lazy) {
  // A rank index that does not index the message makes it malformed, read
  // lazily or not (the fuzzer found a message the eager read took and the
  // lazy one refused).
  bool has_index = false;
  const bool indexed = read_indexed_job(in, out, has_index);
  if (lazy && indexed) return true;
  if (has_index && !indexed) return malformed(error);
  const std::string_view index = out.rank_index;
  ranks.clear();
  std::size_t count = 0;
  if (!(lazy ? well_formed_job_top(in, count) : well_formed(msg::job_info, in))) return malformed(error);
  ranks.reserve(count);
  out = job_info{};
  reader r{in};
  field f;
  while (r.next(f)) {
    if (f.id == 1 && f.type == pb::delimited) {
      out.nspace.assign(f.bytes.data(), f.bytes.size());
    } else if (f.id == 2 && f.type == pb::delimited) {
      if (!read_infos_field(f, out.info, error)) return false;
    } else if (f.id == 3 && f.type == pb::delimited) {
      rank_t rank = 0;
      reader rr{f.bytes};
      field g;
      while (rr.next(g))
        if (g.id == 1 && g.type == pb::varint) rank = static_cast<rank_t>(g.number);
      if (!rr.ok()) return malformed(error);
      ranks.emplace_back(rank, f.bytes);
    } else if (f.id == 5 && f.type == pb::varint) {
      out.local_ranks_by_peers = f.number != 0;
    } else if (f.id == 6 && f.type == pb::delimited) {
      out.local_runs.assign(f.bytes.data(), f.bytes.size());
    } else if (f.id == 7 && f.type == pb::delimited) {
      out.local_strided_runs.assign(f.bytes.data(), f.bytes.size());
    }
  }
  if (!r.ok()) return malformed(error);
  // Read whole, the index must name every RankInfo, in order, ranks
  // ascending: what the lazy read took on trust from its last entry.
  if (indexed) {
    if (index_size(index) != ranks.size()) return malformed(error);
    for (std::size_t k = 0; k < ranks.size(); ++k) {
      const char* e = index.data() + 12 * k;
      const auto rank = static_cast<rank_t>(load_le32(e));
      if (rank != ranks[k].first || (k > 0 && rank <= ranks[k - 1].first) ||
          load_le32(e + 4) != static_cast<std::size_t>(ranks[k].second.data() - in.data()) ||
          load_le32(e + 8) != ranks[k].second.size())
        return malformed(error);
    }
  }
  return true;
}
}  // namespace

namespace {
// Runs of `width` bytes each: little-endian uint32 first rank and count,
// and with 12 bytes the stride (else 1). Checked whole before anything is
// allocated; `apart`: how many ranks must lie between one run's last and
// the next one's first.
bool read_runs(std::string_view runs, std::size_t width, std::uint64_t apart, std::size_t max_count,
               std::vector<local_run>& out) {
  out.clear();
  if (runs.size() % width != 0) return false;
  const auto run_at = [&](std::size_t k) {
    return local_run{static_cast<rank_t>(load_le32(runs.data() + k)), load_le32(runs.data() + k + 4),
                     width == 12 ? load_le32(runs.data() + k + 8) : 1u};
  };
  std::size_t total = 0;
  std::uint64_t next = 0;  // the lowest rank the next run may start at
  for (std::size_t k = 0; k < runs.size(); k += width) {
    const auto r = run_at(k);
    if (r.count == 0 || r.stride == 0 || r.first < next || r.count > max_count - total) return false;
    // Below 2^64: (2^32 - 1)^2 + 2^32.
    const std::uint64_t last = std::uint64_t{r.first} + std::uint64_t{r.count - 1} * r.stride;
    if (last >= rank_valid_limit) return false;
    total += r.count;
    next = last + 1 + apart;
  }
  out.reserve(runs.size() / width);
  for (std::size_t k = 0; k < runs.size(); k += width) out.push_back(run_at(k));
  return true;
}
}  // namespace

// Runs of consecutive ranks leave a rank out between them (else they
// would be one run).
bool read_local_runs(std::string_view runs, std::size_t max_count, std::vector<local_run>& out) {
  return read_runs(runs, 8, 1, max_count, out);
}

bool read_local_strided_runs(std::string_view runs, std::size_t max_count, std::vector<local_run>& out) {
  return read_runs(runs, 12, 0, max_count, out);
}

std::vector<rank_t> expand_runs(const std::vector<local_run>& runs) {
  std::size_t total = 0;
  for (const auto& r : runs) total += r.count;
  std::vector<rank_t> out;
  out.reserve(total);
  for (const auto& r : runs)
    for (std::uint32_t j = 0; j < r.count; ++j) out.push_back(r.first + j * r.stride);
  return out;
}

bool expand_local_runs(std::string_view runs, std::size_t max_count, std::vector<rank_t>& out) {
  out.clear();
  std::vector<local_run> read;
  if (!read_local_runs(runs, max_count, read)) return false;
  out = expand_runs(read);
  return true;
}

bool decode_lazy(std::string_view in, job_info& out, std::string* error) {
  auto copy = std::make_shared<const std::string>(in);
  const std::string_view bytes{*copy};
  return decode_lazy(bytes, std::move(copy), out, error);
}

bool decode_lazy(std::string_view in, std::shared_ptr<const void> owner, job_info& out, std::string* error) {
  std::vector<std::pair<rank_t, std::string_view>> ranks;
  if (!read_job_top(in, out, ranks, error, true)) return false;
  out.encoded = std::move(ranks);
  out.raw = std::move(owner);
  return true;
}

bool decode_rank_info(std::string_view in, info_list& out, std::string* error) {
  if (!well_formed(msg::rank_info, in)) return malformed(error);
  return read_rank_items(in, out, error);
}

info_list derived_rank_items(rank_t rank, const std::string* host, std::uint32_t node, std::uint32_t index) {
  info_list out;
  out.reserve(6);
  if (host != nullptr) out.push_back(info{PMIX_HOSTNAME, value::string(*host), 0});
  out.push_back(info{PMIX_NODEID, value::unsigned_(PMIX_UINT32, node), 0});
  out.push_back(info{PMIX_LOCAL_RANK, value::unsigned_(PMIX_UINT16, static_cast<std::uint16_t>(index)), 0});
  out.push_back(info{PMIX_NODE_RANK, value::unsigned_(PMIX_UINT16, static_cast<std::uint16_t>(index)), 0});
  out.push_back(info{PMIX_GLOBAL_RANK, value::unsigned_(PMIX_PROC_RANK, rank), 0});
  out.push_back(info{PMIX_APPNUM, value::unsigned_(PMIX_UINT32, 0), 0});
  return out;
}

bool decode(std::string_view in, job_info& out, std::string* error) {
  std::vector<std::pair<rank_t, std::string_view>> ranks;
  if (!read_job_top(in, out, ranks, error, false)) return false;
  out.ranks.reserve(ranks.size());
  for (const auto& [rank, bytes] : ranks)
    if (!read_rank_items(bytes, out.ranks.emplace_back(rank, info_list{}).second, error)) return false;
  return true;
}

std::uint64_t shared_size(body kind, std::string_view message) {
  // FenceReply.shared, ConnectReply.job_shared, FenceBoard.size.
  const std::uint32_t id = kind == body::fence_reply ? 3 : kind == body::connect_reply ? 5 : kind == body::fence_board ? 1 : 0;
  if (id == 0) return 0;
  std::uint64_t size = 0;
  reader r{message};
  field f;
  while (r.next(f))
    if (f.id == id && f.type == pb::varint) size = f.number;
  return r.ok() ? size : 0;
}

bool decode(std::string_view in, body kind, status_reply& out, std::string* error) {
  if (!well_formed(kind == body::get_reply ? msg::get_reply : msg::status_reply, in)) return malformed(error);
  out = status_reply{};
  const bool with_data = kind == body::fence_reply || kind == body::get_reply;
  reader r{in};
  field f;
  while (r.next(f)) {
    if (f.id == 1 && f.type == pb::varint) {
      out.status = status_field(f);
    } else if (with_data && f.id == 2 && f.type == pb::delimited) {
      out.has_data = true;
      out.data = f.bytes;
    } else if (kind == body::get_reply && f.id == 3 && f.type == pb::delimited) {
      out.job = f.bytes;
    } else if (kind == body::fence_reply && f.id == 3 && f.type == pb::varint) {
      out.shared = f.number;
    } else if (kind == body::fence_reply && f.id == 4 && f.type == pb::varint) {
      out.whole_namespace = f.number != 0;
    }
  }
  // A FenceReply's data is bytes: empty is the same as absent.
  if (kind == body::fence_reply && out.data.empty()) out.has_data = false;
  return r.ok() || malformed(error);
}

bool decode(std::string_view in, rank_data& out, std::string* error) {
  to_wire_default(out.proc);
  out.items.clear();
  reader r{in};
  field f;
  while (r.next(f)) {
    if (f.id == 1 && f.type == pb::delimited) {
      if (!read_proc(f.bytes, out.proc)) return malformed(error);
    } else if (f.id == 2 && f.type == pb::delimited) {
      std::uint32_t scope = 0;
      std::string_view item;
      reader sr{f.bytes};
      field g;
      while (sr.next(g)) {
        if (g.id == 1 && g.type == pb::varint) {
          scope = static_cast<std::uint32_t>(g.number);
        } else if (g.id == 2 && g.type == pb::delimited) {
          // Checked here, read later only if kept (decode_checked_info).
          if (!well_formed(msg::info, g.bytes)) return malformed(error);
          item = g.bytes;
        }
      }
      if (!sr.ok()) return malformed(error);
      out.items.emplace_back(scope, item);
    }
  }
  return r.ok() || malformed(error);
}

namespace detail {
int next_rank(std::string_view modex, std::size_t& pos, std::string_view& rank) {
  reader r{modex.substr(pos)};
  field f;
  while (r.next(f)) {
    if (f.id == 1 && f.type == pb::delimited) {
      pos = static_cast<std::size_t>(r.position() - modex.data());
      rank = f.bytes;
      return 1;
    }
  }
  pos = modex.size();
  return r.ok() ? 0 : -1;
}

bool peek_rank(std::string_view rank, std::string_view& nspace, rank_t& number, bool& has_items) {
  nspace = {};
  number = wire_default_rank;
  has_items = false;
  reader r{rank};
  field f;
  while (r.next(f)) {
    if (f.id == 1 && f.type == pb::delimited) {
      nspace = {};
      number = wire_default_rank;
      reader pr{f.bytes};
      field g;
      while (pr.next(g)) {
        if (g.id == 1 && g.type == pb::delimited) nspace = g.bytes;
        else if (g.id == 2 && g.type == pb::varint) number = static_cast<rank_t>(g.number);
      }
      if (!pr.ok()) return false;
    } else if (f.id == 2 && f.type == pb::delimited) {
      has_items = true;
    }
  }
  return r.ok();
}
}  // namespace detail

bool decode_checked_info(std::string_view in, info& out, std::string* error) { return read_info(in, out, error, 0); }

bool decode_info(std::string_view in, info& out, std::string* error) {
  return well_formed(msg::info, in) ? read_info(in, out, error, 0) : malformed(error);
}
bool decode_value(std::string_view in, value& out, std::string* error) {
  return well_formed(msg::value, in) ? read_value(in, out, error, 0) : malformed(error);
}

bool decode(std::string_view in, info_reply& out, std::string* error) {
  if (!well_formed(msg::info_reply, in)) return malformed(error);
  out = info_reply{};
  reader r{in};
  field f;
  while (r.next(f)) {
    if (f.id == 1 && f.type == pb::varint) out.status = status_field(f);
    else if (f.id == 2 && f.type == pb::delimited && !read_infos_field(f, out.info, error)) return false;
    else if (f.id == 3 && f.type == pb::delimited) out.data.assign(f.bytes.data(), f.bytes.size());
  }
  return r.ok() || malformed(error);
}

bool decode(std::string_view in, iof_data& out, std::string* error) {
  if (!well_formed(msg::iof_data, in)) return malformed(error);
  out = iof_data{};
  to_wire_default(out.source);
  reader r{in};
  field f;
  while (r.next(f)) {
    if (f.id == 1 && f.type == pb::varint) {
      out.ref = f.number;
    } else if (f.id == 2 && f.type == pb::delimited) {
      if (!read_proc(f.bytes, out.source)) return malformed(error);
    } else if (f.id == 3 && f.type == pb::varint) {
      out.channel = static_cast<std::uint32_t>(f.number);
    } else if (f.id == 4 && f.type == pb::delimited) {
      out.data.assign(f.bytes.data(), f.bytes.size());
    } else if (f.id == 5 && f.type == pb::delimited && !read_infos_field(f, out.info, error)) {
      return false;
    }
  }
  return r.ok() || malformed(error);
}

bool decode(std::string_view in, event& out, std::string* error) {
  if (!well_formed(msg::event, in)) return malformed(error);
  out = event{};
  to_wire_default(out.source);
  reader r{in};
  field f;
  while (r.next(f)) {
    if (f.id == 1 && f.type == pb::varint) {
      out.status = status_field(f);
    } else if (f.id == 2 && f.type == pb::delimited) {
      if (!read_proc(f.bytes, out.source)) return malformed(error);
    } else if (f.id == 3 && f.type == pb::varint) {
      out.range = static_cast<pmix_data_range_t>(static_cast<std::uint32_t>(f.number));
    } else if (f.id == 4 && f.type == pb::delimited) {
      if (!read_infos_field(f, out.info, error)) return false;
    }
  }
  return r.ok() || malformed(error);
}

bool decode(std::string_view in, lookup_reply& out, std::string* error) {
  if (!well_formed(msg::lookup_reply, in)) return malformed(error);
  out = lookup_reply{};
  reader r{in};
  field f;
  while (r.next(f)) {
    if (f.id == 1 && f.type == pb::varint) {
      out.status = status_field(f);
    } else if (f.id == 2 && f.type == pb::delimited) {
      auto& d = out.data.emplace_back();
      to_wire_default(d.proc);
      reader dr{f.bytes};
      field g;
      while (dr.next(g)) {
        if (g.id == 1 && g.type == pb::delimited) {
          if (!read_proc(g.bytes, d.proc)) return malformed(error);
        } else if (g.id == 2 && g.type == pb::delimited) {
          d.key.assign(g.bytes.data(), g.bytes.size());
        } else if (g.id == 3 && g.type == pb::delimited) {
          if (!read_value(g.bytes, d.val, error, 0)) return false;
        }
      }
      if (!dr.ok()) return malformed(error);
    }
  }
  return r.ok() || malformed(error);
}

namespace {
// A reply of a status (field 1) and a bytes field 2: each occurrence of the
// latter goes to `bytes`.
template <class F>
bool status_and_bytes(std::string_view in, msg m, pmix_status_t& status, F bytes, std::string* error) {
  if (!well_formed(m, in)) return malformed(error);
  reader r{in};
  field f;
  while (r.next(f)) {
    if (f.id == 1 && f.type == pb::varint) status = status_field(f);
    else if (f.id == 2 && f.type == pb::delimited) bytes(f.bytes);
  }
  return r.ok() || malformed(error);
}
}  // namespace

bool decode(std::string_view in, spawn_reply& out, std::string* error) {
  out = spawn_reply{};
  return status_and_bytes(in, msg::spawn_reply, out.status,
                          [&](std::string_view b) { out.nspace.assign(b.data(), b.size()); }, error);
}

bool decode(std::string_view in, connect_procs_reply& out, std::string* error) {
  out = connect_procs_reply{};
  return status_and_bytes(in, msg::connect_procs_reply, out.status,
                          [&](std::string_view b) { out.jobs.push_back(b); }, error);
}

}  // namespace pmix::protocol
