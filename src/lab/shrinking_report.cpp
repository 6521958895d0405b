// Section 9, written: what each smaller KV type and weight type gives up against fp32 — bytes, logits, greedy
// agreement, perplexity and KL — as two tables and one plot, and the trade in one paragraph with this run's numbers.
#include <algorithm>
#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "core/format.h"
#include "lab/lab_scale.h"
#include "lab/report_thresholds.h"
#include "lab/section_reports.h"

namespace minigen::lab {
namespace {

std::string percent(double share) { return fixed(100 * share, 1) + " %"; }

// "199 of 200 (99.5 %)"; in Chinese "199 / 200（99.5 %）", its brackets full-width like the text around it.
std::string agreement_text(const Agreement& agreement, const Words& say) {
  return with_thousands(agreement.agreeing_steps) + say(" of ", " / ") + with_thousands(agreement.compared_steps) +
         say(" (", "（") + percent(agreement.agreement_share()) + say(")", "）");
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

// "3.210 → 3.260 (+1.56 %)", or "practically unchanged" within kNegligiblePerplexityChange.
std::string perplexity_change(double from, double to, const Words& say) {
  const double change = from > 0 ? to / from - 1 : 0;
  const std::string numbers = fixed(from, 3) + " → " + fixed(to, 3) + say(" (", "（") + (change >= 0 ? "+" : "") +
                              fixed(100 * change, 2) + " %";
  if (std::abs(change) <= kNegligiblePerplexityChange) {
    return numbers + say(", practically unchanged: within ±1 %)", "，几乎不变：在 ±1 % 以内）");
  }
  return numbers + say(")", "）");
}

std::string times(double a, double b) { return b > 0 ? fixed(a / b, 1) + "×" : std::string("—"); }

// What a learner should take away, with this run's numbers: the int8 cache against f32, then q4 weights against f32.
std::string trade_paragraph(const std::vector<KvTypeResult>& base_kv, const std::vector<WeightTypeResult>& weights,
                            const Words& say) {
  const KvTypeResult& kv_f32 = kv_row(base_kv, KvDType::kF32);
  const KvTypeResult& kv_int8 = kv_row(base_kv, KvDType::kInt8);
  const KvTypeResult& kv_bf16 = kv_row(base_kv, KvDType::kBF16);
  const WeightTypeResult& w_f32 = weights.front();
  const WeightTypeResult& w_q4 = weights.back();
  const auto bytes = [](uint64_t value) { return with_thousands(static_cast<long long>(value)); };
  const std::string int8_smaller =
      times(static_cast<double>(kv_f32.bytes_at_100_tokens), static_cast<double>(kv_int8.bytes_at_100_tokens));
  const std::string bf16_smaller =
      times(static_cast<double>(kv_f32.bytes_at_100_tokens), static_cast<double>(kv_bf16.bytes_at_100_tokens));
  const std::string q4_smaller = times(static_cast<double>(w_f32.weight_bytes), static_cast<double>(w_q4.weight_bytes));
  const double speedup = w_f32.decode_tokens_per_second > 0
                             ? w_q4.decode_tokens_per_second / w_f32.decode_tokens_per_second
                             : std::nan("");
  const Comparison speed = compare_ratio(speedup);
  const std::string q4_speed = grouped(w_q4.decode_tokens_per_second, 0);
  const std::string f32_speed = grouped(w_f32.decode_tokens_per_second, 0);
  std::string speed_text;
  switch (speed) {
    case Comparison::kLarger:
      speed_text =
          say("decoded faster, at " + q4_speed + " tokens/s against " + f32_speed + " (" + fixed(speedup, 2) + "×)",
              "解码更快：每秒 " + q4_speed + " 个 token，f32 为 " + f32_speed + "（" + fixed(speedup, 2) + " 倍）");
      break;
    case Comparison::kAboutSame:
      speed_text = say("decoded at about the same speed, " + q4_speed + " tokens/s against " + f32_speed +
                           " (within ±10 %: on a model this small the step's fixed costs outweigh the bytes read)",
                       "解码速度大致相同：每秒 " + q4_speed + " 个 token，f32 为 " + f32_speed +
                           "（在 ±10 % 以内：模型这么小，每步的固定开销比读取的字节更重要）");
      break;
    case Comparison::kSmaller:
      speed_text = say("decoded slower, at " + q4_speed + " tokens/s against " + f32_speed + " (" + fixed(speedup, 2) +
                           "×: unpacking the 4-bit blocks cost more than the bytes saved)",
                       "解码反而更慢：每秒 " + q4_speed + " 个 token，f32 为 " + f32_speed + "（" + fixed(speedup, 2) +
                           " 倍：解包 4 位数据块的开销超过了节省的字节）");
      break;
  }
  const std::string per_gib_int8 = with_thousands(kv_int8.sequences_per_gib[1]);
  const std::string per_gib_f32 = with_thousands(kv_f32.sequences_per_gib[1]);
  const std::string cache_2048 = mib(static_cast<double>(kv_f32.bytes_at_100_tokens) * 2048 / 100);
  return say(
      "**What was given up, what was gained.** An int8 cache stores each K and V element in one byte plus a "
      "scale per position and head: " +
          bytes(kv_int8.bytes_at_100_tokens) + " B for 100 tokens instead of " + bytes(kv_f32.bytes_at_100_tokens) +
          " B (" + int8_smaller + " smaller), so a GiB holds " + per_gib_int8 +
          " sequences of 2,048 tokens instead of " + per_gib_f32 +
          ". In exchange the base model's logits moved by up to " + fixed(kv_int8.agreement.max_abs_logit_delta, 4) +
          ", greedy decoding chose the f32 cache's token at " + agreement_text(kv_int8.agreement, say) +
          " steps taken on the same text, and perplexity went " +
          perplexity_change(kv_f32.perplexity.perplexity(), kv_int8.perplexity.perplexity(), say) + ". bf16 stores " +
          bf16_smaller + " fewer bytes for a logit change of up to " + fixed(kv_bf16.agreement.max_abs_logit_delta, 4) +
          " and the same token at " + agreement_text(kv_bf16.agreement, say) +
          " steps. Every decode step reads all the weights and the sequence's cache: at 2,048 tokens the f32 "
          "cache is " +
          cache_2048 + ", the f32 weights " + mib(static_cast<double>(w_f32.weight_bytes)) + ". q4 weights are " +
          mib(static_cast<double>(w_q4.weight_bytes)) + " (" + q4_smaller + " less), " + speed_text +
          "; they cost perplexity " +
          perplexity_change(w_f32.perplexity.perplexity(), w_q4.perplexity.perplexity(), say) + ", a mean KL of " +
          kl_text(w_q4.perplexity.mean_kl()) +
          " nats per token from the f32 distribution, and the same top-1 token at " +
          percent(w_q4.perplexity.top1_agreement()) +
          " of positions. A smaller cache buys concurrency (more sequences per GiB); smaller weights buy "
          "memory for every sequence" +
          (speed == Comparison::kLarger ? " and, here, speed" : "") +
          "; what each costs in accuracy is measured above rather than assumed.",
      "**放弃了什么，得到了什么。** int8 缓存把每个 K、V 元素存成一个字节，另加每个位置和每个头一个缩放因子："
      "100 个 token 占 " +
          bytes(kv_int8.bytes_at_100_tokens) + " B，而不是 " + bytes(kv_f32.bytes_at_100_tokens) + " B（小 " +
          int8_smaller + "），因此 1 GiB 能容纳 " + per_gib_int8 + " 个 2,048 token 的序列，而不是 " + per_gib_f32 +
          " 个。代价是：基础模型的 logits 最多变化 " + fixed(kv_int8.agreement.max_abs_logit_delta, 4) +
          "，在相同前文的步中，贪心解码选出与 f32 缓存相同 token 的有 " + agreement_text(kv_int8.agreement, say) +
          "，困惑度变化为 " + perplexity_change(kv_f32.perplexity.perplexity(), kv_int8.perplexity.perplexity(), say) +
          "。bf16 的字节数少 " + bf16_smaller + "，logits 最多变化 " + fixed(kv_bf16.agreement.max_abs_logit_delta, 4) +
          "，相同 token 的步为 " + agreement_text(kv_bf16.agreement, say) +
          "。每个解码步都要读取全部权重和该序列的缓存：在 2,048 个 token 时，f32 缓存为 " + cache_2048 +
          "，f32 权重为 " + mib(static_cast<double>(w_f32.weight_bytes)) + "。q4 权重为 " +
          mib(static_cast<double>(w_q4.weight_bytes)) + "（少 " + q4_smaller + "），" + speed_text + "；代价是困惑度 " +
          perplexity_change(w_f32.perplexity.perplexity(), w_q4.perplexity.perplexity(), say) +
          "，与 f32 分布的平均 KL 散度为每个 token " + kl_text(w_q4.perplexity.mean_kl()) +
          " nats，top-1 token 相同的位置占 " + percent(w_q4.perplexity.top1_agreement()) +
          "。更小的缓存换来并发（每 GiB 更多序列）；更小的权重为每个序列节省内存" +
          (speed == Comparison::kLarger ? "，在这里还换来了速度" : "") +
          "；各自在精度上的代价已在上面测出，而不是假设。");
}

void add_kv_table(ReportSection& section, const ShrinkingData& data, const Words& say) {
  ReportTable table{{say("model", "模型"), "`--kv-dtype`", say("bytes at 100 tokens", "100 个 token 的字节数"),
                     say("sequences per GiB (256 tokens)", "每 GiB 序列数（256 token）"),
                     say("sequences per GiB (2,048 tokens)", "每 GiB 序列数（2,048 token）"),
                     say("max abs Δ logit", "最大 |Δ logit|"),
                     say("greedy token as f32 (same text so far)", "贪心 token 与 f32 相同（前文相同的步）"),
                     say("rows identical to the end", "直到结尾完全相同的行"), say("perplexity", "困惑度"),
                     say("mean KL vs f32 cache", "与 f32 缓存的平均 KL")},
                    {}};
  for (const auto& [name, rows] :
       {std::pair<std::string, const std::vector<KvTypeResult>&>{say("base", "基础"), data.base_kv},
        std::pair<std::string, const std::vector<KvTypeResult>&>{"SFT", data.sft_kv}}) {
    for (const KvTypeResult& row : rows) {
      table.rows.push_back(
          {name, std::string(kv_dtype_name(row.dtype)), with_thousands(static_cast<long long>(row.bytes_at_100_tokens)),
           with_thousands(row.sequences_per_gib[0]), with_thousands(row.sequences_per_gib[1]),
           exact_or_scientific(row.agreement.max_abs_logit_delta), agreement_text(row.agreement, say),
           std::to_string(row.agreement.identical_rows) + say(" of ", " / ") + std::to_string(row.agreement.rows),
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

void add_weight_table(ReportSection& section, const ShrinkingData& data, const Words& say) {
  const std::string decode_tokens = std::to_string(data.decode_tokens);
  const std::string prompt_tokens = std::to_string(kShrinkingDecodePromptTokens);
  section.paragraph(say(
      "The weights can shrink the same way (`--weights`). The extra forward passes below are packed from the base "
      "model's fp32 matrices; each one's bytes are what one decode step reads (every packed matrix once, plus the "
      "norms), its speed a " +
          decode_tokens + "-token greedy decode after a " + prompt_tokens +
          "-token prompt (the faster of two runs), and its perplexity, KL and top-1 agreement are against the f32 "
          "weights on the same documents, all with an f32 cache:",
      "权重也可以用同样的方式缩小（`--weights`）。下面额外的前向计算由基础模型的 fp32 矩阵打包而来；每种的字节数是一个"
      "解码步要读取的量（每个打包矩阵一次，加上归一化参数），速度是在 " +
          prompt_tokens + " 个 token 的提示之后贪心解码 " + decode_tokens +
          " 个 token（两次中较快的一次），困惑度、KL 和 top-1 一致率都是在相同文档上与 f32 权重比较，缓存均为 f32："));
  ReportTable table{{"`--weights`", say("bytes one decode step reads", "一个解码步读取的字节"), say("of f32", "占 f32"),
                     say("decode tokens/s", "解码 token/秒"), say("perplexity", "困惑度"),
                     say("mean KL vs f32", "与 f32 的平均 KL"), say("top-1 agreement", "top-1 一致率")},
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

// One point per type: its bytes as a share of f32's against what it gives up (mean KL from the f32 distribution),
// both on log axes (the shares are 25–100 %, the KLs span orders of magnitude); circles for the cache's types,
// squares for the weights'. A type with a KL of exactly 0 (f32 itself, and any type that changed no probability)
// has no place on a log axis: the caption names those instead of hiding them at the bottom edge.
void add_bytes_against_kl_plot(ReportSection& section, const ShrinkingData& data, const Words& say) {
  std::vector<PlotSeries> series;
  std::vector<std::string> exactly_f32;
  const auto add = [&](const std::string& name, double bytes_share, double kl, const char* style) {
    if (kl > 0) {
      series.push_back({name, {100 * bytes_share}, {kl}, style});
    } else {
      exactly_f32.push_back(name);
    }
  };
  const double f32_kv_bytes = static_cast<double>(data.base_kv.front().bytes_at_100_tokens);
  for (const KvTypeResult& row : data.base_kv) {
    add(say("KV cache ", "KV 缓存 ") + std::string(kv_dtype_name(row.dtype)),
        static_cast<double>(row.bytes_at_100_tokens) / f32_kv_bytes, row.perplexity.mean_kl(),
        "points pointtype 7 pointsize 1.6");
  }
  const double f32_weight_bytes = static_cast<double>(data.weights.front().weight_bytes);
  for (const WeightTypeResult& row : data.weights) {
    add(say("weights ", "权重 ") + std::string(weight_type_name(row.type)),
        static_cast<double>(row.weight_bytes) / f32_weight_bytes, row.perplexity.mean_kl(),
        "points pointtype 5 pointsize 1.6");
  }
  std::string zero_names;
  for (const std::string& name : exactly_f32) zero_names += (zero_names.empty() ? "" : say(", ", "、")) + name;
  const std::string zero_note =
      exactly_f32.empty()
          ? std::string()
          : say(" Not drawn, because their KL is exactly 0 (the f32 distribution itself) and a log "
                "axis has no 0: " +
                    zero_names + ".",
                "未画出的类型的 KL 恰好为 0（就是 f32 分布本身），对数坐标上没有 0：" + zero_names + "。");
  if (series.empty()) {
    section.paragraph(
        say("No type moved the distribution (every mean KL is 0), so there is no plot of bytes against "
            "accuracy lost.",
            "没有任何类型改变分布（平均 KL 全为 0），因此没有字节与精度损失的关系图。"));
    return;
  }
  const auto furthest = std::max_element(series.begin(), series.end(),
                                         [](const PlotSeries& a, const PlotSeries& b) { return a.y[0] < b.y[0]; });
  section.plot(PlotSpec{"shrinking.svg",
                        say("Bytes against accuracy lost (base model, held-out documents)",
                            "字节数与精度损失（基础模型，留出文档）"),
                        say("bytes, % of f32 (KV cache per token; weights read per decode step; log scale)",
                            "字节数，占 f32 的 %（KV 缓存按每个 token；权重按每个解码步读取；对数坐标）"),
                        say("mean KL from f32 (nats per token, log scale)", "与 f32 的平均 KL（nats/token，对数坐标）"),
                        true,
                        true,
                        {},
                        series,
                        std::nullopt,
                        "top right"},
               say("Each point is one type: further left is smaller, higher has moved further from the f32 model's "
                   "distribution. The furthest from f32: " +
                       furthest->title + " (mean KL " + exact_or_scientific(furthest->y[0]) + ").",
                   "每个点是一种类型：越靠左越小，越高则离 f32 模型的分布越远。离 f32 最远的是：" + furthest->title +
                       "（平均 KL " + exact_or_scientific(furthest->y[0]) + "）。") +
                   zero_note);
}

}  // namespace

ReportSection shrinking_report(const ShrinkingData& data, Language language) {
  const Words say{language};
  ReportSection section;
  section.key = "shrinking";
  section.title = say("Shrinking the cache", "缩小缓存");
  const std::string new_tokens = std::to_string(data.new_tokens);
  const std::string documents = std::to_string(data.documents);
  section.paragraph(say(
      "Sections 1 and 4 showed that the cache never changes the tokens and what it costs. Storing its elements in "
      "fewer bits (`--kv-dtype`) shrinks it further, and here it does change the numbers: attention reads K and V "
      "rounded. Each KV type below generates " +
          new_tokens +
          " greedy tokens on every prompt of the model (section 1's prompts for the base model, the chat prompts for "
          "the SFT model), and its steps are compared with the f32 cache's run while the two runs still share every "
          "earlier token: the logits, and whether greedy decoding picked the same token. After the first different "
          "token they continue different texts, so a row that parts once counts one disagreement, and the next "
          "column says how many rows stayed identical to the end. Perplexity is on the first " +
          documents +
          (data.eval_is_documents
               ? " documents of `" + data.eval_source +
                     "` (bos + text + eos, as `minigen perplexity --jsonl` scores them), with "
               : " windows of `" + data.eval_source +
                     "` (bos + the text's next tokens, as `minigen perplexity -f` scores it), with ") +
          "the mean KL divergence from the same model with an f32 cache. Sequences per GiB count the cache alone: "
          "⌊1 GiB / (bytes per token · L)⌋.",
      "第 1 节和第 4 节说明了缓存从不改变 token，以及它占用多少内存。把缓存元素存成更少的位数（`--kv-dtype`）可以进一步"
      "缩小它，而这一次数字确实会变：注意力读到的 K 和 V 是舍入过的。下面每种 KV 类型都在模型的每个提示上贪心生成 " +
          new_tokens +
          " 个 token（基础模型用第 1 节的提示，SFT 模型用对话提示），并在两次运行之前的 token 仍全部相同时，与 f32 "
          "缓存的运行逐步比较：logits，以及贪心解码是否选了同一个 token。出现第一个不同的 token "
          "之后，两者续写的是不同的"
          "文本，所以一行只分叉一次就只算一次不一致；下一列给出直到结尾都完全相同的行数。困惑度在 `" +
          data.eval_source + "` 的前 " + documents +
          (data.eval_is_documents
               ? " 篇文档上计算（bos + 文本 + eos，与 `minigen perplexity --jsonl` 的评分方式相同），"
               : " 个窗口上计算（bos + 文本接下来的 token，与 `minigen perplexity -f` 的评分方式相同），") +
          "并给出与使用 f32 缓存的同一模型之间的平均 KL 散度。每 GiB 序列数只计算缓存：⌊1 GiB / (每 token 字节数 · "
          "L)⌋。"));

  add_kv_table(section, data, say);
  add_weight_table(section, data, say);
  add_bytes_against_kl_plot(section, data, say);
  section.paragraph(trade_paragraph(data.base_kv, data.weights, say));

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
