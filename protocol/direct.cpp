#include "protocol/direct.hpp"

#include <cstring>

#include "protocol/pb.hpp"

namespace pmix::protocol {
namespace {

using pb::put_tag;
using pb::put_varint;
using pb::tag_size;
using pb::varint_size;
constexpr auto varint_type = pb::varint, fixed64_type = pb::fixed64, delimited_type = pb::delimited;

// proto3 scalars: absent when zero/empty (outside a oneof).
std::size_t opt_varint_size(int field, std::uint64_t v) { return v == 0 ? 0 : tag_size(field) + varint_size(v); }
std::size_t opt_bytes_size(int field, const std::string& s) {
  return s.empty() ? 0 : tag_size(field) + varint_size(s.size()) + s.size();
}
std::size_t delimited_size(int field, std::size_t n) { return tag_size(field) + varint_size(n) + n; }
// int32 and int64 fields: a negative value is sign-extended to 64 bits.
std::uint64_t as_varint(std::int64_t v) { return static_cast<std::uint64_t>(v); }

void opt_varint(std::string& out, int field, std::uint64_t v) {
  if (v == 0) return;
  put_tag(out, field, varint_type);
  put_varint(out, v);
}
void opt_bytes(std::string& out, int field, const std::string& s) {
  if (s.empty()) return;
  put_tag(out, field, delimited_type);
  put_varint(out, s.size());
  out.append(s);
}
void bytes_field(std::string& out, int field, const std::string& s) {
  put_tag(out, field, delimited_type);
  put_varint(out, s.size());
  out.append(s);
}
void delimited_header(std::string& out, int field, std::size_t n) {
  put_tag(out, field, delimited_type);
  put_varint(out, n);
}

// wire::Proc
std::size_t proc_body_size(const proc_id& p) { return opt_bytes_size(1, p.nspace) + opt_varint_size(2, p.rank); }
void proc_body(std::string& out, const proc_id& p) {
  opt_bytes(out, 1, p.nspace);
  opt_varint(out, 2, p.rank);
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

void value_body(std::string& out, const value& v);

struct payload_writer {
  std::string& out;
  void operator()(const std::monostate&) const {}
  void operator()(bool b) const {
    put_tag(out, 2, varint_type);
    out.push_back(b ? 1 : 0);
  }
  void operator()(std::int64_t i) const {
    put_tag(out, 3, varint_type);
    put_varint(out, pb::zigzag64(i));
  }
  void operator()(std::uint64_t u) const {
    put_tag(out, 4, varint_type);
    put_varint(out, u);
  }
  void operator()(double d) const {
    put_tag(out, 5, fixed64_type);
    std::uint64_t bits;
    std::memcpy(&bits, &d, 8);
    char buf[8];
    for (int k = 0; k < 8; ++k) buf[k] = static_cast<char>(bits >> (8 * k));
    out.append(buf, 8);
  }
  void operator()(const std::string& s) const { bytes_field(out, 6, s); }
  void operator()(const proc_id& p) const {
    delimited_header(out, 7, proc_body_size(p));
    proc_body(out, p);
  }
  void operator()(const timeval_value& t) const {
    delimited_header(out, 8, opt_varint_size(1, as_varint(t.sec)) + opt_varint_size(2, as_varint(t.usec)));
    opt_varint(out, 1, as_varint(t.sec));
    opt_varint(out, 2, as_varint(t.usec));
  }
  void operator()(const std::shared_ptr<const envar_value>& e) const {
    const auto sep = static_cast<unsigned char>(e->separator);
    delimited_header(out, 10, opt_bytes_size(1, e->name) + opt_bytes_size(2, e->value) + opt_varint_size(3, sep));
    opt_bytes(out, 1, e->name);
    opt_bytes(out, 2, e->value);
    opt_varint(out, 3, sep);
  }
  void operator()(const std::shared_ptr<const proc_info_value>& p) const {
    delimited_header(out, 11, payload_size::proc_info_body_size(*p));
    delimited_header(out, 1, proc_body_size(p->proc));
    proc_body(out, p->proc);
    opt_bytes(out, 2, p->hostname);
    opt_bytes(out, 3, p->executable);
    opt_varint(out, 4, as_varint(p->pid));
    opt_varint(out, 5, as_varint(p->exit_code));
    opt_varint(out, 6, p->state);
  }
  void operator()(const std::shared_ptr<const array_value>& a) const {
    delimited_header(out, 9, payload_size::array_body_size(*a));
    opt_varint(out, 1, a->type);
    for (const auto& e : a->elements) {
      delimited_header(out, 2, value_size(e));
      value_body(out, e);
    }
  }
  void operator()(const std::shared_ptr<const info>& i) const { append_info(out, 12, *i); }
};

// What to_wire(value) writes: the type (PMIX_UNDEF for a type the wire
// cannot carry, with no payload), then the payload.
bool carried(const value& v) { return value::kind_of(v.type) != value::kind::unsupported; }

void value_body(std::string& out, const value& v) {
  if (!carried(v)) return;
  opt_varint(out, 1, v.type);
  std::visit(payload_writer{out}, v.data);
}

}  // namespace

std::size_t value_size(const value& v) {
  if (!carried(v)) return 0;
  return opt_varint_size(1, v.type) + std::visit(payload_size{}, v.data);
}

std::size_t info_size(const info& i) {
  // The value is always present (to_wire sets it), even when empty.
  return opt_bytes_size(1, i.key) + delimited_size(2, value_size(i.val)) + opt_varint_size(3, i.flags);
}

void append_info(std::string& out, int field_number, const info& i) {
  delimited_header(out, field_number, info_size(i));
  append_info_body(out, i);
}

void append_value_body(std::string& out, const value& v) { value_body(out, v); }

void append_uint(std::string& out, int field_number, std::uint64_t v) { opt_varint(out, field_number, v); }

void append_info_body(std::string& out, const info& i) {
  opt_bytes(out, 1, i.key);
  delimited_header(out, 2, value_size(i.val));
  value_body(out, i.val);
  opt_varint(out, 3, i.flags);
}

void append_header(std::string& out, int field_number, std::size_t length) {
  delimited_header(out, field_number, length);
}
std::size_t header_size(int field_number, std::size_t length) {
  return tag_size(field_number) + varint_size(length);
}
std::size_t uint_size(int field_number, std::uint64_t v) { return opt_varint_size(field_number, v); }
std::size_t bytes_size(int field_number, const std::string& s) { return opt_bytes_size(field_number, s); }
void append_bytes(std::string& out, int field_number, const std::string& s) { opt_bytes(out, field_number, s); }

}  // namespace pmix::protocol
