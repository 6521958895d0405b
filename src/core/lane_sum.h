#pragma once
// The order of the sums that are not products with weights (RMSNorm's Σx², softmax's Σexp, the samplers' sums over
// the vocabulary): 16 running sums, element i going to lane i mod 16, then the lanes folded pairwise
// 16 → 8 → 4 → 2 → 1. It is what one AVX-512 register (or two AVX2 ones) does naturally, and the scalar references
// spell it out so both agree bit for bit.
namespace minigen {

constexpr int kLanesInSum = 16;

template <class T>
T fold_lanes_pairwise(T* lanes) {
  for (int width = kLanesInSum / 2; width >= 1; width /= 2) {
    for (int j = 0; j < width; ++j) lanes[j] += lanes[j + width];
  }
  return lanes[0];
}

}  // namespace minigen
