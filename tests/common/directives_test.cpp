// The directive rule (common/directives.hpp): an attribute a call does not
// support is ignored unless the caller marked it PMIX_INFO_REQD.
#include "common/directives.hpp"

#include <doctest/doctest.h>

#include <cstring>

using namespace pmix;

TEST_SUITE("directives") {
  TEST_CASE("unsupported directives are ignored unless required; supported ones pass either way") {
    const info_list plain = {{"vendor.knob", value::boolean(true), 0}, {PMIX_TIMEOUT, value::integer(PMIX_INT, 3), 0}};
    CHECK(directives::check("test", plain, {}) == PMIX_SUCCESS);
    const info_list required = {{PMIX_COLLECT_DATA, value::boolean(true), PMIX_INFO_REQD},
                                {"vendor.knob", value::boolean(true), PMIX_INFO_REQD}};
    CHECK(directives::check("test", required, {PMIX_COLLECT_DATA}) == PMIX_ERR_NOT_SUPPORTED);
    CHECK(directives::check("test", required, {PMIX_COLLECT_DATA, "vendor.knob"}) == PMIX_SUCCESS);
    CHECK(directives::unsupported("test", "k", 0, "why") == PMIX_SUCCESS);
    CHECK(directives::unsupported("test", "k", PMIX_INFO_REQD, "why") == PMIX_ERR_NOT_SUPPORTED);
  }

  TEST_CASE("the C form reads keys without a terminator and a NULL array") {
    pmix_info_t info[2];
    bool on = true;
    PMIx_Info_load(&info[0], "vendor.a", &on, PMIX_BOOL);
    PMIx_Info_load(&info[1], "vendor.b", &on, PMIX_BOOL);
    CHECK(directives::check("test", info, 2, {}) == PMIX_SUCCESS);
    info[1].flags |= PMIX_INFO_REQD;
    CHECK(directives::check("test", info, 2, {}) == PMIX_ERR_NOT_SUPPORTED);
    CHECK(directives::check("test", info, 2, {"vendor.b"}) == PMIX_SUCCESS);
    // A key filling its whole array (no NUL) is read to its bound.
    std::memset(info[1].key, 'x', sizeof info[1].key);
    CHECK(directives::check("test", info, 2, {}) == PMIX_ERR_NOT_SUPPORTED);
    CHECK(directives::check("test", nullptr, 3, {}) == PMIX_SUCCESS);
  }
}
