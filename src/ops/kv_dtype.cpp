#include "ops/kv_dtype.h"

#include <cmath>
#include <cstring>
#include <string>

#include "core/error.h"

namespace minigen {

std::string_view kv_dtype_name(KvDType dtype) { return name_in(kKvDTypeNames, dtype); }

KvDType parse_kv_dtype(std::string_view name) {
  if (const auto dtype = value_named(kKvDTypeNames, name)) return *dtype;
  throw Error("unknown --kv-dtype '" + std::string(name) + "' (expected " + names_listed(kKvDTypeNames) + ")");
}

float int8_scale(std::span<const float> row) {
  float absmax = 0.0f;
  for (float value : row) absmax = std::fmax(absmax, std::fabs(value));
  return absmax / 127.0f;
}

int8_t quantize_int8(float value, float scale) {
  if (scale == 0.0f) return 0;
  // fmax/fmin rather than std::clamp: a NaN quotient ends at −127 instead of reaching an undefined cast.
  const float rounded = std::nearbyint(value / scale);
  return static_cast<int8_t>(std::fmin(std::fmax(rounded, -127.0f), 127.0f));
}

}  // namespace minigen
