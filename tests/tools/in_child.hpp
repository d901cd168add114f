// Runs a test's body in a forked child, for cases that change the whole
// process or whose actor systems are not to be ended in the test's process.
#pragma once

#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <functional>

namespace pmixd_test {

// `body`'s exit status in a forked child (0: passed), or 128 + the signal
// that ended it.
inline int in_child(const std::function<int()>& body) {
  std::fflush(nullptr);
  const pid_t pid = ::fork();
  if (pid == 0) ::_exit(body());
  int status = 0;
  ::waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

}  // namespace pmixd_test
