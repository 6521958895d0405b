// Section 1, measured: the KV cache changes how much is computed, never what comes out. The base model continues
// several prompts (one of exactly 183 tokens) for 64 tokens with and without the cache, greedily and by sampling
// with a fixed seed; the token ids and every step's logits are compared.
#include <string>
#include <vector>

#include "lab/section_measures.h"

namespace minigen::lab {
namespace {

constexpr uint64_t kSamplingSeed = 1234;

// MiniMind's sampling defaults (T 0.85, top-k 50, top-p 0.85) with a fixed seed; eos ignored for exactly N tokens.
GenerateOptions sampled_options(int new_tokens, bool use_cache) {
  GenerateOptions options;
  options.max_new_tokens = new_tokens;
  options.use_cache = use_cache;
  options.ignore_eos = true;
  options.keep_step_logits = true;
  options.sampling.seed = kSamplingSeed;
  return options;
}

}  // namespace

CacheEquivalenceData measure_cache_equivalence(LabContext& lab) {
  CacheEquivalenceData data;
  data.new_tokens = lab.scale().equivalence_new_tokens;
  data.sampling_seed = kSamplingSeed;
  data.vocab_size = lab.base().model->config.vocab_size;
  for (const bool sampled : {false, true}) {
    for (const NamedPrompt& prompt : lab.equivalence_prompts()) {
      const bool long_prompt = static_cast<int>(prompt.tokens.size()) > 64;
      if (sampled && long_prompt && !lab.scale().equivalence_sampled_long_prompt) continue;
      GenerateResult sampled_cached;
      GenerateResult sampled_uncached;
      const GenerateResult* cached = &sampled_cached;
      const GenerateResult* uncached = &sampled_uncached;
      if (sampled) {
        const std::string tokens = std::to_string(prompt.tokens.size());
        lab.progress(
            lab.say("  sampled, prompt " + prompt.name + " (" + tokens + " tokens), with and without the cache",
                    "  抽样，提示 " + Words{Language::kChinese}.label(prompt.name) + "（" + tokens +
                        " 个 token），有缓存和无缓存"));
        const std::vector<std::vector<int>> batch = {prompt.tokens};
        sampled_cached = lab.generate(lab.base_transformer(), batch, sampled_options(data.new_tokens, true));
        sampled_uncached = lab.generate(lab.base_transformer(), batch, sampled_options(data.new_tokens, false));
      } else {
        cached = &lab.base_greedy_run(prompt.tokens, data.new_tokens, true);
        uncached = &lab.base_greedy_run(prompt.tokens, data.new_tokens, false);
      }
      const GeneratedSequence& with_cache = cached->sequences.front();
      const GeneratedSequence& without_cache = uncached->sequences.front();
      data.runs.push_back({prompt.name, static_cast<int>(prompt.tokens.size()), sampled,
                           compare_rows(with_cache, without_cache), with_cache.token_ids, without_cache.token_ids,
                           prompt.tokens});
      if (!sampled && long_prompt) {
        data.genesis_continuation_text =
            lab.base().tokenizer->decode(with_cache.token_ids, /*skip_special_tokens=*/true);
      }
    }
  }
  data.genesis_prompt_tokens = static_cast<int>(lab.headline_prompt().size());
  data.genesis_text_prompt_tokens = lab.prompt_text_tokens();
  data.prompt_text_source = lab.material().prompt_text.source;
  return data;
}

}  // namespace minigen::lab
