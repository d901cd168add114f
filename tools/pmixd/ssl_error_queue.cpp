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
// OpenSSL requires.
#include <dlfcn.h>
#include <openssl/err.h>
#include <openssl/ssl.h>

#include <cstdio>
#include <cstdlib>

extern "C" int SSL_get_error(const SSL* ssl, int ret) {
  using function = int (*)(const SSL*, int);
  static const function openssl = reinterpret_cast<function>(::dlsym(RTLD_NEXT, "SSL_get_error"));
  if (openssl == nullptr) {
    std::fprintf(stderr, "pmixd: cannot find OpenSSL's SSL_get_error\n");
    std::abort();
  }
  const int result = openssl(ssl, ret);
  ERR_clear_error();
  return result;
}
