// Value, info, info-list and data array helpers (api/values.cpp) and the
// PMIx_*_string calls (api/strings.cpp). Run under valgrind to check that
// every load/xfer is matched by its destruct.
#include <doctest/doctest.h>
#include <hwloc.h>
#include <pmix.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

// Loads `data` of `type` into a value, copies it, compares the copy, unloads
// it into `out` (scalar storage) and destructs both values.
template <typename T>
void scalar_round_trip(pmix_data_type_t type, T data) {
  CAPTURE(PMIx_Data_type_string(type));
  pmix_value_t v;
  REQUIRE(PMIx_Value_load(&v, &data, type) == PMIX_SUCCESS);
  CHECK(v.type == type);
  T held;
  std::memcpy(&held, &v.data, sizeof(T));
  CHECK(std::memcmp(&held, &data, sizeof(T)) == 0);

  pmix_value_t copy;
  REQUIRE(PMIx_Value_xfer(&copy, &v) == PMIX_SUCCESS);
  CHECK(PMIx_Value_compare(&v, &copy) == PMIX_EQUAL);

  T out{};
  void* dst = &out;
  size_t size = 0;
  REQUIRE(PMIx_Value_unload(&copy, &dst, &size) == PMIX_SUCCESS);
  CHECK(size == sizeof(T));
  CHECK(std::memcmp(&out, &data, sizeof(T)) == 0);

  PMIx_Value_destruct(&v);
  PMIx_Value_destruct(&copy);
  CHECK(v.type == PMIX_UNDEF);
  CHECK(copy.type == PMIX_UNDEF);
}

pmix_info_t make_info(const char* key, const char* text) {
  pmix_info_t info;
  PMIX_INFO_CONSTRUCT(&info);
  REQUIRE(PMIx_Info_load(&info, key, text, PMIX_STRING) == PMIX_SUCCESS);
  return info;
}

}  // namespace

TEST_SUITE("values") {
  TEST_CASE("every scalar type survives load, xfer, compare and unload") {
    scalar_round_trip<bool>(PMIX_BOOL, true);
    scalar_round_trip<uint8_t>(PMIX_BYTE, 0xab);
    scalar_round_trip<size_t>(PMIX_SIZE, size_t{1} << 40);
    scalar_round_trip<pid_t>(PMIX_PID, 4242);
    scalar_round_trip<int>(PMIX_INT, -17);
    scalar_round_trip<int8_t>(PMIX_INT8, -8);
    scalar_round_trip<int16_t>(PMIX_INT16, -1600);
    scalar_round_trip<int32_t>(PMIX_INT32, -320000);
    scalar_round_trip<int64_t>(PMIX_INT64, INT64_MIN + 3);
    scalar_round_trip<unsigned int>(PMIX_UINT, 17u);
    scalar_round_trip<uint8_t>(PMIX_UINT8, 250);
    scalar_round_trip<uint16_t>(PMIX_UINT16, 65000);
    scalar_round_trip<uint32_t>(PMIX_UINT32, 4000000000u);
    scalar_round_trip<uint64_t>(PMIX_UINT64, UINT64_MAX - 1);
    scalar_round_trip<float>(PMIX_FLOAT, 1.5f);
    scalar_round_trip<double>(PMIX_DOUBLE, -2.25);
    scalar_round_trip<struct timeval>(PMIX_TIMEVAL, timeval{12, 34});
    scalar_round_trip<time_t>(PMIX_TIME, 1700000000);
    scalar_round_trip<pmix_status_t>(PMIX_STATUS, PMIX_ERR_NOT_FOUND);
    scalar_round_trip<pmix_persistence_t>(PMIX_PERSIST, PMIX_PERSIST_SESSION);
    scalar_round_trip<pmix_scope_t>(PMIX_SCOPE, PMIX_GLOBAL);
    scalar_round_trip<pmix_data_range_t>(PMIX_DATA_RANGE, PMIX_RANGE_NAMESPACE);
    scalar_round_trip<pmix_info_directives_t>(PMIX_INFO_DIRECTIVES, PMIX_INFO_REQD);
    scalar_round_trip<pmix_data_type_t>(PMIX_DATA_TYPE, PMIX_PROC);
    scalar_round_trip<pmix_proc_state_t>(PMIX_PROC_STATE, PMIX_PROC_STATE_RUNNING);
    scalar_round_trip<pmix_rank_t>(PMIX_PROC_RANK, 99u);
    scalar_round_trip<pmix_alloc_directive_t>(PMIX_ALLOC_DIRECTIVE, PMIX_ALLOC_EXTEND);
    scalar_round_trip<pmix_iof_channel_t>(PMIX_IOF_CHANNEL, PMIX_FWD_STDERR_CHANNEL);
    scalar_round_trip<pmix_job_state_t>(PMIX_JOB_STATE, PMIX_JOB_STATE_RUNNING);
    scalar_round_trip<pmix_link_state_t>(PMIX_LINK_STATE, PMIX_LINK_UP);
    scalar_round_trip<pmix_device_type_t>(PMIX_DEVTYPE, PMIX_DEVTYPE_GPU);
    scalar_round_trip<pmix_locality_t>(PMIX_LOCTYPE, PMIX_LOCALITY_SHARE_CORE);
    scalar_round_trip<pmix_storage_medium_t>(PMIX_STOR_MEDIUM, PMIX_STORAGE_MEDIUM_SSD);
    scalar_round_trip<pmix_storage_accessibility_t>(PMIX_STOR_ACCESS, PMIX_STORAGE_ACCESSIBILITY_JOB);
    scalar_round_trip<pmix_storage_persistence_t>(PMIX_STOR_PERSIST, PMIX_STORAGE_PERSISTENCE_SCRATCH);
    scalar_round_trip<pmix_storage_access_type_t>(PMIX_STOR_ACCESS_TYPE, PMIX_STORAGE_ACCESS_RDWR);
  }

  TEST_CASE("a NULL data pointer zeroes the value and loads a boolean as true") {
    pmix_value_t v;
    std::memset(&v, 0x7f, sizeof(v));
    REQUIRE(PMIx_Value_load(&v, nullptr, PMIX_BOOL) == PMIX_SUCCESS);
    CHECK(v.type == PMIX_BOOL);
    CHECK(v.data.flag);
    std::memset(&v, 0x7f, sizeof(v));
    REQUIRE(PMIx_Value_load(&v, nullptr, PMIX_STRING) == PMIX_SUCCESS);
    CHECK(v.type == PMIX_STRING);
    CHECK(v.data.string == nullptr);
    PMIx_Value_destruct(&v);
  }

  TEST_CASE("strings are copied on load and xfer and unloaded as new copies") {
    char text[] = "hello";
    pmix_value_t v;
    REQUIRE(PMIx_Value_load(&v, text, PMIX_STRING) == PMIX_SUCCESS);
    CHECK(v.data.string != text);
    text[0] = 'j';
    CHECK(std::string(v.data.string) == "hello");

    void* out = nullptr;
    size_t size = 0;
    REQUIRE(PMIx_Value_unload(&v, &out, &size) == PMIX_SUCCESS);
    CHECK(size == 5);
    CHECK(out != v.data.string);
    CHECK(std::string(static_cast<char*>(out)) == "hello");
    std::free(out);
    PMIx_Value_destruct(&v);
  }

  TEST_CASE("byte objects are deep-copied; unload lends the value's own bytes") {
    char bytes[4] = {1, 2, 0, 4};
    pmix_byte_object_t bo = {bytes, sizeof(bytes)};
    for (pmix_data_type_t type :
         {PMIX_BYTE_OBJECT, PMIX_COMPRESSED_STRING, PMIX_REGEX, PMIX_COMPRESSED_BYTE_OBJECT}) {
      CAPTURE(type);
      pmix_value_t v;
      REQUIRE(PMIx_Value_load(&v, &bo, type) == PMIX_SUCCESS);
      CHECK(v.data.bo.bytes != bytes);
      CHECK(v.data.bo.size == 4);
      CHECK(std::memcmp(v.data.bo.bytes, bytes, 4) == 0);
      pmix_value_t copy;
      REQUIRE(PMIx_Value_xfer(&copy, &v) == PMIX_SUCCESS);
      CHECK(copy.data.bo.bytes != v.data.bo.bytes);
      CHECK(PMIx_Value_compare(&v, &copy) == PMIX_EQUAL);
      void* out = nullptr;
      size_t size = 0;
      REQUIRE(PMIx_Value_unload(&copy, &out, &size) == PMIX_SUCCESS);
      CHECK(out == copy.data.bo.bytes);
      CHECK(size == 4);
      PMIx_Value_destruct(&v);
      PMIx_Value_destruct(&copy);
    }
  }

  TEST_CASE("a pointer value is stored, copied and unloaded, never freed") {
    int target = 5;
    pmix_value_t v;
    REQUIRE(PMIx_Value_load(&v, &target, PMIX_POINTER) == PMIX_SUCCESS);
    CHECK(v.data.ptr == &target);
    pmix_value_t copy;
    REQUIRE(PMIx_Value_xfer(&copy, &v) == PMIX_SUCCESS);
    CHECK(copy.data.ptr == &target);
    void* out = nullptr;
    size_t size = 0;
    REQUIRE(PMIx_Value_unload(&copy, &out, &size) == PMIX_SUCCESS);
    CHECK(out == &target);
    PMIx_Value_destruct(&v);
    PMIx_Value_destruct(&copy);
    CHECK(target == 5);
  }

  TEST_CASE("procs and namespaces are boxed copies") {
    pmix_proc_t proc;
    PMIX_LOAD_PROCID(&proc, "job-7", 3);
    pmix_value_t v;
    REQUIRE(PMIx_Value_load(&v, &proc, PMIX_PROC) == PMIX_SUCCESS);
    REQUIRE(v.data.proc != nullptr);
    CHECK(v.data.proc != &proc);
    CHECK(PMIX_CHECK_PROCID(v.data.proc, &proc));
    pmix_proc_t out;
    void* dst = &out;
    size_t size = 0;
    REQUIRE(PMIx_Value_unload(&v, &dst, &size) == PMIX_SUCCESS);
    CHECK(size == sizeof(pmix_proc_t));
    CHECK(out.rank == 3);
    PMIx_Value_destruct(&v);

    REQUIRE(PMIx_Value_load(&v, "short-ns", PMIX_PROC_NSPACE) == PMIX_SUCCESS);
    CHECK(std::string(*v.data.nspace) == "short-ns");
    pmix_value_t copy;
    REQUIRE(PMIx_Value_xfer(&copy, &v) == PMIX_SUCCESS);
    CHECK(PMIx_Value_compare(&v, &copy) == PMIX_EQUAL);
    pmix_nspace_t ns;
    dst = ns;
    REQUIRE(PMIx_Value_unload(&copy, &dst, &size) == PMIX_SUCCESS);
    CHECK(std::string(ns) == "short-ns");
    CHECK(size == 8);
    PMIx_Value_destruct(&v);
    PMIx_Value_destruct(&copy);
  }

  TEST_CASE("structured types are deep-copied and unloaded as new copies") {
    pmix_proc_info_t pinfo;
    PMIX_PROC_INFO_CONSTRUCT(&pinfo);
    PMIX_LOAD_PROCID(&pinfo.proc, "job", 1);
    pinfo.hostname = const_cast<char*>("node01");
    pinfo.executable_name = const_cast<char*>("/bin/app");
    pinfo.pid = 77;

    pmix_envar_t envar = {const_cast<char*>("PATH"), const_cast<char*>("/opt/bin"), ':'};

    uint32_t coords[3] = {1, 2, 3};
    pmix_coord_t coord = {PMIX_COORD_LOGICAL_VIEW, coords, 3};

    pmix_geometry_t geometry = {2, const_cast<char*>("uuid-1"), const_cast<char*>("eth0"), &coord, 1};

    pmix_device_distance_t dist = {const_cast<char*>("gpu-uuid"), const_cast<char*>("gpu0"),
                                   PMIX_DEVTYPE_GPU, 1, 4};

    char ep_bytes[2] = {9, 8};
    pmix_endpoint_t endpoint = {const_cast<char*>("nic"), const_cast<char*>("ib0"), {ep_bytes, 2}};

    pmix_regattr_t regattr;
    PMIX_REGATTR_CONSTRUCT(&regattr);
    PMIX_REGATTR_LOAD(&regattr, "PMIX_TIMEOUT", PMIX_TIMEOUT, PMIX_INT, "seconds to wait");

    pmix_proc_stats_t pstats;
    PMIX_PROC_STATS_CONSTRUCT(&pstats);
    pstats.node = const_cast<char*>("node01");
    pstats.cmd = const_cast<char*>("app");
    pstats.num_threads = 4;

    pmix_disk_stats_t disk;
    PMIX_DISK_STATS_CONSTRUCT(&disk);
    disk.disk = const_cast<char*>("sda");
    disk.num_reads_completed = 10;

    pmix_net_stats_t net;
    PMIX_NET_STATS_CONSTRUCT(&net);
    net.net_interface = const_cast<char*>("eth0");
    net.num_bytes_sent = 1000;

    pmix_node_stats_t node;
    PMIX_NODE_STATS_CONSTRUCT(&node);
    node.node = const_cast<char*>("node01");
    node.diskstats = &disk;
    node.ndiskstats = 1;
    node.netstats = &net;
    node.nnetstats = 1;

    char buf_bytes[8] = "payload";
    pmix_data_buffer_t dbuf = {buf_bytes, buf_bytes + 7, buf_bytes + 2, 8, 7};

    pmix_cpuset_t cpuset = {const_cast<char*>("other"), nullptr};
    pmix_topology_t topo = {const_cast<char*>("other"), nullptr};

    struct item {
      pmix_data_type_t type;
      const void* data;
      size_t size;
    };
    const item items[] = {
        {PMIX_PROC_INFO, &pinfo, sizeof(pinfo)},     {PMIX_ENVAR, &envar, sizeof(envar)},
        {PMIX_COORD, &coord, sizeof(coord)},         {PMIX_GEOMETRY, &geometry, sizeof(geometry)},
        {PMIX_DEVICE_DIST, &dist, sizeof(dist)},     {PMIX_ENDPOINT, &endpoint, sizeof(endpoint)},
        {PMIX_REGATTR, &regattr, sizeof(regattr)},   {PMIX_PROC_STATS, &pstats, sizeof(pstats)},
        {PMIX_DISK_STATS, &disk, sizeof(disk)},      {PMIX_NET_STATS, &net, sizeof(net)},
        {PMIX_NODE_STATS, &node, sizeof(node)},      {PMIX_DATA_BUFFER, &dbuf, sizeof(dbuf)},
        {PMIX_PROC_CPUSET, &cpuset, sizeof(cpuset)}, {PMIX_TOPO, &topo, sizeof(topo)},
    };
    for (const item& it : items) {
      CAPTURE(PMIx_Data_type_string(it.type));
      pmix_value_t v;
      REQUIRE(PMIx_Value_load(&v, it.data, it.type) == PMIX_SUCCESS);
      CHECK(v.type == it.type);
      pmix_value_t copy;
      REQUIRE(PMIx_Value_xfer(&copy, &v) == PMIX_SUCCESS);
      pmix_value_cmp_t cmp = PMIx_Value_compare(&v, &copy);
      CHECK((cmp == PMIX_EQUAL || cmp == PMIX_VALUE_COMPARISON_NOT_AVAIL));
      void* out = reinterpret_cast<void*>(1);  // OpenPMIx requires a non-NULL *data
      size_t size = 0;
      REQUIRE(PMIx_Value_unload(&copy, &out, &size) == PMIX_SUCCESS);
      CHECK(size == it.size);
      CHECK(out != it.data);
      // the unloaded element is a deep copy: wrap it in a value to release it
      pmix_value_t owner;
      PMIX_VALUE_CONSTRUCT(&owner);
      if (it.type == PMIX_ENVAR) {
        std::memcpy(&owner.data.envar, out, sizeof(pmix_envar_t));
        std::free(out);
      } else {
        owner.data.ptr = out;
      }
      owner.type = it.type;
      PMIx_Value_destruct(&owner);
      PMIx_Value_destruct(&v);
      PMIx_Value_destruct(&copy);
    }

    // spot-check the deep copies
    pmix_value_t v;
    REQUIRE(PMIx_Value_load(&v, &geometry, PMIX_GEOMETRY) == PMIX_SUCCESS);
    CHECK(v.data.geometry->uuid != geometry.uuid);
    CHECK(std::string(v.data.geometry->osname) == "eth0");
    REQUIRE(v.data.geometry->ncoords == 1);
    CHECK(v.data.geometry->coordinates[0].coord != coords);
    CHECK(v.data.geometry->coordinates[0].coord[2] == 3);
    PMIx_Value_destruct(&v);

    REQUIRE(PMIx_Value_load(&v, &node, PMIX_NODE_STATS) == PMIX_SUCCESS);
    CHECK(v.data.ndstats->diskstats[0].num_reads_completed == 10);
    CHECK(std::string(v.data.ndstats->netstats[0].net_interface) == "eth0");
    PMIx_Value_destruct(&v);

    REQUIRE(PMIx_Value_load(&v, &dbuf, PMIX_DATA_BUFFER) == PMIX_SUCCESS);
    CHECK(v.data.dbuf->unpack_ptr - v.data.dbuf->base_ptr == 2);
    CHECK(std::memcmp(v.data.dbuf->base_ptr, "payload", 7) == 0);
    PMIx_Value_destruct(&v);

    PMIX_REGATTR_DESTRUCT(&regattr);
  }

  TEST_CASE("values that cannot hold a type are refused") {
    pmix_value_t v;
    int dummy = 0;
    CHECK(PMIx_Value_load(&v, &dummy, PMIX_VALUE) == PMIX_ERR_NOT_SUPPORTED);
    CHECK(v.type == PMIX_UNDEF);
    CHECK(PMIx_Value_load(&v, &dummy, PMIX_INFO) == PMIX_ERR_NOT_SUPPORTED);
    CHECK(PMIx_Value_load(&v, &dummy, 600) == PMIX_ERR_NOT_SUPPORTED);
    CHECK(PMIx_Value_load(nullptr, &dummy, PMIX_INT) == PMIX_ERR_BAD_PARAM);
    CHECK(PMIx_Value_xfer(nullptr, &v) == PMIX_ERR_BAD_PARAM);
    CHECK(PMIx_Value_xfer(&v, nullptr) == PMIX_ERR_BAD_PARAM);
    void* out = &dummy;
    size_t size;
    CHECK(PMIx_Value_unload(nullptr, &out, &size) == PMIX_ERR_BAD_PARAM);
    PMIX_VALUE_CONSTRUCT(&v);
    CHECK(PMIx_Value_unload(&v, &out, &size) == PMIX_ERR_UNKNOWN_DATA_TYPE);
    REQUIRE(PMIx_Value_load(&v, &dummy, PMIX_INT) == PMIX_SUCCESS);
    out = nullptr;
    CHECK(PMIx_Value_unload(&v, &out, &size) == PMIX_ERR_BAD_PARAM);  // no storage given
    PMIx_Value_destruct(nullptr);
    PMIx_Data_array_destruct(nullptr);
  }

  TEST_CASE("nested data arrays are copied and released recursively") {
    // innermost: strings
    pmix_data_array_t* strings;
    PMIX_DATA_ARRAY_CREATE(strings, 2, PMIX_STRING);
    static_cast<char**>(strings->array)[0] = strdup("a");
    static_cast<char**>(strings->array)[1] = strdup("b");

    // middle: infos holding the string array and a proc array
    pmix_data_array_t* infos;
    PMIX_DATA_ARRAY_CREATE(infos, 2, PMIX_INFO);
    auto* info = static_cast<pmix_info_t*>(infos->array);
    CHECK(PMIX_INFO_IS_END(&info[1]));
    REQUIRE(PMIx_Info_load(&info[0], "strings", strings, PMIX_DATA_ARRAY) == PMIX_SUCCESS);
    pmix_proc_t procs[2];
    PMIX_LOAD_PROCID(&procs[0], "ns", 0);
    PMIX_LOAD_PROCID(&procs[1], "ns", 1);
    pmix_data_array_t proc_array = {PMIX_PROC, 2, procs};
    REQUIRE(PMIx_Info_load(&info[1], "procs", &proc_array, PMIX_DATA_ARRAY) == PMIX_SUCCESS);
    PMIX_DATA_ARRAY_FREE(strings);

    // outer: an array of values, one of which holds the info array
    pmix_data_array_t* values;
    PMIX_DATA_ARRAY_CREATE(values, 2, PMIX_VALUE);
    auto* vals = static_cast<pmix_value_t*>(values->array);
    REQUIRE(PMIx_Value_load(&vals[0], infos, PMIX_DATA_ARRAY) == PMIX_SUCCESS);
    REQUIRE(PMIx_Value_load(&vals[1], "leaf", PMIX_STRING) == PMIX_SUCCESS);
    PMIX_DATA_ARRAY_FREE(infos);

    pmix_value_t top;
    REQUIRE(PMIx_Value_load(&top, values, PMIX_DATA_ARRAY) == PMIX_SUCCESS);
    pmix_value_t copy;
    REQUIRE(PMIx_Value_xfer(&copy, &top) == PMIX_SUCCESS);
    CHECK(PMIx_Value_compare(&top, &copy) == PMIX_EQUAL);

    const auto* outer = static_cast<pmix_value_t*>(copy.data.darray->array);
    const auto* inner = static_cast<pmix_info_t*>(outer[0].data.darray->array);
    CHECK(std::string(inner[0].key) == "strings");
    CHECK(std::string(static_cast<char**>(inner[0].value.data.darray->array)[1]) == "b");
    CHECK(static_cast<pmix_proc_t*>(inner[1].value.data.darray->array)[1].rank == 1);

    // a change deep inside makes the copies differ
    static_cast<char**>(inner[0].value.data.darray->array)[1][0] = 'c';
    CHECK(PMIx_Value_compare(&top, &copy) == PMIX_VALUE2_GREATER);

    PMIX_DATA_ARRAY_FREE(values);
    PMIx_Value_destruct(&top);
    PMIx_Value_destruct(&copy);

    pmix_data_array_t empty;
    PMIX_DATA_ARRAY_CONSTRUCT(&empty, 3, PMIX_UINT64);
    CHECK(empty.size == 3);
    PMIx_Data_array_destruct(&empty);
    CHECK(empty.array == nullptr);
    CHECK(empty.size == 0);
    CHECK(empty.type == PMIX_UNDEF);
  }

  TEST_CASE("data arrays of every element kind release what they own") {
    pmix_data_array_t* apps;
    PMIX_DATA_ARRAY_CREATE(apps, 1, PMIX_APP);
    auto* app = static_cast<pmix_app_t*>(apps->array);
    app->cmd = strdup("hostname");
    pmix_status_t appended;
    PMIX_ARGV_APPEND_UNIQUE(appended, &app->argv, "hostname");
    CHECK(appended == PMIX_SUCCESS);
    app->maxprocs = 2;
    PMIX_APP_INFO_CREATE(app, 1);
    PMIX_INFO_LOAD(&app->info[0], PMIX_WDIR, "/tmp", PMIX_STRING);

    pmix_data_array_t* queries;
    PMIX_DATA_ARRAY_CREATE(queries, 1, PMIX_QUERY);
    auto* query = static_cast<pmix_query_t*>(queries->array);
    pmix_status_t rc;
    PMIX_ARGV_APPEND(rc, query->keys, PMIX_QUERY_NAMESPACES);
    CHECK(rc == PMIX_SUCCESS);
    PMIX_QUERY_QUALIFIERS_CREATE(query, 1);
    PMIX_INFO_LOAD(&query->qualifiers[0], PMIX_NSPACE, "ns", PMIX_STRING);

    pmix_data_array_t* pdata;
    PMIX_DATA_ARRAY_CREATE(pdata, 1, PMIX_PDATA);
    pmix_proc_t proc;
    PMIX_LOAD_PROCID(&proc, "ns", 0);
    PMIX_PDATA_LOAD(&static_cast<pmix_pdata_t*>(pdata->array)[0], &proc, "key", "value", PMIX_STRING);

    for (pmix_data_array_t* array : {apps, queries, pdata}) {
      pmix_value_t v;
      REQUIRE(PMIx_Value_load(&v, array, PMIX_DATA_ARRAY) == PMIX_SUCCESS);
      CHECK(v.data.darray->array != array->array);
      PMIx_Value_destruct(&v);
    }
    pmix_value_t v;
    REQUIRE(PMIx_Value_load(&v, apps, PMIX_DATA_ARRAY) == PMIX_SUCCESS);
    auto* copied = static_cast<pmix_app_t*>(v.data.darray->array);
    CHECK(std::string(copied->argv[0]) == "hostname");
    CHECK(std::string(copied->info[0].value.data.string) == "/tmp");
    CHECK(copied->maxprocs == 2);
    PMIx_Value_destruct(&v);

    PMIX_DATA_ARRAY_FREE(apps);
    PMIX_DATA_ARRAY_FREE(queries);
    PMIX_DATA_ARRAY_FREE(pdata);
  }

  TEST_CASE("compare orders numbers, strings, procs and byte objects") {
    pmix_value_t a;
    pmix_value_t b;
    int one = 1;
    int two = 2;
    PMIx_Value_load(&a, &one, PMIX_INT);
    PMIx_Value_load(&b, &two, PMIX_INT);
    CHECK(PMIx_Value_compare(&a, &b) == PMIX_VALUE2_GREATER);
    CHECK(PMIx_Value_compare(&b, &a) == PMIX_VALUE1_GREATER);
    CHECK(PMIx_Value_compare(&a, &a) == PMIX_EQUAL);
    PMIx_Value_load(&b, &two, PMIX_INT32);
    CHECK(PMIx_Value_compare(&a, &b) == PMIX_VALUE_TYPE_DIFFERENT);

    double low = 1.5;
    double high = 2.5;
    PMIx_Value_load(&a, &low, PMIX_DOUBLE);
    PMIx_Value_load(&b, &high, PMIX_DOUBLE);
    CHECK(PMIx_Value_compare(&a, &b) == PMIX_VALUE2_GREATER);

    PMIx_Value_load(&a, "abc", PMIX_STRING);
    PMIx_Value_load(&b, "abd", PMIX_STRING);
    CHECK(PMIx_Value_compare(&a, &b) == PMIX_VALUE2_GREATER);
    PMIx_Value_destruct(&a);
    PMIx_Value_destruct(&b);

    pmix_proc_t p1;
    pmix_proc_t p2;
    PMIX_LOAD_PROCID(&p1, "a", 2);
    PMIX_LOAD_PROCID(&p2, "b", 1);
    PMIx_Value_load(&a, &p1, PMIX_PROC);
    PMIx_Value_load(&b, &p2, PMIX_PROC);
    CHECK(PMIx_Value_compare(&a, &b) == PMIX_VALUE2_GREATER);  // namespace first
    PMIx_Value_destruct(&b);
    PMIX_LOAD_PROCID(&p2, "a", 1);
    PMIx_Value_load(&b, &p2, PMIX_PROC);
    CHECK(PMIx_Value_compare(&a, &b) == PMIX_VALUE1_GREATER);
    PMIx_Value_destruct(&a);
    PMIx_Value_destruct(&b);

    char shorter[2] = {1, 2};
    char longer[3] = {1, 2, 0};
    pmix_byte_object_t s = {shorter, 2};
    pmix_byte_object_t l = {longer, 3};
    PMIx_Value_load(&a, &s, PMIX_BYTE_OBJECT);
    PMIx_Value_load(&b, &l, PMIX_BYTE_OBJECT);
    CHECK(PMIx_Value_compare(&a, &b) == PMIX_VALUE2_GREATER);
    PMIx_Value_destruct(&a);
    PMIx_Value_destruct(&b);
    CHECK(PMIx_Value_compare(nullptr, &a) == PMIX_VALUE_COMPARISON_NOT_AVAIL);
  }

  TEST_CASE("PMIx_Info_load sets key and value and clears the flags") {
    pmix_info_t info;
    PMIX_INFO_CONSTRUCT(&info);
    info.flags = PMIX_INFO_REQD;
    uint16_t local = 3;
    REQUIRE(PMIx_Info_load(&info, PMIX_LOCAL_RANK, &local, PMIX_UINT16) == PMIX_SUCCESS);
    CHECK(PMIX_CHECK_KEY(&info, PMIX_LOCAL_RANK));
    CHECK(info.flags == 0);
    CHECK(info.value.data.uint16 == 3);
    CHECK(PMIx_Info_load(&info, nullptr, &local, PMIX_UINT16) == PMIX_ERR_BAD_PARAM);
    CHECK(PMIx_Info_load(nullptr, "k", &local, PMIX_UINT16) == PMIX_ERR_BAD_PARAM);

    std::string long_key(700, 'k');
    REQUIRE(PMIx_Info_load(&info, long_key.c_str(), nullptr, PMIX_BOOL) == PMIX_SUCCESS);
    CHECK(std::strlen(info.key) == PMIX_MAX_KEYLEN);
    PMIX_INFO_DESTRUCT(&info);
  }

  TEST_CASE("PMIx_Info_xfer copies flags and shares the value of a persistent info") {
    pmix_info_t src = make_info("key", "value");
    src.flags = PMIX_INFO_REQD;
    pmix_info_t dst;
    REQUIRE(PMIx_Info_xfer(&dst, &src) == PMIX_SUCCESS);
    CHECK(dst.flags == PMIX_INFO_REQD);
    CHECK(dst.value.data.string != src.value.data.string);
    PMIX_INFO_DESTRUCT(&dst);

    PMIX_INFO_SET_PERSISTENT(&src);
    REQUIRE(PMIx_Info_xfer(&dst, &src) == PMIX_SUCCESS);
    CHECK(dst.value.data.string == src.value.data.string);
    PMIX_INFO_DESTRUCT(&dst);  // persistent: leaves the shared string alone
    CHECK(std::string(src.value.data.string) == "value");
    src.flags = 0;
    PMIX_INFO_DESTRUCT(&src);
    CHECK(PMIx_Info_xfer(nullptr, &src) == PMIX_ERR_BAD_PARAM);
  }

  TEST_CASE("info lists add, insert, transfer and convert in order") {
    void* list = PMIx_Info_list_start();
    REQUIRE(list != nullptr);
    pmix_data_array_t out;
    CHECK(PMIx_Info_list_convert(list, &out) == PMIX_ERR_EMPTY);

    bool yes = true;
    CHECK(PMIx_Info_list_add(list, "a", &yes, PMIX_BOOL) == PMIX_SUCCESS);
    CHECK(PMIx_Info_list_add(list, "b", "text", PMIX_STRING) == PMIX_SUCCESS);
    CHECK(PMIx_Info_list_add(nullptr, "b", "text", PMIX_STRING) == PMIX_ERR_BAD_PARAM);
    CHECK(PMIx_Info_list_add(list, nullptr, "text", PMIX_STRING) == PMIX_ERR_BAD_PARAM);

    pmix_info_t inserted = make_info("c", "shared");
    inserted.flags = PMIX_INFO_REQD;
    CHECK(PMIx_Info_list_insert(list, &inserted) == PMIX_SUCCESS);
    pmix_info_t copied = make_info("d", "copied");
    CHECK(PMIx_Info_list_xfer(list, &copied) == PMIX_SUCCESS);
    PMIX_INFO_DESTRUCT(&copied);

    REQUIRE(PMIx_Info_list_convert(list, &out) == PMIX_SUCCESS);
    PMIx_Info_list_release(list);
    REQUIRE(out.type == PMIX_INFO);
    REQUIRE(out.size == 4);
    auto* infos = static_cast<pmix_info_t*>(out.array);
    CHECK(std::string(infos[0].key) == "a");
    CHECK(infos[0].value.data.flag);
    CHECK(std::string(infos[1].value.data.string) == "text");
    // inserted infos stay owned by the caller: the entry shares the value
    CHECK(infos[2].value.data.string == inserted.value.data.string);
    CHECK(PMIX_INFO_IS_REQUIRED(&infos[2]));
    CHECK(PMIX_INFO_IS_PERSISTENT(&infos[2]));
    CHECK(std::string(infos[3].value.data.string) == "copied");
    PMIx_Data_array_destruct(&out);
    CHECK(std::string(inserted.value.data.string) == "shared");
    PMIX_INFO_DESTRUCT(&inserted);
    PMIx_Info_list_release(nullptr);
  }

  TEST_CASE("data buffers take and give back their bytes") {
    pmix_data_buffer_t buffer;
    PMIX_DATA_BUFFER_CONSTRUCT(&buffer);
    char* bytes = static_cast<char*>(std::malloc(6));
    std::memcpy(bytes, "abcdef", 6);
    size_t size = 6;
    PMIX_DATA_BUFFER_LOAD(&buffer, bytes, size);
    CHECK(buffer.base_ptr == bytes);
    CHECK(buffer.bytes_used == 6);

    buffer.unpack_ptr += 2;  // as if two bytes had been unpacked
    char* out = nullptr;
    size_t out_size = 0;
    PMIX_DATA_BUFFER_UNLOAD(&buffer, out, out_size);
    REQUIRE(out != nullptr);
    CHECK(out_size == 4);
    CHECK(std::memcmp(out, "cdef", 4) == 0);
    CHECK(buffer.base_ptr == nullptr);
    std::free(out);

    pmix_data_buffer_t* created;
    PMIX_DATA_BUFFER_CREATE(created);
    REQUIRE(created != nullptr);
    PMIX_DATA_BUFFER_UNLOAD(created, out, out_size);
    CHECK(out == nullptr);
    CHECK(out_size == 0);
    PMIX_DATA_BUFFER_RELEASE(created);
    CHECK(created == nullptr);
  }

  TEST_CASE("hwloc topologies are duplicated by values and destroyed by PMIX_TOPOLOGY_DESTRUCT") {
    pmix_topology_t other = {const_cast<char*>("other"), &other};
    PMIX_TOPOLOGY_DESTRUCT(&other);
    CHECK(other.topology == &other);  // unknown sources are left alone

    hwloc_topology_t machine;
    REQUIRE(hwloc_topology_init(&machine) == 0);
    REQUIRE(hwloc_topology_load(machine) == 0);
    pmix_topology_t topo = {strdup("hwloc:2"), machine};
    pmix_value_t v;
    REQUIRE(PMIx_Value_load(&v, &topo, PMIX_TOPO) == PMIX_SUCCESS);
    CHECK(v.data.topo->topology != machine);
    CHECK(hwloc_get_nbobjs_by_type(static_cast<hwloc_topology_t>(v.data.topo->topology), HWLOC_OBJ_PU) ==
          hwloc_get_nbobjs_by_type(machine, HWLOC_OBJ_PU));
    PMIx_Value_destruct(&v);

    hwloc_bitmap_t set = hwloc_bitmap_alloc();
    hwloc_bitmap_set(set, 0);
    pmix_cpuset_t cpus = {const_cast<char*>("hwloc"), set};
    REQUIRE(PMIx_Value_load(&v, &cpus, PMIX_PROC_CPUSET) == PMIX_SUCCESS);
    CHECK(v.data.cpuset->bitmap != set);
    CHECK(hwloc_bitmap_isequal(static_cast<hwloc_bitmap_t>(v.data.cpuset->bitmap), set));
    PMIx_Value_destruct(&v);
    hwloc_bitmap_free(set);

    PMIX_TOPOLOGY_DESTRUCT(&topo);
    CHECK(topo.topology == nullptr);
    CHECK(topo.source == nullptr);
  }

  TEST_CASE("header macros: argv, setenv and check_true") {
    char** argv = pmix_argv_split(",a,,b,", ',');
    REQUIRE(pmix_argv_count(argv) == 2);
    char** with_empty = pmix_argv_split_with_empty(",a,,b,", ',');
    CHECK(pmix_argv_count(with_empty) == 4);  // "", "a", "", "b"
    char* joined = pmix_argv_join(with_empty, ':');
    CHECK(std::string(joined) == ":a::b");
    std::free(joined);
    char** copy = pmix_argv_copy(argv);
    CHECK(std::string(copy[1]) == "b");
    pmix_argv_free(copy);
    pmix_argv_free(argv);
    pmix_argv_free(with_empty);

    char** env = nullptr;
    CHECK(pmix_setenv("A", "1", true, &env) == PMIX_SUCCESS);
    CHECK(pmix_setenv("A", "2", false, &env) == PMIX_ERR_EXISTS);
    CHECK(pmix_setenv("A", "3", true, &env) == PMIX_SUCCESS);
    CHECK(pmix_setenv("B", nullptr, true, &env) == PMIX_SUCCESS);
    REQUIRE(pmix_argv_count(env) == 2);
    CHECK(std::string(env[0]) == "A=3");
    CHECK(std::string(env[1]) == "B=");
    pmix_argv_free(env);

    pmix_value_t v;
    PMIx_Value_load(&v, " yes", PMIX_STRING);
    CHECK(pmix_check_true(&v) == PMIX_BOOL_TRUE);
    PMIx_Value_destruct(&v);
    PMIx_Value_load(&v, "0", PMIX_STRING);
    CHECK(pmix_check_true(&v) == PMIX_BOOL_FALSE);
    PMIx_Value_destruct(&v);
    PMIx_Value_load(&v, "maybe", PMIX_STRING);
    CHECK(pmix_check_true(&v) == PMIX_NON_BOOL);
    PMIx_Value_destruct(&v);
  }
}

TEST_SUITE("strings") {
  TEST_CASE("error strings name the status code") {
    CHECK(std::string(PMIx_Error_string(PMIX_ERR_NOT_FOUND)) == "PMIX_ERR_NOT_FOUND");
    CHECK(std::string(PMIx_Error_string(PMIX_SUCCESS)) == "PMIX_SUCCESS");
    CHECK(std::string(PMIx_Error_string(PMIX_ERR_JOB_TERMINATED)) == "PMIX_EVENT_JOB_END");
    CHECK(std::string(PMIx_Error_string(-2999)) == "UNKNOWN STATUS");
    CHECK(std::string(PMIx_Data_type_string(PMIX_DATA_ARRAY)) == "PMIX_DATA_ARRAY");
    CHECK(std::string(PMIx_Data_type_string(29)) == "UNKNOWN DATA TYPE");
  }

  TEST_CASE("the other name functions cover their constants") {
    CHECK(std::string(PMIx_Scope_string(PMIX_GLOBAL)) == "GLOBAL");
    CHECK(std::string(PMIx_Data_range_string(PMIX_RANGE_INVALID)) == "INVALID");
    CHECK(std::string(PMIx_Persistence_string(PMIX_PERSIST_FIRST_READ)) == "UNTIL FIRST READ");
    CHECK(std::string(PMIx_Proc_state_string(PMIX_PROC_STATE_ABORTED_BY_SIG)) == "ABORTED BY SIGNAL");
    CHECK(std::string(PMIx_Job_state_string(PMIX_JOB_STATE_TERMINATED)) == "TERMINATED");
    CHECK(std::string(PMIx_Alloc_directive_string(PMIX_ALLOC_RELEASE)) == "RELEASE");
    CHECK(std::string(PMIx_IOF_channel_string(PMIX_FWD_STDOUT_CHANNEL | PMIX_FWD_STDERR_CHANNEL)) ==
          "STDOUT+STDERR");
    CHECK(std::string(PMIx_IOF_channel_string(PMIX_FWD_NO_CHANNELS)) == "NONE");
    CHECK(std::string(PMIx_Link_state_string(PMIX_LINK_UP)) == "UP");
    CHECK(std::string(PMIx_Device_type_string(PMIX_DEVTYPE_COPROC)) == "COPROCESSOR");
    CHECK(std::string(PMIx_Value_comparison_string(PMIX_VALUE2_GREATER)) == "VALUE2 GREATER");
    for (int state = 0; state < 256; ++state) {
      CHECK(PMIx_Proc_state_string(static_cast<pmix_proc_state_t>(state)) != nullptr);
    }
  }

  TEST_CASE("directive strings are allocated for the caller") {
    char* text = PMIx_Info_directives_string(PMIX_INFO_REQD | PMIX_INFO_QUALIFIER);
    REQUIRE(text != nullptr);
    CHECK(std::string(text) == "REQUIRED:QUALIFIER");
    std::free(text);
    text = PMIx_Info_directives_string(0);
    CHECK(std::string(text) == "OPTIONAL");
    std::free(text);
  }
}
