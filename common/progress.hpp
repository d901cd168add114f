// Marks the threads that run library code (spec 002, 19.2.260.7).
//
// A blocking PMIx call made from such a thread would wait for work that only
// the library's own threads can do, so it must return PMIX_ERR_WOULD_BLOCK.
// Every thread the library starts and every invocation of user code the
// library makes (host up-calls, cbfuncs, event handlers) runs inside a
// progress::scope; every blocking entry point asks in_library_thread() first.
//
// Each shared object that compiles this file has its own counter: the server
// runtime (libpmix-server) marks its CAF threads, the client library its
// progress thread; the C facade of libpmix.so.2 asks both (api/blocking.hpp).
#pragma once

namespace pmix::progress {

bool in_library_thread();

class scope {
 public:
  scope();
  ~scope();
  scope(const scope&) = delete;
  scope& operator=(const scope&) = delete;
};

// For thread hooks that cannot use RAII (CAF's thread_started/terminates).
void enter();
void leave();

}  // namespace pmix::progress
