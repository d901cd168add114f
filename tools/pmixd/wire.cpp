#include "wire.hpp"

#include <pmix.h>

#include <cstdlib>
#include <cstring>

namespace pmixd {
namespace {

class packer {
 public:
  packer() { PMIX_DATA_BUFFER_CONSTRUCT(&buf_); }
  packer(const packer&) = delete;
  packer& operator=(const packer&) = delete;
  ~packer() { PMIX_DATA_BUFFER_DESTRUCT(&buf_); }

  void put(const void* src, int32_t n, pmix_data_type_t type) {
    if (ok_ && n > 0) ok_ = PMIx_Data_pack(nullptr, &buf_, const_cast<void*>(src), n, type) == PMIX_SUCCESS;
  }
  void put_u32(uint32_t v) { put(&v, 1, PMIX_UINT32); }
  void put_string(const std::string& s) {
    const char* p = s.c_str();
    put(&p, 1, PMIX_STRING);
  }
  // The bytes, or an empty string if a pack failed (never a valid message:
  // every message starts with a value).
  std::string bytes() {
    if (!ok_) return {};
    pmix_byte_object_t bo;
    PMIX_BYTE_OBJECT_CONSTRUCT(&bo);
    if (PMIx_Data_unload(&buf_, &bo) != PMIX_SUCCESS) return {};
    std::string out(bo.bytes != nullptr ? bo.bytes : "", bo.size);
    PMIX_BYTE_OBJECT_DESTRUCT(&bo);
    return out;
  }

 private:
  pmix_data_buffer_t buf_;
  bool ok_ = true;
};

class unpacker {
 public:
  explicit unpacker(const std::string& bytes) {
    PMIX_DATA_BUFFER_CONSTRUCT(&buf_);
    if (bytes.empty()) {
      ok_ = false;
      return;
    }
    pmix_byte_object_t bo;
    bo.bytes = static_cast<char*>(std::malloc(bytes.size()));
    bo.size = bytes.size();
    std::memcpy(bo.bytes, bytes.data(), bytes.size());
    ok_ = PMIx_Data_load(&buf_, &bo) == PMIX_SUCCESS;
  }
  unpacker(const unpacker&) = delete;
  unpacker& operator=(const unpacker&) = delete;
  ~unpacker() { PMIX_DATA_BUFFER_DESTRUCT(&buf_); }

  bool get(void* dest, int32_t n, pmix_data_type_t type) {
    if (!ok_) return false;
    if (n == 0) return true;
    int32_t got = n;
    ok_ = PMIx_Data_unpack(nullptr, &buf_, dest, &got, type) == PMIX_SUCCESS && got == n;
    return ok_;
  }
  bool get_u32(uint32_t& v) { return get(&v, 1, PMIX_UINT32); }
  bool get_string(std::string& s) {
    char* p = nullptr;
    if (!get(&p, 1, PMIX_STRING)) return false;
    s = p != nullptr ? p : "";
    std::free(p);
    return true;
  }
  // Reads `n` infos into `out` (copies).
  bool get_infos(uint32_t n, pmixrun::info_array& out) {
    if (n == 0) return ok_;
    if (n > 100000) return ok_ = false;
    pmix_info_t* infos = nullptr;
    PMIX_INFO_CREATE(infos, n);
    const bool good = get(infos, static_cast<int32_t>(n), PMIX_INFO);
    if (good) out.add_copies(infos, n);
    PMIX_INFO_FREE(infos, n);
    return good;
  }

 private:
  pmix_data_buffer_t buf_;
  bool ok_ = true;
};

constexpr uint32_t all_keys_mark = UINT32_MAX;

}  // namespace

std::string pack_store_request(const pmix_proc_t& proc, const std::vector<std::string>* keys,
                               const pmix_info_t info[], std::size_t ninfo) {
  packer p;
  p.put(&proc, 1, PMIX_PROC);
  p.put_u32(keys == nullptr ? all_keys_mark : static_cast<uint32_t>(keys->size()));
  if (keys != nullptr)
    for (const auto& k : *keys) p.put_string(k);
  p.put_u32(static_cast<uint32_t>(ninfo));
  p.put(info, static_cast<int32_t>(ninfo), PMIX_INFO);
  return p.bytes();
}

bool unpack_store_request(const std::string& bytes, store_request& out) {
  unpacker u(bytes);
  uint32_t nkeys = 0;
  if (!u.get(&out.proc, 1, PMIX_PROC) || !u.get_u32(nkeys)) return false;
  out.all_keys = nkeys == all_keys_mark;
  if (out.all_keys) nkeys = 0;
  if (nkeys > 100000) return false;
  for (uint32_t k = 0; k < nkeys; ++k) {
    std::string key;
    if (!u.get_string(key)) return false;
    out.keys.push_back(std::move(key));
  }
  uint32_t ninfo = 0;
  return u.get_u32(ninfo) && u.get_infos(ninfo, out.info);
}

std::string pack_pdata(const pmix_pdata_t pdata[], std::size_t n) {
  packer p;
  p.put_u32(static_cast<uint32_t>(n));
  for (std::size_t k = 0; k < n; ++k) {
    p.put(&pdata[k].proc, 1, PMIX_PROC);
    p.put_string(std::string(pdata[k].key, strnlen(pdata[k].key, PMIX_MAX_KEYLEN)));
    p.put(&pdata[k].value, 1, PMIX_VALUE);
  }
  return p.bytes();
}

bool unpack_pdata(const std::string& bytes, pmix_pdata_t*& pdata, std::size_t& n) {
  pdata = nullptr;
  n = 0;
  unpacker u(bytes);
  uint32_t count = 0;
  if (!u.get_u32(count) || count > 100000) return false;
  if (count == 0) return true;
  PMIX_PDATA_CREATE(pdata, count);
  n = count;
  for (uint32_t k = 0; k < count; ++k) {
    std::string key;
    pmix_value_t* v = nullptr;
    bool good = u.get(&pdata[k].proc, 1, PMIX_PROC) && u.get_string(key);
    if (good) {
      PMIX_VALUE_CREATE(v, 1);
      good = u.get(v, 1, PMIX_VALUE);
    }
    if (good) {
      PMIX_LOAD_KEY(pdata[k].key, key.c_str());
      good = PMIx_Value_xfer(&pdata[k].value, v) == PMIX_SUCCESS;
    }
    if (v != nullptr) PMIX_VALUE_RELEASE(v);
    if (!good) {
      PMIX_PDATA_FREE(pdata, n);
      pdata = nullptr;
      n = 0;
      return false;
    }
  }
  return true;
}

std::string pack_event(pmix_status_t code, const pmix_proc_t& source, pmix_data_range_t range,
                       const pmix_info_t info[], std::size_t ninfo) {
  packer p;
  p.put(&code, 1, PMIX_STATUS);
  p.put(&source, 1, PMIX_PROC);
  p.put(&range, 1, PMIX_DATA_RANGE);
  p.put_u32(static_cast<uint32_t>(ninfo));
  p.put(info, static_cast<int32_t>(ninfo), PMIX_INFO);
  return p.bytes();
}

bool unpack_event(const std::string& bytes, event_message& out) {
  unpacker u(bytes);
  uint32_t ninfo = 0;
  return u.get(&out.code, 1, PMIX_STATUS) && u.get(&out.source, 1, PMIX_PROC) &&
         u.get(&out.range, 1, PMIX_DATA_RANGE) && u.get_u32(ninfo) && u.get_infos(ninfo, out.info);
}

}  // namespace pmixd
