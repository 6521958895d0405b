// Attention over the block-laid-out KV cache: a readable scalar reference and a Highway kernel with the same order.
#include "ops/attention.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>

#include "ops/lane_sum.h"

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "ops/attention.cpp"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"
#include "hwy/contrib/math/math-inl.h"

HWY_BEFORE_NAMESPACE();
namespace minigen {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

using Tag = hn::CappedTag<float, KvBlockLayout::kBlockTokens>;
constexpr int kLanes = static_cast<int>(hn::MaxLanes(Tag()));
constexpr int kVectorsPerBlock = KvBlockLayout::kBlockTokens / kLanes;
// Independent accumulators for the value sums: each is a chain over positions, so parallelism comes from
// running several (head, dimension-vector) chains at once, never from splitting one.
constexpr int kValueChains = 8;

// scores[16b + t] = (q · k_{16b+t}) / sqrt(head_dim) for the whole block; positions ≥ num_keys get −∞.
void block_scores(const float* query, const float* block, int valid, const KvBlockLayout& layout, int kv_head,
                  float divisor, float* scores) {
  const Tag d;
  using V = hn::Vec<Tag>;
  V acc[kVectorsPerBlock];
  for (auto& a : acc) a = hn::Zero(d);
  for (int dim = 0; dim < layout.head_dim; ++dim) {
    const V q = hn::Set(d, query[dim]);
    const float* keys = layout.key(block, 0, kv_head, dim);
    for (int v = 0; v < kVectorsPerBlock; ++v) acc[v] = hn::MulAdd(q, hn::LoadU(d, keys + v * kLanes), acc[v]);
  }
  const V divisor_vector = hn::Set(d, divisor);
  const V minus_infinity = hn::Set(d, -std::numeric_limits<float>::infinity());
  for (int v = 0; v < kVectorsPerBlock; ++v) {
    const auto valid_lanes = hn::FirstN(d, static_cast<size_t>(std::clamp(valid - v * kLanes, 0, kLanes)));
    hn::StoreU(hn::IfThenElse(valid_lanes, hn::Div(acc[v], divisor_vector), minus_infinity), d, scores + v * kLanes);
  }
}

// exp(s − max) in place over `padded` scores (−∞ → 0), then divided by their sum in lanes mod 16, folded pairwise.
void softmax_in_lanes(float* scores, int padded) {
  const Tag d;
  using V = hn::Vec<Tag>;
  V max_vector = hn::Set(d, -std::numeric_limits<float>::infinity());
  for (int i = 0; i < padded; i += kLanes) max_vector = hn::Max(max_vector, hn::LoadU(d, scores + i));
  const V max_value = hn::Set(d, hn::GetLane(hn::MaxOfLanes(d, max_vector)));
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
  const V total = hn::Set(d, fold_lanes_pairwise(lanes));
  for (int i = 0; i < padded; i += kLanes) hn::StoreU(hn::Div(hn::LoadU(d, scores + i), total), d, scores + i);
}

void attend_group(const AttentionGroup& group, const float* const* blocks, int num_keys, const KvBlockLayout& layout,
                  float* scores) {
  constexpr int kBlock = KvBlockLayout::kBlockTokens;
  const int num_blocks = (num_keys + kBlock - 1) / kBlock;
  const int padded = num_blocks * kBlock;
  const int head_dim = layout.head_dim;
  const float divisor = std::sqrt(static_cast<float>(head_dim));
  for (int h = 0; h < group.group_size; ++h) {
    float* head_scores = scores + static_cast<std::size_t>(h) * padded;
    for (int b = 0; b < num_blocks; ++b) {
      block_scores(group.queries + h * head_dim, blocks[b], num_keys - b * kBlock, layout, group.kv_head, divisor,
                   head_scores + b * kBlock);
    }
    softmax_in_lanes(head_scores, padded);
  }

  // out[h][dim] = Σ_j p[h][j] · v_j[dim], chains over j; vector chains over full vectors of dim, scalar fma after.
  const Tag d;
  using V = hn::Vec<Tag>;
  const int vectors_per_head = head_dim / kLanes;
  const int chains = group.group_size * vectors_per_head;
  for (int first = 0; first < chains; first += kValueChains) {
    const int count = std::min(kValueChains, chains - first);
    V acc[kValueChains];
    for (auto& a : acc) a = hn::Zero(d);
    for (int j = 0; j < num_keys; ++j) {
      const float* block = blocks[j / kBlock];
      const float* value_row = layout.value_row(block, j % kBlock, group.kv_head);
      for (int c = 0; c < count; ++c) {
        const int h = (first + c) / vectors_per_head;
        const int v = (first + c) % vectors_per_head;
        const V p = hn::Set(d, scores[static_cast<std::size_t>(h) * padded + j]);
        acc[c] = hn::MulAdd(p, hn::LoadU(d, value_row + v * kLanes), acc[c]);
      }
    }
    for (int c = 0; c < count; ++c) {
      const int h = (first + c) / vectors_per_head;
      const int v = (first + c) % vectors_per_head;
      hn::StoreU(acc[c], d, group.out + h * head_dim + v * kLanes);
    }
  }
  for (int h = 0; h < group.group_size; ++h) {
    for (int dim = vectors_per_head * kLanes; dim < head_dim; ++dim) {
      float acc = 0.0f;
      for (int j = 0; j < num_keys; ++j) {
        acc = std::fma(scores[static_cast<std::size_t>(h) * padded + j],
                       layout.value_row(blocks[j / kBlock], j % kBlock, group.kv_head)[dim], acc);
      }
      group.out[h * head_dim + dim] = acc;
    }
  }
}

}  // namespace HWY_NAMESPACE
}  // namespace minigen
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace minigen {

HWY_EXPORT(attend_group);

void attend(const AttentionGroup& group, std::span<const float* const> blocks, int num_keys,
            const KvBlockLayout& layout, float* scores) {
  HWY_DYNAMIC_DISPATCH(attend_group)(group, blocks.data(), num_keys, layout, scores);
}

void attend_reference(const AttentionGroup& group, std::span<const float* const> blocks, int num_keys,
                      const KvBlockLayout& layout, float* scores) {
  constexpr int kBlock = KvBlockLayout::kBlockTokens;
  const int head_dim = layout.head_dim;
  const float divisor = std::sqrt(static_cast<float>(head_dim));
  for (int h = 0; h < group.group_size; ++h) {
    const float* q = group.queries + h * head_dim;
    for (int j = 0; j < num_keys; ++j) {
      float acc = 0.0f;
      for (int dim = 0; dim < head_dim; ++dim) {
        acc = std::fma(q[dim], *layout.key(blocks[j / kBlock], j % kBlock, group.kv_head, dim), acc);
      }
      scores[j] = acc / divisor;
    }
    float max_score = -std::numeric_limits<float>::infinity();
    for (int j = 0; j < num_keys; ++j) max_score = std::max(max_score, scores[j]);
    float lanes[kLanesInSum] = {};
    for (int j = 0; j < num_keys; ++j) {
      scores[j] = std::exp(scores[j] - max_score);
      lanes[j % kLanesInSum] += scores[j];
    }
    const float sum = fold_lanes_pairwise(lanes);
    for (int j = 0; j < num_keys; ++j) scores[j] /= sum;
    for (int dim = 0; dim < head_dim; ++dim) {
      float acc = 0.0f;
      for (int j = 0; j < num_keys; ++j) {
        acc = std::fma(scores[j], layout.value_row(blocks[j / kBlock], j % kBlock, group.kv_head)[dim], acc);
      }
      group.out[h * head_dim + dim] = acc;
    }
  }
}

}  // namespace minigen
#endif  // HWY_ONCE
