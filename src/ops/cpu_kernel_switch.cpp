#include "ops/cpu_kernel_switch.h"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <cpuid.h>
#define MINIGEN_CPUID 1
#else
#define MINIGEN_CPUID 0
#endif

namespace minigen {

bool cpu_has_avx512(Avx512Extension extension) {
#if MINIGEN_CPUID
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  if (__get_cpuid_count(7, 0, &eax, &ebx, &ecx, &edx) == 0) return false;
  const unsigned max_subleaf = eax;
  const bool avx512f = (ebx >> 16) & 1, avx512bw = (ebx >> 30) & 1, avx512vl = (ebx >> 31) & 1;
  bool has_extension = false;
  if (extension == Avx512Extension::kVnni) {
    has_extension = (ecx >> 11) & 1;  // leaf 7 subleaf 0, ECX bit 11: AVX512_VNNI
  } else if (max_subleaf >= 1 && __get_cpuid_count(7, 1, &eax, &ebx, &ecx, &edx) != 0) {
    has_extension = (eax >> 5) & 1;  // leaf 7 subleaf 1, EAX bit 5: AVX512_BF16
  }
  // The OS must save the 512-bit state (XCR0 bits 1, 2, 5, 6, 7): checked through OSXSAVE and xgetbv.
  if (__get_cpuid(1, &eax, &ebx, &ecx, &edx) == 0 || ((ecx >> 27) & 1) == 0) return false;
  unsigned xcr0_low = 0, xcr0_high = 0;
  __asm__("xgetbv" : "=a"(xcr0_low), "=d"(xcr0_high) : "c"(0));
  return avx512f && avx512bw && avx512vl && has_extension && (xcr0_low & 0xe6) == 0xe6;
#else
  static_cast<void>(extension);
  return false;
#endif
}

}  // namespace minigen
