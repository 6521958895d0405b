// Section 9: shrinking the cache, and the weights. Fewer bytes per K/V element (bf16, f16, int8) or per weight
// (bf16, q8, q4) let more sequences fit in memory and make each decode step read less; in exchange the logits move.
// Every type is measured against fp32 on the same prompts and the same held-out documents: the bytes, how far the
// logits move, how often greedy decoding still picks the same token, and the perplexity (with the KL divergence from
// the fp32 distribution).
#include <algorithm>
#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "cache/kv_cache.h"
#include "core/format.h"
#include "eval/perplexity.h"
#include "lab/kv_budget.h"
#include "lab/lab_sections.h"

namespace minigen::lab {
namespace {

constexpr uint64_t kGiB = uint64_t{1} << 30;
constexpr KvDType kKvTypes[kShrinkingKvTypes] = {KvDType::kF32, KvDType::kBF16, KvDType::kF16, KvDType::kInt8};
constexpr WeightType kWeightTypes[kShrinkingWeightTypes] = {WeightType::kF32, WeightType::kBF16, WeightType::kQ8,
                                                            WeightType::kQ4};
constexpr int kBudgetLengths[] = {256, 2048};

std::string percent(double share) { return fixed(100 * share, 1) + " %"; }

// How a run with a smaller cache follows the f32 cache's run of the same prompts.
struct Agreement {
  double max_abs_logit_delta = 0;
  int64_t steps = 0;           // every greedy step of every row
  int64_t compared_steps = 0;  // steps taken on the same text so far as the f32 run (see compare_runs)
  int64_t agreeing_steps = 0;  // of those, the steps that chose the f32 run's token
  int64_t rows = 0;
  int64_t identical_rows = 0;  // rows whose every token is the f32 run's

  // The share of decisions made on the same text that came out the same: a row that parts once at step 3 of 64
  // counts one disagreement, not 61 (after it the two runs continue different texts).
  double agreement_share() const {
    return compared_steps > 0 ? static_cast<double>(agreeing_steps) / static_cast<double>(compared_steps) : 0;
  }
};

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

// "199 of 200 (99.5 %)"
std::string agreement_text(const Agreement& agreement) {
  return with_thousands(agreement.agreeing_steps) + " of " + with_thousands(agreement.compared_steps) + " (" +
         percent(agreement.agreement_share()) + ")";
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

// A KvCache holding `length_tokens` positions (only the size matters here).
uint64_t bytes_used_at(const ModelConfig& config, int length_tokens, KvDType dtype) {
  KvCache cache(config.kv_layout(dtype), length_tokens);
  cache.advance(length_tokens);
  return cache.bytes_used();
}

std::vector<std::vector<int>> perplexity_sequences(const std::vector<std::vector<int>>& documents, int count,
                                                   const ModelConfig& config) {
  const std::size_t used = std::min(documents.size(), static_cast<std::size_t>(std::max(0, count)));
  const std::span<const std::vector<int>> first(documents.data(), used);
  return perplexity_sequences_of_documents(first, std::min(kPerplexityContext, config.max_position_embeddings - 1));
}

struct KvRow {
  KvDType dtype = KvDType::kF32;
  uint64_t bytes_at_100_tokens = 0;
  std::vector<int64_t> sequences_per_gib;  // at each of kBudgetLengths
  Agreement agreement;
  PerplexityResult perplexity;  // against the same weights with an f32 cache
};

// One model's four KV types: one greedy batch of all its prompts per type, and the held-out perplexity.
std::vector<KvRow> measure_kv_types(LabContext& lab, const std::string& model_name, Transformer& transformer,
                                    const std::vector<std::vector<int>>& prompts,
                                    const std::vector<std::vector<int>>& documents) {
  const ModelConfig& config = transformer.model().config;
  const int new_tokens = lab.scale().shrinking_new_tokens;
  const std::vector<std::vector<int>> sequences =
      perplexity_sequences(documents, lab.scale().shrinking_documents, config);
  std::vector<KvRow> rows;
  GenerateResult reference;
  std::vector<PerplexityVariant> variants;
  for (KvDType dtype : kKvTypes) {
    lab.progress("  " + model_name + " model, " + std::string(kv_dtype_name(dtype)) + " cache: " +
                 std::to_string(prompts.size()) + " prompts × " + std::to_string(new_tokens) + " greedy tokens");
    KvRow row;
    row.dtype = dtype;
    row.bytes_at_100_tokens = bytes_used_at(config, 100, dtype);
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
  lab.progress("  " + model_name + " model: perplexity of the four cache types on " +
               with_thousands(static_cast<long long>(sequences.size())) + " held-out sequences");
  const std::vector<PerplexityResult> scores = score_perplexity_variants(variants, &transformer, sequences);
  for (std::size_t i = 0; i < rows.size(); ++i) rows[i].perplexity = scores[i];
  return rows;
}

struct WeightRow {
  WeightType type = WeightType::kF32;
  std::size_t weight_bytes = 0;
  double decode_tokens_per_second = 0;
  PerplexityResult perplexity;  // against f32 weights
};

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
std::vector<WeightRow> measure_weight_types(LabContext& lab) {
  const Model& model = *lab.base().model;
  ThreadPool& pool = lab.base_transformer().pool();
  std::unique_ptr<Transformer> own_f32;
  Transformer* f32 = &lab.base_transformer();
  if (lab.weight_type() != WeightType::kF32) {
    own_f32 = std::make_unique<Transformer>(model, pool, WeightType::kF32);
    f32 = own_f32.get();
  }
  const std::vector<std::vector<int>> sequences =
      perplexity_sequences(lab.base_heldout_documents(), lab.scale().shrinking_documents, model.config);
  std::vector<WeightRow> rows;
  std::vector<std::unique_ptr<Transformer>> packed;  // alive until all four are scored in one pass
  std::vector<PerplexityVariant> variants;
  for (WeightType type : kWeightTypes) {
    lab.progress("  base model, " + std::string(weight_type_name(type)) +
                 " weights: " + std::to_string(lab.scale().shrinking_decode_tokens) + " timed decode steps");
    Transformer* transformer = f32;
    if (type != WeightType::kF32) {
      packed.push_back(std::make_unique<Transformer>(model, pool, type));
      transformer = packed.back().get();
    }
    WeightRow row;
    row.type = type;
    row.weight_bytes = transformer->weight_bytes();
    row.decode_tokens_per_second = decode_tokens_per_second(lab, *transformer);
    rows.push_back(std::move(row));
    variants.push_back({transformer, KvDType::kF32});
  }
  lab.progress("  base model: perplexity of the four weight types on " +
               with_thousands(static_cast<long long>(sequences.size())) + " held-out sequences");
  const std::vector<PerplexityResult> scores = score_perplexity_variants(variants, f32, sequences);
  for (std::size_t i = 0; i < rows.size(); ++i) rows[i].perplexity = scores[i];
  return rows;
}

// "The furthest from f32: weights q4 (mean KL 3.1e-02)." — the plot's highest point, named.
std::string furthest_text(const std::vector<PlotSeries>& series) {
  const auto furthest = std::max_element(series.begin(), series.end(),
                                         [](const PlotSeries& a, const PlotSeries& b) { return a.y[0] < b.y[0]; });
  return "The furthest from f32: " + furthest->title + " (mean KL " + exact_or_scientific(furthest->y[0]) + ").";
}

std::string kl_text(double kl) { return exact_or_scientific(kl); }
std::string mib(double bytes) { return fixed(bytes / (1024.0 * 1024.0), 2) + " MiB"; }

const KvRow& kv_row(const std::vector<KvRow>& rows, KvDType dtype) {
  return *std::find_if(rows.begin(), rows.end(), [&](const KvRow& row) { return row.dtype == dtype; });
}

nlohmann::json kv_json(const KvRow& row) {
  nlohmann::json per_gib = nlohmann::json::object();
  for (std::size_t i = 0; i < row.sequences_per_gib.size(); ++i) {
    per_gib[std::to_string(kBudgetLengths[i])] = row.sequences_per_gib[i];
  }
  return {{"bytes_at_100_tokens", row.bytes_at_100_tokens},
          {"sequences_per_gib", per_gib},
          {"max_abs_logit_delta", row.agreement.max_abs_logit_delta},
          {"steps", row.agreement.steps},
          {"compared_steps", row.agreement.compared_steps},
          {"agreeing_steps", row.agreement.agreeing_steps},
          {"agreement_share", row.agreement.agreement_share()},
          {"rows", row.agreement.rows},
          {"identical_rows", row.agreement.identical_rows},
          {"perplexity", row.perplexity.perplexity()},
          {"mean_kl", row.perplexity.mean_kl()},
          {"top1_agreement", row.perplexity.top1_agreement()},
          {"targets", row.perplexity.targets}};
}

// What a learner should take away, with this run's numbers: the int8 cache against f32, then q4 weights against f32.
std::string trade_paragraph(const std::vector<KvRow>& base_kv, const std::vector<WeightRow>& weights) {
  const KvRow& kv_f32 = kv_row(base_kv, KvDType::kF32);
  const KvRow& kv_int8 = kv_row(base_kv, KvDType::kInt8);
  const KvRow& kv_bf16 = kv_row(base_kv, KvDType::kBF16);
  const WeightRow& w_f32 = weights.front();
  const WeightRow& w_q4 = weights.back();
  const auto ratio = [](double a, double b) { return b > 0 ? fixed(a / b, 1) + "×" : std::string("—"); };
  const auto perplexity_change = [](double from, double to) {
    return fixed(from, 3) + " → " + fixed(to, 3) + " (" + (to >= from ? "+" : "") + fixed(100 * (to / from - 1), 2) +
           " %)";
  };
  return "**What was given up, what was gained.** An int8 cache stores each K and V element in one byte plus a scale "
         "per position and head: " +
         with_thousands(static_cast<long long>(kv_int8.bytes_at_100_tokens)) + " B for 100 tokens instead of " +
         with_thousands(static_cast<long long>(kv_f32.bytes_at_100_tokens)) + " B (" +
         ratio(static_cast<double>(kv_f32.bytes_at_100_tokens), static_cast<double>(kv_int8.bytes_at_100_tokens)) +
         " smaller), so a GiB holds " + with_thousands(kv_int8.sequences_per_gib[1]) +
         " sequences of 2,048 tokens instead of " + with_thousands(kv_f32.sequences_per_gib[1]) +
         ". In exchange the base model's logits moved by up to " + fixed(kv_int8.agreement.max_abs_logit_delta, 4) +
         ", greedy decoding chose the f32 cache's token at " + agreement_text(kv_int8.agreement) +
         " steps taken on the same text, and perplexity went " +
         perplexity_change(kv_f32.perplexity.perplexity(), kv_int8.perplexity.perplexity()) +
         ". bf16 halves the bytes for a logit change of up to " + fixed(kv_bf16.agreement.max_abs_logit_delta, 4) +
         " and the same token at " + agreement_text(kv_bf16.agreement) +
         " steps. Every decode step reads all the weights and the sequence's cache: at 2,048 tokens "
         "the f32 cache is " +
         mib(static_cast<double>(kv_f32.bytes_at_100_tokens) * 2048 / 100) + ", the f32 weights " +
         mib(static_cast<double>(w_f32.weight_bytes)) + ". q4 weights are " +
         mib(static_cast<double>(w_q4.weight_bytes)) + " (" +
         ratio(static_cast<double>(w_f32.weight_bytes), static_cast<double>(w_q4.weight_bytes)) +
         " less) and decoded at " + grouped(w_q4.decode_tokens_per_second, 0) + " tokens/s against " +
         grouped(w_f32.decode_tokens_per_second, 0) + "; they cost perplexity " +
         perplexity_change(w_f32.perplexity.perplexity(), w_q4.perplexity.perplexity()) + ", a mean KL of " +
         kl_text(w_q4.perplexity.mean_kl()) +
         " nats per token from the f32 distribution, and the same top-1 token at " +
         percent(w_q4.perplexity.top1_agreement()) +
         " of positions. A smaller cache buys concurrency (more sequences per GiB); smaller weights buy speed and "
         "memory for every sequence; both cost accuracy, measured above rather than assumed.";
}

}  // namespace

ReportSection shrinking_section(LabContext& lab) {
  ReportSection section;
  section.key = "shrinking";
  section.title = "Shrinking the cache";
  const int documents = static_cast<int>(std::min<std::size_t>(
      lab.base_heldout_documents().size(), static_cast<std::size_t>(lab.scale().shrinking_documents)));
  const int new_tokens = lab.scale().shrinking_new_tokens;
  section.paragraph(
      "Sections 1 and 4 showed that the cache never changes the tokens and what it costs. Storing its elements in "
      "fewer bits (`--kv-dtype`) shrinks it further, and here it does change the numbers: attention reads K and V "
      "rounded. Each KV type below generates " +
      std::to_string(new_tokens) +
      " greedy tokens on every prompt of the model (section 1's prompts for the base model, the chat prompts for the "
      "SFT model), and its steps are compared with the f32 cache's run while the two runs still share every earlier "
      "token: the logits, and whether greedy decoding picked the same token. After the first different token they "
      "continue different texts, so a row that parts once counts one disagreement, and the next column says how many "
      "rows stayed identical to the end. "
      "Perplexity is on the first " +
      std::to_string(documents) +
      " documents of `examples/heldout.jsonl` (bos + text + eos, as `minigen perplexity --jsonl` scores them), with "
      "the mean KL divergence from the same model with an f32 cache. Sequences per GiB count the cache alone: "
      "⌊1 GiB / (bytes per token · L)⌋.");

  const std::vector<std::vector<int>> base_prompts = cache_equivalence_prompts(lab);
  std::vector<std::vector<int>> chat_prompts;
  for (const std::string& message : LabContext::chat_messages()) chat_prompts.push_back(lab.chat_prompt(message));
  const std::vector<KvRow> base_kv =
      measure_kv_types(lab, "base", lab.base_transformer(), base_prompts, lab.base_heldout_documents());
  const std::vector<KvRow> sft_kv =
      measure_kv_types(lab, "SFT", lab.sft_transformer(), chat_prompts, lab.sft_heldout_documents());

  ReportTable kv_table{{"model", "--kv-dtype", "bytes at 100 tokens", "sequences per GiB (256 tokens)",
                        "sequences per GiB (2,048 tokens)", "max abs Δ logit", "greedy token as f32 (same text so far)",
                        "rows identical to the end", "perplexity", "mean KL vs f32 cache"},
                       {}};
  nlohmann::json kv_rows = nlohmann::json::array();
  for (const auto& [name, rows] : {std::pair<std::string, const std::vector<KvRow>&>{"base", base_kv},
                                   std::pair<std::string, const std::vector<KvRow>&>{"SFT", sft_kv}}) {
    for (const KvRow& row : rows) {
      kv_table.rows.push_back(
          {name, std::string(kv_dtype_name(row.dtype)), with_thousands(static_cast<long long>(row.bytes_at_100_tokens)),
           with_thousands(row.sequences_per_gib[0]), with_thousands(row.sequences_per_gib[1]),
           exact_or_scientific(row.agreement.max_abs_logit_delta), agreement_text(row.agreement),
           std::to_string(row.agreement.identical_rows) + " of " + std::to_string(row.agreement.rows),
           fixed(row.perplexity.perplexity(), 3), kl_text(row.perplexity.mean_kl())});
    }
  }
  for (std::size_t i = 0; i < base_kv.size(); ++i) {
    kv_rows.push_back(
        {{"kv_dtype", kv_dtype_name(base_kv[i].dtype)}, {"base", kv_json(base_kv[i])}, {"sft", kv_json(sft_kv[i])}});
  }
  section.table(std::move(kv_table));

  section.paragraph(
      "The weights can shrink the same way (`--weights`). The extra forward passes below are packed from the base "
      "model's fp32 matrices; each one's bytes are what one decode step reads (every packed matrix once, plus the "
      "norms), its speed a " +
      std::to_string(lab.scale().shrinking_decode_tokens) + "-token greedy decode after a " +
      std::to_string(kShrinkingDecodePromptTokens) +
      "-token prompt (the faster of two runs), and its perplexity, KL and top-1 agreement are against the f32 "
      "weights on the same documents, all with an f32 cache:");
  const std::vector<WeightRow> weights = measure_weight_types(lab);
  ReportTable weight_table{{"--weights", "bytes one decode step reads", "of f32", "decode tokens/s", "perplexity",
                            "mean KL vs f32", "top-1 agreement"},
                           {}};
  nlohmann::json weight_rows = nlohmann::json::array();
  const double f32_weight_bytes = static_cast<double>(weights.front().weight_bytes);
  for (const WeightRow& row : weights) {
    weight_table.rows.push_back({std::string(weight_type_name(row.type)),
                                 with_thousands(static_cast<long long>(row.weight_bytes)),
                                 percent(static_cast<double>(row.weight_bytes) / f32_weight_bytes),
                                 grouped(row.decode_tokens_per_second, 0), fixed(row.perplexity.perplexity(), 3),
                                 kl_text(row.perplexity.mean_kl()), percent(row.perplexity.top1_agreement())});
    weight_rows.push_back({{"weights", weight_type_name(row.type)},
                           {"weight_bytes", row.weight_bytes},
                           {"decode_tokens_per_second", row.decode_tokens_per_second},
                           {"perplexity", row.perplexity.perplexity()},
                           {"mean_kl", row.perplexity.mean_kl()},
                           {"top1_agreement", row.perplexity.top1_agreement()},
                           {"targets", row.perplexity.targets}});
  }
  section.table(std::move(weight_table));

  // One point per type: its bytes as a share of f32's against what it gives up (mean KL from the f32 distribution);
  // circles for the cache's types, squares for the weights'.
  std::vector<PlotSeries> series;
  const double f32_kv_bytes = static_cast<double>(base_kv.front().bytes_at_100_tokens);
  for (const KvRow& row : base_kv) {
    series.push_back({"KV cache " + std::string(kv_dtype_name(row.dtype)),
                      {100 * static_cast<double>(row.bytes_at_100_tokens) / f32_kv_bytes},
                      {row.perplexity.mean_kl()},
                      "points pointtype 7 pointsize 1.6"});
  }
  for (const WeightRow& row : weights) {
    series.push_back({"weights " + std::string(weight_type_name(row.type)),
                      {100 * static_cast<double>(row.weight_bytes) / f32_weight_bytes},
                      {row.perplexity.mean_kl()},
                      "points pointtype 5 pointsize 1.6"});
  }
  section.plot(PlotSpec{"shrinking.svg",
                        "Bytes against accuracy lost (base model, held-out documents)",
                        "bytes, % of f32 (KV cache per token; weights read per decode step)",
                        "mean KL from f32 (nats per token)",
                        false,
                        false,
                        {},
                        series},
               "Each point is one type: further left is smaller, higher has moved further from the f32 model's "
               "distribution. " +
                   furthest_text(series));

  section.paragraph(trade_paragraph(base_kv, weights));

  section.data["new_tokens"] = new_tokens;
  section.data["documents"] = documents;
  section.data["kv_dtypes"] = kv_rows;
  section.data["weight_types"] = weight_rows;
  const KvRow& int8 = kv_row(base_kv, KvDType::kInt8);
  section.summary.push_back(
      "shrinking: int8 cache " + with_thousands(static_cast<long long>(int8.bytes_at_100_tokens)) +
      " B at 100 tokens (f32 " + with_thousands(static_cast<long long>(base_kv.front().bytes_at_100_tokens)) +
      "), greedy token as f32 at " + percent(int8.agreement.agreement_share()) + " of steps; q4 weights " +
      percent(static_cast<double>(weights.back().weight_bytes) / f32_weight_bytes) + " of the bytes, perplexity " +
      fixed(weights.front().perplexity.perplexity(), 2) + " → " + fixed(weights.back().perplexity.perplexity(), 2));
  return section;
}

}  // namespace minigen::lab
