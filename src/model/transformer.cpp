#include "model/transformer.h"

#include <algorithm>
#include <cstring>
#include <numeric>
#include <set>
#include <string>

#include "cache/kv_cache.h"
#include "core/assert.h"
#include "core/error.h"
#include "core/profiler.h"
#include "ops/activation.h"
#include "ops/attention.h"
#include "ops/rmsnorm.h"
#include "ops/softmax.h"

namespace minigen {
namespace {

float* row_of(std::vector<float>& buffer, int token, int width) {
  return buffer.data() + static_cast<std::size_t>(token) * width;
}

void grow(std::vector<float>& buffer, std::size_t size) {
  if (buffer.size() < size) buffer.resize(size);
}

// Below this many tokens a per-token step (norm, RoPE, SiLU) is cheaper done inline than handed to the pool.
constexpr int kTokensWorthSplitting = 8;

}  // namespace

namespace {

const Model& with_matrices(const Model& model) {
  if (model.matrices_released()) throw Error("the model's matrices were released after packing; load it again");
  return model;
}

}  // namespace

Transformer::Transformer(const Model& model, ThreadPool& pool, WeightType weight_type,
                         std::optional<ActivationCodes> activations)
    : model_(with_matrices(model)),
      pool_(pool),
      packed_(pack_weights(model.config, model.weights, weight_type)),
      expert_token_counts_(static_cast<std::size_t>(model.config.num_layers) * model.config.num_experts, 0) {
  // The output projection keeps its int16 codes: with int8 ones the W8A8 logits moved further from f32 on every
  // text and model measured (docs/quantization-and-perplexity.md), at no measurable gain in speed — a prefill runs
  // it for one token, a decode step's 6,400 × 768 of it is 5 % of the 104 M model's bytes.
  if (activations) use_activations(packed_, *activations, /*output_projection=*/false);
}

std::size_t Transformer::weight_bytes() const {
  const ModelConfig& config = model_.config;
  std::size_t norm_floats = static_cast<std::size_t>(config.hidden_size) * (2 * config.num_layers + 1);
  if (config.qk_norm) norm_floats += static_cast<std::size_t>(2) * config.head_dim * config.num_layers;
  return packed_.matrix_bytes() + norm_floats * sizeof(float);
}

template <class Body>
void Transformer::for_each_token(int count, Body&& body) {
  if (count < kTokensWorthSplitting) {
    for (int t = 0; t < count; ++t) body(t);
    return;
  }
  pool_.parallel_for(count, [&](int64_t begin, int64_t end) {
    for (int64_t t = begin; t < end; ++t) body(static_cast<int>(t));
  });
}

void Transformer::rmsnorm_tokens(float* out, const float* in, const std::vector<float>& weight, int count) {
  const int hidden = model_.config.hidden_size;
  const float eps = model_.config.rms_norm_eps;
  for_each_token(count, [&](int t) {
    rmsnorm(out + static_cast<std::size_t>(t) * hidden, in + static_cast<std::size_t>(t) * hidden, weight.data(),
            hidden, eps);
  });
}

void check_fits_context(const ModelConfig& config, int past_tokens, std::size_t new_tokens) {
  const uint64_t end_position = static_cast<uint64_t>(past_tokens) + new_tokens;
  if (end_position > static_cast<uint64_t>(config.max_position_embeddings)) {
    throw Error("the sequence would reach " + std::to_string(end_position) + " tokens, beyond the model's context of " +
                std::to_string(config.max_position_embeddings));
  }
}

void Transformer::lay_out_tokens(std::span<const ForwardRow> rows) {
  const ModelConfig& config = model_.config;
  token_row_.clear();
  token_position_.clear();
  token_adapter_.clear();
  any_adapter_ = false;
  std::set<const KvSequence*> caches_seen;
  for (std::size_t r = 0; r < rows.size(); ++r) {
    const ForwardRow& row = rows[r];
    if (row.cache == nullptr) throw Error("forward: row " + std::to_string(r) + " has no KV cache");
    if (row.tokens.empty()) throw Error("forward: row " + std::to_string(r) + " feeds no tokens");
    if (!caches_seen.insert(row.cache).second) throw Error("forward: two rows share one KV cache");
    const LoraAdapter* adapter = row.adapter != nullptr ? row.adapter : model_.adapter.get();
    if (adapter != nullptr && adapter->layers.size() != static_cast<std::size_t>(config.num_layers)) {
      throw Error("forward: row " + std::to_string(r) + "'s adapter was made for a model of " +
                  std::to_string(adapter->layers.size()) + " layers, not " + std::to_string(config.num_layers));
    }
    any_adapter_ = any_adapter_ || adapter != nullptr;
    const int first_position = row.cache->length();
    check_fits_context(config, first_position, row.tokens.size());
    for (std::size_t i = 0; i < row.tokens.size(); ++i) {
      const int token = row.tokens[i];
      if (token < 0 || token >= config.vocab_size) {
        throw Error("token id " + std::to_string(token) + " is outside the vocabulary [0, " +
                    std::to_string(config.vocab_size) + ")");
      }
      token_row_.push_back(static_cast<int>(r));
      token_position_.push_back(first_position + static_cast<int>(i));
      token_adapter_.push_back(adapter);
    }
  }
  token_count_ = static_cast<int>(token_row_.size());
}

void Transformer::reserve_tokens(int tokens, int logit_rows) {
  const ModelConfig& config = model_.config;
  const std::size_t count = static_cast<std::size_t>(std::max(tokens, logit_rows));
  const std::size_t intermediate = static_cast<std::size_t>(config.intermediate_size);
  grow(residual_, count * config.hidden_size);
  grow(normed_, count * config.hidden_size);
  grow(qkv_, count * (config.q_width() + 2 * config.kv_width()));
  grow(attention_out_, count * config.q_width());
  if (config.num_experts == 0) {
    grow(gate_up_, count * 2 * intermediate);
    grow(activated_, count * intermediate);
  }
  if (logits_.size() < static_cast<std::size_t>(logit_rows) * config.vocab_size) {
    logits_.resize(static_cast<std::size_t>(logit_rows) * config.vocab_size);
  }
}

void Transformer::warm_up() {
  if (warmed_up_) return;
  warmed_up_ = true;
  const ModelConfig& config = model_.config;
  KvCache scratch(config.kv_layout(KvDType::kF32), 1, 1);
  const int token = 0;
  const ForwardRow row{&scratch, std::span<const int>(&token, 1), false};
  const std::vector<int64_t> expert_counts = expert_token_counts_;
  const ProfileSuspension not_the_run;  // loading: --profile describes the generation
  forward(std::span<const ForwardRow>(&row, 1));
  expert_token_counts_ = expert_counts;
}

const std::vector<float>& Transformer::forward(std::span<const ForwardRow> rows) {
  ProfileZone zone(Zone::kForward);
  const ModelConfig& config = model_.config;
  const int hidden = config.hidden_size;
  lay_out_tokens(rows);
  for (const ForwardRow& row : rows) row.cache->reserve_for(static_cast<int>(row.tokens.size()));
  MINIGEN_ASSERT(token_count_ == static_cast<int>(token_position_.size()) && token_count_ > 0,
                 "forward: ", token_count_, " tokens laid out, ", token_position_.size(), " positions");

  // h = embed[ids] (MiniMind does not scale the embedding).
  // The rows come from the packed matrix (the tied lm_head), as the kernels see its weights.
  grow(residual_, static_cast<std::size_t>(token_count_) * hidden);
  int token = 0;
  for (const ForwardRow& row : rows) {
    for (int id : row.tokens) packed_.embedding().row(id, row_of(residual_, token++, hidden));
  }

  for (int layer = 0; layer < config.num_layers; ++layer) {
    const LayerWeights& weights = model_.weights.layers[layer];
    const PackedLayer& packed = packed_.layers[layer];
    attention_block(weights, packed, layer, rows);  // h = h + Attn(RMSNorm_in(h))
    feed_forward_block(weights, packed, layer);     // h = h + MLP(RMSNorm_post(h))
  }
  token = 0;
  for (const ForwardRow& row : rows) {
    row.cache->advance(static_cast<int>(row.tokens.size()));
    token += static_cast<int>(row.tokens.size());
    // The cache now ends at the last position this call fed for the row: nothing skipped, nothing fed twice.
    MINIGEN_ASSERT(row.cache->length() == token_position_[token - 1] + 1, "forward: a cache of length ",
                   row.cache->length(), " after feeding position ", token_position_[token - 1]);
  }

  // Final RMSNorm and the classifier, only for the positions whose logits are wanted.
  std::vector<int> wanted;
  token = 0;
  for (const ForwardRow& row : rows) {
    const int count = static_cast<int>(row.tokens.size());
    if (row.all_logits) {
      for (int i = 0; i < count; ++i) wanted.push_back(token + i);
    } else {
      wanted.push_back(token + count - 1);
    }
    token += count;
  }
  const int wanted_count = static_cast<int>(wanted.size());
  grow(normed_, static_cast<std::size_t>(wanted_count) * hidden);
  for_each_token(wanted_count, [&](int i) {
    rmsnorm(row_of(normed_, i, hidden), row_of(residual_, wanted[i], hidden), model_.weights.final_norm.data(), hidden,
            config.rms_norm_eps);
  });
  logits_.resize(static_cast<std::size_t>(wanted_count) * config.vocab_size);
  MINIGEN_ASSERT(packed_.lm_head.out_features() == config.vocab_size && packed_.lm_head.in_features() == hidden,
                 "forward: an lm_head of ", packed_.lm_head.out_features(), "×", packed_.lm_head.in_features(),
                 " for vocabulary ", config.vocab_size, " and hidden ", hidden);
  matmul(logits_.data(), normed_.data(), packed_.lm_head, wanted_count, pool_);
  return logits_;
}

void Transformer::attention_block(const LayerWeights& layer, const PackedLayer& packed, int layer_index,
                                  std::span<const ForwardRow> rows) {
  const ModelConfig& config = model_.config;
  const int hidden = config.hidden_size;
  const int head_dim = config.head_dim;
  const int q_width = config.q_width();
  const int kv_width = config.kv_width();
  const int qkv_width = q_width + 2 * kv_width;
  const std::size_t tokens = token_count_;

  grow(normed_, tokens * hidden);
  rmsnorm_tokens(normed_.data(), residual_.data(), layer.input_norm, token_count_);
  grow(qkv_, tokens * qkv_width);
  MINIGEN_ASSERT(packed.qkv.out_features() == qkv_width && packed.qkv.in_features() == hidden &&
                     packed.o_proj.out_features() == hidden && packed.o_proj.in_features() == q_width,
                 "attention: qkv ", packed.qkv.out_features(), "×", packed.qkv.in_features(), ", o_proj ",
                 packed.o_proj.out_features(), "×", packed.o_proj.in_features(), " for hidden ", hidden);
  matmul(qkv_.data(), normed_.data(), packed.qkv, token_count_, pool_);  // [q | k | v] per token
  if (any_adapter_) {  // q_proj(x) + B(A x) for each wrapped one of q, k, v: before qk-norm and RoPE, as in MiniMind
    const auto add = [&](std::size_t offset, auto pick) {
      add_adapter_terms(qkv_.data() + offset, qkv_width, normed_.data(), hidden, token_count_, layer_index, nullptr,
                        pick);
    };
    add(0, [](const LoraLayer& l) { return &l.q; });
    add(q_width, [](const LoraLayer& l) { return &l.k; });
    add(q_width + kv_width, [](const LoraLayer& l) { return &l.v; });
  }

  // qk-norm (minimind-3) then RoPE, then K and V go straight into the cache slot for their position.
  for_each_token(token_count_, [&](int t) {
    const int position = token_position_[t];
    float* q = row_of(qkv_, t, qkv_width);
    float* k = q + q_width;
    const float* v = k + kv_width;
    for (int h = 0; h < config.num_q_heads; ++h) {
      float* head = q + h * head_dim;
      if (config.qk_norm) rmsnorm(head, head, layer.q_norm.data(), head_dim, config.rms_norm_eps);
      model_.rope.apply(head, position);
    }
    for (int h = 0; h < config.num_kv_heads; ++h) {
      float* head = k + h * head_dim;
      if (config.qk_norm) rmsnorm(head, head, layer.k_norm.data(), head_dim, config.rms_norm_eps);
      model_.rope.apply(head, position);
    }
    rows[token_row_[t]].cache->write(layer_index, position, k, v);
  });

  attend_tokens(layer_index, rows);

  // h = h + o_proj(attention): the add is fused into the product's store.
  matmul(residual_.data(), attention_out_.data(), packed.o_proj, token_count_, pool_, MatmulOutput::kAddTo);
  if (any_adapter_) {
    add_adapter_terms(residual_.data(), hidden, attention_out_.data(), q_width, token_count_, layer_index, nullptr,
                      [](const LoraLayer& l) { return &l.o; });
  }
}

template <class Pick>
void Transformer::add_adapter_terms(float* out, std::size_t out_stride, const float* x, std::size_t x_stride, int count,
                                    int layer_index, const int* tokens, Pick&& pick) {
  low_rank_terms_.assign(count, LowRankTerm{});
  bool any = false;
  for (int i = 0; i < count; ++i) {
    const LoraAdapter* adapter = token_adapter_[tokens != nullptr ? tokens[i] : i];
    if (adapter == nullptr) continue;
    const LoraPair* pair = pick(adapter->layers[layer_index]);
    if (pair == nullptr || !pair->present()) continue;
    low_rank_terms_[i] = {pair, adapter->scale};
    any = true;
  }
  if (any) low_rank_.add(out, out_stride, x, x_stride, low_rank_terms_, pool_);
}

// The attention zone opens here rather than in attend(), which runs per (token, kv head) or (token, chunk, kv head)
// on the pool's threads (ops/attention_split.h).
void Transformer::attend_tokens(int layer_index, std::span<const ForwardRow> rows) {
  ProfileZone zone(Zone::kAttention);
  const ModelConfig& config = model_.config;
  const int q_width = config.q_width();
  const int qkv_width = q_width + 2 * config.kv_width();
  const std::size_t tokens = token_count_;

  // Query heads h·g … h·g + g − 1 read kv head h (g = q_heads / kv_heads): GQA without materialising repeat_kv.
  row_blocks_.resize(rows.size());
  for (std::size_t r = 0; r < rows.size(); ++r) {
    const KvSequence& cache = *rows[r].cache;
    cache.block_pointers(layer_index, cache.length() + static_cast<int>(rows[r].tokens.size()), row_blocks_[r]);
  }
  const int group_size = config.num_q_heads / config.num_kv_heads;
  MINIGEN_ASSERT(group_size * config.num_kv_heads == config.num_q_heads, "attention: ", config.num_q_heads,
                 " query heads in groups of ", group_size, " over ", config.num_kv_heads, " kv heads");
  grow(attention_out_, tokens * q_width);
  attention_tasks_.resize(tokens);
  for (int t = 0; t < token_count_; ++t) {
    const int row = token_row_[t];
    attention_tasks_[t] = {row_of(qkv_, t, qkv_width), row_of(attention_out_, t, q_width), row_blocks_[row],
                           token_position_[t] + 1,  // causal: keys 0 … position
                           &rows[row].cache->layout()};
  }
  split_attention_.run(attention_tasks_, config.num_kv_heads, group_size, pool_);
}

void Transformer::feed_forward_block(const LayerWeights& layer, const PackedLayer& packed, int layer_index) {
  const int hidden = model_.config.hidden_size;
  grow(normed_, static_cast<std::size_t>(token_count_) * hidden);
  rmsnorm_tokens(normed_.data(), residual_.data(), layer.post_attention_norm, token_count_);
  if (model_.config.use_moe) {
    mixture_of_experts(packed, layer_index);
    return;
  }
  dense_feed_forward(packed.mlp, normed_.data(), token_count_, residual_.data(), MatmulOutput::kAddTo, layer_index,
                     FeedForwardSlot{});
}

void Transformer::dense_feed_forward(const PackedFeedForward& weights, const float* input, int count, float* output,
                                     MatmulOutput mode, int layer_index, FeedForwardSlot slot) {
  // The adapter's feed-forward for this slot, if it wraps any of gate, up and down there.
  const auto slot_of = [slot](const LoraLayer& l) -> const LoraFeedForward* {
    const std::vector<LoraFeedForward>& list =
        slot.kind == FeedForwardSlot::Kind::kExpert ? l.experts : l.shared_experts;
    if (slot.kind == FeedForwardSlot::Kind::kDense) return &l.mlp;
    return slot.index < static_cast<int>(list.size()) ? &list[slot.index] : nullptr;
  };
  const auto pick = [&](auto member) {
    return [&, member](const LoraLayer& l) -> const LoraPair* {
      const LoraFeedForward* ff = slot_of(l);
      return ff != nullptr ? &(ff->*member) : nullptr;
    };
  };
  const int hidden = model_.config.hidden_size;
  const int intermediate = weights.down.in_features();
  grow(gate_up_, static_cast<std::size_t>(count) * 2 * intermediate);
  grow(activated_, static_cast<std::size_t>(count) * intermediate);
  matmul(gate_up_.data(), input, weights.gate_up, count, pool_);  // [gate(x) | up(x)] per token
  if (any_adapter_) {
    add_adapter_terms(gate_up_.data(), 2 * intermediate, input, hidden, count, layer_index, slot.tokens,
                      pick(&LoraFeedForward::gate));
    add_adapter_terms(gate_up_.data() + intermediate, 2 * intermediate, input, hidden, count, layer_index, slot.tokens,
                      pick(&LoraFeedForward::up));
  }
  for_each_token(count, [&](int t) {
    const float* gate = row_of(gate_up_, t, 2 * intermediate);
    silu_mul(row_of(activated_, t, intermediate), gate, gate + intermediate, intermediate);  // silu(gate) * up
  });
  matmul(output, activated_.data(), weights.down, count, pool_, mode);
  if (any_adapter_) {
    add_adapter_terms(output, hidden, activated_.data(), intermediate, count, layer_index, slot.tokens,
                      pick(&LoraFeedForward::down));
  }
}

std::vector<std::vector<std::pair<int, float>>> Transformer::route_tokens(const PackedMatrix& router) {
  ProfileZone zone(Zone::kMoeRouting);
  const ModelConfig& config = model_.config;
  const int experts = config.num_experts;
  const int top_k = config.num_experts_per_token;
  MINIGEN_ASSERT(0 < top_k && top_k <= experts && router.out_features() == experts, "MoE: top-", top_k, " of ", experts,
                 " experts through a router of ", router.out_features(), " outputs");

  // Router: softmax over experts, keep the top k, optionally renormalise their weights to sum to 1.
  grow(router_probabilities_, static_cast<std::size_t>(token_count_) * experts);
  matmul(router_probabilities_.data(), normed_.data(), router, token_count_, pool_);
  std::vector<std::vector<std::pair<int, float>>> routed_tokens(experts);
  std::vector<int> order(experts);
  for (int t = 0; t < token_count_; ++t) {
    float* probabilities = row_of(router_probabilities_, t, experts);
    softmax(probabilities, experts);
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return probabilities[a] > probabilities[b]; });
    float chosen_sum = 0.0f;
    for (int i = 0; i < top_k; ++i) chosen_sum += probabilities[order[i]];
    for (int i = 0; i < top_k; ++i) {
      float weight = probabilities[order[i]];
      if (config.norm_topk_prob) weight = weight / (chosen_sum + 1e-20f);
      routed_tokens[order[i]].push_back({t, weight});
    }
  }
  return routed_tokens;
}

void Transformer::mixture_of_experts(const PackedLayer& packed, int layer_index) {
  const ModelConfig& config = model_.config;
  const int hidden = config.hidden_size;
  const int experts = config.num_experts;
  const std::size_t tokens = token_count_;
  // expert → (token, weight)
  const std::vector<std::vector<std::pair<int, float>>> routed_tokens = route_tokens(packed.router);

  // Each expert runs once on all the tokens routed to it, as one group (its weights read once per step); outputs
  // are added into a zeroed buffer in expert order, as MiniMind's index_add_ does, then the shared experts.
  mixture_.assign(tokens * hidden, 0.0f);
  for (int e = 0; e < experts; ++e) {
    const auto& routed = routed_tokens[e];
    if (routed.empty()) continue;
    const int count = static_cast<int>(routed.size());
    expert_token_counts_[static_cast<std::size_t>(layer_index) * experts + e] += count;
    grow(expert_input_, static_cast<std::size_t>(count) * hidden);
    grow(expert_output_, static_cast<std::size_t>(count) * hidden);
    for (int i = 0; i < count; ++i) {
      std::memcpy(row_of(expert_input_, i, hidden), row_of(normed_, routed[i].first, hidden), sizeof(float) * hidden);
    }
    expert_tokens_.resize(count);
    for (int i = 0; i < count; ++i) expert_tokens_[i] = routed[i].first;
    dense_feed_forward(packed.experts[e], expert_input_.data(), count, expert_output_.data(), MatmulOutput::kStore,
                       layer_index, FeedForwardSlot{FeedForwardSlot::Kind::kExpert, e, expert_tokens_.data()});
    for (int i = 0; i < count; ++i) {
      float* target = row_of(mixture_, routed[i].first, hidden);
      const float* source = row_of(expert_output_, i, hidden);
      for (int d = 0; d < hidden; ++d) target[d] += source[d] * routed[i].second;
    }
  }
  for (std::size_t s = 0; s < packed.shared_experts.size(); ++s) {
    grow(expert_output_, tokens * hidden);
    dense_feed_forward(packed.shared_experts[s], normed_.data(), token_count_, expert_output_.data(),
                       MatmulOutput::kStore, layer_index,
                       FeedForwardSlot{FeedForwardSlot::Kind::kShared, static_cast<int>(s), nullptr});
    for (std::size_t i = 0; i < tokens * hidden; ++i) mixture_[i] += expert_output_[i];
  }
  for (std::size_t i = 0; i < tokens * hidden; ++i) residual_[i] += mixture_[i];
}

}  // namespace minigen
