// Section 9, measured: shrinking the cache, and the weights. Every KV type (bf16, f16, int8) and weight type (bf16,
// q8, q4) is run against fp32 on the same prompts and the same held-out documents: its bytes, how far the logits
// move, how often greedy decoding still picks the same token, and the perplexity (with the KL divergence from the
// fp32 distribution).
#include <algorithm>
#include <cmath>
#include <iterator>
#include <memory>
#include <string>
#include <vector>

#include "core/format.h"
#include "eval/perplexity.h"
#include "lab/kv_budget.h"
#include "lab/section_measures.h"

namespace minigen::lab {
namespace {

constexpr uint64_t kGiB = uint64_t{1} << 30;
constexpr KvDType kKvTypes[kShrinkingKvTypes] = {KvDType::kF32, KvDType::kBF16, KvDType::kF16, KvDType::kInt8};
constexpr WeightType kWeightTypes[kShrinkingWeightTypes] = {WeightType::kF32, WeightType::kBF16, WeightType::kQ8,
                                                            WeightType::kQ4};
constexpr int kBudgetLengths[] = {256, 2048};  // the sequences-per-GiB columns

// Step by step, row by row, while every earlier token of the row is the reference's: there the logits are compared
// and the chosen tokens too. After the first different token the two runs continue different texts, whose logits and
// tokens differ for that reason, not because of the cache, so those steps are counted but not compared.
Agreement compare_runs(const GenerateResult& run, const GenerateResult& reference) {
  Agreement agreement;
  for (std::size_t row = 0; row < run.sequences.size(); ++row) {
    const GeneratedSequence& ours = run.sequences[row];
    const GeneratedSequence& theirs = reference.sequences[row];
    bool same_history = true;
    for (std::size_t step = 0; step < ours.token_ids.size() && step < theirs.token_ids.size(); ++step) {
      ++agreement.steps;
      if (!same_history) continue;
      const std::vector<float>& a = ours.step_logits[step];
      const std::vector<float>& b = theirs.step_logits[step];
      for (std::size_t i = 0; i < a.size(); ++i) {
        agreement.max_abs_logit_delta =
            std::max(agreement.max_abs_logit_delta, std::fabs(static_cast<double>(a[i]) - b[i]));
      }
      ++agreement.compared_steps;
      same_history = ours.token_ids[step] == theirs.token_ids[step];
      agreement.agreeing_steps += same_history ? 1 : 0;
    }
    ++agreement.rows;
    agreement.identical_rows += same_history && ours.token_ids.size() == theirs.token_ids.size() ? 1 : 0;
  }
  return agreement;
}

GenerateOptions greedy_options(int new_tokens, KvDType dtype) {
  GenerateOptions options;
  options.max_new_tokens = new_tokens;
  options.ignore_eos = true;  // exactly N steps per row for every type, so the steps line up
  options.sampling.greedy = true;
  options.keep_step_logits = true;
  options.kv_dtype = dtype;
  return options;
}

std::vector<std::vector<int>> perplexity_sequences(const std::vector<std::vector<int>>& documents, int count,
                                                   const ModelConfig& config) {
  const std::size_t used = std::min(documents.size(), static_cast<std::size_t>(std::max(0, count)));
  const std::span<const std::vector<int>> first(documents.data(), used);
  return perplexity_sequences_of_documents(first, std::min(kPerplexityContext, config.max_position_embeddings - 1));
}

// One model's four KV types: one greedy batch of all its prompts per type, and the held-out perplexity.
std::vector<KvTypeResult> measure_kv_types(LabContext& lab, const std::string& model_name, Transformer& transformer,
                                           const std::vector<std::vector<int>>& prompts,
                                           const std::vector<std::vector<int>>& documents) {
  const ModelConfig& config = transformer.model().config;
  const int new_tokens = lab.scale().shrinking_new_tokens;
  const std::vector<std::vector<int>> sequences =
      perplexity_sequences(documents, lab.scale().shrinking_documents, config);
  std::vector<KvTypeResult> rows;
  GenerateResult reference;
  std::vector<PerplexityVariant> variants;
  for (KvDType dtype : kKvTypes) {
    const std::string counts = std::to_string(prompts.size());
    const std::string tokens = std::to_string(new_tokens);
    const std::string type(kv_dtype_name(dtype));
    lab.progress(
        lab.say("  " + model_name + " model, " + type + " cache: " + counts + " prompts × " + tokens + " greedy tokens",
                "  " + std::string(model_name == "base" ? "基础" : "SFT") + " 模型，" + type + " 缓存：" + counts +
                    " 个提示 × " + tokens + " 个贪心 token"));
    KvTypeResult row;
    row.dtype = dtype;
    row.bytes_at_100_tokens = kv_bytes_used_at(config, 100, dtype);
    for (int length : kBudgetLengths) {
      row.sequences_per_gib.push_back(sequences_in_budget(kGiB, 0, config.kv_bytes_per_token(dtype), length));
    }
    GenerateResult run = minigen::generate(transformer, prompts, greedy_options(new_tokens, dtype));
    if (dtype == KvDType::kF32) reference = run;
    row.agreement = compare_runs(run, reference);
    rows.push_back(std::move(row));
    variants.push_back({&transformer, dtype});
  }
  // The reference is the same Transformer with an f32 cache: only the cache's type differs. One pass scores all four
  // types against one computation of its logits.
  const std::string held_out = with_thousands(static_cast<long long>(sequences.size()));
  lab.progress(
      lab.say("  " + model_name + " model: perplexity of the four cache types on " + held_out + " held-out sequences",
              "  " + std::string(model_name == "base" ? "基础" : "SFT") + " 模型：四种缓存类型在 " + held_out +
                  " 个留出序列上的困惑度"));
  const std::vector<PerplexityResult> scores = score_perplexity_variants(variants, &transformer, sequences);
  for (std::size_t i = 0; i < rows.size(); ++i) rows[i].perplexity = scores[i];
  return rows;
}

// Tokens per second of a short greedy decode, the faster of kShrinkingTimedDecodes runs (the first also grows
// buffers). 1000 / the mean time between tokens after the first: the prefill is left out.
double decode_tokens_per_second(LabContext& lab, Transformer& transformer) {
  const std::vector<std::vector<int>> prompt = {lab.base_prompt_of_length(kShrinkingDecodePromptTokens)};
  GenerateOptions options = greedy_options(lab.scale().shrinking_decode_tokens + 1, KvDType::kF32);
  options.keep_step_logits = false;
  double best_itl_ms = 0;
  for (int run = 0; run < kShrinkingTimedDecodes; ++run) {
    const double itl_ms = minigen::generate(transformer, prompt, options).stats.itl_ms;
    if (run == 0 || itl_ms < best_itl_ms) best_itl_ms = itl_ms;
  }
  return best_itl_ms > 0 ? 1000.0 / best_itl_ms : 0;
}

// The base model's four weight types, each packed from the loaded fp32 matrices, with an f32 KV cache.
std::vector<WeightTypeResult> measure_weight_types(LabContext& lab) {
  const Model& model = *lab.base().model;
  ThreadPool& pool = lab.base_transformer().pool();
  std::unique_ptr<Transformer> own_f32;
  Transformer* f32 = &lab.base_transformer();
  if (lab.weight_type() != WeightType::kF32) {
    own_f32 = std::make_unique<Transformer>(model, pool, WeightType::kF32);
    f32 = own_f32.get();
  }
  const std::vector<std::vector<int>> sequences =
      perplexity_sequences(lab.base_eval_documents(), lab.scale().shrinking_documents, model.config);
  std::vector<WeightTypeResult> rows;
  std::vector<std::unique_ptr<Transformer>> packed;  // alive until all four are scored in one pass
  std::vector<PerplexityVariant> variants;
  for (WeightType type : kWeightTypes) {
    const std::string steps = std::to_string(lab.scale().shrinking_decode_tokens);
    const std::string weights(weight_type_name(type));
    lab.progress(lab.say("  base model, " + weights + " weights: " + steps + " timed decode steps",
                         "  基础模型，" + weights + " 权重：" + steps + " 个计时的解码步"));
    Transformer* transformer = f32;
    if (type != WeightType::kF32) {
      packed.push_back(std::make_unique<Transformer>(model, pool, type));
      transformer = packed.back().get();
    }
    WeightTypeResult row;
    row.type = type;
    row.weight_bytes = transformer->weight_bytes();
    row.decode_tokens_per_second = decode_tokens_per_second(lab, *transformer);
    rows.push_back(std::move(row));
    variants.push_back({transformer, KvDType::kF32});
  }
  const std::string held_out = with_thousands(static_cast<long long>(sequences.size()));
  lab.progress(lab.say("  base model: perplexity of the four weight types on " + held_out + " held-out sequences",
                       "  基础模型：四种权重类型在 " + held_out + " 个留出序列上的困惑度"));
  const std::vector<PerplexityResult> scores = score_perplexity_variants(variants, f32, sequences);
  for (std::size_t i = 0; i < rows.size(); ++i) rows[i].perplexity = scores[i];
  return rows;
}

}  // namespace

ShrinkingData measure_shrinking(LabContext& lab) {
  ShrinkingData data;
  data.new_tokens = lab.scale().shrinking_new_tokens;
  data.eval_source = lab.material().eval.source;
  data.eval_is_documents = lab.material().eval.documents;
  data.documents = static_cast<int>(std::min<std::size_t>(lab.base_eval_documents().size(),
                                                          static_cast<std::size_t>(lab.scale().shrinking_documents)));
  data.decode_tokens = lab.scale().shrinking_decode_tokens;
  data.budget_lengths.assign(std::begin(kBudgetLengths), std::end(kBudgetLengths));
  std::vector<std::vector<int>> base_prompts;
  for (const NamedPrompt& prompt : lab.equivalence_prompts()) base_prompts.push_back(prompt.tokens);
  std::vector<std::vector<int>> chat_prompts;
  const std::vector<std::string>& messages = lab.chat_messages();
  for (std::size_t i = 0; i < std::min(messages.size(), kShrinkingChatPrompts); ++i) {
    chat_prompts.push_back(lab.chat_prompt(messages[i]));
  }
  data.base_kv = measure_kv_types(lab, "base", lab.base_transformer(), base_prompts, lab.base_eval_documents());
  data.sft_kv = measure_kv_types(lab, "SFT", lab.sft_transformer(), chat_prompts, lab.sft_eval_documents());
  data.weights = measure_weight_types(lab);
  return data;
}

}  // namespace minigen::lab
