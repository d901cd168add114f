// The library's log lines (common/log.hpp): what a client sent cannot break
// a line or reach a terminal as an escape sequence (issue 14.6).
#include "common/log.hpp"

#include <doctest/doctest.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
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

  TEST_CASE("PMIX_CXX_LOG_FILE: the lines are appended to that file instead of stderr") {
    // A server inside slurmstepd, whose stderr goes nowhere, logs there.
    // (The file is chosen at the first line a process writes.)
    char path[] = "/tmp/logfileXXXXXX";
    const int fd = ::mkstemp(path);
    REQUIRE(fd >= 0);
    REQUIRE(::write(fd, "earlier\n", 8) == 8);
    ::close(fd);
    REQUIRE(::setenv("PMIX_CXX_LOG_FILE", path, 1) == 0);
    pmix::log::write(pmix::log::level::error, "test", "first line");
    pmix::log::write(pmix::log::level::info, "test", "second\nline");
    std::ifstream in(path);
    std::stringstream text;
    text << in.rdbuf();
    const std::string pid = std::to_string(::getpid());
    CHECK(text.str() == "earlier\n[pmix " + pid + "] error test: first line\n[pmix " + pid +
                            "] info test: second\\x0aline\n");
    ::unlink(path);
  }
}
