#include "model/transformer.h"

#include <algorithm>
#include <cstring>
#include <numeric>
#include <set>
#include <string>

#include "core/error.h"
#include "ops/activation.h"
#include "ops/attention.h"
#include "ops/matmul.h"
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

}  // namespace

Transformer::Transformer(const Model& model, ThreadPool& pool) : model_(model), pool_(pool) {}

const std::vector<float>& Transformer::forward(std::span<const ForwardRow> rows) {
  const ModelConfig& config = model_.config;
  const int hidden = config.hidden_size;

  // Lay out every fed token with its row and absolute position: positions continue from the row's cached length.
  token_row_.clear();
  token_position_.clear();
  std::set<const KvCache*> caches_seen;
  for (std::size_t r = 0; r < rows.size(); ++r) {
    const ForwardRow& row = rows[r];
    if (row.cache == nullptr) throw Error("forward: row " + std::to_string(r) + " has no KV cache");
    if (row.tokens.empty()) throw Error("forward: row " + std::to_string(r) + " feeds no tokens");
    if (!caches_seen.insert(row.cache).second) throw Error("forward: two rows share one KV cache");
    const int first_position = row.cache->length();
    const int64_t end_position = static_cast<int64_t>(first_position) + static_cast<int64_t>(row.tokens.size());
    if (end_position > config.max_position_embeddings) {
      throw Error("the sequence would reach " + std::to_string(end_position) + " tokens, beyond the model's context of " +
                  std::to_string(config.max_position_embeddings));
    }
    for (std::size_t i = 0; i < row.tokens.size(); ++i) {
      const int token = row.tokens[i];
      if (token < 0 || token >= config.vocab_size) {
        throw Error("token id " + std::to_string(token) + " is outside the vocabulary [0, " +
                    std::to_string(config.vocab_size) + ")");
      }
      token_row_.push_back(static_cast<int>(r));
      token_position_.push_back(first_position + static_cast<int>(i));
    }
  }
  for (const ForwardRow& row : rows) row.cache->reserve_for(static_cast<int>(row.tokens.size()));
  token_count_ = static_cast<int>(token_row_.size());

  // h = embed[ids] (MiniMind does not scale the embedding).
  grow(residual_, static_cast<std::size_t>(token_count_) * hidden);
  int token = 0;
  for (const ForwardRow& row : rows) {
    for (int id : row.tokens) {
      std::memcpy(row_of(residual_, token++, hidden), model_.weights.embed_tokens.data() +
                  static_cast<std::size_t>(id) * hidden, sizeof(float) * hidden);
    }
  }

  for (int layer = 0; layer < config.num_layers; ++layer) {
    const LayerWeights& weights = model_.weights.layers[layer];
    attention_block(weights, layer, rows);  // h = h + Attn(RMSNorm_in(h))
    feed_forward_block(weights);            // h = h + MLP(RMSNorm_post(h))
  }
  for (const ForwardRow& row : rows) row.cache->advance(static_cast<int>(row.tokens.size()));

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
  for (int i = 0; i < wanted_count; ++i) {
    rmsnorm(row_of(normed_, i, hidden), row_of(residual_, wanted[i], hidden), model_.weights.final_norm.data(), hidden,
            config.rms_norm_eps);
  }
  const Matrix& output = model_.weights.output_projection();
  logits_.resize(static_cast<std::size_t>(wanted_count) * config.vocab_size);
  matmul(logits_.data(), normed_.data(), output.data(), wanted_count, hidden, config.vocab_size, pool_);
  return logits_;
}

void Transformer::attention_block(const LayerWeights& layer, int layer_index, std::span<const ForwardRow> rows) {
  const ModelConfig& config = model_.config;
  const int hidden = config.hidden_size;
  const int head_dim = config.head_dim;
  const int q_width = config.q_width();
  const int kv_width = config.kv_width();
  const std::size_t tokens = token_count_;

  grow(normed_, tokens * hidden);
  for (int t = 0; t < token_count_; ++t) {
    rmsnorm(row_of(normed_, t, hidden), row_of(residual_, t, hidden), layer.input_norm.data(), hidden,
            config.rms_norm_eps);
  }
  grow(query_, tokens * q_width);
  grow(key_, tokens * kv_width);
  grow(value_, tokens * kv_width);
  matmul(query_.data(), normed_.data(), layer.q_proj.data(), token_count_, hidden, q_width, pool_);
  matmul(key_.data(), normed_.data(), layer.k_proj.data(), token_count_, hidden, kv_width, pool_);
  matmul(value_.data(), normed_.data(), layer.v_proj.data(), token_count_, hidden, kv_width, pool_);

  // qk-norm (minimind-3) then RoPE, then K and V go straight into the cache slot for their position.
  for (int t = 0; t < token_count_; ++t) {
    const int position = token_position_[t];
    float* q = row_of(query_, t, q_width);
    float* k = row_of(key_, t, kv_width);
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
    KvCache& cache = *rows[token_row_[t]].cache;
    std::memcpy(cache.keys(layer_index) + static_cast<std::size_t>(position) * kv_width, k, sizeof(float) * kv_width);
    std::memcpy(cache.values(layer_index) + static_cast<std::size_t>(position) * kv_width,
                row_of(value_, t, kv_width), sizeof(float) * kv_width);
  }

  // Query head h reads kv head h / (q_heads / kv_heads): GQA without materialising repeat_kv.
  const int group_size = config.num_q_heads / config.num_kv_heads;
  grow(attention_out_, tokens * q_width);
  pool_.parallel_for(static_cast<int64_t>(token_count_) * config.num_q_heads, [&](int64_t begin, int64_t end) {
    std::vector<float> scores;
    for (int64_t item = begin; item < end; ++item) {
      const int t = static_cast<int>(item / config.num_q_heads);
      const int h = static_cast<int>(item % config.num_q_heads);
      const int kv_head = h / group_size;
      const int num_keys = token_position_[t] + 1;  // causal: keys 0..position
      const KvCache& cache = *rows[token_row_[t]].cache;
      scores.resize(num_keys);
      attend(row_of(attention_out_, t, q_width) + h * head_dim, row_of(query_, t, q_width) + h * head_dim,
             cache.keys(layer_index) + kv_head * head_dim, cache.values(layer_index) + kv_head * head_dim, kv_width,
             num_keys, head_dim, scores.data());
    }
  });

  grow(projected_, tokens * hidden);
  matmul(projected_.data(), attention_out_.data(), layer.o_proj.data(), token_count_, q_width, hidden, pool_);
  for (std::size_t i = 0; i < tokens * hidden; ++i) residual_[i] += projected_[i];
}

void Transformer::feed_forward_block(const LayerWeights& layer) {
  const ModelConfig& config = model_.config;
  const int hidden = config.hidden_size;
  const std::size_t tokens = token_count_;
  grow(normed_, tokens * hidden);
  for (int t = 0; t < token_count_; ++t) {
    rmsnorm(row_of(normed_, t, hidden), row_of(residual_, t, hidden), layer.post_attention_norm.data(), hidden,
            config.rms_norm_eps);
  }
  if (config.use_moe) {
    mixture_of_experts(layer);
    return;
  }
  grow(projected_, tokens * hidden);
  dense_feed_forward(layer.mlp, config.intermediate_size, normed_.data(), token_count_, projected_.data());
  for (std::size_t i = 0; i < tokens * hidden; ++i) residual_[i] += projected_[i];
}

void Transformer::dense_feed_forward(const FeedForwardWeights& weights, int intermediate, const float* input,
                                     int count, float* output) {
  const int hidden = model_.config.hidden_size;
  grow(gate_, static_cast<std::size_t>(count) * intermediate);
  grow(up_, static_cast<std::size_t>(count) * intermediate);
  matmul(gate_.data(), input, weights.gate.data(), count, hidden, intermediate, pool_);
  matmul(up_.data(), input, weights.up.data(), count, hidden, intermediate, pool_);
  silu_mul(gate_.data(), up_.data(), count * intermediate);  // silu(gate(x)) * up(x)
  matmul(output, gate_.data(), weights.down.data(), count, intermediate, hidden, pool_);
}

void Transformer::mixture_of_experts(const LayerWeights& layer) {
  const ModelConfig& config = model_.config;
  const int hidden = config.hidden_size;
  const int experts = config.num_experts;
  const int top_k = config.num_experts_per_token;
  const std::size_t tokens = token_count_;

  // Router: softmax over experts, keep the top k, optionally renormalise their weights to sum to 1.
  grow(router_probabilities_, tokens * experts);
  matmul(router_probabilities_.data(), normed_.data(), layer.router.data(), token_count_, hidden, experts, pool_);
  std::vector<std::vector<std::pair<int, float>>> routed_tokens(experts);  // expert → (token, weight)
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

  // Each expert runs once on all the tokens routed to it (its weights read once); outputs are added into a zeroed
  // buffer in expert order, as MiniMind's index_add_ does, then the shared experts are added.
  std::vector<float> mixture(tokens * hidden, 0.0f);
  for (int e = 0; e < experts; ++e) {
    const auto& routed = routed_tokens[e];
    if (routed.empty()) continue;
    const int count = static_cast<int>(routed.size());
    grow(expert_input_, static_cast<std::size_t>(count) * hidden);
    grow(expert_output_, static_cast<std::size_t>(count) * hidden);
    for (int i = 0; i < count; ++i) {
      std::memcpy(row_of(expert_input_, i, hidden), row_of(normed_, routed[i].first, hidden), sizeof(float) * hidden);
    }
    dense_feed_forward(layer.experts[e], config.moe_intermediate_size, expert_input_.data(), count,
                       expert_output_.data());
    for (int i = 0; i < count; ++i) {
      float* target = row_of(mixture, routed[i].first, hidden);
      const float* source = row_of(expert_output_, i, hidden);
      for (int d = 0; d < hidden; ++d) target[d] += source[d] * routed[i].second;
    }
  }
  for (const FeedForwardWeights& shared : layer.shared_experts) {
    grow(expert_output_, tokens * hidden);
    dense_feed_forward(shared, config.moe_intermediate_size, normed_.data(), token_count_, expert_output_.data());
    for (std::size_t i = 0; i < tokens * hidden; ++i) mixture[i] += expert_output_[i];
  }
  for (std::size_t i = 0; i < tokens * hidden; ++i) residual_[i] += mixture[i];
}

}  // namespace minigen
