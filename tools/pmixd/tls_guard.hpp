// What a peer may make a daemon's TLS port hold, and what it can no longer
// make it die of (docs/multinode.md, "Who may talk to a daemon";
// docs/security.md, issue 33.7).
//
// CAF 0.17's OpenSSL transport accepts every connection its listener sees,
// makes an SSL context for each by loading the certificate, key and CA
// files, and waits for each TLS handshake for ever. About 1,100 idle TCP
// connections to a daemon at 1,024 descriptors left none for the file of
// the next context: CAF threw "cannot load certificate" on its multiplexer
// thread, and the daemon aborted with every job of its node; 500 idle
// connections stayed open for ever. pmixd defines, for libcaf_openssl and
// libcaf_io (exported from the executable, like ssl_error_queue.cpp):
//
// - accept(): keeps `reserve` descriptors free (a connection that would
//   take one of them is taken and closed at once, and one the process has
//   no descriptor for at all is taken with a reserve descriptor and
//   closed, so nothing stays queued to spin on); at most `max_pending`
//   connections in their TLS handshake, a newer one taking the place of
//   the oldest that has been in it for `grace_ms` (else it is closed);
// - SSL_accept(): a connection whose handshake completed is no longer
//   pending;
// - SSL_CTX_use_certificate_chain_file(), SSL_CTX_use_PrivateKey_file(),
//   SSL_CTX_load_verify_locations(): the session key's files come from the
//   copies held in memory (hold()): making a connection's context opens no
//   file, so it cannot fail for want of a descriptor, nor because the files
//   went away;
//
// and sweep(), called by the daemon's main loop, shuts down the connections
// whose handshake did not complete within `handshake_timeout_ms`.
#pragma once

#include <cstddef>
#include <string>

#include "credentials.hpp"

namespace pmixd::tls_guard {

struct settings {
  unsigned handshake_timeout_ms = 10000;  // PMIX_CXX_DAEMON_HANDSHAKE_TIMEOUT_MS
  unsigned grace_ms = 500;                // PMIX_CXX_DAEMON_HANDSHAKE_GRACE_MS
  std::size_t max_pending = 64;           // PMIX_CXX_DAEMON_MAX_PENDING
  std::size_t reserve = 32;               // descriptors kept free
};

// The settings, from the environment (each a number in range, else false
// with `error`).
bool configure_from_env(std::string& error);
const settings& current();

// Reads the session key's files once into memory (after check_credentials):
// the contexts CAF makes take them from there. False with `error` if
// OpenSSL cannot read them.
bool hold(const credentials& c, std::string& error);

// Shuts down the connections whose TLS handshake is overdue; returns how
// many. Thread-safe.
std::size_t sweep();

// Connections accepted whose handshake has not completed (tests, logs).
std::size_t pending();

}  // namespace pmixd::tls_guard
