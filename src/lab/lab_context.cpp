#include "lab/lab_context.h"

#include <algorithm>
#include <cstdio>

#include "core/error.h"
#include "core/file_io.h"
#include "tokenizer/chat_template.h"

namespace minigen::lab {
namespace {

LoadedModel load_lab_model(const std::filesystem::path& path, const char* flag) {
  if (!std::filesystem::exists(path)) {
    throw Error(std::string(flag) + ": model " + path.string() + " does not exist");
  }
  try {
    return load_model(path);
  } catch (const Error& e) {
    throw Error(std::string(flag) + ": " + e.what());
  }
}

// The shipped example prompt (a few KB); the cap only guards against a replaced or damaged file.
std::string read_example(const std::filesystem::path& path) {
  return read_whole_file(path, kMaxPromptFileBytes, "lab example prompt");
}

}  // namespace

LabScale LabScale::for_run(bool quick) {
  LabScale scale;
  scale.quick = quick;
  // A guard for the run time, not a part of the experiment: the largest point of the full grid (P = 512, N = 256)
  // feeds 163,712 tokens without the cache, about a minute and a half on 2 cores. A grid point above the guard would
  // be measured with the cache only; the formula is checked at every point that is run.
  scale.max_uncached_grid_tokens = 200000;
  if (quick) {
    scale.equivalence_sampled_long_prompt = false;
    scale.grid_prompt_tokens = {16, kHeadlinePromptTokens};
    scale.grid_new_tokens = {16, kHeadlineNewTokens};
    scale.sweep_new_tokens = {8, 16, 32, kHeadlineNewTokens};
    scale.timing_repeats = 1;
    scale.ttft_prompt_tokens = {16, 64, kHeadlinePromptTokens, 384};
    scale.kv_max_length = 4096;
    scale.temperature_samples = 10;
    scale.temperature_prompt_count = 2;
    scale.temperature_new_tokens = 40;
    scale.top_p_prompt_count = 2;
    scale.top_p_rows = 2;
    scale.top_p_new_tokens = 40;
    scale.seed_new_tokens = 32;
  } else {
    scale.grid_prompt_tokens = {16, 64, kHeadlinePromptTokens, 512};
    scale.grid_new_tokens = {16, kHeadlineNewTokens, 256};
    scale.sweep_new_tokens = {8, 16, 32, kHeadlineNewTokens, 128, 256};
    scale.timing_repeats = 5;
    scale.ttft_prompt_tokens = {16, 64, 128, kHeadlinePromptTokens, 256, 384, 512};
    scale.kv_max_length = 32768;
    scale.temperature_samples = 30;
    scale.temperature_prompt_count = 4;
    scale.temperature_new_tokens = 128;
    scale.top_p_prompt_count = 4;
    scale.top_p_rows = 4;
    scale.top_p_new_tokens = 96;
    scale.seed_new_tokens = 64;
  }
  return scale;
}

LabContext::LabContext(const LabOptions& options, std::ostream& progress)
    : scale_(LabScale::for_run(options.quick)),
      progress_(progress),
      start_(std::chrono::steady_clock::now()),
      base_(load_lab_model(options.base_model, "--base")),
      sft_(load_lab_model(options.sft_model, "--sft")),
      pool_(options.threads > 0 ? options.threads : ThreadPool::default_thread_count()) {
  base_transformer_ = std::make_unique<Transformer>(*base_.model, pool_);
  sft_transformer_ = std::make_unique<Transformer>(*sft_.model, pool_);
  const std::string genesis_text = read_example(minigen_home() / "examples" / "genesis-183.txt");
  genesis_prompt_ = encode_base_prompt(*base_.tokenizer, genesis_text);
  genesis_text_tokens_ = base_.tokenizer->encode(genesis_text);
  if (genesis_text_tokens_.empty()) throw Error("examples/genesis-183.txt is empty");

  // One untimed prefill of the longest prompt before anything is measured: the forward pass grows its activation
  // buffers on first use, a cost that would otherwise be charged to whichever timed run happens to come first.
  int longest_prompt = kHeadlinePromptTokens;
  for (int tokens : scale_.grid_prompt_tokens) longest_prompt = std::max(longest_prompt, tokens);
  for (int tokens : scale_.ttft_prompt_tokens) longest_prompt = std::max(longest_prompt, tokens);
  const std::vector<std::vector<int>> warm_up = {base_prompt_of_length(longest_prompt)};
  generate(*base_transformer_, warm_up, base_greedy_options(1, true));
}

void LabContext::progress(std::string_view message) {
  const double elapsed_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  char stamp[32];
  std::snprintf(stamp, sizeof stamp, "[lab %6.1f s] ", elapsed_s);
  progress_ << stamp << message << "\n" << std::flush;
}

std::vector<int> LabContext::base_prompt_of_length(int tokens) const {
  std::vector<int> prompt(genesis_prompt_.begin(),
                          genesis_prompt_.begin() + std::min<std::size_t>(tokens, genesis_prompt_.size()));
  for (std::size_t i = 0; static_cast<int>(prompt.size()) < tokens; ++i) {
    prompt.push_back(genesis_text_tokens_[i % genesis_text_tokens_.size()]);
  }
  return prompt;
}

std::vector<int> LabContext::chat_prompt(std::string_view user_message) const {
  const std::vector<ChatMessage> messages = {{"user", std::string(user_message)}};
  return encode_chatml(*sft_.tokenizer, messages, /*add_generation_prompt=*/true, /*enable_thinking=*/false);
}

const std::vector<std::string>& LabContext::chat_messages() {
  static const std::vector<std::string> messages = {
      // The kinds of question the SFT model was trained on: a definition, a verse, a joke, a poem's author.
      "What does 'river' mean?",
      "What does John 3:16 say?",
      "Tell me a joke.",
      "《清平调・其二》的作者是谁？",
  };
  return messages;
}

const GenerateResult& LabContext::base_greedy_run(const std::vector<int>& prompt, int new_tokens, bool use_cache) {
  const auto key = std::make_tuple(prompt, new_tokens, use_cache);
  const auto found = base_greedy_runs_.find(key);
  if (found != base_greedy_runs_.end()) return found->second;
  progress("  base model, greedy, P = " + std::to_string(prompt.size()) + ", N = " + std::to_string(new_tokens) +
           (use_cache ? ", with the cache" : ", without the cache"));
  const std::vector<std::vector<int>> prompts = {prompt};
  return base_greedy_runs_
      .emplace(key, generate(*base_transformer_, prompts, base_greedy_options(new_tokens, use_cache)))
      .first->second;
}

GenerateOptions LabContext::base_greedy_options(int new_tokens, bool use_cache) {
  GenerateOptions options;
  options.max_new_tokens = new_tokens;
  options.use_cache = use_cache;
  options.ignore_eos = true;  // exactly N tokens, so the counts can be checked against the formulas
  options.sampling.greedy = true;
  options.keep_step_logits = true;  // section 1 compares every logit
  return options;
}

}  // namespace minigen::lab
