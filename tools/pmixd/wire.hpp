// The C data of the up-calls pmixd sends to another node (publish, lookup,
// unpublish, notify_event): packed with the standard PMIx_Data_pack into
// bytes that travel as a string inside a CAF message (protocol.hpp), and
// unpacked there with PMIx_Data_unpack. The process must have initialized
// the library (every pmixd has: it is a server).
#pragma once

#include <pmix_common.h>

#include <cstdint>
#include <string>
#include <vector>

#include "tools/pmixrun/info.hpp"

namespace pmixd {

// A publish / lookup / unpublish request: who asks, the keys (lookup,
// unpublish; `all_keys` is unpublish's NULL), the directives (and, for
// publish, the values).
struct store_request {
  pmix_proc_t proc;
  std::vector<std::string> keys;
  bool all_keys = false;
  pmixrun::info_array info;
};
std::string pack_store_request(const pmix_proc_t& proc, const std::vector<std::string>* keys,
                               const pmix_info_t info[], std::size_t ninfo);
bool unpack_store_request(const std::string& bytes, store_request& out);

// A lookup's answer: pdata[0..n) packed; unpack gives an array to release
// with PMIX_PDATA_FREE(p, n).
std::string pack_pdata(const pmix_pdata_t pdata[], std::size_t n);
bool unpack_pdata(const std::string& bytes, pmix_pdata_t*& pdata, std::size_t& n);

// An event as the notify_event up-call has it.
struct event_message {
  pmix_status_t code = PMIX_SUCCESS;
  pmix_proc_t source;
  pmix_data_range_t range = PMIX_RANGE_UNDEF;
  pmixrun::info_array info;
};
std::string pack_event(pmix_status_t code, const pmix_proc_t& source, pmix_data_range_t range,
                       const pmix_info_t info[], std::size_t ninfo);
bool unpack_event(const std::string& bytes, event_message& out);

}  // namespace pmixd
