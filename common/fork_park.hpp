// Parking what a forked child abandons.
//
// In a forked child none of the parent's threads exist, so the library
// forgets the parent's state (sessions, connections, the server runtime)
// without using or destroying it: its destructors would join threads that
// are not there, or signal the parent's waiters (notes/caf-0.17.md 5.4).
// That state is leaked on purpose. park() keeps it reachable: it moves an
// object's bytes into static storage without running any constructor or
// destructor, so everything the object points to is still referenced from a
// global. Leak checkers (LeakSanitizer, valgrind) then see it as held, not
// lost, and a real leak in a forked child stays visible. The caller then
// constructs a fresh object in place of the parked one.
//
// No allocation, no lock: safe in a pthread_atfork child handler.
#pragma once

#include <cstddef>
#include <cstring>
#include <memory>

namespace pmix::fork_park {

// Room for the objects of a few generations of forks (each parks about
// 250 bytes); beyond that the bytes are dropped, which is still no worse
// than the plain leak.
inline constexpr std::size_t capacity = 4096;
alignas(std::max_align_t) inline unsigned char storage[capacity];
inline std::size_t used = 0;

template <class T>
void park(T& object) {
  constexpr std::size_t align = alignof(std::max_align_t);
  constexpr std::size_t size = (sizeof(T) + align - 1) / align * align;
  if (used + size > capacity) return;
  std::memcpy(storage + used, static_cast<const void*>(std::addressof(object)), sizeof(T));
  used += size;
}

}  // namespace pmix::fork_park
