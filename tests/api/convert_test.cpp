// C API data <-> C++ values (api/convert.hpp). Every C -> C++ -> C round trip
// is compared with PMIx_Value_compare and released with PMIx_Value_destruct /
// PMIX_INFO_FREE; run the binary under valgrind to check that nothing leaks:
//   valgrind --leak-check=full --error-exitcode=1 bazel-bin/tests/api/convert_test
#include "api/convert.hpp"

#include <doctest/doctest.h>
#include <pmix_common.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "common/value.hpp"

namespace convert = pmix::convert;
using pmix::array_value;
using pmix::info;
using pmix::info_list;
using pmix::proc_id;
using pmix::value;

namespace {

// A zeroed pmix_value_t destructed on scope exit.
struct c_value {
  pmix_value_t v;
  c_value() { std::memset(&v, 0, sizeof v); }
  ~c_value() { PMIx_Value_destruct(&v); }
  c_value(const c_value&) = delete;
  c_value& operator=(const c_value&) = delete;
};

// C -> C++ -> C: the copy must compare equal to the original and own its
// memory. Returns the C++ value.
value round_trip(pmix_value_t& in) {
  value cpp;
  REQUIRE(convert::from_c(in, cpp) == PMIX_SUCCESS);
  CHECK(cpp.type == in.type);
  c_value out;
  REQUIRE(convert::to_c(cpp, out.v) == PMIX_SUCCESS);
  CHECK(out.v.type == in.type);
  CHECK(PMIx_Value_compare(&in, &out.v) == PMIX_EQUAL);
  return cpp;
}

template <typename T>
value scalar_round_trip(pmix_data_type_t type, T data) {
  CAPTURE(type);
  c_value in;
  REQUIRE(PMIx_Value_load(&in.v, &data, type) == PMIX_SUCCESS);
  value cpp = round_trip(in.v);
  // The C++ -> C direction writes exactly the C width.
  c_value out;
  REQUIRE(convert::to_c(cpp, out.v) == PMIX_SUCCESS);
  T back;
  std::memcpy(&back, &out.v.data, sizeof back);
  CHECK(std::memcmp(&back, &data, sizeof data) == 0);
  return cpp;
}

char* dup(const char* s) {
  char* out = static_cast<char*>(std::malloc(std::strlen(s) + 1));
  std::strcpy(out, s);
  return out;
}

pmix_byte_object_t bytes_of(const std::string& s) {
  pmix_byte_object_t bo;
  bo.size = s.size();
  bo.bytes = static_cast<char*>(std::malloc(s.size()));
  std::memcpy(bo.bytes, s.data(), s.size());
  return bo;
}

void load_proc(pmix_proc_t& p, const char* nspace, pmix_rank_t rank) {
  std::memset(&p, 0, sizeof p);
  std::strncpy(p.nspace, nspace, PMIX_MAX_NSLEN);
  p.rank = rank;
}

// `in` becomes a PMIX_DATA_ARRAY value of n elements of type t (zeroed).
template <typename T>
T* make_array(pmix_value_t& in, pmix_data_type_t t, size_t n) {
  std::memset(&in, 0, sizeof in);
  in.type = PMIX_DATA_ARRAY;
  PMIX_DATA_ARRAY_CREATE(in.data.darray, n, t);
  REQUIRE(in.data.darray != nullptr);
  if (in.data.darray->array == nullptr && n > 0) {  // types the macro leaves empty
    in.data.darray->array = std::calloc(n, sizeof(T));
    in.data.darray->size = n;
  }
  return static_cast<T*>(in.data.darray->array);
}

const array_value& array_of(const value& v) {
  const auto* a = v.as_array();
  REQUIRE(a != nullptr);
  return *a;
}

}  // namespace

TEST_SUITE("convert") {
  TEST_CASE("every scalar type survives C -> C++ -> C at its full width") {
    CHECK(*scalar_round_trip<bool>(PMIX_BOOL, true).as_int() == 1);
    CHECK(*scalar_round_trip<uint8_t>(PMIX_BYTE, 0xfe).as_uint() == 0xfe);
    CHECK(*scalar_round_trip<size_t>(PMIX_SIZE, std::numeric_limits<size_t>::max()).as_uint() ==
          std::numeric_limits<size_t>::max());
    CHECK(*scalar_round_trip<pid_t>(PMIX_PID, 123456).as_int() == 123456);
    CHECK(*scalar_round_trip<int>(PMIX_INT, INT32_MIN).as_int() == INT32_MIN);
    CHECK(*scalar_round_trip<int8_t>(PMIX_INT8, -128).as_int() == -128);
    CHECK(*scalar_round_trip<int16_t>(PMIX_INT16, -32768).as_int() == -32768);
    CHECK(*scalar_round_trip<int32_t>(PMIX_INT32, INT32_MAX).as_int() == INT32_MAX);
    CHECK(*scalar_round_trip<int64_t>(PMIX_INT64, INT64_MIN).as_int() == INT64_MIN);
    CHECK(*scalar_round_trip<int64_t>(PMIX_INT64, INT64_MAX).as_int() == INT64_MAX);
    CHECK(*scalar_round_trip<unsigned>(PMIX_UINT, UINT32_MAX).as_uint() == UINT32_MAX);
    CHECK(*scalar_round_trip<uint8_t>(PMIX_UINT8, 0xff).as_uint() == 0xff);
    CHECK(*scalar_round_trip<uint16_t>(PMIX_UINT16, 0xfedc).as_uint() == 0xfedc);
    CHECK(*scalar_round_trip<uint32_t>(PMIX_UINT32, 0xfedcba98).as_uint() == 0xfedcba98);
    CHECK(*scalar_round_trip<uint64_t>(PMIX_UINT64, UINT64_MAX).as_uint() == UINT64_MAX);
    CHECK(std::get<double>(scalar_round_trip<float>(PMIX_FLOAT, -1.5f).data) == -1.5);
    CHECK(std::get<double>(scalar_round_trip<double>(PMIX_DOUBLE, 6.02e23).data) == 6.02e23);
    CHECK(*scalar_round_trip<time_t>(PMIX_TIME, 1700000000).as_int() == 1700000000);
    CHECK(*scalar_round_trip<pmix_status_t>(PMIX_STATUS, PMIX_ERR_TIMEOUT).as_int() == PMIX_ERR_TIMEOUT);
    CHECK(*scalar_round_trip<pmix_rank_t>(PMIX_PROC_RANK, PMIX_RANK_WILDCARD).as_uint() ==
          PMIX_RANK_WILDCARD);
    CHECK(*scalar_round_trip<pmix_persistence_t>(PMIX_PERSIST, PMIX_PERSIST_SESSION).as_uint() ==
          PMIX_PERSIST_SESSION);
    CHECK(*scalar_round_trip<pmix_scope_t>(PMIX_SCOPE, PMIX_GLOBAL).as_uint() == PMIX_GLOBAL);
    CHECK(*scalar_round_trip<pmix_data_range_t>(PMIX_DATA_RANGE, PMIX_RANGE_NAMESPACE).as_uint() ==
          PMIX_RANGE_NAMESPACE);
    CHECK(*scalar_round_trip<pmix_info_directives_t>(PMIX_INFO_DIRECTIVES, 0x80000001u).as_uint() ==
          0x80000001u);
    CHECK(*scalar_round_trip<pmix_data_type_t>(PMIX_DATA_TYPE, PMIX_STOR_ACCESS_TYPE).as_uint() ==
          PMIX_STOR_ACCESS_TYPE);
    CHECK(*scalar_round_trip<pmix_proc_state_t>(PMIX_PROC_STATE, 0xfe).as_uint() == 0xfe);
    CHECK(*scalar_round_trip<pmix_alloc_directive_t>(PMIX_ALLOC_DIRECTIVE, 0x81).as_uint() == 0x81);
    CHECK(*scalar_round_trip<pmix_iof_channel_t>(PMIX_IOF_CHANNEL, 0xf00f).as_uint() == 0xf00f);
    CHECK(*scalar_round_trip<pmix_job_state_t>(PMIX_JOB_STATE, 0xfd).as_uint() == 0xfd);
    CHECK(*scalar_round_trip<pmix_link_state_t>(PMIX_LINK_STATE, 0xfc).as_uint() == 0xfc);
    CHECK(*scalar_round_trip<pmix_device_type_t>(PMIX_DEVTYPE, 0x8000000000000001ull).as_uint() ==
          0x8000000000000001ull);
    CHECK(*scalar_round_trip<pmix_locality_t>(PMIX_LOCTYPE, 0xabcd).as_uint() == 0xabcd);
    CHECK(*scalar_round_trip<pmix_storage_medium_t>(PMIX_STOR_MEDIUM, UINT64_MAX - 1).as_uint() ==
          UINT64_MAX - 1);
    CHECK(*scalar_round_trip<pmix_storage_accessibility_t>(PMIX_STOR_ACCESS, 1ull << 40).as_uint() ==
          1ull << 40);
    CHECK(*scalar_round_trip<pmix_storage_persistence_t>(PMIX_STOR_PERSIST, 1ull << 63).as_uint() ==
          1ull << 63);
    CHECK(*scalar_round_trip<pmix_storage_access_type_t>(PMIX_STOR_ACCESS_TYPE, 0xbeef).as_uint() ==
          0xbeef);
  }

  TEST_CASE("PMIX_UNDEF and PMIX_POINTER round trip without owning anything") {
    c_value undef;
    value cpp = round_trip(undef.v);
    CHECK_FALSE(cpp.is_set());

    static int target = 5;
    c_value ptr;
    REQUIRE(PMIx_Value_load(&ptr.v, &target, PMIX_POINTER) == PMIX_SUCCESS);
    cpp = round_trip(ptr.v);
    c_value out;
    REQUIRE(convert::to_c(cpp, out.v) == PMIX_SUCCESS);
    CHECK(out.v.data.ptr == &target);  // the pointer itself, not a copy
  }

  TEST_CASE("PMIX_TIMEVAL round trip") {
    struct timeval tv;
    tv.tv_sec = 1700000123;
    tv.tv_usec = 999999;
    const value cpp = scalar_round_trip(PMIX_TIMEVAL, tv);
    const auto& t = std::get<pmix::timeval_value>(cpp.data);
    CHECK(t.sec == 1700000123);
    CHECK(t.usec == 999999);
  }

  TEST_CASE("strings and byte objects are deep copies, byte objects keep embedded NULs") {
    c_value s;
    REQUIRE(PMIx_Value_load(&s.v, "hello, world", PMIX_STRING) == PMIX_SUCCESS);
    value cpp = round_trip(s.v);
    CHECK(*cpp.as_string() == "hello, world");
    c_value out;
    REQUIRE(convert::to_c(cpp, out.v) == PMIX_SUCCESS);
    CHECK(out.v.data.string != s.v.data.string);
    CHECK(std::strcmp(out.v.data.string, "hello, world") == 0);

    const std::string blob{"\0a\0b\xff\0", 6};
    for (pmix_data_type_t t : {PMIX_BYTE_OBJECT, PMIX_COMPRESSED_STRING, PMIX_REGEX,
                               PMIX_COMPRESSED_BYTE_OBJECT}) {
      CAPTURE(t);
      c_value bo;
      bo.v.type = t;
      bo.v.data.bo = bytes_of(blob);
      value b = round_trip(bo.v);
      REQUIRE(b.as_string() != nullptr);
      CHECK(*b.as_string() == blob);
      c_value back;
      REQUIRE(convert::to_c(b, back.v) == PMIX_SUCCESS);
      CHECK(back.v.data.bo.size == 6);
      CHECK(back.v.data.bo.bytes != bo.v.data.bo.bytes);
      CHECK(std::memcmp(back.v.data.bo.bytes, blob.data(), 6) == 0);
    }

    // A byte object without bytes stays without bytes; an empty one with
    // storage is an empty string.
    c_value empty;
    empty.v.type = PMIX_BYTE_OBJECT;
    value e = round_trip(empty.v);
    CHECK(e.as_string() == nullptr);
    c_value empty_back;
    REQUIRE(convert::to_c(e, empty_back.v) == PMIX_SUCCESS);
    CHECK(empty_back.v.data.bo.bytes == nullptr);
    CHECK(empty_back.v.data.bo.size == 0);
    char storage = 0;
    c_value zero;
    zero.v.type = PMIX_BYTE_OBJECT;
    zero.v.data.bo.bytes = &storage;
    value z;
    REQUIRE(convert::from_c(zero.v, z) == PMIX_SUCCESS);
    zero.v.data.bo.bytes = nullptr;  // not ours to free
    REQUIRE(z.as_string() != nullptr);
    CHECK(z.as_string()->empty());

    // A NULL string stays NULL, distinct from "" (Open MPI registers the
    // locality string of an unbound rank as NULL and tests for NULL).
    pmix_value_t null_string;
    std::memset(&null_string, 0, sizeof null_string);
    null_string.type = PMIX_STRING;
    value ns;
    REQUIRE(convert::from_c(null_string, ns) == PMIX_SUCCESS);
    CHECK(ns.type == PMIX_STRING);
    CHECK(ns.as_string() == nullptr);
    c_value null_back;
    REQUIRE(convert::to_c(ns, null_back.v) == PMIX_SUCCESS);
    CHECK(null_back.v.type == PMIX_STRING);
    CHECK(null_back.v.data.string == nullptr);
    c_value empty_string;
    REQUIRE(PMIx_Value_load(&empty_string.v, "", PMIX_STRING) == PMIX_SUCCESS);
    value es = round_trip(empty_string.v);
    REQUIRE(es.as_string() != nullptr);
    CHECK(es.as_string()->empty());
  }

  TEST_CASE("PMIX_PROC, PMIX_PROC_NSPACE, PMIX_PROC_INFO and PMIX_ENVAR round trip") {
    pmix_proc_t p;
    load_proc(p, "job.42", 17);
    c_value proc;
    REQUIRE(PMIx_Value_load(&proc.v, &p, PMIX_PROC) == PMIX_SUCCESS);
    value cpp = round_trip(proc.v);
    CHECK(*cpp.as_proc() == proc_id{"job.42", 17});

    c_value ns;
    REQUIRE(PMIx_Value_load(&ns.v, "the-namespace", PMIX_PROC_NSPACE) == PMIX_SUCCESS);
    cpp = round_trip(ns.v);
    CHECK(*cpp.as_string() == "the-namespace");

    c_value pinfo;
    pinfo.v.type = PMIX_PROC_INFO;
    pinfo.v.data.pinfo = static_cast<pmix_proc_info_t*>(std::calloc(1, sizeof(pmix_proc_info_t)));
    load_proc(pinfo.v.data.pinfo->proc, "job.42", 3);
    pinfo.v.data.pinfo->hostname = dup("node007");
    pinfo.v.data.pinfo->executable_name = dup("/usr/bin/app");
    pinfo.v.data.pinfo->pid = 31337;
    pinfo.v.data.pinfo->exit_code = -11;
    pinfo.v.data.pinfo->state = PMIX_PROC_STATE_TERMINATED;
    cpp = round_trip(pinfo.v);
    const auto& pi = *std::get<std::shared_ptr<const pmix::proc_info_value>>(cpp.data);
    CHECK(pi.proc == proc_id{"job.42", 3});
    CHECK(pi.hostname == "node007");
    CHECK(pi.executable == "/usr/bin/app");
    CHECK(pi.pid == 31337);
    CHECK(pi.exit_code == -11);
    CHECK(pi.state == PMIX_PROC_STATE_TERMINATED);

    c_value env;
    env.v.type = PMIX_ENVAR;
    env.v.data.envar.envar = dup("LD_LIBRARY_PATH");
    env.v.data.envar.value = dup("/opt/lib");
    env.v.data.envar.separator = ':';
    cpp = round_trip(env.v);
    const auto& e = *std::get<std::shared_ptr<const pmix::envar_value>>(cpp.data);
    CHECK(e.name == "LD_LIBRARY_PATH");
    CHECK(e.value == "/opt/lib");
    CHECK(e.separator == ':');
  }

  TEST_CASE("PMIX_DATA_ARRAY of PMIX_INFO") {
    c_value in;
    auto* infos = make_array<pmix_info_t>(in.v, PMIX_INFO, 3);
    const uint32_t n = 7;
    REQUIRE(PMIx_Info_load(&infos[0], "key.string", "text", PMIX_STRING) == PMIX_SUCCESS);
    REQUIRE(PMIx_Info_load(&infos[1], "key.uint32", &n, PMIX_UINT32) == PMIX_SUCCESS);
    infos[1].flags |= PMIX_INFO_REQD;
    // An info whose value is itself an array of infos.
    pmix_data_array_t* nested = nullptr;
    PMIX_DATA_ARRAY_CREATE(nested, 1, PMIX_INFO);
    REQUIRE(PMIx_Info_load(&static_cast<pmix_info_t*>(nested->array)[0], "inner", "x", PMIX_STRING) ==
            PMIX_SUCCESS);
    PMIX_LOAD_KEY(infos[2].key, "key.nested");
    infos[2].value.type = PMIX_DATA_ARRAY;
    infos[2].value.data.darray = nested;

    value cpp = round_trip(in.v);
    const auto& a = array_of(cpp);
    CHECK(a.type == PMIX_INFO);
    REQUIRE(a.elements.size() == 3);
    CHECK(a.elements[0].type == PMIX_INFO);
    CHECK(a.elements[0].as_info()->key == "key.string");
    CHECK(*a.elements[0].as_info()->val.as_string() == "text");
    CHECK(a.elements[1].as_info()->flags == PMIX_INFO_REQD);
    CHECK(a.elements[2].as_info()->flags == PMIX_INFO_ARRAY_END);
    const auto& inner = array_of(a.elements[2].as_info()->val);
    CHECK(inner.elements[0].as_info()->key == "inner");

    // Flags come back too (PMIx_Value_compare ignores them).
    c_value out;
    REQUIRE(convert::to_c(cpp, out.v) == PMIX_SUCCESS);
    const auto* back = static_cast<pmix_info_t*>(out.v.data.darray->array);
    CHECK(back[1].flags == PMIX_INFO_REQD);
    CHECK(back[2].flags == PMIX_INFO_ARRAY_END);
    CHECK(std::strcmp(back[2].key, "key.nested") == 0);
  }

  TEST_CASE("PMIX_DATA_ARRAY of PMIX_STRING, PMIX_PROC, PMIX_UINT32 and PMIX_BYTE_OBJECT") {
    {
      c_value in;
      auto* s = make_array<char*>(in.v, PMIX_STRING, 3);
      s[0] = dup("alpha");
      s[1] = dup("");
      s[2] = dup("gamma");
      value cpp = round_trip(in.v);
      const auto& a = array_of(cpp);
      REQUIRE(a.elements.size() == 3);
      CHECK(a.elements[0].type == PMIX_STRING);
      CHECK(*a.elements[2].as_string() == "gamma");
    }
    {
      c_value in;
      auto* p = make_array<pmix_proc_t>(in.v, PMIX_PROC, 2);
      load_proc(p[0], "a", 0);
      load_proc(p[1], "b", PMIX_RANK_WILDCARD);
      value cpp = round_trip(in.v);
      CHECK(*array_of(cpp).elements[1].as_proc() == proc_id{"b", pmix::rank_wildcard});
    }
    {
      c_value in;
      auto* u = make_array<uint32_t>(in.v, PMIX_UINT32, 4);
      u[0] = 0;
      u[1] = 1;
      u[2] = 0xffffffff;
      u[3] = 0x12345678;
      value cpp = round_trip(in.v);
      const auto& a = array_of(cpp);
      REQUIRE(a.elements.size() == 4);
      CHECK(a.elements[2].type == PMIX_UINT32);
      CHECK(*a.elements[2].as_uint() == 0xffffffffu);
      CHECK(*a.elements[3].as_uint() == 0x12345678u);
    }
    {
      c_value in;
      auto* b = make_array<pmix_byte_object_t>(in.v, PMIX_BYTE_OBJECT, 2);
      b[0] = bytes_of(std::string{"\0\1\2", 3});
      b[1] = bytes_of("");  // size 0
      value cpp = round_trip(in.v);
      CHECK(*array_of(cpp).elements[0].as_string() == std::string{"\0\1\2", 3});
      CHECK(array_of(cpp).elements[1].as_string()->empty());
    }
  }

  TEST_CASE("PMIX_DATA_ARRAY of PMIX_VALUE holds mixed types") {
    c_value in;
    auto* v = make_array<pmix_value_t>(in.v, PMIX_VALUE, 5);
    const int64_t big = INT64_MIN;
    pmix_proc_t p;
    load_proc(p, "ns", 9);
    REQUIRE(PMIx_Value_load(&v[0], "str", PMIX_STRING) == PMIX_SUCCESS);
    REQUIRE(PMIx_Value_load(&v[1], &big, PMIX_INT64) == PMIX_SUCCESS);
    REQUIRE(PMIx_Value_load(&v[2], &p, PMIX_PROC) == PMIX_SUCCESS);
    // v[3] stays PMIX_UNDEF; v[4] is an array of doubles.
    v[4].type = PMIX_DATA_ARRAY;
    PMIX_DATA_ARRAY_CREATE(v[4].data.darray, 2, PMIX_DOUBLE);
    static_cast<double*>(v[4].data.darray->array)[0] = 0.5;
    static_cast<double*>(v[4].data.darray->array)[1] = -1e300;

    value cpp = round_trip(in.v);
    const auto& a = array_of(cpp);
    REQUIRE(a.elements.size() == 5);
    CHECK(a.type == PMIX_VALUE);
    CHECK(a.elements[0].type == PMIX_STRING);
    CHECK(*a.elements[1].as_int() == INT64_MIN);
    CHECK(*a.elements[2].as_proc() == proc_id{"ns", 9});
    CHECK_FALSE(a.elements[3].is_set());
    CHECK(std::get<double>(array_of(a.elements[4]).elements[1].data) == -1e300);
  }

  TEST_CASE("PMIX_DATA_ARRAY of struct and small scalar types") {
    {
      c_value in;
      auto* pi = make_array<pmix_proc_info_t>(in.v, PMIX_PROC_INFO, 2);
      load_proc(pi[0].proc, "j", 0);
      pi[0].hostname = dup("h0");
      pi[0].executable_name = dup("e0");
      pi[0].pid = 100;
      load_proc(pi[1].proc, "j", 1);
      pi[1].hostname = dup("h1");
      pi[1].executable_name = dup("e1");
      pi[1].exit_code = 3;
      value cpp = round_trip(in.v);
      CHECK(std::get<std::shared_ptr<const pmix::proc_info_value>>(array_of(cpp).elements[1].data)->hostname == "h1");
    }
    {
      c_value in;
      auto* e = make_array<pmix_envar_t>(in.v, PMIX_ENVAR, 2);
      e[0].envar = dup("A");
      e[0].value = dup("1");
      e[0].separator = ':';
      e[1].envar = dup("B");
      e[1].value = dup("2");
      e[1].separator = ';';
      value cpp = round_trip(in.v);
      CHECK(std::get<std::shared_ptr<const pmix::envar_value>>(array_of(cpp).elements[1].data)->separator == ';');
    }
    {
      c_value in;
      auto* t = make_array<struct timeval>(in.v, PMIX_TIMEVAL, 2);
      t[0].tv_sec = 1;
      t[0].tv_usec = 2;
      t[1].tv_sec = 3;
      t[1].tv_usec = 4;
      value cpp = round_trip(in.v);
      CHECK(std::get<pmix::timeval_value>(array_of(cpp).elements[1].data).usec == 4);
    }
    {
      c_value in;
      auto* n = make_array<pmix_nspace_t>(in.v, PMIX_PROC_NSPACE, 2);
      std::strcpy(n[0], "first");
      std::strcpy(n[1], "second");
      value cpp = round_trip(in.v);
      CHECK(*array_of(cpp).elements[1].as_string() == "second");
      CHECK(array_of(cpp).elements[1].type == PMIX_PROC_NSPACE);
    }
    {
      c_value in;
      auto* b = make_array<bool>(in.v, PMIX_BOOL, 3);
      b[1] = true;
      value cpp = round_trip(in.v);
      CHECK(*array_of(cpp).elements[0].as_int() == 0);
      CHECK(*array_of(cpp).elements[1].as_int() == 1);
    }
    {
      c_value in;
      auto* i = make_array<int8_t>(in.v, PMIX_INT8, 3);
      i[0] = -1;
      i[1] = 127;
      i[2] = -128;
      value cpp = round_trip(in.v);
      CHECK(*array_of(cpp).elements[0].as_int() == -1);
      CHECK(*array_of(cpp).elements[2].as_int() == -128);
    }
    {
      c_value in;
      auto* u = make_array<uint16_t>(in.v, PMIX_UINT16, 2);
      u[0] = 0xffff;
      u[1] = 1;
      value cpp = round_trip(in.v);
      CHECK(*array_of(cpp).elements[0].as_uint() == 0xffff);
    }
    {
      c_value in;
      auto* f = make_array<float>(in.v, PMIX_FLOAT, 2);
      f[0] = 0.25f;
      f[1] = -8.0f;
      value cpp = round_trip(in.v);
      CHECK(std::get<double>(array_of(cpp).elements[1].data) == -8.0);
    }
    {
      c_value in;
      make_array<uint64_t>(in.v, PMIX_UINT64, 0);  // empty
      value cpp = round_trip(in.v);
      CHECK(array_of(cpp).elements.empty());
      CHECK(array_of(cpp).type == PMIX_UINT64);
    }
  }

  TEST_CASE("PMIX_DATA_ARRAY of PMIX_DATA_ARRAY") {
    c_value in;
    auto* inner = make_array<pmix_data_array_t>(in.v, PMIX_DATA_ARRAY, 2);
    PMIX_DATA_ARRAY_CONSTRUCT(&inner[0], 2, PMIX_STRING);
    static_cast<char**>(inner[0].array)[0] = dup("x");
    static_cast<char**>(inner[0].array)[1] = dup("y");
    PMIX_DATA_ARRAY_CONSTRUCT(&inner[1], 1, PMIX_INFO);
    const bool yes = true;
    REQUIRE(PMIx_Info_load(&static_cast<pmix_info_t*>(inner[1].array)[0], "flag", &yes, PMIX_BOOL) ==
            PMIX_SUCCESS);
    value cpp = round_trip(in.v);
    const auto& a = array_of(cpp);
    CHECK(a.type == PMIX_DATA_ARRAY);
    REQUIRE(a.elements.size() == 2);
    CHECK(*array_of(a.elements[0]).elements[1].as_string() == "y");
    CHECK(array_of(a.elements[1]).elements[0].as_info()->key == "flag");
  }

  TEST_CASE("C++ -> C -> C++ keeps values built on the C++ side") {
    proc_id p{"cpp.ns", 4};
    const value v = value::array(array_value{
        PMIX_VALUE,
        {value::proc(p), value::bytes(PMIX_PROC_NSPACE, "ns2"),
         value::array(array_value{PMIX_INFO,
                                  {value{PMIX_INFO, std::make_shared<const info>(
                                                        info{"k", value::integer(PMIX_INT16, -3), 0})}}}),
         value{PMIX_TIMEVAL, pmix::timeval_value{5, 6}},
         value{PMIX_ENVAR, std::make_shared<const pmix::envar_value>(pmix::envar_value{"N", "V", ','})}}});
    c_value c;
    REQUIRE(convert::to_c(v, c.v) == PMIX_SUCCESS);
    value back;
    REQUIRE(convert::from_c(c.v, back) == PMIX_SUCCESS);
    const auto& a = array_of(back);
    REQUIRE(a.elements.size() == 5);
    CHECK(*a.elements[0].as_proc() == p);
    CHECK(*a.elements[1].as_string() == "ns2");
    const auto* i = array_of(a.elements[2]).elements[0].as_info();
    REQUIRE(i != nullptr);
    CHECK(i->key == "k");
    CHECK(i->val.type == PMIX_INT16);
    CHECK(*i->val.as_int() == -3);
    CHECK(std::get<pmix::timeval_value>(a.elements[3].data).sec == 5);
    CHECK(std::get<std::shared_ptr<const pmix::envar_value>>(a.elements[4].data)->value == "V");
  }

  TEST_CASE("info lists: from_c copies keys, flags and values; to_c output frees with PMIX_INFO_FREE") {
    pmix_info_t* in = nullptr;
    PMIX_INFO_CREATE(in, 3);
    const uint32_t n = 42;
    REQUIRE(PMIx_Info_load(&in[0], PMIX_TIMEOUT, &n, PMIX_UINT32) == PMIX_SUCCESS);
    REQUIRE(PMIx_Info_load(&in[1], PMIX_COLLECT_DATA, nullptr, PMIX_BOOL) == PMIX_SUCCESS);
    PMIX_INFO_REQUIRED(&in[1]);
    REQUIRE(PMIx_Info_load(&in[2], "my.key", "val", PMIX_STRING) == PMIX_SUCCESS);
    PMIX_INFO_SET_END(&in[2]);  // PMIx_Info_load cleared it

    info_list list{info{"stale", value{}, 0}};
    REQUIRE(convert::from_c(in, 3, list) == PMIX_SUCCESS);
    REQUIRE(list.size() == 3);
    CHECK(list[0].key == PMIX_TIMEOUT);
    CHECK(*list[0].val.as_uint() == 42);
    CHECK(list[1].key == PMIX_COLLECT_DATA);
    CHECK(list[1].val.truthy());
    CHECK((list[1].flags & PMIX_INFO_REQD) != 0);
    CHECK(list[2].flags == PMIX_INFO_ARRAY_END);

    pmix_info_t* out = nullptr;
    PMIX_INFO_CREATE(out, 3);
    for (size_t k = 0; k < 3; ++k) {
      CAPTURE(k);
      REQUIRE(convert::to_c(list[k], out[k]) == PMIX_SUCCESS);
      CHECK(std::strcmp(out[k].key, in[k].key) == 0);
      CHECK(out[k].flags == in[k].flags);
      CHECK(PMIx_Value_compare(&out[k].value, &in[k].value) == PMIX_EQUAL);
    }
    PMIX_INFO_FREE(out, 3);
    PMIX_INFO_FREE(in, 3);
    CHECK(out == nullptr);

    // Nothing to copy.
    REQUIRE(convert::from_c(static_cast<const pmix_info_t*>(nullptr), 0, list) == PMIX_SUCCESS);
    CHECK(list.empty());
  }

  TEST_CASE("a persistent info's copy owns its value and is not flagged persistent") {
    // A persistent info only borrows its value; what to_c writes is freshly
    // allocated, so flagging it persistent would make PMIX_INFO_FREE leak it.
    pmix_info_t shared;
    PMIX_INFO_CONSTRUCT(&shared);
    REQUIRE(PMIx_Info_load(&shared, "borrowed", "owned by the caller", PMIX_STRING) == PMIX_SUCCESS);
    shared.flags |= PMIX_INFO_PERSISTENT | PMIX_INFO_REQD;
    info_list list;
    REQUIRE(convert::from_c(&shared, 1, list) == PMIX_SUCCESS);
    CHECK(*list[0].val.as_string() == "owned by the caller");

    pmix_info_t* out = nullptr;
    PMIX_INFO_CREATE(out, 1);
    REQUIRE(convert::to_c(list[0], out[0]) == PMIX_SUCCESS);
    CHECK_FALSE(PMIX_INFO_IS_PERSISTENT(&out[0]));
    CHECK(PMIX_INFO_IS_REQUIRED(&out[0]));
    CHECK(out[0].value.data.string != shared.value.data.string);
    PMIX_INFO_FREE(out, 1);  // frees the copy (valgrind: no leak)
    PMIx_Value_destruct(&shared.value);

    // The same inside a data array: PMIx_Value_destruct must release it.
    info persistent{"p", value::string("inside"), PMIX_INFO_PERSISTENT};
    const value arr = value::array(
        array_value{PMIX_INFO, {value{PMIX_INFO, std::make_shared<const info>(persistent)}}});
    c_value c;
    REQUIRE(convert::to_c(arr, c.v) == PMIX_SUCCESS);
    CHECK_FALSE(PMIX_INFO_IS_PERSISTENT(&static_cast<pmix_info_t*>(c.v.data.darray->array)[0]));
  }

  TEST_CASE("proc lists") {
    pmix_proc_t procs[3];
    load_proc(procs[0], "a", 0);
    load_proc(procs[1], "a", PMIX_RANK_WILDCARD);
    load_proc(procs[2], "b", PMIX_RANK_UNDEF);
    std::vector<proc_id> out{proc_id{"stale", 1}};
    REQUIRE(convert::from_c(procs, 3, out) == PMIX_SUCCESS);
    REQUIRE(out.size() == 3);
    CHECK(out[0] == proc_id{"a", 0});
    CHECK(out[1] == proc_id{"a", pmix::rank_wildcard});
    CHECK(out[2] == proc_id{"b", pmix::rank_undef});
    REQUIRE(convert::from_c(static_cast<const pmix_proc_t*>(nullptr), 0, out) == PMIX_SUCCESS);
    CHECK(out.empty());

    pmix_proc_t c;
    std::memset(&c, 'z', sizeof c);  // garbage the conversion must clear
    convert::to_c(proc_id{"short", 5}, c);
    CHECK(std::strcmp(c.nspace, "short") == 0);
    CHECK(c.nspace[PMIX_MAX_NSLEN] == '\0');
    CHECK(c.nspace[6] == '\0');  // zero padded
    CHECK(c.rank == 5);
  }

  TEST_CASE("NULL data pointers give PMIX_ERR_BAD_PARAM") {
    value out;
    pmix_value_t v;
    std::memset(&v, 0, sizeof v);

    v.type = PMIX_PROC;
    CHECK(convert::from_c(v, out) == PMIX_ERR_BAD_PARAM);
    v.type = PMIX_PROC_INFO;
    CHECK(convert::from_c(v, out) == PMIX_ERR_BAD_PARAM);
    v.type = PMIX_DATA_ARRAY;
    CHECK(convert::from_c(v, out) == PMIX_ERR_BAD_PARAM);
    v.type = PMIX_PROC_NSPACE;
    CHECK(convert::from_c(v, out) == PMIX_ERR_BAD_PARAM);
    v.type = PMIX_BYTE_OBJECT;
    v.data.bo.size = 4;  // bytes NULL
    CHECK(convert::from_c(v, out) == PMIX_ERR_BAD_PARAM);

    // A data array that claims elements but has no storage.
    pmix_data_array_t empty{PMIX_UINT32, 3, nullptr};
    std::memset(&v, 0, sizeof v);
    v.type = PMIX_DATA_ARRAY;
    v.data.darray = &empty;
    CHECK(convert::from_c(v, out) == PMIX_ERR_BAD_PARAM);

    // A NULL pointer deep inside an array of values.
    pmix_value_t elems[2];
    std::memset(elems, 0, sizeof elems);
    elems[0].type = PMIX_BOOL;
    elems[1].type = PMIX_PROC;  // data.proc NULL
    pmix_data_array_t holder{PMIX_VALUE, 2, elems};
    v.data.darray = &holder;
    CHECK(convert::from_c(v, out) == PMIX_ERR_BAD_PARAM);

    // Lists given as NULL with a count.
    info_list infos;
    CHECK(convert::from_c(static_cast<const pmix_info_t*>(nullptr), 2, infos) == PMIX_ERR_BAD_PARAM);
    std::vector<proc_id> procs;
    CHECK(convert::from_c(static_cast<const pmix_proc_t*>(nullptr), 1, procs) == PMIX_ERR_BAD_PARAM);
  }

  TEST_CASE("unsupported types give PMIX_ERR_NOT_SUPPORTED") {
    value out;
    pmix_value_t v;
    std::memset(&v, 0, sizeof v);
    pmix_topology_t topo{};
    v.type = PMIX_TOPO;
    v.data.topo = &topo;
    CHECK(convert::from_c(v, out) == PMIX_ERR_NOT_SUPPORTED);

    pmix_query_t query{};
    v.type = PMIX_QUERY;
    v.data.ptr = &query;
    CHECK(convert::from_c(v, out) == PMIX_ERR_NOT_SUPPORTED);

    // Arrays of them.
    pmix_query_t queries[2] = {};
    pmix_data_array_t qa{PMIX_QUERY, 2, queries};
    v.type = PMIX_DATA_ARRAY;
    v.data.darray = &qa;
    CHECK(convert::from_c(v, out) == PMIX_ERR_NOT_SUPPORTED);
    pmix_topology_t topos[1] = {};
    pmix_data_array_t ta{PMIX_TOPO, 1, topos};
    v.data.darray = &ta;
    CHECK(convert::from_c(v, out) == PMIX_ERR_NOT_SUPPORTED);

    // An info list with one unsupported entry.
    pmix_info_t infos[2];
    std::memset(infos, 0, sizeof infos);
    PMIX_LOAD_KEY(infos[0].key, "fine");
    PMIX_LOAD_KEY(infos[1].key, "topology");
    infos[1].value.type = PMIX_TOPO;
    infos[1].value.data.topo = &topo;
    info_list list;
    CHECK(convert::from_c(infos, 2, list) == PMIX_ERR_NOT_SUPPORTED);

    // C++ values the C side cannot hold.
    c_value c;
    CHECK(convert::to_c(value{PMIX_TOPO, std::string{"x"}}, c.v) == PMIX_ERR_NOT_SUPPORTED);
    PMIx_Value_destruct(&c.v);
    CHECK(convert::to_c(value{PMIX_INFO, std::make_shared<const info>(info{"k", value{}, 0})}, c.v) ==
          PMIX_ERR_NOT_SUPPORTED);
  }

  TEST_CASE("a failed C++ -> C conversion inside an array releases what it built") {
    // An array of arrays whose second inner array has an element type the C
    // side cannot hold: the caller destructs the partial result and nothing
    // may be left behind (valgrind checks the inner allocation).
    const value v = value::array(array_value{
        PMIX_DATA_ARRAY,
        {value::array(array_value{PMIX_STRING, {value::string("kept")}}),
         value::array(array_value{PMIX_TOPO, {}})}});
    c_value c;
    CHECK(convert::to_c(v, c.v) == PMIX_ERR_NOT_SUPPORTED);

    const value in_values = value::array(array_value{
        PMIX_VALUE, {value::string("a"), value::array(array_value{PMIX_QUERY, {}})}});
    c_value c2;
    CHECK(convert::to_c(in_values, c2.v) == PMIX_ERR_NOT_SUPPORTED);
  }

  TEST_CASE("nesting deeper than the limit is refused") {
    // depth data arrays, each holding the next one; the innermost holds a uint8.
    auto build = [](pmix_value_t& top, int depth) {
      std::memset(&top, 0, sizeof top);
      top.type = PMIX_DATA_ARRAY;
      PMIX_DATA_ARRAY_CREATE(top.data.darray, 1, PMIX_VALUE);
      pmix_value_t* cur = static_cast<pmix_value_t*>(top.data.darray->array);
      for (int i = 1; i < depth; ++i) {
        cur->type = PMIX_DATA_ARRAY;
        PMIX_DATA_ARRAY_CREATE(cur->data.darray, 1, PMIX_VALUE);
        cur = static_cast<pmix_value_t*>(cur->data.darray->array);
      }
      cur->type = PMIX_UINT8;
      cur->data.uint8 = 9;
    };
    c_value shallow;
    build(shallow.v, 10);
    value cpp = round_trip(shallow.v);
    const value* leaf = &cpp;
    for (int i = 0; i < 10; ++i) leaf = &array_of(*leaf).elements[0];
    CHECK(*leaf->as_uint() == 9);

    c_value deep;
    build(deep.v, 40);
    value out;
    CHECK(convert::from_c(deep.v, out) == PMIX_ERR_BAD_PARAM);
  }

  TEST_CASE("keys and namespaces without a NUL terminator are bounded by their arrays") {
    // The byte right after each array is non-zero, so an unbounded read would
    // pick it up.
    pmix_info_t i;
    std::memset(&i, 0, sizeof i);
    std::memset(i.key, 'k', sizeof i.key);
    i.flags = 0x41414141;
    info_list list;
    REQUIRE(convert::from_c(&i, 1, list) == PMIX_SUCCESS);
    CHECK(list[0].key == std::string(sizeof(pmix_key_t), 'k'));

    pmix_proc_t p;
    std::memset(p.nspace, 'n', sizeof p.nspace);
    p.rank = 0x42424242;
    const proc_id id = convert::proc(p);
    CHECK(id.nspace == std::string(sizeof(pmix_nspace_t), 'n'));
    CHECK(id.rank == 0x42424242u);

    // Heap blocks of exactly the array size (valgrind flags any overread).
    auto* key = static_cast<char*>(std::malloc(sizeof(pmix_key_t)));
    std::memset(key, 'x', sizeof(pmix_key_t));
    CHECK(convert::key(key).size() == sizeof(pmix_key_t));
    std::free(key);
    auto* ns = static_cast<char*>(std::malloc(sizeof(pmix_nspace_t)));
    std::memset(ns, 'y', sizeof(pmix_nspace_t));
    CHECK(convert::nspace(ns).size() == sizeof(pmix_nspace_t));
    std::free(ns);

    // A PMIX_PROC_NSPACE value without a NUL.
    pmix_nspace_t raw;
    std::memset(raw, 'q', sizeof raw);
    pmix_value_t v;
    std::memset(&v, 0, sizeof v);
    v.type = PMIX_PROC_NSPACE;
    v.data.nspace = &raw;
    value out;
    REQUIRE(convert::from_c(v, out) == PMIX_SUCCESS);
    CHECK(out.as_string()->size() == sizeof(pmix_nspace_t));

    // Short strings stop at their NUL; NULL is empty.
    CHECK(convert::key("pmix.rank") == "pmix.rank");
    CHECK(convert::nspace("ns") == "ns");
    CHECK(convert::key(nullptr).empty());
    CHECK(convert::nspace(nullptr).empty());

    // Going back to C, too-long keys and namespaces are cut to fit with a NUL.
    pmix_info_t ci;
    std::memset(&ci, 0, sizeof ci);
    REQUIRE(convert::to_c(info{std::string(1000, 'K'), value::boolean(true), 0}, ci) == PMIX_SUCCESS);
    CHECK(std::strlen(ci.key) == PMIX_MAX_KEYLEN);
    PMIx_Value_destruct(&ci.value);
    pmix_proc_t cp;
    convert::to_c(proc_id{std::string(1000, 'N'), 1}, cp);
    CHECK(std::strlen(cp.nspace) == PMIX_MAX_NSLEN);
    c_value nsv;
    REQUIRE(convert::to_c(value::bytes(PMIX_PROC_NSPACE, std::string(1000, 'P')), nsv.v) == PMIX_SUCCESS);
    CHECK(std::strlen(*nsv.v.data.nspace) == PMIX_MAX_NSLEN);
  }

  TEST_CASE("info_array owns deep copies and frees them") {
    info_list list{info{"a", value::string("first"), PMIX_INFO_REQD},
                   info{"b", value::array(array_value{PMIX_STRING, {value::string("x"), value::string("y")}}), 0},
                   info{"c", value::proc(proc_id{"ns", 2}), 0}};
    convert::info_array arr{list};
    REQUIRE(arr.size() == 3);
    REQUIRE(arr.data() != nullptr);
    // Changing the C++ list afterwards does not reach the C copy.
    list[0].val = value::string("changed");
    list.clear();
    pmix_info_t* d = arr.data();
    CHECK(std::strcmp(d[0].key, "a") == 0);
    CHECK(d[0].flags == PMIX_INFO_REQD);
    CHECK(std::strcmp(d[0].value.data.string, "first") == 0);
    CHECK(d[1].value.type == PMIX_DATA_ARRAY);
    REQUIRE(d[1].value.data.darray->size == 2);
    CHECK(std::strcmp(static_cast<char**>(d[1].value.data.darray->array)[1], "y") == 0);
    CHECK(std::strcmp(d[2].value.data.proc->nspace, "ns") == 0);
    CHECK(d[2].value.data.proc->rank == 2);

    convert::info_array none{info_list{}};
    CHECK(none.size() == 0);
    CHECK(none.data() == nullptr);
  }

  TEST_CASE("proc_array owns its copy") {
    std::vector<proc_id> procs{{"x", 0}, {"y", pmix::rank_wildcard}};
    convert::proc_array arr{procs};
    procs[0].nspace = "changed";
    REQUIRE(arr.size() == 2);
    CHECK(std::strcmp(arr.data()[0].nspace, "x") == 0);
    CHECK(arr.data()[0].rank == 0);
    CHECK(std::strcmp(arr.data()[1].nspace, "y") == 0);
    CHECK(arr.data()[1].rank == PMIX_RANK_WILDCARD);

    convert::proc_array none{std::vector<proc_id>{}};
    CHECK(none.size() == 0);
    CHECK(none.data() == nullptr);
  }
}
