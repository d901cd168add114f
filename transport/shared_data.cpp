#include "transport/shared_data.hpp"

#include <fcntl.h>
#include <sched.h>
#include <linux/futex.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>

#include "common/log.hpp"

namespace pmix::transport {

std::shared_ptr<const shared_data> shared_data::make(std::string_view bytes) {
  const int fd = ::memfd_create("pmix-cxx-shared", MFD_CLOEXEC | MFD_ALLOW_SEALING);
  if (fd < 0) {
    log::warning("io", "memfd_create: ", std::strerror(errno), ": data goes inline");
    return nullptr;
  }
  std::size_t done = 0;
  while (done < bytes.size()) {
    const auto n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      log::warning("io", "writing shared data: ", std::strerror(errno), ": data goes inline");
      ::close(fd);
      return nullptr;
    }
    done += static_cast<std::size_t>(n);
  }
  if (::fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE | F_SEAL_SEAL) != 0) {
    log::warning("io", "sealing shared data: ", std::strerror(errno), ": data goes inline");
    ::close(fd);
    return nullptr;
  }
  return std::shared_ptr<const shared_data>(new shared_data(fd, bytes.size()));
}

shared_data::~shared_data() { ::close(fd_); }

std::size_t shared_data_threshold() {
  constexpr std::size_t fallback = 16384;
  const char* v = std::getenv("PMIX_CXX_SHARED_DATA_MIN");
  if (v == nullptr || *v == '\0') return fallback;
  char* end = nullptr;
  const auto n = std::strtoull(v, &end, 10);
  if (*end != '\0') {
    log::warning("io", "PMIX_CXX_SHARED_DATA_MIN='", v, "' is not a number of bytes: using ", fallback);
    return fallback;
  }
  return n == 0 ? static_cast<std::size_t>(-1) : static_cast<std::size_t>(n);
}

namespace {
class mapping {
 public:
  mapping(void* at, std::size_t length) : at_(at), length_(length) {}
  mapping(const mapping&) = delete;
  mapping& operator=(const mapping&) = delete;
  ~mapping() { ::munmap(at_, length_); }

 private:
  void* at_;
  std::size_t length_;
};

// Maps `fd` read-only after checking that it carries the `needed` seals and
// a size `fits` accepts; takes over `fd` (closed in every case). Null on
// refusal, logged as about `what`.
void* map_sealed(int fd, std::size_t size, int needed, bool (*fits)(std::size_t actual, std::size_t size),
                 const char* what) {
  struct stat st {};
  const int seals = ::fcntl(fd, F_GET_SEALS);
  if (seals < 0 || (seals & needed) != needed || ::fstat(fd, &st) != 0 ||
      !fits(static_cast<std::size_t>(st.st_size), size)) {
    log::error("client", "a ", what, " descriptor is not a sealed memfd of ", size, " bytes: refused");
    ::close(fd);
    return nullptr;
  }
  void* at = ::mmap(nullptr, size, PROT_READ, MAP_SHARED, fd, 0);
  ::close(fd);
  if (at == MAP_FAILED) {
    log::error("client", "mapping ", what, ": ", std::strerror(errno));
    return nullptr;
  }
  return at;
}
}  // namespace

std::shared_ptr<const void> map_shared(int fd, std::size_t size, std::string_view& bytes) {
  void* at = map_sealed(
      fd, size, F_SEAL_SHRINK | F_SEAL_WRITE,
      [](std::size_t actual, std::size_t wanted) { return wanted > 0 && actual >= wanted; }, "shared data");
  if (at == nullptr) return nullptr;
  bytes = std::string_view{static_cast<const char*>(at), size};
  return std::make_shared<const mapping>(at, size);
}

std::shared_ptr<fence_board> fence_board::make(std::size_t capacity) {
  const std::size_t size = board_data_offset + capacity;
  const int fd = ::memfd_create("pmix-cxx-fence-board", MFD_CLOEXEC | MFD_ALLOW_SEALING);
  if (fd < 0 || ::ftruncate(fd, static_cast<off_t>(size)) != 0) {
    log::warning("io", "fence board: ", std::strerror(errno), ": fences answer by socket");
    if (fd >= 0) ::close(fd);
    return nullptr;
  }
  void* at = ::mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  // The server's mapping exists before the seal: no mapping made after it
  // (a client's) can write.
  if (at == MAP_FAILED ||
      ::fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_FUTURE_WRITE | F_SEAL_SEAL) != 0) {
    log::warning("io", "fence board: ", std::strerror(errno), ": fences answer by socket");
    if (at != MAP_FAILED) ::munmap(at, size);
    ::close(fd);
    return nullptr;
  }
  auto* h = static_cast<board_header*>(at);
  h->magic = board_magic;
  h->version = board_version;
  h->capacity = capacity;
  std::shared_ptr<const shared_data> file{new shared_data(fd, size)};
  return std::shared_ptr<fence_board>(new fence_board(std::move(file), at, capacity));
}

fence_board::~fence_board() { ::munmap(at_, board_data_offset + capacity_); }

std::uint32_t fence_board::generation() const {
  return board_generation(static_cast<const board_header*>(at_));
}

bool fence_board::post(std::string_view reply) {
  if (reply.size() > capacity_) return false;
  auto* h = static_cast<board_header*>(at_);
  std::memcpy(static_cast<char*>(at_) + board_data_offset, reply.data(), reply.size());
  __atomic_store_n(&h->size, static_cast<std::uint64_t>(reply.size()), __ATOMIC_RELAXED);
  const int cpu = ::sched_getcpu();
  __atomic_store_n(&h->poster_cpu, cpu < 0 ? 0u : static_cast<std::uint32_t>(cpu) + 1, __ATOMIC_RELAXED);
  __atomic_fetch_add(&h->generation, 1u, __ATOMIC_RELEASE);
  // Shared (not private): the clients' read-only mappings of the same file
  // are the same futex.
  ::syscall(SYS_futex, &h->generation, FUTEX_WAKE, INT_MAX, nullptr, nullptr, 0);
  return true;
}

std::size_t fence_board_capacity() {
  constexpr std::size_t fallback = 1u << 20, most = 1u << 30;
  const char* v = std::getenv("PMIX_CXX_FENCE_BOARD_BYTES");
  if (v == nullptr || *v == '\0') return fallback;
  char* end = nullptr;
  const auto n = std::strtoull(v, &end, 10);
  if (*end != '\0' || n > most) {
    log::warning("io", "PMIX_CXX_FENCE_BOARD_BYTES='", v, "' is not a number of bytes up to ", most,
                 ": using ", fallback);
    return fallback;
  }
  return static_cast<std::size_t>(n);
}

std::shared_ptr<const void> map_board(int fd, std::size_t size, const board_header*& header) {
  void* at = map_sealed(
      fd, size, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_FUTURE_WRITE,
      [](std::size_t actual, std::size_t wanted) { return wanted > board_data_offset && actual == wanted; },
      "fence board");
  if (at == nullptr) return nullptr;
  const auto* h = static_cast<const board_header*>(at);
  if (h->magic != board_magic || h->version != board_version || h->capacity != size - board_data_offset) {
    log::error("client", "the fence board's header is not one this library reads: refused");
    ::munmap(at, size);
    return nullptr;
  }
  header = h;
  return std::make_shared<const mapping>(at, size);
}

std::uint32_t board_generation(const board_header* header) {
  return __atomic_load_n(&header->generation, __ATOMIC_ACQUIRE);
}

int board_poster_cpu(const board_header* header) {
  return static_cast<int>(__atomic_load_n(&header->poster_cpu, __ATOMIC_RELAXED)) - 1;
}

bool board_read(const board_header* header, std::uint32_t generation, std::string& out) {
  const auto size = __atomic_load_n(&header->size, __ATOMIC_RELAXED);
  if (size > header->capacity) return false;
  out.assign(reinterpret_cast<const char*>(header) + board_data_offset, static_cast<std::size_t>(size));
  return board_generation(header) == generation;
}

long receive_with_descriptors(int socket, char* buf, std::size_t size, std::deque<int>& fds) {
  iovec part{buf, size};
  msghdr m{};
  m.msg_iov = &part;
  m.msg_iovlen = 1;
  alignas(cmsghdr) char control[CMSG_SPACE(8 * sizeof(int))];
  m.msg_control = control;
  m.msg_controllen = sizeof control;
  const auto n = ::recvmsg(socket, &m, MSG_CMSG_CLOEXEC);
  if (n < 0) return static_cast<long>(n);
  for (cmsghdr* c = CMSG_FIRSTHDR(&m); c != nullptr; c = CMSG_NXTHDR(&m, c)) {
    if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS) continue;
    const std::size_t count = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
    for (std::size_t k = 0; k < count; ++k) {
      int fd;
      std::memcpy(&fd, CMSG_DATA(c) + k * sizeof(int), sizeof fd);
      fds.push_back(fd);
    }
  }
  if ((m.msg_flags & MSG_CTRUNC) != 0) log::error("io", "descriptors passed with a message were cut off");
  return static_cast<long>(n);
}

}  // namespace pmix::transport
