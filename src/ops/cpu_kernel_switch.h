#pragma once
// The on/off state of a kernel that Highway's targets do not cover (ops/matmul_quantized_vnni.h: AVX-512 VNNI,
// ops/matmul_bf16_avx512.h: AVX512_BF16), compiled with its own target attribute and chosen by CPUID: on when the
// CPU and the OS support what it needs, checked once; tests turn it off to hold the other path to its reference.
#include <atomic>

namespace minigen {

// The AVX-512 extensions such kernels need beyond F, BW and VL.
enum class Avx512Extension { kVnni, kBf16 };

// True when the CPU reports AVX-512 F, BW, VL and `extension`, and the OS saves the 512-bit register state (XCR0).
// Always false outside x86-64.
bool cpu_has_avx512(Avx512Extension extension);

class CpuKernelSwitch {
 public:
  explicit CpuKernelSwitch(Avx512Extension needs) : available_(cpu_has_avx512(needs)), enabled_(available_) {}
  bool enabled() const { return enabled_.load(std::memory_order_relaxed); }
  // Turns the kernel on (only where the CPU has it) or off; returns the previous setting.
  bool set_for_test(bool enabled) { return enabled_.exchange(enabled && available_); }

 private:
  const bool available_;
  std::atomic<bool> enabled_;
};

}  // namespace minigen
