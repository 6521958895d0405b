#include "lab/lab_context.h"

#include <algorithm>
#include <cstdio>

#include "checkpoint/lora_loader.h"
#include "core/error.h"
#include "core/file_io.h"
#include "core/translated_error.h"

namespace minigen::lab {
namespace {

LoadedModel load_lab_model(const std::filesystem::path& path, const char* flag, const LoadOptions& pth_options) {
  if (!std::filesystem::exists(path)) {
    throw TranslatedError(std::string(flag) + ": model " + path.string() + " does not exist",
                          std::string(flag) + "：模型 " + path.string() + " 不存在");
  }
  try {
    const bool pth = path.extension() == ".pth" || path.extension() == ".pt";
    return load_model(path, pth ? pth_options : LoadOptions{});
  } catch (const Error& e) {
    rethrow_with_prefix(e, std::string(flag) + ": ", std::string(flag) + "：");
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

// Which file plays each part. One model given plays both, with a note for the report: a shipped model never stands
// in for a missing one unannounced.
struct ModelChoice {
  std::filesystem::path base;
  std::filesystem::path sft;
  OneModelForBoth one_model_for_both = OneModelForBoth::kNo;
};

ModelChoice choose_models(const LabOptions& options) {
  if (options.base_model && options.sft_model) return {*options.base_model, *options.sft_model};
  if (options.base_model) {
    return {*options.base_model, *options.base_model, OneModelForBoth::kOnlyBaseGiven};
  }
  if (options.sft_model) {
    return {*options.sft_model, *options.sft_model, OneModelForBoth::kOnlySftGiven};
  }
  const std::filesystem::path shipped = minigen_home() / "models";
  return {shipped / "minigen-tiny-base", shipped / "minigen-tiny-sft"};
}

// What section 9 scores of the evaluation set with one model's tokenizer: the first `count` documents as bos + text +
// eos, or a plain text's first `count` windows of bos + `context` tokens (each token of the text a target once).
std::vector<std::vector<int>> eval_documents(const EvalText& eval, const Tokenizer& tokenizer, int count, int context) {
  std::vector<std::vector<int>> documents;
  if (!eval.documents) {
    const std::vector<int> ids = tokenizer.encode(eval.texts.front());
    for (std::size_t start = 0; start < ids.size() && static_cast<int>(documents.size()) < count; start += context) {
      std::vector<int> window{tokenizer.bos_id()};
      window.insert(window.end(), ids.begin() + start, ids.begin() + std::min(ids.size(), start + context));
      documents.push_back(std::move(window));
    }
    return documents;
  }
  for (const std::string& text : eval.texts) {
    if (static_cast<int>(documents.size()) >= count) break;
    std::vector<int> document{tokenizer.bos_id()};
    const std::vector<int> ids = tokenizer.encode(text);
    document.insert(document.end(), ids.begin(), ids.end());
    document.push_back(tokenizer.eos_id());
    documents.push_back(std::move(document));
  }
  return documents;
}

// The longest base-model prompt the run's sizes ask for.
int longest_base_prompt(const LabScale& scale) {
  int longest = std::max(kHeadlinePromptTokens, kShrinkingDecodePromptTokens);
  for (int tokens : scale.grid_prompt_tokens) longest = std::max(longest, tokens);
  for (int tokens : scale.ttft_prompt_tokens) longest = std::max(longest, tokens);
  for (int tokens : kShortPromptTokens) longest = std::max(longest, tokens);
  return longest;
}

}  // namespace

LabContext::LabContext(const LabOptions& options, std::ostream& progress)
    : scale_(LabScale::for_run(options.quick)),
      kv_dtype_(options.kv_dtype),
      progress_(progress),
      say_{options.language},
      start_(std::chrono::steady_clock::now()),
      one_model_for_both_(choose_models(options).one_model_for_both),
      base_(load_lab_model(choose_models(options).base, options.base_model ? "--base" : "--sft", options.pth_options)),
      pool_(options.threads > 0 ? options.threads : ThreadPool::default_thread_count()) {
  const std::filesystem::path sft_path = choose_models(options).sft;
  base_transformer_ = std::make_unique<Transformer>(*base_.model, pool_, options.weight_type);
  if (std::filesystem::exists(sft_path) && std::filesystem::equivalent(sft_path, base_.path)) {
    sft_ = &base_;  // one file in both parts: loaded once
    sft_transformer_ = base_transformer_.get();
  } else {
    own_sft_ = load_lab_model(sft_path, "--sft", options.pth_options);
    sft_ = &*own_sft_;
    own_sft_transformer_ = std::make_unique<Transformer>(*sft_->model, pool_, options.weight_type);
    sft_transformer_ = own_sft_transformer_.get();
  }
  if (options.lora) {
    try {
      learners_adapter_ = load_lora_adapter(*options.lora, sft_->model->config);
    } catch (const Error& e) {
      throw Error(std::string("--lora: ") + e.what());
    }
  }
  material_ = choose_lab_material(options.material, *base_.tokenizer, minigen_home());
  // The prompts come from each model's own tokenizer: the prompt text is cut to exactly the lengths the sections ask
  // for, whatever number of tokens it encodes to.
  prompt_text_tokens_ = base_.tokenizer->encode(material_.prompt_text.text);
  if (prompt_text_tokens_.empty()) throw Error(material_.prompt_text.source + " encodes to no tokens");
  const Tokenizer& sft_tokenizer = *sft_->tokenizer;
  chat_format_ = recognise_chat_template(sft_tokenizer.chat_template());
  const auto perplexity_context = [](const LoadedModel& loaded) {
    return std::min(kPerplexityContext, loaded.model->config.max_position_embeddings - 1);
  };
  base_eval_documents_ =
      eval_documents(material_.eval, *base_.tokenizer, scale_.shrinking_documents, perplexity_context(base_));
  sft_eval_documents_ =
      eval_documents(material_.eval, sft_tokenizer, scale_.shrinking_documents, perplexity_context(*sft_));

  headline_prompt_ = base_prompt_of_length(kHeadlinePromptTokens);
  const std::string quoted_source = "`" + material_.prompt_text.source + "`";
  for (const std::string& text : material_.prompt_text.short_prompts) {
    equivalence_prompts_.push_back({"\"" + text + "\"", encode_base_prompt(*base_.tokenizer, text)});
  }
  if (material_.prompt_text.short_prompts.empty()) {
    for (int tokens : kShortPromptTokens) {
      equivalence_prompts_.push_back(
          {"the first " + std::to_string(tokens) + " tokens of " + quoted_source, base_prompt_of_length(tokens)});
    }
  }
  equivalence_prompts_.push_back({quoted_source, headline_prompt_});

  const LabPromptSizes prompts = prompt_sizes();
  const int longest_chat_prompt = *std::max_element(prompts.chat_prompts.begin(), prompts.chat_prompts.end());
  fit_to_context(scale_, base_.model->config.max_position_embeddings, sft_->model->config.max_position_embeddings,
                 longest_chat_prompt);
  // A learner's text must hold the longest prompt itself, so that every prompt the report shows is their text.
  const int longest = longest_base_prompt(scale_);
  if (!material_.prompt_text.may_repeat && prompt_text_tokens() < longest) {
    throw TranslatedError(
        "--prompt-text: " + material_.prompt_text.source + " is " + std::to_string(prompt_text_tokens()) +
            " tokens (with bos) for the base model's tokenizer; the " + (options.quick ? "quick" : "full") +
            " lab cuts prompts of up to " + std::to_string(longest) + " tokens from it. Give a longer text" +
            (options.quick ? "." : ", or run with --quick."),
        "--prompt-text：" + material_.prompt_text.source + " 用基础模型的分词器只有 " +
            std::to_string(prompt_text_tokens()) + " 个 token（含 bos）；" + (options.quick ? "快速" : "完整") +
            "的 lab 要从中截取最长 " + std::to_string(longest) + " 个 token 的提示。请给出更长的文本" +
            (options.quick ? "。" : "，或加上 --quick 运行。"));
  }

  // One untimed prefill of the longest prompt before anything is measured: the forward pass grows its activation
  // buffers on first use, a cost that would otherwise be charged to whichever timed run happens to come first.
  this->progress(say("timing the models to estimate the run", "为估计运行时间给模型计时"));
  const std::vector<std::vector<int>> warm_up = {base_prompt_of_length(longest)};
  generate(*base_transformer_, warm_up, base_greedy_options(1, true));
  // Both models priced on base-model-form prompts (any ids do: only the lengths matter to the price).
  // The long prompt stays inside each model's context (fit_to_context made sure it holds 183 + 64 positions).
  const auto calibration_prompt = [&](const ModelConfig& config) {
    std::vector<int> prompt = base_prompt_of_length(std::min(256, config.max_position_embeddings - 16));
    for (int& id : prompt) id %= config.vocab_size;
    return prompt;
  };
  base_cost_ = calibrate(*base_transformer_, calibration_prompt(base_.model->config), kv_dtype_);
  sft_cost_ = calibrate(*sft_transformer_, calibration_prompt(sft_->model->config), kv_dtype_);
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
    stamp += say(", about " + duration_text(left) + " left", "，还剩约 " + duration_text(left));
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
  for (const std::vector<int>& document : base_eval_documents_) {
    sizes.base_documents.push_back(static_cast<int>(document.size()));
  }
  for (const std::vector<int>& document : sft_eval_documents_) {
    sizes.sft_documents.push_back(static_cast<int>(document.size()));
  }
  return sizes;
}

std::vector<int> LabContext::base_prompt_of_length(int tokens) const {
  // bos, then the text's tokens, from the start again when the text runs out (only the shipped English text runs
  // out in the sections; a learner's text was checked to be long enough). Cutting happens after tokenization, so
  // every length is exact whichever tokenizer the model brings (the cut may fall inside a word or a character).
  std::vector<int> prompt{base_.tokenizer->bos_id()};
  for (std::size_t i = 0; static_cast<int>(prompt.size()) < tokens; ++i) {
    prompt.push_back(prompt_text_tokens_[i % prompt_text_tokens_.size()]);
  }
  return prompt;
}

std::vector<int> LabContext::chat_prompt(std::string_view user_message) const {
  const std::vector<ChatMessage> messages = {{"user", std::string(user_message)}};
  return encode_chatml(*sft_->tokenizer, messages, /*add_generation_prompt=*/true, /*enable_thinking=*/false);
}

const GenerateResult& LabContext::base_greedy_run(const std::vector<int>& prompt, int new_tokens, bool use_cache) {
  const RunKey key = std::make_tuple(prompt, new_tokens, use_cache);
  const auto found = base_greedy_runs_.find(key);
  if (found != base_greedy_runs_.end()) return found->second.result;
  const std::string shape = "P = " + std::to_string(prompt.size()) + ", N = " + std::to_string(new_tokens);
  progress(say("  base model, greedy, " + shape + (use_cache ? ", with the cache" : ", without the cache"),
               "  基础模型，贪心解码，" + shape + (use_cache ? "，有缓存" : "，无缓存")));
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
