#include "actors/credential.hpp"

#include <dlfcn.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <sys/random.h>

#include <cstring>

#include "common/log.hpp"

namespace pmix::actors::credential {
namespace {

// The layout, all integers little-endian: magic (8 bytes), uid (4), gid (4),
// pid (4), expires (8), rank (4), namespace length (2), namespace, then the
// HMAC-SHA256 (32) of everything before it.
constexpr char magic[8] = {'P', 'M', 'X', 'C', 'R', 'D', '0', '1'};
constexpr std::size_t mac_size = 32;
constexpr std::size_t fixed_size = sizeof magic + 4 + 4 + 4 + 8 + 4 + 2;

void put(std::string& out, std::uint64_t v, int bytes) {
  for (int k = 0; k < bytes; ++k) out.push_back(static_cast<char>((v >> (8 * k)) & 0xff));
}

std::uint64_t get(std::string_view in, std::size_t at, int bytes) {
  std::uint64_t v = 0;
  for (int k = 0; k < bytes; ++k) v |= static_cast<std::uint64_t>(static_cast<unsigned char>(in[at + k])) << (8 * k);
  return v;
}

// OpenSSL's libcrypto, loaded at the first credential rather than with the
// server library: loading it (21,000 relocations, bound at once) took
// 1.3-1.5 ms of every PMIx_server_init here, where few hosts ever ask for a
// credential of ours.
struct crypto_calls {
  decltype(&::HMAC) hmac = nullptr;
  decltype(&::EVP_sha256) sha256 = nullptr;
  decltype(&::CRYPTO_memcmp) memcmp = nullptr;
};

const crypto_calls* crypto() {
  static const crypto_calls* const calls = []() -> const crypto_calls* {
    constexpr const char* library = "libcrypto.so.3";
    static crypto_calls c;
    void* h = ::dlopen(library, RTLD_NOW | RTLD_LOCAL);
    if (h != nullptr) {
      c.hmac = reinterpret_cast<decltype(c.hmac)>(::dlsym(h, "HMAC"));
      c.sha256 = reinterpret_cast<decltype(c.sha256)>(::dlsym(h, "EVP_sha256"));
      c.memcmp = reinterpret_cast<decltype(c.memcmp)>(::dlsym(h, "CRYPTO_memcmp"));
    }
    if (c.hmac != nullptr && c.sha256 != nullptr && c.memcmp != nullptr) return &c;
    const char* why = h == nullptr ? ::dlerror() : "a call is missing";
    log::error("credential", "cannot load ", library, " (", why == nullptr ? "?" : why,
               "): the server issues and validates no credentials of its own");
    return nullptr;
  }();
  return calls;
}

std::string mac(const crypto_calls& c, const std::string& key, std::string_view body) {
  unsigned char out[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  if (c.hmac(c.sha256(), key.data(), static_cast<int>(key.size()),
             reinterpret_cast<const unsigned char*>(body.data()), body.size(), out, &len) == nullptr ||
      len != mac_size)
    return {};
  return std::string(reinterpret_cast<const char*>(out), len);
}

}  // namespace

std::string new_key() {
  std::string key(32, '\0');
  std::size_t got = 0;
  while (got < key.size()) {
    const auto n = ::getrandom(key.data() + got, key.size() - got, 0);
    if (n <= 0) return {};
    got += static_cast<std::size_t>(n);
  }
  return key;
}

std::string issue(const std::string& key, const claims& c) {
  const auto* calls = crypto();
  if (calls == nullptr) return {};
  std::string out(magic, sizeof magic);
  const auto ns = c.proc.nspace.substr(0, PMIX_MAX_NSLEN);
  out.reserve(fixed_size + ns.size() + mac_size);
  put(out, static_cast<std::uint32_t>(c.uid), 4);
  put(out, static_cast<std::uint32_t>(c.gid), 4);
  put(out, static_cast<std::uint32_t>(c.pid), 4);
  put(out, static_cast<std::uint64_t>(c.expires), 8);
  put(out, c.proc.rank, 4);
  put(out, ns.size(), 2);
  out += ns;
  const auto signature = mac(*calls, key, out);
  if (signature.empty()) return {};
  return out + signature;
}

pmix_status_t validate(const std::string& key, std::string_view credential, std::int64_t now, claims& out,
                       std::string& why) {
  if (credential.size() < fixed_size + mac_size || std::memcmp(credential.data(), magic, sizeof magic) != 0) {
    why = "not a credential of this library";
    return PMIX_ERR_INVALID_CRED;
  }
  const auto ns_size = get(credential, fixed_size - 2, 2);
  if (credential.size() != fixed_size + ns_size + mac_size) {
    why = "malformed";
    return PMIX_ERR_INVALID_CRED;
  }
  const auto* calls = crypto();
  if (calls == nullptr) {
    why = "this server cannot check signatures (no libcrypto)";
    return PMIX_ERR_NOT_SUPPORTED;
  }
  const auto body = credential.substr(0, fixed_size + ns_size);
  const auto expected = mac(*calls, key, body);
  const auto given = credential.substr(body.size());
  if (expected.size() != mac_size || calls->memcmp(expected.data(), given.data(), mac_size) != 0) {
    why = "its signature does not match (altered, or issued by another server)";
    return PMIX_ERR_INVALID_CRED;
  }
  claims c;
  std::size_t at = sizeof magic;
  c.uid = static_cast<uid_t>(get(credential, at, 4));
  c.gid = static_cast<gid_t>(get(credential, at + 4, 4));
  c.pid = static_cast<pid_t>(get(credential, at + 8, 4));
  c.expires = static_cast<std::int64_t>(get(credential, at + 12, 8));
  c.proc.rank = static_cast<rank_t>(get(credential, at + 20, 4));
  c.proc.nspace.assign(credential.substr(fixed_size, ns_size));
  if (c.expires <= now) {
    why = "expired";
    return PMIX_ERR_INVALID_CRED;
  }
  out = std::move(c);
  return PMIX_SUCCESS;
}

}  // namespace pmix::actors::credential
