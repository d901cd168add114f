// PMIX_SERVER_REMOTE_CONNECTIONS and the interface directives on real
// non-loopback interfaces. Runs inside a network namespace made by
// remote_test.sh: veth devices "pa" (10.51.0.1/24) and "pb" (10.52.0.1/24).
#include <doctest/doctest.h>
#include <pmix_server.h>
#include <unistd.h>

#include <algorithm>
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

  TEST_CASE("[20.2.247.4.2] a tool tries the alternatives when the URI's address cannot be reached") {
    temp_dir dir;
    remote_server s(dir.path(), {});
    REQUIRE(s.status == PMIX_SUCCESS);
    const auto c = contact(dir.path());
    const auto first = c.uri.substr(c.uri.find("tcp4://") + 7, c.uri.rfind(':') - c.uri.find("tcp4://") - 7);
    const std::string device = first == "10.51.0.1" ? "pa" : "pb";
    // Take the first address away: connecting to it now fails.
    REQUIRE(std::system(("ip addr del " + first + "/24 dev " + device).c_str()) == 0);
    child t({script, "tool_init_pid:" + std::to_string(getpid()), "tool_finalize"},
            environment_with({"PMIX_SERVER_TMPDIR=" + dir.path(), "PMIX_NAMESPACE=", "PMIX_SERVER_URI41="}),
            dir.path());
    CHECK_MESSAGE(t.exited_with(0), t.errors());
    CHECK(contains(t.output(), "tool_init_pid:" + std::to_string(getpid()) + " PMIX_SUCCESS"));
    REQUIRE(std::system(("ip addr add " + first + "/24 dev " + device).c_str()) == 0);
  }

  TEST_CASE("[20.2.247.5 PMIX_ERR_INIT] remote connections with no interface left to listen on") {
    temp_dir dir;
    remote_server s(dir.path(), {{PMIX_TCP_IF_INCLUDE, "no-such-device"}});
    CHECK(s.status == PMIX_ERR_INIT);
    CHECK(PMIx_server_finalize() == PMIX_ERR_INIT);
  }
}
