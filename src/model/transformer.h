#pragma once
// The forward pass of a MiniMind decoder (spec §2), for any number of sequences at once.
//
// Every sequence ("row") brings its own KV cache and the tokens to feed on top of it: a whole prompt (prefill),
// a chunk of one (chunked prefill), or the one newest token (decode). Rows may differ in length and position,
// and all of them go through each matrix product together, so each weight is read once per step for all rows.
// Batch invariance: each output number is computed by the same sequence of float operations whatever else shares
// the call, so a row's logits are bit-identical alone or in a batch, with the cache or without it, on any number
// of threads (the kernels' headers in ops/ state the order of every sum).
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <utility>
#include <vector>

#include "cache/kv_sequence.h"
#include "model/low_rank_term.h"
#include "model/model.h"
#include "model/packed_weights.h"
#include "ops/attention_split.h"
#include "ops/matmul.h"
#include "ops/thread_pool.h"

namespace minigen {

struct ForwardRow {
  KvSequence* cache = nullptr;  // K and V of this call's tokens are appended at positions cache->length(), …
  std::span<const int> tokens;  // token ids to feed, at least one
  bool all_logits = false;      // logits for every fed position (tests, the oracle) or only for the last one
  // The LoRA adapter this row runs with; nullptr: the model's own (Model::adapter, usually none). Rows with
  // different adapters share one call: the base projections run once for all of them.
  const LoraAdapter* adapter = nullptr;
};

// Throws the minigen::Error forward() gives when `new_tokens` fed after `past_tokens` would pass the model's
// context, for callers that allocate for the tokens before feeding them.
void check_fits_context(const ModelConfig& config, int past_tokens, std::size_t new_tokens);

class Transformer {
 public:
  // Packs the model's matrices for the kernels (fp32: exact; bf16: half the bytes, fp32 accumulation). q8/q4:
  // `activations` picks the codes their products quantize activations to (none: the type's default, int16 for q8,
  // int8 for q4); throws minigen::Error when given for another type.
  Transformer(const Model& model, ThreadPool& pool, WeightType weight_type = WeightType::kF32,
              std::optional<ActivationCodes> activations = std::nullopt);

  // Returns the logits, rows in order: `tokens.size()` vectors for an all_logits row, else one; each `vocab` floats.
  // Throws minigen::Error for an empty row, a token id outside the vocabulary or a position beyond the context.
  const std::vector<float>& forward(std::span<const ForwardRow> rows);

  // Sizes the buffers of a forward call over `tokens` tokens that returns `logit_rows` rows of logits (dense layers;
  // a mixture of experts still grows its own on the first call), so that the first call does not pay for their
  // allocation and page faults inside a timed prefill. forward() grows them anyway when it needs more.
  void reserve_tokens(int tokens, int logit_rows);

  // The first forward call after packing once per Transformer: one token on a scratch cache, its logits dropped and
  // the expert counts and the profile left as they were. On this project's VMs the first pass of the pool's threads
  // over freshly packed weights ran at ~1.6 GB/s (a tiny-model prefill: 16 ms against 4.5 ms on the next call, the 6.5
  // MB lm_head alone 4 ms against 0.08); callers that time a prefill (generate) do this first, so TTFT is the prefill.
  void warm_up();

  const Model& model() const { return model_; }
  WeightType weight_type() const { return packed_.type; }
  // q8/q4: the activation codes of the layers' products (meaningless for the other types).
  ActivationCodes activations() const { return packed_.activations; }
  int threads() const { return pool_.num_threads(); }
  ThreadPool& pool() const { return pool_; }  // for work beside the forward pass (e.g. sampling many rows)
  // Mixture-of-experts models: how many fed tokens the router sent to each routed expert since construction,
  // [layer · num_experts + expert] (each token goes to top-k experts per layer). Empty for dense models.
  const std::vector<int64_t>& expert_token_counts() const { return expert_token_counts_; }
  // Bytes of weights one decode step reads: every packed matrix once, plus the norms.
  std::size_t weight_bytes() const;

 private:
  void lay_out_tokens(std::span<const ForwardRow> rows);
  void attention_block(const LayerWeights& layer, const PackedLayer& packed, int layer_index,
                       std::span<const ForwardRow> rows);
  // Each fed token's query heads over its row's cached keys and values, into attention_out_.
  void attend_tokens(int layer_index, std::span<const ForwardRow> rows);
  void feed_forward_block(const LayerWeights& layer, const PackedLayer& packed, int layer_index);
  // Which feed-forward of a layer a product belongs to, and which fed token each of its input rows is (nullptr:
  // row i is token i), so that the right adapter's pair is added to each row.
  struct FeedForwardSlot {
    enum class Kind { kDense, kExpert, kShared } kind = Kind::kDense;
    int index = 0;
    const int* tokens = nullptr;
  };
  void dense_feed_forward(const PackedFeedForward& weights, const float* input, int count, float* output,
                          MatmulOutput mode, int layer_index, FeedForwardSlot slot);
  // LoRA: out[i] += scale · B(A x[i]) for each input row i whose token's adapter wraps the matrix `pick` chooses.
  template <class Pick>
  void add_adapter_terms(float* out, std::size_t out_stride, const float* x, std::size_t x_stride, int count,
                         int layer_index, const int* tokens, Pick&& pick);
  void mixture_of_experts(const PackedLayer& packed, int layer_index);
  // The router of one MoE layer over the fed tokens: for each expert, the (token, weight) pairs routed to it.
  std::vector<std::vector<std::pair<int, float>>> route_tokens(const PackedMatrix& router);
  void rmsnorm_tokens(float* out, const float* in, const std::vector<float>& weight, int count);
  // Runs body(t) for t < count, across the pool when there are enough tokens to be worth the hand-off.
  template <class Body>
  void for_each_token(int count, Body&& body);

  const Model& model_;
  ThreadPool& pool_;
  PackedWeights packed_;

  // Per fed token: which row it belongs to and its absolute position.
  std::vector<int> token_row_;
  std::vector<int> token_position_;
  std::vector<const LoraAdapter*> token_adapter_;  // nullptr: no adapter
  bool any_adapter_ = false;
  int token_count_ = 0;

  // Activations, [token][width].
  std::vector<float> residual_;  // the hidden state h
  std::vector<float> normed_;
  std::vector<float> qkv_, attention_out_;
  std::vector<float> gate_up_, activated_;
  std::vector<float> expert_input_, expert_output_, router_probabilities_, mixture_;
  std::vector<float> logits_;
  std::vector<std::vector<const std::byte*>> row_blocks_;  // per row: the KV blocks of the current layer
  std::vector<AttentionTask> attention_tasks_;             // per fed token
  SplitAttention split_attention_;
  std::vector<int64_t> expert_token_counts_;
  LowRankAdder low_rank_;
  std::vector<LowRankTerm> low_rank_terms_;
  std::vector<int> expert_tokens_;
  bool warmed_up_ = false;
};

}  // namespace minigen
