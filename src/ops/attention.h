#pragma once
// Causal attention of the query heads of one GQA group over a sequence's cached keys and values.
//
//   score_j = (Σ_d q[d]·k_j[d]) / sqrt(head_dim)     one fma chain over d = 0, 1, …
//   p_j     = exp(score_j − max) / Σ exp(…)          the sum in 16 lanes (lane j mod 16), folded pairwise
//   out[d]  = Σ_j p_j · v_j[d]                       one fma chain over j = 0, 1, …
//
// k and v are the stored elements widened to fp32 — exact for every KvDType, so bf16 and f16 follow the same
// formulas. int8 stores integers with a scale per (position, kv head); the scales enter at fixed points:
//
//   score_j = (sk_j · Σ_d q[d]·k_j[d]) / sqrt(head_dim)    the key scale multiplies the finished dot product
//   out[d]  = Σ_j (p_j · sv_j) · v_j[d]                    the value scale is folded into p_j first
//
// A query's output depends only on its own query and the keys it sees, computed in this fixed order — not on how
// many queries share the forward call — so prefill, chunked prefill and decode give the same bits, in every dtype.
#include <cstddef>
#include <span>

#include "ops/kv_block.h"

namespace minigen {

struct AttentionGroup {
  const float* queries = nullptr;  // group_size consecutive query heads, head_dim floats each
  float* out = nullptr;            // same shape as queries
  int group_size = 1;              // q_heads / kv_heads
  int kv_head = 0;
};

// Attends over keys 0 … num_keys − 1, stored in `blocks` (block b holds positions 16b … 16b + 15) in
// layout.dtype. `scores` must hold group_size · round_up(num_keys, 16) floats.
void attend(const AttentionGroup& group, std::span<const std::byte* const> blocks, int num_keys,
            const KvBlockLayout& layout, float* scores);

// The scalar reference, same order; exp is std::exp (the SIMD kernel's exp is a polynomial within 1 ulp).
void attend_reference(const AttentionGroup& group, std::span<const std::byte* const> blocks, int num_keys,
                      const KvBlockLayout& layout, float* scores);

}  // namespace minigen
