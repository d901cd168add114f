// The PMIx Standard's rule for the directives (pmix_info_t arrays) that
// qualify a call: an attribute the call does not support is ignored, with a
// debug log line, unless the caller marked it PMIX_INFO_REQD; then the call
// fails with PMIX_ERR_NOT_SUPPORTED (and an error log line naming it).
//
// Each call lists the keys it acts on. A call that hands its directives to
// the host (spawn, publish, connect, log, ...) lets the host judge them and
// does not check here. docs/server-init.md and docs/hosts.md list, per call,
// what is supported.
#pragma once

#include <pmix_common.h>

#include <cstddef>
#include <initializer_list>
#include <string_view>

#include "common/value.hpp"

namespace pmix::directives {

using keys = std::initializer_list<std::string_view>;

// PMIX_SUCCESS, or PMIX_ERR_NOT_SUPPORTED for the first required directive
// not in `supported`.
pmix_status_t check(const char* call, const info_list& list, keys supported);
pmix_status_t check(const char* call, const pmix_info_t* info, std::size_t ninfo, keys supported);

// The same with one of the per-function lists of common/supported.hpp.
pmix_status_t check(const char* call, const info_list& list, const std::string_view* supported, std::size_t n);
pmix_status_t check(const char* call, const pmix_info_t* info, std::size_t ninfo, const std::string_view* supported,
                    std::size_t n);
template <std::size_t N>
pmix_status_t check(const char* call, const info_list& list, const std::string_view (&supported)[N]) {
  return check(call, list, supported, N);
}
template <std::size_t N>
pmix_status_t check(const char* call, const pmix_info_t* info, std::size_t ninfo,
                    const std::string_view (&supported)[N]) {
  return check(call, info, ninfo, supported, N);
}

// PMIX_TIMEOUT among `list`, in seconds: 0 when there is none or it is not a
// positive number (wait for ever, as the Standard says of 0); at most a year.
std::int64_t timeout_seconds(const info_list& list);

// Whether a directive is required (PMIX_INFO_REQD).
inline bool required(std::uint32_t flags) { return (flags & PMIX_INFO_REQD) != 0; }

// An attribute the call knows but cannot honour (a behaviour the library
// does not provide, such as server monitoring): ignored with a debug line,
// or PMIX_ERR_NOT_SUPPORTED when required. `why` completes the log line.
pmix_status_t unsupported(const char* call, std::string_view key, std::uint32_t flags, std::string_view why);

}  // namespace pmix::directives
