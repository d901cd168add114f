// Fuzz target: PMIx_Data_unpack (api/data_pack.cpp) over arbitrary bytes
// loaded into a pmix_data_buffer_t, as an application unpacks a buffer a
// peer sent it (or a host unpacks PMIx_server_collect_job_info's result).
//
// Input: [type byte][max byte][flags byte] then the buffer's bytes. The type
// byte picks the pmix_data_type_t asked for (0..71: every type of the 4.2.2
// headers, supported or not, and two unknown ones); max the number of
// values per call (1..8). Unpacking goes on until the buffer is done or
// refuses; after a refusal the next value is asked for as a PMIX_VALUE (any
// type), then as a PMIX_INFO, then as the asked type again. A byte object unpacked
// is itself unpacked as a buffer (records inside records, as
// collect_job_info writes them), two levels deep.
//
// Invariants: a status, never a crash; on failure the buffer does not move
// and nothing is left allocated (LeakSanitizer); on success 1..max values,
// written inside an array of exactly max elements of the type (ASan);
// what was unpacked packs again, and pack(unpack(pack(unpack(x)))) is
// byte for byte pack(unpack(x)).
#include <pmix.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <string>

#include "api/convert.hpp"
#include "tests/fuzz/fuzz_support.hpp"

using namespace pmix;

namespace {

bool allowed(pmix_status_t rc) {
  return rc == PMIX_SUCCESS || rc == PMIX_ERR_UNPACK_READ_PAST_END_OF_BUFFER ||
         rc == PMIX_ERR_PACK_MISMATCH || rc == PMIX_ERR_UNPACK_FAILURE || rc == PMIX_ERR_UNKNOWN_DATA_TYPE;
}

std::string contents(const pmix_data_buffer_t& b) {
  if (b.base_ptr == nullptr) return {};
  const char* from = b.unpack_ptr != nullptr ? b.unpack_ptr : b.base_ptr;
  return std::string{from, static_cast<std::size_t>(b.base_ptr + b.bytes_used - from)};
}

// Frees n unpacked elements of `type` and the array (PMIx_Data_array_destruct
// frees both).
void release(void* array, std::size_t n, pmix_data_type_t type) {
  pmix_data_array_t a{type, n, array};
  PMIx_Data_array_destruct(&a);
}

void unpack_all(pmix_data_buffer_t& buffer, pmix_data_type_t asked, int max, int depth);

// The values just unpacked: packed again, unpacked again, packed again.
void check_round_trip(void* values, int n, pmix_data_type_t type, std::size_t esize) {
  pmix_data_buffer_t first;
  PMIX_DATA_BUFFER_CONSTRUCT(&first);
  const auto rc = PMIx_Data_pack(nullptr, &first, values, n, type);
  FUZZ_CHECK(rc == PMIX_SUCCESS);
  void* again = std::calloc(static_cast<std::size_t>(n), esize);
  int32_t count = n;
  FUZZ_CHECK(PMIx_Data_unpack(nullptr, &first, again, &count, type) == PMIX_SUCCESS);
  FUZZ_CHECK(count == n);
  FUZZ_CHECK(first.unpack_ptr == first.base_ptr + first.bytes_used);
  pmix_data_buffer_t second;
  PMIX_DATA_BUFFER_CONSTRUCT(&second);
  FUZZ_CHECK(PMIx_Data_pack(nullptr, &second, again, n, type) == PMIX_SUCCESS);
  first.unpack_ptr = first.base_ptr;
  FUZZ_CHECK(contents(first) == contents(second));
  release(again, static_cast<std::size_t>(n), type);
  PMIX_DATA_BUFFER_DESTRUCT(&first);
  PMIX_DATA_BUFFER_DESTRUCT(&second);
}

// A byte object's bytes, read as a buffer of records themselves.
void unpack_nested(const pmix_byte_object_t& bo, int depth) {
  if (depth >= 2 || bo.bytes == nullptr) return;
  pmix_data_buffer_t inner;
  PMIX_DATA_BUFFER_CONSTRUCT(&inner);
  char* copy = static_cast<char*>(std::malloc(bo.size == 0 ? 1 : bo.size));
  std::memcpy(copy, bo.bytes, bo.size);
  pmix_byte_object_t load{copy, bo.size};
  PMIx_Data_load(&inner, &load);
  unpack_all(inner, PMIX_VALUE, 4, depth + 1);
  PMIX_DATA_BUFFER_DESTRUCT(&inner);
}

void unpack_all(pmix_data_buffer_t& buffer, pmix_data_type_t asked, int max, int depth) {
  // The type asked for; after a refusal, any value (PMIX_VALUE), then an
  // info (PMIX_INFO records, which a pmix_value_t cannot hold).
  const pmix_data_type_t fallback[] = {asked, PMIX_VALUE, PMIX_INFO};
  std::size_t attempt = 0;
  for (int round = 0; round < 64; ++round) {
    const pmix_data_type_t type = fallback[attempt];
    const std::size_t esize = convert::element_size(type);
    // Exactly max elements: ASan sees a write past them.
    void* dest = std::calloc(static_cast<std::size_t>(max), esize == 0 ? 1 : esize);
    char* const before = buffer.unpack_ptr;
    int32_t n = max;
    const auto rc = PMIx_Data_unpack(nullptr, &buffer, dest, &n, type);
    FUZZ_CHECK(allowed(rc));
    if (rc != PMIX_SUCCESS) {
      FUZZ_CHECK(buffer.unpack_ptr == before);
      FUZZ_CHECK(n == max);
      std::free(dest);  // nothing was handed out
      if (rc == PMIX_ERR_UNPACK_READ_PAST_END_OF_BUFFER || ++attempt == std::size(fallback)) return;
      continue;
    }
    FUZZ_CHECK(n >= 1 && n <= max);
    FUZZ_CHECK(buffer.unpack_ptr > before || before == nullptr);
    FUZZ_CHECK(buffer.unpack_ptr >= buffer.base_ptr &&
               buffer.unpack_ptr <= buffer.base_ptr + buffer.bytes_used);
    check_round_trip(dest, n, type, esize);
    for (int k = 0; k < n; ++k) {
      if (type == PMIX_BYTE_OBJECT) {
        unpack_nested(static_cast<pmix_byte_object_t*>(dest)[k], depth);
      } else if (type == PMIX_VALUE) {
        const auto& v = static_cast<pmix_value_t*>(dest)[k];
        if (v.type == PMIX_BYTE_OBJECT) unpack_nested(v.data.bo, depth);
      }
    }
    release(dest, static_cast<std::size_t>(n), type);
    attempt = 0;
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  fuzz::input in{data, size};
  const auto type = static_cast<pmix_data_type_t>(in.byte() % 72);
  const int max = 1 + in.byte() % 8;
  const unsigned flags = in.byte();
  const std::string_view bytes = in.rest();

  // The buffer owns a malloc'd copy (PMIX_DATA_BUFFER_LOAD).
  pmix_data_buffer_t buffer;
  PMIX_DATA_BUFFER_CONSTRUCT(&buffer);
  char* copy = static_cast<char*>(std::malloc(bytes.size() == 0 ? 1 : bytes.size()));
  std::memcpy(copy, bytes.data(), bytes.size());
  pmix_byte_object_t load{copy, bytes.size()};
  FUZZ_CHECK(PMIx_Data_load(&buffer, &load) == PMIX_SUCCESS);

  // Bad parameters are statuses.
  int32_t zero = 0;
  char scratch[8];
  FUZZ_CHECK(PMIx_Data_unpack(nullptr, &buffer, scratch, &zero, type) == PMIX_ERR_BAD_PARAM);

  unpack_all(buffer, type, max, 0);

  // What is left: copied on, or unloaded.
  if (flags & 1) {
    pmix_data_buffer_t rest;
    PMIX_DATA_BUFFER_CONSTRUCT(&rest);
    FUZZ_CHECK(PMIx_Data_copy_payload(&rest, &buffer) == PMIX_SUCCESS);
    FUZZ_CHECK(contents(rest) == contents(buffer));
    PMIX_DATA_BUFFER_DESTRUCT(&rest);
  }
  const std::string left = contents(buffer);
  pmix_byte_object_t out{nullptr, 0};
  FUZZ_CHECK(PMIx_Data_unload(&buffer, &out) == PMIX_SUCCESS);
  FUZZ_CHECK(out.size == left.size());
  FUZZ_CHECK(out.size == 0 || std::memcmp(out.bytes, left.data(), left.size()) == 0);
  std::free(out.bytes);
  PMIX_DATA_BUFFER_DESTRUCT(&buffer);
  return 0;
}
