#include "python/values.hpp"

#include <pmix.h>
#include <sys/time.h>

#include <climits>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <string>

namespace pmixpy {
namespace {

[[noreturn]] void type_error(const char* what, const std::string& message) {
  throw py::type_error(std::string{what} + ": " + message);
}

[[noreturn]] void value_error(const char* what, const std::string& message) {
  throw py::value_error(std::string{what} + ": " + message);
}

std::string type_name(py::handle obj) { return py::str(py::type::handle_of(obj).attr("__name__")); }

const char* data_type_name(pmix_data_type_t type) { return PMIx_Data_type_string(type); }

// The field `name` of a mapping, or TypeError naming what was expected.
py::object field(py::handle mapping, const char* name, const char* what, const char* form) {
  if (!py::isinstance<py::dict>(mapping))
    type_error(what, std::string{"expected "} + form + ", got " + type_name(mapping));
  auto dict = py::reinterpret_borrow<py::dict>(mapping);
  if (!dict.contains(name))
    type_error(what, std::string{"'"} + name + "' missing: expected " + form);
  return dict[name];
}

py::object optional_field(py::handle mapping, const char* name) {
  auto dict = py::reinterpret_borrow<py::dict>(mapping);
  return dict.contains(name) ? py::object(dict[name]) : py::object(py::none());
}

// The bytes of str (UTF-8; lone surrogates from undecodable input are
// restored) or bytes; TypeError otherwise.
std::string raw_text(py::handle text, const char* what) {
  if (PyUnicode_Check(text.ptr())) {
    py::object encoded = py::reinterpret_steal<py::object>(
        PyUnicode_AsEncodedString(text.ptr(), "utf-8", "surrogateescape"));
    if (!encoded) throw py::error_already_set();
    return std::string{PyBytes_AS_STRING(encoded.ptr()),
                       static_cast<size_t>(PyBytes_GET_SIZE(encoded.ptr()))};
  }
  if (PyBytes_Check(text.ptr()))
    return std::string{PyBytes_AS_STRING(text.ptr()), static_cast<size_t>(PyBytes_GET_SIZE(text.ptr()))};
  if (PyByteArray_Check(text.ptr()))
    return std::string{PyByteArray_AS_STRING(text.ptr()), static_cast<size_t>(PyByteArray_GET_SIZE(text.ptr()))};
  type_error(what, "expected str or bytes, got " + type_name(text));
}

// An integer in [low, high]; bool counts as 0/1.
long long signed_in(py::handle obj, long long low, long long high, const char* what) {
  if (!PyLong_Check(obj.ptr())) type_error(what, "expected int, got " + type_name(obj));
  int overflow = 0;
  const long long v = PyLong_AsLongLongAndOverflow(obj.ptr(), &overflow);
  if (v == -1 && PyErr_Occurred()) throw py::error_already_set();
  if (overflow != 0 || v < low || v > high)
    value_error(what, py::str(obj).cast<std::string>() + " is out of range [" + std::to_string(low) +
                          ", " + std::to_string(high) + "]");
  return v;
}

unsigned long long unsigned_in(py::handle obj, unsigned long long high, const char* what) {
  if (!PyLong_Check(obj.ptr())) type_error(what, "expected int, got " + type_name(obj));
  if (PyObject_RichCompareBool(obj.ptr(), py::int_(0).ptr(), Py_LT) == 1)
    value_error(what, py::str(obj).cast<std::string>() + " is negative");
  const unsigned long long v = PyLong_AsUnsignedLongLong(obj.ptr());
  if (v == static_cast<unsigned long long>(-1) && PyErr_Occurred()) {
    PyErr_Clear();
    value_error(what, py::str(obj).cast<std::string>() + " is out of range");
  }
  if (v > high)
    value_error(what, py::str(obj).cast<std::string>() + " is out of range [0, " + std::to_string(high) + "]");
  return v;
}

double real(py::handle obj, const char* what) {
  if (!PyFloat_Check(obj.ptr()) && !PyLong_Check(obj.ptr()))
    type_error(what, "expected float or int, got " + type_name(obj));
  return obj.cast<double>();
}

bool flag(py::handle obj, const char* what) {
  if (PyBool_Check(obj.ptr())) return obj.ptr() == Py_True;
  if (PyLong_Check(obj.ptr())) return signed_in(obj, LLONG_MIN, LLONG_MAX, what) != 0;
  if (PyUnicode_Check(obj.ptr())) {
    // python3-pmix accepts "true"/"false" spelled out.
    const auto s = obj.cast<std::string>();
    if (!s.empty() && (s[0] == 't' || s[0] == 'T')) return true;
    if (!s.empty() && (s[0] == 'f' || s[0] == 'F')) return false;
    value_error(what, "'" + s + "' is not a boolean");
  }
  type_error(what, "expected bool, got " + type_name(obj));
}

// An info's flags from Python. PMIX_INFO_PERSISTENT is dropped: the arrays
// built here own their values and must release them.
pmix_info_directives_t directives(py::handle flags, const char* what) {
  return static_cast<pmix_info_directives_t>(unsigned_in(flags, UINT32_MAX, what)) &
         ~static_cast<pmix_info_directives_t>(PMIX_INFO_PERSISTENT);
}

// Bytes one element of `type` takes in a data array, for the types whose
// elements are plain scalars (0 for the others).
size_t scalar_size(pmix_data_type_t type) {
  switch (type) {
    case PMIX_BOOL: return sizeof(bool);
    case PMIX_BYTE: case PMIX_INT8: case PMIX_UINT8: case PMIX_PERSIST: case PMIX_SCOPE:
    case PMIX_DATA_RANGE: case PMIX_PROC_STATE: case PMIX_ALLOC_DIRECTIVE: case PMIX_JOB_STATE:
    case PMIX_LINK_STATE:
      return 1;
    case PMIX_INT16: case PMIX_UINT16: case PMIX_DATA_TYPE: case PMIX_IOF_CHANNEL:
    case PMIX_LOCTYPE:
      return 2;
    case PMIX_INT32: case PMIX_UINT32: case PMIX_PROC_RANK: case PMIX_INFO_DIRECTIVES:
      return 4;
    case PMIX_INT64: case PMIX_UINT64: case PMIX_DEVTYPE: return 8;
    case PMIX_INT: case PMIX_UINT: case PMIX_STATUS: return sizeof(int);
    case PMIX_SIZE: return sizeof(size_t);
    case PMIX_PID: return sizeof(pid_t);
    case PMIX_FLOAT: return sizeof(float);
    case PMIX_DOUBLE: return sizeof(double);
    case PMIX_TIME: return sizeof(time_t);
    case PMIX_TIMEVAL: return sizeof(struct timeval);
    default: return 0;
  }
}

// Loads a scalar into `out` (a C variable of the type's width).
void load_scalar(py::handle obj, pmix_data_type_t type, pmix_value_t& out, const char* what) {
  auto& d = out.data;
  switch (type) {
    case PMIX_BOOL: d.flag = flag(obj, what); break;
    case PMIX_BYTE: d.byte = static_cast<uint8_t>(unsigned_in(obj, UINT8_MAX, what)); break;
    case PMIX_INT8: d.int8 = static_cast<int8_t>(signed_in(obj, INT8_MIN, INT8_MAX, what)); break;
    case PMIX_INT16: d.int16 = static_cast<int16_t>(signed_in(obj, INT16_MIN, INT16_MAX, what)); break;
    case PMIX_INT32: d.int32 = static_cast<int32_t>(signed_in(obj, INT32_MIN, INT32_MAX, what)); break;
    case PMIX_INT64: d.int64 = static_cast<int64_t>(signed_in(obj, INT64_MIN, INT64_MAX, what)); break;
    case PMIX_INT: d.integer = static_cast<int>(signed_in(obj, INT_MIN, INT_MAX, what)); break;
    case PMIX_STATUS: d.status = static_cast<int>(signed_in(obj, INT_MIN, INT_MAX, what)); break;
    case PMIX_PID: d.pid = static_cast<pid_t>(signed_in(obj, 0, INT_MAX, what)); break;
    case PMIX_TIME: d.time = static_cast<time_t>(signed_in(obj, 0, LLONG_MAX, what)); break;
    case PMIX_UINT8: case PMIX_PERSIST: case PMIX_SCOPE: case PMIX_DATA_RANGE:
    case PMIX_PROC_STATE: case PMIX_ALLOC_DIRECTIVE: case PMIX_JOB_STATE: case PMIX_LINK_STATE:
      d.uint8 = static_cast<uint8_t>(unsigned_in(obj, UINT8_MAX, what));
      break;
    case PMIX_UINT16: case PMIX_DATA_TYPE: case PMIX_IOF_CHANNEL: case PMIX_LOCTYPE:
      d.uint16 = static_cast<uint16_t>(unsigned_in(obj, UINT16_MAX, what));
      break;
    case PMIX_UINT32: case PMIX_PROC_RANK: case PMIX_INFO_DIRECTIVES:
      d.uint32 = static_cast<uint32_t>(unsigned_in(obj, UINT32_MAX, what));
      break;
    case PMIX_UINT: d.uint = static_cast<unsigned>(unsigned_in(obj, UINT_MAX, what)); break;
    case PMIX_UINT64: d.uint64 = unsigned_in(obj, UINT64_MAX, what); break;
    case PMIX_DEVTYPE: d.devtype = unsigned_in(obj, UINT64_MAX, what); break;
    case PMIX_SIZE: d.size = static_cast<size_t>(unsigned_in(obj, SIZE_MAX, what)); break;
    case PMIX_FLOAT: d.fval = static_cast<float>(real(obj, what)); break;
    case PMIX_DOUBLE: d.dval = real(obj, what); break;
    case PMIX_TIMEVAL:
      if (py::isinstance<py::dict>(obj)) {
        d.tv.tv_sec = signed_in(field(obj, "sec", what, "{'sec': int, 'usec': int}"), 0, LLONG_MAX, what);
        d.tv.tv_usec = signed_in(field(obj, "usec", what, "{'sec': int, 'usec': int}"), 0, 999999, what);
      } else if (py::isinstance<py::tuple>(obj) && py::len(obj) == 2) {
        auto t = py::reinterpret_borrow<py::tuple>(obj);
        d.tv.tv_sec = signed_in(t[0], 0, LLONG_MAX, what);
        d.tv.tv_usec = signed_in(t[1], 0, 999999, what);
      } else {
        d.tv.tv_sec = signed_in(obj, 0, LLONG_MAX, what);
        d.tv.tv_usec = 0;
      }
      break;
    default:
      type_error(what, std::string{"type "} + data_type_name(type) + " is not a scalar");
  }
  out.type = type;
}

void load_array(py::handle obj, pmix_value_t& out, const char* what);

// Element `i` of `array` (of `type`) from a Python item: the element owns
// what it points to, so PMIx_Data_array_destruct releases it.
void load_element(py::handle item, pmix_data_type_t type, void* array, size_t i, const char* what) {
  if (const size_t size = scalar_size(type); size > 0) {
    pmix_value_t v;
    PMIX_VALUE_CONSTRUCT(&v);
    load_scalar(item, type, v, what);
    std::memcpy(static_cast<char*>(array) + i * size, &v.data, size);
    return;
  }
  switch (type) {
    case PMIX_STRING: {
      const auto text = load_text(item, what);
      static_cast<char**>(array)[i] = strdup(text.c_str());
      return;
    }
    case PMIX_PROC:
      return load_proc(item, static_cast<pmix_proc_t*>(array)[i], what);
    case PMIX_BYTE_OBJECT: case PMIX_COMPRESSED_STRING: case PMIX_REGEX:
    case PMIX_COMPRESSED_BYTE_OBJECT: {
      const auto bytes = load_bytes(item, what);
      auto& bo = static_cast<pmix_byte_object_t*>(array)[i];
      bo.bytes = static_cast<char*>(std::malloc(bytes.size() == 0 ? 1 : bytes.size()));
      std::memcpy(bo.bytes, bytes.data(), bytes.size());
      bo.size = bytes.size();
      return;
    }
    case PMIX_INFO: {
      auto& info = static_cast<pmix_info_t*>(array)[i];
      load_key(field(item, "key", what, "an info dict"), info.key, what);
      load_value(item, info.value, what);
      if (auto flags = optional_field(item, "flags"); !flags.is_none())
        info.flags |= directives(flags, what);
      return;
    }
    case PMIX_VALUE:
      return load_value(item, static_cast<pmix_value_t*>(array)[i], what);
    default:
      type_error(what, std::string{"data arrays of "} + data_type_name(type) +
                           " are not supported by the Python module");
  }
}

// A data array whose storage is released with it unless handed over.
struct owned_array {
  pmix_data_array_t array;
  owned_array() { PMIX_DATA_ARRAY_INIT(&array, PMIX_UNDEF); }
  ~owned_array() { PMIx_Data_array_destruct(&array); }
};

void load_array(py::handle obj, pmix_value_t& out, const char* what) {
  const char* form = "{'type': PMIX_*, 'array': [...]}";
  const auto type = static_cast<pmix_data_type_t>(unsigned_in(field(obj, "type", what, form), UINT16_MAX, what));
  const auto items = as_list(field(obj, "array", what, form), what);
  owned_array a;
  PMIX_DATA_ARRAY_CONSTRUCT(&a.array, items.size(), type);
  if (items.size() > 0 && a.array.array == nullptr)
    type_error(what, std::string{"data arrays of "} + data_type_name(type) + " are not supported");
  size_t i = 0;
  for (auto item : items) load_element(item, type, a.array.array, i++, what);
  const auto rc = PMIx_Value_load(&out, &a.array, PMIX_DATA_ARRAY);
  if (rc != PMIX_SUCCESS) value_error(what, std::string{"cannot load the array: "} + PMIx_Error_string(rc));
}

// A Python view of element `i` of a C data array.
// A registered attribute (PMIx_Register_attributes' answers to
// PMIX_QUERY_ATTRIBUTE_SUPPORT): {'name', 'key', 'type', 'description'}.
py::dict unload_regattr(const pmix_regattr_t& r) {
  char key[PMIX_MAX_KEYLEN + 1];
  std::memcpy(key, r.string, PMIX_MAX_KEYLEN);
  key[PMIX_MAX_KEYLEN] = '\0';
  py::list description;
  for (char** line = r.description; line != nullptr && *line != nullptr; ++line)
    description.append(unload_text(*line));
  py::dict out;
  out["name"] = unload_text(r.name == nullptr ? "" : r.name);
  out["key"] = unload_text(key);
  out["type"] = r.type;
  out["description"] = description;
  return out;
}

py::object unload_element(const pmix_data_array_t& a, size_t i) {
  if (const size_t size = scalar_size(a.type); size > 0) {
    pmix_value_t v;
    PMIX_VALUE_CONSTRUCT(&v);
    v.type = a.type;
    std::memcpy(&v.data, static_cast<const char*>(a.array) + i * size, size);
    return unload_data(v);
  }
  switch (a.type) {
    case PMIX_STRING: return unload_text(static_cast<char* const*>(a.array)[i]);
    case PMIX_PROC: return unload_proc(static_cast<const pmix_proc_t*>(a.array)[i]);
    case PMIX_BYTE_OBJECT: case PMIX_COMPRESSED_STRING: case PMIX_REGEX:
    case PMIX_COMPRESSED_BYTE_OBJECT: {
      const auto& bo = static_cast<const pmix_byte_object_t*>(a.array)[i];
      return unload_bytes(bo.bytes, bo.size);
    }
    case PMIX_INFO: return unload_info(static_cast<const pmix_info_t*>(a.array)[i]);
    case PMIX_VALUE: return unload_value(static_cast<const pmix_value_t*>(a.array)[i]);
    case PMIX_PROC_INFO: {
      pmix_value_t v;
      v.type = PMIX_PROC_INFO;
      v.data.pinfo = const_cast<pmix_proc_info_t*>(&static_cast<const pmix_proc_info_t*>(a.array)[i]);
      return unload_data(v);
    }
    case PMIX_ENVAR: {
      pmix_value_t v;
      v.type = PMIX_ENVAR;
      v.data.envar = static_cast<const pmix_envar_t*>(a.array)[i];
      return unload_data(v);
    }
    case PMIX_REGATTR: return unload_regattr(static_cast<const pmix_regattr_t*>(a.array)[i]);
    case PMIX_DATA_ARRAY: {
      pmix_value_t v;
      v.type = PMIX_DATA_ARRAY;
      v.data.darray = const_cast<pmix_data_array_t*>(&static_cast<const pmix_data_array_t*>(a.array)[i]);
      return unload_data(v);
    }
    default:
      // Something Python has no form for (topologies, ...): say what it was.
      return py::str(std::string{"<"} + data_type_name(a.type) + ">");
  }
}

}  // namespace

py::list as_list(py::handle seq, const char* what) {
  if (seq.is_none()) return py::list();
  if (py::isinstance<py::list>(seq)) return py::reinterpret_borrow<py::list>(seq);
  if (py::isinstance<py::tuple>(seq)) return py::reinterpret_steal<py::list>(PySequence_List(seq.ptr()));
  type_error(what, "expected a list, got " + type_name(seq));
}

std::string load_text(py::handle text, const char* what) {
  auto s = raw_text(text, what);
  if (s.find('\0') != std::string::npos) value_error(what, "a C string cannot hold a NUL byte");
  return s;
}

void load_key(py::handle key, pmix_key_t out, const char* what) {
  const auto k = load_text(key, what);
  if (k.empty()) value_error(what, "empty key");
  if (k.size() > PMIX_MAX_KEYLEN)
    value_error(what, "key longer than " + std::to_string(PMIX_MAX_KEYLEN) + " bytes");
  std::memset(out, 0, PMIX_MAX_KEYLEN + 1);
  std::memcpy(out, k.data(), k.size());
}

void load_nspace(py::handle ns, pmix_nspace_t out, const char* what) {
  const auto n = load_text(ns, what);
  if (n.size() > PMIX_MAX_NSLEN)
    value_error(what, "namespace longer than " + std::to_string(PMIX_MAX_NSLEN) + " bytes");
  std::memset(out, 0, PMIX_MAX_NSLEN + 1);
  std::memcpy(out, n.data(), n.size());
}

void load_proc(py::handle proc, pmix_proc_t& out, const char* what) {
  const char* form = "a proc dict {'nspace': str, 'rank': int}";
  load_nspace(field(proc, "nspace", what, form), out.nspace, what);
  out.rank = static_cast<pmix_rank_t>(unsigned_in(field(proc, "rank", what, form), UINT32_MAX, what));
}

py::str unload_text(const char* text) {
  if (text == nullptr) return py::str("");
  py::object s = py::reinterpret_steal<py::object>(
      PyUnicode_DecodeUTF8(text, static_cast<Py_ssize_t>(std::strlen(text)), "surrogateescape"));
  if (!s) throw py::error_already_set();
  return py::reinterpret_borrow<py::str>(s);
}

py::dict unload_proc(const pmix_proc_t& proc) {
  char ns[PMIX_MAX_NSLEN + 1];
  std::memcpy(ns, proc.nspace, PMIX_MAX_NSLEN);
  ns[PMIX_MAX_NSLEN] = '\0';
  py::dict d;
  d["nspace"] = unload_text(ns);
  d["rank"] = proc.rank;
  return d;
}

py::dict unload_bytes(const char* bytes, size_t size) {
  py::dict d;
  d["bytes"] = py::bytes(bytes == nullptr ? "" : bytes, bytes == nullptr ? 0 : size);
  d["size"] = bytes == nullptr ? 0 : size;
  return d;
}

std::string load_bytes(py::handle data, const char* what) {
  if (PyBytes_Check(data.ptr()) || PyByteArray_Check(data.ptr()) || PyMemoryView_Check(data.ptr())) {
    py::bytes b = py::reinterpret_steal<py::bytes>(PyBytes_FromObject(data.ptr()));
    if (!b) throw py::error_already_set();
    return std::string{PyBytes_AS_STRING(b.ptr()), static_cast<size_t>(PyBytes_GET_SIZE(b.ptr()))};
  }
  if (py::isinstance<py::dict>(data)) {
    const char* form = "bytes or {'bytes': bytes, 'size': int}";
    auto inner = field(data, "bytes", what, form);
    if (!PyBytes_Check(inner.ptr()) && !PyByteArray_Check(inner.ptr()) && !PyMemoryView_Check(inner.ptr()))
      type_error(what, "'bytes' must be bytes, got " + type_name(inner));
    auto bytes = load_bytes(inner, what);
    if (auto size = optional_field(data, "size"); !size.is_none()) {
      const auto n = unsigned_in(size, SIZE_MAX, what);
      if (n > bytes.size())
        value_error(what, "'size' " + std::to_string(n) + " is larger than the " +
                              std::to_string(bytes.size()) + " bytes given");
      bytes.resize(n);
    }
    return bytes;
  }
  type_error(what, "expected bytes or {'bytes': bytes, 'size': int}, got " + type_name(data));
}

void load_data(py::handle data, pmix_data_type_t type, pmix_value_t& out, const char* what) {
  if (scalar_size(type) > 0) return load_scalar(data, type, out, what);
  pmix_status_t rc = PMIX_SUCCESS;
  switch (type) {
    case PMIX_UNDEF:
      if (!data.is_none()) type_error(what, "PMIX_UNDEF takes None, got " + type_name(data));
      out.type = PMIX_UNDEF;
      return;
    case PMIX_STRING: {
      const auto text = load_text(data, what);
      rc = PMIx_Value_load(&out, text.c_str(), PMIX_STRING);
      break;
    }
    case PMIX_PROC_NSPACE: {
      pmix_nspace_t ns;
      load_nspace(data, ns, what);
      rc = PMIx_Value_load(&out, ns, PMIX_PROC_NSPACE);
      break;
    }
    case PMIX_PROC: {
      pmix_proc_t p;
      load_proc(data, p, what);
      rc = PMIx_Value_load(&out, &p, PMIX_PROC);
      break;
    }
    case PMIX_BYTE_OBJECT: case PMIX_COMPRESSED_STRING: case PMIX_REGEX:
    case PMIX_COMPRESSED_BYTE_OBJECT: {
      auto bytes = load_bytes(data, what);
      pmix_byte_object_t bo;
      bo.bytes = bytes.empty() ? nullptr : bytes.data();
      bo.size = bytes.size();
      rc = PMIx_Value_load(&out, &bo, type);
      break;
    }
    case PMIX_ENVAR: {
      const char* form = "{'envar': str, 'value': str, 'separator': str}";
      const auto name = load_text(field(data, "envar", what, form), what);
      const auto val = load_text(field(data, "value", what, form), what);
      auto sep_obj = field(data, "separator", what, form);
      char sep = 0;
      if (PyLong_Check(sep_obj.ptr())) {
        sep = static_cast<char>(unsigned_in(sep_obj, 255, what));
      } else {
        const auto s = load_text(sep_obj, what);
        if (s.size() > 1) value_error(what, "the separator is one character");
        sep = s.empty() ? '\0' : s[0];
      }
      pmix_envar_t e;
      e.envar = const_cast<char*>(name.c_str());
      e.value = const_cast<char*>(val.c_str());
      e.separator = sep;
      rc = PMIx_Value_load(&out, &e, PMIX_ENVAR);
      break;
    }
    case PMIX_PROC_INFO: {
      const char* form = "{'proc': proc, 'hostname': str, 'executable': str, 'pid': int, 'exitcode': int, 'state': int}";
      pmix_proc_info_t pi;
      std::memset(&pi, 0, sizeof pi);
      load_proc(field(data, "proc", what, form), pi.proc, what);
      const auto host = load_text(field(data, "hostname", what, form), what);
      auto exe_obj = optional_field(data, "executable");
      const auto exe = exe_obj.is_none() ? std::string{} : load_text(exe_obj, what);
      pi.hostname = const_cast<char*>(host.c_str());
      pi.executable_name = const_cast<char*>(exe.c_str());
      pi.pid = static_cast<pid_t>(signed_in(field(data, "pid", what, form), 0, INT_MAX, what));
      pi.exit_code = static_cast<int>(signed_in(field(data, "exitcode", what, form), INT_MIN, INT_MAX, what));
      pi.state = static_cast<pmix_proc_state_t>(unsigned_in(field(data, "state", what, form), UINT8_MAX, what));
      rc = PMIx_Value_load(&out, &pi, PMIX_PROC_INFO);
      break;
    }
    case PMIX_DATA_ARRAY:
      return load_array(data, out, what);
    default:
      type_error(what, std::string{"val_type "} + std::to_string(type) + " (" + data_type_name(type) +
                           ") is not supported by the Python module");
  }
  if (rc != PMIX_SUCCESS)
    value_error(what, std::string{"cannot load the value: "} + PMIx_Error_string(rc));
}

void load_value(py::handle value, pmix_value_t& out, const char* what) {
  const char* form = "a value dict {'value': ..., 'val_type': PMIX_*}";
  auto type_obj = field(value, "val_type", what, form);
  auto data = field(value, "value", what, form);
  const auto type = static_cast<pmix_data_type_t>(unsigned_in(type_obj, UINT16_MAX, what));
  load_data(data, type, out, what);
}

py::object unload_data(const pmix_value_t& v) {
  const auto& d = v.data;
  switch (v.type) {
    case PMIX_UNDEF: return py::none();
    case PMIX_BOOL: return py::bool_(d.flag);
    case PMIX_BYTE: return py::int_(d.byte);
    case PMIX_STRING: return unload_text(d.string);
    case PMIX_SIZE: return py::int_(d.size);
    case PMIX_PID: return py::int_(d.pid);
    case PMIX_INT: return py::int_(d.integer);
    case PMIX_INT8: return py::int_(d.int8);
    case PMIX_INT16: return py::int_(d.int16);
    case PMIX_INT32: return py::int_(d.int32);
    case PMIX_INT64: return py::int_(d.int64);
    case PMIX_UINT: return py::int_(d.uint);
    case PMIX_UINT8: case PMIX_PERSIST: case PMIX_SCOPE: case PMIX_DATA_RANGE: case PMIX_PROC_STATE:
    case PMIX_ALLOC_DIRECTIVE: case PMIX_JOB_STATE: case PMIX_LINK_STATE:
      return py::int_(d.uint8);
    case PMIX_UINT16: case PMIX_DATA_TYPE: case PMIX_IOF_CHANNEL: case PMIX_LOCTYPE:
      return py::int_(d.uint16);
    case PMIX_UINT32: case PMIX_INFO_DIRECTIVES: return py::int_(d.uint32);
    case PMIX_UINT64: return py::int_(d.uint64);
    case PMIX_DEVTYPE: return py::int_(d.devtype);
    case PMIX_FLOAT: return py::float_(d.fval);
    case PMIX_DOUBLE: return py::float_(d.dval);
    case PMIX_TIMEVAL: {
      py::dict tv;
      tv["sec"] = static_cast<long long>(d.tv.tv_sec);
      tv["usec"] = static_cast<long long>(d.tv.tv_usec);
      return std::move(tv);
    }
    case PMIX_TIME: return py::int_(static_cast<long long>(d.time));
    case PMIX_STATUS: return py::int_(d.status);
    case PMIX_PROC_RANK: return py::int_(d.rank);
    case PMIX_PROC_NSPACE: {
      if (d.nspace == nullptr) return py::str("");
      char ns[PMIX_MAX_NSLEN + 1];
      std::memcpy(ns, *d.nspace, PMIX_MAX_NSLEN);
      ns[PMIX_MAX_NSLEN] = '\0';
      return unload_text(ns);
    }
    case PMIX_PROC:
      if (d.proc == nullptr) return py::none();
      return unload_proc(*d.proc);
    case PMIX_BYTE_OBJECT: case PMIX_COMPRESSED_STRING: case PMIX_REGEX:
    case PMIX_COMPRESSED_BYTE_OBJECT:
      return unload_bytes(d.bo.bytes, d.bo.size);
    case PMIX_ENVAR: {
      py::dict e;
      e["envar"] = unload_text(d.envar.envar);
      e["value"] = unload_text(d.envar.value);
      e["separator"] = std::string(d.envar.separator == '\0' ? 0 : 1, d.envar.separator);
      return std::move(e);
    }
    case PMIX_PROC_INFO: {
      if (d.pinfo == nullptr) return py::none();
      py::dict pi;
      pi["proc"] = unload_proc(d.pinfo->proc);
      pi["hostname"] = unload_text(d.pinfo->hostname);
      pi["executable"] = unload_text(d.pinfo->executable_name);
      pi["pid"] = d.pinfo->pid;
      pi["exitcode"] = d.pinfo->exit_code;
      pi["state"] = d.pinfo->state;
      return std::move(pi);
    }
    case PMIX_REGATTR:
      if (d.ptr == nullptr) return py::none();
      return unload_regattr(*static_cast<const pmix_regattr_t*>(d.ptr));
    case PMIX_DATA_ARRAY: {
      if (d.darray == nullptr) return py::none();
      py::list items;
      for (size_t i = 0; i < d.darray->size && d.darray->array != nullptr; ++i)
        items.append(unload_element(*d.darray, i));
      py::dict a;
      a["type"] = d.darray->type;
      a["array"] = items;
      return std::move(a);
    }
    default:
      return py::str(std::string{"<"} + data_type_name(v.type) + ">");
  }
}

py::dict unload_value(const pmix_value_t& v) {
  py::dict d;
  d["value"] = unload_data(v);
  d["val_type"] = v.type;
  return d;
}

py::dict unload_info(const pmix_info_t& info) {
  char key[PMIX_MAX_KEYLEN + 1];
  std::memcpy(key, info.key, PMIX_MAX_KEYLEN);
  key[PMIX_MAX_KEYLEN] = '\0';
  py::dict d;
  d["key"] = unload_text(key);
  d["flags"] = info.flags;
  d["value"] = unload_data(info.value);
  d["val_type"] = info.value.type;
  return d;
}

py::list unload_infos(const pmix_info_t* info, size_t ninfo) {
  py::list out;
  for (size_t k = 0; info != nullptr && k < ninfo; ++k) out.append(unload_info(info[k]));
  return out;
}

owned_value::owned_value() { PMIX_VALUE_CONSTRUCT(&value_); }
owned_value::~owned_value() { PMIx_Value_destruct(&value_); }

info_array::info_array(py::handle list, const char* what) {
  const auto items = as_list(list, what);
  if (items.size() == 0) return;
  PMIX_INFO_CREATE(data_, items.size());
  if (data_ == nullptr) throw std::bad_alloc();
  size_ = items.size();
  try {
    size_t i = 0;
    for (auto item : items) {
      auto& info = data_[i++];
      load_key(field(item, "key", what, "an info dict {'key': ..., 'value': ..., 'val_type': ...}"),
               info.key, what);
      load_value(item, info.value, what);
      if (auto flags = optional_field(item, "flags"); !flags.is_none())
        info.flags |= directives(flags, what);
    }
  } catch (...) {
    PMIX_INFO_FREE(data_, size_);  // a throwing constructor runs no destructor
    throw;
  }
}

info_array::~info_array() {
  if (data_ != nullptr) PMIX_INFO_FREE(data_, size_);
}

pmix_info_t* info_array::release(size_t& size) {
  auto* out = data_;
  size = size_;
  data_ = nullptr;
  size_ = 0;
  return out;
}

proc_array::proc_array(py::handle list, const char* what) {
  const auto items = as_list(list, what);
  procs_.resize(items.size());
  size_t i = 0;
  for (auto item : items) load_proc(item, procs_[i++], what);
}

query_array::query_array(py::handle list, const char* what) {
  const auto items = as_list(list, what);
  if (items.size() == 0) return;
  PMIX_QUERY_CREATE(data_, items.size());
  if (data_ == nullptr) throw std::bad_alloc();
  size_ = items.size();
  try {
    fill(items, what);
  } catch (...) {
    PMIX_QUERY_FREE(data_, size_);  // a throwing constructor runs no destructor
    throw;
  }
}

void query_array::fill(const py::list& items, const char* what) {
  size_t i = 0;
  const char* form = "a query dict {'keys': [str], 'qualifiers': [info dicts]}";
  for (auto item : items) {
    auto& q = data_[i++];
    const auto keys = as_list(field(item, "keys", what, form), what);
    q.keys = static_cast<char**>(std::calloc(keys.size() + 1, sizeof(char*)));
    size_t k = 0;
    for (auto key : keys) {
      pmix_key_t checked;
      load_key(key, checked, what);
      q.keys[k++] = strdup(checked);
    }
    auto qualifiers = optional_field(item, "qualifiers");
    info_array quals{qualifiers, what};
    if (quals.size() > 0) {
      PMIX_INFO_CREATE(q.qualifiers, quals.size());
      q.nqual = quals.size();
      for (size_t j = 0; j < quals.size(); ++j) PMIx_Info_xfer(&q.qualifiers[j], &quals.data()[j]);
    }
  }
}

query_array::~query_array() {
  if (data_ != nullptr) PMIX_QUERY_FREE(data_, size_);
}

py::list unload_queries(const pmix_query_t* queries, size_t nqueries) {
  py::list out;
  for (size_t i = 0; queries != nullptr && i < nqueries; ++i) {
    py::list keys;
    for (char** k = queries[i].keys; k != nullptr && *k != nullptr; ++k) keys.append(unload_text(*k));
    py::dict q;
    q["keys"] = keys;
    q["qualifiers"] = unload_infos(queries[i].qualifiers, queries[i].nqual);
    out.append(q);
  }
  return out;
}

}  // namespace pmixpy

namespace pmixpy {

py::list unload_procs(const pmix_proc_t* procs, size_t nprocs) {
  py::list out;
  for (size_t k = 0; procs != nullptr && k < nprocs; ++k) out.append(unload_proc(procs[k]));
  return out;
}

py::list take_infos(pmix_info_t* info, size_t ninfo) {
  if (info == nullptr) return py::list();
  struct release {
    pmix_info_t* info;
    size_t n;
    ~release() { PMIX_INFO_FREE(info, n); }
  } guard{info, ninfo};
  return unload_infos(info, ninfo);
}

key_array::key_array(py::handle list, const char* what) {
  if (list.is_none()) return;
  null_ = false;
  for (auto key : as_list(list, what)) {
    pmix_key_t checked;
    load_key(key, checked, what);
    keys_.emplace_back(checked);
  }
  for (auto& k : keys_) pointers_.push_back(k.data());
  pointers_.push_back(nullptr);
}

namespace {

// A list of str as a NULL-terminated argv the app owns.
char** load_argv(py::handle list, const char* what) {
  char** argv = nullptr;
  for (auto item : as_list(list, what)) {
    const auto text = load_text(item, what);
    if (pmix_argv_append_nosize(&argv, text.c_str()) != PMIX_SUCCESS) {
      PMIX_ARGV_FREE(argv);
      throw std::bad_alloc();
    }
  }
  return argv;
}

}  // namespace

app_array::app_array(py::handle list, const char* what) {
  const auto items = as_list(list, what);
  if (items.size() == 0) return;
  PMIX_APP_CREATE(data_, items.size());
  if (data_ == nullptr) throw std::bad_alloc();
  size_ = items.size();
  try {
    fill(items, what);
  } catch (...) {
    PMIX_APP_FREE(data_, size_);  // a throwing constructor runs no destructor
    throw;
  }
}

app_array::~app_array() {
  if (data_ != nullptr) PMIX_APP_FREE(data_, size_);
}

void app_array::fill(const py::list& items, const char* what) {
  const char* form =
      "an app dict {'cmd': str, 'argv': [str], 'env': [str], 'cwd': str, 'maxprocs': int, 'info': [...]}";
  size_t i = 0;
  for (auto item : items) {
    auto& app = data_[i++];
    const auto cmd = load_text(field(item, "cmd", what, form), what);
    app.cmd = strdup(cmd.c_str());
    auto argv = optional_field(item, "argv");
    app.argv = load_argv(argv.is_none() ? py::list(py::make_tuple(cmd)) : argv, what);
    app.env = load_argv(optional_field(item, "env"), what);
    auto cwd = optional_field(item, "cwd");
    if (cwd.is_none()) cwd = py::module_::import("os").attr("getcwd")();
    app.cwd = strdup(load_text(cwd, what).c_str());
    auto maxprocs = optional_field(item, "maxprocs");
    app.maxprocs = maxprocs.is_none() ? 1 : static_cast<int>(signed_in(maxprocs, INT_MIN, INT_MAX, what));
    info_array info{optional_field(item, "info"), what};
    app.info = info.release(app.ninfo);
  }
}

py::list unload_apps(const pmix_app_t* apps, size_t napps) {
  py::list out;
  for (size_t i = 0; apps != nullptr && i < napps; ++i) {
    const auto& a = apps[i];
    py::list argv, env;
    for (char** p = a.argv; p != nullptr && *p != nullptr; ++p) argv.append(unload_text(*p));
    for (char** p = a.env; p != nullptr && *p != nullptr; ++p) env.append(unload_text(*p));
    py::dict app;
    app["cmd"] = unload_text(a.cmd);
    app["argv"] = argv;
    app["env"] = env;
    app["cwd"] = unload_text(a.cwd);
    app["maxprocs"] = a.maxprocs;
    app["info"] = unload_infos(a.info, a.ninfo);
    out.append(app);
  }
  return out;
}

}  // namespace pmixpy
