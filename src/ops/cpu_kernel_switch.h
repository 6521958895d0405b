#pragma once
// The on/off state of a kernel that Highway's targets do not cover (ops/matmul_quantized_vnni.h: AVX-512 VNNI,
// ops/matmul_quantized_avx_vnni.h: AVX-VNNI, ops/matmul_bf16_avx512.h: AVX512_BF16), compiled with its own target
// attribute and chosen by CPUID: on when the CPU and the OS support what it needs, checked once; tests turn it off
// to hold the other path to its reference.
#include <atomic>

namespace minigen {

// The instruction-set extensions such kernels need. The AVX-512 ones imply AVX-512 F, BW and VL as well; AVX-VNNI
// (the 256-bit VEX form of vpdpbusd/vpdpwssd, on Alder Lake and later and on Zen 5) implies AVX2.
enum class CpuExtension { kAvx512Vnni, kAvx512Bf16, kAvxVnni };

// True when the CPU reports `extension` (and what it implies) and the OS saves the register state it uses (XCR0).
// Always false outside x86-64.
bool cpu_has(CpuExtension extension);

class CpuKernelSwitch {
 public:
  explicit CpuKernelSwitch(CpuExtension needs) : available_(cpu_has(needs)), enabled_(available_) {}
  bool enabled() const { return enabled_.load(std::memory_order_relaxed); }
  // Turns the kernel on (only where the CPU has it) or off; returns the previous setting.
  bool set_for_test(bool enabled) { return enabled_.exchange(enabled && available_); }

 private:
  const bool available_;
  std::atomic<bool> enabled_;
};

}  // namespace minigen
