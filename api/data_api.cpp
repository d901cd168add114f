// Data buffer extras: PMIx_Data_copy, PMIx_Data_embed, PMIx_Data_compress
// and PMIx_Data_decompress. Computed in the calling process; none needs an
// initialized library (docs/local-functions.md).
#include <pmix.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>

#include "api/data_pack.hpp"
#include "api/values_copy.hpp"
#include "api/zlib_lazy.hpp"
#include "common/log.hpp"

namespace pmix::api {
namespace {

// The compressed block: the original length as a 4-byte unsigned integer in
// the host's byte order, then the zlib stream (RFC 1950) of the data: the
// layout of OpenPMIx's zlib component, so either library inflates the other's.
constexpr std::size_t kHeader = sizeof(std::uint32_t);
// deflate never expands less than this: a claimed length beyond what the
// stream could hold is corrupt, and is refused before anything is allocated.
constexpr std::uint64_t kMaxRatio = 1032;
constexpr int kLevel = 9;  // OpenPMIx's level

// Types Data_copy and Data_print take by their storage, where the pointer
// given is the value itself: a string's characters, a namespace's.
bool given_by_address(pmix_data_type_t type) { return type == PMIX_STRING; }

}  // namespace
}  // namespace pmix::api

using namespace pmix;

extern "C" {

PMIX_EXPORT pmix_status_t PMIx_Data_copy(void** dest, void* src, pmix_data_type_t type) {
  if (dest == nullptr || src == nullptr) {
    log::error("api", "PMIx_Data_copy: NULL ", dest == nullptr ? "dest" : "src");
    return PMIX_ERR_BAD_PARAM;
  }
  *dest = nullptr;
  if (api::given_by_address(type)) {
    *dest = values::dup_string(static_cast<const char*>(src));
    return *dest == nullptr ? PMIX_ERR_NOMEM : PMIX_SUCCESS;
  }
  if (type == PMIX_PROC_NSPACE) {
    // A namespace may be a shorter string than pmix_nspace_t: read up to its NUL.
    auto* ns = static_cast<char*>(std::calloc(1, sizeof(pmix_nspace_t)));
    if (ns == nullptr) return PMIX_ERR_NOMEM;
    std::strncpy(ns, static_cast<const char*>(src), PMIX_MAX_NSLEN);
    *dest = ns;
    return PMIX_SUCCESS;
  }
  const std::size_t size = values::element_size(type);
  if (size == 0) {
    log::error("api", "PMIx_Data_copy: cannot copy data of type ", PMIx_Data_type_string(type), " (", type,
               ")");
    return PMIX_ERR_UNKNOWN_DATA_TYPE;
  }
  void* copy = std::calloc(1, size);
  if (copy == nullptr) return PMIX_ERR_NOMEM;
  const auto rc = values::copy_element(copy, src, type);
  if (rc != PMIX_SUCCESS) {
    std::free(copy);
    return rc;
  }
  *dest = copy;
  return PMIX_SUCCESS;
}

PMIX_EXPORT pmix_status_t PMIx_Data_embed(pmix_data_buffer_t* buffer, const pmix_byte_object_t* payload) {
  if (buffer == nullptr) {
    log::error("api", "PMIx_Data_embed: NULL buffer");
    return PMIX_ERR_BAD_PARAM;
  }
  // What the buffer held goes; the payload stays the caller's (a copy is
  // made, unlike PMIx_Data_load, which takes the bytes over).
  std::free(buffer->base_ptr);
  std::memset(buffer, 0, sizeof *buffer);
  if (payload == nullptr || payload->bytes == nullptr || payload->size == 0) return PMIX_SUCCESS;
  return pack::append_bytes(*buffer, std::string{payload->bytes, payload->size});
}

PMIX_EXPORT bool PMIx_Data_compress(const uint8_t* inbytes, size_t size, uint8_t** outbytes, size_t* nbytes) {
  if (outbytes != nullptr) *outbytes = nullptr;
  if (nbytes != nullptr) *nbytes = 0;
  if (inbytes == nullptr || outbytes == nullptr || nbytes == nullptr) {
    log::error("api", "PMIx_Data_compress: NULL ",
               inbytes == nullptr    ? "inbytes"
               : outbytes == nullptr ? "outbytes"
                                     : "nbytes");
    return false;
  }
  // Nothing to gain from an empty block; a length that does not fit the
  // header cannot be described.
  if (size == 0 || size >= UINT32_MAX) return false;
  const auto* z = api::load_zlib();
  if (z == nullptr) return false;
  uLongf stream = z->compress_bound(size);
  auto* out = static_cast<uint8_t*>(std::malloc(api::kHeader + stream));
  if (out == nullptr) return false;
  if (z->compress2(out + api::kHeader, &stream, inbytes, size, api::kLevel) != Z_OK ||
      api::kHeader + stream >= size) {
    std::free(out);  // failed, or no smaller than the input: not compressed
    return false;
  }
  const auto length = static_cast<std::uint32_t>(size);
  std::memcpy(out, &length, api::kHeader);
  // Give back what the bound over-allocated.
  auto* fitted = static_cast<uint8_t*>(std::realloc(out, api::kHeader + stream));
  *outbytes = fitted != nullptr ? fitted : out;
  *nbytes = api::kHeader + stream;
  return true;
}

PMIX_EXPORT bool PMIx_Data_decompress(const uint8_t* inbytes, size_t size, uint8_t** outbytes,
                                      size_t* nbytes) {
  if (outbytes != nullptr) *outbytes = nullptr;
  if (nbytes != nullptr) *nbytes = 0;
  if (inbytes == nullptr || outbytes == nullptr || nbytes == nullptr) {
    log::error("api", "PMIx_Data_decompress: NULL ",
               inbytes == nullptr    ? "inbytes"
               : outbytes == nullptr ? "outbytes"
                                     : "nbytes");
    return false;
  }
  std::uint32_t length = 0;
  if (size > api::kHeader) std::memcpy(&length, inbytes, api::kHeader);
  const std::uint64_t stream = size > api::kHeader ? size - api::kHeader : 0;
  if (length == 0 || length > stream * api::kMaxRatio) {
    log::error("api", "PMIx_Data_decompress: not a compressed block (", size, " bytes, claiming ", length,
               ")");
    return false;
  }
  const auto* z = api::load_zlib();
  if (z == nullptr) return false;
  auto* out = static_cast<uint8_t*>(std::malloc(length));
  if (out == nullptr) return false;
  uLongf produced = length;
  if (z->uncompress(out, &produced, inbytes + api::kHeader, stream) != Z_OK || produced != length) {
    log::error("api", "PMIx_Data_decompress: corrupt compressed block (", size, " bytes)");
    std::free(out);
    return false;
  }
  *outbytes = out;
  *nbytes = length;
  return true;
}

}  // extern "C"
