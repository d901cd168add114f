// The library's log lines (common/log.hpp): what a client sent cannot break
// a line or reach a terminal as an escape sequence (issue 14.6).
#include "common/log.hpp"

#include <doctest/doctest.h>

#include <string>

using pmix::log::escaped;

TEST_SUITE("log") {
  TEST_CASE("control characters and backslashes are escaped, the rest is kept") {
    CHECK(escaped("plain text: ns.1 (uid 0)") == "plain text: ns.1 (uid 0)");
    CHECK(escaped("a\nb") == "a\\x0ab");
    CHECK(escaped("\x1b[31mred") == "\\x1b[31mred");
    CHECK(escaped(std::string{"nul\0end", 7}) == "nul\\x00end");
    CHECK(escaped("tab\tdel\x7f") == "tab\\x09del\\x7f");
    CHECK(escaped("back\\slash") == "back\\\\slash");
    CHECK(escaped("caf\xc3\xa9") == "caf\xc3\xa9");  // UTF-8 is left alone
    // Escaping is one-to-one: different inputs never log alike.
    CHECK(escaped("\\x0a") != escaped("\n"));
  }
}
