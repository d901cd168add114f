#include "protocol/codec.hpp"

#include <pmix_common.h>

#include "protocol/direct.hpp"
#include "protocol/framing.hpp"

namespace pmix::protocol {
namespace {

constexpr int max_nesting = 32;

void set_error(std::string* error, std::string text) {
  if (error != nullptr) *error = std::move(text);
}

bool value_from_wire(const wire::Value& in, value& out, std::string* error, int depth);

bool info_from_wire(const wire::Info& in, info& out, std::string* error, int depth) {
  out.key = in.key();
  out.flags = in.flags();
  if (!in.has_value()) {
    out.val = value{};
    return true;
  }
  return value_from_wire(in.value(), out.val, error, depth);
}

bool value_from_wire(const wire::Value& in, value& out, std::string* error, int depth) {
  if (depth > max_nesting) {
    set_error(error, "values nested too deeply");
    return false;
  }
  if (in.type() > 0xffff) {
    set_error(error, "data type out of range");
    return false;
  }
  const auto type = static_cast<data_type>(in.type());
  out.type = type;
  const auto want = value::kind_of(type);
  auto mismatch = [&] {
    set_error(error, "payload does not match data type " + std::to_string(type));
    return false;
  };
  switch (want) {
    case value::kind::none:
      if (in.data_case() != wire::Value::DATA_NOT_SET) return mismatch();
      out.data = std::monostate{};
      return true;
    case value::kind::unsupported:
      set_error(error, "data type " + std::to_string(type) + " cannot travel on the wire");
      return false;
    case value::kind::boolean:
      if (in.data_case() != wire::Value::kFlag) return mismatch();
      out.data = in.flag();
      return true;
    case value::kind::integer:
      if (in.data_case() != wire::Value::kInteger) return mismatch();
      out.data = static_cast<std::int64_t>(in.integer());
      return true;
    case value::kind::unsigned_:
      if (in.data_case() != wire::Value::kUnsigned) return mismatch();
      out.data = static_cast<std::uint64_t>(in.unsigned_());
      return true;
    case value::kind::real:
      if (in.data_case() != wire::Value::kReal) return mismatch();
      out.data = in.real();
      return true;
    case value::kind::bytes:
      // No payload: a NULL string or byte object.
      if (in.data_case() == wire::Value::DATA_NOT_SET) return out.data = std::monostate{}, true;
      if (in.data_case() != wire::Value::kBytes) return mismatch();
      out.data = in.bytes();
      return true;
    case value::kind::proc:
      if (in.data_case() != wire::Value::kProc) return mismatch();
      out.data = from_wire(in.proc());
      return true;
    case value::kind::timeval:
      if (in.data_case() != wire::Value::kTimeval) return mismatch();
      out.data = timeval_value{in.timeval().sec(), in.timeval().usec()};
      return true;
    case value::kind::envar: {
      if (in.data_case() != wire::Value::kEnvar) return mismatch();
      const auto& e = in.envar();
      out.data = std::make_shared<const envar_value>(
          envar_value{e.name(), e.value(), static_cast<char>(e.separator())});
      return true;
    }
    case value::kind::proc_info: {
      if (in.data_case() != wire::Value::kProcInfo) return mismatch();
      const auto& p = in.proc_info();
      proc_info_value v;
      v.proc = from_wire(p.proc());
      v.hostname = p.hostname();
      v.executable = p.executable();
      v.pid = p.pid();
      v.exit_code = p.exit_code();
      v.state = static_cast<std::uint8_t>(p.state());
      out.data = std::make_shared<const proc_info_value>(std::move(v));
      return true;
    }
    case value::kind::array: {
      if (in.data_case() != wire::Value::kArray) return mismatch();
      const auto& a = in.array();
      if (a.type() > 0xffff) return mismatch();
      array_value arr;
      arr.type = static_cast<data_type>(a.type());
      arr.elements.resize(static_cast<std::size_t>(a.elements_size()));
      for (int i = 0; i < a.elements_size(); ++i) {
        if (!value_from_wire(a.elements(i), arr.elements[static_cast<std::size_t>(i)], error,
                             depth + 1))
          return false;
        if (arr.type != PMIX_VALUE && arr.elements[static_cast<std::size_t>(i)].type != arr.type) {
          set_error(error, "data array element of the wrong type");
          return false;
        }
      }
      out.data = std::make_shared<const array_value>(std::move(arr));
      return true;
    }
    case value::kind::info: {
      if (in.data_case() != wire::Value::kInfo) return mismatch();
      auto i = std::make_shared<info>();
      if (!info_from_wire(in.info(), *i, error, depth + 1)) return false;
      out.data = std::shared_ptr<const info>(std::move(i));
      return true;
    }
  }
  return mismatch();
}

struct value_writer {
  wire::Value* out;
  void operator()(const std::monostate&) const {}
  void operator()(bool b) const { out->set_flag(b); }
  void operator()(std::int64_t i) const { out->set_integer(i); }
  void operator()(std::uint64_t u) const { out->set_unsigned_(u); }
  void operator()(double d) const { out->set_real(d); }
  void operator()(const std::string& s) const { out->set_bytes(s); }
  void operator()(const proc_id& p) const { to_wire(p, out->mutable_proc()); }
  void operator()(const timeval_value& t) const {
    out->mutable_timeval()->set_sec(t.sec);
    out->mutable_timeval()->set_usec(t.usec);
  }
  void operator()(const std::shared_ptr<const envar_value>& box) const {
    const auto& e = *box;
    auto* w = out->mutable_envar();
    w->set_name(e.name);
    w->set_value(e.value);
    w->set_separator(static_cast<unsigned char>(e.separator));
  }
  void operator()(const std::shared_ptr<const proc_info_value>& box) const {
    const auto& p = *box;
    auto* w = out->mutable_proc_info();
    to_wire(p.proc, w->mutable_proc());
    w->set_hostname(p.hostname);
    w->set_executable(p.executable);
    w->set_pid(p.pid);
    w->set_exit_code(p.exit_code);
    w->set_state(p.state);
  }
  void operator()(const std::shared_ptr<const array_value>& a) const {
    auto* w = out->mutable_array();
    w->set_type(a->type);
    for (const auto& e : a->elements) to_wire(e, w->add_elements());
  }
  void operator()(const std::shared_ptr<const info>& i) const { to_wire(*i, out->mutable_info()); }
};

}  // namespace

void to_wire(const proc_id& p, wire::Proc* out) {
  out->set_nspace(p.nspace);
  out->set_rank(p.rank);
}

proc_id from_wire(const wire::Proc& p) { return proc_id{p.nspace(), p.rank()}; }

void to_wire(const value& v, wire::Value* out) {
  const auto k = value::kind_of(v.type);
  if (k == value::kind::unsupported) {
    out->set_type(PMIX_UNDEF);
    return;
  }
  out->set_type(v.type);
  std::visit(value_writer{out}, v.data);
}

void to_wire(const info& i, wire::Info* out) {
  out->set_key(i.key);
  out->set_flags(i.flags);
  to_wire(i.val, out->mutable_value());
}

void to_wire(const info_list& list, google::protobuf::RepeatedPtrField<wire::Info>* out) {
  out->Reserve(out->size() + static_cast<int>(list.size()));
  for (const auto& i : list) to_wire(i, out->Add());
}

bool from_wire(const wire::Value& in, value& out, std::string* error) {
  return value_from_wire(in, out, error, 0);
}

bool from_wire(const wire::Info& in, info& out, std::string* error) {
  return info_from_wire(in, out, error, 0);
}

bool from_wire(const google::protobuf::RepeatedPtrField<wire::Info>& in, info_list& out,
               std::string* error) {
  out.clear();
  out.resize(static_cast<std::size_t>(in.size()));
  for (int i = 0; i < in.size(); ++i)
    if (!info_from_wire(in.Get(i), out[static_cast<std::size_t>(i)], error, 0)) return false;
  return true;
}

std::string to_frame(const wire::Envelope& e) {
  const auto size = e.ByteSizeLong();
  std::string out;
  out.resize(frame_header_size + size);
  const auto n = static_cast<std::uint32_t>(size);
  out[0] = static_cast<char>((n >> 24) & 0xff);
  out[1] = static_cast<char>((n >> 16) & 0xff);
  out[2] = static_cast<char>((n >> 8) & 0xff);
  out[3] = static_cast<char>(n & 0xff);
  e.SerializeWithCachedSizesToArray(reinterpret_cast<std::uint8_t*>(&out[frame_header_size]));
  return out;
}

std::string fence_reply(pmix_status_t status, std::string_view data, bool whole_namespace) {
  wire::FenceReply r;
  r.set_status(status);
  if (!data.empty()) r.set_data(data.data(), data.size());
  r.set_whole_namespace(whole_namespace);
  return r.SerializeAsString();
}

std::string fence_reply_shared(pmix_status_t status, std::uint64_t size, bool whole_namespace) {
  wire::FenceReply r;
  r.set_status(status);
  r.set_shared(size);
  r.set_whole_namespace(whole_namespace);
  return r.SerializeAsString();
}

std::string connect_procs_reply_body(pmix_status_t status, std::string_view jobs) {
  wire::ConnectProcsReply r;
  r.set_status(status);
  std::string out = r.SerializeAsString();
  out.append(jobs.data(), jobs.size());  // repeated field 2, already encoded
  return out;
}

bool from_wire(const wire::App& in, app& out, std::string* error) {
  out = app{};
  out.cmd = in.cmd();
  out.argv.assign(in.argv().begin(), in.argv().end());
  out.env.assign(in.env().begin(), in.env().end());
  out.cwd = in.cwd();
  out.maxprocs = in.maxprocs();
  return from_wire(in.info(), out.info, error);
}

bool canonical_item(const wire::ScopedInfo& in, std::string& bytes, std::string& key,
                    std::string* error) {
  info item;
  if (!from_wire(in.info(), item, error)) return false;
  write_scoped_item(bytes, in.scope(), item);
  key = std::move(item.key);
  return true;
}

void to_wire(const pdata& d, wire::PData* out) {
  to_wire(d.proc, out->mutable_proc());
  out->set_key(d.key);
  to_wire(d.val, out->mutable_value());
}

bool parse(std::string_view payload, wire::Envelope& out) {
  return out.ParseFromArray(payload.data(), static_cast<int>(payload.size()));
}

void append_length_delimited(std::string& out, int field_number, std::string_view bytes) {
  auto put_varint = [&out](std::uint64_t v) {
    while (v >= 0x80) {
      out.push_back(static_cast<char>((v & 0x7f) | 0x80));
      v >>= 7;
    }
    out.push_back(static_cast<char>(v));
  };
  put_varint((static_cast<std::uint64_t>(field_number) << 3) | 2u);
  put_varint(bytes.size());
  out.append(bytes.data(), bytes.size());
}

}  // namespace pmix::protocol
