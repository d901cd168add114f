// Packed data buffers (PMIx_Data_pack / PMIx_Data_unpack): the library's own
// format, shared by libpmix.so.2 and the server runtime (which packs
// PMIx_server_collect_job_info's result).
//
// A buffer holds records, one per packed value: a 4-byte big-endian length,
// then a serialized wire::Value (docs/wire-format.md, "Packed buffers"). The
// value keeps its exact type, so unpacking checks it.
#pragma once

#include <pmix_common.h>

#include <string>
#include <vector>

#include "common/value.hpp"

namespace pmix::pack {

// Appends `values` to the buffer (each as one record).
pmix_status_t append(pmix_data_buffer_t& buffer, const std::vector<value>& values);
// Appends raw bytes (already packed records).
pmix_status_t append_bytes(pmix_data_buffer_t& buffer, const std::string& bytes);
// The records of `values`, serialized.
std::string records(const std::vector<value>& values);

// Reads up to `max` records of type `type` (any type for PMIX_VALUE).
// PMIX_ERR_UNPACK_READ_PAST_END_OF_BUFFER when none is left,
// PMIX_ERR_PACK_MISMATCH when the next record has another type,
// PMIX_ERR_UNPACK_FAILURE when a record is corrupt.
pmix_status_t take(pmix_data_buffer_t& buffer, data_type type, std::size_t max,
                   std::vector<value>& out);

}  // namespace pmix::pack
