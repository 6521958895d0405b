#include "generate/generate.h"

#include <algorithm>
#include <chrono>
#include <memory>

#include "cache/kv_cache.h"
#include "core/error.h"
#include "generate/sequence_check.h"
#include "generate/sequence_state.h"

namespace minigen {
namespace {

using Clock = std::chrono::steady_clock;

double milliseconds_between(Clock::time_point start, Clock::time_point end) {
  return std::chrono::duration<double, std::milli>(end - start).count();
}

std::shared_ptr<const CompiledGrammar> row_grammar(const GenerateOptions& options, std::size_t row) {
  if (options.grammars.empty()) return nullptr;
  return options.grammars.size() == 1 ? options.grammars[0] : options.grammars[row];
}

void check_request(const ModelConfig& config, std::span<const std::vector<int>> prompts,
                   const GenerateOptions& options) {
  if (prompts.empty()) throw Error("generate needs at least one prompt");
  if (!options.rng_rows.empty() && options.rng_rows.size() != prompts.size()) {
    throw Error("rng_rows must give one key per prompt");
  }
  if (options.grammars.size() > 1 && options.grammars.size() != prompts.size()) {
    throw Error("grammars must give one grammar per prompt, or one for all");
  }
  if (prompts.size() > static_cast<std::size_t>(kMaxBatchRows)) {
    throw Error("generate takes at most " + std::to_string(kMaxBatchRows) + " rows, got " +
                std::to_string(prompts.size()));
  }
  for (std::size_t r = 0; r < prompts.size(); ++r) {
    check_sequence(config, {prompts[r], options.max_new_tokens, options.sampling, row_grammar(options, r).get()},
                   "max_new_tokens");
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
  const Clock::time_point setup_start = Clock::now();
  const int rows = static_cast<int>(prompts.size());
  const SequenceRules rules{options.max_new_tokens, options.ignore_eos, config.eos_token_id};

  std::vector<SequenceState> states;  // input_ids, one row each: prompt, then new tokens (then eos padding)
  std::vector<std::unique_ptr<KvCache>> caches;
  GenerateResult result;
  result.sequences.resize(rows);
  states.reserve(rows);
  for (int r = 0; r < rows; ++r) {
    const uint64_t rng_row = options.rng_rows.empty() ? static_cast<uint64_t>(r) : options.rng_rows[r];
    states.emplace_back(prompts[r], options.sampling, rng_row, row_grammar(options, r), rules);
    const int prompt_tokens = states[r].prompt_tokens();
    const int initial_capacity = prompt_tokens + std::min(options.max_new_tokens, kInitialNewTokenCapacity);
    caches.push_back(std::make_unique<KvCache>(config.kv_layout(options.kv_dtype), initial_capacity,
                                               prompt_tokens + options.max_new_tokens));
    result.sequences[r].prompt_tokens = prompt_tokens;
  }
  const auto all_finished = [&states] {
    return std::all_of(states.begin(), states.end(), [](const SequenceState& row) { return row.finished(); });
  };
  std::vector<ForwardRow> forward_rows(rows);
  std::vector<float> row_logits(config.vocab_size);
  // The prefill's buffers are sized (and their pages faulted in) before the clock starts, as the caches above were,
  // and a fresh transformer's first pass over its weights is made (Transformer::warm_up).
  transformer.warm_up();
  transformer.reserve_tokens(static_cast<int>(generation_shape(prompts, options).max_tokens_per_forward), rows);
  const Clock::time_point start = Clock::now();
  Clock::time_point first_token_time = start;

  for (int step = 0; step < options.max_new_tokens; ++step) {
    for (int r = 0; r < rows; ++r) {
      // past_len = cached length (0 without cache); feed ids[past_len:].
      if (!options.use_cache) caches[r]->clear();
      const int past_len = caches[r]->length();
      const std::vector<int>& ids = states[r].tokens();
      forward_rows[r] = ForwardRow{caches[r].get(), std::span<const int>(ids).subspan(past_len), false};
      result.sequences[r].forward_tokens += static_cast<int64_t>(ids.size()) - past_len;
    }
    const std::vector<float>& logits = transformer.forward(forward_rows);
    ++result.stats.forward_calls;

    for (int r = 0; r < rows; ++r) {
      GeneratedSequence& sequence = result.sequences[r];
      const float* last = logits.data() + static_cast<std::size_t>(r) * config.vocab_size;
      if (options.keep_step_logits) sequence.step_logits.emplace_back(last, last + config.vocab_size);
      if (states[r].finished()) {
        // MiniMind keeps feeding finished rows and pads them with eos; the work is wasted, so count it.
        states[r].pad_with_eos();
        ++sequence.padding_steps;
        continue;
      }
      // Last logits → the row's sampler chain (sampling/sampler_chain.h gives its order) → draw or argmax.
      std::copy(last, last + config.vocab_size, row_logits.begin());
      const TokenChoice choice = states[r].choose(row_logits);
      states[r].accept(choice.token);
      if (choice.grammar_allowed >= 0) sequence.grammar_allowed_tokens.push_back(choice.grammar_allowed);
      sequence.token_ids.push_back(choice.token);
      sequence.kept_candidates.push_back(choice.kept_candidates);
      if (on_token) on_token(TokenEvent{r, step, choice.token});
    }
    if (step == 0) first_token_time = Clock::now();
    if (all_finished()) break;
  }

  const Clock::time_point end = Clock::now();
  GenerateStats& stats = result.stats;
  for (int r = 0; r < rows; ++r) {
    result.sequences[r].finish_reason = states[r].finish_reason();
    stats.forward_tokens += result.sequences[r].forward_tokens;
    stats.kv_bytes_allocated += caches[r]->bytes_allocated();
    (options.use_cache ? stats.kv_bytes_used : stats.recompute_buffer_bytes) += caches[r]->bytes_used();
  }
  stats.load_ms = milliseconds_between(setup_start, start);
  stats.ttft_ms = milliseconds_between(start, first_token_time);
  stats.total_ms = milliseconds_between(start, end);
  stats.itl_ms = stats.forward_calls > 1 ? (stats.total_ms - stats.ttft_ms) / (stats.forward_calls - 1) : 0.0;
  return result;
}

}  // namespace minigen
