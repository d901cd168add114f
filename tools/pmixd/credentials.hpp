// The session key of a multi-node run (docs/multinode.md, "Who may talk to a
// daemon"): a fresh EC P-256 key pair and a self-signed certificate of it,
// made with OpenSSL's libcrypto. Every daemon and the launcher of a session
// hold the same two files and trust only that certificate, so CAF's OpenSSL
// module (caf::openssl::manager) lets a connection through only when both
// ends prove they hold the key.
//
// A credentials directory holds `cert.pem` and `key.pem`; it is the caller's
// own (mode 0700), and both files are 0600.
#pragma once

#include <caf/fwd.hpp>

#include <string>

namespace pmixd {

struct credentials {
  std::string dir;   // empty: none
  std::string cert;  // dir + "/cert.pem"
  std::string key;   // dir + "/key.pem"
};

// A new private directory (0700) under $TMPDIR (else /tmp) named
// `prefix.XXXXXX`, or empty (errno set).
std::string make_private_dir(const std::string& prefix);

// Makes a fresh key pair and self-signed certificate in `dir` (which exists
// and is private); false with `error` if libcrypto or a write failed.
bool make_credentials(const std::string& dir, credentials& out, std::string& error);

// Checks `dir` before CAF uses it (CAF loads the files only at the first
// handshake, and fails there by aborting): both files exist, belong to this
// user, the key is readable by no one else, the key is the certificate's,
// and OpenSSL loads them as CAF does. False with `error` otherwise.
bool check_credentials(const std::string& dir, credentials& out, std::string& error);

// The two PEM files as one text (certificate, then key): what the launcher
// writes to a daemon's stdin (pmixd --credentials-stdin).
bool read_credentials_text(const credentials& c, std::string& text, std::string& error);

// pmixd --credentials-stdin: reads the text above from `fd` (within
// `timeout_ms`, at most 64 KB, byte by byte so that nothing after it is
// taken), writes it into a new private directory and checks it.
bool receive_credentials(int fd, int timeout_ms, credentials& out, std::string& error);

// Removes the two files and the directory (what make_private_dir made).
void remove_credentials(const credentials& c);

// Sets the certificate, the key and the only trusted certificate (the same)
// in `cfg`, and loads CAF's OpenSSL module (after the middleman).
void use_credentials(caf::actor_system_config& cfg, const credentials& c);

}  // namespace pmixd
