// The memory a process holds, for tests that check it stays flat over
// thousands of cycles.
#pragma once

#include <dirent.h>
#include <malloc.h>
#include <unistd.h>

#include <cstddef>
#include <cstdio>

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define PMIX_TEST_SANITIZER_HEAP 1
// The sanitizer runtimes' allocator statistics (sanitizer_common's
// allocator interface; gcc 12 ships no header for it).
extern "C" std::size_t __sanitizer_get_current_allocated_bytes();
#endif

namespace pmix::test {

// kB held: normally the resident set (/proc/self/statm). Under
// AddressSanitizer or ThreadSanitizer (the asan and tsan configs) the
// resident set says nothing about the program: ASan keeps freed blocks in
// its quarantine (up to 256 MiB) so that a use after free is caught, TSan
// keeps shadow memory and access history, and both grow however correct the
// program is. There the figure is the heap the program still has allocated
// (the sanitizer allocator's count), which is what would grow if something
// were kept from cycle to cycle.
inline long held_kb() {
#ifdef PMIX_TEST_SANITIZER_HEAP
  return static_cast<long>(__sanitizer_get_current_allocated_bytes() / 1024);
#else
  long pages = 0, resident = 0;
  std::FILE* f = std::fopen("/proc/self/statm", "r");
  if (f == nullptr) return -1;
  if (std::fscanf(f, "%ld %ld", &pages, &resident) != 2) resident = -1;
  std::fclose(f);
  return resident * (::sysconf(_SC_PAGESIZE) / 1024);
#endif
}

// kB the program has allocated and not freed: the allocator's own count
// (glibc's mallinfo2, every arena and mapped block; the sanitizer
// allocator's under a sanitizer), whatever the allocator keeps of what was
// freed. What a server holds, where the resident set also shows freed
// memory the allocator has not given back.
inline long heap_in_use_kb() {
#ifdef PMIX_TEST_SANITIZER_HEAP
  return static_cast<long>(__sanitizer_get_current_allocated_bytes() / 1024);
#else
  const auto m = ::mallinfo2();
  return static_cast<long>((m.uordblks + m.hblkhd) / 1024);
#endif
}

// This process's open descriptors, less the ones counting them takes.
inline int open_fds() {
  int n = 0;
  if (DIR* d = ::opendir("/proc/self/fd")) {
    while (::readdir(d) != nullptr) ++n;
    ::closedir(d);
  }
  return n - 3;  // ".", ".." and the directory's own descriptor
}

}  // namespace pmix::test
