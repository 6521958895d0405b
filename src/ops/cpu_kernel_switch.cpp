#include "ops/cpu_kernel_switch.h"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <cpuid.h>
#define MINIGEN_CPUID 1
#else
#define MINIGEN_CPUID 0
#endif

namespace minigen {

bool cpu_has(CpuExtension extension) {
#if MINIGEN_CPUID
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  // The OS must save the registers: YMM state (XCR0 bits 1, 2) for AVX, and the 512-bit state too (bits 5, 6, 7)
  // for AVX-512 — checked through OSXSAVE and xgetbv.
  if (__get_cpuid(1, &eax, &ebx, &ecx, &edx) == 0 || ((ecx >> 27) & 1) == 0) return false;
  unsigned xcr0_low = 0, xcr0_high = 0;
  __asm__("xgetbv" : "=a"(xcr0_low), "=d"(xcr0_high) : "c"(0));
  if (__get_cpuid_count(7, 0, &eax, &ebx, &ecx, &edx) == 0) return false;
  const unsigned max_subleaf = eax;
  const unsigned leaf7_ecx = ecx;
  const bool avx2 = (ebx >> 5) & 1;
  const bool avx512 = ((ebx >> 16) & 1) && ((ebx >> 30) & 1) && ((ebx >> 31) & 1);  // F, BW, VL
  unsigned subleaf1_eax = 0;
  if (max_subleaf >= 1 && __get_cpuid_count(7, 1, &eax, &ebx, &ecx, &edx) != 0) subleaf1_eax = eax;
  switch (extension) {
    case CpuExtension::kAvx512Vnni:  // leaf 7 subleaf 0, ECX bit 11
      return avx512 && ((leaf7_ecx >> 11) & 1) && (xcr0_low & 0xe6) == 0xe6;
    case CpuExtension::kAvx512Bf16:  // leaf 7 subleaf 1, EAX bit 5
      return avx512 && ((subleaf1_eax >> 5) & 1) && (xcr0_low & 0xe6) == 0xe6;
    case CpuExtension::kAvxVnni:  // leaf 7 subleaf 1, EAX bit 4
      return avx2 && ((subleaf1_eax >> 4) & 1) && (xcr0_low & 0x6) == 0x6;
  }
  return false;
#else
  static_cast<void>(extension);
  return false;
#endif
}

}  // namespace minigen
