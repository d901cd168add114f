// How far a host's pmix_server_module_t goes, and our copy of it. A host
// built against OpenPMIx 4.2.2's header passes 28 slots, one built against
// 5.0's 29 (session_control at slot 28), ours and 6.0's 32; nothing in the
// struct says which, so the host says it (PMIX_CXX_SERVER_MODULE_SLOTS, in
// PMIx_server_init's or PMIx_tool_init's info) and no more is ever read
// (OpenPMIx copies by its own size, reading past an older host's struct).
// Used by the server (server/host_module.cpp) and by a tool's
// PMIx_tool_set_server_module (api/tool_api.cpp).
#pragma once

#include <pmix_server.h>

#include <cstddef>
#include <cstdint>
#include <cstring>

namespace pmix::module_copy {

inline constexpr std::uint32_t kSlotsV4 = 28, kSlotsV5 = 29, kSlotsV6 = 32;

// True for a slot count a host may declare.
inline bool valid_slots(std::uint64_t n) { return n == kSlotsV4 || n == kSlotsV5 || n == kSlotsV6; }

// The first `nslots` slots of `m` in our layout; the rest NULL.
inline pmix_server_module_t copy(const pmix_server_module_t& m, std::uint32_t nslots) {
  pmix_server_module_t out;
  std::memset(&out, 0, sizeof out);
  constexpr std::size_t v4_size = offsetof(pmix_server_module_t, tool_connected2);
  if (nslots >= kSlotsV6) {
    std::memcpy(&out, &m, sizeof out);
    return out;
  }
  std::memcpy(&out, &m, v4_size);
  if (nslots == kSlotsV5)
    std::memcpy(&out.session_control, reinterpret_cast<const char*>(&m) + v4_size, sizeof out.session_control);
  return out;
}

}  // namespace pmix::module_copy
