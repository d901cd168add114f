#include "protocol/direct.hpp"

#include <pmix_common.h>

#include <cstring>

#include "protocol/pb.hpp"

namespace pmix::protocol {
namespace {

using pb::tag_size;
using pb::varint_size;
constexpr auto varint_type = pb::varint, fixed64_type = pb::fixed64, delimited_type = pb::delimited;

// proto3 scalars: absent when zero/empty (outside a oneof).
std::size_t opt_varint_size(int field, std::uint64_t v) { return v == 0 ? 0 : tag_size(field) + varint_size(v); }
std::size_t opt_bytes_size(int field, std::string_view s) {
  return s.empty() ? 0 : tag_size(field) + varint_size(s.size()) + s.size();
}
std::size_t delimited_size(int field, std::size_t n) { return tag_size(field) + varint_size(n) + n; }
// int32 and int64 fields: a negative value is sign-extended to 64 bits.
std::uint64_t as_varint(std::int64_t v) { return static_cast<std::uint64_t>(v); }

// Writes a message part whose size is known first (the *_size functions,
// which protobuf's own length prefixes need anyway): a small one is built
// on the stack and appended in one go, a large one is written straight
// into the string, grown once. Appending field by field cost a library
// call and a capacity check per byte run; growing the string costs more
// than that for a few bytes.
class cursor {
 public:
  cursor(std::string& out, std::size_t n) : out_(out), on_stack_(n <= sizeof small_) {
    if (on_stack_) {
      p_ = small_;
    } else {
      const auto old = out.size();
      out.resize(old + n);
      p_ = &out[old];
    }
  }
  ~cursor() {
    if (on_stack_) out_.append(small_, static_cast<std::size_t>(p_ - small_));
  }
  cursor(const cursor&) = delete;
  cursor& operator=(const cursor&) = delete;

  void varint(std::uint64_t v) {
    while (v >= 0x80) {
      *p_++ = static_cast<char>((v & 0x7f) | 0x80);
      v >>= 7;
    }
    *p_++ = static_cast<char>(v);
  }
  void tag(int field, pb::wire_type type) { varint((static_cast<std::uint64_t>(field) << 3) | type); }
  void raw(const char* data, std::size_t n) {
    if (n > 0) std::memcpy(p_, data, n);
    p_ += n;
  }
  void opt_varint(int field, std::uint64_t v) {
    if (v == 0) return;
    tag(field, varint_type);
    varint(v);
  }
  void bytes_field(int field, std::string_view s) {
    tag(field, delimited_type);
    varint(s.size());
    raw(s.data(), s.size());
  }
  void opt_bytes(int field, std::string_view s) {
    if (!s.empty()) bytes_field(field, s);
  }
  void delimited_header(int field, std::size_t n) {
    tag(field, delimited_type);
    varint(n);
  }

 private:
  std::string& out_;
  bool on_stack_;
  char small_[128];
  char* p_;
};

// wire::Proc
std::size_t proc_body_size(const proc_id& p) { return opt_bytes_size(1, p.nspace) + opt_varint_size(2, p.rank); }
void proc_body(cursor& out, const proc_id& p) {
  out.opt_bytes(1, p.nspace);
  out.opt_varint(2, p.rank);
}

// The payload (oneof) part of a wire::Value, per C++ alternative; the field
// numbers are pmix.proto's.
struct payload_size {
  std::size_t operator()(const std::monostate&) const { return 0; }
  std::size_t operator()(bool) const { return tag_size(2) + 1; }
  std::size_t operator()(std::int64_t i) const { return tag_size(3) + varint_size(pb::zigzag64(i)); }
  std::size_t operator()(std::uint64_t u) const { return tag_size(4) + varint_size(u); }
  std::size_t operator()(double) const { return tag_size(5) + 8; }
  std::size_t operator()(const std::string& s) const { return delimited_size(6, s.size()); }
  std::size_t operator()(const proc_id& p) const { return delimited_size(7, proc_body_size(p)); }
  std::size_t operator()(const timeval_value& t) const {
    return delimited_size(8, opt_varint_size(1, as_varint(t.sec)) + opt_varint_size(2, as_varint(t.usec)));
  }
  std::size_t operator()(const std::shared_ptr<const envar_value>& e) const {
    return delimited_size(10, opt_bytes_size(1, e->name) + opt_bytes_size(2, e->value) +
                                  opt_varint_size(3, static_cast<unsigned char>(e->separator)));
  }
  std::size_t operator()(const std::shared_ptr<const proc_info_value>& p) const {
    return delimited_size(11, proc_info_body_size(*p));
  }
  std::size_t operator()(const std::shared_ptr<const array_value>& a) const {
    return delimited_size(9, array_body_size(*a));
  }
  std::size_t operator()(const std::shared_ptr<const info>& i) const { return delimited_size(12, info_size(*i)); }

  static std::size_t proc_info_body_size(const proc_info_value& p) {
    return delimited_size(1, proc_body_size(p.proc)) + opt_bytes_size(2, p.hostname) +
           opt_bytes_size(3, p.executable) + opt_varint_size(4, as_varint(p.pid)) +
           opt_varint_size(5, as_varint(p.exit_code)) + opt_varint_size(6, p.state);
  }
  static std::size_t array_body_size(const array_value& a) {
    std::size_t n = opt_varint_size(1, a.type);
    for (const auto& e : a.elements) n += delimited_size(2, value_size(e));
    return n;
  }
};

void value_body(cursor& out, const value& v);
void info_body(cursor& out, const info& i);

struct payload_writer {
  cursor& out;
  void operator()(const std::monostate&) const {}
  void operator()(bool b) const {
    out.tag(2, varint_type);
    out.varint(b ? 1 : 0);
  }
  void operator()(std::int64_t i) const {
    out.tag(3, varint_type);
    out.varint(pb::zigzag64(i));
  }
  void operator()(std::uint64_t u) const {
    out.tag(4, varint_type);
    out.varint(u);
  }
  void operator()(double d) const {
    out.tag(5, fixed64_type);
    std::uint64_t bits;
    std::memcpy(&bits, &d, 8);
    char buf[8];
    for (int k = 0; k < 8; ++k) buf[k] = static_cast<char>(bits >> (8 * k));
    out.raw(buf, 8);
  }
  void operator()(const std::string& s) const { out.bytes_field(6, s); }
  void operator()(const proc_id& p) const {
    out.delimited_header(7, proc_body_size(p));
    proc_body(out, p);
  }
  void operator()(const timeval_value& t) const {
    out.delimited_header(8, opt_varint_size(1, as_varint(t.sec)) + opt_varint_size(2, as_varint(t.usec)));
    out.opt_varint(1, as_varint(t.sec));
    out.opt_varint(2, as_varint(t.usec));
  }
  void operator()(const std::shared_ptr<const envar_value>& e) const {
    const auto sep = static_cast<unsigned char>(e->separator);
    out.delimited_header(10, opt_bytes_size(1, e->name) + opt_bytes_size(2, e->value) + opt_varint_size(3, sep));
    out.opt_bytes(1, e->name);
    out.opt_bytes(2, e->value);
    out.opt_varint(3, sep);
  }
  void operator()(const std::shared_ptr<const proc_info_value>& p) const {
    out.delimited_header(11, payload_size::proc_info_body_size(*p));
    out.delimited_header(1, proc_body_size(p->proc));
    proc_body(out, p->proc);
    out.opt_bytes(2, p->hostname);
    out.opt_bytes(3, p->executable);
    out.opt_varint(4, as_varint(p->pid));
    out.opt_varint(5, as_varint(p->exit_code));
    out.opt_varint(6, p->state);
  }
  void operator()(const std::shared_ptr<const array_value>& a) const {
    out.delimited_header(9, payload_size::array_body_size(*a));
    out.opt_varint(1, a->type);
    for (const auto& e : a->elements) {
      out.delimited_header(2, value_size(e));
      value_body(out, e);
    }
  }
  void operator()(const std::shared_ptr<const info>& i) const {
    out.delimited_header(12, info_size(*i));
    info_body(out, *i);
  }
};

// What to_wire(value) writes: the type (PMIX_UNDEF for a type the wire
// cannot carry, with no payload), then the payload.
bool carried(const value& v) { return value::kind_of(v.type) != value::kind::unsupported; }

void value_body(cursor& out, const value& v) {
  if (!carried(v)) return;
  out.opt_varint(1, v.type);
  std::visit(payload_writer{out}, v.data);
}

void info_body(cursor& out, std::string_view key, const value& v, std::uint32_t flags) {
  out.opt_bytes(1, key);
  out.delimited_header(2, value_size(v));
  value_body(out, v);
  out.opt_varint(3, flags);
}
void info_body(cursor& out, const info& i) { info_body(out, i.key, i.val, i.flags); }
std::size_t info_parts_size(std::string_view key, const value& v, std::uint32_t flags) {
  return opt_bytes_size(1, key) + delimited_size(2, value_size(v)) + opt_varint_size(3, flags);
}

}  // namespace

std::size_t value_size(const value& v) {
  if (!carried(v)) return 0;
  return opt_varint_size(1, v.type) + std::visit(payload_size{}, v.data);
}

std::size_t info_size(const info& i) {
  // The value is always present (to_wire sets it), even when empty.
  return info_parts_size(i.key, i.val, i.flags);
}

void append_info(std::string& out, int field_number, const info& i) {
  const auto body = info_size(i);
  cursor c{out, header_size(field_number, body) + body};
  c.delimited_header(field_number, body);
  info_body(c, i);
}

void append_info(std::string& out, int field_number, std::string_view key, const value& v,
                 std::uint32_t flags) {
  const auto body = info_parts_size(key, v, flags);
  cursor c{out, header_size(field_number, body) + body};
  c.delimited_header(field_number, body);
  info_body(c, key, v, flags);
}

void append_value_body(std::string& out, const value& v) {
  cursor c{out, value_size(v)};
  value_body(c, v);
}

void write_scoped_item(std::string& out, std::uint32_t scope, const info& i) {
  // ScopedInfo: scope = 1, info = 2.
  out.clear();
  append_uint(out, 1, scope);
  append_info(out, 2, i);
}

void append_uint(std::string& out, int field_number, std::uint64_t v) {
  cursor c{out, opt_varint_size(field_number, v)};
  c.opt_varint(field_number, v);
}

void append_info_body(std::string& out, const info& i) { append_info_body(out, i.key, i.val, i.flags); }

void append_info_body(std::string& out, std::string_view key, const value& v, std::uint32_t flags) {
  cursor c{out, info_parts_size(key, v, flags)};
  info_body(c, key, v, flags);
}

void append_proc(std::string& out, int field_number, const proc_id& p) {
  const auto body = proc_body_size(p);
  cursor c{out, delimited_size(field_number, body)};
  c.delimited_header(field_number, body);
  proc_body(c, p);
}

std::size_t proc_size(int field_number, const proc_id& p) { return delimited_size(field_number, proc_body_size(p)); }

void append_delimited(std::string& out, int field_number, std::string_view bytes) {
  cursor c{out, delimited_size(field_number, bytes.size())};
  c.bytes_field(field_number, bytes);
}

void append_header(std::string& out, int field_number, std::size_t length) {
  cursor c{out, header_size(field_number, length)};
  c.delimited_header(field_number, length);
}
std::size_t header_size(int field_number, std::size_t length) {
  return tag_size(field_number) + varint_size(length);
}
std::size_t uint_size(int field_number, std::uint64_t v) { return opt_varint_size(field_number, v); }
std::size_t bytes_size(int field_number, const std::string& s) { return opt_bytes_size(field_number, s); }
void append_bytes(std::string& out, int field_number, const std::string& s) {
  cursor c{out, opt_bytes_size(field_number, s)};
  c.opt_bytes(field_number, s);
}

}  // namespace pmix::protocol
