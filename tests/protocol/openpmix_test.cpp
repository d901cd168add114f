// OpenPMIx's format (protocol/openpmix.hpp) against bytes Debian's OpenPMIx
// 4.2.2 (libpmix2) wrote: a client's requests and its server's replies,
// captured on the socket between the two (NON_DESC and FULLY_DESC buffers).
// The reader must read them; the writer must write the same bytes back.
#include <doctest/doctest.h>
#include <pmix_common.h>

#include <string>
#include <utility>
#include <vector>

#include "protocol/openpmix.hpp"

using namespace pmix;
using namespace pmix::openpmix;

namespace {

std::string hex(const std::string& text) {
  std::string out;
  for (std::size_t k = 0; k + 1 < text.size(); k += 2) out.push_back(static_cast<char>(std::stoi(text.substr(k, 2), nullptr, 16)));
  return out;
}

// The server's answer to PMIX_REQ_CMD (the job data at init) for rank 0 of
// "testns" (2 ranks on host "vm"), NON_DESC and FULLY_DESC.
const std::string job_reply_non_desc = hex(
    "020e746573746e7300021c706d69782e6a6f622e73697a65000e020216706d69782e6e6c697374000306766d000218706d69782e617070"
    "6e756d000e000220706d69782e6266726f70732e6d6f64000312342e322e3272633200021a706d69782e73736e2e617272002718022070"
    "6d69782e73657373696f6e2e696400000effffffff0f1e706d69782e756e69762e73697a6500020e02021c706d69782e6e6f64652e6172"
    "720027180316706d69782e686e616d6500000306766d0020706d69782e6c6f63616c2e73697a6500000e0218706d69782e6c7065657273"
    "00020308302c31000216706d69782e70626c6f62001b3002000216706d69782e6c72616e6b000d000216706d69782e6e72616e6b000d00"
    "0218706d69782e6170706e756d000e000216706d69782e70626c6f62001b3002010216706d69782e6c72616e6b000d010216706d69782e"
    "6e72616e6b000d010218706d69782e6170706e756d000e00");
const std::string job_reply_fully_desc = hex(
    "0902030e746573746e730009021c1c706d69782e6a6f622e73697a65000e0209021c16706d69782e6e6c697374000306766d0009021c18"
    "706d69782e6170706e756d000e0009021c20706d69782e6266726f70732e6d6f64000312342e322e327263320009021c1a706d69782e73"
    "736e2e6172720027180220706d69782e73657373696f6e2e696400000effffffff0f1e706d69782e756e69762e73697a6500020e020902"
    "1c1c706d69782e6e6f64652e6172720027180316706d69782e686e616d6500000306766d0020706d69782e6c6f63616c2e73697a650000"
    "0e0218706d69782e6c706565727300020308302c310009021c16706d69782e70626c6f62001b380902280009021c16706d69782e6c7261"
    "6e6b000d0009021c16706d69782e6e72616e6b000d0009021c18706d69782e6170706e756d000e0009021c16706d69782e70626c6f6200"
    "1b380902280109021c16706d69782e6c72616e6b000d0109021c16706d69782e6e72616e6b000d0109021c18706d69782e6170706e756d"
    "000e00");

struct kv {
  std::string key;
  value val;
};

std::vector<kv> read_job(const std::string& bytes, buffer_type type, std::string& nspace) {
  reader r{bytes, type};
  REQUIRE(r.string(nspace));
  std::vector<kv> out;
  while (!r.at_end()) {
    kv one;
    REQUIRE_MESSAGE(r.kval(one.key, one.val), r.error());
    out.push_back(std::move(one));
  }
  return out;
}

void check_job(const std::string& bytes, buffer_type type) {
  std::string nspace;
  const auto kvs = read_job(bytes, type, nspace);
  CHECK(nspace == "testns");
  REQUIRE(kvs.size() == 8);
  CHECK(kvs[0].key == PMIX_JOB_SIZE);
  CHECK(kvs[0].val.type == PMIX_UINT32);
  CHECK(kvs[0].val.as_uint() == 2u);
  CHECK(kvs[1].key == PMIX_NODE_LIST);
  CHECK(*kvs[1].val.as_string() == "vm");
  CHECK(kvs[3].key == "pmix.bfrops.mod");
  CHECK(*kvs[3].val.as_string() == "4.2.2rc2");
  // The session array: its id is PMIX_RANK_UNDEF's value as a UINT32.
  const auto* session = kvs[4].val.as_array();
  REQUIRE(session != nullptr);
  REQUIRE(session->type == PMIX_INFO);
  REQUIRE(session->elements.size() == 2);
  CHECK(session->elements[0].as_info()->key == PMIX_SESSION_ID);
  CHECK(session->elements[0].as_info()->val.as_uint() == 0xffffffffu);
  const auto* node = kvs[5].val.as_array();
  REQUIRE(node != nullptr);
  REQUIRE(node->elements.size() == 3);
  CHECK(node->elements[0].as_info()->key == PMIX_HOSTNAME);
  CHECK(node->elements[2].as_info()->key == PMIX_LOCAL_PEERS);
  CHECK(node->elements[2].as_info()->flags == 2u);
  CHECK(*node->elements[2].as_info()->val.as_string() == "0,1");
  // Each rank's data: a buffer of its own, the rank then key/values.
  for (int r = 0; r < 2; ++r) {
    const auto& blob = kvs[6 + r];
    CHECK(blob.key == "pmix.pblob");
    REQUIRE(blob.val.type == PMIX_BYTE_OBJECT);
    reader inner{*blob.val.as_string(), type};
    rank_t rank = 99;
    REQUIRE(inner.rank(rank));
    CHECK(rank == static_cast<rank_t>(r));
    std::string key;
    value v;
    REQUIRE(inner.kval(key, v));
    CHECK(key == PMIX_LOCAL_RANK);
    CHECK(v.type == PMIX_UINT16);
    CHECK(v.as_uint() == static_cast<std::uint64_t>(r));
    REQUIRE(inner.kval(key, v));
    REQUIRE(inner.kval(key, v));
    CHECK(key == PMIX_APPNUM);
    CHECK(inner.at_end());
  }
  // Written back, byte for byte.
  writer w{type};
  w.string(nspace);
  for (const auto& one : kvs) {
    if (one.key != "pmix.pblob") {
      w.kval(one.key, one.val);
      continue;
    }
    reader inner{*one.val.as_string(), type};
    rank_t rank;
    REQUIRE(inner.rank(rank));
    writer blob{type};
    blob.rank(rank);
    std::string key;
    value v;
    while (inner.kval(key, v)) blob.kval(key, v);
    w.kval(one.key, value::bytes(PMIX_BYTE_OBJECT, blob.take()));
  }
  CHECK(w.bytes() == bytes);
}

}  // namespace

TEST_SUITE("OpenPMIx's format (bfrops v41)") {
  TEST_CASE("varints: seven bits a byte, zigzag for signed types, a ninth byte for the top bits") {
    std::string out;
    put_signed(out, 1);
    CHECK(out == hex("02"));
    out.clear();
    put_signed(out, -46);  // PMIX_ERR_NOT_FOUND
    CHECK(out == hex("5b"));
    out.clear();
    put_unsigned(out, 0xfffffffeu);  // PMIX_RANK_WILDCARD
    CHECK(out == hex("feffffff0f"));
    for (std::uint64_t v : {0ull, 1ull, 127ull, 128ull, 0xffffffffull, (1ull << 56) - 1, 1ull << 56, ~0ull}) {
      std::string b;
      put_unsigned(b, v);
      CHECK(b.size() <= 9);
      std::size_t pos = 0;
      std::uint64_t back = 0;
      REQUIRE(get_unsigned(b, pos, back));
      CHECK(back == v);
      CHECK(pos == b.size());
    }
    for (std::int64_t v : {0ll, -1ll, 1ll, -2147483648ll, 9223372036854775807ll, -9223372036854775807ll - 1}) {
      std::string b;
      put_signed(b, v);
      std::size_t pos = 0;
      std::int64_t back = 0;
      REQUIRE(get_signed(b, pos, back));
      CHECK(back == v);
    }
  }

  TEST_CASE("a client's requests as OpenPMIx 4.2.2 wrote them: init, commit, fence, get, finalize") {
    // PMIX_REQ_CMD and PMIX_FINALIZE_CMD.
    std::uint8_t cmd = 99;
    CHECK(reader{hex("0200")}.command(cmd));
    CHECK(cmd == 0);
    CHECK(reader{hex("09022205"), buffer_type::fully_desc}.command(cmd));
    CHECK(cmd == 5);
    CHECK(writer{}.command(0).bytes() == hex("0200"));
    CHECK(writer{buffer_type::fully_desc}.command(0).bytes() == hex("09022200"));
    // A fence: the command, one proc ({testns, *}), one directive
    // (PMIX_COLLECT_DATA true).
    for (auto [bytes, type] : {std::pair{hex("02030201020e746573746e7300feffffff0f0201021a706d69782e636f6c6c65637400000101"),
                                         buffer_type::non_desc},
                               std::pair{hex("09022203090204010902160e746573746e7300feffffff0f090204010902181a706d69782e63"
                                             "6f6c6c65637400000101"),
                                         buffer_type::fully_desc}}) {
      reader r{bytes, type};
      std::uint64_t n = 0;
      std::vector<proc_id> procs;
      info_list info;
      REQUIRE(r.command(cmd));
      CHECK(cmd == 3);
      REQUIRE(r.size(n));
      CHECK(n == 1);
      REQUIRE(r.procs(procs));
      REQUIRE(procs.size() == 1);
      CHECK(procs[0].nspace == "testns");
      CHECK(procs[0].rank == rank_wildcard);
      REQUIRE(r.size(n));
      REQUIRE(r.infos(info));
      REQUIRE(info.size() == 1);
      CHECK(info[0].key == PMIX_COLLECT_DATA);
      CHECK(info[0].val.type == PMIX_BOOL);
      CHECK(info[0].val.truthy());
      CHECK(r.at_end());
      writer w{type};
      w.command(3).size(1);
      // procs: one pack of one PROC, written as the reader read it.
      w.proc(procs[0]).size(1).infos(info);
      CHECK(w.bytes() == bytes);
    }
    // A get: nspace, rank, no directives, key.
    const auto get_bytes = hex("0204020e746573746e730002010200020c6d796b657900");  // the reader only views it
    reader get{get_bytes};
    std::string ns, key;
    rank_t rank = 0;
    std::uint64_t ninfo = 9;
    REQUIRE(get.command(cmd));
    REQUIRE(get.string(ns));
    REQUIRE(get.rank(rank));
    REQUIRE(get.size(ninfo));
    REQUIRE(get.string(key));
    CHECK(ns == "testns");
    CHECK(rank == 1);
    CHECK(ninfo == 0);
    CHECK(key == "mykey");
  }

  TEST_CASE("a commit as OpenPMIx 4.2.2 wrote it: (scope, nested buffer of key/values) pairs") {
    for (auto [bytes, type] :
         {std::pair{hex("02020201020117020c6d796b657900031a68656c6c6f2d66726f6d2d30000202020117020c6d796b65790003"
                        "1a68656c6c6f2d66726f6d2d3000"),
                    buffer_type::non_desc},
          std::pair{hex("090222020902200109021a021909021c0c6d796b657900031a68656c6c6f2d66726f6d2d31000902200209021a"
                        "021909021c0c6d796b657900031a68656c6c6f2d66726f6d2d3100"),
                    buffer_type::fully_desc}}) {
      reader r{bytes, type};
      std::uint8_t cmd = 0;
      REQUIRE(r.command(cmd));
      CHECK(cmd == 2);
      writer w{type};
      w.command(2);
      for (std::uint8_t want : {PMIX_LOCAL, PMIX_REMOTE}) {
        std::uint8_t scope = 0;
        std::string nested;
        REQUIRE_MESSAGE(r.scope(scope), r.error());
        CHECK(scope == want);
        REQUIRE_MESSAGE(r.buffer(nested), r.error());
        reader kvs{nested, type};
        std::string key;
        value v;
        REQUIRE(kvs.kval(key, v));
        CHECK(key == "mykey");
        CHECK(v.as_string()->rfind("hello-from-", 0) == 0);
        CHECK(kvs.at_end());
        w.scope(scope).buffer(nested);
      }
      CHECK(r.at_end());
      CHECK(w.bytes() == bytes);
    }
  }

  TEST_CASE("the server's job data at init (gds hash), read and written back byte for byte") {
    check_job(job_reply_non_desc, buffer_type::non_desc);
    check_job(job_reply_fully_desc, buffer_type::fully_desc);
  }

  TEST_CASE("a get's reply: a status, then a byte object holding the proc and its key/values") {
    const auto bytes = hex("02000221020e746573746e730001020c6d796b657900031a68656c6c6f2d66726f6d2d3100");
    reader r{bytes};
    std::int32_t status = 1;
    std::string blob;
    REQUIRE(r.status(status));
    CHECK(status == PMIX_SUCCESS);
    REQUIRE(r.byte_object(blob));
    CHECK(r.at_end());
    reader inner{blob};
    std::vector<proc_id> procs;
    REQUIRE(inner.procs(procs));
    REQUIRE(procs.size() == 1);
    CHECK(procs[0].rank == 1);
    std::string key;
    value v;
    REQUIRE(inner.kval(key, v));
    CHECK(key == "mykey");
    CHECK(*v.as_string() == "hello-from-1");
    writer in{};
    in.proc(procs[0]).kval(key, v);
    CHECK(writer{}.status(PMIX_SUCCESS).byte_object(in.bytes()).bytes() == bytes);
    CHECK(writer{buffer_type::fully_desc}.status(PMIX_SUCCESS).bytes() == hex("09021400"));
  }

  TEST_CASE("PMIx_Spawn's applications as OpenPMIx 4.2.2 packs them, read and written back byte for byte") {
    // {cmd "/bin/x", argv {"/bin/x", "child"}, env {"A=1"}, no cwd,
    // maxprocs 2, one info pmix.setenv = "x"}, packed by Debian's
    // PMIx_Data_pack in each buffer type.
    for (auto [type, bytes] : {std::pair{buffer_type::non_desc, hex("02")},
                               std::pair{buffer_type::fully_desc, hex("090217")}}) {
      bytes += hex("0e2f62696e2f7800040e2f62696e2f78000c6368696c64000208413d310000040118706d69782e736574656e76000003047800");
      reader r{bytes, type};
      std::vector<app> apps;
      REQUIRE_MESSAGE(r.apps(apps), r.error());
      CHECK(r.at_end());
      REQUIRE(apps.size() == 1);
      CHECK(apps[0].cmd == "/bin/x");
      CHECK(apps[0].argv == std::vector<std::string>{"/bin/x", "child"});
      CHECK(apps[0].env == std::vector<std::string>{"A=1"});
      CHECK(apps[0].cwd.empty());
      CHECK(apps[0].maxprocs == 2);
      REQUIRE(apps[0].info.size() == 1);
      CHECK(apps[0].info[0].key == "pmix.setenv");
      REQUIRE(apps[0].info[0].val.as_string() != nullptr);
      CHECK(*apps[0].info[0].val.as_string() == "x");
      writer w{type};
      w.apps(apps);
      CHECK(w.bytes() == bytes);
      // Cut anywhere, it is refused.
      for (std::size_t cut = 0; cut < bytes.size(); ++cut) {
        reader partial{std::string_view{bytes}.substr(0, cut), type};
        CHECK_FALSE(partial.apps(apps));
      }
    }
  }

  TEST_CASE("a list of procs is one pack: the count, then each namespace and rank") {
    const std::vector<proc_id> two{{"a", 1}, {"bb", rank_wildcard}};
    for (auto type : {buffer_type::non_desc, buffer_type::fully_desc}) {
      writer w{type};
      w.procs(two);
      // NON_DESC: count 2, "a", 1, "bb", 0xfffffffe.
      if (type == buffer_type::non_desc) CHECK(w.bytes() == hex("040461000106626200feffffff0f"));
      reader r{w.bytes(), type};
      std::vector<proc_id> back;
      REQUIRE_MESSAGE(r.procs(back), r.error());
      CHECK(r.at_end());
      CHECK(back == two);
    }
  }

  TEST_CASE("every type this library keeps goes there and back") {
    array_value procs{PMIX_PROC, {value::proc({"a", 1}), value::proc({"b", rank_wildcard})}};
    auto infos = std::make_shared<pmix::info>(pmix::info{"k", value::integer(PMIX_INT64, -5), 1});
    array_value info_array{PMIX_INFO, {value{PMIX_INFO, std::shared_ptr<const pmix::info>(infos)}}};
    const std::vector<value> values{
        value::boolean(true), value::unsigned_(PMIX_BYTE, 200), value::integer(PMIX_INT8, -3),
        value::integer(PMIX_INT16, -300), value::integer(PMIX_INT32, -70000), value::integer(PMIX_INT64, -5000000000),
        value::integer(PMIX_INT, 7), value::unsigned_(PMIX_UINT, 0xffffffffu), value::unsigned_(PMIX_UINT8, 255),
        value::unsigned_(PMIX_UINT16, 65535), value::unsigned_(PMIX_UINT32, 4000000000u),
        value::unsigned_(PMIX_UINT64, ~0ull), value::unsigned_(PMIX_SIZE, 1ull << 40), value::integer(PMIX_PID, 4242),
        value::integer(PMIX_STATUS, PMIX_ERR_NOT_FOUND), value::string("text"), value::string(""),
        value{PMIX_STRING, {}} /* NULL */,
        value::bytes(PMIX_BYTE_OBJECT, std::string("\0\1\2", 3)), value::proc({"ns", 3}),
        value::unsigned_(PMIX_PROC_RANK, rank_wildcard), value::real(PMIX_DOUBLE, 2.5),
        value::integer(PMIX_TIME, 1700000000), value{PMIX_TIMEVAL, timeval_value{5, 6}},
        value::unsigned_(PMIX_SCOPE, PMIX_REMOTE), value::unsigned_(PMIX_DATA_RANGE, PMIX_RANGE_SESSION),
        value::unsigned_(PMIX_INFO_DIRECTIVES, PMIX_INFO_REQD), value::unsigned_(PMIX_DATA_TYPE, PMIX_STRING),
        value{PMIX_ENVAR, std::shared_ptr<const envar_value>(std::make_shared<envar_value>(envar_value{"PATH", "/bin", ':'}))},
        value::array(procs), value::array(info_array), value::bytes(PMIX_REGEX, "pmix[vm]"),
        value::bytes(PMIX_REGEX, "other"), value::unsigned_(PMIX_DEVTYPE, 64), value{}};
    for (auto type : {buffer_type::non_desc, buffer_type::fully_desc}) {
      writer w{type};
      for (const auto& v : values) REQUIRE_MESSAGE(w.try_kval("key", v), v.type);
      reader r{w.bytes(), type};
      for (const auto& want : values) {
        CAPTURE(want.type);
        std::string key;
        value got;
        REQUIRE_MESSAGE(r.kval(key, got), r.error());
        CHECK(got.type == want.type);
        CHECK((got.as_string() == nullptr) == (want.as_string() == nullptr));
        writer again{type}, first{type};
        again.kval(key, got);
        first.kval(key, want);
        CHECK(again.bytes() == first.bytes());
      }
      CHECK(r.at_end());
    }
  }

  TEST_CASE("malformed input is refused, never read past its end") {
    std::string key;
    value v;
    // A string whose length runs past the end, one without its NUL, a
    // byte object longer than the buffer, an array longer than the buffer,
    // a varint that does not end, an unknown type.
    for (const auto& bytes : {hex("0232706d6978"), hex("020c6d796b657901"), hex("020c6d796b6579001b30"),
                              hex("020c6d796b657900270e7f"), hex("02ffffffff"), hex("020c6d796b65790063")}) {
      reader r{bytes};
      CHECK_FALSE(r.kval(key, v));
      CHECK_FALSE(r.error().empty());
    }
    // A FULLY_DESC pack of another type than asked.
    const auto status_bytes = hex("09021400");
    reader wrong{status_bytes, buffer_type::fully_desc};
    std::uint8_t cmd;
    CHECK_FALSE(wrong.command(cmd));
    CHECK(wrong.error().find("expected") != std::string::npos);
  }
}
