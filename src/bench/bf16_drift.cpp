#include "bench/bf16_drift.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "bench/greedy_decode.h"
#include "cache/kv_cache.h"
#include "model/transformer.h"
#include "sampling/token_choice.h"

namespace minigen::bench {
namespace {

struct PrefillAndContinuation {
  std::vector<float> prompt_logits;  // [position][vocab]
  std::vector<int> greedy_tokens;
};

PrefillAndContinuation prefill_and_continue(const Model& model, ThreadPool& pool, WeightType type,
                                            std::span<const int> prompt, int greedy_tokens) {
  Transformer transformer(model, pool, type);
  const int vocab = model.config.vocab_size;
  KvCache cache(model.config.kv_layout(), static_cast<int>(prompt.size()) + greedy_tokens);
  PrefillAndContinuation result;
  const ForwardRow prefill{&cache, prompt, true};
  result.prompt_logits = transformer.forward(std::span(&prefill, 1));
  const int first = argmax(std::span(result.prompt_logits).subspan(result.prompt_logits.size() - vocab));
  // The last greedy token is chosen, never fed: P + N − 1 positions in the cache.
  result.greedy_tokens = greedy_decode(transformer, cache, first, greedy_tokens - 1);
  result.greedy_tokens.insert(result.greedy_tokens.begin(), first);
  return result;
}

}  // namespace

DriftResult measure_bf16_drift(const Model& model, ThreadPool& pool, std::span<const int> prompt, int greedy_tokens) {
  const PrefillAndContinuation exact = prefill_and_continue(model, pool, WeightType::kF32, prompt, greedy_tokens);
  const PrefillAndContinuation rounded = prefill_and_continue(model, pool, WeightType::kBF16, prompt, greedy_tokens);
  DriftResult drift;
  drift.prompt_tokens = static_cast<int>(prompt.size());
  drift.threads = pool.num_threads();
  for (std::size_t i = 0; i < exact.prompt_logits.size(); ++i) {
    drift.max_abs_logit_difference = std::max(
        drift.max_abs_logit_difference,
        std::fabs(static_cast<double>(exact.prompt_logits[i]) - static_cast<double>(rounded.prompt_logits[i])));
  }
  drift.logits_compared = static_cast<int64_t>(exact.prompt_logits.size());
  drift.f32_last_argmax = exact.greedy_tokens.front();
  drift.bf16_last_argmax = rounded.greedy_tokens.front();
  drift.greedy_tokens = greedy_tokens;
  for (int i = 0; i < greedy_tokens; ++i) {
    if (exact.greedy_tokens[i] == rounded.greedy_tokens[i]) {
      ++drift.greedy_identical;
    } else if (drift.first_divergence < 0) {
      drift.first_divergence = i;
    }
  }
  return drift;
}

}  // namespace minigen::bench
