// Credentials the server issues and validates itself when its host has no
// get_credential / validate_credential up-call (PMIx_Get_credential,
// PMIx_Validate_credential; docs/security.md, "Credentials").
//
// A credential names the process it was issued to (uid, gid, pid, namespace,
// rank) and when it expires, and carries an HMAC-SHA256 of all that under
// the issuing server's key: it cannot be altered or forged without the key,
// and only that server (or one the host gave the same key) validates it.
#pragma once

#include <pmix_common.h>
#include <sys/types.h>

#include <cstdint>
#include <string>
#include <string_view>

#include "common/value.hpp"

namespace pmix::actors::credential {

// PMIX_CRED_TYPE of these credentials.
constexpr const char* type = "pmix-cxx.hmac-sha256";
// How long one stays valid, unless the request says otherwise (PMIX_TIMEOUT,
// in seconds).
constexpr std::int64_t default_lifetime_s = 3600;

struct claims {
  uid_t uid = 0;
  gid_t gid = 0;
  pid_t pid = 0;
  proc_id proc;
  std::int64_t expires = 0;  // seconds since the epoch
};

// A fresh random key (32 bytes) for one server; empty if the system has no
// randomness to give (then the server issues no credentials).
std::string new_key();

// The credential for `c` under `key`; empty if it cannot be signed
// (OpenSSL's libcrypto, loaded at the first call, is missing: logged).
std::string issue(const std::string& key, const claims& c);

// PMIX_SUCCESS and what the credential says, or PMIX_ERR_INVALID_CRED (not
// one of ours, altered, under another key, or expired at `now`), or
// PMIX_ERR_NOT_SUPPORTED (no libcrypto to check it with); `why` says which.
pmix_status_t validate(const std::string& key, std::string_view credential, std::int64_t now, claims& out,
                       std::string& why);

}  // namespace pmix::actors::credential
