// The data buffer extras through the public library: PMIx_Data_compress /
// _decompress, PMIx_Data_copy, PMIx_Data_embed, PMIx_Data_print,
// PMIx_Value_string and PMIx_Info_string (docs/local-functions.md).
#include <doctest/doctest.h>
#include <pmix.h>
#include <zlib.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <random>
#include <string>
#include <vector>

namespace {

bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

std::string printed(void* src, pmix_data_type_t type, char* prefix = nullptr) {
  char* out = nullptr;
  const auto rc = PMIx_Data_print(&out, prefix, src, type);
  REQUIRE_MESSAGE(rc == PMIX_SUCCESS, PMIx_Data_type_string(type));
  REQUIRE(out != nullptr);
  std::string s{out};
  std::free(out);
  return s;
}

std::string taken(char* s) {
  REQUIRE(s != nullptr);
  std::string out{s};
  std::free(s);
  return out;
}

std::vector<std::uint8_t> random_bytes(std::size_t n, unsigned alphabet, unsigned seed) {
  std::mt19937 gen{seed};
  std::uniform_int_distribution<unsigned> pick{0, alphabet - 1};
  std::vector<std::uint8_t> out(n);
  for (auto& b : out) b = static_cast<std::uint8_t>(pick(gen));
  return out;
}

std::vector<std::uint8_t> round_trip(const std::vector<std::uint8_t>& in) {
  std::uint8_t* packed = nullptr;
  std::size_t npacked = 0;
  REQUIRE(PMIx_Data_compress(in.data(), in.size(), &packed, &npacked));
  CHECK(npacked < in.size());
  std::uint8_t* out = nullptr;
  std::size_t nout = 0;
  REQUIRE(PMIx_Data_decompress(packed, npacked, &out, &nout));
  std::vector<std::uint8_t> back(out, out + nout);
  std::free(packed);
  std::free(out);
  return back;
}

}  // namespace

TEST_SUITE("compress") {
  TEST_CASE("compressible data of any size comes back byte for byte") {
    for (std::size_t n : {64u, 100u, 1000u, 4095u, 4096u, 65537u, 1u << 20}) {
      CAPTURE(n);
      // Random bytes from a small alphabet, and a repeated pattern.
      const auto letters = random_bytes(n, 4, static_cast<unsigned>(n));
      CHECK(round_trip(letters) == letters);
      std::vector<std::uint8_t> pattern(n);
      for (std::size_t k = 0; k < n; ++k) pattern[k] = static_cast<std::uint8_t>("pmix-cxx "[k % 9]);
      CHECK(round_trip(pattern) == pattern);
    }
  }

  TEST_CASE("random bytes do not shrink: false, nothing allocated") {
    for (std::size_t n : {1u, 16u, 4096u, 100000u}) {
      const auto noise = random_bytes(n, 256, 7);
      std::uint8_t* out = reinterpret_cast<std::uint8_t*>(0x1);
      std::size_t nout = 99;
      CHECK_FALSE(PMIx_Data_compress(noise.data(), noise.size(), &out, &nout));
      CHECK(out == nullptr);
      CHECK(nout == 0);
    }
  }

  TEST_CASE("the block is OpenPMIx's zlib layout: the length in 4 host-order bytes, then a zlib stream") {
    const auto data = random_bytes(10000, 3, 11);
    std::uint8_t* packed = nullptr;
    std::size_t npacked = 0;
    REQUIRE(PMIx_Data_compress(data.data(), data.size(), &packed, &npacked));
    std::uint32_t length = 0;
    std::memcpy(&length, packed, 4);
    CHECK(length == data.size());
    std::vector<std::uint8_t> inflated(length);
    uLongf produced = length;
    CHECK(uncompress(inflated.data(), &produced, packed + 4, npacked - 4) == Z_OK);
    CHECK(produced == length);
    CHECK(inflated == data);
    std::free(packed);

    // A block made the way OpenPMIx's component makes it (level 9) inflates.
    std::vector<std::uint8_t> theirs(4 + compressBound(data.size()));
    uLongf stream = theirs.size() - 4;
    REQUIRE(compress2(theirs.data() + 4, &stream, data.data(), data.size(), 9) == Z_OK);
    const auto n = static_cast<std::uint32_t>(data.size());
    std::memcpy(theirs.data(), &n, 4);
    std::uint8_t* out = nullptr;
    std::size_t nout = 0;
    REQUIRE(PMIx_Data_decompress(theirs.data(), 4 + stream, &out, &nout));
    CHECK(std::vector<std::uint8_t>(out, out + nout) == data);
    std::free(out);
  }

  TEST_CASE("bad arguments and corrupt blocks give false, never a crash") {
    std::uint8_t byte = 1;
    std::uint8_t* out = nullptr;
    std::size_t nout = 0;
    CHECK_FALSE(PMIx_Data_compress(nullptr, 10, &out, &nout));
    CHECK_FALSE(PMIx_Data_compress(&byte, 1, nullptr, &nout));
    CHECK_FALSE(PMIx_Data_compress(&byte, 1, &out, nullptr));
    CHECK_FALSE(PMIx_Data_compress(&byte, 0, &out, &nout));
    CHECK_FALSE(PMIx_Data_decompress(nullptr, 10, &out, &nout));
    CHECK_FALSE(PMIx_Data_decompress(&byte, 1, &out, &nout));

    const auto data = random_bytes(5000, 2, 3);
    std::uint8_t* packed = nullptr;
    std::size_t npacked = 0;
    REQUIRE(PMIx_Data_compress(data.data(), data.size(), &packed, &npacked));
    // Truncated.
    CHECK_FALSE(PMIx_Data_decompress(packed, npacked / 2, &out, &nout));
    CHECK(out == nullptr);
    // A length the stream does not hold, and one no stream of this size could.
    std::vector<std::uint8_t> copy(packed, packed + npacked);
    std::uint32_t wrong = 4999;
    std::memcpy(copy.data(), &wrong, 4);
    CHECK_FALSE(PMIx_Data_decompress(copy.data(), copy.size(), &out, &nout));
    wrong = 0xfffffff0u;
    std::memcpy(copy.data(), &wrong, 4);
    CHECK_FALSE(PMIx_Data_decompress(copy.data(), copy.size(), &out, &nout));
    // A flipped byte in the stream (zlib's checksum catches it).
    std::memcpy(copy.data(), packed, 4);
    copy[npacked / 2] ^= 0x5a;
    CHECK_FALSE(PMIx_Data_decompress(copy.data(), copy.size(), &out, &nout));
    CHECK(out == nullptr);
    CHECK(nout == 0);
    std::free(packed);
  }
}

// ----- PMIx_Data_copy -----------------------------------------------------------

namespace {

// One sample of a type: its storage, what to hand PMIx_Data_copy (&storage,
// or the string itself), a way to scribble over the source after the copy,
// and how to release a copy.
struct sample {
  pmix_data_type_t type;
  void* src;
  std::function<void()> scribble;      // changes everything the source owns
  std::function<void(void*)> release;  // frees a copy
};

void free_boxed(void* copy, pmix_data_type_t type) {
  // A value holding the element through a pointer frees both.
  pmix_value_t v;
  PMIX_VALUE_CONSTRUCT(&v);
  v.type = type;
  v.data.ptr = copy;
  PMIx_Value_destruct(&v);
}

void scribble_string(char* s) {
  for (; s != nullptr && *s != '\0'; ++s) *s = 'X';
}

}  // namespace

TEST_SUITE("copy") {
  TEST_CASE("PMIx_Data_copy of every type is deep and independent of its source") {
    // Scalars.
    bool flag = true;
    std::uint8_t u8 = 200, byte = 17;
    std::int8_t i8 = -5;
    std::int16_t i16 = -300;
    std::uint16_t u16 = 60000;
    std::int32_t i32 = -70000;
    std::uint32_t u32 = 4000000000u;
    std::int64_t i64 = -5000000000LL;
    std::uint64_t u64 = 9000000000ULL;
    int i = -42;
    unsigned u = 42;
    std::size_t size = 123456;
    pid_t pid = 4321;
    float f = 1.25f;
    double d = 2.5;
    struct timeval tv = {12, 34};
    time_t t = 1000000;
    pmix_status_t status = PMIX_ERR_NOT_FOUND;
    pmix_rank_t rank = 7;
    pmix_persistence_t persist = PMIX_PERSIST_SESSION;
    void* pointer = &flag;
    pmix_scope_t scope = PMIX_REMOTE;
    pmix_data_range_t range = PMIX_RANGE_SESSION;
    pmix_info_directives_t directives = PMIX_INFO_REQD;
    pmix_data_type_t dtype = PMIX_UINT64;
    pmix_proc_state_t pstate = PMIX_PROC_STATE_RUNNING;
    pmix_alloc_directive_t alloc = PMIX_ALLOC_EXTEND;
    pmix_iof_channel_t channel = PMIX_FWD_STDERR_CHANNEL;
    pmix_job_state_t jstate = PMIX_JOB_STATE_RUNNING;
    pmix_link_state_t link = PMIX_LINK_UP;
    pmix_device_type_t devtype = PMIX_DEVTYPE_GPU;
    pmix_locality_t loc = PMIX_LOCALITY_SHARE_CORE;
    pmix_storage_medium_t medium = PMIX_STORAGE_MEDIUM_SSD;
    pmix_storage_accessibility_t access = PMIX_STORAGE_ACCESSIBILITY_JOB;
    pmix_storage_persistence_t spersist = PMIX_STORAGE_PERSISTENCE_ARCHIVE;
    pmix_storage_access_type_t atype = PMIX_STORAGE_ACCESS_RDWR;
    std::vector<sample> samples;
    auto scalar = [&](pmix_data_type_t type, void* at, std::size_t n) {
      samples.push_back({type, at, [at, n] { std::memset(at, 0x33, n); }, [](void* c) { std::free(c); }});
    };
    scalar(PMIX_BOOL, &flag, 0);  // a bool cannot be scribbled to another valid value: left as is
    scalar(PMIX_BYTE, &byte, 1);
    scalar(PMIX_UINT8, &u8, 1);
    scalar(PMIX_INT8, &i8, 1);
    scalar(PMIX_INT16, &i16, 2);
    scalar(PMIX_UINT16, &u16, 2);
    scalar(PMIX_INT32, &i32, 4);
    scalar(PMIX_UINT32, &u32, 4);
    scalar(PMIX_INT64, &i64, 8);
    scalar(PMIX_UINT64, &u64, 8);
    scalar(PMIX_INT, &i, sizeof i);
    scalar(PMIX_UINT, &u, sizeof u);
    scalar(PMIX_SIZE, &size, sizeof size);
    scalar(PMIX_PID, &pid, sizeof pid);
    scalar(PMIX_FLOAT, &f, sizeof f);
    scalar(PMIX_DOUBLE, &d, sizeof d);
    scalar(PMIX_TIMEVAL, &tv, sizeof tv);
    scalar(PMIX_TIME, &t, sizeof t);
    scalar(PMIX_STATUS, &status, sizeof status);
    scalar(PMIX_PROC_RANK, &rank, sizeof rank);
    scalar(PMIX_PERSIST, &persist, sizeof persist);
    scalar(PMIX_POINTER, &pointer, sizeof pointer);
    scalar(PMIX_SCOPE, &scope, sizeof scope);
    scalar(PMIX_DATA_RANGE, &range, sizeof range);
    scalar(PMIX_INFO_DIRECTIVES, &directives, sizeof directives);
    scalar(PMIX_DATA_TYPE, &dtype, sizeof dtype);
    scalar(PMIX_PROC_STATE, &pstate, sizeof pstate);
    scalar(PMIX_ALLOC_DIRECTIVE, &alloc, sizeof alloc);
    scalar(PMIX_IOF_CHANNEL, &channel, sizeof channel);
    scalar(PMIX_JOB_STATE, &jstate, sizeof jstate);
    scalar(PMIX_LINK_STATE, &link, sizeof link);
    scalar(PMIX_DEVTYPE, &devtype, sizeof devtype);
    scalar(PMIX_LOCTYPE, &loc, sizeof loc);
    scalar(PMIX_STOR_MEDIUM, &medium, sizeof medium);
    scalar(PMIX_STOR_ACCESS, &access, sizeof access);
    scalar(PMIX_STOR_PERSIST, &spersist, sizeof spersist);
    scalar(PMIX_STOR_ACCESS_TYPE, &atype, sizeof atype);

    // A string is handed over as its characters.
    char text[] = "a string";
    samples.push_back({PMIX_STRING, text, [&] { scribble_string(text); }, [](void* c) { std::free(c); }});

    pmix_nspace_t nspace = "my-namespace";
    scalar(PMIX_PROC_NSPACE, nspace, sizeof nspace);
    pmix_proc_t proc;
    PMIX_LOAD_PROCID(&proc, "ns-a", 3);
    scalar(PMIX_PROC, &proc, sizeof proc);

    // One source per byte object type (each sample scribbles over its own).
    char bytes[4][8] = {"bytes\x01\x02", "bytes\x01\x03", "bytes\x01\x04", "bytes\x01\x05"};
    pmix_byte_object_t bo[4];
    int which = 0;
    for (auto type : {PMIX_BYTE_OBJECT, PMIX_COMPRESSED_STRING, PMIX_REGEX, PMIX_COMPRESSED_BYTE_OBJECT}) {
      char* b = bytes[which];
      bo[which] = pmix_byte_object_t{b, sizeof bytes[which]};
      samples.push_back({static_cast<pmix_data_type_t>(type), &bo[which], [b] { std::memset(b, 'Z', 8); },
                         [](void* c) {
                           auto* p = static_cast<pmix_byte_object_t*>(c);
                           PMIX_BYTE_OBJECT_FREE(p, 1);
                         }});
      ++which;
    }

    pmix_value_t value;
    PMIX_VALUE_LOAD(&value, "value text", PMIX_STRING);
    samples.push_back({PMIX_VALUE, &value, [&] { scribble_string(value.data.string); },
                       [](void* c) {
                         auto* p = static_cast<pmix_value_t*>(c);
                         PMIX_VALUE_RELEASE(p);
                       }});

    pmix_info_t info;
    PMIX_INFO_LOAD(&info, PMIX_HOSTNAME, "node-7", PMIX_STRING);
    PMIX_INFO_REQUIRED(&info);
    samples.push_back({PMIX_INFO, &info, [&] { scribble_string(info.value.data.string); },
                       [](void* c) {
                         auto* p = static_cast<pmix_info_t*>(c);
                         PMIX_INFO_FREE(p, 1);
                       }});

    pmix_pdata_t pdata;
    PMIX_PDATA_CONSTRUCT(&pdata);
    PMIX_LOAD_PROCID(&pdata.proc, "ns-b", 1);
    PMIX_LOAD_KEY(pdata.key, "published");
    PMIX_VALUE_LOAD(&pdata.value, "pdata text", PMIX_STRING);
    samples.push_back({PMIX_PDATA, &pdata, [&] { scribble_string(pdata.value.data.string); },
                       [](void* c) {
                         auto* p = static_cast<pmix_pdata_t*>(c);
                         PMIX_PDATA_FREE(p, 1);
                       }});

    char cmd[] = "a.out", arg0[] = "a.out", arg1[] = "--flag", env0[] = "A=1", cwd[] = "/tmp";
    char* argv[] = {arg0, arg1, nullptr};
    char* env[] = {env0, nullptr};
    pmix_info_t app_info;
    PMIX_INFO_LOAD(&app_info, PMIX_WDIR, "/work", PMIX_STRING);
    pmix_app_t app{cmd, argv, env, cwd, 4, &app_info, 1};
    samples.push_back({PMIX_APP, &app,
                       [&] {
                         for (char* s : {cmd, arg0, arg1, env0, cwd}) scribble_string(s);
                         scribble_string(app_info.value.data.string);
                       },
                       [](void* c) {
                         auto* p = static_cast<pmix_app_t*>(c);
                         PMIX_APP_FREE(p, 1);
                       }});

    char key0[] = "k0", key1[] = "k1";
    char* keys[] = {key0, key1, nullptr};
    pmix_info_t qual;
    PMIX_INFO_LOAD(&qual, PMIX_NSPACE, "qual-ns", PMIX_STRING);
    pmix_query_t query{keys, &qual, 1};
    samples.push_back({PMIX_QUERY, &query,
                       [&] {
                         scribble_string(key0);
                         scribble_string(key1);
                         scribble_string(qual.value.data.string);
                       },
                       [](void* c) {
                         auto* p = static_cast<pmix_query_t*>(c);
                         PMIX_QUERY_FREE(p, 1);
                       }});

    char host[] = "host-1", exe[] = "/bin/exe";
    pmix_proc_info_t pinfo;
    std::memset(&pinfo, 0, sizeof pinfo);
    PMIX_LOAD_PROCID(&pinfo.proc, "ns-c", 2);
    pinfo.hostname = host;
    pinfo.executable_name = exe;
    pinfo.pid = 77;
    pinfo.exit_code = 3;
    pinfo.state = PMIX_PROC_STATE_TERMINATED;
    samples.push_back({PMIX_PROC_INFO, &pinfo, [&] { scribble_string(host), scribble_string(exe); },
                       [](void* c) { free_boxed(c, PMIX_PROC_INFO); }});

    char ename[] = "PATH", evalue[] = "/usr/bin";
    pmix_envar_t envar{ename, evalue, ':'};
    samples.push_back({PMIX_ENVAR, &envar, [&] { scribble_string(ename), scribble_string(evalue); },
                       [](void* c) {
                         auto* p = static_cast<pmix_envar_t*>(c);
                         PMIX_ENVAR_FREE(p, 1);
                       }});

    std::uint32_t coords[] = {1, 2, 3};
    pmix_coord_t coord{PMIX_COORD_PHYSICAL_VIEW, coords, 3};
    samples.push_back({PMIX_COORD, &coord, [&] { coords[0] = coords[1] = coords[2] = 99; },
                       [](void* c) { free_boxed(c, PMIX_COORD); }});

    char aname[] = "PMIX_MY_ATTR", desc0[] = "what it does";
    char* desc[] = {desc0, nullptr};
    pmix_regattr_t regattr;
    std::memset(&regattr, 0, sizeof regattr);
    regattr.name = aname;
    PMIX_LOAD_KEY(regattr.string, "pmix.my.attr");
    regattr.type = PMIX_INT;
    regattr.description = desc;
    samples.push_back({PMIX_REGATTR, &regattr, [&] { scribble_string(aname), scribble_string(desc0); },
                       [](void* c) { free_boxed(c, PMIX_REGATTR); }});

    int ints[] = {10, 20, 30};
    pmix_data_array_t int_array{PMIX_INT, 3, ints};
    samples.push_back({PMIX_DATA_ARRAY, &int_array, [&] { ints[0] = ints[1] = ints[2] = -1; },
                       [](void* c) { free_boxed(c, PMIX_DATA_ARRAY); }});
    pmix_info_t infos[2];
    PMIX_INFO_LOAD(&infos[0], "k.a", "alpha", PMIX_STRING);
    PMIX_INFO_LOAD(&infos[1], "k.b", "beta", PMIX_STRING);
    pmix_data_array_t info_array{PMIX_INFO, 2, infos};
    samples.push_back(
        {PMIX_DATA_ARRAY, &info_array,
         [&] { scribble_string(infos[0].value.data.string), scribble_string(infos[1].value.data.string); },
         [](void* c) { free_boxed(c, PMIX_DATA_ARRAY); }});

    char guuid[] = "geo-uuid", gos[] = "ib0";
    std::uint32_t gcoords[] = {4, 5};
    pmix_coord_t gcoord{PMIX_COORD_LOGICAL_VIEW, gcoords, 2};
    pmix_geometry_t geometry{9, guuid, gos, &gcoord, 1};
    samples.push_back({PMIX_GEOMETRY, &geometry,
                       [&] { scribble_string(guuid), scribble_string(gos), gcoords[0] = 0; },
                       [](void* c) { free_boxed(c, PMIX_GEOMETRY); }});

    char duuid[] = "ipv4://aa:bb", dos[] = "eth9";
    pmix_device_distance_t dist{duuid, dos, PMIX_DEVTYPE_NETWORK, 3, 5};
    samples.push_back({PMIX_DEVICE_DIST, &dist, [&] { scribble_string(duuid), scribble_string(dos); },
                       [](void* c) { free_boxed(c, PMIX_DEVICE_DIST); }});

    char euuid[] = "ep-uuid", eos[] = "hfi1", ebytes[] = "endpoint";
    pmix_endpoint_t endpoint{euuid, eos, {ebytes, sizeof ebytes}};
    samples.push_back({PMIX_ENDPOINT, &endpoint,
                       [&] { scribble_string(euuid), scribble_string(eos), scribble_string(ebytes); },
                       [](void* c) { free_boxed(c, PMIX_ENDPOINT); }});

    pmix_data_buffer_t buffer;
    PMIX_DATA_BUFFER_CONSTRUCT(&buffer);
    REQUIRE(PMIx_Data_pack(nullptr, &buffer, ints, 3, PMIX_INT) == PMIX_SUCCESS);
    samples.push_back({PMIX_DATA_BUFFER, &buffer, [&] { std::memset(buffer.base_ptr, 0, buffer.bytes_used); },
                       [](void* c) { free_boxed(c, PMIX_DATA_BUFFER); }});

    char snode[] = "node-s", scmd[] = "stat-cmd";
    pmix_proc_stats_t pstats;
    std::memset(&pstats, 0, sizeof pstats);
    pstats.node = snode;
    PMIX_LOAD_PROCID(&pstats.proc, "ns-s", 0);
    pstats.pid = 55;
    pstats.cmd = scmd;
    pstats.state = 'R';
    pstats.num_threads = 3;
    samples.push_back({PMIX_PROC_STATS, &pstats, [&] { scribble_string(snode), scribble_string(scmd); },
                       [](void* c) { free_boxed(c, PMIX_PROC_STATS); }});
    char disk[] = "sda";
    pmix_disk_stats_t dstats;
    std::memset(&dstats, 0, sizeof dstats);
    dstats.disk = disk;
    dstats.num_reads_completed = 17;
    samples.push_back({PMIX_DISK_STATS, &dstats, [&] { scribble_string(disk); },
                       [](void* c) { free_boxed(c, PMIX_DISK_STATS); }});
    char nic[] = "eth3";
    pmix_net_stats_t nstats;
    std::memset(&nstats, 0, sizeof nstats);
    nstats.net_interface = nic;
    nstats.num_bytes_sent = 1234;
    samples.push_back({PMIX_NET_STATS, &nstats, [&] { scribble_string(nic); },
                       [](void* c) { free_boxed(c, PMIX_NET_STATS); }});
    char nnode[] = "node-n", disk2[] = "sdb", nic2[] = "eth4";
    pmix_disk_stats_t disks[1];
    std::memset(disks, 0, sizeof disks);
    disks[0].disk = disk2;
    pmix_net_stats_t nets[1];
    std::memset(nets, 0, sizeof nets);
    nets[0].net_interface = nic2;
    pmix_node_stats_t node;
    std::memset(&node, 0, sizeof node);
    node.node = nnode;
    node.la = 1.5f;
    node.diskstats = disks;
    node.ndiskstats = 1;
    node.netstats = nets;
    node.nnetstats = 1;
    samples.push_back({PMIX_NODE_STATS, &node,
                       [&] { scribble_string(nnode), scribble_string(disk2), scribble_string(nic2); },
                       [](void* c) { free_boxed(c, PMIX_NODE_STATS); }});

    for (auto& s : samples) {
      CAPTURE(PMIx_Data_type_string(s.type));
      const std::string before = printed(s.src, s.type);
      void* copy = nullptr;
      REQUIRE(PMIx_Data_copy(&copy, s.src, s.type) == PMIX_SUCCESS);
      REQUIRE(copy != nullptr);
      CHECK(copy != s.src);
      CHECK(printed(copy, s.type) == before);  // equal...
      s.scribble();
      // The scribble shows in the source (a bool keeps its value; a buffer
      // prints its size only)...
      if (s.type != PMIX_BOOL && s.type != PMIX_DATA_BUFFER) CHECK(printed(s.src, s.type) != before);
      CHECK(printed(copy, s.type) == before);  // ...not in the copy, which owns nothing of the source
      s.release(copy);
    }
    PMIX_VALUE_DESTRUCT(&value);
    PMIX_INFO_DESTRUCT(&info);
    PMIX_PDATA_DESTRUCT(&pdata);
    PMIX_INFO_DESTRUCT(&app_info);
    PMIX_INFO_DESTRUCT(&qual);
    PMIX_INFO_DESTRUCT(&infos[0]);
    PMIX_INFO_DESTRUCT(&infos[1]);
    PMIX_DATA_BUFFER_DESTRUCT(&buffer);
  }

  TEST_CASE("a copied data buffer has bytes of its own that still unpack") {
    pmix_data_buffer_t b;
    PMIX_DATA_BUFFER_CONSTRUCT(&b);
    const char* word = "buffered";
    REQUIRE(PMIx_Data_pack(nullptr, &b, &word, 1, PMIX_STRING) == PMIX_SUCCESS);
    void* copy = nullptr;
    REQUIRE(PMIx_Data_copy(&copy, &b, PMIX_DATA_BUFFER) == PMIX_SUCCESS);
    auto* c = static_cast<pmix_data_buffer_t*>(copy);
    CHECK(c->base_ptr != b.base_ptr);
    REQUIRE(c->bytes_used == b.bytes_used);
    CHECK(std::memcmp(c->base_ptr, b.base_ptr, b.bytes_used) == 0);
    PMIX_DATA_BUFFER_DESTRUCT(&b);
    char* s = nullptr;
    int32_t n = 1;
    REQUIRE(PMIx_Data_unpack(nullptr, c, &s, &n, PMIX_STRING) == PMIX_SUCCESS);
    CHECK(taken(s) == "buffered");
    PMIX_DATA_BUFFER_RELEASE(c);
  }

  TEST_CASE("PMIx_Data_copy refuses NULL arguments and types it cannot copy") {
    int i = 1;
    void* copy = nullptr;
    CHECK(PMIx_Data_copy(nullptr, &i, PMIX_INT) == PMIX_ERR_BAD_PARAM);
    CHECK(PMIx_Data_copy(&copy, nullptr, PMIX_INT) == PMIX_ERR_BAD_PARAM);
    CHECK(PMIx_Data_copy(&copy, &i, PMIX_UNDEF) == PMIX_ERR_UNKNOWN_DATA_TYPE);
    CHECK(PMIx_Data_copy(&copy, &i, 200) == PMIX_ERR_UNKNOWN_DATA_TYPE);
    CHECK(PMIx_Data_copy(&copy, &i, PMIX_COMMAND) == PMIX_ERR_UNKNOWN_DATA_TYPE);
    CHECK(copy == nullptr);
    // A namespace given as a short string is read up to its end only.
    char short_ns[] = "ns";
    REQUIRE(PMIx_Data_copy(&copy, short_ns, PMIX_PROC_NSPACE) == PMIX_SUCCESS);
    CHECK(std::string{static_cast<char*>(copy)} == "ns");
    std::free(copy);
  }
}

// ----- PMIx_Data_embed --------------------------------------------------------

TEST_SUITE("embed") {
  TEST_CASE("embedded packed bytes unpack from the new buffer; the payload stays the caller's") {
    pmix_data_buffer_t source;
    PMIX_DATA_BUFFER_CONSTRUCT(&source);
    std::uint64_t numbers[] = {1, 22, 333};
    const char* word = "embedded";
    REQUIRE(PMIx_Data_pack(nullptr, &source, numbers, 3, PMIX_UINT64) == PMIX_SUCCESS);
    REQUIRE(PMIx_Data_pack(nullptr, &source, &word, 1, PMIX_STRING) == PMIX_SUCCESS);
    pmix_byte_object_t payload;
    REQUIRE(PMIx_Data_unload(&source, &payload) == PMIX_SUCCESS);
    const std::string saved{payload.bytes, payload.size};

    pmix_data_buffer_t target;
    PMIX_DATA_BUFFER_CONSTRUCT(&target);
    int junk = 5;
    REQUIRE(PMIx_Data_pack(nullptr, &target, &junk, 1, PMIX_INT) == PMIX_SUCCESS);  // replaced
    REQUIRE(PMIx_Data_embed(&target, &payload) == PMIX_SUCCESS);
    CHECK(payload.bytes != nullptr);
    CHECK(std::string(payload.bytes, payload.size) == saved);
    CHECK(target.base_ptr != payload.bytes);
    CHECK(target.bytes_used == payload.size);

    std::uint64_t got[3] = {};
    int32_t n = 3;
    REQUIRE(PMIx_Data_unpack(nullptr, &target, got, &n, PMIX_UINT64) == PMIX_SUCCESS);
    CHECK(n == 3);
    CHECK(got[2] == 333);
    char* s = nullptr;
    n = 1;
    REQUIRE(PMIx_Data_unpack(nullptr, &target, &s, &n, PMIX_STRING) == PMIX_SUCCESS);
    CHECK(taken(s) == "embedded");
    PMIX_DATA_BUFFER_DESTRUCT(&target);
    PMIX_BYTE_OBJECT_DESTRUCT(&payload);
  }

  TEST_CASE("a NULL or empty payload leaves the buffer empty; a NULL buffer is refused") {
    pmix_data_buffer_t b;
    PMIX_DATA_BUFFER_CONSTRUCT(&b);
    int i = 9;
    REQUIRE(PMIx_Data_pack(nullptr, &b, &i, 1, PMIX_INT) == PMIX_SUCCESS);
    CHECK(PMIx_Data_embed(&b, nullptr) == PMIX_SUCCESS);
    CHECK(b.base_ptr == nullptr);
    CHECK(b.bytes_used == 0);
    pmix_byte_object_t empty{nullptr, 0};
    CHECK(PMIx_Data_embed(&b, &empty) == PMIX_SUCCESS);
    CHECK(b.bytes_used == 0);
    CHECK(PMIx_Data_embed(nullptr, &empty) == PMIX_ERR_BAD_PARAM);
  }
}

// ----- Printing ------------------------------------------------------------------

TEST_SUITE("print") {
  TEST_CASE("PMIx_Data_print shows the type and the value, after the prefix") {
    int i = -42;
    CHECK(printed(&i, PMIX_INT) == " Data type: PMIX_INT\tValue: -42");
    char prefix[] = ">> ";
    CHECK(printed(&i, PMIX_INT, prefix) == ">> Data type: PMIX_INT\tValue: -42");
    char text[] = "hello world";
    CHECK(has(printed(text, PMIX_STRING), "Value: hello world"));
    bool flag = false;
    CHECK(has(printed(&flag, PMIX_BOOL), "Value: FALSE"));
    double d = 2.5;
    CHECK(has(printed(&d, PMIX_DOUBLE), "2.5"));
    pmix_status_t st = PMIX_ERR_TIMEOUT;
    CHECK(has(printed(&st, PMIX_STATUS), "PMIX_ERR_TIMEOUT"));
    pmix_rank_t r = PMIX_RANK_WILDCARD;
    CHECK(has(printed(&r, PMIX_PROC_RANK), "PMIX_RANK_WILDCARD"));
    pmix_proc_t p;
    PMIX_LOAD_PROCID(&p, "job-9", 4);
    CHECK(has(printed(&p, PMIX_PROC), "job-9:4"));
    pmix_data_range_t range = PMIX_RANGE_NAMESPACE;
    CHECK(has(printed(&range, PMIX_DATA_RANGE), "NAMESPACE"));
    pmix_persistence_t persist = PMIX_PERSIST_PROC;
    CHECK(has(printed(&persist, PMIX_PERSIST), PMIx_Persistence_string(PMIX_PERSIST_PROC)));
    pmix_locality_t loc = PMIX_LOCALITY_SHARE_NODE | PMIX_LOCALITY_SHARE_CORE;
    CHECK(has(printed(&loc, PMIX_LOCTYPE), "NODE|CORE"));
    char bytes[] = "\x01\xab";
    pmix_byte_object_t bo{bytes, 2};
    CHECK(has(printed(&bo, PMIX_BYTE_OBJECT), "Size: 2\tBytes: 01ab"));
    int ints[] = {7, 8};
    pmix_data_array_t array{PMIX_INT, 2, ints};
    const auto a = printed(&array, PMIX_DATA_ARRAY);
    CHECK(has(a, "Type: PMIX_INT\tSize: 2"));
    CHECK(has(a, "Value: 7"));
    CHECK(has(a, "Value: 8"));
    char s1[] = "one", s2[] = "two";
    char* strings[] = {s1, s2};
    pmix_data_array_t sarray{PMIX_STRING, 2, strings};
    CHECK(has(printed(&sarray, PMIX_DATA_ARRAY), "Value: two"));
    char cmd[] = "prog";
    pmix_app_t app{cmd, nullptr, nullptr, nullptr, 3, nullptr, 0};
    CHECK(has(printed(&app, PMIX_APP), "Cmd: prog"));
  }

  TEST_CASE("PMIx_Data_print refuses NULL arguments and types it cannot print") {
    int i = 0;
    char* out = reinterpret_cast<char*>(0x1);
    CHECK(PMIx_Data_print(nullptr, nullptr, &i, PMIX_INT) == PMIX_ERR_BAD_PARAM);
    CHECK(PMIx_Data_print(&out, nullptr, nullptr, PMIX_INT) == PMIX_ERR_BAD_PARAM);
    CHECK(PMIx_Data_print(&out, nullptr, &i, PMIX_UNDEF) == PMIX_ERR_UNKNOWN_DATA_TYPE);
    CHECK(out == nullptr);
    CHECK(PMIx_Data_print(&out, nullptr, &i, 200) == PMIX_ERR_UNKNOWN_DATA_TYPE);
  }

  TEST_CASE("PMIx_Value_string and PMIx_Info_string hold the value; the info's key by its name") {
    pmix_value_t v;
    std::uint32_t size = 16;
    PMIX_VALUE_LOAD(&v, &size, PMIX_UINT32);
    CHECK(taken(PMIx_Value_string(&v)) == " PMIX_VALUE:  Data type: PMIX_UINT32\tValue: 16");
    PMIX_VALUE_DESTRUCT(&v);
    PMIX_VALUE_LOAD(&v, "some text", PMIX_STRING);
    CHECK(has(taken(PMIx_Value_string(&v)), "Value: some text"));
    PMIX_VALUE_DESTRUCT(&v);
    pmix_proc_t p;
    PMIX_LOAD_PROCID(&p, "nsx", 2);
    PMIX_VALUE_LOAD(&v, &p, PMIX_PROC);
    CHECK(has(taken(PMIx_Value_string(&v)), "PROC: nsx:2"));
    PMIX_VALUE_DESTRUCT(&v);
    pmix_nspace_t ns;
    PMIX_LOAD_NSPACE(ns, "nsy");
    PMIX_VALUE_LOAD(&v, ns, PMIX_PROC_NSPACE);  // boxed too: printed through its pointer
    CHECK(has(taken(PMIx_Value_string(&v)), "nsy"));
    PMIX_VALUE_DESTRUCT(&v);
    PMIX_VALUE_CONSTRUCT(&v);
    CHECK(has(taken(PMIx_Value_string(&v)), "PMIX_UNDEF"));
    v.type = 200;  // a type no one knows
    CHECK(has(taken(PMIx_Value_string(&v)), "UNPRINTABLE"));

    pmix_info_t info;
    PMIX_INFO_LOAD(&info, PMIX_JOB_SIZE, &size, PMIX_UINT32);
    PMIX_INFO_REQUIRED(&info);
    const auto s = taken(PMIx_Info_string(&info));
    CHECK(has(s, "KEY: PMIX_JOB_SIZE"));
    CHECK(has(s, "REQUIRED"));
    CHECK(has(s, "Value: 16"));
    PMIX_INFO_DESTRUCT(&info);
    PMIX_INFO_LOAD(&info, "my.key", "v", PMIX_STRING);
    CHECK(has(taken(PMIx_Info_string(&info)), "KEY: my.key"));
    PMIX_INFO_DESTRUCT(&info);

    CHECK(PMIx_Value_string(nullptr) == nullptr);
    CHECK(PMIx_Info_string(nullptr) == nullptr);
  }
}
