#include "transport/peer_identity.hpp"

#include <arpa/inet.h>
#include <dirent.h>
#include <linux/inet_diag.h>
#include <linux/netlink.h>
#include <linux/sock_diag.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

namespace pmix::transport {
namespace {

// One exact lookup: the TCP socket whose own end is `src` and whose other
// end is `dst`.
std::optional<tcp_peer> ask_kernel(int family, const void* src, std::uint16_t sport, const void* dst,
                                   std::uint16_t dport) {
  const int nl = ::socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, NETLINK_SOCK_DIAG);
  if (nl < 0) return std::nullopt;
  struct {
    nlmsghdr header;
    inet_diag_req_v2 req;
  } ask{};
  ask.header.nlmsg_len = sizeof ask;
  ask.header.nlmsg_type = SOCK_DIAG_BY_FAMILY;
  ask.header.nlmsg_flags = NLM_F_REQUEST;
  ask.req.sdiag_family = static_cast<std::uint8_t>(family);
  ask.req.sdiag_protocol = IPPROTO_TCP;
  ask.req.idiag_states = ~0u;
  ask.req.id.idiag_sport = sport;  // both already in network order
  ask.req.id.idiag_dport = dport;
  const std::size_t size = family == AF_INET ? 4 : 16;
  std::memcpy(ask.req.id.idiag_src, src, size);
  std::memcpy(ask.req.id.idiag_dst, dst, size);
  ask.req.id.idiag_cookie[0] = INET_DIAG_NOCOOKIE;
  ask.req.id.idiag_cookie[1] = INET_DIAG_NOCOOKIE;
  sockaddr_nl kernel{};
  kernel.nl_family = AF_NETLINK;
  std::optional<tcp_peer> out;
  if (::sendto(nl, &ask, sizeof ask, 0, reinterpret_cast<sockaddr*>(&kernel), sizeof kernel) ==
      static_cast<ssize_t>(sizeof ask)) {
    alignas(nlmsghdr) char buffer[8192];
    ssize_t n;
    do {
      n = ::recv(nl, buffer, sizeof buffer, 0);
    } while (n < 0 && errno == EINTR);
    auto* h = reinterpret_cast<nlmsghdr*>(buffer);
    if (n > 0 && NLMSG_OK(h, static_cast<unsigned>(n)) && h->nlmsg_type == SOCK_DIAG_BY_FAMILY &&
        h->nlmsg_len >= NLMSG_LENGTH(sizeof(inet_diag_msg))) {
      const auto* m = static_cast<const inet_diag_msg*>(NLMSG_DATA(h));
      out = tcp_peer{static_cast<uid_t>(m->idiag_uid), static_cast<ino_t>(m->idiag_inode)};
    }
  }
  ::close(nl);
  return out;
}

bool holds_socket(pid_t pid, ino_t inode) {
  const std::string dir = "/proc/" + std::to_string(pid) + "/fd";
  DIR* d = ::opendir(dir.c_str());
  if (d == nullptr) return false;
  const std::string want = "socket:[" + std::to_string(inode) + "]";
  bool found = false;
  char target[64];
  while (auto* e = ::readdir(d)) {
    if (e->d_name[0] == '.') continue;
    const ssize_t n = ::readlinkat(::dirfd(d), e->d_name, target, sizeof target - 1);
    if (n > 0 && static_cast<std::size_t>(n) == want.size() && want.compare(0, want.size(), target, n) == 0) {
      found = true;
      break;
    }
  }
  ::closedir(d);
  return found;
}

// The effective uid and gid of `pid` (/proc/<pid>/status), if readable.
bool effective_ids(pid_t pid, uid_t& uid, gid_t& gid) {
  std::ifstream status("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  bool have_uid = false, have_gid = false;
  while (std::getline(status, line)) {
    unsigned long real, effective;
    if (std::sscanf(line.c_str(), "Uid: %lu %lu", &real, &effective) == 2) {
      uid = static_cast<uid_t>(effective);
      have_uid = true;
    } else if (std::sscanf(line.c_str(), "Gid: %lu %lu", &real, &effective) == 2) {
      gid = static_cast<gid_t>(effective);
      have_gid = true;
    }
  }
  return have_uid && have_gid;
}

std::optional<process_identity> check(pid_t pid, uid_t uid, ino_t inode) {
  uid_t u;
  gid_t g;
  if (pid <= 0 || !effective_ids(pid, u, g) || u != uid || !holds_socket(pid, inode)) return std::nullopt;
  return process_identity{pid, g};
}

}  // namespace

std::optional<tcp_peer> local_tcp_peer(int fd) {
  sockaddr_storage mine{}, theirs{};
  socklen_t mine_len = sizeof mine, theirs_len = sizeof theirs;
  if (::getsockname(fd, reinterpret_cast<sockaddr*>(&mine), &mine_len) != 0 ||
      ::getpeername(fd, reinterpret_cast<sockaddr*>(&theirs), &theirs_len) != 0 ||
      mine.ss_family != theirs.ss_family)
    return std::nullopt;
  if (mine.ss_family == AF_INET) {
    const auto& a = reinterpret_cast<const sockaddr_in&>(theirs);
    const auto& b = reinterpret_cast<const sockaddr_in&>(mine);
    return ask_kernel(AF_INET, &a.sin_addr, a.sin_port, &b.sin_addr, b.sin_port);
  }
  if (mine.ss_family == AF_INET6) {
    const auto& a = reinterpret_cast<const sockaddr_in6&>(theirs);
    const auto& b = reinterpret_cast<const sockaddr_in6&>(mine);
    if (auto found = ask_kernel(AF_INET6, &a.sin6_addr, a.sin6_port, &b.sin6_addr, b.sin6_port)) return found;
    // An IPv4 peer of a dual-stack listener: its socket is an IPv4 one.
    if (IN6_IS_ADDR_V4MAPPED(&a.sin6_addr) && IN6_IS_ADDR_V4MAPPED(&b.sin6_addr))
      return ask_kernel(AF_INET, &a.sin6_addr.s6_addr[12], a.sin6_port, &b.sin6_addr.s6_addr[12], b.sin6_port);
  }
  return std::nullopt;
}

namespace {

// The sockets of one user's processes as the last full read of /proc found
// them (inode -> pid). A node's ranks connect at once: without it each of 64
// connections read every process's descriptors again (2.3 ms each, up to
// 130 ms while the others were starting; docs/performance.md); with it one
// read serves the connections whose sockets existed by then. An entry is
// checked again before it is believed (the process may have closed the
// socket, or its pid been reused). Only the last user's table is kept.
struct socket_table {
  uid_t uid = static_cast<uid_t>(-1);
  std::unordered_map<ino_t, pid_t> holders;
};

std::mutex table_mutex;
socket_table table;

void read_sockets(uid_t uid, socket_table& t) {
  t.uid = uid;
  t.holders.clear();
  DIR* proc = ::opendir("/proc");
  if (proc == nullptr) return;
  char target[64];
  while (auto* e = ::readdir(proc)) {
    char* end = nullptr;
    const long pid = std::strtol(e->d_name, &end, 10);
    if (pid <= 0 || *end != '\0') continue;
    struct stat st;
    if (::fstatat(::dirfd(proc), e->d_name, &st, 0) != 0 || st.st_uid != uid) continue;
    const std::string dir = std::string{"/proc/"} + e->d_name + "/fd";
    DIR* fds = ::opendir(dir.c_str());
    if (fds == nullptr) continue;
    while (auto* f = ::readdir(fds)) {
      if (f->d_name[0] == '.') continue;
      const ssize_t n = ::readlinkat(::dirfd(fds), f->d_name, target, sizeof target - 1);
      if (n <= 8 || std::strncmp(target, "socket:[", 8) != 0) continue;
      target[n] = '\0';
      const unsigned long long inode = std::strtoull(target + 8, nullptr, 10);
      if (inode != 0) t.holders.emplace(static_cast<ino_t>(inode), static_cast<pid_t>(pid));
    }
    ::closedir(fds);
  }
  ::closedir(proc);
}

std::optional<process_identity> from_table(uid_t uid, ino_t inode) {
  if (table.uid != uid) return std::nullopt;
  const auto it = table.holders.find(inode);
  return it == table.holders.end() ? std::nullopt : check(it->second, uid, inode);
}

}  // namespace

std::optional<process_identity> claimed_holder(uid_t uid, ino_t inode, pid_t hint) {
  return inode == 0 ? std::nullopt : check(hint, uid, inode);
}

std::optional<process_identity> socket_holder(uid_t uid, ino_t inode, pid_t hint) {
  if (inode == 0) return std::nullopt;
  if (auto p = check(hint, uid, inode)) return p;
  std::lock_guard<std::mutex> guard{table_mutex};
  if (auto p = from_table(uid, inode)) return p;
  read_sockets(uid, table);
  return from_table(uid, inode);
}

}  // namespace pmix::transport
