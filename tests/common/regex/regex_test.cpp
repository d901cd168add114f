#include "common/regex/regex.hpp"

#include <doctest/doctest.h>

#include <cstdint>
#include <optional>
#include <random>
#include <string>
#include <vector>

namespace rx = pmix::regex;

namespace {

std::vector<std::string> split_names(const std::string& list) {
  std::vector<std::string> names;
  if (list.empty()) return names;
  std::size_t start = 0;
  while (true) {
    std::size_t comma = list.find(',', start);
    names.push_back(list.substr(start, comma == std::string::npos ? std::string::npos : comma - start));
    if (comma == std::string::npos) return names;
    start = comma + 1;
  }
}

std::string join_names(const rx::node_list& names) {
  std::string list;
  for (std::size_t i = 0; i < names.size(); ++i) {
    if (i != 0) list += ',';
    list += names[i];
  }
  return list;
}

std::string raw_proc_map(const rx::rank_lists& nodes) {
  std::string text;
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    if (i != 0) text += ';';
    for (std::size_t j = 0; j < nodes[i].size(); ++j) {
      if (j != 0) text += ',';
      text += std::to_string(nodes[i][j]);
    }
  }
  return text;
}

bool is_printable_compact(const std::string& text) {
  if (text.size() < 6 || text.compare(0, 5, "pmix[") != 0 || text.back() != ']') return false;
  for (char c : text) {
    if (c < 0x21 || c > 0x7E) return false;
  }
  return true;
}

// generate_node_map(list) is well formed and parses back to exactly the names.
std::string node_round_trip(const std::string& list) {
  rx::result<std::string> compact = rx::generate_node_map(list);
  REQUIRE_MESSAGE(compact.ok(), list << ": " << compact.error().what);
  CHECK(is_printable_compact(compact.value()));
  rx::result<rx::node_list> names = rx::parse_node_map(compact.value());
  REQUIRE_MESSAGE(names.ok(), compact.value() << ": " << names.error().what);
  CHECK(names.value() == split_names(list));
  return compact.value();
}

// encode_node_map(names) parses back to exactly the names.
std::string node_vector_round_trip(const rx::node_list& names) {
  rx::result<std::string> compact = rx::encode_node_map(names);
  REQUIRE_MESSAGE(compact.ok(), compact.error().what);
  CHECK(is_printable_compact(compact.value()));
  rx::result<rx::node_list> parsed = rx::parse_node_map(compact.value());
  REQUIRE_MESSAGE(parsed.ok(), compact.value() << ": " << parsed.error().what);
  CHECK(parsed.value() == names);
  return compact.value();
}

std::string proc_round_trip(const rx::rank_lists& nodes) {
  rx::result<std::string> compact = rx::encode_proc_map(nodes);
  REQUIRE_MESSAGE(compact.ok(), compact.error().what);
  CHECK(is_printable_compact(compact.value()));
  rx::result<rx::rank_lists> parsed = rx::parse_proc_map(compact.value());
  REQUIRE_MESSAGE(parsed.ok(), compact.value() << ": " << parsed.error().what);
  CHECK(parsed.value() == nodes);
  return compact.value();
}

std::string node_error(const std::string& text, const rx::parse_limits& limits = {}) {
  rx::result<rx::node_list> names = rx::parse_node_map(text, limits);
  REQUIRE_MESSAGE(!names.ok(), "accepted: " << text);
  CHECK(!names.error().what.empty());
  return names.error().what;
}

std::string proc_error(const std::string& text, const rx::parse_limits& limits = {}) {
  rx::result<rx::rank_lists> nodes = rx::parse_proc_map(text, limits);
  REQUIRE_MESSAGE(!nodes.ok(), "accepted: " << text);
  CHECK(!nodes.error().what.empty());
  return nodes.error().what;
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

}  // namespace

TEST_SUITE("regex") {
  // ---------------------------------------------------------------- node map

  TEST_CASE("node map: the documented examples produce the documented strings") {
    CHECK(node_round_trip("node01,node02,node03,node10,login,c1-n007,c1-n008") ==
          "pmix[node[2:1-3,10],login,c1-n[3:7-8]]");
    CHECK(node_round_trip("n9,n10,n11") == "pmix[n[9-11]]");
    CHECK(node_round_trip("n3,n2,n1,n1") == "pmix[n[3-1,1]]");
    CHECK(node_round_trip("r1n1-ib,r1n2-ib") == "pmix[r1n[1-2]-ib]");
    CHECK(node_round_trip("a[1],b c") == "pmix[a%5B1%5D,b%20c]");
    CHECK(node_round_trip("") == "pmix[]");
  }

  TEST_CASE("node map: empty input is the empty list in both forms") {
    CHECK(rx::parse_node_map("").value().empty());
    CHECK(rx::parse_node_map("pmix[]").value().empty());
    CHECK(rx::generate_node_map("").value() == "pmix[]");
  }

  TEST_CASE("node map: unpadded numbers of growing length share one range") {
    std::string list;
    for (int i = 1; i <= 100; ++i) list += (i > 1 ? ",n" : "n") + std::to_string(i);
    CHECK(node_round_trip(list) == "pmix[n[1-100]]");
  }

  TEST_CASE("node map: zero padded numbers keep their width") {
    std::string list;
    for (int i = 1; i <= 100; ++i) {
      std::string digits = std::to_string(i);
      list += (i > 1 ? ",n" : "n") + std::string(3 - digits.size(), '0') + digits;
    }
    CHECK(node_round_trip(list) == "pmix[n[3:1-100]]");
    CHECK(node_round_trip("n08,n09,n10,n11") == "pmix[n[2:8-11]]");
    CHECK(node_round_trip("n10,n11,n12,n08") == "pmix[n[2:10-12,8]]");
    CHECK(node_round_trip("n10,n11,n12,n8") == "pmix[n[10-12,8]]");
    CHECK(node_round_trip("n10,n11,n12,n008") == "pmix[n[10-12],n008]");
    CHECK(node_round_trip("x0,x00,x000,x0000") == "pmix[x0,x00,x000,x0000]");
    CHECK(node_round_trip("x000,x001,x0000,x0001") == "pmix[x[3:0-1],x[4:0-1]]");
    CHECK(node_round_trip("n0,n1,n2") == "pmix[n[0-2]]");
  }

  TEST_CASE("node map: a compact width pads and bounds every value") {
    CHECK(rx::parse_node_map("pmix[n[4:7,12]]").value() == rx::node_list{"n0007", "n0012"});
    CHECK(rx::parse_node_map("pmix[n[7,12]]").value() == rx::node_list{"n7", "n12"});
    CHECK(rx::parse_node_map("pmix[[2:1-3]]").value() == rx::node_list{"01", "02", "03"});
    CHECK(rx::parse_node_map("pmix[n[1:9]]").value() == rx::node_list{"n9"});
    CHECK(rx::parse_node_map("pmix[n[18:1]]").value() ==
          rx::node_list{"n000000000000000001"});
  }

  TEST_CASE("node map: different text around the number starts a new range") {
    CHECK(node_round_trip("r1n1,r1n2,r2n1,r2n2") == "pmix[r1n[1-2],r2n[1-2]]");
    CHECK(node_round_trip("a1x,a2x,a3x,a4y,a5y,a6y") == "pmix[a[1-3]x,a[4-6]y]");
    CHECK(node_round_trip("rack1-node05,rack1-node06,rack2-node05") ==
          "pmix[rack1-node[2:5-6],rack2-node05]");
    CHECK(node_round_trip("17,18,19") == "pmix[[17-19]]");
  }

  TEST_CASE("node map: names are written literally when a range would not be shorter") {
    CHECK(node_round_trip("login1") == "pmix[login1]");
    CHECK(node_round_trip("n1,n2") == "pmix[n1,n2]");
    CHECK(node_round_trip("n1,n2,n3") == "pmix[n[1-3]]");
    CHECK(node_round_trip("a1x,a2x") == "pmix[a1x,a2x]");
    CHECK(node_round_trip("a1,a1,a1") == "pmix[a1,a1,a1]");
    CHECK(node_round_trip("login,head,storage") == "pmix[login,head,storage]");
    CHECK(node_round_trip("n1,x,n2") == "pmix[n1,x,n2]");
  }

  TEST_CASE("node map: duplicates and arbitrary order survive exactly") {
    CHECK(node_round_trip("a1,a1,a1,a1") == "pmix[a[1,1,1,1]]");
    CHECK(node_round_trip("x,x,x") == "pmix[x,x,x]");
    CHECK(node_round_trip("n5,n3,n4,n1,n2,n5") == "pmix[n[5,3-4,1-2,5]]");
    CHECK(node_round_trip("n10,n9,n8,n7,n6,n5,n4,n3,n2,n1") == "pmix[n[10-1]]");
    node_round_trip("b2,a1,b1,a2,a1,b2");
  }

  TEST_CASE("node map: names that look like the compact syntax are escaped") {
    CHECK(node_round_trip("node[1-3]") == "pmix[node%5B1-3%5D]");
    CHECK(node_round_trip("a[2:1-3],b]") == "pmix[a%5B2:1-3%5D,b%5D]");
    CHECK(node_round_trip("x[1],x[2],x[3]") == "pmix[x%5B[1-3]%5D]");
    CHECK(node_round_trip("100%,50%") == "pmix[[100,50]%25]");
    CHECK(node_round_trip("%") == "pmix[%25]");
    CHECK(node_round_trip("1-2,-,--,:") == "pmix[1-2,-,--,:]");
    node_round_trip("a-1,a-2,a-3");
    node_round_trip("x%5B,%41,%,%%");
    node_round_trip("]x[,[,],[]");
    node_round_trip("first,pmix[1]");
    node_round_trip(" lead,trail ,in side");
    node_round_trip("n\xC5\x93ud1,n\xC5\x93ud2,\x7F\x01");
  }

  TEST_CASE("node map: digit runs too long for a number are kept literally") {
    std::string long_digits(19, '7');
    CHECK(node_round_trip("n" + long_digits + ",n" + long_digits) ==
          "pmix[n" + long_digits + ",n" + long_digits + "]");
    node_round_trip("n999999999999999998,n999999999999999999");
    CHECK(rx::parse_node_map("pmix[n[999999999999999998-999999999999999999]]").value() ==
          rx::node_list{"n999999999999999998", "n999999999999999999"});
  }

  TEST_CASE("node map: a raw list is read byte for byte") {
    CHECK(rx::parse_node_map("a,b c, d").value() == rx::node_list{"a", "b c", " d"});
    CHECK(rx::parse_node_map("node[1-3]").value() == rx::node_list{"node[1-3]"});
    CHECK(rx::parse_node_map("%41,x%2").value() == rx::node_list{"%41", "x%2"});
    CHECK(rx::parse_node_map("n1,n2").value() == rx::node_list{"n1", "n2"});
    CHECK(rx::parse_node_map("pmix(1)").value() == rx::node_list{"pmix(1)"});
  }

  TEST_CASE("node map: compact text accepts lower-case escapes") {
    CHECK(rx::parse_node_map("pmix[a%5b1%5d]").value() == rx::node_list{"a[1]"});
  }

  TEST_CASE("node map: generating from compact text gives the same compact text") {
    std::string compact = node_round_trip("node01,node02,login,c1-n007,c1-n008,x[1]");
    CHECK(rx::generate_node_map(compact).value() == compact);
  }

  TEST_CASE("node map: encode_node_map round-trips any name without ',' or NUL") {
    node_vector_round_trip({});
    node_vector_round_trip({"a"});
    node_vector_round_trip({"pmix[", "]", "[", "%", "n1", "n01", "n1"});
    CHECK(node_vector_round_trip({"pmix[]"}) == "pmix[pmix%5B%5D]");
  }

  TEST_CASE("node map: encode_node_map refuses names raw text cannot carry") {
    CHECK(!rx::encode_node_map({"a", ""}).ok());
    CHECK(!rx::encode_node_map({"a,b"}).ok());
    CHECK(!rx::encode_node_map({std::string("a\0b", 3)}).ok());
    CHECK(contains(rx::encode_node_map({"a", ""}).error().what, "node name 1"));
  }

  TEST_CASE("node map: a raw list with an empty name is refused") {
    CHECK(contains(node_error("a,,b"), "offset 2: empty node name"));
    CHECK(contains(node_error(",a"), "offset 0"));
    CHECK(contains(node_error("a,"), "offset 2"));
    CHECK(contains(node_error(","), "empty node name"));
    CHECK(!rx::generate_node_map("a,,b").ok());
  }

  TEST_CASE("node map: a raw list with NUL is refused") {
    CHECK(contains(node_error(std::string("a,b\0c", 5)), "NUL"));
  }

  TEST_CASE("node map: compact text without its closing bracket is refused") {
    CHECK(contains(node_error("pmix["), "end with ']'"));
    CHECK(contains(node_error("pmix[a"), "end with ']'"));
    CHECK(contains(node_error("pmix[a,b]x"), "end with ']'"));
    CHECK(!rx::generate_node_map("pmix[a").ok());
  }

  TEST_CASE("node map: unescaped special bytes in compact text are refused") {
    CHECK(contains(node_error("pmix[a]b]"), "unexpected ']'"));
    CHECK(contains(node_error("pmix[a b]"), "byte 0x20"));
    CHECK(contains(node_error("pmix[a\x01]"), "byte 0x01"));
    CHECK(contains(node_error("pmix[n\xC5\x93]"), "byte 0xC5"));
  }

  TEST_CASE("node map: malformed escapes are refused") {
    CHECK(contains(node_error("pmix[a%]"), "two hex digits"));
    CHECK(contains(node_error("pmix[a%4]"), "two hex digits"));
    CHECK(contains(node_error("pmix[a%zz]"), "two hex digits"));
    CHECK(contains(node_error("pmix[a%4g]"), "two hex digits"));
  }

  TEST_CASE("node map: escapes that decode to ',' or NUL are refused") {
    CHECK(contains(node_error("pmix[a%2Cb]"), "','"));
    CHECK(contains(node_error("pmix[a%00]"), "NUL"));
    CHECK(contains(node_error("pmix[a%2C[1-2]]"), "','"));
    CHECK(contains(node_error("pmix[a[1-2]%00]"), "NUL"));
  }

  TEST_CASE("node map: empty items in compact text are refused") {
    CHECK(contains(node_error("pmix[a,,b]"), "offset 7: empty node name"));
    CHECK(contains(node_error("pmix[,]"), "empty node name"));
    CHECK(contains(node_error("pmix[a,]"), "empty node name"));
  }

  TEST_CASE("node map: malformed number fields are refused") {
    CHECK(contains(node_error("pmix[a[1-2]"), "expected ',', '-' or ']'"));
    CHECK(contains(node_error("pmix[a[1]b[2]]"), "only one"));
    CHECK(contains(node_error("pmix[a[]]"), "expected a number"));
    CHECK(contains(node_error("pmix[a[1-]]"), "expected a value"));
    CHECK(contains(node_error("pmix[a[-1]]"), "expected a number"));
    CHECK(contains(node_error("pmix[a[1,]]"), "expected a value"));
    CHECK(contains(node_error("pmix[a[1-2-3]]"), "expected ',', '-' or ']'"));
    CHECK(contains(node_error("pmix[a[x]]"), "expected a number"));
    CHECK(contains(node_error("pmix[a[2:]]"), "expected a value"));
    CHECK(contains(node_error("pmix[a[2:1:2]]"), "expected ',', '-' or ']'"));
  }

  TEST_CASE("node map: widths outside 1 to 18 are refused") {
    CHECK(contains(node_error("pmix[a[0:1]]"), "width must be 1 to 18"));
    CHECK(contains(node_error("pmix[a[19:1]]"), "width must be 1 to 18"));
    CHECK(contains(node_error("pmix[a[99999999999999999999:1]]"), "exceeds"));
  }

  TEST_CASE("node map: values that do not fit the field are refused") {
    CHECK(contains(node_error("pmix[a[2:100]]"), "exceeds 99"));
    CHECK(contains(node_error("pmix[a[2:1-100]]"), "exceeds 99"));
    CHECK(contains(node_error("pmix[a[1000000000000000000]]"), "exceeds 999999999999999999"));
    CHECK(contains(node_error("pmix[a[1-99999999999999999999999]]"), "exceeds"));
  }

  TEST_CASE("node map: a range expanding past the node limit is refused without allocating") {
    CHECK(contains(node_error("pmix[n[0-999999999999999999]]"), "expands past 10000000"));
    CHECK(contains(node_error("pmix[n[999999999999999999-0]]"), "expands past"));
    rx::parse_limits limits;
    limits.max_nodes = 5;
    CHECK(rx::parse_node_map("pmix[n[1-5]]", limits).value().size() == 5);
    CHECK(contains(node_error("pmix[n[1-6]]", limits), "expands past 5"));
    CHECK(contains(node_error("pmix[n[1-3],n[1-3]]", limits), "expands past 5"));
    CHECK(contains(node_error("pmix[a,b,c,d,e,f]", limits), "more than 5 node names"));
    CHECK(contains(node_error("a,b,c,d,e,f", limits), "more than 5 node names"));
    CHECK(rx::parse_node_map("a,b,c,d,e", limits).ok());
  }

  TEST_CASE("node map: names expanding past the byte limit are refused") {
    rx::parse_limits limits;
    limits.max_name_bytes = 10;
    CHECK(rx::parse_node_map("abcde,fghij", limits).ok());
    CHECK(contains(node_error("abcde,fghijk", limits), "exceed 10 bytes"));
    CHECK(rx::parse_node_map("pmix[a[1-5]]", limits).ok());
    CHECK(contains(node_error("pmix[a[1-6]]", limits), "exceed 10 bytes"));
    CHECK(rx::parse_node_map("pmix[[8-13]]", limits).ok());  // 1+1+2+2+2+2 bytes
    CHECK(contains(node_error("pmix[[7-13]]", limits), "exceed 10 bytes"));
    CHECK(contains(node_error("pmix[[13-7]]", limits), "exceed 10 bytes"));
    CHECK(rx::parse_node_map("pmix[[2:8-12]]", limits).ok());
    CHECK(contains(node_error("pmix[[2:8-13]]", limits), "exceed 10 bytes"));

    std::string long_prefix(100000, 'p');
    CHECK(contains(node_error("pmix[" + long_prefix + "[1-9999999]]"), "exceed 268435456 bytes"));
    CHECK(contains(node_error("pmix[n[1-9999999]" + long_prefix + "]"), "exceed 268435456 bytes"));
  }

  TEST_CASE("node map: ten thousand padded nodes compress to one range") {
    std::string list;
    for (int i = 0; i < 10000; ++i) {
      std::string digits = std::to_string(i);
      list += (i > 0 ? ",nid" : "nid") + std::string(5 - digits.size(), '0') + digits;
    }
    CHECK(node_round_trip(list) == "pmix[nid[5:0-9999]]");
  }

  TEST_CASE("node map: a large list of scattered names round-trips") {
    std::mt19937 random(7);
    rx::node_list names;
    for (int i = 0; i < 200000; ++i) {
      names.push_back("rack" + std::to_string(i / 1000) + "-n" + std::to_string(random() % 2000));
    }
    node_vector_round_trip(names);
    CHECK(rx::parse_node_map(join_names(names)).value() == names);
  }

  TEST_CASE("node map: random names round-trip (seed 20240607)") {
    std::mt19937 random(20240607);
    const std::string alphabet = "abz09-_.:[]%/ *~\x7F\x80\xFF";
    auto pick = [&](std::size_t n) { return static_cast<std::size_t>(random() % n); };
    for (int trial = 0; trial < 500; ++trial) {
      rx::node_list names;
      std::size_t count = pick(40);
      for (std::size_t i = 0; i < count; ++i) {
        std::string name;
        switch (pick(4)) {
          case 0:  // free text
            for (std::size_t k = 1 + pick(6); k > 0; --k) name += alphabet[pick(alphabet.size())];
            break;
          case 1:  // repeat an earlier name
            name = names.empty() ? "dup" : names[pick(names.size())];
            break;
          default: {  // shared text around a number, sometimes padded
            std::string digits = std::to_string(pick(30));
            if (pick(2) == 0) digits = std::string(pick(3), '0') + digits;
            name = std::string(pick(2) ? "n" : "c1-n") + digits + (pick(3) == 0 ? "-ib" : "");
            break;
          }
        }
        names.push_back(name);
      }
      std::string compact = node_vector_round_trip(names);
      CHECK(rx::generate_node_map(join_names(names)).value() == compact);
    }
  }

  // ---------------------------------------------------------------- proc map

  TEST_CASE("proc map: the documented examples produce the documented strings") {
    CHECK(rx::generate_proc_map("0,1,2,3;4-7;8,10,12").value() == "pmix[0-3;4-7;8-12/2]");
    CHECK(rx::parse_proc_map("pmix[0-3;4-7;8-12/2]").value() ==
          rx::rank_lists{{0, 1, 2, 3}, {4, 5, 6, 7}, {8, 10, 12}});
    CHECK(rx::parse_proc_map("pmix[0-3*2+4;8-12/2]").value() ==
          rx::rank_lists{{0, 1, 2, 3}, {4, 5, 6, 7}, {8, 10, 12}});

    rx::rank_lists block(100);
    for (std::uint32_t rank = 0; rank < 1000; ++rank) block[rank / 10].push_back(rank);
    CHECK(proc_round_trip(block) == "pmix[0-9*100+10]");

    rx::rank_lists cyclic(4);
    for (std::uint32_t rank = 0; rank < 16; ++rank) cyclic[rank % 4].push_back(rank);
    CHECK(proc_round_trip(cyclic) == "pmix[0-12/4*4+1]");

    CHECK(rx::generate_proc_map("0;;1").value() == "pmix[0;;1]");
    CHECK(rx::generate_proc_map("0-3;4-7;8-11").value() == "pmix[0-3*3+4]");
  }

  TEST_CASE("proc map: empty input is zero nodes") {
    CHECK(rx::parse_proc_map("").value().empty());
    CHECK(rx::parse_proc_map("pmix[]").value().empty());
    CHECK(proc_round_trip({}) == "pmix[]");
  }

  TEST_CASE("proc map: nodes without procs are kept") {
    CHECK(rx::parse_proc_map(";").value() == rx::rank_lists{{}, {}});
    CHECK(rx::parse_proc_map("0;").value() == rx::rank_lists{{0}, {}});
    CHECK(rx::parse_proc_map(";0").value() == rx::rank_lists{{}, {0}});
    CHECK(proc_round_trip({{}}) == "pmix[*1]");
    CHECK(proc_round_trip({{}, {}}) == "pmix[;]");
    CHECK(proc_round_trip({{}, {}, {}}) == "pmix[*3]");
    CHECK(proc_round_trip({{}, {}, {}, {5}, {}}) == "pmix[*3;5;]");
    CHECK(proc_round_trip({{0}, {}, {1}}) == "pmix[0;;1]");
    CHECK(rx::parse_proc_map("pmix[*3+7]").value() == rx::rank_lists{{}, {}, {}});
  }

  TEST_CASE("proc map: descending ranges and steps expand in order") {
    CHECK(rx::parse_proc_map("7-4").value() == rx::rank_lists{{7, 6, 5, 4}});
    CHECK(rx::parse_proc_map("3-3").value() == rx::rank_lists{{3}});
    CHECK(rx::parse_proc_map("pmix[10-0/5]").value() == rx::rank_lists{{10, 5, 0}});
    CHECK(rx::parse_proc_map("pmix[1-9/4]").value() == rx::rank_lists{{1, 5, 9}});
    CHECK(rx::parse_proc_map("pmix[1-9/1]").value() ==
          rx::rank_lists{{1, 2, 3, 4, 5, 6, 7, 8, 9}});
    CHECK(proc_round_trip({{7, 6, 5, 4}}) == "pmix[7-4]");
    CHECK(proc_round_trip({{9, 6, 3, 0}}) == "pmix[9-0/3]");
  }

  TEST_CASE("proc map: short runs are written as single ranks") {
    CHECK(proc_round_trip({{0, 1}}) == "pmix[0-1]");
    CHECK(proc_round_trip({{0, 5}}) == "pmix[0,5]");
    CHECK(proc_round_trip({{0, 2, 4, 5, 6, 7}}) == "pmix[0-4/2,5-7]");
    CHECK(proc_round_trip({{3, 3, 3}}) == "pmix[3,3,3]");
  }

  TEST_CASE("proc map: repeated and shifted nodes share one group") {
    CHECK(proc_round_trip({{0, 1}, {0, 1}}) == "pmix[0-1*2]");
    CHECK(proc_round_trip({{8, 9, 10, 11}, {4, 5, 6, 7}, {0, 1, 2, 3}}) == "pmix[8-11*3-4]");
    CHECK(proc_round_trip({{0, 5}, {1, 6}, {2, 7}, {9}}) == "pmix[0,5*3+1;9]");
    CHECK(proc_round_trip({{0}, {1}, {2}, {7}}) == "pmix[0*3+1;7]");
    CHECK(rx::parse_proc_map("pmix[0,5*3+1;9]").value() ==
          rx::rank_lists{{0, 5}, {1, 6}, {2, 7}, {9}});
  }

  TEST_CASE("proc map: two nodes are grouped only when that is shorter") {
    CHECK(proc_round_trip({{0}, {1}, {3}}) == "pmix[0;1;3]");
    CHECK(proc_round_trip({{517}, {2}}) == "pmix[517;2]");
    CHECK(proc_round_trip({{517}, {2}, {3}, {4}}) == "pmix[517;2*3+1]");
    CHECK(proc_round_trip({{0, 1, 2}, {3, 4, 5}}) == "pmix[0-2;3-5]");  // a tie
    CHECK(proc_round_trip({{0, 2, 4}, {1, 3, 5}, {9}}) == "pmix[0-4/2*2+1;9]");
  }

  TEST_CASE("proc map: duplicates and arbitrary order survive exactly") {
    rx::rank_lists nodes{{5, 1, 1, 9}, {0}, {0}, {3, 2, 100, 2}};
    proc_round_trip(nodes);
    CHECK(rx::parse_proc_map(raw_proc_map(nodes)).value() == nodes);
  }

  TEST_CASE("proc map: the highest rank is accepted and one above it refused") {
    CHECK(rx::parse_proc_map("4294967294").value() == rx::rank_lists{{rx::max_rank}});
    CHECK(proc_round_trip({{rx::max_rank, 0}}) == "pmix[4294967294,0]");
    CHECK(contains(proc_error("4294967295"), "rank exceeds 4294967294"));
    CHECK(contains(proc_error("0-4294967295"), "rank exceeds 4294967294"));
    CHECK(contains(proc_error("pmix[4294967295]"), "rank exceeds"));
    CHECK(contains(proc_error("99999999999999999999999"), "rank exceeds"));
    CHECK(!rx::encode_proc_map({{0}, {0xFFFFFFFFu}}).ok());
    CHECK(contains(rx::encode_proc_map({{0}, {0xFFFFFFFFu}}).error().what, "node 1"));
  }

  TEST_CASE("proc map: shifts that leave the rank range are refused") {
    CHECK(rx::parse_proc_map("pmix[4294967290*3+2]").value() ==
          rx::rank_lists{{4294967290u}, {4294967292u}, {4294967294u}});
    CHECK(contains(proc_error("pmix[4294967290*3+3]"), "shifted ranks"));
    CHECK(rx::parse_proc_map("pmix[4*3-2]").value() == rx::rank_lists{{4}, {2}, {0}});
    CHECK(contains(proc_error("pmix[3*3-2]"), "shifted ranks"));
    CHECK(contains(proc_error("pmix[0*2+4294967295]"), "shift exceeds"));
  }

  TEST_CASE("proc map: a raw list is read as written") {
    CHECK(rx::parse_proc_map("0,1,2,3;4-7;8,10,12").value() ==
          rx::rank_lists{{0, 1, 2, 3}, {4, 5, 6, 7}, {8, 10, 12}});
    CHECK(rx::parse_proc_map("007").value() == rx::rank_lists{{7}});
  }

  TEST_CASE("proc map: generating from compact text gives the same compact text") {
    std::string compact = rx::generate_proc_map("0,1,2,3;4-7;8,10,12;;13").value();
    CHECK(rx::generate_proc_map(compact).value() == compact);
  }

  TEST_CASE("proc map: malformed raw lists are refused") {
    CHECK(contains(proc_error("0,,1"), "offset 2: expected a rank"));
    CHECK(contains(proc_error("0,"), "expected a rank"));
    CHECK(contains(proc_error(",0"), "expected a rank"));
    CHECK(contains(proc_error("0-"), "expected a rank"));
    CHECK(contains(proc_error("-1"), "expected a rank"));
    CHECK(contains(proc_error("1--2"), "expected a rank"));
    CHECK(contains(proc_error("a"), "expected a rank, found 'a'"));
    CHECK(contains(proc_error("0 1"), "found byte 0x20"));
    CHECK(contains(proc_error("0,1 "), "found byte 0x20"));
    CHECK(contains(proc_error("1-2-3"), "expected ',' or ';'"));
    CHECK(contains(proc_error("0-4/2"), "found '/'"));
    CHECK(contains(proc_error("0*2"), "found '*'"));
    CHECK(contains(proc_error("0]"), "found ']'"));
    CHECK(!rx::generate_proc_map("0,,1").ok());
  }

  TEST_CASE("proc map: malformed compact text is refused") {
    CHECK(contains(proc_error("pmix["), "end with ']'"));
    CHECK(contains(proc_error("pmix[0"), "end with ']'"));
    CHECK(contains(proc_error("pmix[0]x"), "end with ']'"));
    CHECK(contains(proc_error("pmix[0;1]]"), "found ']'"));
    CHECK(contains(proc_error("pmix[0-3/0]"), "step must be at least 1"));
    CHECK(contains(proc_error("pmix[0-3/2]"), "step does not divide"));
    CHECK(contains(proc_error("pmix[0-3/]"), "expected a step"));
    CHECK(contains(proc_error("pmix[0/2]"), "found '/'"));
    CHECK(contains(proc_error("pmix[0*0]"), "node count must be at least 1"));
    CHECK(contains(proc_error("pmix[0*]"), "expected a node count"));
    CHECK(contains(proc_error("pmix[0*2+]"), "expected a shift"));
    CHECK(contains(proc_error("pmix[0*2-]"), "expected a shift"));
    CHECK(contains(proc_error("pmix[0*2*3]"), "found '*'"));
    CHECK(contains(proc_error("pmix[0*2,1]"), "found ','"));
    CHECK(contains(proc_error("pmix[0,,1]"), "expected a rank"));
    CHECK(contains(proc_error("pmix[0,*2]"), "expected a rank"));
    CHECK(contains(proc_error("pmix[0-1-2]"), "found '-'"));
    CHECK(contains(proc_error("pmix[*99999999999999999999]"), "node count exceeds"));
  }

  TEST_CASE("proc map: expansion past the rank limit is refused without allocating") {
    CHECK(contains(proc_error("0-4294967294"), "more than 100000000 ranks"));
    CHECK(contains(proc_error("pmix[4294967294-0]"), "more than 100000000 ranks"));
    CHECK(contains(proc_error("pmix[0-99*10000000+100]"), "more than 100000000 ranks"));
    CHECK(contains(proc_error("pmix[0-1000000*1000]"), "more than 100000000 ranks"));

    rx::parse_limits limits;
    limits.max_ranks = 10;
    CHECK(rx::parse_proc_map("0-9", limits).ok());
    CHECK(contains(proc_error("0-10", limits), "more than 10 ranks"));
    CHECK(contains(proc_error("0-5;6-10", limits), "more than 10 ranks"));
    CHECK(contains(proc_error("0,1,2,3,4,5,6,7,8,9,10", limits), "more than 10 ranks"));
    CHECK(rx::parse_proc_map("pmix[0-4*2+5]", limits).ok());
    CHECK(contains(proc_error("pmix[0-4*3+5]", limits), "more than 10 ranks"));
    CHECK(contains(proc_error("pmix[0-4/2*4+5]", limits), "more than 10 ranks"));
  }

  TEST_CASE("proc map: expansion past the node limit is refused without allocating") {
    CHECK(contains(proc_error("pmix[*100000000000]"), "more than 10000000 nodes"));
    CHECK(contains(proc_error("pmix[0*18446744073709551615]"), "more than 10000000 nodes"));
    rx::parse_limits limits;
    limits.max_nodes = 3;
    CHECK(rx::parse_proc_map(";;", limits).value().size() == 3);
    CHECK(contains(proc_error(";;;", limits), "more than 3 nodes"));
    CHECK(rx::parse_proc_map("pmix[*3]", limits).ok());
    CHECK(contains(proc_error("pmix[0;*3]", limits), "more than 3 nodes"));
  }

  TEST_CASE("proc map: one million ranks on ten thousand nodes") {
    rx::rank_lists block(10000);
    for (std::uint32_t rank = 0; rank < 1000000; ++rank) block[rank / 100].push_back(rank);
    std::string raw = raw_proc_map(block);
    CHECK(rx::generate_proc_map(raw).value() == "pmix[0-99*10000+100]");
    CHECK(rx::parse_proc_map("pmix[0-99*10000+100]").value() == block);

    rx::rank_lists cyclic(10000);
    for (std::uint32_t rank = 0; rank < 1000000; ++rank) cyclic[rank % 10000].push_back(rank);
    CHECK(rx::generate_proc_map(raw_proc_map(cyclic)).value() == "pmix[0-990000/10000*10000+1]");

    std::mt19937 random(11);
    rx::rank_lists scattered(10000);
    for (std::uint32_t rank = 0; rank < 1000000; ++rank) {
      scattered[random() % 10000].push_back(rank);
    }
    proc_round_trip(scattered);
    CHECK(rx::parse_proc_map(raw_proc_map(scattered)).value() == scattered);
  }

  TEST_CASE("proc map: random rank lists round-trip (seed 424242)") {
    std::mt19937 random(424242);
    auto pick = [&](std::uint32_t n) { return static_cast<std::uint32_t>(random() % n); };
    for (int trial = 0; trial < 500; ++trial) {
      rx::rank_lists nodes;
      std::uint32_t node_count = pick(30);
      for (std::uint32_t n = 0; n < node_count; ++n) {
        std::vector<std::uint32_t> ranks;
        switch (pick(5)) {
          case 0:  // no procs
            break;
          case 1: {  // arithmetic run, up or down
            std::uint32_t start = pick(1000);
            std::uint32_t step = pick(5);
            bool down = pick(2) == 0;
            for (std::uint32_t k = pick(8); k > 0; --k) {
              ranks.push_back(start);
              start = down && start < step ? start : (down ? start - step : start + step);
            }
            break;
          }
          case 2:  // previous node shifted
            if (!nodes.empty()) {
              std::uint32_t shift = pick(20);
              for (std::uint32_t rank : nodes.back()) {
                ranks.push_back(rank <= rx::max_rank - shift ? rank + shift : rank);
              }
            }
            break;
          case 3:  // near the top of the rank range
            for (std::uint32_t k = pick(4); k > 0; --k) ranks.push_back(rx::max_rank - pick(3));
            break;
          default:  // anything
            for (std::uint32_t k = pick(10); k > 0; --k) ranks.push_back(pick(50));
            break;
        }
        nodes.push_back(ranks);
      }
      std::string compact = proc_round_trip(nodes);
      rx::result<std::string> generated = rx::generate_proc_map(raw_proc_map(nodes));
      if (nodes.size() == 1 && nodes[0].empty()) {
        CHECK(generated.value() == "pmix[]");  // raw "" is zero nodes
      } else {
        CHECK(generated.value() == compact);
      }
    }
  }

  TEST_CASE("rank_places: each rank's first node and its place there, by rank") {
    const rx::rank_places places{rx::rank_runs{rx::runs_of({0, 3, 5}), rx::runs_of({1, 4}), rx::runs_of({2, 6, 4})}};
    const auto all = places.by_rank();
    REQUIRE(all.size() == 7);
    for (std::size_t k = 0; k < all.size(); ++k) CHECK(all[k].first == k);
    const auto five = places.find(5);
    REQUIRE(five.has_value());
    CHECK(five->node == 0);
    CHECK(five->index == 2);
    // Listed twice: the first node's place.
    const auto four = places.find(4);
    REQUIRE(four.has_value());
    CHECK(four->node == 1);
    CHECK(four->index == 1);
    CHECK(!places.find(7));
    CHECK(!rx::rank_places{}.find(0));
  }

  // The runs form: same ranks, same errors, and places found as a table of
  // every rank finds them.
  TEST_CASE("proc map as runs: expands to parse_proc_map's lists, with its errors") {
    const char* texts[] = {"", "pmix[]", "0;;1", "0,1,2,3;4-7;8,10,12", "pmix[0-3;4-7;8-12/2]",
                           "pmix[0-3*2+4;8-12/2]", "pmix[0-12/4*4+1]", "pmix[9-0]", "5,3,1,2,2,2,7",
                           "pmix[0-4294967294/4294967294]", "pmix[4294967294-0/2147483647]",
                           // errors
                           "0-4294967294", "pmix[0-99*10000000+100]", "0,,1", "pmix[0-4*3+5", "1-",
                           "pmix[0-10/3]", "pmix[4294967290-4294967294*2+5]", "pmix[0-1000000*1000]"};
    for (const char* t : texts) {
      CAPTURE(t);
      const auto lists = rx::parse_proc_map(t);
      const auto runs = rx::parse_proc_map_runs(t);
      REQUIRE(lists.ok() == runs.ok());
      if (!lists.ok()) {
        CHECK(runs.error().what == lists.error().what);
        continue;
      }
      CHECK(rx::expand(runs.value()) == lists.value());
    }
    rx::parse_limits limits;
    limits.max_ranks = 10;
    CHECK(rx::parse_proc_map_runs("pmix[0-4*2+5]", limits).ok());
    CHECK(rx::parse_proc_map_runs("pmix[0-4*3+5]", limits).error().what ==
          rx::parse_proc_map("pmix[0-4*3+5]", limits).error().what);
    CHECK(rx::parse_proc_map_runs("0,1,2,3,4,5,6,7,8,9,10", limits).error().what ==
          rx::parse_proc_map("0,1,2,3,4,5,6,7,8,9,10", limits).error().what);
  }

  TEST_CASE("proc map as runs: a block or cyclic node is one run, whatever its form") {
    // 100,000 ranks, 16 nodes of 6,250, as hosts give them.
    const auto block = rx::parse_proc_map_runs("pmix[0-6249*16+6250]").value();
    REQUIRE(block.size() == 16);
    for (std::size_t n = 0; n < 16; ++n) {
      REQUIRE(block[n].size() == 1);
      CHECK(block[n][0] == rx::rank_run{static_cast<std::uint32_t>(6250 * n), 6250, 1});
    }
    std::string plain;
    for (int r = 0; r < 6250; ++r) plain += (r ? "," : "") + std::to_string(r * 16 + 3);
    const auto cyclic = rx::parse_proc_map_runs(plain).value();
    REQUIRE(cyclic.size() == 1);
    CHECK(cyclic[0] == rx::run_list{{3, 6250, 16}});
    CHECK(rx::rank_count(cyclic[0]) == 6250);
    CHECK(rx::runs_of({7, 6, 5, 9, 9, 11}) == rx::run_list{{7, 3, -1}, {9, 1, 0}, {9, 2, 2}});
  }

  TEST_CASE("rank_places as runs finds what a table of every rank finds (seed 77)") {
    std::mt19937 random(77);
    auto pick = [&](std::uint32_t n) { return static_cast<std::uint32_t>(random() % n); };
    // The first node's place for every rank, the first in its list: the
    // table rank_places kept before.
    auto reference = [](const rx::rank_lists& nodes, std::uint32_t rank) -> std::optional<rx::rank_place> {
      for (std::uint32_t n = 0; n < nodes.size(); ++n)
        for (std::uint32_t k = 0; k < nodes[n].size(); ++k)
          if (nodes[n][k] == rank) return rx::rank_place{n, k};
      return std::nullopt;
    };
    int as_runs = 0, as_table = 0;
    for (int trial = 0; trial < 300; ++trial) {
      rx::rank_lists nodes(1 + pick(trial < 200 ? 20 : 150));
      const std::uint32_t size = 1 + pick(600);
      switch (trial % 4) {
        case 0:  // blocks
          for (std::uint32_t r = 0; r < size; ++r) nodes[r * nodes.size() / size].push_back(r);
          break;
        case 1:  // cyclic
          for (std::uint32_t r = 0; r < size; ++r) nodes[r % nodes.size()].push_back(r);
          break;
        case 2:  // runs up and down, some repeated on other nodes
          for (auto& n : nodes)
            for (std::uint32_t t = pick(4); t > 0; --t) {
              std::uint32_t start = pick(size), step = 1 + pick(4);
              for (std::uint32_t k = pick(12); k > 0 && start < size; --k) {
                n.push_back(start);
                if (pick(2) == 0 && start < step) break;
                start = pick(3) == 0 && start >= step ? start - step : start + step;
              }
            }
          break;
        default:  // anything, ranks listed twice included
          for (std::uint32_t r = 0; r < size; ++r) nodes[pick(static_cast<std::uint32_t>(nodes.size()))].push_back(pick(size));
          break;
      }
      rx::rank_runs runs;
      for (const auto& n : nodes) runs.push_back(rx::runs_of(n));
      CHECK(rx::expand(runs) == nodes);
      const rx::rank_places places{runs};
      (places.as_runs() ? as_runs : as_table)++;
      std::vector<std::pair<std::uint32_t, rx::rank_place>> all;
      for (std::uint32_t r = 0; r <= size + 1; ++r) {
        const auto want = reference(nodes, r);
        const auto got = places.find(r);
        CAPTURE(trial);
        CAPTURE(r);
        REQUIRE(want.has_value() == got.has_value());
        if (!want) continue;
        CHECK(got->node == want->node);
        CHECK(got->index == want->index);
        all.push_back({r, *want});
      }
      const auto by_rank = places.by_rank();
      REQUIRE(by_rank.size() == all.size());
      for (std::size_t k = 0; k < all.size(); ++k) {
        CHECK(by_rank[k].first == all[k].first);
        CHECK(by_rank[k].second.node == all[k].second.node);
        CHECK(by_rank[k].second.index == all[k].second.index);
      }
    }
    // Both forms were exercised.
    CHECK(as_runs > 100);
    CHECK(as_table > 10);
  }

  TEST_CASE("rank_places: blocks and a 16-node cyclic map are kept as runs, 100 cyclic nodes as a table") {
    const rx::rank_places block{rx::parse_proc_map_runs("pmix[0-6249*16+6250]").value()};
    CHECK(block.as_runs());
    REQUIRE(block.find(99999).has_value());
    CHECK(block.find(99999)->node == 15);
    CHECK(block.find(99999)->index == 6249);
    CHECK(!block.find(100000));
    const rx::rank_places cyclic{rx::parse_proc_map_runs("pmix[0-99984/16*16+1]").value()};
    CHECK(cyclic.as_runs());
    REQUIRE(cyclic.find(99999).has_value());
    CHECK(cyclic.find(99999)->node == 15);
    CHECK(cyclic.find(99999)->index == 6249);
    const rx::rank_places deep{rx::parse_proc_map_runs("pmix[0-9900/100*100+1]").value()};
    CHECK(!deep.as_runs());
    REQUIRE(deep.find(9999).has_value());
    CHECK(deep.find(9999)->node == 99);
    CHECK(deep.find(9999)->index == 99);
  }
}
