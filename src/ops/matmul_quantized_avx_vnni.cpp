#include "ops/matmul_quantized_avx_vnni.h"

#include <cstdint>
#include <cstring>

#include "core/assert.h"
#include "hwy/base.h"
#include "ops/cpu_kernel_switch.h"
#include "ops/quantized_tile_walk.h"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#define MINIGEN_HAVE_AVX_VNNI_KERNEL 1
#else
#define MINIGEN_HAVE_AVX_VNNI_KERNEL 0
#endif

namespace minigen {

#if MINIGEN_HAVE_AVX_VNNI_KERNEL
// Every function from here to HWY_POP_ATTRIBUTES is compiled for AVX2 + AVX-VNNI; only CPUs that pass the CPUID
// check below reach them.
HWY_PUSH_ATTRIBUTES("avx,avx2,bmi,bmi2,fma,f16c,avxvnni")
namespace avx_vnni {
#define MINIGEN_QUANT_TILE_AVX_VNNI 1
#include "ops/quantized_tile_avx2-inl.h"
#undef MINIGEN_QUANT_TILE_AVX_VNNI
}  // namespace avx_vnni
HWY_POP_ATTRIBUTES

namespace {
CpuKernelSwitch& kernel_switch() {
  static CpuKernelSwitch kernel(CpuExtension::kAvxVnni);
  return kernel;
}
}  // namespace
#endif  // MINIGEN_HAVE_AVX_VNNI_KERNEL

bool avx_vnni_kernel_enabled() {
#if MINIGEN_HAVE_AVX_VNNI_KERNEL
  return kernel_switch().enabled();
#else
  return false;
#endif
}

bool set_avx_vnni_kernel_enabled(bool enabled) {
#if MINIGEN_HAVE_AVX_VNNI_KERNEL
  return kernel_switch().set_for_test(enabled);
#else
  static_cast<void>(enabled);
  return false;
#endif
}

void quantized_panels_avx_vnni(float* out, const QuantizedRows& xq, const PackedMatrix& weight, int panel_begin,
                               int panel_end, MatmulOutput mode) {
#if MINIGEN_HAVE_AVX_VNNI_KERNEL
  MINIGEN_ASSERT(avx_vnni_kernel_enabled(), "the AVX-VNNI kernel called on a CPU without it");
  avx_vnni::quantized_panels_256(out, xq, weight, panel_begin, panel_end, mode);
#else
  static_cast<void>(out), static_cast<void>(xq), static_cast<void>(weight), static_cast<void>(panel_begin),
      static_cast<void>(panel_end), static_cast<void>(mode);
  MINIGEN_ASSERT(false, "the AVX-VNNI kernel is not compiled in this build");
#endif
}

}  // namespace minigen
