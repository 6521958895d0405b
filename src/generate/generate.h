#pragma once
// MiniMind's generate loop, instrumented. Read it side by side with MiniMind's `generate` (spec §5):
// past_len → feed ids[past_len:] → last logits → sampler chain → pad finished rows with eos → stop when all done.
#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "generate/memory_budget.h"
#include "grammar/compiled_grammar.h"
#include "model/transformer.h"
#include "sampling/sampling_params.h"

namespace minigen {

struct GenerateOptions {
  int max_new_tokens = 512;
  bool use_cache = true;
  bool ignore_eos = false;  // never mark a row finished: forces exactly max_new_tokens (for experiments)
  SamplingParams sampling;
  bool keep_step_logits = false;     // record every step's raw logits per row (for bit-equality checks)
  KvDType kv_dtype = KvDType::kF32;  // what the KV cache stores (ops/kv_dtype.h)
  // Random-stream key of each row (default: its index). A caller that batches rows of different requests gives
  // each row its index within its own request, so its draws do not depend on the batch it landed in.
  std::vector<uint64_t> rng_rows;
  // Structured output: one grammar per row (nullptr leaves a row free), or one for every row; empty: none. Each row
  // gets its own matcher: the grammar masks the logits before every other stage, advances by the chosen token, and
  // allows eos only where the row's document is complete. A row that reaches max_new_tokens inside its document
  // ends with finish_reason "length", as any other.
  std::vector<std::shared_ptr<const CompiledGrammar>> grammars;
};

struct GeneratedSequence {
  int prompt_tokens = 0;
  std::vector<int> token_ids;  // the new tokens, through the eos that finished the row (padding excluded)
  std::string finish_reason;   // "stop" (eos) or "length" (max_new_tokens reached)
  int padding_steps = 0;       // steps this row was still fed after it finished (eos padding, wasted work)
  int64_t forward_tokens = 0;  // tokens of this row fed to forward: P + N − 1 with cache, P·N + N(N−1)/2 without
  std::vector<int> kept_candidates;             // per step: how many tokens survived the filters (top-k, top-p, min-p)
  std::vector<int> grammar_allowed_tokens;      // per step, with a grammar: how many ids its mask allowed
  std::vector<std::vector<float>> step_logits;  // per step, when keep_step_logits
};

struct GenerateStats {
  int forward_calls = 0;       // = steps: one forward per new token
  int64_t forward_tokens = 0;  // over all rows
  std::size_t kv_bytes_allocated = 0;
  std::size_t kv_bytes_used =
      0;  // length · kv_bytes_per_token in the run's KV dtype, summed over rows; 0 without cache
  // Without the cache: the bytes of K and V that the last step recomputed for every position (the buffer is
  // emptied before each step, so nothing in it is ever reused — it is not a cache). 0 with the cache.
  std::size_t recompute_buffer_bytes = 0;
  double ttft_ms = 0;  // start → first token of every row chosen (prefill + one sampling)
  double itl_ms = 0;   // mean time between later tokens
  double total_ms = 0;
  // Before the clock started: generate() allocates the KV caches and sizes the forward pass's buffers for the
  // prompt here, and a frontend that loaded the model adds reading the files, packing the weights and starting the
  // threads. TTFT never includes it: TTFT is the prefill.
  double load_ms = 0;
};

struct GenerateResult {
  std::vector<GeneratedSequence> sequences;
  GenerateStats stats;
};

// Called for every chosen token of every unfinished row, in row order within a step (streaming output).
struct TokenEvent {
  int row;
  int step;
  int token;
};
using TokenCallback = std::function<void(const TokenEvent&)>;

// The shape generate() checks against the memory budget (generate/memory_budget.h): the rows, the longest row's
// prompt + max_new_tokens, and the most tokens one forward call feeds (prefill; without the cache, the last step).
RunShape generation_shape(std::span<const std::vector<int>> prompts, const GenerateOptions& options);

// Runs every prompt as one batch row. Throws minigen::Error for bad options, an empty prompt, a prompt whose
// length plus max_new_tokens exceeds the model's context, more than kMaxBatchRows rows, or a run whose estimated
// memory exceeds the budget.
GenerateResult generate(Transformer& transformer, std::span<const std::vector<int>> prompts,
                        const GenerateOptions& options, const TokenCallback& on_token = {});

}  // namespace minigen
