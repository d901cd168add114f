#include "api/data_pack.hpp"

#include <pmix.h>

#include <cstring>

#include "api/convert.hpp"
#include "api/values_copy.hpp"
#include "protocol/direct.hpp"
#include "protocol/messages.hpp"

namespace pmix::pack {
namespace {

constexpr std::size_t header = 4;

pmix_status_t reserve(pmix_data_buffer_t& b, std::size_t extra) {
  if (b.bytes_used + extra <= b.bytes_allocated) return PMIX_SUCCESS;
  std::size_t want = b.bytes_allocated == 0 ? 256 : b.bytes_allocated;
  while (want < b.bytes_used + extra) want *= 2;
  const std::size_t read_at = b.unpack_ptr != nullptr ? static_cast<std::size_t>(b.unpack_ptr - b.base_ptr) : 0;
  auto* grown = static_cast<char*>(std::realloc(b.base_ptr, want));
  if (grown == nullptr) return PMIX_ERR_NOMEM;
  b.base_ptr = grown;
  b.bytes_allocated = want;
  b.unpack_ptr = grown + read_at;
  b.pack_ptr = grown + b.bytes_used;
  return PMIX_SUCCESS;
}

std::uint32_t read_length(const char* p) {
  const auto* u = reinterpret_cast<const unsigned char*>(p);
  return (std::uint32_t{u[0]} << 24) | (std::uint32_t{u[1]} << 16) | (std::uint32_t{u[2]} << 8) | u[3];
}

}  // namespace

std::string records(const std::vector<value>& values) {
  std::string out;
  for (const auto& v : values) {
    std::string body;
    protocol::append_value_body(body, v);
    const auto n = static_cast<std::uint32_t>(body.size());
    const char len[header] = {static_cast<char>(n >> 24), static_cast<char>(n >> 16),
                              static_cast<char>(n >> 8), static_cast<char>(n)};
    out.append(len, header);
    out += body;
  }
  return out;
}

pmix_status_t append_bytes(pmix_data_buffer_t& b, const std::string& bytes) {
  // Nothing to add (PMIx_Data_copy_payload of a drained buffer, say): an
  // empty buffer has no memory, and memcpy to NULL is undefined even for 0
  // bytes (found by tests/fuzz data_unpack).
  if (bytes.empty()) return PMIX_SUCCESS;
  auto rc = reserve(b, bytes.size());
  if (rc != PMIX_SUCCESS) return rc;
  if (b.unpack_ptr == nullptr) b.unpack_ptr = b.base_ptr;
  std::memcpy(b.base_ptr + b.bytes_used, bytes.data(), bytes.size());
  b.bytes_used += bytes.size();
  b.pack_ptr = b.base_ptr + b.bytes_used;
  return PMIX_SUCCESS;
}

pmix_status_t append(pmix_data_buffer_t& b, const std::vector<value>& values) {
  return append_bytes(b, records(values));
}

pmix_status_t take(pmix_data_buffer_t& b, data_type type, std::size_t max, std::vector<value>& out) {
  out.clear();
  if (b.base_ptr == nullptr) return PMIX_ERR_UNPACK_READ_PAST_END_OF_BUFFER;
  if (b.unpack_ptr == nullptr) b.unpack_ptr = b.base_ptr;
  const char* end = b.base_ptr + b.bytes_used;
  const char* p = b.unpack_ptr;
  while (out.size() < max && p < end) {
    if (static_cast<std::size_t>(end - p) < header) return PMIX_ERR_UNPACK_FAILURE;
    const auto n = read_length(p);
    if (static_cast<std::size_t>(end - p) - header < n) return PMIX_ERR_UNPACK_FAILURE;
    value v;
    if (!protocol::decode_value(std::string_view{p + header, n}, v)) return PMIX_ERR_UNPACK_FAILURE;
    if (type != PMIX_VALUE && v.type != type) {
      if (out.empty()) return PMIX_ERR_PACK_MISMATCH;
      break;  // the next record is of another type: stop before it
    }
    out.push_back(std::move(v));
    p += header + n;
  }
  if (out.empty()) return PMIX_ERR_UNPACK_READ_PAST_END_OF_BUFFER;
  b.unpack_ptr = const_cast<char*>(p);
  return PMIX_SUCCESS;
}

}  // namespace pmix::pack

using namespace pmix;

extern "C" {

PMIX_EXPORT pmix_status_t PMIx_Data_pack(const pmix_proc_t* target, pmix_data_buffer_t* buffer,
                                         void* src, int32_t num_vals, pmix_data_type_t type) {
  (void)target;
  if (buffer == nullptr || num_vals < 0 || (src == nullptr && num_vals > 0)) return PMIX_ERR_BAD_PARAM;
  if (convert::element_size(type) == 0) return PMIX_ERR_UNKNOWN_DATA_TYPE;
  std::vector<value> values(static_cast<std::size_t>(num_vals));
  for (int32_t i = 0; i < num_vals; ++i) {
    const auto rc = convert::element_from_c(type, src, static_cast<size_t>(i), values[static_cast<size_t>(i)]);
    if (rc != PMIX_SUCCESS) return rc == PMIX_ERR_NOT_SUPPORTED ? PMIX_ERR_UNKNOWN_DATA_TYPE : PMIX_ERR_PACK_FAILURE;
    if (type == PMIX_VALUE && value::kind_of(values[static_cast<size_t>(i)].type) == value::kind::unsupported)
      return PMIX_ERR_UNKNOWN_DATA_TYPE;
  }
  return pack::append(*buffer, values);
}

PMIX_EXPORT pmix_status_t PMIx_Data_unpack(const pmix_proc_t* source, pmix_data_buffer_t* buffer,
                                           void* dest, int32_t* max_num_values, pmix_data_type_t type) {
  (void)source;
  if (buffer == nullptr || dest == nullptr || max_num_values == nullptr || *max_num_values < 1)
    return PMIX_ERR_BAD_PARAM;
  if (convert::element_size(type) == 0) return PMIX_ERR_UNKNOWN_DATA_TYPE;
  pmix_data_buffer_t probe = *buffer;  // the real buffer moves only on success
  std::vector<value> values;
  auto rc = pack::take(probe, type, static_cast<std::size_t>(*max_num_values), values);
  if (rc != PMIX_SUCCESS) return rc;
  for (std::size_t i = 0; i < values.size(); ++i) {
    rc = convert::element_to_c(values[i], type, dest, i);
    if (rc != PMIX_SUCCESS) {
      // The caller gets a failure and frees nothing: release what the
      // elements before this one own (they leaked; found by tests/fuzz
      // data_unpack). The failed element owns nothing (element_to_c).
      for (std::size_t k = 0; k < i; ++k)
        values::destruct_element(static_cast<char*>(dest) + k * convert::element_size(type), type);
      return PMIX_ERR_UNPACK_FAILURE;
    }
  }
  buffer->unpack_ptr = probe.unpack_ptr;
  *max_num_values = static_cast<int32_t>(values.size());
  return PMIX_SUCCESS;
}

PMIX_EXPORT pmix_status_t PMIx_Data_copy_payload(pmix_data_buffer_t* dest, pmix_data_buffer_t* src) {
  if (dest == nullptr || src == nullptr) return PMIX_ERR_BAD_PARAM;
  if (src->base_ptr == nullptr) return PMIX_SUCCESS;
  const char* from = src->unpack_ptr != nullptr ? src->unpack_ptr : src->base_ptr;
  const std::size_t n = static_cast<std::size_t>(src->base_ptr + src->bytes_used - from);
  return pack::append_bytes(*dest, std::string{from, n});
}

// The buffer calls of newer PMIx releases (the 4.2.2 headers have macros
// only): the same behaviour as PMIX_DATA_BUFFER_CREATE & co.
PMIX_EXPORT pmix_data_buffer_t* PMIx_Data_buffer_create(void) {
  return static_cast<pmix_data_buffer_t*>(std::calloc(1, sizeof(pmix_data_buffer_t)));
}

PMIX_EXPORT void PMIx_Data_buffer_construct(pmix_data_buffer_t* b) {
  if (b != nullptr) std::memset(b, 0, sizeof *b);
}

PMIX_EXPORT void PMIx_Data_buffer_destruct(pmix_data_buffer_t* b) {
  if (b == nullptr) return;
  std::free(b->base_ptr);
  std::memset(b, 0, sizeof *b);
}

PMIX_EXPORT void PMIx_Data_buffer_release(pmix_data_buffer_t* b) {
  if (b == nullptr) return;
  std::free(b->base_ptr);
  std::free(b);
}

PMIX_EXPORT void PMIx_Data_buffer_load(pmix_data_buffer_t* b, char* bytes, size_t sz) {
  if (b == nullptr) return;
  pmix_byte_object_t bo{bytes, sz};
  PMIx_Data_load(b, &bo);
}

PMIX_EXPORT void PMIx_Data_buffer_unload(pmix_data_buffer_t* b, char** bytes, size_t* sz) {
  if (b == nullptr || bytes == nullptr || sz == nullptr) return;
  pmix_byte_object_t bo{nullptr, 0};
  PMIx_Data_unload(b, &bo);
  *bytes = bo.bytes;
  *sz = bo.size;
}

}  // extern "C"
