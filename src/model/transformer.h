#pragma once
// The forward pass of a MiniMind decoder (spec §2), for any number of sequences at once.
//
// Every sequence ("row") brings its own KV cache and the tokens to feed on top of it: a whole prompt (prefill),
// a chunk of one (chunked prefill), or the one newest token (decode). Rows may differ in length and position.
// Batch invariance: each output number is computed by the same sequence of float operations whatever else shares
// the call, so a row's logits are bit-identical alone or in a batch, with the cache or without it.
#include <span>
#include <vector>

#include "cache/kv_cache.h"
#include "model/model.h"
#include "ops/thread_pool.h"

namespace minigen {

struct ForwardRow {
  KvCache* cache = nullptr;     // K and V of this call's tokens are appended at positions cache->length(), …
  std::span<const int> tokens;  // token ids to feed, at least one
  bool all_logits = false;      // logits for every fed position (tests, the oracle) or only for the last one
};

class Transformer {
 public:
  Transformer(const Model& model, ThreadPool& pool);

  // Returns the logits, rows in order: `tokens.size()` vectors for an all_logits row, else one; each `vocab` floats.
  // Throws minigen::Error for an empty row, a token id outside the vocabulary or a position beyond the context.
  const std::vector<float>& forward(std::span<const ForwardRow> rows);

  const Model& model() const { return model_; }

 private:
  void attention_block(const LayerWeights& layer, int layer_index, std::span<const ForwardRow> rows);
  void feed_forward_block(const LayerWeights& layer);
  void dense_feed_forward(const FeedForwardWeights& weights, int intermediate, const float* input, int count,
                          float* output);
  void mixture_of_experts(const LayerWeights& layer);

  const Model& model_;
  ThreadPool& pool_;

  // Per fed token: which row it belongs to and its absolute position.
  std::vector<int> token_row_;
  std::vector<int> token_position_;
  int token_count_ = 0;

  // Activations, [token][width].
  std::vector<float> residual_;  // the hidden state h
  std::vector<float> normed_;
  std::vector<float> query_, key_, value_, attention_out_, projected_;
  std::vector<float> gate_, up_;
  std::vector<float> expert_input_, expert_output_, router_probabilities_;
  std::vector<float> logits_;
};

}  // namespace minigen
