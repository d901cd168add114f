#include "host_thread.hpp"

#include <signal.h>

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

}  // namespace pmixrun
