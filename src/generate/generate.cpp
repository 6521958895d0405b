#include "generate/generate.h"

#include <algorithm>
#include <chrono>
#include <memory>

#include "cache/kv_cache.h"
#include "core/error.h"
#include "grammar/grammar_matcher.h"
#include "sampling/sampler_chain.h"

namespace minigen {
namespace {

using Clock = std::chrono::steady_clock;

double milliseconds_between(Clock::time_point start, Clock::time_point end) {
  return std::chrono::duration<double, std::milli>(end - start).count();
}

void check_request(const ModelConfig& config, std::span<const std::vector<int>> prompts,
                   const GenerateOptions& options) {
  if (prompts.empty()) throw Error("generate needs at least one prompt");
  if (options.max_new_tokens < 1) throw Error("max_new_tokens must be at least 1");
  options.sampling.validate();
  options.sampling.check_vocabulary(config.vocab_size);
  if (!options.rng_rows.empty() && options.rng_rows.size() != prompts.size()) {
    throw Error("rng_rows must give one key per prompt");
  }
  if (options.grammars.size() > 1 && options.grammars.size() != prompts.size()) {
    throw Error("grammars must give one grammar per prompt, or one for all");
  }
  for (const std::shared_ptr<const CompiledGrammar>& grammar : options.grammars) {
    if (grammar && (grammar->vocab_size() != config.vocab_size || grammar->vocabulary().eos() != config.eos_token_id)) {
      throw Error("the grammar was compiled for a vocabulary of " + std::to_string(grammar->vocab_size()) +
                  " ids with eos " + std::to_string(grammar->vocabulary().eos()) + "; the model has " +
                  std::to_string(config.vocab_size) + " with eos " + std::to_string(config.eos_token_id));
    }
  }
  if (prompts.size() > static_cast<std::size_t>(kMaxBatchRows)) {
    throw Error("generate takes at most " + std::to_string(kMaxBatchRows) + " rows, got " +
                std::to_string(prompts.size()));
  }
  for (const std::vector<int>& prompt : prompts) {
    if (prompt.empty()) throw Error("the prompt is empty: nothing to continue from");
    const int64_t total = static_cast<int64_t>(prompt.size()) + options.max_new_tokens;
    if (total > config.max_position_embeddings) {
      throw Error("prompt (" + std::to_string(prompt.size()) + " tokens) + max_new_tokens (" +
                  std::to_string(options.max_new_tokens) + ") = " + std::to_string(total) +
                  " tokens exceeds the model's context of " + std::to_string(config.max_position_embeddings));
    }
  }
  check_run_memory(config, generation_shape(prompts, options), "use fewer rows or fewer new tokens");
}

// A row's cache starts with room for the prompt and this many new tokens and doubles when it needs more, up to the
// prompt plus max_new_tokens: a run asking for a million tokens that stops at eos after twenty does not hold a
// million tokens' worth of cache. (A fixed number, so that what is allocated for short runs stays predictable.)
constexpr int kInitialNewTokenCapacity = 4096;

}  // namespace

RunShape generation_shape(std::span<const std::vector<int>> prompts, const GenerateOptions& options) {
  RunShape shape;
  shape.rows = static_cast<int64_t>(prompts.size());
  shape.kv_dtype = options.kv_dtype;
  for (const std::vector<int>& prompt : prompts) {
    const int64_t total = static_cast<int64_t>(prompt.size()) + options.max_new_tokens;
    shape.tokens_per_row = std::max(shape.tokens_per_row, total);
    // Prefill feeds every prompt at once; without the cache the last step re-feeds every row's whole sequence.
    shape.max_tokens_per_forward += options.use_cache ? static_cast<int64_t>(prompt.size()) : total - 1;
  }
  return shape;
}

GenerateResult generate(Transformer& transformer, std::span<const std::vector<int>> prompts,
                        const GenerateOptions& options, const TokenCallback& on_token) {
  const ModelConfig& config = transformer.model().config;
  check_request(config, prompts, options);
  const Clock::time_point start = Clock::now();
  const int rows = static_cast<int>(prompts.size());
  const int eos = config.eos_token_id;
  const SamplerChain sampler(options.sampling);

  std::vector<std::vector<int>> ids(prompts.begin(), prompts.end());  // input_ids: prompt, then new tokens
  std::vector<std::unique_ptr<KvCache>> caches;
  GenerateResult result;
  result.sequences.resize(rows);
  for (int r = 0; r < rows; ++r) {
    const int prompt_tokens = static_cast<int>(ids[r].size());
    const int initial_capacity = prompt_tokens + std::min(options.max_new_tokens, kInitialNewTokenCapacity);
    caches.push_back(std::make_unique<KvCache>(config.kv_layout(options.kv_dtype), initial_capacity,
                                               prompt_tokens + options.max_new_tokens));
    result.sequences[r].prompt_tokens = static_cast<int>(ids[r].size());
  }
  std::vector<bool> finished(rows, false);
  std::vector<std::unique_ptr<GrammarMatcher>> matchers(rows);  // each row's place in its grammar
  for (int r = 0; r < rows && !options.grammars.empty(); ++r) {
    const auto& grammar = options.grammars.size() == 1 ? options.grammars[0] : options.grammars[r];
    if (grammar) matchers[r] = std::make_unique<GrammarMatcher>(grammar);
  }
  std::vector<ForwardRow> forward_rows(rows);
  std::vector<float> row_logits(config.vocab_size);
  Clock::time_point first_token_time = start;

  for (int step = 0; step < options.max_new_tokens; ++step) {
    for (int r = 0; r < rows; ++r) {
      // past_len = cached length (0 without cache); feed ids[past_len:].
      if (!options.use_cache) caches[r]->clear();
      const int past_len = caches[r]->length();
      forward_rows[r] = ForwardRow{caches[r].get(), std::span<const int>(ids[r]).subspan(past_len), false};
      result.sequences[r].forward_tokens += static_cast<int64_t>(ids[r].size()) - past_len;
    }
    const std::vector<float>& logits = transformer.forward(forward_rows);
    ++result.stats.forward_calls;

    for (int r = 0; r < rows; ++r) {
      GeneratedSequence& sequence = result.sequences[r];
      const float* last = logits.data() + static_cast<std::size_t>(r) * config.vocab_size;
      if (options.keep_step_logits) sequence.step_logits.emplace_back(last, last + config.vocab_size);
      if (finished[r]) {
        // MiniMind keeps feeding finished rows and pads them with eos; the work is wasted, so count it.
        ids[r].push_back(eos);
        ++sequence.padding_steps;
        continue;
      }
      // Last logits → allowed tokens → temperature → repetition penalty → top-k → top-p → min-p → draw or argmax.
      std::copy(last, last + config.vocab_size, row_logits.begin());
      const uint64_t rng_row = options.rng_rows.empty() ? static_cast<uint64_t>(r) : options.rng_rows[r];
      SamplingContext context{ids[r], rng_row, static_cast<uint64_t>(step)};
      if (matchers[r]) {
        const TokenMask& allowed = matchers[r]->allowed_tokens();
        context.allowed_tokens = allowed.bits;
        sequence.grammar_allowed_tokens.push_back(allowed.allowed_count);
      }
      const SampledToken outcome = sampler.sample(row_logits, context);
      if (matchers[r]) matchers[r]->accept(outcome.token);
      ids[r].push_back(outcome.token);
      sequence.token_ids.push_back(outcome.token);
      sequence.kept_candidates.push_back(outcome.kept_count);
      if (on_token) on_token(TokenEvent{r, step, outcome.token});
      if (!options.ignore_eos && outcome.token == eos) {
        finished[r] = true;
        sequence.finish_reason = "stop";
      }
    }
    if (step == 0) first_token_time = Clock::now();
    if (std::all_of(finished.begin(), finished.end(), [](bool done) { return done; })) break;
  }

  const Clock::time_point end = Clock::now();
  GenerateStats& stats = result.stats;
  for (int r = 0; r < rows; ++r) {
    if (result.sequences[r].finish_reason.empty()) result.sequences[r].finish_reason = "length";
    stats.forward_tokens += result.sequences[r].forward_tokens;
    stats.kv_bytes_allocated += caches[r]->bytes_allocated();
    stats.kv_bytes_used += caches[r]->bytes_used();
  }
  stats.ttft_ms = milliseconds_between(start, first_token_time);
  stats.total_ms = milliseconds_between(start, end);
  stats.itl_ms = stats.forward_calls > 1 ? (stats.total_ms - stats.ttft_ms) / (stats.forward_calls - 1) : 0.0;
  return result;
}

}  // namespace minigen
