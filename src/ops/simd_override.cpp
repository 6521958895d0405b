#include "ops/simd_override.h"

#include <cstdlib>
#include <string>

#include "core/error.h"
#include "hwy/targets.h"

namespace minigen {

void apply_simd_override_from_environment() {
  const char* value = std::getenv("MINIGEN_SIMD");
  if (value == nullptr || *value == '\0' || std::string(value) == "best") return;
  const std::string name = value;
  if (name == "avx2") {
    if ((hwy::SupportedTargets() & HWY_AVX2) == 0) throw Error("MINIGEN_SIMD=avx2: this CPU has no AVX2 with FMA");
    hwy::DisableTargets(HWY_AVX3 | HWY_AVX3_DL);
  } else if (name == "scalar") {
    // Every SIMD target off: the static target (the portable fallback) is what remains.
    hwy::DisableTargets(~static_cast<int64_t>(HWY_STATIC_TARGET));
  } else {
    throw Error("MINIGEN_SIMD='" + name + "' is not known (expected best, avx2 or scalar)");
  }
}

}  // namespace minigen
