#pragma once
// What every lab section shares: the two models, their forward passes, the sizes of the run (quick or full), the
// prompts cut from the run's material (lab_material.h), the progress log, and a memo of the base model's greedy runs,
// so that a run one section needs again (183 tokens, 64 new, without the cache: seconds of work) is computed once.
#include <chrono>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "checkpoint/model_loader.h"
#include "generate/generate.h"
#include "lab/budget_fit.h"
#include "lab/lab_material.h"
#include "lab/report_language.h"
#include "lab/section_data.h"
#include "model/lora_adapter.h"
#include "model/transformer.h"
#include "ops/thread_pool.h"
#include "ops/weight_type.h"
#include "tokenizer/chat_template.h"

namespace minigen::lab {

struct LabOptions {
  // A pretrained (base) model for sections 1–4 and 9, a chat (SFT) model for sections 5–10. Neither given: the shipped
  // tiny models. One given: it plays both parts, and the report says so (never a shipped model in its place).
  std::optional<std::filesystem::path> base_model;
  std::optional<std::filesystem::path> sft_model;
  LabMaterialFiles material;  // --prompt-text, --chat-prompts, --eval
  std::filesystem::path out_dir;
  LoadOptions pth_options;  // --heads and --tokenizer: what a .pth file cannot tell (a directory carries its own)
  WeightType weight_type = WeightType::kF32;
  KvDType kv_dtype = KvDType::kF32;  // every generation of the report caches K and V in it
  bool quick = false;                // smaller grids, fewer repeats and samples
  int threads = 0;                   // 0: one per core
  // --lora: the learner's own adapter for the SFT model (MiniMind .pth, PEFT folder or GGUF), which section 11
  // measures; absent: section 11 makes a random one in MiniMind's shape.
  std::optional<std::filesystem::path> lora;
  // The language of the progress lines (run_lab sets it to the report's).
  Language language = Language::kEnglish;
};

// A base-model prompt with the name the report gives it.
struct NamedPrompt {
  std::string name;
  std::vector<int> tokens;
};

class LabContext {
 public:
  // Loads both models, builds the prompts with each model's own tokenizer, fits the scale to the models' context,
  // times one prefill and a few decode steps of each model, and shrinks the scale to the run's time budget.
  LabContext(const LabOptions& options, std::ostream& progress);

  const LabScale& scale() const { return scale_; }
  const LoadedModel& base() const { return base_; }
  const LoadedModel& sft() const { return *sft_; }
  // The learner's adapter (--lora), read and checked against the SFT model before anything runs; nullptr without.
  const LoraAdapter* learners_adapter() const { return learners_adapter_.get(); }
  Transformer& base_transformer() { return *base_transformer_; }
  Transformer& sft_transformer() { return *sft_transformer_; }
  int threads() const { return pool_.num_threads(); }
  WeightType weight_type() const { return base_transformer_->weight_type(); }
  KvDType kv_dtype() const { return kv_dtype_; }
  // minigen::generate with the report's KV dtype: what every section calls.
  GenerateResult generate(Transformer& transformer, std::span<const std::vector<int>> prompts,
                          GenerateOptions options) const;

  // "[lab  12.3 s, about 1 min 05 s left] message" on the progress stream.
  void progress(std::string_view message);
  // A progress line in the run's language: say("growing a cache", "让缓存增长").
  std::string say(std::string_view english, std::string_view chinese) const { return say_(english, chinese); }
  Language language() const { return say_.language; }
  // Marks the start of a section (0-based), for the time-left estimate.
  void begin_section(int index);
  // The estimate made before the run, and the calibration it came from.
  const BudgetFit& estimate() const { return estimate_; }
  const ForwardCost& base_cost() const { return base_cost_; }
  const ForwardCost& sft_cost() const { return sft_cost_; }

  // The run's text, questions and evaluation set, and whether one model given alone played both parts.
  const LabMaterial& material() const { return material_; }
  OneModelForBoth one_model_for_both() const { return one_model_for_both_; }
  // The prompt text in the base-model form (bos + text), cut (or, for the shipped English text, extended) to exactly
  // 183 tokens with the base model's tokenizer.
  const std::vector<int>& headline_prompt() const { return headline_prompt_; }
  // How many tokens (with bos) the whole prompt text is with the base model's tokenizer.
  int prompt_text_tokens() const { return static_cast<int>(prompt_text_tokens_.size()) + 1; }
  // Section 1's base-model prompts (three short ones, then the 183-token prompt), which section 9 also decodes.
  const std::vector<NamedPrompt>& equivalence_prompts() const { return equivalence_prompts_; }
  // A base-model prompt of exactly `tokens` tokens: the prompt text cut short (or the shipped English text followed
  // by itself again).
  std::vector<int> base_prompt_of_length(int tokens) const;
  // A user message in the SFT model's chat format (its tokenizer's template), thinking off.
  std::vector<int> chat_prompt(std::string_view user_message) const;
  const ChatFormatChoice& chat_format() const { return chat_format_; }
  // The questions for the SFT sections, in file order, and section 10's.
  const std::vector<std::string>& chat_messages() const { return material_.chat_prompts.questions; }
  const std::string& constraining_question() const { return material_.chat_prompts.constraining_question; }
  // What section 9's perplexities score, with the base and with the SFT model's tokenizer: the first documents of
  // the evaluation set (as many as the full run scores), each bos + text + eos as `minigen perplexity --jsonl` scores
  // them; for a plain text, its tokens in windows of bos + the model's perplexity context, as `minigen perplexity -f`.
  const std::vector<std::vector<int>>& base_eval_documents() const { return base_eval_documents_; }
  const std::vector<std::vector<int>>& sft_eval_documents() const { return sft_eval_documents_; }
  // The prompt sizes the work estimate needs.
  LabPromptSizes prompt_sizes() const;

  // The base model, greedy, ignore_eos, step logits kept; computed once per (prompt, new tokens, cache).
  const GenerateResult& base_greedy_run(const std::vector<int>& prompt, int new_tokens, bool use_cache);
  // For a mixture-of-experts base model: the tokens the router sent to each expert during that run,
  // [layer · experts + expert]; empty for a dense model or a run not made.
  std::vector<int64_t> base_greedy_routing(const std::vector<int>& prompt, int new_tokens, bool use_cache) const;
  // The options of those runs, for sections that repeat one to time it.
  static GenerateOptions base_greedy_options(int new_tokens, bool use_cache);

 private:
  using RunKey = std::tuple<std::vector<int>, int, bool>;
  struct BaseRun {
    GenerateResult result;
    std::vector<int64_t> routing;
  };

  LabScale scale_;
  KvDType kv_dtype_;
  std::ostream& progress_;
  Words say_;
  std::chrono::steady_clock::time_point start_;
  OneModelForBoth one_model_for_both_;
  LoadedModel base_;
  std::optional<LoadedModel> own_sft_;  // absent when the SFT part is played by the base model's file
  const LoadedModel* sft_ = nullptr;
  ThreadPool pool_;
  std::unique_ptr<Transformer> base_transformer_;
  std::unique_ptr<Transformer> own_sft_transformer_;
  Transformer* sft_transformer_ = nullptr;
  std::shared_ptr<const LoraAdapter> learners_adapter_;
  LabMaterial material_;
  std::vector<int> headline_prompt_;
  std::vector<int> prompt_text_tokens_;  // without bos: what the prompts are cut from
  std::vector<NamedPrompt> equivalence_prompts_;
  ChatFormatChoice chat_format_;
  std::vector<std::vector<int>> base_eval_documents_;
  std::vector<std::vector<int>> sft_eval_documents_;
  ForwardCost base_cost_;
  ForwardCost sft_cost_;
  BudgetFit estimate_;
  int current_section_ = -1;
  std::vector<double> section_started_s_;  // elapsed seconds at each begun section's start
  std::map<RunKey, BaseRun> base_greedy_runs_;
};

}  // namespace minigen::lab
