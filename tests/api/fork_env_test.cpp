// PMIx_server_setup_local_support's environment changes as setup_fork
// applies them, and PMIx_server_setup_application's harvest.
#include "api/fork_env.hpp"

#include <doctest/doctest.h>

#include <cstdlib>
#include <string>
#include <vector>

using namespace pmix;
using namespace pmix::server;

namespace {

value envar(const std::string& name, const std::string& v, char sep = ':') {
  value out;
  out.type = PMIX_ENVAR;
  out.data = std::make_shared<const envar_value>(envar_value{name, v, sep});
  return out;
}

std::vector<std::string> lines(char** env) {
  std::vector<std::string> out;
  for (char** e = env; e != nullptr && *e != nullptr; ++e) out.emplace_back(*e);
  return out;
}

}  // namespace

TEST_SUITE("fork environment") {
  TEST_CASE("set, add, unset, prepend and append apply in order; other entries are left for the job data") {
    const info_list given = {
        {PMIX_SET_ENVAR, envar("A", "1"), 0},       {PMIX_ADD_ENVAR, envar("B", "new"), 0},
        {PMIX_ADD_ENVAR, envar("C", "new"), 0},     {PMIX_UNSET_ENVAR, value::string("D"), 0},
        {PMIX_PREPEND_ENVAR, envar("P", "/a"), 0},  {PMIX_APPEND_ENVAR, envar("Q", "z", ';'), 0},
        {PMIX_APPEND_ENVAR, envar("R", "only"), 0}, {"job.key", value::string("v"), 0},
    };
    std::vector<env_change> changes;
    info_list rest;
    std::string error;
    REQUIRE(split_env_changes(given, changes, rest, error) == PMIX_SUCCESS);
    CHECK(changes.size() == 7);
    REQUIRE(rest.size() == 1);
    CHECK(rest[0].key == "job.key");
    char** env = nullptr;
    for (const char* e : {"A=0", "C=old", "D=gone", "P=/b", "Q=y"}) pmix_argv_append_nosize(&env, e);
    REQUIRE(apply_env_changes(changes, &env) == PMIX_SUCCESS);
    const auto got = lines(env);
    PMIX_ARGV_FREE(env);
    CHECK(got == std::vector<std::string>{"A=1", "C=old", "P=/a:/b", "Q=y;z", "B=new", "R=only"});
  }

  TEST_CASE("a malformed change is refused") {
    std::vector<env_change> changes;
    info_list rest;
    std::string error;
    CHECK(split_env_changes({{PMIX_SET_ENVAR, value::string("A=1"), 0}}, changes, rest, error) ==
          PMIX_ERR_BAD_PARAM);
    CHECK(!error.empty());
    CHECK(split_env_changes({{PMIX_UNSET_ENVAR, value::string(""), 0}}, changes, rest, error) == PMIX_ERR_BAD_PARAM);
    CHECK(split_env_changes({{PMIX_SET_ENVAR, envar("", "x"), 0}}, changes, rest, error) == PMIX_ERR_BAD_PARAM);
    CHECK(apply_env_changes({}, nullptr) == PMIX_ERR_BAD_PARAM);
  }

  TEST_CASE("setup_application harvests the client library's settings, not the server's own") {
    char* environ_[] = {const_cast<char*>("PMIX_CXX_SPIN_US=0"), const_cast<char*>("PMIX_CXX_VERBOSE=3"),
                        const_cast<char*>("PMIX_CXX_SERVER_SPIN_US=9"), const_cast<char*>("PATH=/bin"),
                        const_cast<char*>("PMIX_CXXNOT=1"), nullptr};
    const auto out = harvest_envars(environ_);
    REQUIRE(out.size() == 2);
    for (const auto& i : out) CHECK(i.key == PMIX_SET_ENVAR);
    const auto& first = *std::get<std::shared_ptr<const envar_value>>(out[0].val.data);
    CHECK(first.name == "PMIX_CXX_SPIN_US");
    CHECK(first.value == "0");
    CHECK(std::get<std::shared_ptr<const envar_value>>(out[1].val.data)->name == "PMIX_CXX_VERBOSE");
  }
}
