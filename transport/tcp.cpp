#include "transport/tcp.hpp"

#include "common/unique_fd.hpp"

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <memory>
#include <utility>

namespace pmix::transport {

namespace {

constexpr std::size_t max_port_count = 65536;

bool is_blank(char c) { return c == ' ' || c == '\t'; }

std::string_view trim(std::string_view s) {
  while (!s.empty() && is_blank(s.front())) s.remove_prefix(1);
  while (!s.empty() && is_blank(s.back())) s.remove_suffix(1);
  return s;
}

bool all_digits(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s) {
    if (c < '0' || c > '9') return false;
  }
  return true;
}

// A decimal number of at most `max`; false for anything else.
bool parse_number(std::string_view s, unsigned long max, unsigned long& value) {
  if (!all_digits(s)) return false;
  unsigned long v = 0;
  for (char c : s) {
    v = v * 10 + static_cast<unsigned long>(c - '0');
    if (v > max) return false;
  }
  value = v;
  return true;
}

std::string quoted(std::string_view s) { return "'" + std::string(s) + "'"; }

// The address bytes of an AF_INET / AF_INET6 socket address.
std::string_view address_bytes(const sockaddr_storage& ss) {
  if (ss.ss_family == AF_INET) {
    const auto& in = reinterpret_cast<const sockaddr_in&>(ss);
    return {reinterpret_cast<const char*>(&in.sin_addr), sizeof in.sin_addr};
  }
  if (ss.ss_family == AF_INET6) {
    const auto& in6 = reinterpret_cast<const sockaddr_in6&>(ss);
    return {reinterpret_cast<const char*>(&in6.sin6_addr), sizeof in6.sin6_addr};
  }
  return {};
}

unsigned full_prefix(int family) { return family == AF_INET ? 32u : 128u; }

std::string address_string(const sockaddr_storage& ss) {
  char text[INET6_ADDRSTRLEN] = {};
  const auto bytes = address_bytes(ss);
  if (bytes.empty() || !::inet_ntop(ss.ss_family, bytes.data(), text, sizeof text)) return {};
  return text;
}

std::uint16_t port_of(const sockaddr_storage& ss) {
  if (ss.ss_family == AF_INET) return ntohs(reinterpret_cast<const sockaddr_in&>(ss).sin_port);
  return ntohs(reinterpret_cast<const sockaddr_in6&>(ss).sin6_port);
}

void set_port(sockaddr_storage& ss, std::uint16_t port) {
  if (ss.ss_family == AF_INET) {
    reinterpret_cast<sockaddr_in&>(ss).sin_port = htons(port);
  } else {
    reinterpret_cast<sockaddr_in6&>(ss).sin6_port = htons(port);
  }
}

socklen_t length_of(int family) {
  return family == AF_INET ? sizeof(sockaddr_in) : sizeof(sockaddr_in6);
}

// Fills `out` with an AF_INET / AF_INET6 address parsed from `text`.
bool parse_address(std::string_view text, int family, sockaddr_storage& out) {
  const std::string host(text);
  sockaddr_storage ss{};
  ss.ss_family = static_cast<sa_family_t>(family);
  void* dest = family == AF_INET ? static_cast<void*>(&reinterpret_cast<sockaddr_in&>(ss).sin_addr)
                                 : static_cast<void*>(&reinterpret_cast<sockaddr_in6&>(ss).sin6_addr);
  if (::inet_pton(family, host.c_str(), dest) != 1) return false;
  out = ss;
  return true;
}

bool is_standard_loopback(const sockaddr_storage& ss) {
  if (ss.ss_family == AF_INET) {
    return ntohl(reinterpret_cast<const sockaddr_in&>(ss).sin_addr.s_addr) == INADDR_LOOPBACK;
  }
  if (ss.ss_family == AF_INET6) {
    return IN6_IS_ADDR_LOOPBACK(&reinterpret_cast<const sockaddr_in6&>(ss).sin6_addr);
  }
  return false;
}

bool is_ipv6_link_local(const sockaddr_storage& ss) {
  return ss.ss_family == AF_INET6 &&
         IN6_IS_ADDR_LINKLOCAL(&reinterpret_cast<const sockaddr_in6&>(ss).sin6_addr);
}

bool is_loopback_address(const sockaddr_storage& ss) {
  if (ss.ss_family == AF_INET) {
    return (ntohl(reinterpret_cast<const sockaddr_in&>(ss).sin_addr.s_addr) >> 24) == 127;
  }
  return is_standard_loopback(ss);
}

unsigned prefix_of_netmask(const sockaddr* mask, int family) {
  if (!mask || mask->sa_family != family) return full_prefix(family);
  sockaddr_storage ss{};
  std::memcpy(&ss, mask, length_of(family));
  unsigned bits = 0;
  for (char byte : address_bytes(ss)) {
    auto b = static_cast<unsigned char>(byte);
    for (; b & 0x80; b = static_cast<unsigned char>(b << 1)) ++bits;
    if (static_cast<unsigned char>(byte) != 0xff) break;
  }
  return bits;
}

// One PMIX_TCP_IF_INCLUDE / PMIX_TCP_IF_EXCLUDE entry, parsed.
struct interface_entry {
  std::string device;  // set for a device name
  sockaddr_storage network{};
  unsigned prefix_len = 0;
};

// Address-looking text (digits and dots, or hex digits and colons, or a '/')
// must parse as an address; anything else is a device name.
bool looks_like_address(std::string_view s) {
  if (s.find('/') != std::string_view::npos) return true;
  bool digits_dots = s.find('.') != std::string_view::npos;
  bool hex_colons = s.find(':') != std::string_view::npos;
  for (char c : s) {
    const bool digit = c >= '0' && c <= '9';
    const bool hex = digit || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
    if (!digit && c != '.') digits_dots = false;
    if (!hex && c != ':' && c != '.') hex_colons = false;
  }
  return digits_dots || hex_colons;
}

bool parse_entry(std::string_view raw, interface_entry& out, std::string& error) {
  const auto entry = trim(raw);
  if (entry.empty()) {
    error = "empty interface entry";
    return false;
  }
  if (!looks_like_address(entry)) {
    const bool bad_char = entry.find_first_of(" \t,/") != std::string_view::npos;
    if (entry.size() >= IFNAMSIZ || bad_char) {
      error = "malformed device name " + quoted(entry);
      return false;
    }
    out = interface_entry{};
    out.device = std::string(entry);
    return true;
  }
  const auto slash = entry.find('/');
  const auto host = entry.substr(0, slash);
  interface_entry parsed;
  int family = AF_INET;
  if (!parse_address(host, AF_INET, parsed.network)) {
    family = AF_INET6;
    if (!parse_address(host, AF_INET6, parsed.network)) {
      error = "malformed address in " + quoted(entry);
      return false;
    }
  }
  parsed.prefix_len = full_prefix(family);
  if (slash != std::string_view::npos) {
    unsigned long prefix = 0;
    if (!parse_number(entry.substr(slash + 1), full_prefix(family), prefix)) {
      error = "malformed prefix length in " + quoted(entry);
      return false;
    }
    parsed.prefix_len = static_cast<unsigned>(prefix);
  }
  out = parsed;
  return true;
}

bool entry_matches(const interface_address& a, const interface_entry& e) {
  if (!e.device.empty()) {
    if (a.device == e.device) return true;
    // "eth0" also names the IPv4 aliases "eth0:N"; "eth0:1" names only itself.
    return a.device.size() > e.device.size() && a.device.compare(0, e.device.size(), e.device) == 0 &&
           a.device[e.device.size()] == ':';
  }
  if (a.addr.ss_family != e.network.ss_family) return false;
  const auto want = address_bytes(e.network);
  const auto have = address_bytes(a.addr);
  const unsigned whole = e.prefix_len / 8;
  if (want.compare(0, whole, have.substr(0, whole)) != 0) return false;
  const unsigned rest = e.prefix_len % 8;
  if (rest == 0) return true;
  const auto mask = static_cast<unsigned char>(0xff << (8 - rest));
  return (static_cast<unsigned char>(want[whole]) & mask) ==
         (static_cast<unsigned char>(have[whole]) & mask);
}

bool parse_entries(const std::vector<std::string>& entries, const char* attribute,
                   std::vector<interface_entry>& out, std::string& error) {
  for (const auto& raw : entries) {
    interface_entry e;
    if (!parse_entry(raw, e, error)) {
      error = std::string(attribute) + ": " + error;
      return false;
    }
    out.push_back(std::move(e));
  }
  return true;
}

bool any_matches(const interface_address& a, const std::vector<interface_entry>& entries) {
  for (const auto& e : entries) {
    if (entry_matches(a, e)) return true;
  }
  return false;
}

bool family_enabled(int family, const tcp_options& o) {
  return (family == AF_INET && !o.disable_ipv4) || (family == AF_INET6 && !o.disable_ipv6);
}

std::string errno_text(const char* call, int err) { return std::string(call) + ": " + std::strerror(err); }

enum class open_result { listening, ports_taken, address_unavailable, failed };

// Tries `ports` in order on `address` until one binds and listens. On
// listening, `fd` is the socket and `bound` its address (with the port).
open_result open_one(const interface_address& address, const std::vector<std::uint16_t>& ports,
                     unique_fd& fd, sockaddr_storage& bound, std::string& reason) {
  const int one = 1;
  for (const auto port : ports) {
    unique_fd s(::socket(address.family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
    if (s.get() < 0) {
      reason = errno_text("socket", errno);
      return open_result::failed;
    }
    if (::setsockopt(s.get(), SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) != 0) {
      reason = errno_text("setsockopt(SO_REUSEADDR)", errno);
      return open_result::failed;
    }
    if (address.family == AF_INET6 &&
        ::setsockopt(s.get(), IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof one) != 0) {
      reason = errno_text("setsockopt(IPV6_V6ONLY)", errno);
      return open_result::failed;
    }
    sockaddr_storage local = address.addr;
    set_port(local, port);
    if (::bind(s.get(), reinterpret_cast<const sockaddr*>(&local), length_of(address.family)) != 0) {
      const int err = errno;
      reason = errno_text("bind", err);
      if (err == EADDRINUSE || err == EACCES) continue;
      return err == EADDRNOTAVAIL ? open_result::address_unavailable : open_result::failed;
    }
    if (::listen(s.get(), SOMAXCONN) != 0) {
      const int err = errno;
      reason = errno_text("listen", err);
      if (err == EADDRINUSE) continue;
      return open_result::failed;
    }
    socklen_t len = sizeof bound;
    if (::getsockname(s.get(), reinterpret_cast<sockaddr*>(&bound), &len) != 0) {
      reason = errno_text("getsockname", errno);
      return open_result::failed;
    }
    fd = std::move(s);
    return open_result::listening;
  }
  return open_result::ports_taken;
}

// Why select_addresses() left nothing to listen on.
std::string nothing_to_listen_on(const tcp_options& o) {
  if (o.disable_ipv4 && o.disable_ipv6) {
    return "nothing to listen on: both IPv4 and IPv6 are disabled (PMIX_TCP_DISABLE_IPV4, "
           "PMIX_TCP_DISABLE_IPV6)";
  }
  if (o.remote) {
    return "nothing to listen on: no enabled non-loopback interface address is left by "
           "PMIX_TCP_IF_INCLUDE / PMIX_TCP_IF_EXCLUDE";
  }
  return "nothing to listen on: no enabled loopback address (127.0.0.1, ::1) is up";
}

}  // namespace

bool parse_ports(std::string_view text, std::vector<std::uint16_t>& out, std::string& error) {
  const auto whole = trim(text);
  if (whole == "0" || whole == "-1") {
    out.assign(1, 0);
    return true;
  }
  if (whole.empty()) {
    error = "empty port list";
    return false;
  }
  std::vector<std::uint16_t> ports;
  std::string_view rest = whole;
  while (true) {
    const auto comma = rest.find(',');
    const auto entry = trim(rest.substr(0, comma));
    if (entry.empty()) {
      error = "empty entry in port list " + quoted(whole);
      return false;
    }
    const auto dash = entry.find('-');
    const auto first_text = dash == std::string_view::npos ? entry : trim(entry.substr(0, dash));
    const auto last_text = dash == std::string_view::npos ? entry : trim(entry.substr(dash + 1));
    unsigned long first = 0;
    unsigned long last = 0;
    if (!parse_number(first_text, 65535, first) || !parse_number(last_text, 65535, last)) {
      error = "malformed port or range " + quoted(entry) + " (ports are 1-65535)";
      return false;
    }
    if (first == 0) {
      error = "port 0 (the kernel's choice) must be given alone, not in " + quoted(entry);
      return false;
    }
    if (last < first) {
      error = "reversed port range " + quoted(entry);
      return false;
    }
    if (ports.size() + (last - first + 1) > max_port_count) {
      error = "port list " + quoted(whole) + " has more than 65536 ports";
      return false;
    }
    for (auto p = first; p <= last; ++p) ports.push_back(static_cast<std::uint16_t>(p));
    if (comma == std::string_view::npos) break;
    rest.remove_prefix(comma + 1);
  }
  out = std::move(ports);
  return true;
}

std::vector<interface_address> list_interfaces() {
  std::vector<interface_address> out;
  ifaddrs* head = nullptr;
  if (::getifaddrs(&head) != 0) return out;
  const std::unique_ptr<ifaddrs, void (*)(ifaddrs*)> owner(head, ::freeifaddrs);
  for (const ifaddrs* i = head; i; i = i->ifa_next) {
    if (!i->ifa_addr || !(i->ifa_flags & IFF_UP) || !i->ifa_name) continue;
    const int family = i->ifa_addr->sa_family;
    if (family != AF_INET && family != AF_INET6) continue;
    interface_address a;
    a.device = i->ifa_name;
    a.family = family;
    std::memcpy(&a.addr, i->ifa_addr, length_of(family));
    set_port(a.addr, 0);
    if (family == AF_INET6) {
      if (is_ipv6_link_local(a.addr)) continue;
      auto& in6 = reinterpret_cast<sockaddr_in6&>(a.addr);
      in6.sin6_scope_id = 0;
      in6.sin6_flowinfo = 0;
    }
    a.prefix_len = prefix_of_netmask(i->ifa_netmask, family);
    a.loopback = (i->ifa_flags & IFF_LOOPBACK) != 0 || is_loopback_address(a.addr);
    out.push_back(std::move(a));
  }
  return out;
}

bool matches(const interface_address& a, const std::string& entry, std::string& error) {
  interface_entry e;
  if (!parse_entry(entry, e, error)) return false;
  return entry_matches(a, e);
}

pmix_status_t select_addresses(const std::vector<interface_address>& all, const tcp_options& o,
                               std::vector<interface_address>& out, std::string& error) {
  if (!o.include.empty() && !o.exclude.empty()) {
    error = "PMIX_TCP_IF_INCLUDE and PMIX_TCP_IF_EXCLUDE cannot be combined";
    return PMIX_ERR_BAD_PARAM;
  }
  std::vector<interface_entry> include;
  std::vector<interface_entry> exclude;
  if (!parse_entries(o.include, "PMIX_TCP_IF_INCLUDE", include, error) ||
      !parse_entries(o.exclude, "PMIX_TCP_IF_EXCLUDE", exclude, error)) {
    return PMIX_ERR_BAD_PARAM;
  }
  std::vector<interface_address> selected;
  bool have_ipv4_loopback = false;
  bool have_ipv6_loopback = false;
  for (const auto& a : all) {
    if (!family_enabled(a.family, o) || is_ipv6_link_local(a.addr)) continue;
    if (o.remote) {
      if (a.loopback) continue;
      if (!include.empty() && !any_matches(a, include)) continue;
      if (any_matches(a, exclude)) continue;
    } else {
      if (!is_standard_loopback(a.addr)) continue;
      bool& seen = a.family == AF_INET ? have_ipv4_loopback : have_ipv6_loopback;
      if (seen) continue;
      seen = true;
    }
    selected.push_back(a);
  }
  out = std::move(selected);
  return PMIX_SUCCESS;
}

pmix_status_t open_listeners(const tcp_options& o, std::vector<tcp_listener>& out, std::string& error) {
  std::vector<std::uint16_t> ipv4_ports;
  std::vector<std::uint16_t> ipv6_ports;
  if (!parse_ports(o.ipv4_ports, ipv4_ports, error)) {
    error = "PMIX_TCP_IPV4_PORT: " + error;
    return PMIX_ERR_BAD_PARAM;
  }
  if (!parse_ports(o.ipv6_ports, ipv6_ports, error)) {
    error = "PMIX_TCP_IPV6_PORT: " + error;
    return PMIX_ERR_BAD_PARAM;
  }
  std::vector<interface_address> addresses;
  if (const auto rc = select_addresses(list_interfaces(), o, addresses, error); rc != PMIX_SUCCESS) {
    return rc;
  }
  if (addresses.empty()) {
    error = nothing_to_listen_on(o);
    return PMIX_ERR_INIT;
  }

  std::vector<unique_fd> sockets;  // closes everything opened here on an error return
  std::vector<tcp_listener> listeners;
  std::string skipped;
  for (const auto& a : addresses) {
    const bool ipv4 = a.family == AF_INET;
    unique_fd fd;
    sockaddr_storage bound{};
    std::string reason;
    const auto where = address_string(a.addr) + " (" + a.device + ")";
    switch (open_one(a, ipv4 ? ipv4_ports : ipv6_ports, fd, bound, reason)) {
      case open_result::listening:
        listeners.push_back(tcp_listener{fd.get(), tcp_uri(bound), a.device});
        sockets.push_back(std::move(fd));
        break;
      case open_result::address_unavailable:
        skipped += (skipped.empty() ? "" : "; ") + where + ": " + reason;
        break;
      case open_result::ports_taken:
        error = "every candidate port of " + where + " is in use (" +
                (ipv4 ? "PMIX_TCP_IPV4_PORT " : "PMIX_TCP_IPV6_PORT ") +
                quoted(ipv4 ? o.ipv4_ports : o.ipv6_ports) + "; last " + reason + ")";
        return PMIX_ERR_INIT;
      case open_result::failed:
        error = "cannot listen on " + where + ": " + reason;
        return PMIX_ERR_INIT;
    }
  }
  if (listeners.empty()) {
    error = "nothing to listen on: no selected address could be bound: " + skipped;
    return PMIX_ERR_INIT;
  }
  for (auto& s : sockets) s.release();
  out = std::move(listeners);
  return PMIX_SUCCESS;
}

void close_listeners(std::vector<tcp_listener>& listeners) {
  for (const auto& l : listeners) {
    if (l.fd >= 0) ::close(l.fd);
  }
  listeners.clear();
}

std::string tcp_uri(const sockaddr_storage& addr) {
  const auto host = address_string(addr);
  if (host.empty()) return {};
  const auto port = std::to_string(port_of(addr));
  if (addr.ss_family == AF_INET) return "tcp4://" + host + ":" + port;
  return "tcp6://[" + host + "]:" + port;
}

bool parse_tcp_uri(std::string_view uri, sockaddr_storage& out, socklen_t& len) {
  if (const auto semicolon = uri.rfind(';'); semicolon != std::string_view::npos) {
    uri.remove_prefix(semicolon + 1);
  }
  constexpr std::string_view tcp4 = "tcp4://";
  constexpr std::string_view tcp6 = "tcp6://";
  int family = AF_UNSPEC;
  std::string_view host;
  std::string_view port_text;
  if (uri.substr(0, tcp4.size()) == tcp4) {
    const auto rest = uri.substr(tcp4.size());
    const auto colon = rest.find(':');
    if (colon == std::string_view::npos) return false;
    family = AF_INET;
    host = rest.substr(0, colon);
    port_text = rest.substr(colon + 1);
  } else if (uri.substr(0, tcp6.size()) == tcp6) {
    const auto rest = uri.substr(tcp6.size());
    const auto close = rest.find(']');
    if (rest.empty() || rest.front() != '[' || close == std::string_view::npos ||
        rest.substr(close + 1, 1) != ":") {
      return false;
    }
    family = AF_INET6;
    host = rest.substr(1, close - 1);
    port_text = rest.substr(close + 2);
  } else {
    return false;
  }
  unsigned long port = 0;
  sockaddr_storage ss{};
  if (!parse_number(port_text, 65535, port) || port == 0 || !parse_address(host, family, ss)) {
    return false;
  }
  set_port(ss, static_cast<std::uint16_t>(port));
  out = ss;
  len = length_of(family);
  return true;
}

}  // namespace pmix::transport
