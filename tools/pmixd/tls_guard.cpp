#include "tools/pmixd/tls_guard.hpp"

#include "tools/pmixd/caf_config.hpp"

#include <dlfcn.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <thread>
#include <vector>

namespace pmixd::tls_guard {
namespace {

using clock_type = std::chrono::steady_clock;

settings config;

// A connection in its TLS handshake: CAF's descriptor, which socket that is
// (a descriptor CAF closed may come back as another file), and a duplicate
// of our own: a connection is ended through it (shutdown), never through a
// number CAF may have closed and reused meanwhile.
struct pending_connection {
  int fd;
  int own;
  dev_t device;
  ino_t inode;
  clock_type::time_point accepted;
};

// Ends a pending connection: CAF sees its end and closes its descriptor.
void end(const pending_connection& p) {
  ::shutdown(p.own, SHUT_RDWR);
  ::close(p.own);
}

std::mutex mutex;                         // guards the table and the limit
std::vector<pending_connection> table;    // in accept order
rlim_t descriptor_limit = RLIM_INFINITY;  // RLIMIT_NOFILE's soft limit
int reserve_fd = -1;                      // given up to take a connection there is no room for

// Counted where they happen (CAF's multiplexer thread), logged by sweep().
std::atomic<std::size_t> shed_no_room{0}, shed_full{0}, evicted{0}, expired{0};
clock_type::time_point last_report{};

// The session key's files, held in memory (hold()).
X509* held_cert = nullptr;
EVP_PKEY* held_key = nullptr;
std::string cert_path, key_path;

bool same_socket(int fd, dev_t device, ino_t inode) {
  struct stat st;
  return ::fstat(fd, &st) == 0 && S_ISSOCK(st.st_mode) && st.st_dev == device && st.st_ino == inode;
}

// Under `mutex`: forgets connections CAF has closed meanwhile.
void forget_closed() {
  std::vector<pending_connection> live;
  live.reserve(table.size());
  for (const auto& p : table) {
    if (same_socket(p.fd, p.device, p.inode))
      live.push_back(p);
    else
      ::close(p.own);
  }
  table.swap(live);
}

// Whether the connection just accepted on `fd` may stay (under no lock).
bool admit(int fd) {
  std::lock_guard<std::mutex> guard{mutex};
  // Descriptors are given lowest first: one numbered this high means fewer
  // than `reserve` are left.
  if (descriptor_limit != RLIM_INFINITY && static_cast<rlim_t>(fd) + config.reserve >= descriptor_limit) {
    ++shed_no_room;
    return false;
  }
  forget_closed();
  const auto now = clock_type::now();
  if (table.size() >= config.max_pending) {
    const auto& oldest = table.front();
    if (now - oldest.accepted < std::chrono::milliseconds(config.grace_ms)) {
      ++shed_full;
      return false;
    }
    end(oldest);
    table.erase(table.begin());
    ++evicted;
  }
  struct stat st;
  if (::fstat(fd, &st) != 0) return false;
  const int own = ::fcntl(fd, F_DUPFD_CLOEXEC, 0);
  if (own < 0) {
    ++shed_no_room;
    return false;
  }
  table.push_back(pending_connection{fd, own, st.st_dev, st.st_ino, now});
  return true;
}

// No descriptor at all: the waiting connection is taken with the reserve
// one and closed, so it does not stay queued (CAF's listener is
// level-triggered: it would spin); if even that fails, the listener's
// thread rests 10 ms before CAF tries again.
void take_and_close(int listener) {
  std::lock_guard<std::mutex> guard{mutex};
  if (reserve_fd >= 0) ::close(reserve_fd);
  const int fd = ::accept4(listener, nullptr, nullptr, SOCK_CLOEXEC);
  if (fd >= 0) ::close(fd);
  reserve_fd = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  ++shed_no_room;
  if (fd < 0) std::this_thread::sleep_for(std::chrono::milliseconds(10));
}

template <class F>
F next_symbol(const char* name) {
  auto* f = reinterpret_cast<F>(::dlsym(RTLD_NEXT, name));
  if (f == nullptr) {
    std::fprintf(stderr, "pmixd: cannot find %s\n", name);
    std::abort();
  }
  return f;
}

}  // namespace

bool configure_from_env(std::string& error) {
  settings s;
  unsigned long long v = s.handshake_timeout_ms;
  if (!number_from_env("PMIX_CXX_DAEMON_HANDSHAKE_TIMEOUT_MS", 100, 3600000, v, error)) return false;
  s.handshake_timeout_ms = static_cast<unsigned>(v);
  v = s.grace_ms;
  if (!number_from_env("PMIX_CXX_DAEMON_HANDSHAKE_GRACE_MS", 1, 60000, v, error)) return false;
  s.grace_ms = static_cast<unsigned>(v);
  v = s.max_pending;
  if (!number_from_env("PMIX_CXX_DAEMON_MAX_PENDING", 1, 100000, v, error)) return false;
  s.max_pending = static_cast<std::size_t>(v);
  std::lock_guard<std::mutex> guard{mutex};
  config = s;
  rlimit limit{};
  if (::getrlimit(RLIMIT_NOFILE, &limit) == 0) descriptor_limit = limit.rlim_cur;
  if (reserve_fd < 0) reserve_fd = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  return true;
}

const settings& current() { return config; }

bool hold(const credentials& c, std::string& error) {
  std::FILE* cf = std::fopen(c.cert.c_str(), "r");
  X509* cert = cf == nullptr ? nullptr : PEM_read_X509(cf, nullptr, nullptr, nullptr);
  if (cf != nullptr) std::fclose(cf);
  std::FILE* kf = std::fopen(c.key.c_str(), "r");
  EVP_PKEY* key = kf == nullptr ? nullptr : PEM_read_PrivateKey(kf, nullptr, nullptr, nullptr);
  if (kf != nullptr) std::fclose(kf);
  if (cert == nullptr || key == nullptr) {
    X509_free(cert);
    EVP_PKEY_free(key);
    error = "cannot read the session key into memory (" + c.cert + ", " + c.key + ")";
    return false;
  }
  std::lock_guard<std::mutex> guard{mutex};
  X509_free(held_cert);
  EVP_PKEY_free(held_key);
  held_cert = cert;
  held_key = key;
  cert_path = c.cert;
  key_path = c.key;
  return true;
}

std::size_t sweep() {
  std::size_t closed = 0;
  const auto now = clock_type::now();
  {
    std::lock_guard<std::mutex> guard{mutex};
    forget_closed();
    const auto timeout = std::chrono::milliseconds(config.handshake_timeout_ms);
    while (!table.empty() && now - table.front().accepted >= timeout) {
      end(table.front());
      table.erase(table.begin());
      ++closed;
    }
  }
  expired += closed;
  if (now - last_report >= std::chrono::seconds(1)) {
    const auto a = shed_no_room.exchange(0), b = shed_full.exchange(0), e = evicted.exchange(0),
               x = expired.exchange(0);
    if (a + b + e + x > 0) {
      std::fprintf(stderr,
                   "pmixd: TLS port: %zu connections closed with fewer than %zu descriptors to spare, %zu with %zu "
                   "handshakes under way (PMIX_CXX_DAEMON_MAX_PENDING), %zu handshakes older than %u ms "
                   "(PMIX_CXX_DAEMON_HANDSHAKE_GRACE_MS) closed for newer ones, %zu not complete within %u ms "
                   "(PMIX_CXX_DAEMON_HANDSHAKE_TIMEOUT_MS)\n",
                   a, config.reserve, b, config.max_pending, e, config.grace_ms, x, config.handshake_timeout_ms);
      last_report = now;
    }
  }
  return closed;
}

std::size_t pending() {
  std::lock_guard<std::mutex> guard{mutex};
  forget_closed();
  return table.size();
}

}  // namespace pmixd::tls_guard

using namespace pmixd::tls_guard;

// libcaf_io's and libcaf_openssl's accept(2) (their doormen call it, as a
// plain call: the executable's definition comes first, see BUILD.bazel).
extern "C" int accept(int listener, sockaddr* addr, socklen_t* len) {
  const int fd = ::accept4(listener, addr, len, 0);
  if (fd < 0) {
    if (errno == EMFILE || errno == ENFILE) {
      take_and_close(listener);
      errno = EAGAIN;  // nothing taken: CAF waits for the next readiness
    }
    return -1;
  }
  if (!admit(fd)) {
    ::close(fd);
    errno = EAGAIN;
    return -1;
  }
  return fd;
}

extern "C" int SSL_accept(SSL* ssl) {
  static const auto openssl = next_symbol<int (*)(SSL*)>("SSL_accept");
  const int result = openssl(ssl);
  if (result == 1) {
    const int fd = SSL_get_fd(ssl);
    std::lock_guard<std::mutex> guard{mutex};
    for (auto it = table.begin(); it != table.end(); ++it)
      if (it->fd == fd) {
        ::close(it->own);
        table.erase(it);
        break;
      }
  }
  return result;
}

extern "C" int SSL_CTX_use_certificate_chain_file(SSL_CTX* ctx, const char* file) {
  static const auto openssl = next_symbol<int (*)(SSL_CTX*, const char*)>("SSL_CTX_use_certificate_chain_file");
  {
    std::lock_guard<std::mutex> guard{mutex};
    if (held_cert != nullptr && file != nullptr && cert_path == file) return SSL_CTX_use_certificate(ctx, held_cert);
  }
  return openssl(ctx, file);
}

extern "C" int SSL_CTX_use_PrivateKey_file(SSL_CTX* ctx, const char* file, int type) {
  static const auto openssl = next_symbol<int (*)(SSL_CTX*, const char*, int)>("SSL_CTX_use_PrivateKey_file");
  {
    std::lock_guard<std::mutex> guard{mutex};
    if (held_key != nullptr && file != nullptr && key_path == file && type == SSL_FILETYPE_PEM)
      return SSL_CTX_use_PrivateKey(ctx, held_key);
  }
  return openssl(ctx, file, type);
}

extern "C" int SSL_CTX_load_verify_locations(SSL_CTX* ctx, const char* cafile, const char* capath) {
  static const auto openssl =
      next_symbol<int (*)(SSL_CTX*, const char*, const char*)>("SSL_CTX_load_verify_locations");
  {
    std::lock_guard<std::mutex> guard{mutex};
    if (held_cert != nullptr && cafile != nullptr && capath == nullptr && cert_path == cafile)
      return X509_STORE_add_cert(SSL_CTX_get_cert_store(ctx), held_cert);
  }
  return openssl(ctx, cafile, capath);
}
