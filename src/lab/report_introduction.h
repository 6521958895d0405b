#pragma once
// The report's opening, as data and as text: what was run on which models, what the run's sizes left out, and the
// estimated against the measured time of each section. The runner fills RunDescription; the functions below read
// nothing else.
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "lab/budget_fit.h"
#include "lab/report_language.h"
#include "lab/section_data.h"

namespace minigen::lab {

// What the report says about a model in one line.
struct ModelSummary {
  std::string path;
  std::string format;        // "safetensors", "pth", "gguf"
  std::string stored_dtype;  // as the file stores the weights
  std::string family;
  long long parameters = 0;
  int layers = 0;
  int q_heads = 0;
  int kv_heads = 0;
  int head_dim = 0;
  int context = 0;
  int vocab_size = 0;
  int experts = 0;  // 0: dense
  int experts_per_token = 0;
  std::optional<double> yarn_factor;
};

enum class SectionModels { kBase, kSft, kBoth };  // which models a section runs

struct RunDescription {
  bool quick = false;
  int threads = 0;
  std::string weights;            // the weight type the models were read as
  std::string requested_weights;  // --weights
  ModelSummary base;
  ModelSummary sft;
  nlohmann::json base_description;  // model_description() of each, for report.json
  nlohmann::json sft_description;
  std::string chat_template;
  std::string chat_template_zh;        // the same in Chinese
  int genesis_text_prompt_tokens = 0;  // the whole prompt text with bos, with the base model's tokenizer
  // The material (lab_material.h): where each part came from, and why the shipped Chinese set was chosen if it was.
  std::string prompt_text_source;
  std::string chat_prompts_source;
  std::string eval_source;
  bool eval_is_documents = true;
  bool chinese_set = false;             // the shipped Chinese material stood in for what was not given
  bool chinese_set_for_report = false;  // because the report is in Chinese (else: MiniMind's tokenizer)
  OneModelForBoth one_model_for_both = OneModelForBoth::kNo;
  std::vector<std::string> cuts;
  BudgetFit estimate;
  ForwardCost base_cost;
  ForwardCost sft_cost;
  std::vector<std::string> section_titles;
  std::vector<double> measured_seconds;  // per section
  // Each model's perplexity on the held-out documents with f32 weights and cache (section 9); empty when the run
  // scored no document. With vocab_size it tells an untrained model.
  std::optional<double> base_perplexity;
  std::optional<double> sft_perplexity;
};

// "`models/x` (safetensors, f32) — tiny, 4,900,000 parameters, …"
std::string model_text(const ModelSummary& model, Language language = Language::kEnglish);
// The italic line that opens each section: which model it ran on.
std::string section_model_line(SectionModels models, const RunDescription& run, Language language = Language::kEnglish);
// The f32 row's perplexity of section 9's KV table (the model itself, nothing shrunk); empty when no document was
// scored.
std::optional<double> f32_perplexity(const std::vector<KvTypeResult>& kv_rows);
// The warning that opens the report when a model looks untrained (report_thresholds.h: perplexity at or above the
// vocabulary size, no better than a uniform guess); empty when neither does or no perplexity was measured.
std::optional<std::string> untrained_warning(const RunDescription& run, Language language = Language::kEnglish);
// The paragraphs before the first section — the untrained warning first when there is one — ending with the
// estimated against measured time of each section.
std::vector<std::string> introduction(const RunDescription& run, Language language = Language::kEnglish);
// report.json's "settings".
nlohmann::json settings_json(const RunDescription& run);

}  // namespace minigen::lab
