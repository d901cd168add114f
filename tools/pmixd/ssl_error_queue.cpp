// OpenSSL's per-thread error queue, emptied after each SSL_get_error, for
// CAF 0.17's OpenSSL module (docs/multinode.md, "Who may talk to a daemon").
//
// CAF's session (libcaf_openssl, session.cpp) never empties the queue after a
// failed call: only its logging reads it, and Debian builds CAF without
// logging. SSL_get_error answers SSL_ERROR_SSL whenever the calling thread's
// queue holds an error, so once one connection failed (a peer killed, a peer
// without the session key, garbage), the next "would block" of every other
// connection served by the same multiplexer thread looked fatal too, and they
// all closed: one killed node made the launcher lose every node.
//
// pmixd defines SSL_get_error itself (the executable's definition comes first
// for libcaf_openssl, see the linkopts in BUILD.bazel): it asks OpenSSL's,
// then empties the queue, so every call starts from an empty queue as
// OpenSSL requires. Before that, a connection refused on the accepting side
// (a peer without the session key, garbage) gets a log line with the peer's
// address and OpenSSL's reason: CAF itself reports nothing.
#include <arpa/inet.h>
#include <dlfcn.h>
#include <netinet/in.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <sys/socket.h>

#include <cstdio>
#include <cstdlib>
#include <string>

namespace {

std::string peer_of(const SSL* ssl) {
  sockaddr_storage addr{};
  socklen_t len = sizeof addr;
  const int fd = SSL_get_fd(ssl);
  if (fd < 0 || ::getpeername(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) return "an unknown peer";
  char host[INET6_ADDRSTRLEN] = "?";
  unsigned port = 0;
  if (addr.ss_family == AF_INET) {
    const auto* in = reinterpret_cast<const sockaddr_in*>(&addr);
    ::inet_ntop(AF_INET, &in->sin_addr, host, sizeof host);
    port = ntohs(in->sin_port);
  } else if (addr.ss_family == AF_INET6) {
    const auto* in6 = reinterpret_cast<const sockaddr_in6*>(&addr);
    ::inet_ntop(AF_INET6, &in6->sin6_addr, host, sizeof host);
    port = ntohs(in6->sin6_port);
  }
  return std::string(host) + ":" + std::to_string(port);
}

}  // namespace

extern "C" int SSL_get_error(const SSL* ssl, int ret) {
  using function = int (*)(const SSL*, int);
  static const function openssl = reinterpret_cast<function>(::dlsym(RTLD_NEXT, "SSL_get_error"));
  if (openssl == nullptr) {
    std::fprintf(stderr, "pmixd: cannot find OpenSSL's SSL_get_error\n");
    std::abort();
  }
  const int result = openssl(ssl, ret);
  // Only connections whose peer never proved it holds the key (a peer that
  // did and then goes away ends the same way, with an "unexpected eof"),
  // once per connection (CAF asks again on its next read or write): the
  // connection's application data (which CAF leaves unused) marks it.
  static char logged;
  if (result == SSL_ERROR_SSL && ssl != nullptr && SSL_is_server(ssl) == 1 && SSL_get_app_data(ssl) == nullptr &&
      !(SSL_get0_peer_certificate(ssl) != nullptr && SSL_get_verify_result(ssl) == X509_V_OK)) {
    char reason[256] = "no reason given";
    if (const unsigned long e = ERR_peek_last_error(); e != 0) ERR_error_string_n(e, reason, sizeof reason);
    std::fprintf(stderr, "pmixd: refused a TLS connection from %s: %s\n", peer_of(ssl).c_str(), reason);
    SSL_set_app_data(const_cast<SSL*>(ssl), &logged);
  }
  ERR_clear_error();
  return result;
}
