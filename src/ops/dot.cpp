#include "ops/dot.h"

namespace minigen {

float dot(const float* a, const float* b, int n) {
  // 16 independent accumulators let the compiler keep them in vector registers without reordering any sum:
  // lane j adds the products of elements j, j+16, j+32, ... in that order.
  constexpr int kLanes = 16;
  float lane_sum[kLanes] = {};
  int i = 0;
  for (; i + kLanes <= n; i += kLanes) {
    for (int j = 0; j < kLanes; ++j) lane_sum[j] += a[i + j] * b[i + j];
  }
  for (int j = 0; i < n; ++i, ++j) lane_sum[j] += a[i] * b[i];
  // Fold the lanes pairwise: 16 → 8 → 4 → 2 → 1.
  for (int width = kLanes / 2; width >= 1; width /= 2) {
    for (int j = 0; j < width; ++j) lane_sum[j] += lane_sum[j + width];
  }
  return lane_sum[0];
}

}  // namespace minigen
