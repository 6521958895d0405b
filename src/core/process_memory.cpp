#include "core/process_memory.h"

#include <sys/mman.h>
#include <unistd.h>

#include <fstream>

#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace minigen {

uint64_t resident_memory_bytes() {
  std::ifstream statm("/proc/self/statm");
  long long total_pages = 0, resident_pages = 0;
  if (!(statm >> total_pages >> resident_pages)) return 0;
  return static_cast<uint64_t>(resident_pages) * static_cast<uint64_t>(::sysconf(_SC_PAGESIZE));
}

void return_free_memory() {
#if defined(__GLIBC__)
  ::malloc_trim(0);
#endif
}

void prefer_huge_pages(void* data, std::size_t bytes) {
#if defined(MADV_HUGEPAGE)
  constexpr uintptr_t kHugePage = uintptr_t{2} << 20;
  const uintptr_t begin = (reinterpret_cast<uintptr_t>(data) + kHugePage - 1) & ~(kHugePage - 1);
  const uintptr_t end = (reinterpret_cast<uintptr_t>(data) + bytes) & ~(kHugePage - 1);
  if (end > begin) ::madvise(reinterpret_cast<void*>(begin), end - begin, MADV_HUGEPAGE);  // advice: errors ignored
#else
  (void)data;
  (void)bytes;
#endif
}

}  // namespace minigen
