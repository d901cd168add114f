// Protobuf's binary encoding (varints, tags, length-delimited fields), the
// few primitives pmix.proto needs. The client library encodes and decodes its
// messages with these instead of libprotobuf: loading libprotobuf-lite (and
// with it libstdc++) cost every client process more than PMIx_Init itself
// (docs/performance.md, "Client start-up cost"). The server keeps the generated
// classes, but for the commits and fences it reads with these
// (protocol::read_request); tests/protocol/messages_test.cpp checks both
// sides agree byte for byte.
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

namespace pmix::protocol::pb {

enum wire_type : std::uint32_t { varint = 0, fixed64 = 1, delimited = 2, fixed32 = 5 };

inline std::size_t varint_size(std::uint64_t v) {
  std::size_t n = 1;
  while (v >= 0x80) {
    v >>= 7;
    ++n;
  }
  return n;
}

inline void put_varint(std::string& out, std::uint64_t v) {
  char buf[10];
  std::size_t n = 0;
  while (v >= 0x80) {
    buf[n++] = static_cast<char>((v & 0x7f) | 0x80);
    v >>= 7;
  }
  buf[n++] = static_cast<char>(v);
  out.append(buf, n);
}

inline std::size_t tag_size(int field) { return varint_size(static_cast<std::uint64_t>(field) << 3); }
inline void put_tag(std::string& out, int field, wire_type type) {
  put_varint(out, (static_cast<std::uint64_t>(field) << 3) | type);
}

// sint32 / sint64 fields.
inline std::uint64_t zigzag64(std::int64_t v) {
  return (static_cast<std::uint64_t>(v) << 1) ^ static_cast<std::uint64_t>(v >> 63);
}
inline std::int64_t unzigzag64(std::uint64_t v) {
  return static_cast<std::int64_t>((v >> 1) ^ (~(v & 1) + 1));
}
inline std::uint32_t zigzag32(std::int32_t v) {
  return (static_cast<std::uint32_t>(v) << 1) ^ static_cast<std::uint32_t>(v >> 31);
}
inline std::int32_t unzigzag32(std::uint32_t v) {
  return static_cast<std::int32_t>((v >> 1) ^ (~(v & 1) + 1));
}

// One field of a message, as read: its number and wire type, and its value
// (`number` for varint and fixed fields, `bytes` for length-delimited ones).
struct field {
  std::uint32_t id = 0;
  wire_type type = varint;
  std::uint64_t number = 0;
  std::string_view bytes;
};

// Reads the fields of one message in order. next() is false at the end of
// the message and on malformed input; ok() tells the two apart. Groups (wire
// types 3 and 4, never written by pmix.proto) count as malformed.
class reader {
 public:
  explicit reader(std::string_view in) : p_(in.data()), end_(in.data() + in.size()) {}

  [[gnu::always_inline]] inline bool next(field& f) {
    if (p_ == end_) return false;
    std::uint32_t tag;
    // Fast path: pmix.proto's tags (fields 1 to 15) take one byte.
    if (static_cast<std::uint8_t>(*p_) < 0x80) {
      tag = static_cast<std::uint8_t>(*p_++);
    } else if (!get_varint32(tag)) {
      return fail();
    }
    if ((tag >> 3) == 0) return fail();
    f.id = static_cast<std::uint32_t>(tag >> 3);
    switch (tag & 7) {
      case varint:
        f.type = varint;
        if (p_ != end_ && static_cast<std::uint8_t>(*p_) < 0x80) {
          f.number = static_cast<std::uint8_t>(*p_++);
          return true;
        }
        return get_varint(f.number) || fail();
      case fixed64:
        f.type = fixed64;
        return get_fixed(f.number, 8) || fail();
      case fixed32:
        f.type = fixed32;
        return get_fixed(f.number, 4) || fail();
      case delimited: {
        f.type = delimited;
        std::uint32_t n;
        if (p_ != end_ && static_cast<std::uint8_t>(*p_) < 0x80) n = static_cast<std::uint8_t>(*p_++);
        else if (!get_varint32(n)) return fail();
        if (n > static_cast<std::uint64_t>(end_ - p_)) return fail();
        f.bytes = std::string_view{p_, static_cast<std::size_t>(n)};
        p_ += n;
        return true;
      }
      default:
        return fail();
    }
  }
  bool ok() const { return ok_; }
  // Where the next field starts.
  const char* position() const { return p_; }

 private:
  bool fail() {
    ok_ = false;
    p_ = end_;
    return false;
  }
  bool get_varint(std::uint64_t& v) {
    v = 0;
    for (int shift = 0; shift < 70 && p_ != end_; shift += 7) {
      const auto b = static_cast<std::uint8_t>(*p_++);
      if (shift < 64) v |= static_cast<std::uint64_t>(b & 0x7f) << shift;
      if ((b & 0x80) == 0) return true;
    }
    return false;
  }
  // Tags and lengths, as protobuf reads them: at most 5 bytes, cut to 32 bits.
  bool get_varint32(std::uint32_t& v) {
    std::uint64_t wide = 0;
    for (int shift = 0; shift < 35 && p_ != end_; shift += 7) {
      const auto b = static_cast<std::uint8_t>(*p_++);
      wide |= static_cast<std::uint64_t>(b & 0x7f) << shift;
      if ((b & 0x80) == 0) {
        v = static_cast<std::uint32_t>(wide);
        return true;
      }
    }
    return false;
  }
  bool get_fixed(std::uint64_t& v, std::size_t n) {
    if (static_cast<std::size_t>(end_ - p_) < n) return false;
    v = 0;
    for (std::size_t i = 0; i < n; ++i) v |= static_cast<std::uint64_t>(static_cast<std::uint8_t>(p_[i])) << (8 * i);
    p_ += n;
    return true;
  }

  const char* p_;
  const char* end_;
  bool ok_ = true;
};

}  // namespace pmix::protocol::pb
