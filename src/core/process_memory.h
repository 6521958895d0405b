#pragma once
// How much memory this process holds, for the numbers minigen reports (the server's /metrics, a run's summary).
#include <cstddef>
#include <cstdint>

namespace minigen {

// Resident set size from /proc/self/statm, 0 where it cannot be read.
uint64_t resident_memory_bytes();

// Hands freed heap pages back to the system (glibc keeps freed memory below its mmap threshold for reuse), so the
// resident size drops after a large release — the fp32 matrices once a model is packed.
void return_free_memory();

// Asks the kernel to back [data, data + bytes) with transparent huge pages (madvise MADV_HUGEPAGE, the mode Debian's
// kernels default to), before the memory is first touched: filling hundreds of MB of fresh weights then takes one
// page fault per 2 MB instead of one per 4 KB — on this project's VMs the faults were a third of a 64 M model's
// load. Regions under 2 MB and kernels without THP are left alone; the advice never changes what the memory holds.
void prefer_huge_pages(void* data, std::size_t bytes);

}  // namespace minigen
