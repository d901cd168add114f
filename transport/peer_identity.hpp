// Who is at the other end of a TCP connection, from the kernel (issue 35.4).
// On a Unix socket SO_PEERCRED names the peer's uid, gid and pid; on TCP the
// kernel has no such option, but a connection from this host is two sockets
// of this kernel, and NETLINK_SOCK_DIAG names the owner (uid) and inode of
// the peer's end. The gid and pid are those of a process that holds that
// socket: the one the peer says it is, checked in /proc, else the first of
// the owner's processes found holding it. Nothing the peer sends is
// believed unless the kernel agrees.
#pragma once

#include <sys/types.h>

#include <optional>

namespace pmix::transport {

struct tcp_peer {
  uid_t uid = static_cast<uid_t>(-1);
  ino_t inode = 0;  // of the peer's socket
};

// The owner and inode of the other end of connected TCP socket `fd`, when
// that end is a socket of this host; nullopt for a peer on another host (or
// when the kernel cannot tell).
std::optional<tcp_peer> local_tcp_peer(int fd);

struct process_identity {
  pid_t pid = 0;
  gid_t gid = static_cast<gid_t>(-1);
};

// A process of user `uid` holding the socket of inode `inode`: `hint` (the
// pid the peer claims) if it does, else the first such process in /proc.
// nullopt when there is none (the socket was passed on and closed, or the
// process is in a pid namespace this one cannot see).
std::optional<process_identity> socket_holder(uid_t uid, ino_t inode, pid_t hint);
// `hint` only, if it is a process of `uid` holding that socket: no search.
std::optional<process_identity> claimed_holder(uid_t uid, ino_t inode, pid_t hint);

}  // namespace pmix::transport
