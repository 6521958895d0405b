#pragma once
// How much memory this process holds, for the numbers minigen reports (the server's /metrics, a run's summary).
#include <cstdint>

namespace minigen {

// Resident set size from /proc/self/statm, 0 where it cannot be read.
uint64_t resident_memory_bytes();

// Hands freed heap pages back to the system (glibc keeps freed memory below its mmap threshold for reuse), so the
// resident size drops after a large release — the fp32 matrices once a model is packed.
void return_free_memory();

}  // namespace minigen
