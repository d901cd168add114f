#include "protocol/openpmix.hpp"

#include <pmix_common.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>

namespace pmix::openpmix {

// ---- varints ------------------------------------------------------------------

void put_unsigned(std::string& out, std::uint64_t v) {
  // Seven bits a byte, low first, for at most eight bytes; what is left
  // then (the top 8 bits) goes in a ninth byte as it is.
  for (int k = 0; k < 8; ++k) {
    const auto low = static_cast<std::uint8_t>(v & 0x7f);
    v >>= 7;
    if (v == 0) {
      out.push_back(static_cast<char>(low));
      return;
    }
    out.push_back(static_cast<char>(low | 0x80));
  }
  out.push_back(static_cast<char>(v & 0xff));
}

void put_be32(std::string& out, std::uint32_t v) {
  for (int shift = 24; shift >= 0; shift -= 8) out.push_back(static_cast<char>((v >> shift) & 0xff));
}

std::uint32_t get_be32(const char* p) {
  const auto* u = reinterpret_cast<const unsigned char*>(p);
  return (std::uint32_t{u[0]} << 24) | (std::uint32_t{u[1]} << 16) | (std::uint32_t{u[2]} << 8) | u[3];
}

void message_header(char (&out)[header_size], std::uint32_t index, std::uint32_t tag, std::uint32_t length) {
  const std::uint32_t fields[4] = {index, tag, length, 0};
  for (int f = 0; f < 4; ++f)
    for (int k = 0; k < 4; ++k) out[4 * f + k] = static_cast<char>((fields[f] >> (24 - 8 * k)) & 0xff);
}

void put_signed(std::string& out, std::int64_t v) {
  const auto u = static_cast<std::uint64_t>(v);
  put_unsigned(out, v < 0 ? (~u << 1) | 1 : u << 1);
}

bool get_unsigned(std::string_view in, std::size_t& pos, std::uint64_t& v) {
  v = 0;
  for (int k = 0; k < 9; ++k) {
    if (pos >= in.size()) return false;
    const auto byte = static_cast<std::uint8_t>(in[pos++]);
    if (k == 8) {
      v |= static_cast<std::uint64_t>(byte) << 56;
      return true;
    }
    v |= static_cast<std::uint64_t>(byte & 0x7f) << (7 * k);
    if ((byte & 0x80) == 0) return true;
  }
  return false;
}

bool get_signed(std::string_view in, std::size_t& pos, std::int64_t& v) {
  std::uint64_t u;
  if (!get_unsigned(in, pos, u)) return false;
  const bool negative = (u & 1) != 0;
  u >>= 1;
  v = static_cast<std::int64_t>(negative ? ~u : u);
  return true;
}

namespace {

constexpr int max_depth = 8;

void put_string(std::string& out, std::string_view s) {
  put_signed(out, static_cast<std::int64_t>(s.size()) + 1);
  out.append(s);
  out.push_back('\0');
}

void put_type(std::string& out, data_type t) { put_unsigned(out, t); }

bool encode_body(std::string& out, const value& v, int depth);

void encode_info(std::string& out, const info& i, bool& ok, int depth) {
  put_string(out, i.key);
  put_unsigned(out, i.flags);
  put_type(out, i.val.type);
  ok = ok && encode_body(out, i.val, depth);
}

bool encode_body(std::string& out, const value& v, int depth) {
  if (depth > max_depth) return false;
  switch (v.type) {
    case PMIX_UNDEF:
      return true;
    case PMIX_BOOL:
      out.push_back(v.truthy() ? 1 : 0);
      return true;
    case PMIX_BYTE: case PMIX_INT8: case PMIX_UINT8: case PMIX_PERSIST: case PMIX_SCOPE:
    case PMIX_DATA_RANGE: case PMIX_PROC_STATE: case PMIX_ALLOC_DIRECTIVE: case PMIX_JOB_STATE:
    case PMIX_LINK_STATE: case PMIX_RESBLOCK_DIRECTIVE: case PMIX_ALLOC_INHERIT:
      out.push_back(static_cast<char>(v.as_int().value_or(0) & 0xff));
      return true;
    case PMIX_STRING: case PMIX_PROC_NSPACE: {
      // A NULL string (no payload) is OpenPMIx's length 0, not "" (Open
      // MPI's pmix.locstr of an unbound rank: its ranks tell the two apart).
      const auto* s = v.as_string();
      if (s == nullptr && v.type == PMIX_STRING)
        put_signed(out, 0);
      else
        put_string(out, s != nullptr ? *s : std::string_view{});
      return true;
    }
    case PMIX_REGEX: {
      // A regex of OpenPMIx's own parsers ("pmix[...]") travels as its
      // text and NUL; anything else as a pack of one string.
      const auto* s = v.as_string();
      const std::string_view text = s != nullptr ? std::string_view{*s} : std::string_view{};
      if (text.substr(0, 4) == "pmix" && text.find('\0') == std::string_view::npos) {
        out.append(text);
        out.push_back('\0');
      } else {
        put_signed(out, 1);
        put_string(out, text);
      }
      return true;
    }
    case PMIX_SIZE: case PMIX_UINT16: case PMIX_UINT32: case PMIX_UINT64: case PMIX_PROC_RANK:
    case PMIX_INFO_DIRECTIVES: case PMIX_DATA_TYPE: case PMIX_IOF_CHANNEL: case PMIX_DEVTYPE:
    case PMIX_LOCTYPE: case PMIX_TIME: case PMIX_STOR_MEDIUM: case PMIX_STOR_ACCESS: case PMIX_STOR_PERSIST:
    case PMIX_STOR_ACCESS_TYPE:
      put_unsigned(out, static_cast<std::uint64_t>(v.as_int().value_or(0)));
      return true;
    case PMIX_INT: case PMIX_INT16: case PMIX_INT32: case PMIX_INT64: case PMIX_STATUS:
      put_signed(out, v.as_int().value_or(0));
      return true;
    case PMIX_UINT:  // as an int
      put_signed(out, static_cast<std::int32_t>(static_cast<std::uint32_t>(v.as_int().value_or(0))));
      return true;
    case PMIX_PID:  // always with its type: a 4-byte pid_t is a UINT32
      put_type(out, PMIX_UINT32);
      put_unsigned(out, static_cast<std::uint32_t>(v.as_int().value_or(0)));
      return true;
    case PMIX_FLOAT: case PMIX_DOUBLE: {
      char text[512];
      const auto* d = std::get_if<double>(&v.data);
      std::snprintf(text, sizeof text, "%f", d != nullptr ? *d : 0.0);
      put_string(out, text);
      return true;
    }
    case PMIX_TIMEVAL: {
      const auto* t = std::get_if<timeval_value>(&v.data);
      put_signed(out, t != nullptr ? t->sec : 0);
      put_signed(out, t != nullptr ? t->usec : 0);
      return true;
    }
    case PMIX_BYTE_OBJECT: case PMIX_COMPRESSED_STRING: case PMIX_COMPRESSED_BYTE_OBJECT: {
      const auto* s = v.as_string();
      const std::string_view b = s != nullptr ? std::string_view{*s} : std::string_view{};
      put_unsigned(out, b.size());
      out.append(b);
      return true;
    }
    case PMIX_PROC: {
      const auto* p = v.as_proc();
      put_string(out, p != nullptr ? p->nspace : std::string{});
      put_unsigned(out, p != nullptr ? p->rank : rank_undef);
      return true;
    }
    case PMIX_ENVAR: {
      const auto* e = std::get_if<std::shared_ptr<const envar_value>>(&v.data);
      if (e == nullptr || !*e) return false;
      put_string(out, (*e)->name);
      put_string(out, (*e)->value);
      out.push_back((*e)->separator);
      return true;
    }
    case PMIX_PROC_INFO: {
      const auto* pi = std::get_if<std::shared_ptr<const proc_info_value>>(&v.data);
      if (pi == nullptr || !*pi) return false;
      put_string(out, (*pi)->proc.nspace);
      put_unsigned(out, (*pi)->proc.rank);
      put_string(out, (*pi)->hostname);
      put_string(out, (*pi)->executable);
      put_type(out, PMIX_UINT32);
      put_unsigned(out, static_cast<std::uint32_t>((*pi)->pid));
      out.push_back(static_cast<char>((*pi)->state));
      return true;
    }
    case PMIX_POINTER:  // the address stays here: a sentinel goes
      out.push_back(1);
      return true;
    case PMIX_DATA_ARRAY: {
      const auto* a = v.as_array();
      if (a == nullptr) return false;
      put_type(out, a->type);
      put_unsigned(out, a->elements.size());
      if (a->type == PMIX_UNDEF) return true;
      bool ok = true;
      for (const auto& e : a->elements) {
        if (a->type == PMIX_INFO) {
          const auto* i = e.as_info();
          if (i == nullptr) return false;
          encode_info(out, *i, ok, depth + 1);
        } else {
          ok = ok && encode_body(out, e, depth + 1);
        }
      }
      return ok;
    }
    default:
      return false;  // topologies, statistics, geometry, ...: not carried
  }
}

// ---- decoding --------------------------------------------------------------------

struct cursor {
  std::string_view in;
  std::size_t& pos;
  std::string& error;

  bool fail(const std::string& what) {
    if (error.empty()) error = what;
    return false;
  }
  std::size_t left() const { return in.size() - pos; }
  bool byte(std::uint8_t& b) {
    if (pos >= in.size()) return fail("truncated");
    b = static_cast<std::uint8_t>(in[pos++]);
    return true;
  }
  bool unsigned_(std::uint64_t& v) { return get_unsigned(in, pos, v) || fail("truncated integer"); }
  bool signed_(std::int64_t& v) { return get_signed(in, pos, v) || fail("truncated integer"); }
  bool string(std::string& s) {
    std::int64_t n;
    if (!signed_(n)) return false;
    if (n == 0) {
      s.clear();
      return true;
    }
    if (n < 0 || static_cast<std::uint64_t>(n) > left()) return fail("a string longer than the buffer");
    if (in[pos + static_cast<std::size_t>(n) - 1] != '\0') return fail("a string without its NUL");
    s.assign(in.data() + pos, static_cast<std::size_t>(n) - 1);
    pos += static_cast<std::size_t>(n);
    return true;
  }
  bool type(data_type& t) {
    std::uint64_t u;
    if (!unsigned_(u)) return false;
    if (u > 0xffff) return fail("a type out of range");
    t = static_cast<data_type>(u);
    return true;
  }
  bool body(data_type t, value& out, int depth);
  bool info(pmix::info& out, int depth) {
    std::uint64_t flags;
    data_type t;
    if (!string(out.key) || !unsigned_(flags) || !type(t)) return false;
    out.flags = static_cast<std::uint32_t>(flags);
    return body(t, out.val, depth);
  }
};

bool cursor::body(data_type t, value& out, int depth) {
  if (depth > max_depth) return fail("arrays nested too deep");
  switch (t) {
    case PMIX_UNDEF:
      out = value{};
      return true;
    case PMIX_BOOL: {
      std::uint8_t b;
      if (!byte(b)) return false;
      out = value::boolean(b != 0);
      return true;
    }
    case PMIX_INT8: {
      std::uint8_t b;
      if (!byte(b)) return false;
      out = value::integer(t, static_cast<std::int8_t>(b));
      return true;
    }
    case PMIX_BYTE: case PMIX_UINT8: case PMIX_PERSIST: case PMIX_SCOPE: case PMIX_DATA_RANGE:
    case PMIX_PROC_STATE: case PMIX_ALLOC_DIRECTIVE: case PMIX_JOB_STATE: case PMIX_LINK_STATE:
    case PMIX_RESBLOCK_DIRECTIVE: case PMIX_ALLOC_INHERIT: case PMIX_POINTER: {
      std::uint8_t b;
      if (!byte(b)) return false;
      out = value::unsigned_(t, t == PMIX_POINTER ? 0 : b);
      return true;
    }
    case PMIX_STRING: case PMIX_PROC_NSPACE: {
      if (t == PMIX_STRING && pos < in.size() && in[pos] == '\0') {  // length 0: NULL
        ++pos;
        out = value{};
        out.type = PMIX_STRING;
        return true;
      }
      std::string s;
      if (!string(s)) return false;
      out = value::bytes(t, std::move(s));
      return true;
    }
    case PMIX_REGEX: {
      if (in.substr(pos, 4) == "pmix") {
        const auto nul = in.find('\0', pos);
        if (nul == std::string_view::npos) return fail("a regex without its NUL");
        out = value::bytes(t, std::string{in.substr(pos, nul - pos)});
        pos = nul + 1;
        return true;
      }
      std::int64_t count;
      std::string s;
      if (!signed_(count) || count != 1 || !string(s)) return fail("a malformed regex");
      out = value::bytes(t, std::move(s));
      return true;
    }
    case PMIX_SIZE: case PMIX_UINT16: case PMIX_UINT32: case PMIX_UINT64: case PMIX_PROC_RANK:
    case PMIX_INFO_DIRECTIVES: case PMIX_DATA_TYPE: case PMIX_IOF_CHANNEL: case PMIX_DEVTYPE:
    case PMIX_LOCTYPE: case PMIX_STOR_MEDIUM: case PMIX_STOR_ACCESS: case PMIX_STOR_PERSIST:
    case PMIX_STOR_ACCESS_TYPE: {
      std::uint64_t u;
      if (!unsigned_(u)) return false;
      out = value::unsigned_(t, u);
      return true;
    }
    case PMIX_TIME: {
      std::uint64_t u;
      if (!unsigned_(u)) return false;
      out = value::integer(t, static_cast<std::int64_t>(u));
      return true;
    }
    case PMIX_INT: case PMIX_INT16: case PMIX_INT32: case PMIX_INT64: case PMIX_STATUS: {
      std::int64_t i;
      if (!signed_(i)) return false;
      out = value::integer(t, i);
      return true;
    }
    case PMIX_UINT: {
      std::int64_t i;
      if (!signed_(i)) return false;
      out = value::unsigned_(t, static_cast<std::uint32_t>(static_cast<std::int32_t>(i)));
      return true;
    }
    case PMIX_PID: {
      data_type inner;
      std::uint64_t u;
      if (!type(inner) || !unsigned_(u)) return false;
      out = value::integer(t, static_cast<std::int32_t>(static_cast<std::uint32_t>(u)));
      return true;
    }
    case PMIX_FLOAT: case PMIX_DOUBLE: {
      std::string s;
      if (!string(s)) return false;
      out = value::real(t, std::strtod(s.c_str(), nullptr));
      return true;
    }
    case PMIX_TIMEVAL: {
      timeval_value tv;
      if (!signed_(tv.sec) || !signed_(tv.usec)) return false;
      out = value{t, tv};
      return true;
    }
    case PMIX_BYTE_OBJECT: case PMIX_COMPRESSED_STRING: case PMIX_COMPRESSED_BYTE_OBJECT: {
      std::uint64_t n;
      if (!unsigned_(n)) return false;
      if (n > left()) return fail("a byte object longer than the buffer");
      out = value::bytes(t, std::string{in.substr(pos, n)});
      pos += n;
      return true;
    }
    case PMIX_PROC: {
      proc_id p;
      std::uint64_t r;
      if (!string(p.nspace) || !unsigned_(r)) return false;
      p.rank = static_cast<rank_t>(r);
      out = value::proc(std::move(p));
      return true;
    }
    case PMIX_ENVAR: {
      auto e = std::make_shared<envar_value>();
      std::uint8_t sep;
      if (!string(e->name) || !string(e->value) || !byte(sep)) return false;
      e->separator = static_cast<char>(sep);
      out = value{t, std::shared_ptr<const envar_value>(std::move(e))};
      return true;
    }
    case PMIX_PROC_INFO: {
      auto pi = std::make_shared<proc_info_value>();
      std::uint64_t r, pid;
      data_type inner;
      std::uint8_t state;
      if (!string(pi->proc.nspace) || !unsigned_(r) || !string(pi->hostname) || !string(pi->executable) ||
          !type(inner) || !unsigned_(pid) || !byte(state))
        return false;
      pi->proc.rank = static_cast<rank_t>(r);
      pi->pid = static_cast<std::int32_t>(pid);
      pi->state = state;
      out = value{t, std::shared_ptr<const proc_info_value>(std::move(pi))};
      return true;
    }
    case PMIX_DATA_ARRAY: {
      array_value a;
      std::uint64_t n;
      if (!type(a.type) || !unsigned_(n)) return false;
      if (a.type != PMIX_UNDEF) {
        if (n > left()) return fail("an array longer than the buffer");
        a.elements.reserve(n);
        for (std::uint64_t k = 0; k < n; ++k) {
          value e;
          if (a.type == PMIX_INFO) {
            auto i = std::make_shared<pmix::info>();
            if (!info(*i, depth + 1)) return false;
            e = value{PMIX_INFO, std::shared_ptr<const pmix::info>(std::move(i))};
          } else if (!body(a.type, e, depth + 1)) {
            return false;
          }
          a.elements.push_back(std::move(e));
        }
      }
      out = value::array(std::move(a));
      return true;
    }
    default:
      return fail("type " + std::to_string(t) + " is not carried");
  }
}

}  // namespace

// ---- writer ----------------------------------------------------------------------

void writer::begin(data_type element, std::int32_t count) {
  if (type_ == buffer_type::fully_desc) put_type(out_, PMIX_INT32);
  put_signed(out_, count);
  if (type_ == buffer_type::fully_desc) put_type(out_, element);
}

writer& writer::command(std::uint8_t cmd) {
  begin(PMIX_COMMAND, 1);
  out_.push_back(static_cast<char>(cmd));
  return *this;
}

writer& writer::status(std::int32_t status) {
  begin(PMIX_STATUS, 1);
  put_signed(out_, status);
  return *this;
}

writer& writer::statuses(const std::vector<std::int32_t>& list) {
  begin(PMIX_STATUS, static_cast<std::int32_t>(list.size()));
  for (auto v : list) put_signed(out_, v);
  return *this;
}

writer& writer::string(std::string_view s) {
  begin(PMIX_STRING, 1);
  put_string(out_, s);
  return *this;
}

writer& writer::size(std::uint64_t n) {
  begin(PMIX_SIZE, 1);
  put_unsigned(out_, n);
  return *this;
}

writer& writer::rank(rank_t r) {
  begin(PMIX_PROC_RANK, 1);
  put_unsigned(out_, r);
  return *this;
}

writer& writer::byte_object(std::string_view bytes) {
  begin(PMIX_BYTE_OBJECT, 1);
  put_unsigned(out_, bytes.size());
  out_.append(bytes);
  return *this;
}

writer& writer::proc(const proc_id& p) {
  begin(PMIX_PROC, 1);
  put_string(out_, p.nspace);
  put_unsigned(out_, p.rank);
  return *this;
}

writer& writer::procs(const std::vector<proc_id>& list) {
  begin(PMIX_PROC, static_cast<std::int32_t>(list.size()));
  for (const auto& p : list) {
    put_string(out_, p.nspace);
    put_unsigned(out_, p.rank);
  }
  return *this;
}

bool writer::try_kval(std::string_view key, const value& v) {
  const auto mark = out_.size();
  begin(PMIX_KVAL, 1);
  put_string(out_, key);
  put_type(out_, v.type);
  if (encode_body(out_, v, 0)) return true;
  out_.resize(mark);
  return false;
}

writer& writer::kval(std::string_view key, const value& v) {
  try_kval(key, v);
  return *this;
}

writer& writer::info(const pmix::info& i) {
  begin(PMIX_INFO, 1);
  bool ok = true;
  encode_info(out_, i, ok, 0);
  return *this;
}

writer& writer::infos(const info_list& list) {
  begin(PMIX_INFO, static_cast<std::int32_t>(list.size()));
  bool ok = true;
  for (const auto& i : list) encode_info(out_, i, ok, 0);
  return *this;
}

constexpr data_type buffer_data_type = 26;  // PMIX_BUFFER (deprecated, still on the wire)

writer& writer::scope(std::uint8_t scope) {
  begin(PMIX_SCOPE, 1);
  out_.push_back(static_cast<char>(scope));
  return *this;
}

bool writer::pdata(const std::vector<std::tuple<proc_id, std::string, value>>& data) {
  const auto mark = out_.size();
  begin(PMIX_PDATA, static_cast<std::int32_t>(data.size()));
  for (const auto& [proc, key, v] : data) {
    put_string(out_, proc.nspace);
    put_unsigned(out_, proc.rank);
    put_string(out_, key);
    put_type(out_, v.type);
    if (!encode_body(out_, v, 0)) {
      out_.resize(mark);
      return false;
    }
  }
  return true;
}

writer& writer::iof_channel(std::uint16_t channels) {
  begin(PMIX_IOF_CHANNEL, 1);
  put_unsigned(out_, channels);
  return *this;
}

writer& writer::uint32(std::uint32_t v) {
  begin(PMIX_UINT32, 1);
  put_unsigned(out_, v);
  return *this;
}

writer& writer::time(std::uint64_t t) {
  begin(PMIX_TIME, 1);
  put_unsigned(out_, t);
  return *this;
}

writer& writer::alloc_directive(std::uint8_t directive) {
  begin(PMIX_ALLOC_DIRECTIVE, 1);
  out_.push_back(static_cast<char>(directive));
  return *this;
}

writer& writer::queries(const std::vector<std::pair<std::vector<std::string>, info_list>>& list) {
  begin(PMIX_QUERY, static_cast<std::int32_t>(list.size()));
  bool ok = true;
  for (const auto& [keys, qualifiers] : list) {
    put_signed(out_, static_cast<std::int64_t>(keys.size()));
    for (const auto& k : keys) put_string(out_, k);
    put_unsigned(out_, qualifiers.size());
    for (const auto& q : qualifiers) encode_info(out_, q, ok, 0);
  }
  return *this;
}

writer& writer::range(std::uint8_t range) {
  begin(PMIX_DATA_RANGE, 1);
  out_.push_back(static_cast<char>(range));
  return *this;
}

writer& writer::buffer(std::string_view bytes) {
  begin(buffer_data_type, 1);
  out_.push_back(static_cast<char>(type_));
  put_unsigned(out_, bytes.size());
  out_.append(bytes);
  return *this;
}

writer& writer::infos(const info_list& list, std::string_view key, const std::vector<function_attributes>& table) {
  begin(PMIX_INFO, static_cast<std::int32_t>(list.size() + table.size()));
  bool ok = true;
  for (const auto& i : list) encode_info(out_, i, ok, 0);
  // One INFO per function (key, directives, a DATA_ARRAY of one INFO):
  // OpenPMIx 4.2.2's pattrs prints every function of one such array with
  // the first one's attribute count, and crashes when they differ.
  for (const auto& f : table) {
    put_string(out_, key);
    put_unsigned(out_, 0);
    put_type(out_, PMIX_DATA_ARRAY);
    put_type(out_, PMIX_INFO);
    put_unsigned(out_, 1);
    put_string(out_, f.function);
    put_unsigned(out_, 0);
    put_type(out_, PMIX_DATA_ARRAY);
    put_type(out_, PMIX_REGATTR);
    put_unsigned(out_, f.attributes.size());
    // A REGATTR: name, key string, type (a DATA_TYPE), then an INT32 count
    // of description lines and the lines. OpenPMIx 4.2.2 writes a
    // DATA_TYPE as a UINT16 but reads it as an INT16 (zigzag): written
    // zigzag, its tools read the type meant.
    for (const auto& a : f.attributes) {
      put_string(out_, a.name);
      put_string(out_, a.key);
      put_signed(out_, a.type);
      put_signed(out_, static_cast<std::int64_t>(a.description.size()));
      for (const auto& line : a.description) put_string(out_, line);
    }
  }
  return *this;
}

// An APP: the command, the arguments (their count an INT, each a STRING),
// the environment (an INT32 count, then STRINGs), the directory, the number
// of processes (an INT), and a SIZE count of INFOs followed by them.
writer& writer::apps(const std::vector<app>& list) {
  begin(PMIX_APP, static_cast<std::int32_t>(list.size()));
  bool ok = true;
  for (const auto& a : list) {
    put_string(out_, a.cmd);
    put_signed(out_, static_cast<std::int64_t>(a.argv.size()));
    for (const auto& arg : a.argv) put_string(out_, arg);
    put_signed(out_, static_cast<std::int64_t>(a.env.size()));
    for (const auto& var : a.env) put_string(out_, var);
    if (a.cwd.empty())
      put_signed(out_, 0);  // no directory: OpenPMIx's NULL, not ""
    else
      put_string(out_, a.cwd);
    put_signed(out_, a.maxprocs);
    put_unsigned(out_, a.info.size());
    for (const auto& i : a.info) encode_info(out_, i, ok, 0);
  }
  return *this;
}

// ---- reader ----------------------------------------------------------------------

bool reader::begin(data_type element, std::int32_t& count) {
  cursor c{in_, pos_, error_};
  if (type_ == buffer_type::fully_desc) {
    data_type t;
    if (!c.type(t)) return false;
    if (t != PMIX_INT32) return c.fail("a pack whose count is not an INT32");
  }
  std::int64_t n;
  if (!c.signed_(n)) return false;
  if (n < 0 || n > static_cast<std::int64_t>(in_.size())) return c.fail("a count out of range");
  if (type_ == buffer_type::fully_desc) {
    data_type t;
    if (!c.type(t)) return false;
    if (t != element)
      return c.fail("a pack of type " + std::to_string(t) + " where " + std::to_string(element) + " was expected");
  }
  count = static_cast<std::int32_t>(n);
  return true;
}

template <class Read>
bool reader::single(data_type element, Read&& read) {
  std::int32_t n;
  cursor c{in_, pos_, error_};
  if (!begin(element, n)) return false;
  if (n != 1) return c.fail("a pack of " + std::to_string(n) + " where one was expected");
  return read(c);
}

bool reader::command(std::uint8_t& cmd) {
  return single(PMIX_COMMAND, [&](cursor& c) { return c.byte(cmd); });
}

bool reader::scope(std::uint8_t& scope) {
  return single(PMIX_SCOPE, [&](cursor& c) { return c.byte(scope); });
}

bool reader::range(std::uint8_t& range) {
  return single(PMIX_DATA_RANGE, [&](cursor& c) { return c.byte(range); });
}

bool reader::alloc_directive(std::uint8_t& directive) {
  return single(PMIX_ALLOC_DIRECTIVE, [&](cursor& c) { return c.byte(directive); });
}

bool reader::iof_channel(std::uint16_t& channels) {
  return single(PMIX_IOF_CHANNEL, [&](cursor& c) {
    std::uint64_t v;
    if (!c.unsigned_(v)) return false;
    if (v > 0xffff) return c.fail("an IOF channel out of range");
    channels = static_cast<std::uint16_t>(v);
    return true;
  });
}

bool reader::uint32(std::uint32_t& out) {
  std::uint64_t v;
  if (!single(PMIX_UINT32, [&](cursor& c) { return c.unsigned_(v); })) return false;
  out = static_cast<std::uint32_t>(v);
  return true;
}

bool reader::time(std::uint64_t& t) {
  return single(PMIX_TIME, [&](cursor& c) { return c.unsigned_(t); });
}

bool reader::queries(std::vector<std::pair<std::vector<std::string>, info_list>>& out) {
  std::int32_t n;
  cursor c{in_, pos_, error_};
  if (!begin(PMIX_QUERY, n)) return false;
  out.clear();
  for (std::int32_t k = 0; k < n; ++k) {
    std::int64_t nkeys;
    if (!c.signed_(nkeys)) return false;
    if (nkeys < 0 || static_cast<std::uint64_t>(nkeys) > c.left()) return c.fail("a query with too many keys");
    std::vector<std::string> keys(static_cast<std::size_t>(nkeys));
    for (auto& key : keys)
      if (!c.string(key)) return false;
    std::uint64_t nqual;
    if (!c.unsigned_(nqual)) return false;
    if (nqual > c.left()) return c.fail("a query with too many qualifiers");
    info_list qualifiers(nqual);
    for (auto& q : qualifiers)
      if (!c.info(q, 0)) return false;
    out.emplace_back(std::move(keys), std::move(qualifiers));
  }
  return true;
}

bool reader::status(std::int32_t& status) {
  std::int64_t v;
  if (!single(PMIX_STATUS, [&](cursor& c) { return c.signed_(v); })) return false;
  status = static_cast<std::int32_t>(v);
  return true;
}

bool reader::int32(std::int32_t& out) {
  std::int64_t v;
  if (!single(PMIX_INT32, [&](cursor& c) { return c.signed_(v); })) return false;
  out = static_cast<std::int32_t>(v);
  return true;
}

bool reader::string(std::string& s) {
  return single(PMIX_STRING, [&](cursor& c) { return c.string(s); });
}

bool reader::size(std::uint64_t& out) {
  return single(PMIX_SIZE, [&](cursor& c) { return c.unsigned_(out); });
}

bool reader::rank(rank_t& r) {
  std::uint64_t v;
  if (!single(PMIX_PROC_RANK, [&](cursor& c) { return c.unsigned_(v); })) return false;
  r = static_cast<rank_t>(v);
  return true;
}

bool reader::buffer(std::string& bytes) {
  return single(buffer_data_type, [&](cursor& c) {
    std::uint8_t type;
    std::uint64_t size;
    if (!c.byte(type) || !c.unsigned_(size)) return false;
    if (type != static_cast<std::uint8_t>(type_)) return c.fail("a nested buffer of another type");
    if (size > c.left()) return c.fail("a nested buffer longer than the buffer");
    bytes.assign(in_.data() + pos_, size);
    pos_ += size;
    return true;
  });
}

bool reader::byte_object(std::string& bytes) {
  value v;
  if (!single(PMIX_BYTE_OBJECT, [&](cursor& c) { return c.body(PMIX_BYTE_OBJECT, v, 0); })) return false;
  bytes = *v.as_string();
  return true;
}

bool reader::kval(std::string& key, value& v) {
  return single(PMIX_KVAL, [&](cursor& c) {
    data_type t;
    return c.string(key) && c.type(t) && c.body(t, v, 0);
  });
}

bool reader::procs(std::vector<proc_id>& out) {
  std::int32_t n;
  cursor c{in_, pos_, error_};
  if (!begin(PMIX_PROC, n)) return false;
  out.clear();
  for (std::int32_t k = 0; k < n; ++k) {
    value v;
    if (!c.body(PMIX_PROC, v, 0)) return false;
    out.push_back(*v.as_proc());
  }
  return true;
}

bool reader::infos(info_list& out) {
  std::int32_t n;
  cursor c{in_, pos_, error_};
  if (!begin(PMIX_INFO, n)) return false;
  out.clear();
  for (std::int32_t k = 0; k < n; ++k) {
    pmix::info i;
    if (!c.info(i, 0)) return false;
    out.push_back(std::move(i));
  }
  return true;
}

bool reader::apps(std::vector<app>& out) {
  std::int32_t n;
  cursor c{in_, pos_, error_};
  if (!begin(PMIX_APP, n)) return false;
  out.clear();
  auto strings = [&](std::vector<std::string>& list) {
    std::int64_t count;
    if (!c.signed_(count)) return false;
    if (count < 0 || static_cast<std::uint64_t>(count) > c.left()) return c.fail("an application with too many strings");
    list.resize(static_cast<std::size_t>(count));
    for (auto& s : list)
      if (!c.string(s)) return false;
    return true;
  };
  for (std::int32_t k = 0; k < n; ++k) {
    app a;
    std::int64_t maxprocs;
    std::uint64_t ninfo;
    if (!c.string(a.cmd) || !strings(a.argv) || !strings(a.env) || !c.string(a.cwd) || !c.signed_(maxprocs) ||
        !c.unsigned_(ninfo))
      return false;
    if (maxprocs < 0 || maxprocs > std::numeric_limits<std::int32_t>::max())
      return c.fail("an application's process count out of range");
    if (ninfo > c.left()) return c.fail("an application with too many directives");
    a.maxprocs = static_cast<int>(maxprocs);
    a.info.resize(ninfo);
    for (auto& i : a.info)
      if (!c.info(i, 0)) return false;
    out.push_back(std::move(a));
  }
  return true;
}

bool reader::pdata(std::vector<pmix::pdata>& out) {
  std::int32_t n;
  cursor c{in_, pos_, error_};
  if (!begin(PMIX_PDATA, n)) return false;
  out.clear();
  for (std::int32_t k = 0; k < n; ++k) {
    value p;
    pmix::pdata d;
    data_type t;
    if (!c.body(PMIX_PROC, p, 0) || !c.string(d.key) || !c.type(t) || !c.body(t, d.val, 0)) return false;
    d.proc = *p.as_proc();
    out.push_back(std::move(d));
  }
  return true;
}

}  // namespace pmix::openpmix
