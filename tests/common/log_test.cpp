// The library's log lines (common/log.hpp): what a client sent cannot break
// a line or reach a terminal as an escape sequence (issue 14.6).
#include "common/log.hpp"

#include <doctest/doctest.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <limits>
#include <sstream>
#include <string>
#include <string_view>

using pmix::log::escaped;

namespace {

// What an ostream with its default flags makes of the same parts: the log
// printed them so until it stopped using streams (common/log.hpp).
template <class... Ts>
std::string streamed(const Ts&... parts) {
  std::ostringstream out;
  (out << ... << parts);
  return out.str();
}

enum plain_enum { first_value = 3, second_value = -7 };

}  // namespace

TEST_SUITE("log") {
  TEST_CASE("a line's parts read as an ostream printed them") {
    using pmix::log::format;
    const std::string text = "ns.1";
    const std::string_view view = "view";
    char buffer[] = "mutable";
    char* mutable_text = buffer;
    const char* c_text = "c text";
    int number = 42;
    const int* pointer = &number;
    CHECK(format("literal ", text, ' ', view, ' ', c_text, ' ', mutable_text, ' ', buffer) ==
          streamed("literal ", text, ' ', view, ' ', c_text, ' ', mutable_text, ' ', buffer));
    CHECK(format(0, -1, std::numeric_limits<std::int64_t>::min(), std::numeric_limits<std::uint64_t>::max(),
                 std::uint32_t{4294967294u}, short{-12}, std::size_t{7}) ==
          streamed(0, -1, std::numeric_limits<std::int64_t>::min(), std::numeric_limits<std::uint64_t>::max(),
                   std::uint32_t{4294967294u}, short{-12}, std::size_t{7}));
    CHECK(format(true, false, 'x', static_cast<unsigned char>('y'), static_cast<signed char>('z')) ==
          streamed(true, false, 'x', static_cast<unsigned char>('y'), static_cast<signed char>('z')));
    for (double d : {0.0, 1.5, -2.25, 0.1, 1e-7, 123456789.0, 3.14159265, 1e300})
      CHECK(format(d) == streamed(d));
    CHECK(format(2.5f) == streamed(2.5f));
    CHECK(format(first_value, second_value) == streamed(first_value, second_value));
    CHECK(format(pointer) == streamed(pointer));
    CHECK(format(static_cast<const void*>(nullptr)) == streamed(static_cast<const void*>(nullptr)));
    CHECK(format() == "");
  }

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
