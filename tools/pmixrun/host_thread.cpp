#include "host_thread.hpp"

#include <signal.h>
#include <sys/resource.h>
#include <sys/signalfd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include <deque>
#include <mutex>
#include <utility>

namespace pmixrun {
namespace {

std::mutex mutex;
std::deque<std::function<void()>> tasks;
pthread_t host;
int wake = 0;
bool stopped = false;

}  // namespace

void set_host_thread(pthread_t thread, int wake_signal) {
  host = thread;
  wake = wake_signal;
}

void post(std::function<void()> task) {
  {
    std::lock_guard<std::mutex> guard{mutex};
    if (stopped) return;
    tasks.push_back(std::move(task));
  }
  // A pending signal is not lost: if the host thread is busy, its wait
  // (ppoll on a signalfd, or sigtimedwait) returns at once the next time it
  // sleeps.
  ::pthread_kill(host, wake);
}

int run_posted() {
  int ran = 0;
  for (;;) {
    std::function<void()> task;
    {
      std::lock_guard<std::mutex> guard{mutex};
      if (tasks.empty()) return ran;
      task = std::move(tasks.front());
      tasks.pop_front();
    }
    task();
    ++ran;
  }
}

void stop_posting() {
  std::lock_guard<std::mutex> guard{mutex};
  stopped = true;
  tasks.clear();
}

unsigned long raise_descriptor_limit() {
  rlimit lim{};
  if (::getrlimit(RLIMIT_NOFILE, &lim) != 0) return 0;
  if (lim.rlim_cur < lim.rlim_max) {
    rlimit raised = lim;
    raised.rlim_cur = lim.rlim_max;
    if (::setrlimit(RLIMIT_NOFILE, &raised) == 0) lim = raised;
  }
  return static_cast<unsigned long>(lim.rlim_cur);
}

int take_host_signals(const char* program) {
  sigset_t waited;
  sigemptyset(&waited);
  sigaddset(&waited, SIGCHLD);
  sigaddset(&waited, SIGINT);
  sigaddset(&waited, SIGTERM);
  sigaddset(&waited, SIGUSR1);
  sigset_t blocked = waited;
  sigaddset(&blocked, SIGPIPE);
  ::pthread_sigmask(SIG_BLOCK, &blocked, nullptr);
  set_host_thread(::pthread_self(), SIGUSR1);
  const int fd = ::signalfd(-1, &waited, SFD_NONBLOCK | SFD_CLOEXEC);
  if (fd < 0) std::fprintf(stderr, "%s: signalfd: %s\n", program, std::strerror(errno));
  return fd;
}

}  // namespace pmixrun
