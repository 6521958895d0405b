#pragma once
// Adds LoRA's low-rank term to a projection's output, for a batch whose tokens may use different adapters:
//   out[t] += scale_t · B_t (A_t x[t])
// Tokens are grouped by the pair they use, so each adapter's A and B are read once per product, however many of
// its rows share the step; the base projection ran once for all of them before this. Each token's term is two
// matrix products of the kernels in ops/matmul.h, whose sums never depend on how many rows share a call, so a
// row's numbers are the same alone or in any mix of adapters.
#include <cstddef>
#include <span>
#include <vector>

#include "model/lora_adapter.h"
#include "ops/thread_pool.h"

namespace minigen {

// What one token adds for one matrix: its adapter's pair (nullptr: nothing) and the adapter's scale.
struct LowRankTerm {
  const LoraPair* pair = nullptr;
  float scale = 1.0f;
};

class LowRankAdder {
 public:
  // For token t < terms.size(): x row at x + t·x_stride (the pair's in_features wide), out row at
  // out + t·out_stride (the pair's out_features wide, added to).
  void add(float* out, std::size_t out_stride, const float* x, std::size_t x_stride, std::span<const LowRankTerm> terms,
           ThreadPool& pool);

 private:
  std::vector<int> tokens_;      // the tokens of the pair being applied
  std::vector<float> gathered_;  // their x rows, side by side
  std::vector<float> reduced_;   // A x, [tokens][rank]
  std::vector<float> expanded_;  // B (A x), [tokens][out]
  std::vector<const LoraPair*> pairs_seen_;
};

}  // namespace minigen
