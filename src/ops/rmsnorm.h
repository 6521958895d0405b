#pragma once

namespace minigen {

// out = weight ⊙ x / sqrt(mean(x²) + eps), computed as MiniMind does: x · rsqrt(mean + eps), then × weight.
// `out` may alias `x`.
void rmsnorm(float* out, const float* x, const float* weight, int n, float eps);

}  // namespace minigen
