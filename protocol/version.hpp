// Versions of the wire protocol and of the library.
#pragma once

#include <cstdint>

namespace pmix::protocol {

// Bumped on any incompatible change of pmix.proto's meaning. A client and a
// server of different versions refuse each other at connect.
inline constexpr std::uint32_t wire_version = 1;

}  // namespace pmix::protocol

namespace pmix::protocol {

// What PMIx_Get_version reports and PMIX_VERSION carries to clients.
inline constexpr const char* library_version =
    "PMIx-CXX 0.1.0 (PMIx Standard 4.2, ABI of OpenPMIx 4.2.2)";
// The PMIx release whose ABI we implement.
inline constexpr const char* abi_version = "4.2.2";

}  // namespace pmix::protocol
