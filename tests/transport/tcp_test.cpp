// The server's TCP listening sockets (transport/tcp.hpp): port lists, interface
// entries, address selection and real listeners on the loopback interface
// (spec 20.2.247.4.2 PMIX_SERVER_REMOTE_CONNECTIONS, 20.2.247.4.3).
#include "transport/tcp.hpp"

#include <arpa/inet.h>
#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <unistd.h>

#include <doctest/doctest.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include <pmix_common.h>

namespace tcp = pmix::transport;

namespace {

sockaddr_storage address_of(const std::string& text, std::uint16_t port = 0) {
  sockaddr_storage ss{};
  if (text.find(':') == std::string::npos) {
    auto& in = reinterpret_cast<sockaddr_in&>(ss);
    in.sin_family = AF_INET;
    in.sin_port = htons(port);
    REQUIRE(::inet_pton(AF_INET, text.c_str(), &in.sin_addr) == 1);
  } else {
    auto& in6 = reinterpret_cast<sockaddr_in6&>(ss);
    in6.sin6_family = AF_INET6;
    in6.sin6_port = htons(port);
    REQUIRE(::inet_pton(AF_INET6, text.c_str(), &in6.sin6_addr) == 1);
  }
  return ss;
}

std::string text_of(const sockaddr_storage& ss) {
  char text[INET6_ADDRSTRLEN] = {};
  const void* src = ss.ss_family == AF_INET
                        ? static_cast<const void*>(&reinterpret_cast<const sockaddr_in&>(ss).sin_addr)
                        : static_cast<const void*>(&reinterpret_cast<const sockaddr_in6&>(ss).sin6_addr);
  return ::inet_ntop(ss.ss_family, src, text, sizeof text) ? text : "?";
}

std::uint16_t port_of(const sockaddr_storage& ss) {
  return ss.ss_family == AF_INET ? ntohs(reinterpret_cast<const sockaddr_in&>(ss).sin_port)
                                 : ntohs(reinterpret_cast<const sockaddr_in6&>(ss).sin6_port);
}

socklen_t length_of(int family) {
  return family == AF_INET ? sizeof(sockaddr_in) : sizeof(sockaddr_in6);
}

tcp::interface_address interface(const std::string& device, const std::string& address,
                                 unsigned prefix_len, bool loopback = false) {
  tcp::interface_address a;
  a.device = device;
  a.addr = address_of(address);
  a.family = a.addr.ss_family;
  a.prefix_len = prefix_len;
  a.loopback = loopback;
  return a;
}

std::vector<std::string> texts(const std::vector<tcp::interface_address>& v) {
  std::vector<std::string> out;
  for (const auto& a : v) out.push_back(text_of(a.addr));
  return out;
}

using strings = std::vector<std::string>;

// A machine-like list: loopback (with a second 127/8 address), two devices with
// IPv4 and IPv6 addresses, an IPv4 alias, and IPv6 link-local addresses.
std::vector<tcp::interface_address> synthetic_interfaces() {
  return {
      interface("lo", "127.0.0.1", 8, true),
      interface("lo", "127.0.1.1", 8, true),
      interface("eth0", "10.1.0.1", 16),
      interface("eth0:1", "10.1.0.9", 16),
      interface("eth1", "192.168.5.7", 24),
      interface("lo", "::1", 128, true),
      interface("eth0", "fd00::1", 64),
      interface("eth0", "fe80::1", 64),
      interface("eth1", "fe80::2", 64),
  };
}

std::vector<std::string> select(const tcp::tcp_options& o) {
  std::vector<tcp::interface_address> out;
  std::string error;
  const auto rc = tcp::select_addresses(synthetic_interfaces(), o, out, error);
  REQUIRE_MESSAGE(rc == PMIX_SUCCESS, error);
  return texts(out);
}

std::vector<std::uint16_t> ports(const std::string& text) {
  std::vector<std::uint16_t> out;
  std::string error;
  REQUIRE_MESSAGE(tcp::parse_ports(text, out, error), error);
  return out;
}

bool bad_ports(const std::string& text) {
  std::vector<std::uint16_t> out{42};
  std::string error;
  const bool ok = tcp::parse_ports(text, out, error);
  CHECK_MESSAGE(out == std::vector<std::uint16_t>{42}, "out changed by bad list '" << text << "'");
  return !ok && !error.empty();
}

bool match(const tcp::interface_address& a, const std::string& entry) {
  std::string error;
  const bool m = tcp::matches(a, entry, error);
  CHECK_MESSAGE(error.empty(), "'" << entry << "': " << error);
  return m;
}

bool malformed(const std::string& entry) {
  std::string error;
  const bool m = tcp::matches(interface("eth0", "10.1.0.1", 16), entry, error);
  return !m && !error.empty();
}

// Descriptors open in this process.
int count_fds() {
  DIR* d = ::opendir("/proc/self/fd");
  REQUIRE(d != nullptr);
  int n = 0;
  while (const dirent* e = ::readdir(d)) {
    if (e->d_name[0] != '.') ++n;
  }
  ::closedir(d);
  return n;
}

// A listening socket the test holds on a loopback port, to make that port busy.
struct held_socket {
  int fd = -1;
  std::uint16_t port = 0;
  held_socket(int family, std::uint16_t wanted) {
    fd = ::socket(family, SOCK_STREAM | SOCK_CLOEXEC, 0);
    REQUIRE(fd >= 0);
    sockaddr_storage ss = address_of(family == AF_INET ? "127.0.0.1" : "::1", wanted);
    REQUIRE(::bind(fd, reinterpret_cast<sockaddr*>(&ss), length_of(family)) == 0);
    REQUIRE(::listen(fd, 4) == 0);
    socklen_t len = sizeof ss;
    REQUIRE(::getsockname(fd, reinterpret_cast<sockaddr*>(&ss), &len) == 0);
    port = port_of(ss);
  }
  ~held_socket() { ::close(fd); }
  held_socket(const held_socket&) = delete;
  held_socket& operator=(const held_socket&) = delete;
};

// A port that was free on the family's loopback address a moment ago.
std::uint16_t free_port(int family) { return held_socket(family, 0).port; }

bool has_ipv6_loopback() {
  for (const auto& a : tcp::list_interfaces()) {
    if (a.family == AF_INET6 && text_of(a.addr) == "::1") return true;
  }
  return false;
}

// Closes the listeners when a test case ends, whatever its outcome.
struct listener_guard {
  std::vector<tcp::tcp_listener>& listeners;
  ~listener_guard() { tcp::close_listeners(listeners); }
};

int int_option(int fd, int level, int name) {
  int value = -1;
  socklen_t len = sizeof value;
  REQUIRE(::getsockopt(fd, level, name, &value, &len) == 0);
  return value;
}

bool readable_within(int fd, int ms) {
  pollfd p{fd, POLLIN, 0};
  return ::poll(&p, 1, ms) == 1 && (p.revents & POLLIN);
}

// Connects a client to the listener's URI, checks the listener accepts it
// and that bytes pass from the client to the accepted socket.
void check_accepts(const tcp::tcp_listener& l) {
  sockaddr_storage target{};
  socklen_t target_len = 0;
  REQUIRE(tcp::parse_tcp_uri(l.uri, target, target_len));
  const int client = ::socket(target.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
  REQUIRE(client >= 0);
  CHECK(::connect(client, reinterpret_cast<sockaddr*>(&target), target_len) == 0);
  REQUIRE(readable_within(l.fd, 5000));
  sockaddr_storage peer{};
  socklen_t peer_len = sizeof peer;
  const int accepted = ::accept4(l.fd, reinterpret_cast<sockaddr*>(&peer), &peer_len, SOCK_CLOEXEC);
  REQUIRE(accepted >= 0);
  sockaddr_storage client_local{};
  socklen_t client_len = sizeof client_local;
  REQUIRE(::getsockname(client, reinterpret_cast<sockaddr*>(&client_local), &client_len) == 0);
  CHECK(text_of(peer) == text_of(client_local));
  CHECK(port_of(peer) == port_of(client_local));
  CHECK(::send(client, "x", 1, MSG_NOSIGNAL) == 1);
  REQUIRE(readable_within(accepted, 5000));
  char byte = 0;
  CHECK(::recv(accepted, &byte, 1, 0) == 1);
  CHECK(byte == 'x');
  ::close(accepted);
  ::close(client);
}

// The listener's descriptor is what the event loop expects.
void check_descriptor(const tcp::tcp_listener& l) {
  CHECK((::fcntl(l.fd, F_GETFL) & O_NONBLOCK) != 0);
  CHECK((::fcntl(l.fd, F_GETFD) & FD_CLOEXEC) != 0);
  CHECK(int_option(l.fd, SOL_SOCKET, SO_ACCEPTCONN) == 1);
  CHECK(int_option(l.fd, SOL_SOCKET, SO_TYPE) == SOCK_STREAM);
  sockaddr_storage bound{};
  socklen_t len = sizeof bound;
  REQUIRE(::getsockname(l.fd, reinterpret_cast<sockaddr*>(&bound), &len) == 0);
  if (bound.ss_family == AF_INET6) CHECK(int_option(l.fd, IPPROTO_IPV6, IPV6_V6ONLY) == 1);
  CHECK(l.uri == tcp::tcp_uri(bound));
}

}  // namespace

TEST_SUITE("tcp") {
  TEST_CASE("parse_ports: 0 and -1 let the kernel choose [20.2.247.4.3 PMIX_TCP_IPV4_PORT]") {
    CHECK(ports("0") == std::vector<std::uint16_t>{0});
    CHECK(ports("-1") == std::vector<std::uint16_t>{0});
    CHECK(ports(" 0 ") == std::vector<std::uint16_t>{0});
  }

  TEST_CASE("parse_ports: single ports, ranges and lists keep their order [20.2.247.4.3 PMIX_TCP_IPV4_PORT]") {
    CHECK(ports("5000") == std::vector<std::uint16_t>{5000});
    CHECK(ports("1") == std::vector<std::uint16_t>{1});
    CHECK(ports("65535") == std::vector<std::uint16_t>{65535});
    CHECK(ports("5000-5002,6000") == std::vector<std::uint16_t>{5000, 5001, 5002, 6000});
    CHECK(ports("6000,5000-5001") == std::vector<std::uint16_t>{6000, 5000, 5001});
    CHECK(ports("5000-5000") == std::vector<std::uint16_t>{5000});
    CHECK(ports(" 5000 , 5001 - 5002 ") == std::vector<std::uint16_t>{5000, 5001, 5002});
    CHECK(ports("007") == std::vector<std::uint16_t>{7});

    const auto all = ports("1-65535");
    REQUIRE(all.size() == 65535);
    CHECK(all.front() == 1);
    CHECK(all.back() == 65535);
    CHECK(ports("1-65535,80").size() == 65536);  // the limit itself is accepted
  }

  TEST_CASE("parse_ports: malformed lists are refused and leave the output alone [20.2.247.4.3 PMIX_TCP_IPV6_PORT]") {
    for (const char* text : {"", " ", "abc", "50a0", "5000.0", "+5000", "0x10", "65536", "99999999999999999999",
                             "5002-5000", "5000,", ",5000", "5000,,5001", "-5", "5000-", "-", "5000-5001-5002",
                             "0,5000", "5000,0", "0-10", "-1,5000", "5000,-1", "1-65535,1,2"}) {
      CAPTURE(text);
      CHECK(bad_ports(text));
    }
    std::vector<std::uint16_t> out;
    std::string error;
    CHECK_FALSE(tcp::parse_ports("5002-5000", out, error));
    CHECK(error.find("5002-5000") != std::string::npos);
    CHECK_FALSE(tcp::parse_ports("1-65535,1-2", out, error));
    CHECK(error.find("65536") != std::string::npos);
  }

  TEST_CASE("matches: a device name matches its addresses and IPv4 aliases [20.2.247.4.3 PMIX_TCP_IF_INCLUDE]") {
    const auto eth0 = interface("eth0", "10.1.0.1", 16);
    const auto eth0_v6 = interface("eth0", "fd00::1", 64);
    const auto alias = interface("eth0:1", "10.1.0.9", 16);
    CHECK(match(eth0, "eth0"));
    CHECK(match(eth0_v6, "eth0"));
    CHECK(match(eth0, " eth0 "));
    CHECK(match(alias, "eth0"));
    CHECK(match(alias, "eth0:1"));
    CHECK_FALSE(match(eth0, "eth0:1"));
    CHECK_FALSE(match(eth0, "eth1"));
    CHECK_FALSE(match(eth0, "eth"));
    CHECK_FALSE(match(interface("eth00", "10.1.0.2", 16), "eth0"));
    CHECK(match(interface("veth-a.100", "10.2.0.1", 24), "veth-a.100"));
  }

  TEST_CASE("matches: IPv4 CIDR and bare addresses [20.2.247.4.3 PMIX_TCP_IF_INCLUDE]") {
    const auto a = interface("eth0", "10.1.2.3", 16);
    CHECK(match(a, "10.1.0.0/16"));
    CHECK(match(a, "10.0.0.0/8"));
    CHECK(match(a, "10.1.2.3/32"));
    CHECK(match(a, "10.1.2.3"));  // a bare address is /32
    CHECK(match(a, "0.0.0.0/0"));
    CHECK(match(a, "10.1.9.9/16"));  // host bits of the network do not matter
    CHECK_FALSE(match(a, "10.2.0.0/16"));
    CHECK_FALSE(match(a, "10.1.2.4"));
    CHECK_FALSE(match(a, "fd00::/8"));
    CHECK_FALSE(match(a, "::/0"));  // families never cross
    // A prefix that is not a multiple of 8.
    CHECK(match(interface("eth0", "10.15.255.255", 8), "10.0.0.0/12"));
    CHECK_FALSE(match(interface("eth0", "10.16.0.0", 8), "10.0.0.0/12"));
  }

  TEST_CASE("matches: IPv6 CIDR and bare addresses [20.2.247.4.3 PMIX_TCP_IF_EXCLUDE]") {
    const auto a = interface("eth0", "fd00::2", 64);
    CHECK(match(a, "fd00::/8"));
    CHECK(match(a, "fc00::/7"));
    CHECK(match(a, "fd00::/64"));
    CHECK(match(a, "fd00::2"));  // a bare address is /128
    CHECK(match(a, "FD00::2/128"));
    CHECK(match(a, "::/0"));
    CHECK(match(interface("eth0", "fdff::1", 64), "fd00::/8"));
    CHECK_FALSE(match(a, "fd00::3"));
    CHECK_FALSE(match(a, "fe00::/8"));
    CHECK_FALSE(match(a, "fd00:0:0:1::/64"));
    CHECK_FALSE(match(a, "10.0.0.0/8"));
    CHECK_FALSE(match(a, "0.0.0.0/0"));
  }

  TEST_CASE("matches: malformed entries are errors [20.2.247.4.3 PMIX_TCP_IF_EXCLUDE]") {
    for (const char* entry : {"", "  ", "10.1.0.0/33", "10.1.0.0/", "10.1.0.0/abc", "10.1.0.0/-1", "10.1.0/16",
                              "10.1.0", "1.2.3.4.5", "256.1.1.1", "fd00::/129", "fd00:::1", "fd00::/", "/8",
                              "a/b", "averyveryverylongname0", "eth 0", "eth0,eth1"}) {
      CAPTURE(entry);
      CHECK(malformed(entry));
    }
  }

  TEST_CASE("select_addresses: without remote only 127.0.0.1 and ::1 [20.2.247.4.2 PMIX_SERVER_REMOTE_CONNECTIONS]") {
    tcp::tcp_options o;
    CHECK(select(o) == strings{"127.0.0.1", "::1"});
    o.include = {"eth0"};  // does not apply to local-only listening
    CHECK(select(o) == strings{"127.0.0.1", "::1"});
    o.include.clear();
    o.exclude = {"lo", "127.0.0.0/8"};
    CHECK(select(o) == strings{"127.0.0.1", "::1"});

    std::vector<tcp::interface_address> out;
    std::string error;
    REQUIRE(tcp::select_addresses(synthetic_interfaces(), tcp::tcp_options{}, out, error) == PMIX_SUCCESS);
    REQUIRE(out.size() == 2);
    CHECK(out[0].device == "lo");
    CHECK(out[0].family == AF_INET);
    CHECK(out[1].family == AF_INET6);
  }

  TEST_CASE("select_addresses: with remote every non-loopback address, link-local dropped [20.2.247.4.2 PMIX_SERVER_REMOTE_CONNECTIONS]") {
    tcp::tcp_options o;
    o.remote = true;
    CHECK(select(o) == strings{"10.1.0.1", "10.1.0.9", "192.168.5.7", "fd00::1"});
    o.include = {"lo"};  // loopback is never a remote address
    CHECK(select(o).empty());
    o.include = {"fe80::/10"};
    CHECK(select(o).empty());
  }

  TEST_CASE("select_addresses: include keeps only matching addresses [20.2.247.4.3 PMIX_TCP_IF_INCLUDE]") {
    tcp::tcp_options o;
    o.remote = true;
    o.include = {"eth0"};
    CHECK(select(o) == strings{"10.1.0.1", "10.1.0.9", "fd00::1"});
    o.include = {"10.0.0.0/8"};
    CHECK(select(o) == strings{"10.1.0.1", "10.1.0.9"});
    o.include = {"eth1", "fd00::/8"};
    CHECK(select(o) == strings{"192.168.5.7", "fd00::1"});
    o.include = {"10.1.0.9"};
    CHECK(select(o) == strings{"10.1.0.9"});
    o.include = {"eth9"};
    CHECK(select(o).empty());
  }

  TEST_CASE("select_addresses: exclude removes matching addresses [20.2.247.4.3 PMIX_TCP_IF_EXCLUDE]") {
    tcp::tcp_options o;
    o.remote = true;
    o.exclude = {"eth0"};
    CHECK(select(o) == strings{"192.168.5.7"});
    o.exclude = {"192.168.0.0/16", "fd00::1"};
    CHECK(select(o) == strings{"10.1.0.1", "10.1.0.9"});
    o.exclude = {"eth0:1"};
    CHECK(select(o) == strings{"10.1.0.1", "192.168.5.7", "fd00::1"});
    o.exclude = {"0.0.0.0/0", "::/0"};
    CHECK(select(o).empty());
  }

  TEST_CASE("select_addresses: include with exclude and malformed entries are PMIX_ERR_BAD_PARAM [20.2.247.4.3 PMIX_TCP_IF_INCLUDE]") {
    for (const bool remote : {true, false}) {
      CAPTURE(remote);
      tcp::tcp_options o;
      o.remote = remote;
      std::vector<tcp::interface_address> out{interface("sentinel", "10.9.9.9", 8)};
      std::string error;
      o.include = {"eth0"};
      o.exclude = {"eth1"};
      CHECK(tcp::select_addresses(synthetic_interfaces(), o, out, error) == PMIX_ERR_BAD_PARAM);
      CHECK(error.find("cannot be combined") != std::string::npos);
      o.exclude.clear();
      o.include = {"eth0", "10.0.0.0/33"};
      error.clear();
      CHECK(tcp::select_addresses(synthetic_interfaces(), o, out, error) == PMIX_ERR_BAD_PARAM);
      CHECK(error.find("PMIX_TCP_IF_INCLUDE") != std::string::npos);
      o.include.clear();
      o.exclude = {""};
      error.clear();
      CHECK(tcp::select_addresses(synthetic_interfaces(), o, out, error) == PMIX_ERR_BAD_PARAM);
      CHECK(error.find("PMIX_TCP_IF_EXCLUDE") != std::string::npos);
      REQUIRE(out.size() == 1);
      CHECK(out[0].device == "sentinel");  // untouched on error
    }
  }

  TEST_CASE("select_addresses: disabled families are dropped [20.2.247.4.3 PMIX_TCP_DISABLE_IPV4]") {
    tcp::tcp_options o;
    o.disable_ipv4 = true;
    CHECK(select(o) == strings{"::1"});
    o.remote = true;
    CHECK(select(o) == strings{"fd00::1"});
    o.disable_ipv4 = false;
    o.disable_ipv6 = true;
    CHECK(select(o) == strings{"10.1.0.1", "10.1.0.9", "192.168.5.7"});
    o.remote = false;
    CHECK(select(o) == strings{"127.0.0.1"});
    o.disable_ipv4 = true;
    CHECK(select(o).empty());
  }

  TEST_CASE("list_interfaces: up IPv4/IPv6 addresses with loopback, no link-local") {
    const auto all = tcp::list_interfaces();
    bool ipv4_loopback = false;
    for (const auto& a : all) {
      CAPTURE(a.device);
      CAPTURE(text_of(a.addr));
      REQUIRE((a.family == AF_INET || a.family == AF_INET6));
      CHECK(a.addr.ss_family == a.family);
      CHECK(port_of(a.addr) == 0);
      CHECK(a.prefix_len <= (a.family == AF_INET ? 32u : 128u));
      if (a.family == AF_INET6) {
        CHECK_FALSE(IN6_IS_ADDR_LINKLOCAL(&reinterpret_cast<const sockaddr_in6&>(a.addr).sin6_addr));
      }
      if (text_of(a.addr) == "127.0.0.1") {
        ipv4_loopback = true;
        CHECK(a.device == "lo");
        CHECK(a.loopback);
        CHECK(a.prefix_len == 8);
      }
      if (text_of(a.addr) == "::1") {
        CHECK(a.loopback);
        CHECK(a.prefix_len == 128);
      }
      if (a.device != "lo") CHECK_FALSE(a.loopback);
    }
    CHECK(ipv4_loopback);
  }

  TEST_CASE("open_listeners: kernel-chosen ports on loopback accept connections [20.2.247.4.3 PMIX_TCP_IPV4_PORT]") {
    std::vector<tcp::tcp_listener> listeners;
    listener_guard guard{listeners};
    std::string error;
    REQUIRE_MESSAGE(tcp::open_listeners(tcp::tcp_options{}, listeners, error) == PMIX_SUCCESS, error);
    const bool ipv6 = has_ipv6_loopback();
    REQUIRE(listeners.size() == (ipv6 ? 2u : 1u));
    CHECK(listeners[0].uri.rfind("tcp4://127.0.0.1:", 0) == 0);
    CHECK(listeners[0].device == "lo");
    if (ipv6) CHECK(listeners[1].uri.rfind("tcp6://[::1]:", 0) == 0);
    for (const auto& l : listeners) {
      CAPTURE(l.uri);
      check_descriptor(l);
      sockaddr_storage ss{};
      socklen_t len = 0;
      REQUIRE(tcp::parse_tcp_uri(l.uri, ss, len));
      CHECK(port_of(ss) != 0);
      check_accepts(l);
    }
  }

  TEST_CASE("open_listeners: IPv4 and IPv6 listeners share one given port [20.2.247.4.3 PMIX_TCP_IPV6_PORT]") {
    if (!has_ipv6_loopback()) return;
    const auto port = std::to_string(free_port(AF_INET6));
    tcp::tcp_options o;
    o.ipv4_ports = port;
    o.ipv6_ports = port;
    std::vector<tcp::tcp_listener> listeners;
    listener_guard guard{listeners};
    std::string error;
    REQUIRE_MESSAGE(tcp::open_listeners(o, listeners, error) == PMIX_SUCCESS, error);
    REQUIRE(listeners.size() == 2);
    CHECK(listeners[0].uri == "tcp4://127.0.0.1:" + port);
    CHECK(listeners[1].uri == "tcp6://[::1]:" + port);
    for (const auto& l : listeners) check_accepts(l);
  }

  TEST_CASE("open_listeners: a taken first port moves on to the next in the list [20.2.247.4.3 PMIX_TCP_IPV4_PORT]") {
    for (const int family : {AF_INET, AF_INET6}) {
      if (family == AF_INET6 && !has_ipv6_loopback()) continue;
      CAPTURE(family);
      held_socket taken(family, 0);
      const auto next = free_port(family);
      const auto list = std::to_string(taken.port) + "," + std::to_string(next);
      tcp::tcp_options o;
      o.ipv4_ports = family == AF_INET ? list : "0";
      o.ipv6_ports = family == AF_INET6 ? list : "0";
      o.disable_ipv4 = family != AF_INET;
      o.disable_ipv6 = family != AF_INET6;
      std::vector<tcp::tcp_listener> listeners;
      listener_guard guard{listeners};
      std::string error;
      REQUIRE_MESSAGE(tcp::open_listeners(o, listeners, error) == PMIX_SUCCESS, error);
      REQUIRE(listeners.size() == 1);
      const auto expected = family == AF_INET ? "tcp4://127.0.0.1:" : "tcp6://[::1]:";
      CHECK(listeners[0].uri == expected + std::to_string(next));
      check_descriptor(listeners[0]);
      check_accepts(listeners[0]);
    }
  }

  TEST_CASE("open_listeners: every port taken is PMIX_ERR_INIT and leaks no descriptor [20.2.247.4.3 PMIX_TCP_IPV4_PORT]") {
    held_socket first(AF_INET, 0);
    held_socket second(AF_INET, 0);
    tcp::tcp_options o;
    o.ipv4_ports = std::to_string(first.port) + "," + std::to_string(second.port);
    o.disable_ipv6 = true;
    std::vector<tcp::tcp_listener> listeners{{-1, "sentinel", "none"}};
    std::string error;
    const int before = count_fds();
    CHECK(tcp::open_listeners(o, listeners, error) == PMIX_ERR_INIT);
    CHECK(count_fds() == before);
    CHECK(error.find("in use") != std::string::npos);
    CHECK(error.find("127.0.0.1") != std::string::npos);
    REQUIRE(listeners.size() == 1);
    CHECK(listeners[0].uri == "sentinel");  // untouched on error
  }

  TEST_CASE("open_listeners: a later address failing closes the listeners already opened [20.2.247.4.3 PMIX_TCP_IPV6_PORT]") {
    if (!has_ipv6_loopback()) return;
    held_socket first(AF_INET6, 0);
    held_socket second(AF_INET6, 0);
    tcp::tcp_options o;  // IPv4 (listed first) opens on a kernel port, then IPv6 fails
    o.ipv6_ports = std::to_string(first.port) + "," + std::to_string(second.port);
    std::vector<tcp::tcp_listener> listeners;
    std::string error;
    const int before = count_fds();
    CHECK(tcp::open_listeners(o, listeners, error) == PMIX_ERR_INIT);
    CHECK(count_fds() == before);
    CHECK(error.find("::1") != std::string::npos);
    CHECK(listeners.empty());
  }

  TEST_CASE("open_listeners: both families disabled is PMIX_ERR_INIT [20.2.247.4.3 PMIX_TCP_DISABLE_IPV6]") {
    for (const bool remote : {false, true}) {
      CAPTURE(remote);
      tcp::tcp_options o;
      o.remote = remote;
      o.disable_ipv4 = true;
      o.disable_ipv6 = true;
      std::vector<tcp::tcp_listener> listeners;
      std::string error;
      const int before = count_fds();
      CHECK(tcp::open_listeners(o, listeners, error) == PMIX_ERR_INIT);
      CHECK(count_fds() == before);
      CHECK(error.find("disabled") != std::string::npos);
      CHECK(listeners.empty());
    }
  }

  TEST_CASE("open_listeners: bad options are PMIX_ERR_BAD_PARAM [20.2.247.4.3 PMIX_TCP_IF_INCLUDE]") {
    std::vector<tcp::tcp_listener> listeners;
    std::string error;
    tcp::tcp_options o;
    o.ipv4_ports = "5000-4000";
    CHECK(tcp::open_listeners(o, listeners, error) == PMIX_ERR_BAD_PARAM);
    CHECK(error.find("PMIX_TCP_IPV4_PORT") != std::string::npos);
    o = tcp::tcp_options{};
    o.ipv6_ports = "http";
    CHECK(tcp::open_listeners(o, listeners, error) == PMIX_ERR_BAD_PARAM);
    CHECK(error.find("PMIX_TCP_IPV6_PORT") != std::string::npos);
    o = tcp::tcp_options{};
    o.remote = true;
    o.include = {"lo"};
    o.exclude = {"eth0"};
    CHECK(tcp::open_listeners(o, listeners, error) == PMIX_ERR_BAD_PARAM);
    o.exclude.clear();
    o.include = {"10.0.0.0/40"};
    CHECK(tcp::open_listeners(o, listeners, error) == PMIX_ERR_BAD_PARAM);
    CHECK(listeners.empty());
  }

  TEST_CASE("open_listeners: remote with no matching interface is PMIX_ERR_INIT [20.2.247.4.2 PMIX_SERVER_REMOTE_CONNECTIONS]") {
    for (const auto& include : {strings{"nosuchdev0"}, strings{"lo"}, strings{"127.0.0.0/8", "::1"}}) {
      CAPTURE(include.front());
      tcp::tcp_options o;
      o.remote = true;
      o.include = include;
      std::vector<tcp::tcp_listener> listeners;
      std::string error;
      const int before = count_fds();
      CHECK(tcp::open_listeners(o, listeners, error) == PMIX_ERR_INIT);
      CHECK(count_fds() == before);
      CHECK(error.find("nothing to listen on") != std::string::npos);
      CHECK(listeners.empty());
    }
  }

  TEST_CASE("open_listeners: remote listens on non-loopback addresses only [20.2.247.4.2 PMIX_SERVER_REMOTE_CONNECTIONS]") {
    bool any_remote = false;
    for (const auto& a : tcp::list_interfaces()) any_remote = any_remote || !a.loopback;
    tcp::tcp_options o;
    o.remote = true;
    std::vector<tcp::tcp_listener> listeners;
    listener_guard guard{listeners};
    std::string error;
    const auto rc = tcp::open_listeners(o, listeners, error);
    if (!any_remote) {
      CHECK(rc == PMIX_ERR_INIT);
      return;
    }
    REQUIRE_MESSAGE(rc == PMIX_SUCCESS, error);
    REQUIRE_FALSE(listeners.empty());
    for (const auto& l : listeners) {
      CAPTURE(l.uri);
      CHECK(l.device != "lo");
      check_descriptor(l);
      sockaddr_storage ss{};
      socklen_t len = 0;
      REQUIRE(tcp::parse_tcp_uri(l.uri, ss, len));
      const auto host = text_of(ss);
      CHECK(host.rfind("127.", 0) != 0);
      CHECK(host != "::1");
    }
  }

  TEST_CASE("tcp_uri formats IPv4 and bracketed IPv6 addresses") {
    CHECK(tcp::tcp_uri(address_of("10.1.0.1", 5000)) == "tcp4://10.1.0.1:5000");
    CHECK(tcp::tcp_uri(address_of("fd00::1", 5000)) == "tcp6://[fd00::1]:5000");
    CHECK(tcp::tcp_uri(address_of("::1", 65535)) == "tcp6://[::1]:65535");
    sockaddr_storage unix_address{};
    unix_address.ss_family = AF_UNIX;
    CHECK(tcp::tcp_uri(unix_address).empty());
  }

  TEST_CASE("parse_tcp_uri reads tcp4 and tcp6 URIs, alone or after a PMIx URI's ';'") {
    sockaddr_storage ss{};
    socklen_t len = 0;
    REQUIRE(tcp::parse_tcp_uri("tcp4://10.1.0.1:5000", ss, len));
    CHECK(ss.ss_family == AF_INET);
    CHECK(len == sizeof(sockaddr_in));
    CHECK(text_of(ss) == "10.1.0.1");
    CHECK(port_of(ss) == 5000);

    REQUIRE(tcp::parse_tcp_uri("tcp6://[fd00::1]:65535", ss, len));
    CHECK(ss.ss_family == AF_INET6);
    CHECK(len == sizeof(sockaddr_in6));
    CHECK(text_of(ss) == "fd00::1");
    CHECK(port_of(ss) == 65535);

    REQUIRE(tcp::parse_tcp_uri("job-1.0;tcp4://127.0.0.1:1", ss, len));
    CHECK(text_of(ss) == "127.0.0.1");
    CHECK(port_of(ss) == 1);
    REQUIRE(tcp::parse_tcp_uri("a;b.4294967294;tcp6://[::1]:6000", ss, len));
    CHECK(text_of(ss) == "::1");
    CHECK(port_of(ss) == 6000);

    for (const auto& address : {address_of("10.1.0.1", 5000), address_of("fd00::1:2", 80)}) {
      CAPTURE(tcp::tcp_uri(address));
      REQUIRE(tcp::parse_tcp_uri(tcp::tcp_uri(address), ss, len));
      CHECK(len == length_of(address.ss_family));
      CHECK(std::memcmp(&ss, &address, len) == 0);
    }
  }

  TEST_CASE("parse_tcp_uri refuses malformed URIs and leaves the outputs alone") {
    for (const char* uri :
         {"", "tcp4://", "tcp4://1.2.3.4", "tcp4://1.2.3.4:", "tcp4://1.2.3.4:0", "tcp4://1.2.3.4:65536",
          "tcp4://1.2.3:5", "tcp4://host:5", "tcp4://[::1]:5", "tcp4://1.2.3.4:5x", "tcp4://1.2.3.4:-5",
          "tcp4://1.2.3.4:5:6", "tcp6://::1:5", "tcp6://[::1]5", "tcp6://[::1]:", "tcp6://[]:5",
          "tcp6://[fe80::1%eth0]:5", "tcp6://[1.2.3.4]:5", "tcp6://[::1:5", "tcp://1.2.3.4:5",
          "TCP4://1.2.3.4:5", "tcp4://1.2.3.4:5;", "ns.0;", "tcp4:/1.2.3.4:5", " tcp4://1.2.3.4:5"}) {
      CAPTURE(uri);
      sockaddr_storage ss = address_of("10.9.9.9", 9);
      socklen_t len = 7;
      CHECK_FALSE(tcp::parse_tcp_uri(uri, ss, len));
      CHECK(text_of(ss) == "10.9.9.9");
      CHECK(len == 7);
    }
  }

  TEST_CASE("parse_tcp_uri round-trips the listeners' URIs to their bound addresses") {
    std::vector<tcp::tcp_listener> listeners;
    listener_guard guard{listeners};
    std::string error;
    REQUIRE_MESSAGE(tcp::open_listeners(tcp::tcp_options{}, listeners, error) == PMIX_SUCCESS, error);
    for (const auto& l : listeners) {
      CAPTURE(l.uri);
      sockaddr_storage bound{};
      socklen_t bound_len = sizeof bound;
      REQUIRE(::getsockname(l.fd, reinterpret_cast<sockaddr*>(&bound), &bound_len) == 0);
      sockaddr_storage parsed{};
      socklen_t parsed_len = 0;
      REQUIRE(tcp::parse_tcp_uri("myns.0;" + l.uri, parsed, parsed_len));
      CHECK(parsed_len == bound_len);
      CHECK(parsed.ss_family == bound.ss_family);
      CHECK(text_of(parsed) == text_of(bound));
      CHECK(port_of(parsed) == port_of(bound));
      CHECK(tcp::tcp_uri(parsed) == l.uri);
    }
  }
}
