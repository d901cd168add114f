// Functions a client computes itself (docs/local-functions.md), in real
// client processes: PMIx_Load_topology takes the topology its server shares
// (PMIX_HWLOC_XML_V2, else PMIX_TOPOLOGY_FILE) and falls back to discovery;
// hwloc is loaded by that call, never by PMIx_Init; device distances come
// from that topology.
#include <doctest/doctest.h>
#include <hwloc.h>
#include <pmix.h>
#include <pmix_server.h>
#include <sched.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "tests/e2e/host.hpp"

using namespace pmix::test;

namespace {

const std::string script = runfile("tests/e2e/script_client");
const std::string made_up_node =
    std::filesystem::canonical(runfile("tests/api/data/two_packages.xml")).string();

// The ProcessName hwloc gives a topology discovered in this process: what
// the server's shared topology carries.
std::string this_process_name() {
  hwloc_topology_t t = nullptr;
  hwloc_topology_init(&t);
  hwloc_topology_load(t);
  const char* name = hwloc_obj_get_info_by_name(hwloc_get_root_obj(t), "ProcessName");
  std::string out = name == nullptr ? "" : name;
  hwloc_topology_destroy(t);
  return out;
}

// This process's device distances, in script_client's "distances" form.
std::string own_distances() {
  pmix_device_distance_t* d = nullptr;
  size_t n = 0;
  const auto rc = PMIx_Compute_distances(nullptr, nullptr, nullptr, 0, &d, &n);
  std::string text = PMIx_Error_string(rc);
  for (size_t k = 0; k < n; ++k)
    text += " " + std::string{d[k].osname} + "=" + std::to_string(d[k].mindist) + "-" +
            std::to_string(d[k].maxdist);
  PMIX_DEVICE_DIST_FREE(d, n);
  return text;
}

// A one-rank job whose job data carries `key` = `text` (as a host that
// shares a topology itself would register it).
pmix_status_t register_with(const std::string& nspace, const char* key, const std::string& text) {
  std::uint32_t size = 1;
  char* node_map = nullptr;
  char* proc_map = nullptr;
  PMIx_generate_regex(this_host().c_str(), &node_map);
  PMIx_generate_ppn("0", &proc_map);
  pmix_info_t info[4];
  PMIX_INFO_LOAD(&info[0], PMIX_JOB_SIZE, &size, PMIX_UINT32);
  PMIX_INFO_LOAD(&info[1], PMIX_NODE_MAP, node_map, PMIX_STRING);
  PMIX_INFO_LOAD(&info[2], PMIX_PROC_MAP, proc_map, PMIX_STRING);
  PMIX_INFO_LOAD(&info[3], key, text.c_str(), PMIX_STRING);
  std::free(node_map);
  std::free(proc_map);
  auto rc = PMIx_server_register_nspace(nspace.c_str(), 1, info, 4, nullptr, nullptr);
  for (auto& i : info) PMIX_INFO_DESTRUCT(&i);
  if (rc != PMIX_SUCCESS) return rc;
  pmix_proc_t p;
  PMIX_LOAD_PROCID(&p, nspace.c_str(), 0);
  return PMIx_server_register_client(&p, getuid(), getgid(), nullptr, nullptr, nullptr);
}

// Launches rank 0 with the calling thread bound to CPU 0 (the child inherits
// it), so that its binding lies inside the made-up node.
child launch_on_cpu0(const std::string& nspace, const std::vector<std::string>& argv,
                     const std::string& dir) {
  cpu_set_t saved, only0;
  sched_getaffinity(0, sizeof saved, &saved);
  CPU_ZERO(&only0);
  CPU_SET(0, &only0);
  sched_setaffinity(0, sizeof only0, &only0);
  auto c = launch(nspace, 0, argv, dir);
  sched_setaffinity(0, sizeof saved, &saved);
  return c;
}

}  // namespace

TEST_SUITE("local_functions") {
  TEST_CASE("a client loads the topology its server shares, and loads hwloc only then") {
    temp_dir dir;
    std::vector<pmix_info_t> share(1);
    bool yes = true;
    PMIX_INFO_LOAD(&share[0], PMIX_SERVER_SHARE_TOPOLOGY, &yes, PMIX_BOOL);
    server srv(dir.path(), {}, share);
    REQUIRE(srv.status() == PMIX_SUCCESS);
    REQUIRE(register_job("shared", 1, 1) == PMIX_SUCCESS);
    auto c = launch("shared", 0,
                    {script, "mapped:libhwloc", "init", "mapped:libhwloc", "mapped:libz.so", "load_topology",
                     "mapped:libhwloc", "distances", "finalize"},
                    dir.path());
    CHECK_MESSAGE(c.exited_with(0), c.errors());
    const auto out = c.output();
    CAPTURE(out);
    // Neither start-up nor PMIx_Init loads hwloc (or zlib); the call that needs it does.
    CHECK(contains(out, "mapped:libhwloc PMIX_SUCCESS no\ninit PMIX_SUCCESS"));
    CHECK(contains(
        out,
        "init PMIX_SUCCESS shared 0\nmapped:libhwloc PMIX_SUCCESS no\nmapped:libz.so PMIX_SUCCESS no\n"));
    // The topology is the one the server discovered: its root names the
    // server's process, not the client's.
    const std::string server_name = this_process_name();
    REQUIRE_FALSE(server_name.empty());
    CHECK(contains(out, "load_topology PMIX_SUCCESS hwloc:" HWLOC_VERSION " " + server_name + "\n"));
    const auto loaded = out.find("mapped:libhwloc PMIX_SUCCESS yes\n");
    CHECK(loaded != std::string::npos);
    CHECK(loaded > out.find("load_topology PMIX_SUCCESS"));
    // The shared topology keeps the I/O devices: the client measures the
    // same device distances as this process does on its own topology.
    CHECK(contains(out, "distances " + own_distances() + "\n"));
    for (auto& i : share) PMIX_INFO_DESTRUCT(&i);
  }

  TEST_CASE("without a shared topology the client discovers its node") {
    temp_dir dir;
    server srv(dir.path());
    REQUIRE(srv.status() == PMIX_SUCCESS);
    REQUIRE(register_job("alone", 1, 1) == PMIX_SUCCESS);
    auto c = launch("alone", 0, {script, "init", "mapped:libhwloc", "load_topology", "finalize"}, dir.path());
    CHECK_MESSAGE(c.exited_with(0), c.errors());
    const auto out = c.output();
    CAPTURE(out);
    CHECK(contains(out, "mapped:libhwloc PMIX_SUCCESS no\n"));
    CHECK(contains(out, "load_topology PMIX_SUCCESS hwloc:" HWLOC_VERSION " script_client\n"));
  }

  TEST_CASE("a host's PMIX_HWLOC_XML_V2, then its PMIX_TOPOLOGY_FILE, is the client's topology") {
    std::stringstream xml;
    xml << std::ifstream(made_up_node).rdbuf();
    REQUIRE(xml.str().size() > 100);
    temp_dir dir;
    server srv(dir.path());
    REQUIRE(srv.status() == PMIX_SUCCESS);
    REQUIRE(register_with("by-xml", PMIX_HWLOC_XML_V2, xml.str()) == PMIX_SUCCESS);
    REQUIRE(register_with("by-file", PMIX_TOPOLOGY_FILE, made_up_node) == PMIX_SUCCESS);
    // Bound to CPU 0 of the made-up node: package 0's NIC and HCA at 3, the
    // rest at 7 (tests/api/cpuset_test.cpp explains the figures).
    const std::string expected =
        "distances PMIX_SUCCESS renderD128=7-7 eth1=3-3 eth0=7-7 ib0=7-7 mlx5_0=3-3\n";
    for (const std::string ns : {"by-xml", "by-file"}) {
      CAPTURE(ns);
      auto c = launch_on_cpu0(
          ns, {script, "init", "get:*:pmix.topo.file", "xml_size", "load_topology", "distances", "finalize"},
          dir.path());
      CHECK_MESSAGE(c.exited_with(0), c.errors());
      const auto out = c.output();
      CAPTURE(out);
      CHECK(contains(out, "load_topology PMIX_SUCCESS hwloc:" HWLOC_VERSION " two_packages\n"));
      CHECK_MESSAGE(contains(out, expected), c.errors());
    }
  }

  TEST_CASE("a shared topology that cannot be read falls back to discovery") {
    temp_dir dir;
    server srv(dir.path());
    REQUIRE(srv.status() == PMIX_SUCCESS);
    REQUIRE(register_with("broken", PMIX_TOPOLOGY_FILE, dir.path() + "/no-such-file.xml") == PMIX_SUCCESS);
    auto c = launch("broken", 0, {script, "init", "load_topology", "finalize"}, dir.path());
    CHECK_MESSAGE(c.exited_with(0), c.errors());
    CHECK(contains(c.output(), "load_topology PMIX_SUCCESS hwloc:" HWLOC_VERSION " script_client\n"));
    CHECK(contains(c.errors(), "cannot read the topology the server shares"));
  }
}
