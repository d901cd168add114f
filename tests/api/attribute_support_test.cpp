// PMIX_QUERY_ATTRIBUTE_SUPPORT of the library's own levels and
// PMIx_Register_attributes, through the public library (docs/tools.md,
// "Attribute support"). The host level, asked of a real server, is in
// tests/tools/cli_test.sh (pmix_info against pmixrun).
#include <doctest/doctest.h>
#include <pmix_server.h>  // PMIx_Register_attributes (as in 4.2.2)
#include <pmix_tool.h>

#include <algorithm>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace {

// The results of one query, freed with it.
struct answer {
  pmix_status_t status = PMIX_ERROR;
  pmix_info_t* results = nullptr;
  size_t nresults = 0;
  ~answer() { PMIX_INFO_FREE(results, nresults); }
};

// PMIX_QUERY_ATTRIBUTE_SUPPORT with one qualifier.
void ask(const char* qualifier, const char* functions, answer& out) {
  pmix_info_t qual;
  PMIX_INFO_CONSTRUCT(&qual);
  const bool yes = true;
  if (functions != nullptr)
    PMIX_INFO_LOAD(&qual, qualifier, functions, PMIX_STRING);
  else
    PMIX_INFO_LOAD(&qual, qualifier, &yes, PMIX_BOOL);
  pmix_query_t q;
  PMIX_QUERY_CONSTRUCT(&q);
  char* keys[] = {const_cast<char*>(PMIX_QUERY_ATTRIBUTE_SUPPORT), nullptr};
  q.keys = keys;
  q.qualifiers = &qual;
  q.nqual = 1;
  out.status = PMIx_Query_info(&q, 1, &out.results, &out.nresults);
  PMIX_INFO_DESTRUCT(&qual);
}

// The entries of the one PMIX_QUERY_ATTRIBUTE_SUPPORT result.
const pmix_data_array_t* entries(const answer& a) {
  REQUIRE(a.nresults == 1);
  REQUIRE(PMIX_CHECK_KEY(&a.results[0], PMIX_QUERY_ATTRIBUTE_SUPPORT));
  REQUIRE(a.results[0].value.type == PMIX_DATA_ARRAY);
  const pmix_data_array_t* d = a.results[0].value.data.darray;
  REQUIRE(d != nullptr);
  REQUIRE(d->type == PMIX_INFO);
  return d;
}

// The attribute names of one function's entry.
std::vector<std::string> attribute_names(const pmix_info_t& entry) {
  REQUIRE(entry.value.type == PMIX_DATA_ARRAY);
  const pmix_data_array_t* d = entry.value.data.darray;
  REQUIRE(d->type == PMIX_REGATTR);
  std::vector<std::string> names;
  const auto* regs = static_cast<const pmix_regattr_t*>(d->array);
  for (size_t k = 0; k < d->size; ++k) names.emplace_back(regs[k].name);
  return names;
}

std::set<std::string> split(const std::string& text) {
  std::set<std::string> out;
  std::stringstream in(text);
  for (std::string item; std::getline(in, item, ',');) out.insert(item);
  return out;
}

pmix_status_t init_standalone() {
  pmix_info_t info;
  const bool yes = true;
  PMIX_INFO_LOAD(&info, PMIX_TOOL_DO_NOT_CONNECT, &yes, PMIX_BOOL);
  pmix_proc_t me;
  const pmix_status_t rc = PMIx_tool_init(&me, &info, 1);
  PMIX_INFO_DESTRUCT(&info);
  return rc;
}

}  // namespace

TEST_SUITE("attribute_support") {
  TEST_CASE("the library lists its own functions by level, before init too") {
    answer client;
    ask(PMIX_CLIENT_FUNCTIONS, nullptr, client);
    REQUIRE(client.status == PMIX_SUCCESS);
    const pmix_data_array_t* d = entries(client);
    REQUIRE(d->size == 1);
    const auto& entry = static_cast<const pmix_info_t*>(d->array)[0];
    CHECK(PMIX_CHECK_KEY(&entry, PMIX_CLIENT_FUNCTIONS));
    REQUIRE(entry.value.type == PMIX_STRING);
    const auto functions = split(entry.value.data.string);
    for (const char* f : {"PMIx_Init", "PMIx_Finalize", "PMIx_Fence", "PMIx_Get", "PMIx_Query_info"})
      CHECK_MESSAGE(functions.count(f) == 1, f);
    CHECK(functions.count("PMIx_server_init") == 0);

    answer tool;
    ask(PMIX_TOOL_FUNCTIONS, nullptr, tool);
    REQUIRE(tool.status == PMIX_SUCCESS);
    const auto& tool_entry = static_cast<const pmix_info_t*>(entries(tool)->array)[0];
    CHECK(split(tool_entry.value.data.string).count("PMIx_tool_init") == 1);
  }

  TEST_CASE("each function's attributes come as pmix_regattr_t: name, key, type; none is NONE") {
    answer a;
    ask(PMIX_CLIENT_ATTRIBUTES, "PMIx_Fence,PMIx_Put", a);
    REQUIRE(a.status == PMIX_SUCCESS);
    const pmix_data_array_t* d = entries(a);
    REQUIRE(d->size == 2);  // one entry per function, in the library's order
    const auto* e = static_cast<const pmix_info_t*>(d->array);
    const bool fence_first = PMIX_CHECK_KEY(&e[0], "PMIx_Fence");
    const pmix_info_t& fence = e[fence_first ? 0 : 1];
    const pmix_info_t& put = e[fence_first ? 1 : 0];
    CHECK(PMIX_CHECK_KEY(&fence, "PMIx_Fence"));
    CHECK(PMIX_CHECK_KEY(&put, "PMIx_Put"));
    REQUIRE(attribute_names(fence) == std::vector<std::string>{"PMIX_COLLECT_DATA", "PMIX_TIMEOUT"});
    const auto* collect = static_cast<const pmix_regattr_t*>(fence.value.data.darray->array);
    CHECK(std::string(collect[0].string) == PMIX_COLLECT_DATA);
    CHECK(collect[0].type == PMIX_BOOL);
    REQUIRE(attribute_names(put) == std::vector<std::string>{"NONE"});
    CHECK(static_cast<const pmix_regattr_t*>(put.value.data.darray->array)[0].string[0] == '\0');
  }

  TEST_CASE("a function no level has is PMIX_ERR_NOT_FOUND") {
    answer a;
    ask(PMIX_SERVER_ATTRIBUTES, "PMIx_No_such_function", a);
    CHECK(a.status == PMIX_ERR_NOT_FOUND);
    CHECK(a.nresults == 0);
  }

  TEST_CASE("the tool functions' entries list exactly the directives api/tool_api.cpp reads") {
    // common/supported.hpp lists them by hand; the source is the truth.
    // tool_init and attach_to_server share one reading of the server to
    // find; set_server reads its waiting.
    std::ifstream source("api/tool_api.cpp");
    REQUIRE(source);
    const std::string text{std::istreambuf_iterator<char>(source), std::istreambuf_iterator<char>()};
    std::set<std::string> read;
    const std::regex key_check(R"(d\.key == (PMIX_[A-Z0-9_]+))");
    for (auto it = std::sregex_iterator(text.begin(), text.end(), key_check); it != std::sregex_iterator();
         ++it)
      read.insert((*it)[1]);
    REQUIRE(read.size() > 5);

    std::set<std::string> listed;
    for (const char* fn : {"PMIx_tool_init", "PMIx_tool_attach_to_server", "PMIx_tool_set_server"}) {
      CAPTURE(fn);
      answer a;
      ask(PMIX_TOOL_ATTRIBUTES, fn, a);
      REQUIRE(a.status == PMIX_SUCCESS);
      const pmix_data_array_t* d = entries(a);
      REQUIRE(d->size == 1);
      for (const auto& n : attribute_names(static_cast<const pmix_info_t*>(d->array)[0])) listed.insert(n);
    }
    CHECK(listed == read);
  }

  TEST_CASE("PMIx_Register_attributes needs an initialized library and refuses a second registration") {
    char* attrs[] = {const_cast<char*>("PMIX_TIMEOUT"), const_cast<char*>("pmix.wait"), nullptr};
    char function[] = "my_function";
    CHECK(PMIx_Register_attributes(function, attrs) == PMIX_ERR_INIT);

    REQUIRE(init_standalone() == PMIX_SUCCESS);
    CHECK(PMIx_Register_attributes(function, attrs) == PMIX_SUCCESS);
    CHECK(PMIx_Register_attributes(function, attrs) == PMIX_ERR_REPEAT_ATTR_REGISTRATION);
    char empty[] = "";
    CHECK(PMIx_Register_attributes(empty, attrs) == PMIX_ERR_BAD_PARAM);
    CHECK(PMIx_Register_attributes(nullptr, attrs) == PMIX_ERR_BAD_PARAM);
    REQUIRE(PMIx_tool_finalize() == PMIX_SUCCESS);

    // The registry went with the last finalize: the next cycle starts empty.
    REQUIRE(init_standalone() == PMIX_SUCCESS);
    CHECK(PMIx_Register_attributes(function, attrs) == PMIX_SUCCESS);
    REQUIRE(PMIx_tool_finalize() == PMIX_SUCCESS);
  }
}
