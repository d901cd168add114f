// sigpipe_calls.hpp: the SIGPIPE guard of CAF's OpenSSL module, answered
// without system calls in a process where SIGPIPE is blocked everywhere.
#include "tools/pmixd/sigpipe_calls.hpp"

#include <dirent.h>
#include <dlfcn.h>
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstring>

namespace {

// Set once, before any other thread exists; read by every thread after.
std::atomic<bool> blocked_everywhere{false};

// The word of a sigset_t past the kernel's 64 signals (glibc's sigset_t has
// 1,024 bits; system calls pass only the first 8 bytes): the "saved" mask
// the guard's block hands back carries this mark, and the SETMASK that
// restores a marked mask does nothing.
constexpr std::size_t mark_word = sizeof(sigset_t) / sizeof(unsigned long) - 1;
constexpr unsigned long mark = 0x70697065676f6e65UL;

bool is_only_sigpipe(const sigset_t* set) {
  sigset_t pipe_only;
  sigemptyset(&pipe_only);
  sigaddset(&pipe_only, SIGPIPE);
  // The signals the kernel knows (64: the first 8 bytes) decide.
  return std::memcmp(set, &pipe_only, sizeof(std::uint64_t)) == 0;
}

// The mask every thread has (the one take_over() found, which threads made
// after inherit), marked: what the guard's block hands back as "saved".
sigset_t marked_mask;

bool is_marked(const sigset_t* set) { return reinterpret_cast<const unsigned long*>(set)[mark_word] == mark; }

int process_threads() {
  DIR* d = ::opendir("/proc/self/task");
  if (d == nullptr) return -1;
  int n = 0;
  while (const dirent* e = ::readdir(d))
    if (e->d_name[0] != '.') ++n;
  ::closedir(d);
  return n;
}

using sigtimedwait_fn = int (*)(const sigset_t*, siginfo_t*, const timespec*);

sigtimedwait_fn libc_sigtimedwait() {
  static const auto f = reinterpret_cast<sigtimedwait_fn>(::dlsym(RTLD_NEXT, "sigtimedwait"));
  return f;
}

}  // namespace

namespace pmixd::sigpipe_calls {

bool take_over() {
  sigset_t pipe_only;
  sigemptyset(&pipe_only);
  sigaddset(&pipe_only, SIGPIPE);
  if (::sigprocmask(SIG_BLOCK, &pipe_only, &marked_mask) != 0) return false;
  sigaddset(&marked_mask, SIGPIPE);
  reinterpret_cast<unsigned long*>(&marked_mask)[mark_word] = mark;
  // Resolved now, not in a thread that has just forked.
  if (libc_sigtimedwait() == nullptr) return false;
  if (process_threads() != 1) return false;
  blocked_everywhere.store(true, std::memory_order_release);
  return true;
}

bool taken_over() { return blocked_everywhere.load(std::memory_order_acquire); }

}  // namespace pmixd::sigpipe_calls

// glibc's sigprocmask and pthread_sigmask are one function since 2.32
// (sigprocmask calls it internally, not through this definition); only the
// way an error is told differs.
extern "C" int pthread_sigmask(int how, const sigset_t* __restrict set, sigset_t* __restrict old) noexcept {
  if (set != nullptr && blocked_everywhere.load(std::memory_order_relaxed)) {
    if (how == SIG_BLOCK && old != nullptr && is_only_sigpipe(set)) {
      // SIGPIPE is blocked already: nothing to change. The "saved" mask is
      // marked so that its restore changes nothing either.
      *old = marked_mask;
      return 0;
    }
    if (how == SIG_SETMASK && is_marked(set)) return 0;
  }
  const int saved_errno = errno;
  if (::sigprocmask(how, set, old) == 0) return 0;
  const int e = errno;
  errno = saved_errno;
  return e;
}

extern "C" int sigtimedwait(const sigset_t* __restrict set, siginfo_t* __restrict info,
                            const timespec* __restrict timeout) {
  // The guard's "take a SIGPIPE that came meanwhile": one left pending stays
  // blocked in this thread, so it is never delivered.
  if (timeout != nullptr && timeout->tv_sec == 0 && timeout->tv_nsec == 0 &&
      blocked_everywhere.load(std::memory_order_relaxed) && is_only_sigpipe(set)) {
    errno = EAGAIN;
    return -1;
  }
  if (auto f = libc_sigtimedwait()) return f(set, info, timeout);
  return static_cast<int>(::syscall(SYS_rt_sigtimedwait, set, info, timeout, sizeof(std::uint64_t)));
}
