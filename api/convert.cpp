#include "api/convert.hpp"

#include <cstring>
#include <memory>

#include "api/values_copy.hpp"

namespace pmix::convert {
namespace {

using values::dup_string;

constexpr int max_nesting = 32;

std::string bounded(const char* s, size_t max) {
  if (s == nullptr) return {};
  return std::string{s, strnlen(s, max)};
}

char* dup_bytes(const std::string& s) {
  if (s.empty()) return nullptr;
  auto* out = static_cast<char*>(std::malloc(s.size()));
  if (out != nullptr) std::memcpy(out, s.data(), s.size());
  return out;
}

// Unsigned payloads: where each type lives in pmix_value_t and its C width.
bool read_unsigned(const pmix_value_t& v, std::uint64_t& out) {
  switch (v.type) {
    case PMIX_BYTE: out = v.data.byte; return true;
    case PMIX_SIZE: out = v.data.size; return true;
    case PMIX_UINT: out = v.data.uint; return true;
    case PMIX_UINT8: out = v.data.uint8; return true;
    case PMIX_UINT16: out = v.data.uint16; return true;
    case PMIX_UINT32: out = v.data.uint32; return true;
    case PMIX_UINT64: out = v.data.uint64; return true;
    case PMIX_PROC_RANK: out = v.data.rank; return true;
    case PMIX_PERSIST: out = v.data.persist; return true;
    case PMIX_SCOPE: out = v.data.scope; return true;
    case PMIX_DATA_RANGE: out = v.data.range; return true;
    case PMIX_INFO_DIRECTIVES: out = v.data.uint32; return true;
    case PMIX_DATA_TYPE: out = v.data.uint16; return true;
    case PMIX_PROC_STATE: out = v.data.state; return true;
    case PMIX_ALLOC_DIRECTIVE: out = v.data.adir; return true;
    case PMIX_RESBLOCK_DIRECTIVE: out = v.data.rbdir; return true;
    case PMIX_ALLOC_INHERIT: out = v.data.inheritance; return true;
    case PMIX_IOF_CHANNEL: out = v.data.uint16; return true;
    case PMIX_JOB_STATE: out = v.data.jstate; return true;
    case PMIX_LINK_STATE: out = v.data.linkstate; return true;
    case PMIX_DEVTYPE: out = v.data.devtype; return true;
    case PMIX_LOCTYPE: out = v.data.locality; return true;
    case PMIX_POINTER: out = reinterpret_cast<std::uintptr_t>(v.data.ptr); return true;
    case PMIX_STOR_MEDIUM: case PMIX_STOR_ACCESS: case PMIX_STOR_PERSIST:
      out = v.data.uint64; return true;
    case PMIX_STOR_ACCESS_TYPE: out = v.data.uint16; return true;
    default: return false;
  }
}

void write_unsigned(pmix_value_t& v, std::uint64_t u) {
  switch (v.type) {
    case PMIX_BYTE: v.data.byte = static_cast<uint8_t>(u); break;
    case PMIX_SIZE: v.data.size = static_cast<size_t>(u); break;
    case PMIX_UINT: v.data.uint = static_cast<unsigned>(u); break;
    case PMIX_UINT8: v.data.uint8 = static_cast<uint8_t>(u); break;
    case PMIX_UINT16: v.data.uint16 = static_cast<uint16_t>(u); break;
    case PMIX_UINT32: v.data.uint32 = static_cast<uint32_t>(u); break;
    case PMIX_UINT64: v.data.uint64 = u; break;
    case PMIX_PROC_RANK: v.data.rank = static_cast<pmix_rank_t>(u); break;
    case PMIX_PERSIST: v.data.persist = static_cast<pmix_persistence_t>(u); break;
    case PMIX_SCOPE: v.data.scope = static_cast<pmix_scope_t>(u); break;
    case PMIX_DATA_RANGE: v.data.range = static_cast<pmix_data_range_t>(u); break;
    case PMIX_INFO_DIRECTIVES: v.data.uint32 = static_cast<uint32_t>(u); break;
    case PMIX_DATA_TYPE: v.data.uint16 = static_cast<uint16_t>(u); break;
    case PMIX_PROC_STATE: v.data.state = static_cast<pmix_proc_state_t>(u); break;
    case PMIX_ALLOC_DIRECTIVE: v.data.adir = static_cast<pmix_alloc_directive_t>(u); break;
    case PMIX_RESBLOCK_DIRECTIVE: v.data.rbdir = static_cast<pmix_resource_block_directive_t>(u); break;
    case PMIX_ALLOC_INHERIT: v.data.inheritance = static_cast<pmix_alloc_inheritance_t>(u); break;
    case PMIX_IOF_CHANNEL: v.data.uint16 = static_cast<uint16_t>(u); break;
    case PMIX_JOB_STATE: v.data.jstate = static_cast<pmix_job_state_t>(u); break;
    case PMIX_LINK_STATE: v.data.linkstate = static_cast<pmix_link_state_t>(u); break;
    case PMIX_DEVTYPE: v.data.devtype = u; break;
    case PMIX_LOCTYPE: v.data.locality = static_cast<pmix_locality_t>(u); break;
    case PMIX_POINTER: v.data.ptr = reinterpret_cast<void*>(static_cast<std::uintptr_t>(u)); break;
    case PMIX_STOR_ACCESS_TYPE: v.data.uint16 = static_cast<uint16_t>(u); break;
    default: v.data.uint64 = u; break;
  }
}

bool read_signed(const pmix_value_t& v, std::int64_t& out) {
  switch (v.type) {
    case PMIX_INT: out = v.data.integer; return true;
    case PMIX_INT8: out = v.data.int8; return true;
    case PMIX_INT16: out = v.data.int16; return true;
    case PMIX_INT32: out = v.data.int32; return true;
    case PMIX_INT64: out = v.data.int64; return true;
    case PMIX_STATUS: out = v.data.status; return true;
    case PMIX_TIME: out = static_cast<std::int64_t>(v.data.time); return true;
    case PMIX_PID: out = v.data.pid; return true;
    default: return false;
  }
}

void write_signed(pmix_value_t& v, std::int64_t i) {
  switch (v.type) {
    case PMIX_INT: v.data.integer = static_cast<int>(i); break;
    case PMIX_INT8: v.data.int8 = static_cast<int8_t>(i); break;
    case PMIX_INT16: v.data.int16 = static_cast<int16_t>(i); break;
    case PMIX_INT32: v.data.int32 = static_cast<int32_t>(i); break;
    case PMIX_INT64: v.data.int64 = i; break;
    case PMIX_STATUS: v.data.status = static_cast<pmix_status_t>(i); break;
    case PMIX_TIME: v.data.time = static_cast<time_t>(i); break;
    case PMIX_PID: v.data.pid = static_cast<pid_t>(i); break;
    default: v.data.int64 = i; break;
  }
}

// Size of one element of a data array of type t, for the scalar types kept in
// a pmix_value_t member; 0 for types whose elements are structs handled apart.
size_t scalar_size(data_type t) {
  switch (t) {
    case PMIX_BOOL: return sizeof(bool);
    case PMIX_BYTE: case PMIX_INT8: case PMIX_UINT8: case PMIX_PERSIST: case PMIX_SCOPE:
    case PMIX_DATA_RANGE: case PMIX_PROC_STATE: case PMIX_ALLOC_DIRECTIVE: case PMIX_JOB_STATE:
    case PMIX_LINK_STATE: case PMIX_RESBLOCK_DIRECTIVE: case PMIX_ALLOC_INHERIT:
      return 1;
    case PMIX_INT16: case PMIX_UINT16: case PMIX_DATA_TYPE: case PMIX_IOF_CHANNEL:
    case PMIX_LOCTYPE: case PMIX_STOR_ACCESS_TYPE:
      return 2;
    case PMIX_INT: case PMIX_INT32: case PMIX_UINT: case PMIX_UINT32: case PMIX_STATUS:
    case PMIX_PROC_RANK: case PMIX_INFO_DIRECTIVES: case PMIX_PID: case PMIX_FLOAT:
      return 4;
    case PMIX_INT64: case PMIX_UINT64: case PMIX_SIZE: case PMIX_DOUBLE: case PMIX_TIME:
    case PMIX_DEVTYPE: case PMIX_POINTER: case PMIX_STOR_MEDIUM: case PMIX_STOR_ACCESS:
    case PMIX_STOR_PERSIST:
      return 8;
    case PMIX_TIMEVAL: return sizeof(struct timeval);
    default: return 0;
  }
}

pmix_status_t value_from_c(const pmix_value_t& in, value& out, int depth);
pmix_status_t value_to_c(const value& in, pmix_value_t& out, int depth);

pmix_status_t info_from_c(const pmix_info_t& in, info& out, int depth) {
  out.key = key(in.key);
  out.flags = in.flags;
  return value_from_c(in.value, out.val, depth);
}

// Element i of a C data array as a C++ value of the array's type.
pmix_status_t element_from_c_impl(const pmix_data_array_t& a, size_t i, value& out, int depth) {
  const auto t = a.type;
  const auto* base = static_cast<const char*>(a.array);
  switch (t) {
    case PMIX_INFO: {
      auto in = std::make_shared<info>();
      auto rc = info_from_c(static_cast<const pmix_info_t*>(a.array)[i], *in, depth + 1);
      if (rc != PMIX_SUCCESS) return rc;
      out = value{PMIX_INFO, std::shared_ptr<const info>(std::move(in))};
      return PMIX_SUCCESS;
    }
    case PMIX_VALUE:
      return value_from_c(static_cast<const pmix_value_t*>(a.array)[i], out, depth + 1);
    default:
      break;
  }
  // Every other element type is read through a pmix_value_t of that type.
  pmix_value_t tmp;
  std::memset(&tmp, 0, sizeof tmp);
  tmp.type = t;
  switch (t) {
    case PMIX_STRING: tmp.data.string = static_cast<char* const*>(a.array)[i]; break;
    case PMIX_PROC: tmp.data.proc = const_cast<pmix_proc_t*>(&static_cast<const pmix_proc_t*>(a.array)[i]); break;
    case PMIX_PROC_INFO:
      tmp.data.pinfo = const_cast<pmix_proc_info_t*>(&static_cast<const pmix_proc_info_t*>(a.array)[i]);
      break;
    case PMIX_BYTE_OBJECT: case PMIX_COMPRESSED_STRING: case PMIX_REGEX:
    case PMIX_COMPRESSED_BYTE_OBJECT:
      tmp.data.bo = static_cast<const pmix_byte_object_t*>(a.array)[i];
      break;
    case PMIX_ENVAR: tmp.data.envar = static_cast<const pmix_envar_t*>(a.array)[i]; break;
    case PMIX_DATA_ARRAY:
      tmp.data.darray = const_cast<pmix_data_array_t*>(&static_cast<const pmix_data_array_t*>(a.array)[i]);
      break;
    case PMIX_PROC_NSPACE:
      tmp.data.nspace = const_cast<pmix_nspace_t*>(&static_cast<const pmix_nspace_t*>(a.array)[i]);
      break;
    default: {
      const auto size = scalar_size(t);
      if (size == 0) return PMIX_ERR_NOT_SUPPORTED;
      std::memcpy(&tmp.data, base + i * size, size);
    }
  }
  return value_from_c(tmp, out, depth + 1);
}

pmix_status_t value_from_c(const pmix_value_t& in, value& out, int depth) {
  if (depth > max_nesting) return PMIX_ERR_BAD_PARAM;
  out = value{};
  out.type = in.type;
  std::uint64_t u = 0;
  std::int64_t i = 0;
  switch (value::kind_of(in.type)) {
    case value::kind::none:
      return PMIX_SUCCESS;
    case value::kind::boolean:
      out.data = in.data.flag;
      return PMIX_SUCCESS;
    case value::kind::integer:
      read_signed(in, i);
      out.data = i;
      return PMIX_SUCCESS;
    case value::kind::unsigned_:
      read_unsigned(in, u);
      out.data = u;
      return PMIX_SUCCESS;
    case value::kind::real:
      out.data = in.type == PMIX_FLOAT ? static_cast<double>(in.data.fval) : in.data.dval;
      return PMIX_SUCCESS;
    case value::kind::bytes:
      // A NULL string (or byte object) stays NULL: no payload (std::monostate).
      // Hosts register one (Open MPI's pmix.locstr of an unbound rank) and
      // readers tell it from "".
      if (in.type == PMIX_STRING) {
        if (in.data.string != nullptr) out.data = std::string{in.data.string};
      } else if (in.type == PMIX_PROC_NSPACE) {
        if (in.data.nspace == nullptr) return PMIX_ERR_BAD_PARAM;
        out.data = nspace(*in.data.nspace);
      } else {
        if (in.data.bo.bytes == nullptr && in.data.bo.size > 0) return PMIX_ERR_BAD_PARAM;
        if (in.data.bo.bytes != nullptr) out.data = std::string{in.data.bo.bytes, in.data.bo.size};
      }
      return PMIX_SUCCESS;
    case value::kind::proc:
      if (in.data.proc == nullptr) return PMIX_ERR_BAD_PARAM;
      out.data = proc(*in.data.proc);
      return PMIX_SUCCESS;
    case value::kind::timeval:
      out.data = timeval_value{in.data.tv.tv_sec, in.data.tv.tv_usec};
      return PMIX_SUCCESS;
    case value::kind::envar:
      out.data = std::make_shared<const envar_value>(
          envar_value{in.data.envar.envar == nullptr ? "" : in.data.envar.envar,
                      in.data.envar.value == nullptr ? "" : in.data.envar.value, in.data.envar.separator});
      return PMIX_SUCCESS;
    case value::kind::proc_info: {
      if (in.data.pinfo == nullptr) return PMIX_ERR_BAD_PARAM;
      const auto& p = *in.data.pinfo;
      proc_info_value v;
      v.proc = proc(p.proc);
      v.hostname = p.hostname == nullptr ? "" : p.hostname;
      v.executable = p.executable_name == nullptr ? "" : p.executable_name;
      v.pid = p.pid;
      v.exit_code = p.exit_code;
      v.state = p.state;
      out.data = std::make_shared<const proc_info_value>(std::move(v));
      return PMIX_SUCCESS;
    }
    case value::kind::array: {
      if (in.data.darray == nullptr) return PMIX_ERR_BAD_PARAM;
      const auto& a = *in.data.darray;
      if (a.size > 0 && a.array == nullptr) return PMIX_ERR_BAD_PARAM;
      array_value arr;
      arr.type = a.type;
      arr.elements.resize(a.size);
      for (size_t k = 0; k < a.size; ++k) {
        auto rc = element_from_c_impl(a, k, arr.elements[k], depth);
        if (rc != PMIX_SUCCESS) return rc;
      }
      out.data = std::make_shared<const array_value>(std::move(arr));
      return PMIX_SUCCESS;
    }
    case value::kind::info:
    case value::kind::unsupported:
      return PMIX_ERR_NOT_SUPPORTED;
  }
  return PMIX_ERR_NOT_SUPPORTED;
}

// Fills element i of a freshly allocated C array of the array's type.
pmix_status_t element_to_c_impl(const value& v, data_type t, void* array, size_t i, int depth) {
  // These two are built in place: on failure, what was built is released,
  // so a failed element owns nothing (PMIx_Data_unpack then frees only the
  // elements before it).
  if (t == PMIX_INFO) {
    const auto* in = std::get_if<std::shared_ptr<const info>>(&v.data);
    if (in == nullptr) return PMIX_ERR_BAD_PARAM;
    auto& dst = static_cast<pmix_info_t*>(array)[i];
    const auto rc = to_c(**in, dst);
    if (rc != PMIX_SUCCESS) PMIx_Value_destruct(&dst.value);
    return rc;
  }
  if (t == PMIX_VALUE) {
    auto& dst = static_cast<pmix_value_t*>(array)[i];
    const auto rc = value_to_c(v, dst, depth + 1);
    if (rc != PMIX_SUCCESS) PMIx_Value_destruct(&dst);
    return rc;
  }
  pmix_value_t tmp;
  std::memset(&tmp, 0, sizeof tmp);
  auto rc = value_to_c(v, tmp, depth + 1);
  if (rc != PMIX_SUCCESS) {
    PMIx_Value_destruct(&tmp);  // tmp is not in the array: the caller cannot free it
    return rc;
  }
  switch (t) {
    case PMIX_STRING: static_cast<char**>(array)[i] = tmp.data.string; return PMIX_SUCCESS;
    case PMIX_PROC:
      static_cast<pmix_proc_t*>(array)[i] = *tmp.data.proc;
      std::free(tmp.data.proc);
      return PMIX_SUCCESS;
    case PMIX_PROC_INFO:
      static_cast<pmix_proc_info_t*>(array)[i] = *tmp.data.pinfo;
      std::free(tmp.data.pinfo);
      return PMIX_SUCCESS;
    case PMIX_BYTE_OBJECT: case PMIX_COMPRESSED_STRING: case PMIX_REGEX:
    case PMIX_COMPRESSED_BYTE_OBJECT:
      static_cast<pmix_byte_object_t*>(array)[i] = tmp.data.bo;
      return PMIX_SUCCESS;
    case PMIX_ENVAR: static_cast<pmix_envar_t*>(array)[i] = tmp.data.envar; return PMIX_SUCCESS;
    case PMIX_DATA_ARRAY:
      static_cast<pmix_data_array_t*>(array)[i] = *tmp.data.darray;
      std::free(tmp.data.darray);
      return PMIX_SUCCESS;
    case PMIX_PROC_NSPACE:
      std::memcpy(static_cast<pmix_nspace_t*>(array)[i], *tmp.data.nspace, sizeof(pmix_nspace_t));
      std::free(tmp.data.nspace);
      return PMIX_SUCCESS;
    default: {
      const auto size = scalar_size(t);
      if (size == 0) return PMIX_ERR_NOT_SUPPORTED;
      std::memcpy(static_cast<char*>(array) + i * size, &tmp.data, size);
      return PMIX_SUCCESS;
    }
  }
}

size_t element_bytes(data_type t) {
  switch (t) {
    case PMIX_INFO: return sizeof(pmix_info_t);
    case PMIX_VALUE: return sizeof(pmix_value_t);
    case PMIX_STRING: return sizeof(char*);
    case PMIX_PROC: return sizeof(pmix_proc_t);
    case PMIX_PROC_INFO: return sizeof(pmix_proc_info_t);
    case PMIX_BYTE_OBJECT: case PMIX_COMPRESSED_STRING: case PMIX_REGEX:
    case PMIX_COMPRESSED_BYTE_OBJECT:
      return sizeof(pmix_byte_object_t);
    case PMIX_ENVAR: return sizeof(pmix_envar_t);
    case PMIX_DATA_ARRAY: return sizeof(pmix_data_array_t);
    case PMIX_PROC_NSPACE: return sizeof(pmix_nspace_t);
    default: return scalar_size(t);
  }
}

pmix_status_t value_to_c(const value& in, pmix_value_t& out, int depth) {
  if (depth > max_nesting) return PMIX_ERR_BAD_PARAM;
  std::memset(&out, 0, sizeof out);
  out.type = in.type;
  switch (value::kind_of(in.type)) {
    case value::kind::none:
      return PMIX_SUCCESS;
    case value::kind::boolean:
      out.data.flag = std::get<bool>(in.data);
      return PMIX_SUCCESS;
    case value::kind::integer:
      write_signed(out, in.as_int().value_or(0));
      return PMIX_SUCCESS;
    case value::kind::unsigned_:
      write_unsigned(out, in.as_uint().value_or(0));
      return PMIX_SUCCESS;
    case value::kind::real: {
      const auto* d = std::get_if<double>(&in.data);
      const double x = d == nullptr ? 0.0 : *d;
      if (in.type == PMIX_FLOAT)
        out.data.fval = static_cast<float>(x);
      else
        out.data.dval = x;
      return PMIX_SUCCESS;
    }
    case value::kind::bytes: {
      const auto* s = in.as_string();
      const std::string empty;
      const auto& text = s == nullptr ? empty : *s;
      if (s == nullptr && in.type != PMIX_PROC_NSPACE) return PMIX_SUCCESS;  // NULL stays NULL
      if (in.type == PMIX_STRING) {
        out.data.string = dup_string(text);
      } else if (in.type == PMIX_PROC_NSPACE) {
        out.data.nspace = static_cast<pmix_nspace_t*>(std::calloc(1, sizeof(pmix_nspace_t)));
        std::strncpy(*out.data.nspace, text.c_str(), PMIX_MAX_NSLEN);
      } else {
        out.data.bo.bytes = dup_bytes(text);
        out.data.bo.size = text.size();
      }
      return PMIX_SUCCESS;
    }
    case value::kind::proc: {
      const auto* p = in.as_proc();
      out.data.proc = static_cast<pmix_proc_t*>(std::calloc(1, sizeof(pmix_proc_t)));
      if (p != nullptr) to_c(*p, *out.data.proc);
      return PMIX_SUCCESS;
    }
    case value::kind::timeval: {
      const auto& t = std::get<timeval_value>(in.data);
      out.data.tv.tv_sec = static_cast<time_t>(t.sec);
      out.data.tv.tv_usec = static_cast<suseconds_t>(t.usec);
      return PMIX_SUCCESS;
    }
    case value::kind::envar: {
      const auto& e = *std::get<std::shared_ptr<const envar_value>>(in.data);
      out.data.envar.envar = dup_string(e.name);
      out.data.envar.value = dup_string(e.value);
      out.data.envar.separator = e.separator;
      return PMIX_SUCCESS;
    }
    case value::kind::proc_info: {
      const auto& p = *std::get<std::shared_ptr<const proc_info_value>>(in.data);
      auto* pi = static_cast<pmix_proc_info_t*>(std::calloc(1, sizeof(pmix_proc_info_t)));
      to_c(p.proc, pi->proc);
      pi->hostname = dup_string(p.hostname);
      pi->executable_name = dup_string(p.executable);
      pi->pid = p.pid;
      pi->exit_code = p.exit_code;
      pi->state = p.state;
      out.data.pinfo = pi;
      return PMIX_SUCCESS;
    }
    case value::kind::array: {
      const auto* a = in.as_array();
      auto* da = static_cast<pmix_data_array_t*>(std::calloc(1, sizeof(pmix_data_array_t)));
      out.data.darray = da;
      if (a == nullptr) return PMIX_SUCCESS;
      da->type = a->type;
      const auto esize = element_bytes(a->type);
      if (esize == 0) return PMIX_ERR_NOT_SUPPORTED;
      da->size = a->elements.size();
      if (da->size == 0) return PMIX_SUCCESS;
      da->array = std::calloc(da->size, esize);
      for (size_t k = 0; k < da->size; ++k) {
        auto rc = element_to_c_impl(a->elements[k], a->type, da->array, k, depth);
        if (rc != PMIX_SUCCESS) return rc;
      }
      return PMIX_SUCCESS;
    }
    case value::kind::info:
    case value::kind::unsupported:
      return PMIX_ERR_NOT_SUPPORTED;
  }
  return PMIX_ERR_NOT_SUPPORTED;
}

}  // namespace

std::string key(const char* k) { return bounded(k, PMIX_MAX_KEYLEN + 1); }
std::string nspace(const char* ns) { return bounded(ns, PMIX_MAX_NSLEN + 1); }
proc_id proc(const pmix_proc_t& p) { return proc_id{nspace(p.nspace), p.rank}; }

pmix_status_t from_c(const pmix_value_t& in, value& out) { return value_from_c(in, out, 0); }

pmix_status_t from_c(const pmix_info_t* info, size_t ninfo, info_list& out) {
  out.clear();
  if (ninfo > 0 && info == nullptr) return PMIX_ERR_BAD_PARAM;
  out.resize(ninfo);
  for (size_t k = 0; k < ninfo; ++k) {
    auto rc = info_from_c(info[k], out[k], 0);
    if (rc != PMIX_SUCCESS) return rc;
  }
  return PMIX_SUCCESS;
}

pmix_status_t from_c(const pmix_proc_t* procs, size_t nprocs, std::vector<proc_id>& out) {
  out.clear();
  if (nprocs > 0 && procs == nullptr) return PMIX_ERR_BAD_PARAM;
  out.reserve(nprocs);
  for (size_t k = 0; k < nprocs; ++k) out.push_back(proc(procs[k]));
  return PMIX_SUCCESS;
}

pmix_status_t from_c(const pmix_query_t* queries, size_t nqueries, std::vector<query>& out) {
  out.clear();
  if (nqueries > 0 && queries == nullptr) return PMIX_ERR_BAD_PARAM;
  out.reserve(nqueries);
  for (size_t k = 0; k < nqueries; ++k) {
    query q;
    for (char** key = queries[k].keys; key != nullptr && *key != nullptr; ++key)
      q.keys.push_back(convert::key(*key));
    if (q.keys.empty()) return PMIX_ERR_BAD_PARAM;
    const auto rc = from_c(queries[k].qualifiers, queries[k].nqual, q.qualifiers);
    if (rc != PMIX_SUCCESS) return rc;
    out.push_back(std::move(q));
  }
  return PMIX_SUCCESS;
}

pmix_status_t to_c(const value& in, pmix_value_t& out) { return value_to_c(in, out, 0); }

pmix_status_t to_c(const pdata& in, pmix_pdata_t& out) {
  std::memset(&out, 0, sizeof out);
  to_c(in.proc, out.proc);
  std::strncpy(out.key, in.key.c_str(), PMIX_MAX_KEYLEN);
  return to_c(in.val, out.value);
}

std::vector<std::string> keys(char* const* list) {
  std::vector<std::string> out;
  for (auto k = list; k != nullptr && *k != nullptr; ++k) out.push_back(key(*k));
  return out;
}

pmix_status_t from_c(const pmix_app_t* apps, size_t napps, std::vector<app>& out) {
  out.clear();
  if (napps > 0 && apps == nullptr) return PMIX_ERR_BAD_PARAM;
  out.reserve(napps);
  for (size_t k = 0; k < napps; ++k) {
    const auto& a = apps[k];
    if (a.cmd == nullptr || a.cmd[0] == '\0') return PMIX_ERR_BAD_PARAM;
    app cpp;
    cpp.cmd = a.cmd;
    for (auto v = a.argv; v != nullptr && *v != nullptr; ++v) cpp.argv.emplace_back(*v);
    for (auto v = a.env; v != nullptr && *v != nullptr; ++v) cpp.env.emplace_back(*v);
    if (a.cwd != nullptr) cpp.cwd = a.cwd;
    cpp.maxprocs = a.maxprocs;
    const auto rc = from_c(a.info, a.ninfo, cpp.info);
    if (rc != PMIX_SUCCESS) return rc;
    out.push_back(std::move(cpp));
  }
  return PMIX_SUCCESS;
}

pmix_status_t element_from_c(data_type type, const void* array, size_t i, value& out) {
  if (array == nullptr || element_bytes(type) == 0) return PMIX_ERR_NOT_SUPPORTED;
  pmix_data_array_t a{type, i + 1, const_cast<void*>(array)};
  return element_from_c_impl(a, i, out, 0);
}

pmix_status_t element_to_c(const value& in, data_type type, void* array, size_t i) {
  if (array == nullptr || element_bytes(type) == 0) return PMIX_ERR_NOT_SUPPORTED;
  return element_to_c_impl(in, type, array, i, 0);
}

size_t element_size(data_type type) { return element_bytes(type); }

void to_c(const proc_id& in, pmix_proc_t& out) {
  std::memset(out.nspace, 0, sizeof out.nspace);
  std::strncpy(out.nspace, in.nspace.c_str(), PMIX_MAX_NSLEN);
  out.rank = in.rank;
}

pmix_status_t to_c(const info& in, pmix_info_t& out) {
  std::memset(out.key, 0, sizeof out.key);
  std::strncpy(out.key, in.key.c_str(), PMIX_MAX_KEYLEN);
  // The value written below is owned by `out`: never mark it persistent.
  out.flags = in.flags & ~static_cast<pmix_info_directives_t>(PMIX_INFO_PERSISTENT);
  return value_to_c(in.val, out.value, 0);
}

info_array::info_array(const info_list& list) : size_(list.size()) {
  if (size_ == 0) return;
  data_ = static_cast<pmix_info_t*>(std::calloc(size_, sizeof(pmix_info_t)));
  for (size_t k = 0; k < size_; ++k) to_c(list[k], data_[k]);
}

info_array::~info_array() {
  for (size_t k = 0; k < size_; ++k) PMIx_Value_destruct(&data_[k].value);
  std::free(data_);
}

proc_array::proc_array(const std::vector<proc_id>& procs) : size_(procs.size()) {
  if (size_ == 0) return;
  data_ = static_cast<pmix_proc_t*>(std::calloc(size_, sizeof(pmix_proc_t)));
  for (size_t k = 0; k < size_; ++k) to_c(procs[k], data_[k]);
}

proc_array::~proc_array() { std::free(data_); }

query_array::query_array(const std::vector<query>& queries) : size_(queries.size()) {
  if (size_ == 0) return;
  data_ = static_cast<pmix_query_t*>(std::calloc(size_, sizeof(pmix_query_t)));
  for (size_t k = 0; k < size_; ++k) {
    const auto& q = queries[k];
    data_[k].keys = static_cast<char**>(std::calloc(q.keys.size() + 1, sizeof(char*)));
    for (size_t j = 0; j < q.keys.size(); ++j) data_[k].keys[j] = strdup(q.keys[j].c_str());
    if (q.qualifiers.empty()) continue;
    data_[k].nqual = q.qualifiers.size();
    data_[k].qualifiers = static_cast<pmix_info_t*>(std::calloc(data_[k].nqual, sizeof(pmix_info_t)));
    for (size_t j = 0; j < data_[k].nqual; ++j) to_c(q.qualifiers[j], data_[k].qualifiers[j]);
  }
}

query_array::~query_array() {
  for (size_t k = 0; k < size_; ++k) PMIX_QUERY_DESTRUCT(&data_[k]);
  std::free(data_);
}

namespace {
char** argv_of(const std::vector<std::string>& items) {
  auto** out = static_cast<char**>(std::calloc(items.size() + 1, sizeof(char*)));
  for (size_t k = 0; k < items.size(); ++k) out[k] = strdup(items[k].c_str());
  return out;
}
}  // namespace

app_array::app_array(const std::vector<app>& apps) : size_(apps.size()) {
  if (size_ == 0) return;
  data_ = static_cast<pmix_app_t*>(std::calloc(size_, sizeof(pmix_app_t)));
  for (size_t k = 0; k < size_; ++k) {
    const auto& a = apps[k];
    auto& c = data_[k];
    c.cmd = strdup(a.cmd.c_str());
    c.argv = argv_of(a.argv);
    c.env = argv_of(a.env);
    c.cwd = a.cwd.empty() ? nullptr : strdup(a.cwd.c_str());
    c.maxprocs = a.maxprocs;
    if (a.info.empty()) continue;
    c.ninfo = a.info.size();
    c.info = static_cast<pmix_info_t*>(std::calloc(c.ninfo, sizeof(pmix_info_t)));
    for (size_t j = 0; j < c.ninfo; ++j) to_c(a.info[j], c.info[j]);
  }
}

app_array::~app_array() {
  for (size_t k = 0; k < size_; ++k) PMIX_APP_DESTRUCT(&data_[k]);
  std::free(data_);
}

string_array::string_array(const std::vector<std::string>& items) : data_(argv_of(items)) {}

string_array::~string_array() {
  for (auto p = data_; p != nullptr && *p != nullptr; ++p) std::free(*p);
  std::free(data_);
}

pmix_info_t* new_infos(const info_list& list) {
  if (list.empty()) return nullptr;
  pmix_info_t* out = nullptr;
  PMIX_INFO_CREATE(out, list.size());
  for (std::size_t k = 0; k < list.size(); ++k) to_c(list[k], out[k]);
  return out;
}

namespace {
struct released_infos {
  pmix_info_t* info;
  std::size_t ninfo;
};
void release_infos(void* cbdata) {
  auto* r = static_cast<released_infos*>(cbdata);
  PMIX_INFO_FREE(r->info, r->ninfo);
  delete r;
}
}  // namespace

void deliver_infos(pmix_info_cbfunc_t cbfunc, void* cbdata, pmix_status_t status, const info_list& list) {
  if (cbfunc == nullptr) return;
  auto* r = new released_infos{new_infos(list), list.size()};
  cbfunc(status, r->info, r->ninfo, cbdata, release_infos, r);
}

}  // namespace pmix::convert
