#include "ops/rmsnorm.h"

#include <cmath>

#include "ops/dot.h"

namespace minigen {

void rmsnorm(float* out, const float* x, const float* weight, int n, float eps) {
  const float mean_square = dot(x, x, n) / static_cast<float>(n);
  const float inverse_rms = 1.0f / std::sqrt(mean_square + eps);
  for (int i = 0; i < n; ++i) out[i] = weight[i] * (x[i] * inverse_rms);
}

}  // namespace minigen
