#pragma once
// The peak resident size of this process over a stretch of test code (VmHWM, reset through /proc/self/clear_refs),
// so a test can show that refusing a file cost its header and not the gigabytes it claims.
#include <malloc.h>

#include <cstdint>
#include <fstream>
#include <optional>
#include <string>

namespace minigen::testing {

// VmHWM from /proc/self/status, in bytes; std::nullopt where it cannot be read.
inline std::optional<uint64_t> peak_resident_bytes() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("VmHWM:", 0) == 0) return std::stoull(line.substr(6)) * 1024;  // "VmHWM:   123456 kB"
  }
  return std::nullopt;
}

// Sets VmHWM back to the current resident size (Linux ≥ 4.0); false where the kernel does not allow it.
inline bool reset_peak_resident() {
  std::ofstream clear_refs("/proc/self/clear_refs");
  clear_refs << "5";
  clear_refs.flush();
  return static_cast<bool>(clear_refs);
}

// Hands the heap's freed pages back (what a test built and dropped would otherwise count in the next peak).
inline void return_test_memory() {
#if defined(__GLIBC__)
  ::malloc_trim(0);
#endif
}

// How much the peak resident size rose while `body` ran; std::nullopt where it cannot be measured.
template <typename Body>
std::optional<uint64_t> peak_rise_bytes(Body&& body) {
  if (!reset_peak_resident()) return std::nullopt;
  const std::optional<uint64_t> before = peak_resident_bytes();
  body();
  const std::optional<uint64_t> after = peak_resident_bytes();
  if (!before || !after) return std::nullopt;
  return *after > *before ? *after - *before : 0;
}

}  // namespace minigen::testing
