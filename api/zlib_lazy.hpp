// zlib for PMIx_Data_compress / _decompress, resolved at run time: the
// library never links it (no NEEDED entry), and loads libz.so.1 only on the
// first call that needs it (docs/local-functions.md).
#pragma once

#include <zlib.h>

namespace pmix::api {

struct zlib_calls {
  uLong (*compress_bound)(uLong source_length);
  int (*compress2)(Bytef* dest, uLongf* dest_length, const Bytef* source, uLong source_length, int level);
  int (*uncompress)(Bytef* dest, uLongf* dest_length, const Bytef* source, uLong source_length);
};

// The calls of libz.so.1 (loaded RTLD_LOCAL on first use), or nullptr (and
// one log line) if it cannot be loaded.
const zlib_calls* load_zlib();

}  // namespace pmix::api
