// Attention over the block-laid-out KV cache: a readable scalar reference and a Highway kernel with the same order.
#include "ops/attention.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>
#include <vector>

#include "core/assert.h"
#include "core/lane_sum.h"
#include "ops/count_dispatch.h"
#include "ops/weight_type.h"

// foreach_target.h must come before the other Highway headers, so their order is not clang-format's to sort.
// clang-format off
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "ops/attention.cpp"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"
#include "hwy/cache_control.h"
#include "hwy/contrib/math/math-inl.h"
#include "ops/fused_mul_add-inl.h"
// clang-format on

HWY_BEFORE_NAMESPACE();
namespace minigen {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

using Tag = hn::CappedTag<float, KvBlockLayout::kBlockTokens>;
constexpr int kLanes = static_cast<int>(hn::MaxLanes(Tag()));
constexpr int kVectorsPerBlock = KvBlockLayout::kBlockTokens / kLanes;

// The KV element types as the kernel loads them; each widens to fp32 exactly.
template <class T>
hn::Vec<Tag> load_widened(const T* elements) {
  const Tag d;
  if constexpr (std::is_same_v<T, float>) {
    return hn::LoadU(d, elements);
  } else if constexpr (std::is_same_v<T, int8_t>) {
    const hn::Rebind<int32_t, Tag> di32;
    return hn::ConvertTo(d, hn::PromoteTo(di32, hn::LoadU(hn::Rebind<int8_t, Tag>(), elements)));
  } else {  // hwy::bfloat16_t (a shift left by 16) or hwy::float16_t (F16C where the target has it)
    return hn::PromoteTo(d, hn::LoadU(hn::Rebind<T, Tag>(), elements));
  }
}

template <class T>
float widen(T element) {
  if constexpr (std::is_same_v<T, hwy::bfloat16_t>) {
    return bf16_to_float(element.bits);
  } else if constexpr (std::is_same_v<T, hwy::float16_t>) {
    return f16_to_float(element.bits);
  } else {
    return static_cast<float>(element);
  }
}

// Scores of kHeads query heads against kBlocks blocks of 16 keys: kHeads · kBlocks independent fma chains over
// the head dimension, interleaved so the FMA latency is hidden (a single chain would wait ~4 cycles per step).
// scores[h][16b + t] = (q_h · k_{16b+t}) / sqrt(head_dim); positions ≥ num_keys get −∞.
// int8: the key scales multiply each finished sum before the division (attention.h).
template <class T, int kHeads, int kBlocks>
void score_chains(const float* const* queries, float* const* head_scores, const std::byte* const* blocks,
                  int first_block, int num_keys, const KvBlockLayout& layout, int kv_head, float divisor) {
  const Tag d;
  using V = hn::Vec<Tag>;
  V acc[kHeads][kBlocks][kVectorsPerBlock];
  for (auto& head : acc) {
    for (auto& block : head) {
      for (auto& a : block) a = hn::Zero(d);
    }
  }
  // The next call's blocks are fetched while these are summed: a long context's blocks come from DRAM, one short
  // stretch each, too short for the hardware prefetcher to ramp up on (tiny model, 16 k cached tokens, best of
  // alternating runs: a step 3.3 → 2.8 ms in f32, 2.0 → 1.2 ms in f16). The bits do not change.
  const int num_blocks = (num_keys + KvBlockLayout::kBlockTokens - 1) / KvBlockLayout::kBlockTokens;
  const int ahead = std::min(kBlocks, num_blocks - first_block - kBlocks);
  for (int dim = 0; dim < layout.head_dim; ++dim) {
    V keys[kBlocks][kVectorsPerBlock];
    for (int b = 0; b < kBlocks; ++b) {
      const T* key_row = layout.keys<T>(blocks[first_block + b], kv_head, dim);
      for (int v = 0; v < kVectorsPerBlock; ++v) keys[b][v] = load_widened(key_row + v * kLanes);
    }
    for (int b = 0; b < ahead; ++b) hwy::Prefetch(layout.keys<T>(blocks[first_block + kBlocks + b], kv_head, dim));
    for (int h = 0; h < kHeads; ++h) {
      const V q = hn::Set(d, queries[h][dim]);
      for (int b = 0; b < kBlocks; ++b) {
        for (int v = 0; v < kVectorsPerBlock; ++v) acc[h][b][v] = fused_mul_add(q, keys[b][v], acc[h][b][v]);
      }
    }
  }
  const V divisor_vector = hn::Set(d, divisor);
  const V minus_infinity = hn::Set(d, -std::numeric_limits<float>::infinity());
  for (int b = 0; b < kBlocks; ++b) {
    const int first = (first_block + b) * KvBlockLayout::kBlockTokens;
    for (int v = 0; v < kVectorsPerBlock; ++v) {
      const int valid = std::clamp(num_keys - first - v * kLanes, 0, kLanes);
      const auto valid_lanes = hn::FirstN(d, static_cast<size_t>(valid));
      for (int h = 0; h < kHeads; ++h) {
        V sum = acc[h][b][v];
        if constexpr (std::is_same_v<T, int8_t>) {
          sum = hn::Mul(hn::LoadU(d, layout.key_scales(blocks[first_block + b], kv_head) + v * kLanes), sum);
        }
        hn::StoreU(hn::IfThenElse(valid_lanes, hn::Div(sum, divisor_vector), minus_infinity), d,
                   head_scores[h] + first + v * kLanes);
      }
    }
  }
}

template <class T, int kBlocks, int kMaxHeads = 4>
void score_chains_for(int heads, const float* const* queries, float* const* head_scores, const std::byte* const* blocks,
                      int first_block, int num_keys, const KvBlockLayout& layout, int kv_head, float divisor) {
  dispatch_count<kMaxHeads>(heads, [&](auto chain_heads) {
    score_chains<T, decltype(chain_heads)::value, kBlocks>(queries, head_scores, blocks, first_block, num_keys, layout,
                                                           kv_head, divisor);
  });
}

// exp(s − max) in place over `padded` scores (−∞ → 0), then divided by their sum in lanes mod 16, folded pairwise.
// Returns the max and the sum, for the merge of chunks.
ChunkSoftmax softmax_in_lanes(float* scores, int padded) {
  const Tag d;
  using V = hn::Vec<Tag>;
  V max_vector = hn::Set(d, -std::numeric_limits<float>::infinity());
  for (int i = 0; i < padded; i += kLanes) max_vector = hn::Max(max_vector, hn::LoadU(d, scores + i));
  const float max_score = hn::GetLane(hn::MaxOfLanes(d, max_vector));
  const V max_value = hn::Set(d, max_score);
  V sum[kVectorsPerBlock];
  for (auto& s : sum) s = hn::Zero(d);
  for (int i = 0; i < padded; i += KvBlockLayout::kBlockTokens) {
    for (int v = 0; v < kVectorsPerBlock; ++v) {
      const V e = hn::Exp(d, hn::Sub(hn::LoadU(d, scores + i + v * kLanes), max_value));
      hn::StoreU(e, d, scores + i + v * kLanes);
      sum[v] = hn::Add(sum[v], e);
    }
  }
  HWY_ALIGN float lanes[KvBlockLayout::kBlockTokens];
  for (int v = 0; v < kVectorsPerBlock; ++v) hn::Store(sum[v], d, lanes + v * kLanes);
  const float total_sum = fold_lanes_pairwise(lanes);
  const V total = hn::Set(d, total_sum);
  for (int i = 0; i < padded; i += kLanes) hn::StoreU(hn::Div(hn::LoadU(d, scores + i), total), d, scores + i);
  return {max_score, total_sum};
}

// int8: p_j ← p_j · sv_j over `padded` probabilities, once per head before the value sums (attention.h). Lanes past
// num_keys hold p = 0 and are never read.
void fold_value_scales(float* probabilities, int padded, const std::byte* const* blocks, const KvBlockLayout& layout,
                       int kv_head) {
  const Tag d;
  for (int i = 0; i < padded; i += kLanes) {
    const float* scales = layout.value_scales(blocks[i / KvBlockLayout::kBlockTokens], kv_head);
    const auto scale = hn::LoadU(d, scales + i % KvBlockLayout::kBlockTokens);
    hn::StoreU(hn::Mul(hn::LoadU(d, probabilities + i), scale), d, probabilities + i);
  }
}

// The value sums of kHeads heads × kVectors vectors of their dimensions, one fma chain over positions each:
//   out[h][16v + lane] = Σ_j p[h][j] · v_j[16v + lane]
// Each position's value vectors are loaded once for all the heads (the heads of a GQA group read the same values),
// and each head's probability is broadcast once for all the vectors: kHeads + kVectors loads feed kHeads · kVectors
// independent chains — the same chains, in the same order, as one head and one vector at a time.
template <class T, int kHeads, int kVectors>
void value_sums(const float* const* probabilities, float* const* out, int first_vector, const std::byte* const* blocks,
                int num_keys, const KvBlockLayout& layout, int kv_head) {
  const Tag d;
  using V = hn::Vec<Tag>;
  V acc[kHeads][kVectors];
  for (auto& head : acc) {
    for (auto& a : head) a = hn::Zero(d);
  }
  constexpr int kBlock = KvBlockLayout::kBlockTokens;
  constexpr int kPrefetchBlocksAhead = 2;  // as in score_chains: blocks are short stretches of DRAM
  constexpr std::size_t kRowBytes = sizeof(T) * kVectors * kLanes;
  for (int first = 0; first < num_keys; first += kBlock) {
    const int slots = std::min(kBlock, num_keys - first);
    const std::byte* block = blocks[first / kBlock];
    const std::byte* later =
        first + kPrefetchBlocksAhead * kBlock < num_keys ? blocks[first / kBlock + kPrefetchBlocksAhead] : nullptr;
    for (int slot = 0; slot < slots; ++slot) {
      if (later != nullptr) {
        const auto* row =
            reinterpret_cast<const char*>(layout.value_row<T>(later, slot, kv_head) + first_vector * kLanes);
        for (std::size_t line = 0; line < kRowBytes; line += 64) hwy::Prefetch(row + line);
      }
      const T* value_row = layout.value_row<T>(block, slot, kv_head) + first_vector * kLanes;
      V values[kVectors];
      for (int v = 0; v < kVectors; ++v) values[v] = load_widened(value_row + v * kLanes);
      for (int h = 0; h < kHeads; ++h) {
        const V p = hn::Set(d, probabilities[h][first + slot]);
        for (int v = 0; v < kVectors; ++v) acc[h][v] = fused_mul_add(p, values[v], acc[h][v]);
      }
    }
  }
  for (int h = 0; h < kHeads; ++h) {
    for (int v = 0; v < kVectors; ++v) hn::StoreU(acc[h][v], d, out[h] + (first_vector + v) * kLanes);
  }
}

// At most this many accumulators: of AVX-512's 32 registers, the rest hold the loaded values and a probability
// (AVX2 has 16).
constexpr int kValueAccumulators = kLanes >= 16 ? 24 : 12;
constexpr int kMaxValueVectors = 6;

// One chunk: `blocks` starts at the chunk's first block and num_keys counts the chunk's keys.
template <class T>
void attend_group_of(const AttentionGroup& group, const std::byte* const* blocks, int num_keys,
                     const KvBlockLayout& layout, float* scores, ChunkSoftmax* softmax) {
  constexpr int kBlock = KvBlockLayout::kBlockTokens;
  const int num_blocks = (num_keys + kBlock - 1) / kBlock;
  const int padded = num_blocks * kBlock;
  const int head_dim = layout.head_dim;
  const float divisor = std::sqrt(static_cast<float>(head_dim));
  for (int first_head = 0; first_head < group.group_size; first_head += 4) {
    const int heads = std::min(4, group.group_size - first_head);
    const float* queries[4];
    float* head_scores[4];
    for (int h = 0; h < heads; ++h) {
      queries[h] = group.queries + (first_head + h) * head_dim;
      head_scores[h] = scores + static_cast<std::size_t>(first_head + h) * padded;
    }
    int b = 0;
    // At least 8 independent chains hide the FMA latency: on AVX-512, 4 blocks at a time when the group has 1 or
    // 2 heads (minimind-3: 8 query heads over 4 kv heads), 2 blocks for 3 or 4. Every chain is the same either way.
    if (kLanes >= 16 && heads <= 2) {
      for (; b + 4 <= num_blocks; b += 4) {
        score_chains_for<T, 4, 2>(heads, queries, head_scores, blocks, b, num_keys, layout, group.kv_head, divisor);
      }
    }
    for (; b + 2 <= num_blocks; b += 2) {
      score_chains_for<T, 2>(heads, queries, head_scores, blocks, b, num_keys, layout, group.kv_head, divisor);
    }
    if (b < num_blocks)
      score_chains_for<T, 1>(heads, queries, head_scores, blocks, b, num_keys, layout, group.kv_head, divisor);
    for (int h = 0; h < heads; ++h) {
      softmax[first_head + h] = softmax_in_lanes(head_scores[h], padded);
      if constexpr (std::is_same_v<T, int8_t>) fold_value_scales(head_scores[h], padded, blocks, layout, group.kv_head);
    }
  }

  // out[h][dim] = Σ_j p[h][j] · v_j[dim], chains over j: vector chains over full vectors of dim, in slices of up to
  // kMaxValueVectors vectors × as many heads as the accumulators allow; scalar fma for the rest of dim after.
  const int vectors_per_head = head_dim / kLanes;
  for (int first_vector = 0; first_vector < vectors_per_head; first_vector += kMaxValueVectors) {
    const int vectors = std::min(kMaxValueVectors, vectors_per_head - first_vector);
    const int heads_per_pass = std::max(1, std::min(4, kValueAccumulators / vectors));
    for (int first_head = 0; first_head < group.group_size; first_head += heads_per_pass) {
      const int heads = std::min(heads_per_pass, group.group_size - first_head);
      const float* probabilities[4];
      float* out[4];
      for (int h = 0; h < heads; ++h) {
        probabilities[h] = scores + static_cast<std::size_t>(first_head + h) * padded;
        out[h] = group.out + (first_head + h) * head_dim;
      }
      dispatch_count<4>(heads, [&](auto head_count) {
        dispatch_count<kMaxValueVectors>(vectors, [&](auto vector_count) {
          constexpr int kHeads = decltype(head_count)::value, kVectors = decltype(vector_count)::value;
          if constexpr (kHeads * kVectors <= kValueAccumulators) {
            value_sums<T, kHeads, kVectors>(probabilities, out, first_vector, blocks, num_keys, layout, group.kv_head);
          }
        });
      });
    }
  }
  for (int h = 0; h < group.group_size; ++h) {
    for (int dim = vectors_per_head * kLanes; dim < head_dim; ++dim) {
      float acc = 0.0f;
      for (int j = 0; j < num_keys; ++j) {
        acc = std::fma(scores[static_cast<std::size_t>(h) * padded + j],
                       widen(layout.value_row<T>(blocks[j / kBlock], j % kBlock, group.kv_head)[dim]), acc);
      }
      group.out[h * head_dim + dim] = acc;
    }
  }
}

void attend_group(const AttentionGroup& group, const std::byte* const* blocks, int num_keys,
                  const KvBlockLayout& layout, float* scores, ChunkSoftmax* softmax) {
  switch (layout.dtype) {
    case KvDType::kF32:
      return attend_group_of<float>(group, blocks, num_keys, layout, scores, softmax);
    case KvDType::kBF16:
      return attend_group_of<hwy::bfloat16_t>(group, blocks, num_keys, layout, scores, softmax);
    case KvDType::kF16:
      return attend_group_of<hwy::float16_t>(group, blocks, num_keys, layout, scores, softmax);
    case KvDType::kInt8:
      return attend_group_of<int8_t>(group, blocks, num_keys, layout, scores, softmax);
  }
}

// The merge's sums: out[h][dim] = Σ_c weights[h·chunks + c] · partials[c][h][dim], one fma chain over c for each
// (h, dim) — vectors over dim, the rest of dim one element at a time (std::fma: the same single rounding).
void weighted_chunk_sums(int chunks, int group_size, int head_dim, const float* partials, const float* weights,
                         float* out) {
  const Tag d;
  using V = hn::Vec<Tag>;
  const auto partial = [&](int c, int h) {
    return partials + (static_cast<std::size_t>(c) * group_size + h) * head_dim;
  };
  for (int h = 0; h < group_size; ++h) {
    const float* head_weights = weights + static_cast<std::size_t>(h) * chunks;
    int dim = 0;
    for (; dim + kLanes <= head_dim; dim += kLanes) {
      V acc = hn::Zero(d);
      for (int c = 0; c < chunks; ++c)
        acc = fused_mul_add(hn::Set(d, head_weights[c]), hn::LoadU(d, partial(c, h) + dim), acc);
      hn::StoreU(acc, d, out + h * head_dim + dim);
    }
    for (; dim < head_dim; ++dim) {
      float acc = 0.0f;
      for (int c = 0; c < chunks; ++c) acc = std::fma(head_weights[c], partial(c, h)[dim], acc);
      out[h * head_dim + dim] = acc;
    }
  }
}

}  // namespace HWY_NAMESPACE
}  // namespace minigen
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace minigen {
namespace {

// What both kernels read without checking: a block for every key, the kv head inside the layout, a whole group.
void assert_attention_shape(const AttentionGroup& group, std::span<const std::byte* const> blocks, int num_keys,
                            const KvBlockLayout& layout) {
  MINIGEN_ASSERT(num_keys >= 1, "attend: a query sees its own key at least, got ", num_keys, " keys");
  const std::size_t blocks_needed = (num_keys + KvBlockLayout::kBlockTokens - 1) / KvBlockLayout::kBlockTokens;
  MINIGEN_ASSERT(blocks.size() >= blocks_needed, "attend: ", num_keys, " keys need ", blocks_needed, " blocks, got ",
                 blocks.size());
  MINIGEN_ASSERT(0 <= group.kv_head && group.kv_head < layout.kv_heads, "attend: kv head ", group.kv_head, " of ",
                 layout.kv_heads);
  MINIGEN_ASSERT(group.group_size >= 1 && group.queries != nullptr && group.out != nullptr, "attend: a group of ",
                 group.group_size, " query heads");
}

static_assert(kAttentionChunkKeys % KvBlockLayout::kBlockTokens == 0, "a chunk is whole blocks");

// Keys [first, first + count) of chunk `chunk` of num_keys keys.
struct ChunkKeys {
  int first = 0;
  int count = 0;
};

ChunkKeys chunk_keys(int num_keys, int chunk) {
  MINIGEN_ASSERT(0 <= chunk && chunk < attention_chunk_count(num_keys), "attend: chunk ", chunk, " of ",
                 attention_chunk_count(num_keys), " for ", num_keys, " keys");
  const int first = chunk * kAttentionChunkKeys;
  return {first, std::min(kAttentionChunkKeys, num_keys - first)};
}

// attend() and attend_reference(): each chunk into its own partial output, then the merge. One chunk goes straight
// to group.out (the merge of one chunk is the identity). The scratch is the calling thread's own.
template <class AttendChunk, class Merge>
void attend_chunks_in_order(const AttentionGroup& group, int num_keys, int head_dim, AttendChunk&& attend_one,
                            Merge&& merge) {
  thread_local std::vector<ChunkSoftmax> softmax;
  thread_local std::vector<float> partials;
  const int chunks = attention_chunk_count(num_keys);
  const std::size_t group_floats = static_cast<std::size_t>(group.group_size) * head_dim;
  softmax.resize(static_cast<std::size_t>(chunks) * group.group_size);
  if (chunks == 1) {
    attend_one(group, 0, softmax.data());
    return;
  }
  partials.resize(chunks * group_floats);
  for (int c = 0; c < chunks; ++c) {
    AttentionGroup part = group;
    part.out = partials.data() + c * group_floats;
    attend_one(part, c, softmax.data() + static_cast<std::size_t>(c) * group.group_size);
  }
  merge(chunks, group.group_size, head_dim, partials.data(), softmax.data(), group.out);
}

// The merge's weights, [h][c] = a_c / Σ_c' a_c' with a_c = exp(m_c − M) · S_c (attention.h); the kernel's merge
// and the reference's share them.
const float* chunk_weights(int chunks, int group_size, const ChunkSoftmax* softmax) {
  thread_local std::vector<float> weights;
  weights.resize(static_cast<std::size_t>(chunks) * group_size);
  for (int h = 0; h < group_size; ++h) {
    float* head_weights = weights.data() + static_cast<std::size_t>(h) * chunks;
    float max_score = -std::numeric_limits<float>::infinity();
    for (int c = 0; c < chunks; ++c) max_score = std::max(max_score, softmax[c * group_size + h].max);
    float total = 0.0f;
    for (int c = 0; c < chunks; ++c) {
      const ChunkSoftmax& chunk = softmax[c * group_size + h];
      head_weights[c] = std::exp(chunk.max - max_score) * chunk.sum;
      total += head_weights[c];
    }
    for (int c = 0; c < chunks; ++c) head_weights[c] /= total;
  }
  return weights.data();
}

// The reference's merge: the same weights, the sums one element at a time.
void merge_chunks_reference(int chunks, int group_size, int head_dim, const float* partials,
                            const ChunkSoftmax* softmax, float* out) {
  const float* weights = chunk_weights(chunks, group_size, softmax);
  for (int h = 0; h < group_size; ++h) {
    for (int dim = 0; dim < head_dim; ++dim) {
      float acc = 0.0f;
      for (int c = 0; c < chunks; ++c) {
        acc = std::fma(weights[static_cast<std::size_t>(h) * chunks + c],
                       partials[(static_cast<std::size_t>(c) * group_size + h) * head_dim + dim], acc);
      }
      out[h * head_dim + dim] = acc;
    }
  }
}

// The reference of one chunk: scores, softmax and value sums in the kernel's order, with std::exp.
void reference_chunk(const AttentionGroup& group, std::span<const std::byte* const> blocks, int num_keys, int chunk,
                     const KvBlockLayout& layout, float* scores, ChunkSoftmax* softmax) {
  const auto [first, count] = chunk_keys(num_keys, chunk);
  const bool int8 = layout.dtype == KvDType::kInt8;
  constexpr int kBlock = KvBlockLayout::kBlockTokens;
  const int head_dim = layout.head_dim;
  const float divisor = std::sqrt(static_cast<float>(head_dim));
  for (int h = 0; h < group.group_size; ++h) {
    const float* q = group.queries + h * head_dim;
    for (int j = 0; j < count; ++j) {
      const int key = first + j;
      float acc = 0.0f;
      const std::byte* block = blocks[key / kBlock];
      for (int dim = 0; dim < head_dim; ++dim) {
        acc = std::fma(q[dim], layout.stored_key(block, key % kBlock, group.kv_head, dim), acc);
      }
      if (int8) acc = layout.key_scales(block, group.kv_head)[key % kBlock] * acc;
      scores[j] = acc / divisor;
    }
    float max_score = -std::numeric_limits<float>::infinity();
    for (int j = 0; j < count; ++j) max_score = std::max(max_score, scores[j]);
    float lanes[kLanesInSum] = {};
    for (int j = 0; j < count; ++j) {
      scores[j] = std::exp(scores[j] - max_score);
      lanes[j % kLanesInSum] += scores[j];
    }
    const float sum = fold_lanes_pairwise(lanes);
    softmax[h] = {max_score, sum};
    for (int j = 0; j < count; ++j) scores[j] /= sum;
    for (int dim = 0; dim < head_dim; ++dim) {
      float acc = 0.0f;
      for (int j = 0; j < count; ++j) {
        const int key = first + j;
        const std::byte* block = blocks[key / kBlock];
        const float weight = int8 ? scores[j] * layout.value_scales(block, group.kv_head)[key % kBlock] : scores[j];
        acc = std::fma(weight, layout.stored_value(block, key % kBlock, group.kv_head, dim), acc);
      }
      group.out[h * head_dim + dim] = acc;
    }
  }
}

}  // namespace

HWY_EXPORT(attend_group);
HWY_EXPORT(weighted_chunk_sums);

void attend_chunk(const AttentionGroup& group, std::span<const std::byte* const> blocks, int num_keys, int chunk,
                  const KvBlockLayout& layout, float* scores, ChunkSoftmax* softmax) {
  assert_attention_shape(group, blocks, num_keys, layout);
  const ChunkKeys keys = chunk_keys(num_keys, chunk);
  HWY_DYNAMIC_DISPATCH(attend_group)
  (group, blocks.data() + keys.first / KvBlockLayout::kBlockTokens, keys.count, layout, scores, softmax);
}

void attend(const AttentionGroup& group, std::span<const std::byte* const> blocks, int num_keys,
            const KvBlockLayout& layout, float* scores) {
  attend_chunks_in_order(
      group, num_keys, layout.head_dim,
      [&](const AttentionGroup& part, int chunk, ChunkSoftmax* softmax) {
        attend_chunk(part, blocks, num_keys, chunk, layout, scores, softmax);
      },
      merge_attention_chunks);
}

void merge_attention_chunks(int chunks, int group_size, int head_dim, const float* partials,
                            const ChunkSoftmax* softmax, float* out) {
  const float* weights = chunk_weights(chunks, group_size, softmax);
  HWY_DYNAMIC_DISPATCH(weighted_chunk_sums)(chunks, group_size, head_dim, partials, weights, out);
}

void attend_reference(const AttentionGroup& group, std::span<const std::byte* const> blocks, int num_keys,
                      const KvBlockLayout& layout, float* scores) {
  assert_attention_shape(group, blocks, num_keys, layout);
  attend_chunks_in_order(
      group, num_keys, layout.head_dim,
      [&](const AttentionGroup& part, int chunk, ChunkSoftmax* softmax) {
        reference_chunk(part, blocks, num_keys, chunk, layout, scores, softmax);
      },
      merge_chunks_reference);
}

}  // namespace minigen
#endif  // HWY_ONCE
