#include "core/process_memory.h"

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

}  // namespace minigen
