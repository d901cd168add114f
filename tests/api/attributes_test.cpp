// PMIx_Get_attribute_string / PMIx_Get_attribute_name through the public
// library, against every attribute our pmix_common.h defines. The header is
// read here with a parser of this test's own (the library's table is
// generated at build time by api/gen_attributes.py).
#include <doctest/doctest.h>
#include <pmix.h>

#include <cstring>
#include <fstream>
#include <map>
#include <regex>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "tests/support/process.hpp"

namespace {

// The text without its /* */ comments.
std::string without_comments(const std::string& s) {
  std::string out;
  for (std::size_t k = 0; k < s.size();) {
    if (s.compare(k, 2, "/*") == 0) {
      const auto close = s.find("*/", k + 2);
      k = close == std::string::npos ? s.size() : close + 2;
      out += ' ';
    } else {
      out += s[k++];
    }
  }
  return out;
}

// (name, key) of every "#define PMIX_X "key"" outside comments, in order.
std::vector<std::pair<std::string, std::string>> header_attributes() {
  std::ifstream in(pmix::test::runfile("api/include/pmix_common.h"));
  std::stringstream text;
  text << in.rdbuf();
  std::istringstream lines{without_comments(text.str())};
  const std::regex define{R"re(\s*#\s*define\s+(PMIX_\w+)\s+"([^"]*)"\s*)re"};
  std::vector<std::pair<std::string, std::string>> out;
  std::smatch m;
  for (std::string line; std::getline(lines, line);)
    if (std::regex_match(line, m, define)) out.emplace_back(m[1].str(), m[2].str());
  return out;
}

}  // namespace

TEST_SUITE("attributes") {
  TEST_CASE("every attribute of the header maps name to key string and back") {
    const auto all = header_attributes();
    REQUIRE(all.size() > 500);                         // 4.2.2 has 531, we add 5 newer ones
    std::map<std::string, std::string> first_name_of;  // key -> the first name defining it
    for (const auto& [name, key] : all) first_name_of.emplace(key, name);
    for (const auto& [name, key] : all) {
      const char* got_key = PMIx_Get_attribute_string(name.c_str());
      REQUIRE_MESSAGE(got_key != nullptr, name);
      CHECK_MESSAGE(key == got_key, name);
      const char* got_name = PMIx_Get_attribute_name(key.c_str());
      REQUIRE_MESSAGE(got_name != nullptr, key);
      CHECK_MESSAGE(first_name_of[key] == got_name, key);
    }
  }

  TEST_CASE("a key several names share gives the first name, as OpenPMIx 4.2.2 does") {
    CHECK(std::string{PMIx_Get_attribute_name("pmix.qry.quals")} == "PMIX_QUERY_QUALIFIERS");
    CHECK(std::string{PMIx_Get_attribute_name("pmix.pdata")} == "PMIX_PROC_INFO_ARRAY");
    CHECK(std::string{PMIx_Get_attribute_name("pmix.alloc.net")} == "PMIX_ALLOC_FABRIC");
    CHECK(std::string{PMIx_Get_attribute_name("pmix.jctrl.ckptsig")} == "PMIX_JOB_CTRL_CHECKPOINT_SIGNAL");
    // ...while each of the names still gives the key.
    CHECK(std::string{PMIx_Get_attribute_string("PMIX_PROC_DATA")} == "pmix.pdata");
    CHECK(std::string{PMIx_Get_attribute_string("PMIX_ALLOC_NETWORK")} == "pmix.alloc.net");
  }

  TEST_CASE("attributes newer than 4.2.2 that our header defines are known too") {
    CHECK(std::string{PMIx_Get_attribute_string("PMIX_SERVER_SYS_CONTROLLER")} == "pmix.srv.ctrlr");
    CHECK(std::string{PMIx_Get_attribute_name("pmix.allow.clones")} == "PMIX_ALLOW_CLIENT_CLONES");
    CHECK(std::string{PMIx_Get_attribute_name(PMIX_HWLOC_XML_V2)} == "PMIX_HWLOC_XML_V2");
  }

  TEST_CASE("unknown names and keys come back as given; NULL gives NULL") {
    const char* name = "PMIX_NOT_AN_ATTRIBUTE";
    CHECK(PMIx_Get_attribute_string(name) == name);
    const char* key = "my.own.key";
    CHECK(PMIx_Get_attribute_name(key) == key);
    CHECK(PMIx_Get_attribute_string("") != nullptr);
    CHECK(PMIx_Get_attribute_string(nullptr) == nullptr);
    CHECK(PMIx_Get_attribute_name(nullptr) == nullptr);
  }

  TEST_CASE("the strings are static: the same pointer every time") {
    CHECK(PMIx_Get_attribute_string("PMIX_JOB_SIZE") == PMIx_Get_attribute_string("PMIX_JOB_SIZE"));
    CHECK(PMIx_Get_attribute_name("pmix.job.size") == PMIx_Get_attribute_name("pmix.job.size"));
  }
}
