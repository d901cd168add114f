// PMIX_SERVER_REMOTE_CONNECTIONS and the interface directives on real
// non-loopback interfaces. Runs inside a network namespace made by
// remote_test.sh: veth devices "pa" (10.51.0.1/24) and "pb" (10.52.0.1/24).
#include <doctest/doctest.h>
#include <pmix_server.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <cstdlib>
#include <string>
#include <vector>

#include "server/rendezvous.hpp"
#include "tests/e2e/host.hpp"

using namespace pmix::test;

namespace {

const std::string script = runfile("tests/e2e/script_client");

struct remote_server {
  std::vector<pmix_info_t> d;
  pmix_status_t status;
  remote_server(const std::string& tmpdir, const std::vector<std::pair<const char*, std::string>>& text) {
    bool yes = true;
    d.resize(4 + text.size());
    PMIX_INFO_LOAD(&d[0], PMIX_SERVER_TMPDIR, tmpdir.c_str(), PMIX_STRING);
    PMIX_INFO_LOAD(&d[1], PMIX_SERVER_REMOTE_CONNECTIONS, &yes, PMIX_BOOL);
    PMIX_INFO_LOAD(&d[2], PMIX_SERVER_TOOL_SUPPORT, &yes, PMIX_BOOL);
    PMIX_INFO_LOAD(&d[3], PMIX_SERVER_ALLOW_FOREIGN_TOOLS, &yes, PMIX_BOOL);
    for (std::size_t k = 0; k < text.size(); ++k)
      PMIX_INFO_LOAD(&d[4 + k], text[k].first, text[k].second.c_str(), PMIX_STRING);
    status = PMIx_server_init(nullptr, d.data(), d.size());
  }
  ~remote_server() {
    if (status == PMIX_SUCCESS) PMIx_server_finalize();
    for (auto& i : d) PMIX_INFO_DESTRUCT(&i);
  }
};

pmix::server::rendezvous_contents contact(const std::string& tmpdir) {
  pmix::server::rendezvous_contents c;
  REQUIRE(pmix::server::read_file(tmpdir + "/pmix." + this_host() + ".tool." + std::to_string(getpid()), c));
  return c;
}

// Every address the server can be reached at (URI and alternatives).
std::vector<std::string> tcp_addresses(const pmix::server::rendezvous_contents& c) {
  std::vector<std::string> out;
  std::vector<std::string> all{c.uri};
  all.insert(all.end(), c.alt_uris.begin(), c.alt_uris.end());
  for (const auto& u : all) {
    const auto at = u.find("tcp4://");
    if (at != std::string::npos) out.push_back(u.substr(at + 7, u.rfind(':') - at - 7));
  }
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace

TEST_SUITE("remote connections") {
  TEST_CASE("[20.2.247.4.2 PMIX_SERVER_REMOTE_CONNECTIONS] listens on every non-loopback interface; the URI names the first, the others are alternatives") {
    temp_dir dir;
    remote_server s(dir.path(), {});
    REQUIRE(s.status == PMIX_SUCCESS);
    const auto c = contact(dir.path());
    CHECK(contains(c.uri, "tcp4://10.5"));  // the URI is a remote address
    CHECK(tcp_addresses(c) == std::vector<std::string>{"10.51.0.1", "10.52.0.1"});
    // The local socket is the last alternative.
    REQUIRE_FALSE(c.alt_uris.empty());
    CHECK(contains(c.alt_uris.back(), ";uds://"));
    // Every TCP listener takes OpenPMIx's protocol too: a tool linked with
    // OpenPMIx (Debian's 4.2.2) attaches at the first line's address, the
    // only one its library reads (issue 35).
    child t({runfile("tests/e2e/openpmix_client_bin"), "tool", c.uri, "nojob"},
            environment_with({"LD_LIBRARY_PATH="}), dir.path());
    CHECK_MESSAGE(t.exited_with(0), t.errors());
    CHECK_MESSAGE(contains(t.output(), "tool_init SUCCESS\n"), t.output());
    CHECK(contains(t.output(), "tool_finalize SUCCESS\n"));
  }

  TEST_CASE("[20.2.247.4.3 PMIX_TCP_IF_INCLUDE] by device and by CIDR") {
    temp_dir dir;
    {
      remote_server s(dir.path(), {{PMIX_TCP_IF_INCLUDE, "pb"}});
      REQUIRE(s.status == PMIX_SUCCESS);
      CHECK(tcp_addresses(contact(dir.path())) == std::vector<std::string>{"10.52.0.1"});
    }
    {
      remote_server s(dir.path(), {{PMIX_TCP_IF_INCLUDE, "10.51.0.0/16"}});
      REQUIRE(s.status == PMIX_SUCCESS);
      CHECK(tcp_addresses(contact(dir.path())) == std::vector<std::string>{"10.51.0.1"});
    }
  }

  TEST_CASE("[20.2.247.4.3 PMIX_TCP_IF_EXCLUDE] excluded devices are not listened on") {
    temp_dir dir;
    remote_server s(dir.path(), {{PMIX_TCP_IF_EXCLUDE, "pa"}});
    REQUIRE(s.status == PMIX_SUCCESS);
    CHECK(tcp_addresses(contact(dir.path())) == std::vector<std::string>{"10.52.0.1"});
  }

  TEST_CASE("[20.2.247.4.2] a tool finding the server by PID, namespace or file tries the alternatives when the URI's address cannot be reached") {
    temp_dir dir;
    const auto file = dir.path() + "/launcher.rv";
    remote_server s(dir.path(), {{PMIX_SERVER_NSPACE, "alternatives"}, {PMIX_LAUNCHER_RENDEZVOUS_FILE, file}});
    REQUIRE(s.status == PMIX_SUCCESS);
    const auto c = contact(dir.path());
    const auto first = c.uri.substr(c.uri.find("tcp4://") + 7, c.uri.rfind(':') - c.uri.find("tcp4://") - 7);
    const std::string device = first == "10.51.0.1" ? "pa" : "pb";
    // The Unix socket, which a tool tries before any TCP address, is taken
    // away for the while: only the other TCP address can lead to the server.
    std::string socket_path;
    for (const auto& u : c.alt_uris)
      if (const auto at = u.find(";uds://"); at != std::string::npos) socket_path = u.substr(at + 7);
    REQUIRE_FALSE(socket_path.empty());
    REQUIRE(::rename(socket_path.c_str(), (socket_path + ".away").c_str()) == 0);
    // Take the first address away: connecting to it now fails.
    REQUIRE(std::system(("ip addr del " + first + "/24 dev " + device).c_str()) == 0);
    const auto by_pid = "tool_init_pid:" + std::to_string(getpid());
    child t({script, by_pid, "tool_finalize", "tool_init_ns:alternatives", "tool_finalize", "tool_init_file:" + file,
             "tool_finalize"},
            environment_with({"PMIX_SERVER_TMPDIR=" + dir.path(), "PMIX_NAMESPACE=", "PMIX_SERVER_URI41="}),
            dir.path());
    CHECK_MESSAGE(t.exited_with(0), t.errors());
    const auto out = t.output();
    CAPTURE(out);
    CHECK(contains(out, by_pid + " PMIX_SUCCESS"));
    CHECK(contains(out, "tool_init_ns:alternatives PMIX_SUCCESS"));
    CHECK(contains(out, "tool_init_file:" + file + " PMIX_SUCCESS"));
    REQUIRE(std::system(("ip addr add " + first + "/24 dev " + device).c_str()) == 0);
    REQUIRE(::rename((socket_path + ".away").c_str(), socket_path.c_str()) == 0);
  }

  TEST_CASE("[20.2.247.4.2 PMIX_SERVER_REMOTE_CONNECTIONS] false: no listener on a non-loopback interface") {
    temp_dir dir;
    bool yes = true, no = false;
    pmix_info_t d[4];
    PMIX_INFO_LOAD(&d[0], PMIX_SERVER_TMPDIR, dir.path().c_str(), PMIX_STRING);
    PMIX_INFO_LOAD(&d[1], PMIX_SERVER_REMOTE_CONNECTIONS, &no, PMIX_BOOL);
    PMIX_INFO_LOAD(&d[2], PMIX_SERVER_TOOL_SUPPORT, &yes, PMIX_BOOL);
    PMIX_INFO_LOAD(&d[3], PMIX_SERVER_ALLOW_FOREIGN_TOOLS, &yes, PMIX_BOOL);
    REQUIRE(PMIx_server_init(nullptr, d, 4) == PMIX_SUCCESS);
    // Only loopback addresses in the contact file, and no TCP socket
    // listening on anything but loopback (/proc/net/tcp, state 0A).
    for (const auto& a : tcp_addresses(contact(dir.path()))) CHECK(a == "127.0.0.1");
    std::ifstream tcp("/proc/net/tcp");
    std::string line;
    std::getline(tcp, line);
    int listeners = 0;
    while (std::getline(tcp, line)) {
      std::istringstream fields(line);
      std::string slot, local, remote, state;
      fields >> slot >> local >> remote >> state;
      if (state != "0A") continue;
      ++listeners;
      CAPTURE(local);
      CHECK(local.substr(0, 8) == "0100007F");  // 127.0.0.1, in the kernel's byte order
    }
    CHECK(listeners > 0);  // the loopback listener the contact file names
    CHECK(PMIx_server_finalize() == PMIX_SUCCESS);
    for (auto& i : d) PMIX_INFO_DESTRUCT(&i);
  }

  TEST_CASE("[20.2.247.5 PMIX_ERR_INIT] remote connections with both IP families disabled: nothing left behind, then a corrected init") {
    temp_dir dir;
    bool yes = true;
    pmix_info_t d[5];
    PMIX_INFO_LOAD(&d[0], PMIX_SERVER_TMPDIR, dir.path().c_str(), PMIX_STRING);
    PMIX_INFO_LOAD(&d[1], PMIX_SERVER_REMOTE_CONNECTIONS, &yes, PMIX_BOOL);
    PMIX_INFO_LOAD(&d[2], PMIX_SERVER_TOOL_SUPPORT, &yes, PMIX_BOOL);
    PMIX_INFO_LOAD(&d[3], PMIX_TCP_DISABLE_IPV6, &yes, PMIX_BOOL);
    PMIX_INFO_LOAD(&d[4], PMIX_TCP_DISABLE_IPV4, &yes, PMIX_BOOL);
    CHECK(PMIx_server_init(nullptr, d, 5) == PMIX_ERR_INIT);
    CHECK(std::filesystem::is_empty(dir.path()));
    CHECK(PMIx_server_finalize() == PMIX_ERR_INIT);
    // Corrected (IPv4 allowed again; the namespace's veths have no IPv6
    // address), the same call succeeds.
    CHECK(PMIx_server_init(nullptr, d, 4) == PMIX_SUCCESS);
    CHECK_FALSE(tcp_addresses(contact(dir.path())).empty());
    CHECK(PMIx_server_finalize() == PMIX_SUCCESS);
    for (auto& i : d) PMIX_INFO_DESTRUCT(&i);
  }

  TEST_CASE("[20.2.247.5 PMIX_ERR_INIT] remote connections with no interface left to listen on") {
    temp_dir dir;
    remote_server s(dir.path(), {{PMIX_TCP_IF_INCLUDE, "no-such-device"}});
    CHECK(s.status == PMIX_ERR_INIT);
    CHECK(PMIx_server_finalize() == PMIX_ERR_INIT);
  }
}
