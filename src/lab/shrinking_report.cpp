// Section 9, written: what each smaller KV type and weight type gives up against fp32 — bytes, logits, greedy
// agreement, perplexity and KL — as two tables and one plot, and the trade in one paragraph with this run's numbers.
#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "core/format.h"
#include "lab/lab_scale.h"
#include "lab/section_reports.h"

namespace minigen::lab {
namespace {

std::string percent(double share) { return fixed(100 * share, 1) + " %"; }

// "199 of 200 (99.5 %)"
std::string agreement_text(const Agreement& agreement) {
  return with_thousands(agreement.agreeing_steps) + " of " + with_thousands(agreement.compared_steps) + " (" +
         percent(agreement.agreement_share()) + ")";
}

// "The furthest from f32: weights q4 (mean KL 3.1e-02)." — the plot's highest point, named.
std::string furthest_text(const std::vector<PlotSeries>& series) {
  const auto furthest = std::max_element(series.begin(), series.end(),
                                         [](const PlotSeries& a, const PlotSeries& b) { return a.y[0] < b.y[0]; });
  return "The furthest from f32: " + furthest->title + " (mean KL " + exact_or_scientific(furthest->y[0]) + ").";
}

std::string kl_text(double kl) { return exact_or_scientific(kl); }
std::string mib(double bytes) { return fixed(bytes / (1024.0 * 1024.0), 2) + " MiB"; }

const KvTypeResult& kv_row(const std::vector<KvTypeResult>& rows, KvDType dtype) {
  return *std::find_if(rows.begin(), rows.end(), [&](const KvTypeResult& row) { return row.dtype == dtype; });
}

nlohmann::json kv_json(const KvTypeResult& row, const std::vector<int>& budget_lengths) {
  nlohmann::json per_gib = nlohmann::json::object();
  for (std::size_t i = 0; i < row.sequences_per_gib.size(); ++i) {
    per_gib[std::to_string(budget_lengths[i])] = row.sequences_per_gib[i];
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
std::string trade_paragraph(const std::vector<KvTypeResult>& base_kv, const std::vector<WeightTypeResult>& weights) {
  const KvTypeResult& kv_f32 = kv_row(base_kv, KvDType::kF32);
  const KvTypeResult& kv_int8 = kv_row(base_kv, KvDType::kInt8);
  const KvTypeResult& kv_bf16 = kv_row(base_kv, KvDType::kBF16);
  const WeightTypeResult& w_f32 = weights.front();
  const WeightTypeResult& w_q4 = weights.back();
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

void add_kv_table(ReportSection& section, const ShrinkingData& data) {
  ReportTable table{{"model", "--kv-dtype", "bytes at 100 tokens", "sequences per GiB (256 tokens)",
                     "sequences per GiB (2,048 tokens)", "max abs Δ logit", "greedy token as f32 (same text so far)",
                     "rows identical to the end", "perplexity", "mean KL vs f32 cache"},
                    {}};
  for (const auto& [name, rows] : {std::pair<std::string, const std::vector<KvTypeResult>&>{"base", data.base_kv},
                                   std::pair<std::string, const std::vector<KvTypeResult>&>{"SFT", data.sft_kv}}) {
    for (const KvTypeResult& row : rows) {
      table.rows.push_back({name, std::string(kv_dtype_name(row.dtype)),
                            with_thousands(static_cast<long long>(row.bytes_at_100_tokens)),
                            with_thousands(row.sequences_per_gib[0]), with_thousands(row.sequences_per_gib[1]),
                            exact_or_scientific(row.agreement.max_abs_logit_delta), agreement_text(row.agreement),
                            std::to_string(row.agreement.identical_rows) + " of " + std::to_string(row.agreement.rows),
                            fixed(row.perplexity.perplexity(), 3), kl_text(row.perplexity.mean_kl())});
    }
  }
  section.table(std::move(table));
  nlohmann::json rows = nlohmann::json::array();
  for (std::size_t i = 0; i < data.base_kv.size(); ++i) {
    rows.push_back({{"kv_dtype", kv_dtype_name(data.base_kv[i].dtype)},
                    {"base", kv_json(data.base_kv[i], data.budget_lengths)},
                    {"sft", kv_json(data.sft_kv[i], data.budget_lengths)}});
  }
  section.data["kv_dtypes"] = rows;
}

void add_weight_table(ReportSection& section, const ShrinkingData& data) {
  section.paragraph(
      "The weights can shrink the same way (`--weights`). The extra forward passes below are packed from the base "
      "model's fp32 matrices; each one's bytes are what one decode step reads (every packed matrix once, plus the "
      "norms), its speed a " +
      std::to_string(data.decode_tokens) + "-token greedy decode after a " +
      std::to_string(kShrinkingDecodePromptTokens) +
      "-token prompt (the faster of two runs), and its perplexity, KL and top-1 agreement are against the f32 "
      "weights on the same documents, all with an f32 cache:");
  ReportTable table{{"--weights", "bytes one decode step reads", "of f32", "decode tokens/s", "perplexity",
                     "mean KL vs f32", "top-1 agreement"},
                    {}};
  nlohmann::json rows = nlohmann::json::array();
  const double f32_weight_bytes = static_cast<double>(data.weights.front().weight_bytes);
  for (const WeightTypeResult& row : data.weights) {
    table.rows.push_back({std::string(weight_type_name(row.type)),
                          with_thousands(static_cast<long long>(row.weight_bytes)),
                          percent(static_cast<double>(row.weight_bytes) / f32_weight_bytes),
                          grouped(row.decode_tokens_per_second, 0), fixed(row.perplexity.perplexity(), 3),
                          kl_text(row.perplexity.mean_kl()), percent(row.perplexity.top1_agreement())});
    rows.push_back({{"weights", weight_type_name(row.type)},
                    {"weight_bytes", row.weight_bytes},
                    {"decode_tokens_per_second", row.decode_tokens_per_second},
                    {"perplexity", row.perplexity.perplexity()},
                    {"mean_kl", row.perplexity.mean_kl()},
                    {"top1_agreement", row.perplexity.top1_agreement()},
                    {"targets", row.perplexity.targets}});
  }
  section.table(std::move(table));
  section.data["weight_types"] = rows;
}

// One point per type: its bytes as a share of f32's against what it gives up (mean KL from the f32 distribution);
// circles for the cache's types, squares for the weights'.
void add_bytes_against_kl_plot(ReportSection& section, const ShrinkingData& data) {
  std::vector<PlotSeries> series;
  const double f32_kv_bytes = static_cast<double>(data.base_kv.front().bytes_at_100_tokens);
  for (const KvTypeResult& row : data.base_kv) {
    series.push_back({"KV cache " + std::string(kv_dtype_name(row.dtype)),
                      {100 * static_cast<double>(row.bytes_at_100_tokens) / f32_kv_bytes},
                      {row.perplexity.mean_kl()},
                      "points pointtype 7 pointsize 1.6"});
  }
  const double f32_weight_bytes = static_cast<double>(data.weights.front().weight_bytes);
  for (const WeightTypeResult& row : data.weights) {
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
}

}  // namespace

ReportSection shrinking_report(const ShrinkingData& data) {
  ReportSection section;
  section.key = "shrinking";
  section.title = "Shrinking the cache";
  section.paragraph(
      "Sections 1 and 4 showed that the cache never changes the tokens and what it costs. Storing its elements in "
      "fewer bits (`--kv-dtype`) shrinks it further, and here it does change the numbers: attention reads K and V "
      "rounded. Each KV type below generates " +
      std::to_string(data.new_tokens) +
      " greedy tokens on every prompt of the model (section 1's prompts for the base model, the chat prompts for the "
      "SFT model), and its steps are compared with the f32 cache's run while the two runs still share every earlier "
      "token: the logits, and whether greedy decoding picked the same token. After the first different token they "
      "continue different texts, so a row that parts once counts one disagreement, and the next column says how many "
      "rows stayed identical to the end. "
      "Perplexity is on the first " +
      std::to_string(data.documents) +
      (data.eval_is_documents ? " documents of `" + data.eval_source +
                                    "` (bos + text + eos, as `minigen perplexity --jsonl` scores them), with "
                              : " windows of `" + data.eval_source +
                                    "` (bos + the text's next tokens, as `minigen perplexity -f` scores "
                                    "it), with ") +
      "the mean KL divergence from the same model with an f32 cache. Sequences per GiB count the cache alone: "
      "⌊1 GiB / (bytes per token · L)⌋.");

  add_kv_table(section, data);
  add_weight_table(section, data);
  add_bytes_against_kl_plot(section, data);
  section.paragraph(trade_paragraph(data.base_kv, data.weights));

  section.data["new_tokens"] = data.new_tokens;
  section.data["documents"] = data.documents;
  section.data["eval"] = data.eval_source;
  section.data["eval_format"] = data.eval_is_documents ? "jsonl documents" : "plain text";
  const std::vector<KvTypeResult>& base_kv = data.base_kv;
  const std::vector<WeightTypeResult>& weights = data.weights;
  const double f32_weight_bytes = static_cast<double>(weights.front().weight_bytes);
  const KvTypeResult& int8 = kv_row(base_kv, KvDType::kInt8);
  section.summary.push_back(
      "shrinking: int8 cache " + with_thousands(static_cast<long long>(int8.bytes_at_100_tokens)) +
      " B at 100 tokens (f32 " + with_thousands(static_cast<long long>(base_kv.front().bytes_at_100_tokens)) +
      "), greedy token as f32 at " + percent(int8.agreement.agreement_share()) + " of steps; q4 weights " +
      percent(static_cast<double>(weights.back().weight_bytes) / f32_weight_bytes) + " of the bytes, perplexity " +
      fixed(weights.front().perplexity.perplexity(), 2) + " → " + fixed(weights.back().perplexity.perplexity(), 2));
  return section;
}

}  // namespace minigen::lab
