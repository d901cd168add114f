#include "credentials.hpp"

#include <fcntl.h>
#include <openssl/bn.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>
#include <poll.h>
#include <sys/stat.h>
#include <unistd.h>

#include <caf/actor_system_config.hpp>
#include <caf/io/middleman.hpp>
#include <caf/openssl/manager.hpp>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <vector>

namespace pmixd {
namespace {

constexpr const char* cert_end = "-----END CERTIFICATE-----";
constexpr const char* key_end = "-----END PRIVATE KEY-----";
constexpr std::size_t text_max = 64 * 1024;

struct pkey_free {
  void operator()(EVP_PKEY* p) const { EVP_PKEY_free(p); }
};
struct x509_free {
  void operator()(X509* p) const { X509_free(p); }
};
struct ctx_free {
  void operator()(SSL_CTX* p) const { SSL_CTX_free(p); }
};
using pkey_ptr = std::unique_ptr<EVP_PKEY, pkey_free>;
using x509_ptr = std::unique_ptr<X509, x509_free>;

// libcrypto's queued errors as one line (and the queue emptied).
std::string ssl_errors() {
  std::string out;
  while (const unsigned long e = ERR_get_error()) {
    char buf[256];
    ERR_error_string_n(e, buf, sizeof buf);
    if (!out.empty()) out += "; ";
    out += buf;
  }
  return out.empty() ? std::string("no detail from OpenSSL") : out;
}

credentials paths_in(const std::string& dir) { return credentials{dir, dir + "/cert.pem", dir + "/key.pem"}; }

// A new file of mode 0600 (it must not exist), as a stdio stream.
FILE* create_private(const std::string& path) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0) return nullptr;
  FILE* f = ::fdopen(fd, "w");
  if (f == nullptr) ::close(fd);
  return f;
}

bool add_extension(X509* cert, int nid, const char* value) {
  X509V3_CTX ctx;
  X509V3_set_ctx_nodb(&ctx);
  X509V3_set_ctx(&ctx, cert, cert, nullptr, nullptr, 0);
  X509_EXTENSION* ext = X509V3_EXT_conf_nid(nullptr, &ctx, nid, value);
  if (ext == nullptr) return false;
  const bool ok = X509_add_ext(cert, ext, -1) == 1;
  X509_EXTENSION_free(ext);
  return ok;
}

// The file at `path` belongs to this user and, if `secret`, no one else may
// read or write it.
bool check_file(const std::string& path, bool secret, std::string& error) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) {
    error = path + ": " + std::strerror(errno);
    return false;
  }
  if (!S_ISREG(st.st_mode)) {
    error = path + ": not a regular file";
    return false;
  }
  if (st.st_uid != ::geteuid()) {
    error = path + ": belongs to another user";
    return false;
  }
  if (secret && (st.st_mode & 077) != 0) {
    error = path + ": the key must be readable by its owner only (chmod 600)";
    return false;
  }
  return true;
}

}  // namespace

std::string make_private_dir(const std::string& prefix) {
  const char* tmp = std::getenv("TMPDIR");
  std::string templ = std::string(tmp != nullptr && tmp[0] != '\0' ? tmp : "/tmp") + "/" + prefix + ".XXXXXX";
  std::vector<char> buf(templ.begin(), templ.end());
  buf.push_back('\0');
  // mkdtemp makes the directory with mode 0700.
  return ::mkdtemp(buf.data()) != nullptr ? std::string(buf.data()) : std::string();
}

bool make_credentials(const std::string& dir, credentials& out, std::string& error) {
  const credentials c = paths_in(dir);
  pkey_ptr key{EVP_PKEY_Q_keygen(nullptr, nullptr, "EC", "P-256")};
  x509_ptr cert{X509_new()};
  unsigned char serial[16];
  unsigned char tag[8];
  if (!key || !cert || RAND_bytes(serial, sizeof serial) != 1 || RAND_bytes(tag, sizeof tag) != 1) {
    error = "cannot make a key: " + ssl_errors();
    return false;
  }
  serial[0] &= 0x7f;  // a positive serial number
  std::unique_ptr<BIGNUM, void (*)(BIGNUM*)> bn{BN_bin2bn(serial, sizeof serial, nullptr), BN_free};
  char name[64];
  std::snprintf(name, sizeof name, "pmixd session %02x%02x%02x%02x%02x%02x%02x%02x", tag[0], tag[1], tag[2], tag[3],
                tag[4], tag[5], tag[6], tag[7]);
  X509_NAME* subject = X509_get_subject_name(cert.get());
  // Valid from a day ago (clocks of nodes differ) for ten years: the key is
  // a shared secret of one session, not an identity that should expire.
  const bool built =
      bn && BN_to_ASN1_INTEGER(bn.get(), X509_get_serialNumber(cert.get())) != nullptr &&
      X509_set_version(cert.get(), 2) == 1 && X509_gmtime_adj(X509_getm_notBefore(cert.get()), -86400) != nullptr &&
      X509_gmtime_adj(X509_getm_notAfter(cert.get()), 3650L * 86400) != nullptr &&
      X509_set_pubkey(cert.get(), key.get()) == 1 &&
      X509_NAME_add_entry_by_txt(subject, "CN", MBSTRING_ASC, reinterpret_cast<const unsigned char*>(name), -1, -1,
                                 0) == 1 &&
      X509_set_issuer_name(cert.get(), subject) == 1 &&
      add_extension(cert.get(), NID_basic_constraints, "critical,CA:TRUE") &&
      add_extension(cert.get(), NID_key_usage, "critical,digitalSignature,keyCertSign") &&
      add_extension(cert.get(), NID_subject_key_identifier, "hash") &&
      X509_sign(cert.get(), key.get(), EVP_sha256()) > 0;
  if (!built) {
    error = "cannot make the certificate: " + ssl_errors();
    return false;
  }
  FILE* kf = create_private(c.key);
  if (kf == nullptr) {
    error = c.key + ": " + std::strerror(errno);
    return false;
  }
  const bool key_written = PEM_write_PrivateKey(kf, key.get(), nullptr, nullptr, 0, nullptr, nullptr) == 1;
  if (std::fclose(kf) != 0 || !key_written) {
    error = c.key + ": cannot write the key";
    return false;
  }
  FILE* cf = create_private(c.cert);
  if (cf == nullptr) {
    error = c.cert + ": " + std::strerror(errno);
    return false;
  }
  const bool cert_written = PEM_write_X509(cf, cert.get()) == 1;
  if (std::fclose(cf) != 0 || !cert_written) {
    error = c.cert + ": cannot write the certificate";
    return false;
  }
  out = c;
  return true;
}

bool check_credentials(const std::string& dir, credentials& out, std::string& error) {
  const credentials c = paths_in(dir);
  if (!check_file(c.cert, false, error) || !check_file(c.key, true, error)) return false;
  // What CAF's session does with them (libcaf_openssl session.cpp,
  // create_ssl_context), here, where a failure is a message and not an abort.
  std::unique_ptr<SSL_CTX, ctx_free> ctx{SSL_CTX_new(TLS_method())};
  if (!ctx || SSL_CTX_use_certificate_chain_file(ctx.get(), c.cert.c_str()) != 1) {
    error = c.cert + ": not a certificate: " + ssl_errors();
    return false;
  }
  if (SSL_CTX_use_PrivateKey_file(ctx.get(), c.key.c_str(), SSL_FILETYPE_PEM) != 1) {
    error = c.key + ": not an unencrypted PEM key: " + ssl_errors();
    return false;
  }
  if (SSL_CTX_check_private_key(ctx.get()) != 1) {
    error = c.key + ": not the key of " + c.cert + ": " + ssl_errors();
    return false;
  }
  if (SSL_CTX_load_verify_locations(ctx.get(), c.cert.c_str(), nullptr) != 1) {
    error = c.cert + ": cannot be trusted as a CA file: " + ssl_errors();
    return false;
  }
  out = c;
  return true;
}

bool read_credentials_text(const credentials& c, std::string& text, std::string& error) {
  text.clear();
  for (const auto& path : {c.cert, c.key}) {
    FILE* f = std::fopen(path.c_str(), "re");
    if (f == nullptr) {
      error = path + ": " + std::strerror(errno);
      return false;
    }
    char buf[4096];
    std::size_t n;
    while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) text.append(buf, n);
    std::fclose(f);
  }
  if (text.find(cert_end) == std::string::npos || text.find(key_end) == std::string::npos ||
      text.size() > text_max) {
    error = c.dir + ": not a certificate and an unencrypted PEM key";
    return false;
  }
  return true;
}

bool receive_credentials(int fd, int timeout_ms, credentials& out, std::string& error) {
  std::string text;
  const int deadline_step = 100;
  int waited = 0;
  while (text.find(key_end) == std::string::npos || text.back() != '\n') {
    if (text.size() >= text_max) {
      error = "more than 64 KB without the end of a PEM key";
      return false;
    }
    pollfd p{fd, POLLIN, 0};
    const int r = ::poll(&p, 1, deadline_step);
    if (r < 0 && errno == EINTR) continue;
    if (r == 0) {
      waited += deadline_step;
      if (waited >= timeout_ms) {
        error = "no credentials on stdin within " + std::to_string(timeout_ms / 1000) + " s";
        return false;
      }
      continue;
    }
    char ch;
    const ssize_t n = ::read(fd, &ch, 1);
    if (n < 0 && (errno == EINTR || errno == EAGAIN)) continue;
    if (n <= 0) {
      error = "stdin ended before the credentials did";
      return false;
    }
    text.push_back(ch);
  }
  const auto cert_at = text.find(cert_end);
  if (cert_at == std::string::npos || cert_at > text.find(key_end)) {
    error = "stdin did not give a certificate, then a key";
    return false;
  }
  const auto split = text.find('\n', cert_at) + 1;
  const std::string dir = make_private_dir("pmixd-credentials");
  if (dir.empty()) {
    error = std::string("cannot make a private directory: ") + std::strerror(errno);
    return false;
  }
  const credentials c = paths_in(dir);
  bool written = true;
  const std::pair<std::string, std::string> files[] = {{c.cert, text.substr(0, split)}, {c.key, text.substr(split)}};
  for (const auto& [path, part] : files) {
    FILE* f = create_private(path);
    if (f == nullptr) {
      written = false;
      continue;
    }
    const bool ok = std::fwrite(part.data(), 1, part.size(), f) == part.size();
    written = std::fclose(f) == 0 && ok && written;
  }
  if (!written) {
    error = dir + ": cannot write the credentials: " + std::strerror(errno);
    remove_credentials(c);
    return false;
  }
  if (!check_credentials(dir, out, error)) {
    remove_credentials(c);
    return false;
  }
  return true;
}

void remove_credentials(const credentials& c) {
  if (c.dir.empty()) return;
  ::unlink(c.key.c_str());
  ::unlink(c.cert.c_str());
  ::rmdir(c.dir.c_str());
}

void use_credentials(caf::actor_system_config& cfg, const credentials& c) {
  // With a certificate, a key and a CA file, CAF's session requires and
  // verifies the peer's certificate on both sides (SSL_VERIFY_PEER |
  // SSL_VERIFY_FAIL_IF_NO_PEER_CERT, cipher list "HIGH:!aNULL:!MD5"); the
  // only trusted certificate is the session's own.
  cfg.openssl_certificate = c.cert;
  cfg.openssl_key = c.key;
  cfg.openssl_cafile = c.cert;
  cfg.load<caf::openssl::manager>();
}

}  // namespace pmixd
