#pragma once

namespace minigen {

// out = weight ⊙ x / sqrt(mean(x²) + eps), computed as MiniMind does: x · rsqrt(mean + eps), then × weight.
// Σx² runs in 16 lanes folded pairwise (ops/lane_sum.h), each lane an fma chain. `out` may alias `x`.
void rmsnorm(float* out, const float* x, const float* weight, int n, float eps);
// Scalar reference of the same order; the SIMD version matches it bit for bit.
void rmsnorm_reference(float* out, const float* x, const float* weight, int n, float eps);

}  // namespace minigen
