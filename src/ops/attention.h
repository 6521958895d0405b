#pragma once
// Causal attention of the query heads of one GQA group over a sequence's cached keys and values.
//
// The keys are taken in chunks of kAttentionChunkKeys positions (split-K, "flash-decoding"). Within chunk c:
//
//   score_j = (Σ_d q[d]·k_j[d]) / sqrt(head_dim)     one fma chain over d = 0, 1, …
//   m_c     = max_j score_j,  S_c = Σ_j exp(score_j − m_c)   the sum in 16 lanes (lane j mod 16), folded pairwise
//   O_c[d]  = Σ_j (exp(score_j − m_c) / S_c) · v_j[d]         one fma chain over j = 0, 1, …
//
// and the chunks are merged in order c = 0, 1, …, with M = max_c m_c and a_c = exp(m_c − M) · S_c:
//
//   out[d]  = Σ_c (a_c / Σ_c' a_c') · O_c[d]                   one fma chain over c
//
// With one chunk (a context of up to kAttentionChunkKeys) the merge is the identity, bit for bit, so out is O_0.
// Why chunks: the chunks of a long context can run on different threads and be merged after, so one sequence's
// decode step spreads over every core, each streaming its own stretch of the cache; a chunk's scores stay in L1.
//
// k and v are the stored elements widened to fp32 — exact for every KvDType, so bf16 and f16 follow the same
// formulas. int8 stores integers with a scale per (position, kv head); the scales enter at fixed points:
//
//   score_j = (sk_j · Σ_d q[d]·k_j[d]) / sqrt(head_dim)    the key scale multiplies the finished dot product
//   O_c[d]  = Σ_j (p_j · sv_j) · v_j[d]                    the value scale is folded into p_j first
//
// A query's output depends only on its own query and the keys it sees, chunked by absolute position and computed
// in this fixed order — not on how many queries share the forward call, nor on which thread ran which chunk — so
// prefill, chunked prefill and decode give the same bits, in every dtype, at every thread count.
#include <cstddef>
#include <span>

#include "ops/kv_block.h"

namespace minigen {

constexpr int kAttentionChunkKeys = 1024;  // a multiple of KvBlockLayout::kBlockTokens

// How many chunks `num_keys` keys make (at least 1).
inline int attention_chunk_count(int num_keys) { return (num_keys + kAttentionChunkKeys - 1) / kAttentionChunkKeys; }

struct AttentionGroup {
  const float* queries = nullptr;  // group_size consecutive query heads, head_dim floats each
  float* out = nullptr;            // same shape as queries
  int group_size = 1;              // q_heads / kv_heads
  int kv_head = 0;
};

// What one chunk leaves for the merge, per query head: m_c and S_c above.
struct ChunkSoftmax {
  float max = 0.0f;
  float sum = 0.0f;
};

// Attends over keys 0 … num_keys − 1, stored in `blocks` (block b holds positions 16b … 16b + 15) in
// layout.dtype: every chunk in order on the calling thread, then the merge. `scores` must hold
// group_size · round_up(min(num_keys, kAttentionChunkKeys), 16) floats.
void attend(const AttentionGroup& group, std::span<const std::byte* const> blocks, int num_keys,
            const KvBlockLayout& layout, float* scores);

// Chunk `chunk` of the keys 0 … num_keys − 1 alone: group.out receives O_c, softmax[h] m_c and S_c of head h.
// `scores` as for attend().
void attend_chunk(const AttentionGroup& group, std::span<const std::byte* const> blocks, int num_keys, int chunk,
                  const KvBlockLayout& layout, float* scores, ChunkSoftmax* softmax);

// The merge: partials [chunk][group_size][head_dim] (each chunk's O_c), softmax [chunk][group_size] → out
// [group_size][head_dim]. The weights in scalar code, the sums in SIMD over head_dim; the reference has its own,
// scalar, in the same order.
void merge_attention_chunks(int chunks, int group_size, int head_dim, const float* partials,
                            const ChunkSoftmax* softmax, float* out);

// The scalar reference, same order; exp is std::exp (the SIMD kernel's exp is a polynomial within 1 ulp).
void attend_reference(const AttentionGroup& group, std::span<const std::byte* const> blocks, int num_keys,
                      const KvBlockLayout& layout, float* scores);

}  // namespace minigen
