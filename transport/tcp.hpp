// The server's TCP listening sockets (spec 20.2.247.4.2 PMIX_SERVER_REMOTE_CONNECTIONS
// and the connection attributes of 20.2.247.4.3): which addresses to listen on,
// which ports to try, and the "tcp4://" / "tcp6://" URIs that name them.
// Plain functions: no actors, no threads. The server's event loop takes the
// descriptors that open_listeners() returns.
#pragma once

#include <netinet/in.h>
#include <sys/socket.h>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <pmix_common.h>

namespace pmix::transport {

struct tcp_options {
  bool remote = false;               // PMIX_SERVER_REMOTE_CONNECTIONS
  std::vector<std::string> include;  // PMIX_TCP_IF_INCLUDE, already split on ','
  std::vector<std::string> exclude;  // PMIX_TCP_IF_EXCLUDE, already split on ','
  std::string ipv4_ports = "0";      // PMIX_TCP_IPV4_PORT (see parse_ports)
  std::string ipv6_ports = "0";      // PMIX_TCP_IPV6_PORT
  bool disable_ipv4 = false;         // PMIX_TCP_DISABLE_IPV4
  bool disable_ipv6 = false;         // PMIX_TCP_DISABLE_IPV6
};

// One listening socket: non-blocking, close-on-exec, listening. The caller
// owns `fd` (close_listeners() closes a set of them).
struct tcp_listener {
  int fd = -1;
  std::string uri;     // "tcp4://10.1.0.1:5000" or "tcp6://[fd00::1]:5000"
  std::string device;  // the interface the address belongs to, e.g. "eth0"
};

// One address of an interface that is up.
struct interface_address {
  std::string device;     // as getifaddrs() names it (an IPv4 alias is "eth0:1")
  int family = AF_UNSPEC;  // AF_INET or AF_INET6
  sockaddr_storage addr{};  // sockaddr_in / sockaddr_in6, port 0
  unsigned prefix_len = 0;  // from the netmask
  bool loopback = false;    // IFF_LOOPBACK device or 127.0.0.0/8 / ::1 address
};

// A port list of PMIX_TCP_IPV4_PORT / PMIX_TCP_IPV6_PORT [20.2.247.4.3]:
// "0" and "-1" (alone) give {0}, the kernel's choice; otherwise a
// comma-delimited list of ports ("5000") and inclusive ranges ("5000-5010"),
// kept in the given order. Blanks around an entry are ignored. False, with
// `error` set and `out` untouched, for an empty text or entry, a non-number,
// a port above 65535, a 0 or -1 inside a list or range, a reversed range, or
// more than 65536 ports in all.
[[nodiscard]] bool parse_ports(std::string_view text, std::vector<std::uint16_t>& out,
                               std::string& error);

// The IPv4 and IPv6 addresses of the interfaces that are up, in the kernel's
// (getifaddrs) order. IPv6 link-local addresses (fe80::/10) are left out: they
// need a scope to be reached. Empty if getifaddrs() fails.
std::vector<interface_address> list_interfaces();

// One PMIX_TCP_IF_INCLUDE / PMIX_TCP_IF_EXCLUDE entry [20.2.247.4.3]: a device
// name ("eth0", which also matches its IPv4 aliases "eth0:N") or CIDR notation
// ("10.1.0.0/16", "fd00::/8"; a bare address means /32 or /128; host bits of
// the network are ignored). True if `a` matches. False with `error` set when
// the entry is malformed (empty, a bad address or prefix, a bad device name);
// `error` is left empty on a plain mismatch.
[[nodiscard]] bool matches(const interface_address& a, const std::string& entry,
                           std::string& error);

// The addresses to listen on, in the order of `all`:
// - with o.remote, every non-loopback address that matches an include entry
//   (when include is given) or matches no exclude entry [20.2.247.4.2];
// - without it, the loopback addresses 127.0.0.1 and ::1 only (one each;
//   include and exclude do not apply but are still checked).
// Families disabled by o.disable_ipv4 / o.disable_ipv6 and IPv6 link-local
// addresses are dropped. `out` is
// replaced; it may end up empty. PMIX_ERR_BAD_PARAM, with `error` set and
// `out` untouched, when include and exclude are both given or an entry is
// malformed.
[[nodiscard]] pmix_status_t select_addresses(const std::vector<interface_address>& all,
                                             const tcp_options& o,
                                             std::vector<interface_address>& out,
                                             std::string& error);

// Opens one listener per address select_addresses() picks from
// list_interfaces(), trying the family's port list in order for each address
// (the kernel picks when the list is {0}); a port in use (or not permitted)
// moves on to the next one. IPv6 sockets are IPV6_V6ONLY. An address that
// cannot be bound at all (EADDRNOTAVAIL: gone, or IPv6 still tentative) is
// skipped. On success `out` is replaced by the listeners, in address order.
// Errors, with `error` saying why and `out` untouched:
// - PMIX_ERR_BAD_PARAM: bad options (port lists, include/exclude);
// - PMIX_ERR_INIT: every candidate port of an address is taken, nothing is
//   left to listen on (both families disabled, remote with no matching
//   interface, no loopback address), or a socket call failed.
// On error every socket opened by this call is closed.
[[nodiscard]] pmix_status_t open_listeners(const tcp_options& o, std::vector<tcp_listener>& out,
                                           std::string& error);

// Closes every listener's descriptor and empties `listeners`.
void close_listeners(std::vector<tcp_listener>& listeners);

// The URI of a listener bound to `addr` (AF_INET or AF_INET6, port included):
// "tcp4://a.b.c.d:port" or "tcp6://[addr]:port". Empty for another family.
std::string tcp_uri(const sockaddr_storage& addr);

// The inverse of tcp_uri(), for a client's connect(): accepts "tcp4://a.b.c.d:port"
// or "tcp6://[addr]:port", alone or as the part after the last ';' of a PMIx
// URI ("nspace.rank;tcp4://..."). False, `out` and `len` untouched, when
// malformed (including port 0 and IPv6 scope ids).
[[nodiscard]] bool parse_tcp_uri(std::string_view uri, sockaddr_storage& out, socklen_t& len);

}  // namespace pmix::transport
