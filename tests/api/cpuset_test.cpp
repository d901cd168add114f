// Cpusets, topologies and locality through the public library
// (docs/local-functions.md). The test links hwloc itself to build the
// expectations; the library finds that same hwloc at run time.
#include <doctest/doctest.h>
#include <hwloc.h>
#include <pmix.h>
#include <pmix_server.h>
#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <map>
#include <regex>
#include <string>
#include <vector>

#include "tests/support/process.hpp"

namespace {

std::string taken(char* s) {
  REQUIRE(s != nullptr);
  std::string out{s};
  std::free(s);
  return out;
}

std::string list_of(hwloc_const_bitmap_t b) {
  char* s = nullptr;
  hwloc_bitmap_list_asprintf(&s, b);
  return taken(s);
}

// This node's topology, as the test sees it.
struct node_topology {
  hwloc_topology_t topo = nullptr;
  node_topology() {
    hwloc_topology_init(&topo);
    hwloc_topology_set_io_types_filter(topo, HWLOC_TYPE_FILTER_KEEP_IMPORTANT);
    hwloc_topology_load(topo);
  }
  ~node_topology() { hwloc_topology_destroy(topo); }
  unsigned pus() const { return static_cast<unsigned>(hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_PU)); }
  hwloc_obj_t pu(unsigned i) const { return hwloc_get_obj_by_type(topo, HWLOC_OBJ_PU, i); }
};

pmix_cpuset_t parsed(const std::string& text) {
  pmix_cpuset_t c{nullptr, nullptr};
  REQUIRE(PMIx_Parse_cpuset_string(text.c_str(), &c) == PMIX_SUCCESS);
  return c;
}

std::string locality_of(const std::string& cpus) {
  pmix_cpuset_t c = parsed(cpus);
  char* loc = nullptr;
  REQUIRE(PMIx_server_generate_locality_string(&c, &loc) == PMIX_SUCCESS);
  PMIx_Cpuset_destruct(&c);
  return taken(loc);
}

// Whether one object of `type` holds both CPUs.
bool shared(const node_topology& n, hwloc_obj_type_t type, unsigned a, unsigned b) {
  const int count = hwloc_get_nbobjs_by_type(n.topo, type);
  for (int k = 0; k < count; ++k) {
    hwloc_obj_t o = hwloc_get_obj_by_type(n.topo, type, static_cast<unsigned>(k));
    if (hwloc_bitmap_isset(o->cpuset, a) && hwloc_bitmap_isset(o->cpuset, b)) return true;
  }
  return false;
}

// Restores the calling thread's CPU binding when it goes.
struct affinity_guard {
  cpu_set_t saved;
  affinity_guard() { sched_getaffinity(0, sizeof saved, &saved); }
  ~affinity_guard() { sched_setaffinity(0, sizeof saved, &saved); }
};

pmix_topology_t xml_topology(const std::string& path) {
  hwloc_topology_t t = nullptr;
  hwloc_topology_init(&t);
  hwloc_topology_set_io_types_filter(t, HWLOC_TYPE_FILTER_KEEP_ALL);
  REQUIRE(hwloc_topology_set_xml(t, path.c_str()) == 0);
  REQUIRE(hwloc_topology_load(t) == 0);
  return pmix_topology_t{strdup("hwloc"), t};
}

struct distance {
  std::string uuid, osname;
  pmix_device_type_t type;
  unsigned min, max;
  bool operator==(const distance& o) const {
    return uuid == o.uuid && osname == o.osname && type == o.type && min == o.min && max == o.max;
  }
};

[[maybe_unused]] std::ostream& operator<<(std::ostream& os, const distance& d) {
  return os << d.osname << " " << d.uuid << " type " << d.type << " " << d.min << "-" << d.max;
}

std::vector<distance> distances(pmix_topology_t* topo, const std::string& cpus, std::vector<pmix_info_t> info,
                                pmix_status_t expected = PMIX_SUCCESS) {
  pmix_cpuset_t c = parsed(cpus);
  pmix_device_distance_t* d = nullptr;
  size_t n = 0;
  CHECK(PMIx_Compute_distances(topo, &c, info.empty() ? nullptr : info.data(), info.size(), &d, &n) ==
        expected);
  PMIx_Cpuset_destruct(&c);
  std::vector<distance> out;
  for (size_t k = 0; k < n; ++k)
    out.push_back({d[k].uuid, d[k].osname, d[k].type, d[k].mindist, d[k].maxdist});
  PMIX_DEVICE_DIST_FREE(d, n);
  return out;
}

std::string host() {
  char h[256] = {};
  gethostname(h, sizeof h - 1);
  return h;
}

}  // namespace

TEST_SUITE("cpuset") {
  TEST_CASE("a parsed cpuset string is that bitmap, and generates the same string") {
    for (const std::string cpus : {"0", "0-3,7", "1,3,5", "0-63", "2-4,100-101"}) {
      pmix_cpuset_t c = parsed("hwloc:" + cpus);
      CHECK(std::string{c.source} == "hwloc");
      hwloc_bitmap_t want = hwloc_bitmap_alloc();
      hwloc_bitmap_list_sscanf(want, cpus.c_str());
      CHECK(hwloc_bitmap_isequal(static_cast<hwloc_const_bitmap_t>(c.bitmap), want));
      hwloc_bitmap_free(want);
      char* s = nullptr;
      REQUIRE(PMIx_server_generate_cpuset_string(&c, &s) == PMIX_SUCCESS);
      CHECK(taken(s) == "hwloc:" + cpus);
      PMIx_Cpuset_destruct(&c);
      CHECK(c.source == nullptr);
      CHECK(c.bitmap == nullptr);
    }
    // Case does not matter in the source.
    pmix_cpuset_t c = parsed("HWLOC:1");
    PMIx_Cpuset_destruct(&c);
  }

  TEST_CASE("the string of the process's own cpuset parses back to the same bitmap") {
    pmix_cpuset_t mine{nullptr, nullptr};
    REQUIRE(PMIx_Get_cpuset(&mine, PMIX_CPUBIND_PROCESS) == PMIX_SUCCESS);
    char* s = nullptr;
    REQUIRE(PMIx_server_generate_cpuset_string(&mine, &s) == PMIX_SUCCESS);
    pmix_cpuset_t back = parsed(taken(s));
    CHECK(hwloc_bitmap_isequal(static_cast<hwloc_const_bitmap_t>(mine.bitmap),
                               static_cast<hwloc_const_bitmap_t>(back.bitmap)));
    PMIx_Cpuset_destruct(&mine);
    PMIx_Cpuset_destruct(&back);
  }

  TEST_CASE("bad cpuset strings are refused with a clear status") {
    pmix_cpuset_t c{nullptr, nullptr};
    CHECK(PMIx_Parse_cpuset_string(nullptr, &c) == PMIX_ERR_BAD_PARAM);
    CHECK(PMIx_Parse_cpuset_string("hwloc:1", nullptr) == PMIX_ERR_BAD_PARAM);
    CHECK(PMIx_Parse_cpuset_string("0-3", &c) == PMIX_ERR_BAD_PARAM);  // no source
    CHECK(PMIx_Parse_cpuset_string("other:0-3", &c) == PMIX_ERR_NOT_SUPPORTED);
    CHECK(PMIx_Parse_cpuset_string("hwlocx:0-3", &c) == PMIX_ERR_NOT_SUPPORTED);
    for (const char* bad : {"hwloc:zz", "hwloc:3-1", "hwloc:1,", "hwloc:1,,2", "hwloc:-1", "hwloc:0x3"})
      CHECK_MESSAGE(PMIx_Parse_cpuset_string(bad, &c) == PMIX_ERR_BAD_PARAM, bad);
    CHECK(c.source == nullptr);
    CHECK(c.bitmap == nullptr);
    // The input is const: a string literal is fine (OpenPMIx 4.2.2 writes into it).
    c = parsed("hwloc:2");
    PMIx_Cpuset_destruct(&c);

    char* s = reinterpret_cast<char*>(0x1);
    CHECK(PMIx_server_generate_cpuset_string(nullptr, &s) == PMIX_ERR_BAD_PARAM);
    CHECK(s == nullptr);
    pmix_cpuset_t empty{nullptr, nullptr};
    CHECK(PMIx_server_generate_cpuset_string(&empty, &s) == PMIX_ERR_BAD_PARAM);
    int not_hwloc = 0;
    char other[] = "other";
    pmix_cpuset_t foreign{other, &not_hwloc};
    CHECK(PMIx_server_generate_cpuset_string(&foreign, &s) == PMIX_ERR_NOT_SUPPORTED);
    PMIx_Cpuset_destruct(&foreign);  // not hwloc's: left alone
    CHECK(foreign.source == other);
    CHECK(foreign.bitmap == &not_hwloc);
    PMIx_Cpuset_destruct(nullptr);
  }

  TEST_CASE("PMIx_Get_cpuset of a thread bound to CPU 0 reports CPU 0") {
    affinity_guard restore;
    cpu_set_t only0;
    CPU_ZERO(&only0);
    CPU_SET(0, &only0);
    REQUIRE(sched_setaffinity(0, sizeof only0, &only0) == 0);
    for (pmix_bind_envelope_t ref : {PMIX_CPUBIND_THREAD, PMIX_CPUBIND_PROCESS}) {
      CAPTURE(unsigned{ref});
      pmix_cpuset_t c{nullptr, nullptr};
      REQUIRE(PMIx_Get_cpuset(&c, ref) == PMIX_SUCCESS);  // the test runs one thread
      CHECK(std::string{c.source} == "hwloc");
      CHECK(list_of(static_cast<hwloc_const_bitmap_t>(c.bitmap)) == "0");
      char* s = nullptr;
      REQUIRE(PMIx_server_generate_cpuset_string(&c, &s) == PMIX_SUCCESS);
      CHECK(taken(s) == "hwloc:0");
      PMIx_Cpuset_destruct(&c);
    }
  }

  TEST_CASE("PMIx_Get_cpuset unbound: every CPU this process may use") {
    node_topology n;
    pmix_cpuset_t c{nullptr, nullptr};
    REQUIRE(PMIx_Get_cpuset(&c, PMIX_CPUBIND_PROCESS) == PMIX_SUCCESS);
    cpu_set_t mask;
    REQUIRE(sched_getaffinity(0, sizeof mask, &mask) == 0);
    CHECK(hwloc_bitmap_weight(static_cast<hwloc_const_bitmap_t>(c.bitmap)) == CPU_COUNT(&mask));
    PMIx_Cpuset_destruct(&c);
  }

  TEST_CASE("PMIx_Get_cpuset refuses bad arguments") {
    pmix_cpuset_t c{nullptr, nullptr};
    CHECK(PMIx_Get_cpuset(nullptr, PMIX_CPUBIND_PROCESS) == PMIX_ERR_BAD_PARAM);
    CHECK(PMIx_Get_cpuset(&c, 7) == PMIX_ERR_BAD_PARAM);
    char other[] = "other";
    c.source = other;
    CHECK(PMIx_Get_cpuset(&c, PMIX_CPUBIND_PROCESS) == PMIX_ERR_NOT_SUPPORTED);
    CHECK(c.bitmap == nullptr);
  }
}

TEST_SUITE("locality") {
  TEST_CASE("locality strings of two CPUs give the levels one object of which holds both") {
    node_topology n;
    const std::regex token{"(SK|L3|L2|L1|CR|HT|NM)[0-9]+(-[0-9]+)?(,[0-9]+(-[0-9]+)?)*"};
    const struct {
      hwloc_obj_type_t type;
      pmix_locality_t bit;
    } levels[] = {
        {HWLOC_OBJ_NUMANODE, PMIX_LOCALITY_SHARE_NUMA},   {HWLOC_OBJ_PACKAGE, PMIX_LOCALITY_SHARE_PACKAGE},
        {HWLOC_OBJ_L3CACHE, PMIX_LOCALITY_SHARE_L3CACHE}, {HWLOC_OBJ_L2CACHE, PMIX_LOCALITY_SHARE_L2CACHE},
        {HWLOC_OBJ_L1CACHE, PMIX_LOCALITY_SHARE_L1CACHE}, {HWLOC_OBJ_CORE, PMIX_LOCALITY_SHARE_CORE},
        {HWLOC_OBJ_PU, PMIX_LOCALITY_SHARE_HWTHREAD},
    };
    const unsigned count = n.pus() < 8 ? n.pus() : 8;
    REQUIRE(count > 0);
    std::vector<std::string> loc;
    for (unsigned i = 0; i < count; ++i) {
      const unsigned os = n.pu(i)->os_index;
      loc.push_back(locality_of("hwloc:" + std::to_string(os)));
      CAPTURE(loc.back());
      // Tokens of known levels; the hardware thread's is the PU's index.
      std::size_t start = 0;
      while (start <= loc.back().size()) {
        const auto end = loc.back().find(':', start);
        const auto t = loc.back().substr(start, end == std::string::npos ? std::string::npos : end - start);
        CHECK_MESSAGE(std::regex_match(t, token), t);
        if (end == std::string::npos) break;
        start = end + 1;
      }
      CHECK(loc.back().find("HT" + std::to_string(i)) != std::string::npos);
    }
    for (unsigned i = 0; i < count; ++i) {
      for (unsigned j = 0; j < count; ++j) {
        const unsigned a = n.pu(i)->os_index, b = n.pu(j)->os_index;
        pmix_locality_t want = PMIX_LOCALITY_SHARE_NODE;
        for (const auto& l : levels)
          if (hwloc_get_nbobjs_by_type(n.topo, l.type) > 0 && shared(n, l.type, a, b)) want |= l.bit;
        pmix_locality_t got = 0;
        REQUIRE(PMIx_Get_relative_locality(loc[i].c_str(), loc[j].c_str(), &got) == PMIX_SUCCESS);
        CHECK_MESSAGE(got == want, loc[i] << " vs " << loc[j]);
        // OpenPMIx's "hwloc:" prefixed form is read too.
        REQUIRE(PMIx_Get_relative_locality(("hwloc:" + loc[i]).c_str(), loc[j].c_str(), &got) ==
                PMIX_SUCCESS);
        CHECK(got == want);
      }
    }
  }

  TEST_CASE("relative locality of written strings") {
    const struct {
      const char *a, *b;
      pmix_locality_t want;
    } cases[] = {
        {"SK0:L30:L20:L10:CR0:HT0:NM0", "SK0:L30:L20:L10:CR0:HT0:NM0", 0x407f},
        {"SK0:L30:L20:L10:CR0:HT0:NM0", "SK0:L30:L21:L11:CR1:HT1:NM0", 0x4070},
        {"SK0:L30:L20:L10:CR0:HT0:NM0", "SK1:L31:L22:L12:CR2:HT2:NM1", 0x4000},
        {"SK0:CR0-1:HT0-3", "SK0:CR1:HT4", 0x4022},
        {"hwloc:SK0:L30:CR0-1:HT0-3", "hwloc:SK0:L31:CR2:HT4", 0x4020},
        {"NM0,1:SK0", "SK0:NM1", 0x4060},
        {"", "SK0", 0x4000},
        {"SK0", "CR0", 0x4000},  // no level in common
    };
    for (const auto& c : cases) {
      pmix_locality_t got = 0;
      REQUIRE_MESSAGE(PMIx_Get_relative_locality(c.a, c.b, &got) == PMIX_SUCCESS, c.a << " / " << c.b);
      CHECK_MESSAGE(got == c.want, c.a << " / " << c.b);
    }
  }

  TEST_CASE("malformed locality strings are refused") {
    pmix_locality_t got = 0x1234;
    CHECK(PMIx_Get_relative_locality(nullptr, "SK0", &got) == PMIX_ERR_BAD_PARAM);
    CHECK(PMIx_Get_relative_locality("SK0", nullptr, &got) == PMIX_ERR_BAD_PARAM);
    CHECK(PMIx_Get_relative_locality("SK0", "SK0", nullptr) == PMIX_ERR_BAD_PARAM);
    for (const char* bad : {"XX0", "SK", "SKx", "SK0-", "L40", "sk0", "SK0:CR1-0"})
      CHECK_MESSAGE(PMIx_Get_relative_locality(bad, "SK0", &got) == PMIX_ERR_BAD_PARAM, bad);
    CHECK(got == 0x1234);
  }

  TEST_CASE("an unbound cpuset has no locality string") {
    pmix_cpuset_t c = parsed("hwloc:0");
    hwloc_bitmap_fill(static_cast<hwloc_bitmap_t>(c.bitmap));
    char* loc = reinterpret_cast<char*>(0x1);
    CHECK(PMIx_server_generate_locality_string(&c, &loc) == PMIX_SUCCESS);
    CHECK(loc == nullptr);
    PMIx_Cpuset_destruct(&c);
    char hw[] = "hwloc";
    pmix_cpuset_t none{hw, nullptr};
    CHECK(PMIx_server_generate_locality_string(&none, &loc) == PMIX_SUCCESS);
    CHECK(loc == nullptr);
    CHECK(PMIx_server_generate_locality_string(nullptr, &loc) == PMIX_ERR_BAD_PARAM);
    CHECK(PMIx_server_generate_locality_string(&none, nullptr) == PMIX_ERR_BAD_PARAM);
    char other[] = "other";
    pmix_cpuset_t foreign{other, nullptr};
    CHECK(PMIx_server_generate_locality_string(&foreign, &loc) == PMIX_ERR_NOT_SUPPORTED);
  }
}

TEST_SUITE("topology") {
  TEST_CASE("PMIx_Load_topology gives the caller a topology of its own") {
    node_topology n;
    pmix_topology_t a{nullptr, nullptr}, b{nullptr, nullptr};
    REQUIRE(PMIx_Load_topology(&a) == PMIX_SUCCESS);
    REQUIRE(PMIx_Load_topology(&b) == PMIX_SUCCESS);
    CHECK(std::string{a.source} == "hwloc:" HWLOC_VERSION);
    REQUIRE(a.topology != nullptr);
    CHECK(a.topology != b.topology);
    auto ta = static_cast<hwloc_topology_t>(a.topology);
    CHECK(hwloc_topology_get_depth(ta) == hwloc_topology_get_depth(n.topo));
    CHECK(hwloc_get_nbobjs_by_type(ta, HWLOC_OBJ_PU) == hwloc_get_nbobjs_by_type(n.topo, HWLOC_OBJ_PU));
    PMIx_Topology_destruct(&a);
    CHECK(a.topology == nullptr);
    // The other copy lives on.
    CHECK(hwloc_get_nbobjs_by_type(static_cast<hwloc_topology_t>(b.topology), HWLOC_OBJ_PU) > 0);
    PMIx_Topology_destruct(&b);

    char hw[] = "hwloc";
    pmix_topology_t named{hw, nullptr};
    REQUIRE(PMIx_Load_topology(&named) == PMIX_SUCCESS);
    CHECK(named.source == hw);  // the caller's source is kept
    hwloc_topology_destroy(static_cast<hwloc_topology_t>(named.topology));

    char other[] = "other";
    pmix_topology_t foreign{other, nullptr};
    CHECK(PMIx_Load_topology(&foreign) == PMIX_ERR_NOT_SUPPORTED);
    CHECK(foreign.topology == nullptr);
    CHECK(PMIx_Load_topology(nullptr) == PMIX_ERR_BAD_PARAM);
  }

  TEST_CASE("topologies and cpusets copy deeply and print") {
    pmix_topology_t t{nullptr, nullptr};
    REQUIRE(PMIx_Load_topology(&t) == PMIX_SUCCESS);
    void* copy = nullptr;
    REQUIRE(PMIx_Data_copy(&copy, &t, PMIX_TOPO) == PMIX_SUCCESS);
    auto* tc = static_cast<pmix_topology_t*>(copy);
    CHECK(tc->topology != t.topology);
    char* out = nullptr;
    REQUIRE(PMIx_Data_print(&out, nullptr, tc, PMIX_TOPO) == PMIX_SUCCESS);
    const auto printed = taken(out);
    CHECK(printed.find("Source: hwloc:") != std::string::npos);
    CHECK(printed.find("PU:") != std::string::npos);
    PMIx_Topology_destruct(&t);
    PMIx_Topology_destruct(tc);
    std::free(tc);

    pmix_cpuset_t c = parsed("hwloc:0,2-3");
    REQUIRE(PMIx_Data_copy(&copy, &c, PMIX_PROC_CPUSET) == PMIX_SUCCESS);
    auto* cc = static_cast<pmix_cpuset_t*>(copy);
    CHECK(cc->bitmap != c.bitmap);
    PMIx_Cpuset_destruct(&c);
    REQUIRE(PMIx_Data_print(&out, nullptr, cc, PMIX_PROC_CPUSET) == PMIX_SUCCESS);
    CHECK(taken(out).find("Cpus: 0,2-3") != std::string::npos);
    PMIx_Cpuset_destruct(cc);
    std::free(cc);
  }
}

TEST_SUITE("distances") {
  const std::string xml = pmix::test::runfile("tests/api/data/two_packages.xml");

  TEST_CASE("distances on a made-up node: nearer devices share deeper objects") {
    pmix_topology_t t = xml_topology(xml);
    const std::string gpu = "gpu://" + host() + "::renderD128";
    const distance eth1{"ipv4://aa:bb:cc:dd:ee:01", "eth1", PMIX_DEVTYPE_NETWORK, 0, 0};
    const distance mlx{"fab://9803:9b03:0001:0002::9803:9b03:0001:0003", "mlx5_0", PMIX_DEVTYPE_OPENFABRICS,
                       0, 0};
    const distance eth0{"ipv4://02:fc:00:00:00:01", "eth0", PMIX_DEVTYPE_NETWORK, 0, 0};
    const distance ib0{"ipv6://00:00:10:87:fe:80:00:00:00:00:00:00:98:03:9b:03:00:01:00:02", "ib0",
                       PMIX_DEVTYPE_NETWORK, 0, 0};
    auto at = [](distance d, unsigned dist) {
      d.min = d.max = dist;
      return d;
    };
    // The topology is 4 deep (machine, package, core, PU). From PU 0: its
    // package's devices at 4 - 1 = 3; the rest share only the machine, so
    // PU depth 3 + 4 = 7. GPUs first, then network, then fabrics; "card1"
    // (a GPU's auxiliary node) and the disk are not listed.
    const distance gpu_d{gpu, "renderD128", PMIX_DEVTYPE_GPU, 0, 0};
    CHECK(distances(&t, "hwloc:0", {}) ==
          std::vector<distance>{at(gpu_d, 7), at(eth1, 3), at(eth0, 7), at(ib0, 7), at(mlx, 3)});
    // From package 0 as a whole (depth 1): machine-level devices at 1 + 4.
    CHECK(distances(&t, "hwloc:0-1", {}) ==
          std::vector<distance>{at(gpu_d, 5), at(eth1, 3), at(eth0, 5), at(ib0, 5), at(mlx, 3)});
    CHECK(distances(&t, "hwloc:3", {}) ==
          std::vector<distance>{at(gpu_d, 3), at(eth1, 7), at(eth0, 7), at(ib0, 7), at(mlx, 7)});
    // Only the machine holds CPUs of both packages.
    CHECK(distances(&t, "hwloc:1-2", {}, PMIX_ERR_NOT_AVAILABLE).empty());

    // Filters: a type, an id (OS name or uuid, any case).
    std::vector<pmix_info_t> only_gpus(1);
    pmix_device_type_t gpus = PMIX_DEVTYPE_GPU;
    PMIX_INFO_LOAD(&only_gpus[0], PMIX_DEVICE_TYPE, &gpus, PMIX_DEVTYPE);
    CHECK(distances(&t, "hwloc:0", only_gpus) == std::vector<distance>{at(gpu_d, 7)});
    std::vector<pmix_info_t> by_id(2);
    PMIX_INFO_LOAD(&by_id[0], PMIX_DEVICE_ID, "ETH0", PMIX_STRING);
    PMIX_INFO_LOAD(&by_id[1], PMIX_DEVICE_ID, "ipv4://aa:bb:cc:dd:ee:01", PMIX_STRING);
    CHECK(distances(&t, "hwloc:0", by_id) == std::vector<distance>{at(eth1, 3), at(eth0, 7)});
    std::vector<pmix_info_t> nothing(1);
    pmix_device_type_t dma = PMIX_DEVTYPE_DMA;
    PMIX_INFO_LOAD(&nothing[0], PMIX_DEVICE_TYPE, &dma, PMIX_DEVTYPE);
    CHECK(distances(&t, "hwloc:0", nothing, PMIX_ERR_NOT_FOUND).empty());
    for (auto* v : {&only_gpus, &by_id, &nothing})
      for (auto& i : *v) PMIX_INFO_DESTRUCT(&i);
    PMIx_Topology_destruct(&t);
  }

  TEST_CASE("a node without such devices: PMIX_ERR_NOT_FOUND and an empty list") {
    hwloc_topology_t bare = nullptr;
    hwloc_topology_init(&bare);
    hwloc_topology_set_synthetic(bare, "pack:2 core:2 pu:1");
    REQUIRE(hwloc_topology_load(bare) == 0);
    char hw[] = "hwloc";
    pmix_topology_t t{hw, bare};
    CHECK(distances(&t, "hwloc:0", {}, PMIX_ERR_NOT_FOUND).empty());
    hwloc_topology_destroy(bare);
  }

  TEST_CASE("this process's own topology and binding, when none is given") {
    node_topology n;
    std::vector<std::string> osdevs;
    for (hwloc_obj_t o = hwloc_get_next_osdev(n.topo, nullptr); o != nullptr;
         o = hwloc_get_next_osdev(n.topo, o))
      osdevs.push_back(o->name);
    pmix_device_distance_t* d = nullptr;
    size_t nd = 0;
    const auto rc = PMIx_Compute_distances(nullptr, nullptr, nullptr, 0, &d, &nd);
    CHECK((rc == PMIX_SUCCESS || rc == PMIX_ERR_NOT_FOUND));
    CHECK((rc == PMIX_SUCCESS) == (nd > 0));
    for (size_t k = 0; k < nd; ++k) {
      CHECK(std::find(osdevs.begin(), osdevs.end(), d[k].osname) != osdevs.end());
      CHECK(d[k].mindist <= d[k].maxdist);
    }
    PMIX_DEVICE_DIST_FREE(d, nd);
  }

  TEST_CASE("bad arguments are refused before anything is computed") {
    pmix_topology_t t = xml_topology(xml);
    pmix_cpuset_t c = parsed("hwloc:0");
    pmix_device_distance_t* d = nullptr;
    size_t n = 0;
    CHECK(PMIx_Compute_distances(&t, &c, nullptr, 0, nullptr, &n) == PMIX_ERR_BAD_PARAM);
    CHECK(PMIx_Compute_distances(&t, &c, nullptr, 0, &d, nullptr) == PMIX_ERR_BAD_PARAM);
    CHECK(PMIx_Compute_distances(&t, &c, nullptr, 2, &d, &n) == PMIX_ERR_BAD_PARAM);
    pmix_topology_t nameless{nullptr, t.topology};
    CHECK(PMIx_Compute_distances(&nameless, &c, nullptr, 0, &d, &n) == PMIX_ERR_BAD_PARAM);
    char other[] = "other";
    pmix_topology_t foreign{other, t.topology};
    CHECK(PMIx_Compute_distances(&foreign, &c, nullptr, 0, &d, &n) == PMIX_ERR_NOT_SUPPORTED);
    pmix_cpuset_t foreign_cpus{other, c.bitmap};
    CHECK(PMIx_Compute_distances(&t, &foreign_cpus, nullptr, 0, &d, &n) == PMIX_ERR_NOT_SUPPORTED);
    pmix_cpuset_t empty = parsed("hwloc:");
    CHECK(PMIx_Compute_distances(&t, &empty, nullptr, 0, &d, &n) == PMIX_ERR_BAD_PARAM);
    PMIx_Cpuset_destruct(&empty);
    pmix_info_t wrong;
    PMIX_INFO_LOAD(&wrong, PMIX_DEVICE_TYPE, "gpu", PMIX_STRING);
    CHECK(PMIx_Compute_distances(&t, &c, &wrong, 1, &d, &n) == PMIX_ERR_TYPE_MISMATCH);
    PMIX_INFO_DESTRUCT(&wrong);
    CHECK(d == nullptr);
    CHECK(n == 0);
    PMIx_Cpuset_destruct(&c);
    PMIx_Topology_destruct(&t);
  }

  TEST_CASE("PMIx_Compute_distances_nb answers through its callback, which releases the list") {
    pmix_topology_t t = xml_topology(xml);
    pmix_cpuset_t c = parsed("hwloc:2");
    struct result {
      pmix_status_t status = PMIX_ERROR;
      std::vector<std::string> names;
      std::atomic<int> calls{0};
    } r;
    auto cb = [](pmix_status_t status, pmix_device_distance_t* dist, size_t ndist, void* cbdata,
                 pmix_release_cbfunc_t release_fn, void* release_cbdata) {
      auto* out = static_cast<result*>(cbdata);
      out->status = status;
      for (size_t k = 0; k < ndist; ++k) out->names.push_back(dist[k].osname);
      if (release_fn != nullptr) release_fn(release_cbdata);
      ++out->calls;
    };
    REQUIRE(PMIx_Compute_distances_nb(&t, &c, nullptr, 0, cb, &r) == PMIX_SUCCESS);
    // No library thread in this process: the callback ran before the return.
    CHECK(r.calls == 1);
    CHECK(r.status == PMIX_SUCCESS);
    CHECK(r.names == std::vector<std::string>{"renderD128", "eth1", "eth0", "ib0", "mlx5_0"});

    hwloc_topology_t bare = nullptr;
    hwloc_topology_init(&bare);
    hwloc_topology_set_synthetic(bare, "pack:1 pu:2");
    REQUIRE(hwloc_topology_load(bare) == 0);
    char hw[] = "hwloc";
    pmix_topology_t none{hw, bare};
    pmix_cpuset_t c0 = parsed("hwloc:0");
    r.names.clear();
    REQUIRE(PMIx_Compute_distances_nb(&none, &c0, nullptr, 0, cb, &r) == PMIX_SUCCESS);
    CHECK(r.calls == 2);
    CHECK(r.status == PMIX_ERR_NOT_FOUND);
    CHECK(r.names.empty());
    hwloc_topology_destroy(bare);

    CHECK(PMIx_Compute_distances_nb(&t, &c, nullptr, 0, nullptr, nullptr) == PMIX_ERR_BAD_PARAM);
    pmix_topology_t nameless{nullptr, t.topology};
    CHECK(PMIx_Compute_distances_nb(&nameless, &c, nullptr, 0, cb, &r) == PMIX_ERR_BAD_PARAM);
    CHECK(r.calls == 2);
    PMIx_Cpuset_destruct(&c0);
    PMIx_Cpuset_destruct(&c);
    PMIx_Topology_destruct(&t);
  }
}
