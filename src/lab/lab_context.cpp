#include "lab/lab_context.h"

#include <algorithm>
#include <cstdio>

#include "core/error.h"
#include "core/file_io.h"
#include "core/jsonl_texts.h"

namespace minigen::lab {
namespace {

LoadedModel load_lab_model(const std::filesystem::path& path, const char* flag, const LoadOptions& pth_options) {
  if (!std::filesystem::exists(path)) {
    throw Error(std::string(flag) + ": model " + path.string() + " does not exist");
  }
  try {
    const bool pth = path.extension() == ".pth" || path.extension() == ".pt";
    return load_model(path, pth ? pth_options : LoadOptions{});
  } catch (const Error& e) {
    throw Error(std::string(flag) + ": " + e.what());
  }
}

// Times what the work estimate prices (see CalibrationTimings), each run twice and the faster kept (the first run
// also grows buffers). About a second for a 64 M-parameter model.
ForwardCost calibrate(Transformer& transformer, const std::vector<int>& long_prompt, KvDType kv_dtype) {
  const int short_tokens = std::min(32, static_cast<int>(long_prompt.size()) / 2);
  constexpr int kDecodeSteps = 8;
  constexpr int kBatchRows = 8;
  const std::vector<int> short_prompt(long_prompt.begin(), long_prompt.begin() + short_tokens);
  const auto fastest = [&](const std::vector<int>& prompt, int rows, bool greedy) {
    GenerateOptions options;
    options.max_new_tokens = kDecodeSteps + 1;
    options.kv_dtype = kv_dtype;
    options.ignore_eos = true;
    options.sampling.greedy = greedy;  // else MiniMind's defaults: T 0.85, top-k 50, top-p 0.85
    const std::vector<std::vector<int>> batch(rows, prompt);
    GenerateStats best;
    for (int run = 0; run < 2; ++run) {
      const GenerateStats stats = generate(transformer, batch, options).stats;
      if (run == 0 || stats.ttft_ms < best.ttft_ms) best.ttft_ms = stats.ttft_ms;
      if (run == 0 || stats.itl_ms < best.itl_ms) best.itl_ms = stats.itl_ms;
    }
    return best;
  };
  const GenerateStats short_run = fastest(short_prompt, 1, true);
  const GenerateStats long_run = fastest(long_prompt, 1, true);
  const GenerateStats batch_run = fastest(short_prompt, kBatchRows, false);
  CalibrationTimings timings;
  timings.decode_position = short_tokens + kDecodeSteps / 2;
  timings.decode_step_seconds = short_run.itl_ms / 1000;
  timings.short_prefill_tokens = short_tokens;
  timings.short_prefill_seconds = short_run.ttft_ms / 1000;
  timings.long_prefill_tokens = static_cast<int>(long_prompt.size());
  timings.long_prefill_seconds = long_run.ttft_ms / 1000;
  timings.batch_rows = kBatchRows;
  timings.batch_position = short_tokens + kDecodeSteps / 2;
  timings.batch_step_seconds = batch_run.itl_ms / 1000;
  return price_from_timings(timings);
}

// The shipped example prompt (a few KB); the cap only guards against a replaced or damaged file.
std::string read_example(const std::filesystem::path& path) {
  return read_whole_file(path, kMaxPromptFileBytes, "lab example prompt");
}

// The first `count` documents of the held-out split, each bos + text + eos as `minigen perplexity --jsonl` scores them.
std::vector<std::vector<int>> read_heldout_documents(const Tokenizer& tokenizer, int count) {
  std::vector<std::vector<int>> documents;
  const std::filesystem::path path = minigen_home() / "examples" / "heldout.jsonl";
  if (!std::filesystem::exists(path)) throw Error("the lab's held-out documents " + path.string() + " are missing");
  for_each_jsonl_text(path.string(), [&](const std::string& text) {
    if (static_cast<int>(documents.size()) >= count) return;
    std::vector<int> document{tokenizer.bos_id()};
    const std::vector<int> ids = tokenizer.encode(text);
    document.insert(document.end(), ids.begin(), ids.end());
    document.push_back(tokenizer.eos_id());
    documents.push_back(std::move(document));
  });
  return documents;
}

}  // namespace

LabContext::LabContext(const LabOptions& options, std::ostream& progress)
    : scale_(LabScale::for_run(options.quick)),
      kv_dtype_(options.kv_dtype),
      progress_(progress),
      start_(std::chrono::steady_clock::now()),
      base_(load_lab_model(options.base_model, "--base", options.pth_options)),
      sft_(load_lab_model(options.sft_model, "--sft", options.pth_options)),
      pool_(options.threads > 0 ? options.threads : ThreadPool::default_thread_count()) {
  base_transformer_ = std::make_unique<Transformer>(*base_.model, pool_, options.weight_type);
  sft_transformer_ = std::make_unique<Transformer>(*sft_.model, pool_, options.weight_type);
  // The prompts come from each model's own tokenizer: the genesis text is cut (or repeated) to exactly the lengths
  // the sections ask for, whatever number of tokens it encodes to.
  const std::string genesis_text = read_example(minigen_home() / "examples" / "genesis-183.txt");
  genesis_text_tokens_ = base_.tokenizer->encode(genesis_text);
  if (genesis_text_tokens_.empty()) throw Error("examples/genesis-183.txt is empty");
  genesis_prompt_ = base_prompt_of_length(kHeadlinePromptTokens);
  for (const char* text : {"In the beginning", "And it came to pass, when the", "A fool and his money"}) {
    equivalence_prompts_.push_back({std::string("\"") + text + "\"", encode_base_prompt(*base_.tokenizer, text)});
  }
  equivalence_prompts_.push_back({"examples/genesis-183.txt", genesis_prompt_});
  chat_format_ = recognise_chat_template(sft_.tokenizer->chat_template());
  base_heldout_documents_ = read_heldout_documents(*base_.tokenizer, scale_.shrinking_documents);
  sft_heldout_documents_ = read_heldout_documents(*sft_.tokenizer, scale_.shrinking_documents);

  const LabPromptSizes prompts = prompt_sizes();
  const int longest_chat_prompt = *std::max_element(prompts.chat_prompts.begin(), prompts.chat_prompts.end());
  fit_to_context(scale_, base_.model->config.max_position_embeddings, sft_.model->config.max_position_embeddings,
                 longest_chat_prompt);

  // One untimed prefill of the longest prompt before anything is measured: the forward pass grows its activation
  // buffers on first use, a cost that would otherwise be charged to whichever timed run happens to come first.
  int longest_prompt = kHeadlinePromptTokens;
  for (int tokens : scale_.grid_prompt_tokens) longest_prompt = std::max(longest_prompt, tokens);
  for (int tokens : scale_.ttft_prompt_tokens) longest_prompt = std::max(longest_prompt, tokens);
  this->progress("timing the models to estimate the run");
  const std::vector<std::vector<int>> warm_up = {base_prompt_of_length(longest_prompt)};
  generate(*base_transformer_, warm_up, base_greedy_options(1, true));
  // Both models priced on base-model-form prompts (any ids do: only the lengths matter to the price).
  // The long prompt stays inside each model's context (fit_to_context made sure it holds 183 + 64 positions).
  const auto calibration_prompt = [&](const ModelConfig& config) {
    std::vector<int> prompt = base_prompt_of_length(std::min(256, config.max_position_embeddings - 16));
    for (int& id : prompt) id %= config.vocab_size;
    return prompt;
  };
  base_cost_ = calibrate(*base_transformer_, calibration_prompt(base_.model->config), kv_dtype_);
  sft_cost_ = calibrate(*sft_transformer_, calibration_prompt(sft_.model->config), kv_dtype_);
  estimate_ =
      fit_to_budget(scale_, prompts, base_cost_, sft_cost_, options.quick ? kQuickBudgetSeconds : kFullBudgetSeconds);
}

void LabContext::progress(std::string_view message) {
  const double elapsed_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  std::string stamp(32, '\0');
  stamp.resize(std::snprintf(stamp.data(), stamp.size(), "[lab %6.1f s", elapsed_s));
  if (current_section_ >= 0 && !estimate_.section_seconds.empty()) {
    // What is left at the estimate's prices, corrected by how the finished sections compared with their estimate.
    const std::vector<double>& planned = estimate_.section_seconds;
    double planned_done = 0;
    for (int i = 0; i < current_section_; ++i) planned_done += planned[i];
    const double actual_done = section_started_s_[current_section_] - section_started_s_.front();
    const double speed = planned_done > 1.0 ? std::clamp(actual_done / planned_done, 0.25, 4.0) : 1.0;
    double left = std::max(0.0, planned[current_section_] * speed - (elapsed_s - section_started_s_.back()));
    for (std::size_t i = current_section_ + 1; i < planned.size(); ++i) left += planned[i] * speed;
    stamp += ", about " + duration_text(left) + " left";
  }
  progress_ << stamp << "] " << message << "\n" << std::flush;
}

void LabContext::begin_section(int index) {
  current_section_ = index;
  section_started_s_.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count());
}

LabPromptSizes LabContext::prompt_sizes() const {
  LabPromptSizes sizes;
  for (const NamedPrompt& prompt : equivalence_prompts_) {
    sizes.equivalence_prompts.push_back(static_cast<int>(prompt.tokens.size()));
  }
  for (const std::string& message : chat_messages()) {
    sizes.chat_prompts.push_back(static_cast<int>(chat_prompt(message).size()));
  }
  for (const std::vector<int>& document : base_heldout_documents_) {
    sizes.base_documents.push_back(static_cast<int>(document.size()));
  }
  for (const std::vector<int>& document : sft_heldout_documents_) {
    sizes.sft_documents.push_back(static_cast<int>(document.size()));
  }
  return sizes;
}

std::vector<int> LabContext::base_prompt_of_length(int tokens) const {
  // bos, then the text's tokens, from the start again when the text runs out. Cutting happens after tokenization,
  // so every length is exact whichever tokenizer the model brings (the cut may fall inside a word).
  std::vector<int> prompt{base_.tokenizer->bos_id()};
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
  const RunKey key = std::make_tuple(prompt, new_tokens, use_cache);
  const auto found = base_greedy_runs_.find(key);
  if (found != base_greedy_runs_.end()) return found->second.result;
  progress("  base model, greedy, P = " + std::to_string(prompt.size()) + ", N = " + std::to_string(new_tokens) +
           (use_cache ? ", with the cache" : ", without the cache"));
  const std::vector<std::vector<int>> prompts = {prompt};
  std::vector<int64_t> routing = base_transformer_->expert_token_counts();
  BaseRun run{generate(*base_transformer_, prompts, base_greedy_options(new_tokens, use_cache)), {}};
  const std::vector<int64_t>& after = base_transformer_->expert_token_counts();
  for (std::size_t i = 0; i < routing.size(); ++i) routing[i] = after[i] - routing[i];
  run.routing = std::move(routing);
  return base_greedy_runs_.emplace(key, std::move(run)).first->second.result;
}

std::vector<int64_t> LabContext::base_greedy_routing(const std::vector<int>& prompt, int new_tokens,
                                                     bool use_cache) const {
  const auto found = base_greedy_runs_.find(std::make_tuple(prompt, new_tokens, use_cache));
  return found == base_greedy_runs_.end() ? std::vector<int64_t>() : found->second.routing;
}

GenerateResult LabContext::generate(Transformer& transformer, std::span<const std::vector<int>> prompts,
                                    GenerateOptions options) const {
  options.kv_dtype = kv_dtype_;
  return minigen::generate(transformer, prompts, options);
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
