// PMIx_Log served by the process itself (common/log_sink.hpp): the channels,
// the source and time directives, and what is refused.
#include "common/log_sink.hpp"

#include <doctest/doctest.h>
#include <fcntl.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>

using namespace pmix;

namespace {

// Runs `fn` with fd 1 or 2 going to a file; returns what was written.
template <class F>
std::string captured(int fd, F fn) {
  char path[] = "/tmp/logsinkXXXXXX";
  const int file = ::mkstemp(path);
  const int saved = ::dup(fd);
  ::dup2(file, fd);
  fn();
  ::dup2(saved, fd);
  ::close(saved);
  ::close(file);
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  ::unlink(path);
  return text.str();
}

}  // namespace

TEST_SUITE("log sink") {
  TEST_CASE("stderr and stdout entries are written with their source, one line each") {
    std::string error;
    const proc_id me{"job", 3};
    pmix_status_t rc = PMIX_ERROR;
    const auto err = captured(STDERR_FILENO, [&] {
      rc = logging::log_locally(me, {{PMIX_LOG_STDERR, value::string("first"), 0}}, {}, error);
    });
    CHECK(rc == PMIX_SUCCESS);
    CHECK(err == "[job:3] first\n");
    const auto out = captured(STDOUT_FILENO, [&] {
      rc = logging::log_locally(me, {{PMIX_LOG_STDOUT, value::string("second\n"), 0}},
                                {{PMIX_LOG_SOURCE, value::proc(proc_id{"other", 0}), 0}}, error);
    });
    CHECK(rc == PMIX_SUCCESS);
    CHECK(out == "[other:0] second\n");
    const auto stamped = captured(STDERR_FILENO, [&] {
      rc = logging::log_locally(me, {{PMIX_LOG_STDERR, value::string("t"), 0}},
                                {{PMIX_LOG_TIMESTAMP, value::integer(PMIX_TIME, 0), 0}}, error);
    });
    CHECK(rc == PMIX_SUCCESS);
    CHECK(stamped.find("1970-01-01") == 0);
  }

  TEST_CASE("channels this process cannot reach are ignored unless required; bad values are refused") {
    std::string error;
    const proc_id me{"job", 0};
    CHECK(logging::log_locally(me, {{PMIX_LOG_EMAIL, value::string("x"), 0}, {PMIX_LOG_STDERR, value::string("ok"), 0}},
                               {}, error) == PMIX_SUCCESS);
    CHECK(logging::log_locally(me, {{PMIX_LOG_EMAIL, value::string("x"), PMIX_INFO_REQD}}, {}, error) ==
          PMIX_ERR_NOT_SUPPORTED);
    CHECK(logging::log_locally(me, {{PMIX_LOG_EMAIL, value::string("x"), 0}}, {}, error) == PMIX_ERR_NOT_SUPPORTED);
    CHECK(logging::log_locally(me, {{PMIX_LOG_STDERR, value::integer(PMIX_INT, 1), 0}}, {}, error) ==
          PMIX_ERR_BAD_PARAM);
    CHECK(logging::log_locally(me, {{PMIX_LOG_STDERR, value::string("x"), 0}},
                               {{"vendor.log.option", value::boolean(true), PMIX_INFO_REQD}}, error) ==
          PMIX_ERR_NOT_SUPPORTED);
  }
}
