// PMIx_server_init's directives read into settings (spec 000, 20.2.247.4),
// with a fake environment: each rule without starting a server.
#include <doctest/doctest.h>

#include <chrono>

#include <map>
#include <string>

#include "server/server_directives.hpp"

using namespace pmix;
using namespace pmix::server;

namespace {

struct fake_env {
  std::map<std::string, std::string> vars;
  env_fn fn() const {
    return [this](const char* name) -> const char* {
      auto it = vars.find(name);
      return it == vars.end() ? nullptr : it->second.c_str();
    };
  }
};

struct result {
  pmix_status_t status;
  settings s;
  std::string error;
};

result read(const info_list& d, const fake_env& env = {}, const pmix_topology_t* topo = nullptr) {
  result r;
  r.status = read_settings(d, topo, env.fn(), "node7", 4242, r.s, r.error);
  return r;
}

info on(const char* key) { return info{key, value::boolean(true), 0}; }
info str(const char* key, const std::string& v) { return info{key, value::string(v), 0}; }

}  // namespace

TEST_SUITE("server directives") {
  TEST_CASE("[20.2.247.4.1] defaults: a server namespace named after host and pid, rank 0, /tmp") {
    const auto r = read({});
    REQUIRE(r.status == PMIX_SUCCESS);
    CHECK(r.s.server.nspace == "pmix-server.node7.4242");
    CHECK(r.s.server.rank == 0);
    CHECK(r.s.tmpdir == "/tmp");
    CHECK(r.s.system_tmpdir == "/tmp");
    CHECK_FALSE(r.s.tool_support);
    CHECK_FALSE(r.s.tcp_requested);
  }

  TEST_CASE("[20.2.247.4.1 PMIX_SERVER_NSPACE, PMIX_SERVER_RANK] directives win over the environment") {
    fake_env env{{{"PMIX_SERVER_NSPACE", "from-env"}, {"PMIX_SERVER_RANK", "3"}}};
    auto r = read({}, env);
    REQUIRE(r.status == PMIX_SUCCESS);
    CHECK(r.s.server.nspace == "from-env");
    CHECK(r.s.server.rank == 3);
    r = read({str(PMIX_SERVER_NSPACE, "given"), info{PMIX_SERVER_RANK, value::unsigned_(PMIX_PROC_RANK, 9), 0}},
             env);
    REQUIRE(r.status == PMIX_SUCCESS);
    CHECK(r.s.server.nspace == "given");
    CHECK(r.s.server.rank == 9);
  }

  TEST_CASE("[20.2.247.5] a PMIX_SERVER_RANK environment value that is not a simple non-negative number is PMIX_ERR_BAD_PARAM") {
    for (const char* bad : {"-1", "1x", " 2", "3.0", "99999999999", "4294967294"}) {
      CAPTURE(bad);
      fake_env env{{{"PMIX_SERVER_RANK", bad}}};
      const auto r = read({}, env);
      CHECK(r.status == PMIX_ERR_BAD_PARAM);
      CHECK(r.error.find("PMIX_SERVER_RANK") != std::string::npos);
    }
  }

  TEST_CASE("PMIX_CXX_SERVER_SPIN_US: the loop thread's poll, 50 µs by default, 0 to 10000, else PMIX_ERR_BAD_PARAM") {
    CHECK(read({}).s.loop_spin == std::chrono::microseconds{50});
    CHECK(read({}, fake_env{{{"PMIX_CXX_SERVER_SPIN_US", "0"}}}).s.loop_spin == std::chrono::microseconds{0});
    CHECK(read({}, fake_env{{{"PMIX_CXX_SERVER_SPIN_US", "10000"}}}).s.loop_spin == std::chrono::microseconds{10000});
    for (const char* bad : {"-1", "10001", "5us", "x"}) {
      CAPTURE(bad);
      const auto r = read({}, fake_env{{{"PMIX_CXX_SERVER_SPIN_US", bad}}});
      CHECK(r.status == PMIX_ERR_BAD_PARAM);
      CHECK(r.error.find("PMIX_CXX_SERVER_SPIN_US") != std::string::npos);
    }
  }

  TEST_CASE("[20.2.247.4.1 PMIX_SERVER_TMPDIR, PMIX_SYSTEM_TMPDIR] fallbacks: the variable, TMPDIR, TEMP, TMP, /tmp") {
    CHECK(read({}, fake_env{{{"TMP", "/t3"}}}).s.tmpdir == "/t3");
    CHECK(read({}, fake_env{{{"TMP", "/t3"}, {"TEMP", "/t2"}}}).s.tmpdir == "/t2");
    CHECK(read({}, fake_env{{{"TMP", "/t3"}, {"TEMP", "/t2"}, {"TMPDIR", "/t1"}}}).s.tmpdir == "/t1");
    const fake_env all{{{"TMPDIR", "/t1"}, {"PMIX_SERVER_TMPDIR", "/srv"}, {"PMIX_SYSTEM_TMPDIR", "/sys"}}};
    CHECK(read({}, all).s.tmpdir == "/srv");
    CHECK(read({}, all).s.system_tmpdir == "/sys");
    CHECK(read({}, fake_env{{{"TMPDIR", "/t1"}}}).s.system_tmpdir == "/t1");
    const auto r = read({str(PMIX_SERVER_TMPDIR, "/d1"), str(PMIX_SYSTEM_TMPDIR, "/d2")}, all);
    CHECK(r.s.tmpdir == "/d1");
    CHECK(r.s.system_tmpdir == "/d2");
  }

  TEST_CASE("[20.2.247.4.2] system and session support take effect only with tool support") {
    auto r = read({on(PMIX_SERVER_SYSTEM_SUPPORT), on(PMIX_SERVER_SESSION_SUPPORT)});
    REQUIRE(r.status == PMIX_SUCCESS);
    CHECK_FALSE(r.s.system_support);
    CHECK_FALSE(r.s.session_support);
    r = read({on(PMIX_SERVER_TOOL_SUPPORT), on(PMIX_SERVER_SYSTEM_SUPPORT), on(PMIX_SERVER_SESSION_SUPPORT)});
    CHECK(r.s.system_support);
    CHECK(r.s.session_support);
  }

  TEST_CASE("[20.2.247.4.2] role directives are recorded") {
    const auto r = read({on(PMIX_SERVER_GATEWAY), on(PMIX_SERVER_SCHEDULER), on(PMIX_SERVER_SYS_CONTROLLER),
                         on(PMIX_SERVER_ALLOW_FOREIGN_TOOLS), on(PMIX_ALLOW_CLIENT_CLONES),
                         on(PMIX_SERVER_REMOTE_CONNECTIONS)});
    REQUIRE(r.status == PMIX_SUCCESS);
    CHECK(r.s.gateway);
    CHECK(r.s.scheduler);
    CHECK(r.s.sys_controller);
    CHECK(r.s.foreign_tools);
    CHECK(r.s.allow_clones);
    CHECK(r.s.remote_connections);
    CHECK(r.s.tcp_requested);
  }

  TEST_CASE("[20.2.247.4.3 PMIX_TCP_IF_INCLUDE, PMIX_TCP_IF_EXCLUDE] lists are split; both together are PMIX_ERR_BAD_PARAM") {
    auto r = read({str(PMIX_TCP_IF_INCLUDE, "eth0, 10.0.0.0/8,ib0")});
    REQUIRE(r.status == PMIX_SUCCESS);
    CHECK(r.s.if_include == std::vector<std::string>{"eth0", "10.0.0.0/8", "ib0"});
    r = read({str(PMIX_TCP_IF_INCLUDE, "eth0"), str(PMIX_TCP_IF_EXCLUDE, "lo")});
    CHECK(r.status == PMIX_ERR_BAD_PARAM);
    CHECK(r.error.find("cannot be combined") != std::string::npos);
  }

  TEST_CASE("[20.2.247.4.3 PMIX_TCP_IPV4_PORT] an int or a string of ports and ranges; 0 or -1 means any") {
    auto r = read({info{PMIX_TCP_IPV4_PORT, value::integer(PMIX_INT, -1), 0}});
    REQUIRE(r.status == PMIX_SUCCESS);
    CHECK(r.s.ipv4_ports == "0");
    r = read({info{PMIX_TCP_IPV4_PORT, value::integer(PMIX_INT, 5000), 0}, str(PMIX_TCP_IPV6_PORT, "6000-6010,7000")});
    REQUIRE(r.status == PMIX_SUCCESS);
    CHECK(r.s.ipv4_ports == "5000");
    CHECK(r.s.ipv6_ports == "6000-6010,7000");
    for (const char* bad : {"x", "70000", "10-5", "", "1,,2a"}) {
      CAPTURE(bad);
      CHECK(read({str(PMIX_TCP_IPV6_PORT, bad)}).status == PMIX_ERR_BAD_PARAM);
    }
    CHECK(read({info{PMIX_TCP_IPV4_PORT, value::integer(PMIX_INT, 70000), 0}}).status == PMIX_ERR_BAD_PARAM);
  }

  TEST_CASE("[20.2.247.5 PMIX_ERR_INIT] remote connections with both IP families disabled") {
    const auto r = read({on(PMIX_SERVER_REMOTE_CONNECTIONS), on(PMIX_TCP_DISABLE_IPV4), on(PMIX_TCP_DISABLE_IPV6)});
    CHECK(r.status == PMIX_ERR_INIT);
    CHECK(read({on(PMIX_TCP_DISABLE_IPV4), on(PMIX_TCP_DISABLE_IPV6)}).status == PMIX_SUCCESS);  // no TCP wanted
  }

  TEST_CASE("[20.2.247.4.4 PMIX_SINGLETON] nspace.rank, else PMIX_ERR_BAD_PARAM") {
    auto r = read({str(PMIX_SINGLETON, "my.job.7")});
    REQUIRE(r.status == PMIX_SUCCESS);
    REQUIRE(r.s.singleton.has_value());
    CHECK(r.s.singleton->nspace == "my.job");
    CHECK(r.s.singleton->rank == 7);
    for (const char* bad : {"nodot", ".3", "job.x", "job.", "job.-1"}) {
      CAPTURE(bad);
      CHECK(read({str(PMIX_SINGLETON, bad)}).status == PMIX_ERR_BAD_PARAM);
    }
  }

  TEST_CASE("[20.2.247.4.4 PMIX_BIND_PROGRESS_THREAD] a CPU list, checked for syntax") {
    auto r = read({str(PMIX_BIND_PROGRESS_THREAD, "0-1,3"), on(PMIX_BIND_REQUIRED)});
    REQUIRE(r.status == PMIX_SUCCESS);
    CHECK(r.s.bind_cpus == "0-1,3");
    CHECK(r.s.bind_required);
    CHECK(read({str(PMIX_BIND_PROGRESS_THREAD, "zero")}).status == PMIX_ERR_BAD_PARAM);
  }

  TEST_CASE("[20.2.247.5 PMIX_ERR_NOT_SUPPORTED] behaviour we do not provide is ignored, refused only when required") {
    // Open MPI's mpirun asks for monitoring by default: it must start.
    CHECK(read({on(PMIX_SERVER_ENABLE_MONITORING)}).status == PMIX_SUCCESS);
    CHECK(read({info{PMIX_SERVER_ENABLE_MONITORING, value::boolean(true), PMIX_INFO_REQD}}).status ==
          PMIX_ERR_NOT_SUPPORTED);
    CHECK(read({info{PMIX_SERVER_ENABLE_MONITORING, value::boolean(false), PMIX_INFO_REQD}}).status ==
          PMIX_SUCCESS);
    pmix_topology_t other{const_cast<char*>("vendor-x"), reinterpret_cast<void*>(0x1)};
    auto ignored = read({info{PMIX_TOPOLOGY2, {}, 0}}, {}, &other);
    CHECK(ignored.status == PMIX_SUCCESS);
    CHECK(ignored.s.topology == nullptr);  // the server discovers the node itself
    CHECK(read({info{PMIX_TOPOLOGY2, {}, PMIX_INFO_REQD}}, {}, &other).status == PMIX_ERR_NOT_SUPPORTED);
    CHECK(read({info{PMIX_TOPOLOGY2, {}, 0}}, {}, nullptr).status == PMIX_ERR_BAD_PARAM);
    // What Open MPI 4.1's mpirun passes (orte/orted/pmix/pmix_server.c).
    CHECK(read({str(PMIX_SERVER_TMPDIR, "/tmp"), on(PMIX_SINGLE_LISTENER), on(PMIX_SERVER_ENABLE_MONITORING),
                str(PMIX_SERVER_NSPACE, "1234"), info{PMIX_SERVER_RANK, value::unsigned_(PMIX_PROC_RANK, 0), 0},
                on(PMIX_SERVER_TOOL_SUPPORT), on(PMIX_SERVER_SYSTEM_SUPPORT)})
              .status == PMIX_SUCCESS);
    // An unknown directive is ignored, unless the caller requires it.
    CHECK(read({str("vendor.knob", "on")}).status == PMIX_SUCCESS);
    CHECK(read({info{"vendor.knob", value::string("on"), PMIX_INFO_REQD}}).status == PMIX_ERR_NOT_SUPPORTED);
  }

  TEST_CASE("[20.2.247.5 PMIX_ERR_BAD_PARAM] values of the wrong type") {
    CHECK(read({info{PMIX_SERVER_NSPACE, value::boolean(true), 0}}).status == PMIX_ERR_BAD_PARAM);
    CHECK(read({info{PMIX_SERVER_RANK, value::string("x"), 0}}).status == PMIX_ERR_BAD_PARAM);
    CHECK(read({info{PMIX_SERVER_TOOL_SUPPORT, value::proc(proc_id{"a", 1}), 0}}).status == PMIX_ERR_BAD_PARAM);
    CHECK(read({str(PMIX_LAUNCHER_RENDEZVOUS_FILE, "relative/file")}).status == PMIX_ERR_BAD_PARAM);
  }
}
