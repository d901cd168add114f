// tools/pmixd/sigpipe_calls.hpp: once every thread has SIGPIPE blocked, CAF's
// OpenSSL module's SIGPIPE guard makes no system call, whatever else calls
// pthread_sigmask and sigtimedwait gets the C library's answer, and a write
// to a closed connection still cannot end the process.
//
// Each case runs in a forked child (the take-over is for the whole process
// and needs it to have one thread). "No system call" is shown by a seccomp
// filter that kills the child at the first rt_sigprocmask or
// rt_sigtimedwait.
#include <doctest/doctest.h>

#include <caf/all.hpp>
#include <caf/io/all.hpp>
#include <caf/openssl/all.hpp>

#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <signal.h>
#include <stddef.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <functional>
#include <future>
#include <string>
#include <thread>

#include "tests/tools/in_child.hpp"
#include "tools/pmixd/credentials.hpp"
#include "tools/pmixd/sigpipe_calls.hpp"

namespace {

#if defined(__x86_64__)
constexpr unsigned this_arch = AUDIT_ARCH_X86_64;
#elif defined(__aarch64__)
constexpr unsigned this_arch = AUDIT_ARCH_AARCH64;
#else
#error "pmixd_sigpipe_test: add this architecture's AUDIT_ARCH"
#endif

// From now on, in every thread of this process (tsync), rt_sigprocmask and
// rt_sigtimedwait kill it (SIGSYS).
bool forbid_signal_calls() {
  sock_filter code[] = {
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, arch)),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, this_arch, 1, 0),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, nr)),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_rt_sigprocmask, 2, 0),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_rt_sigtimedwait, 1, 0),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
  };
  sock_fprog prog{static_cast<unsigned short>(sizeof code / sizeof code[0]), code};
  return ::syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_TSYNC, &prog) == 0;
}

// CAF 0.17's guard around one OpenSSL call (libcaf_openssl, session.cpp):
// block SIGPIPE, the call, take a pending SIGPIPE, restore.
void caf_guard(const std::function<void()>& call) {
  sigset_t pipe_only, saved;
  sigemptyset(&pipe_only);
  sigaddset(&pipe_only, SIGPIPE);
  pthread_sigmask(SIG_BLOCK, &pipe_only, &saved);
  call();
  timespec zero{0, 0};
  sigtimedwait(&pipe_only, nullptr, &zero);
  pthread_sigmask(SIG_SETMASK, &saved, nullptr);
}

bool blocked_now(int sig) {
  sigset_t now;
  sigprocmask(SIG_BLOCK, nullptr, &now);
  return sigismember(&now, sig) == 1;
}

using pmixd_test::in_child;

using ping_atom = caf::atom_constant<caf::atom("sgping")>;
using pong_atom = caf::atom_constant<caf::atom("sgpong")>;

}  // namespace

TEST_CASE("the guard's calls make no system call once SIGPIPE is blocked everywhere") {
  CHECK(in_child([] {
          if (!pmixd::sigpipe_calls::take_over()) return 2;
          if (!blocked_now(SIGPIPE)) return 3;
          if (!forbid_signal_calls()) return 4;
          int fds[2];
          if (::socketpair(AF_UNIX, SOCK_STREAM, 0, fds) != 0) return 5;
          ::close(fds[1]);
          int err = 0;
          for (int i = 0; i < 1000; ++i)
            caf_guard([&] {
              // A write to a closed connection: EPIPE, and the process lives.
              err = ::write(fds[0], "x", 1) < 0 ? errno : 0;
            });
          return err == EPIPE ? 0 : 6;
        }) == 0);
}

TEST_CASE("without the take-over the guard's calls are the C library's") {
  // The same filter kills the child: the calls reach the kernel.
  CHECK(in_child([] {
          if (!forbid_signal_calls()) return 4;
          caf_guard([] {});
          return 0;
        }) == 128 + SIGSYS);
  CHECK(in_child([] {
          // Blocking SIGPIPE really blocks it, restoring really restores.
          sigset_t pipe_only, saved;
          sigemptyset(&pipe_only);
          sigaddset(&pipe_only, SIGPIPE);
          if (blocked_now(SIGPIPE)) return 2;
          pthread_sigmask(SIG_BLOCK, &pipe_only, &saved);
          if (!blocked_now(SIGPIPE)) return 3;
          pthread_sigmask(SIG_SETMASK, &saved, nullptr);
          return blocked_now(SIGPIPE) ? 4 : 0;
        }) == 0);
}

TEST_CASE("a process with another thread already is not taken over") {
  CHECK(in_child([] {
          std::promise<void> stop;
          std::thread other([f = stop.get_future()]() mutable { f.wait(); });
          const bool taken = pmixd::sigpipe_calls::take_over();
          stop.set_value();
          other.join();
          if (taken || pmixd::sigpipe_calls::taken_over()) return 2;
          // The guard's restore really restores (here: SIGPIPE stays blocked,
          // as take_over left it, and a restore to an empty mask empties it).
          sigset_t none;
          sigemptyset(&none);
          pthread_sigmask(SIG_SETMASK, &none, nullptr);
          return blocked_now(SIGPIPE) ? 3 : 0;
        }) == 0);
}

TEST_CASE("other calls still reach the C library after the take-over") {
  CHECK(in_child([] {
          if (!pmixd::sigpipe_calls::take_over()) return 2;
          sigset_t usr1;
          sigemptyset(&usr1);
          sigaddset(&usr1, SIGUSR1);
          // Another signal is blocked for real.
          if (pthread_sigmask(SIG_BLOCK, &usr1, nullptr) != 0 || !blocked_now(SIGUSR1)) return 3;
          // A pending one is taken by a wait with a timeout.
          ::raise(SIGUSR1);
          timespec second{1, 0};
          if (sigtimedwait(&usr1, nullptr, &second) != SIGUSR1) return 4;
          // pthread_sigmask's errors are its return value, errno untouched.
          errno = 0;
          if (pthread_sigmask(12345, &usr1, nullptr) != EINVAL || errno != 0) return 5;
          // The guard's "saved" mask tells the truth about what is blocked.
          sigset_t pipe_only, saved;
          sigemptyset(&pipe_only);
          sigaddset(&pipe_only, SIGPIPE);
          pthread_sigmask(SIG_BLOCK, &pipe_only, &saved);
          if (sigismember(&saved, SIGPIPE) != 1) return 6;
          pthread_sigmask(SIG_SETMASK, &saved, nullptr);
          if (!blocked_now(SIGPIPE) || !blocked_now(SIGUSR1)) return 7;
          // Unblocking SIGUSR1 works (SIG_UNBLOCK is not the guard's).
          if (pthread_sigmask(SIG_UNBLOCK, &usr1, nullptr) != 0 || blocked_now(SIGUSR1)) return 8;
          return 0;
        }) == 0);
}

TEST_CASE("CAF's OpenSSL module makes no signal system call between two actor systems") {
  // Two actor systems of this child talk through CAF's OpenSSL module on
  // loopback with a session key, as pmixd's daemons do; then 200 round
  // trips under the filter.
  CHECK(in_child([] {
          if (!pmixd::sigpipe_calls::take_over()) return 2;
          pmixd::credentials creds;
          std::string error;
          creds.dir = pmixd::make_private_dir("sigpipe_test");
          if (creds.dir.empty() || !pmixd::make_credentials(creds.dir, creds, error)) return 3;
          auto configure = [&](caf::actor_system_config& cfg) {
            cfg.set("scheduler.policy", caf::atom("sharing"));
            cfg.set("scheduler.max-threads", 2);
            cfg.set("logger.verbosity", caf::atom("quiet"));
            cfg.load<caf::io::middleman>();
            pmixd::use_credentials(cfg, creds);
          };
          caf::actor_system_config cfg_a, cfg_b;
          configure(cfg_a);
          configure(cfg_b);
          caf::actor_system a{cfg_a};
          caf::actor_system b{cfg_b};
          auto echo = a.spawn([](caf::event_based_actor* self) -> caf::behavior {
            return {[self](ping_atom, int n) {
              self->send(caf::actor_cast<caf::actor>(self->current_sender()), pong_atom::value, n);
            }};
          });
          auto port = caf::openssl::publish(echo, 0, "127.0.0.1", true);
          if (!port) return 4;
          auto peer = caf::openssl::remote_actor(b, "127.0.0.1", *port);
          if (!peer) return 5;
          auto round_trips = [&](int n) {
            std::promise<int> done;
            auto got = done.get_future();
            b.spawn([n, &done](caf::event_based_actor* self, caf::actor to) -> caf::behavior {
              self->send(to, ping_atom::value, 0);
              return {[self, to, n, &done](pong_atom, int k) {
                if (k + 1 == n) {
                  done.set_value(n);
                  self->quit();
                  return;
                }
                self->send(to, ping_atom::value, k + 1);
              }};
            }, *peer);
            return got.wait_for(std::chrono::seconds(60)) == std::future_status::ready ? got.get() : -1;
          };
          if (round_trips(20) != 20) return 6;
          pmixd::remove_credentials(creds);  // both ends have loaded them
          if (!forbid_signal_calls()) return 7;
          if (round_trips(200) != 200) return 8;
          std::fflush(nullptr);
          // Ending the actor systems is not what is tested.
          ::_exit(0);
        }) == 0);
}
