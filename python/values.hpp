// Python objects <-> the C API's structures, in the forms of Debian's
// python3-pmix (docs/python.md):
//   info   {'key': str|bytes, 'value': v, 'val_type': PMIX_*, 'flags': int (optional)}
//   value  {'value': v, 'val_type': PMIX_*}
//   proc   {'nspace': str|bytes, 'rank': int}
//   bytes  PMIX_BYTE_OBJECT in: bytes, bytearray, memoryview or {'bytes': b, 'size': n};
//          out: {'bytes': bytes, 'size': int}, every byte kept (NULs included)
//   array  PMIX_DATA_ARRAY {'type': PMIX_*, 'array': [element, ...]}
//
// Loading raises TypeError (wrong kind of object, missing field) or
// ValueError (out of range, too long, NUL inside a C string) with a message
// naming the field. Whatever a load fills is owned by the holder it returns
// (or by the pmix_value_t / pmix_info_t given), so a failed load leaks nothing.
// All functions here need the GIL.
#pragma once

#include <pmix_common.h>
#include <pybind11/pybind11.h>

#include <string>
#include <vector>

namespace pmixpy {

namespace py = pybind11;

// A key (str or bytes, at most PMIX_MAX_KEYLEN bytes) into a pmix_key_t.
void load_key(py::handle key, pmix_key_t out, const char* what);
// A namespace (str or bytes, at most PMIX_MAX_NSLEN bytes) into a pmix_nspace_t.
void load_nspace(py::handle ns, pmix_nspace_t out, const char* what);
// A C string without NUL bytes (str is encoded as UTF-8).
std::string load_text(py::handle text, const char* what);
// {'nspace': ..., 'rank': ...}
void load_proc(py::handle proc, pmix_proc_t& out, const char* what);
py::dict unload_proc(const pmix_proc_t& proc);
py::str unload_text(const char* text);

// The Python value `data` as a C value of `type`; `out` must be empty
// (PMIX_VALUE_CONSTRUCT) and is released with PMIx_Value_destruct.
void load_data(py::handle data, pmix_data_type_t type, pmix_value_t& out, const char* what);
// {'value': ..., 'val_type': ...} into `out` (as load_data).
void load_value(py::handle value, pmix_value_t& out, const char* what);
// The Python form of a C value's data (what 'value' holds).
py::object unload_data(const pmix_value_t& v);
// {'value': ..., 'val_type': ...}
py::dict unload_value(const pmix_value_t& v);
// {'key': ..., 'value': ..., 'val_type': ..., 'flags': ...}
py::dict unload_info(const pmix_info_t& info);
py::list unload_infos(const pmix_info_t* info, size_t ninfo);
// A byte object's Python form, {'bytes': ..., 'size': ...}.
py::dict unload_bytes(const char* bytes, size_t size);
// The bytes of bytes / bytearray / memoryview / {'bytes': b, 'size': n}.
std::string load_bytes(py::handle data, const char* what);

// A pmix_value_t released with PMIx_Value_destruct.
class owned_value {
 public:
  owned_value();
  ~owned_value();
  owned_value(const owned_value&) = delete;
  owned_value& operator=(const owned_value&) = delete;
  pmix_value_t* get() { return &value_; }

 private:
  pmix_value_t value_;
};

// An array of pmix_info_t built from a list of info dicts (None: empty),
// freed with it.
class info_array {
 public:
  info_array(py::handle list, const char* what);
  ~info_array();
  info_array(const info_array&) = delete;
  info_array& operator=(const info_array&) = delete;
  pmix_info_t* data() { return size_ == 0 ? nullptr : data_; }
  size_t size() const { return size_; }
  // Hands the array over (free it with PMIX_INFO_FREE); empty afterwards.
  pmix_info_t* release(size_t& size);

 private:
  pmix_info_t* data_ = nullptr;
  size_t size_ = 0;
};

// An array of pmix_proc_t built from a list of proc dicts (None: empty).
class proc_array {
 public:
  proc_array(py::handle list, const char* what);
  pmix_proc_t* data() { return procs_.empty() ? nullptr : procs_.data(); }
  size_t size() const { return procs_.size(); }

 private:
  std::vector<pmix_proc_t> procs_;
};

// An array of pmix_query_t built from a list of {'keys': [...],
// 'qualifiers': [info dicts]} (PMIx_Query_info's input), freed with it.
class query_array {
 public:
  query_array(py::handle list, const char* what);
  ~query_array();
  query_array(const query_array&) = delete;
  query_array& operator=(const query_array&) = delete;
  pmix_query_t* data() { return size_ == 0 ? nullptr : data_; }
  size_t size() const { return size_; }

 private:
  void fill(const py::list& items, const char* what);
  pmix_query_t* data_ = nullptr;
  size_t size_ = 0;
};
py::list unload_queries(const pmix_query_t* queries, size_t nqueries);

py::list unload_procs(const pmix_proc_t* procs, size_t nprocs);

// Results the library allocated (PMIX_INFO_FREE): their Python form, and
// freed.
py::list take_infos(pmix_info_t* info, size_t ninfo);

// A NULL-terminated array of keys from a list of str (None: NULL, which
// means "all" where the C API allows it).
class key_array {
 public:
  key_array(py::handle list, const char* what);
  char** data() { return null_ ? nullptr : pointers_.data(); }
  size_t size() const { return keys_.size(); }

 private:
  bool null_ = true;
  std::vector<std::string> keys_;
  std::vector<char*> pointers_;
};

// An array of pmix_app_t from a list of python3-pmix app dicts:
//   {'cmd': str, 'argv': [str] (default [cmd]), 'env': ["NAME=value"],
//    'cwd': str (default: this process's working directory),
//    'maxprocs': int (default 1), 'info': [info dicts]}
// Freed with it.
class app_array {
 public:
  app_array(py::handle list, const char* what);
  ~app_array();
  app_array(const app_array&) = delete;
  app_array& operator=(const app_array&) = delete;
  pmix_app_t* data() { return size_ == 0 ? nullptr : data_; }
  size_t size() const { return size_; }

 private:
  void fill(const py::list& items, const char* what);
  pmix_app_t* data_ = nullptr;
  size_t size_ = 0;
};
py::list unload_apps(const pmix_app_t* apps, size_t napps);

// The list of a Python sequence argument (None: empty). TypeError otherwise.
py::list as_list(py::handle seq, const char* what);

}  // namespace pmixpy
