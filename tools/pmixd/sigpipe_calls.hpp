// SIGPIPE around OpenSSL calls without system calls (docs/multinode.md,
// "Where a fence's time goes").
//
// CAF 0.17's OpenSSL module (libcaf_openssl, session.cpp) blocks SIGPIPE
// around every call into OpenSSL, so that a write to a closed connection
// cannot end the process: pthread_sigmask(SIG_BLOCK, {SIGPIPE}, &saved),
// the OpenSSL call, sigtimedwait({SIGPIPE}, zero timeout) to take a
// SIGPIPE that came meanwhile, pthread_sigmask(SIG_SETMASK, &saved). Three
// system calls per call, and a message between daemons makes about four
// such calls on each side: 12 of its 20 system calls (strace of node 0's
// multiplexer thread in a 4 x 1 fence).
//
// In a process whose every thread has SIGPIPE blocked from the start, the
// guard changes nothing: blocking SIGPIPE again leaves the mask as it is,
// the SETMASK after it restores that same mask, and a SIGPIPE left pending
// in a thread where it stays blocked is never delivered. pmixd defines
// pthread_sigmask and sigtimedwait itself (the executable's definitions come
// first for libcaf_openssl, see the linkopts in BUILD.bazel): once
// take_over() has said that every thread has SIGPIPE blocked, exactly those
// three calls return at once; every other call goes to the C library.
#pragma once

namespace pmixd::sigpipe_calls {

// Blocks SIGPIPE in the calling thread and, if it is the process's only
// thread (so every thread made after inherits its mask), answers the guard's
// calls from then on. Returns whether it does. Call it in main() once the
// mask is final and before any thread starts: the "saved" mask the guard
// gets is that one. Nothing may change a thread's mask afterwards in this
// process (a child sets its own after fork, before exec:
// tools/pmixrun/jobs.cpp).
bool take_over();

// Whether take_over() succeeded (tests).
bool taken_over();

}  // namespace pmixd::sigpipe_calls
