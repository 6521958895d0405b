#include "ops/simd_override.h"

#include <cstdlib>
#include <string>

#include "core/error.h"
#include "hwy/targets.h"
#include "ops/cpu_kernel_switch.h"
#include "ops/matmul_quantized_avx_vnni.h"

namespace minigen {

void apply_simd_override_from_environment() {
  const char* value = std::getenv("MINIGEN_SIMD");
  if (value == nullptr || *value == '\0' || std::string(value) == "best") return;
  const std::string name = value;
  if (name == "avx2" || name == "avxvnni") {
    if ((hwy::SupportedTargets() & HWY_AVX2) == 0)
      throw Error("MINIGEN_SIMD=" + name + ": this CPU has no AVX2 with FMA");
    if (name == "avxvnni" && !cpu_has(CpuExtension::kAvxVnni))
      throw Error("MINIGEN_SIMD=avxvnni: this CPU has no AVX-VNNI");
    hwy::DisableTargets(HWY_AVX3 | HWY_AVX3_DL);
    if (name == "avx2") set_avx_vnni_kernel_enabled(false);
  } else if (name == "scalar") {
    // Every SIMD target off: the static target (the portable fallback) is what remains.
    hwy::DisableTargets(~static_cast<int64_t>(HWY_STATIC_TARGET));
  } else {
    throw Error("MINIGEN_SIMD='" + name + "' is not known (expected best, avxvnni, avx2 or scalar)");
  }
}

}  // namespace minigen
