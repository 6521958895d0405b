// Section 11, written: what an adapter adds (rank · (in + out) per wrapped matrix, filled in for this model and for
// minimind-3), that B = 0 changes nothing, how far the adapter moves the logits and the answers, merged against
// unmerged, and a mixed batch against the base alone. Each claim is chosen by the measured numbers.
#include <algorithm>
#include <string>
#include <vector>

#include "core/format.h"
#include "lab/report_thresholds.h"
#include "lab/section_reports.h"

namespace minigen::lab {
namespace {

std::string percent(double share) { return fixed(100 * share, 2) + " %"; }
std::string count(long long value) { return with_thousands(value); }
std::string millions(long long parameters) { return fixed(static_cast<double>(parameters) / 1e6, 2) + " M"; }

// "16 · (256 + 256) = 8,192 per matrix × 8 (q_proj, o_proj) = 65,536", or one term per group when they differ.
std::string size_formula(const AdapterSize& size, const Words& say) {
  const std::string times = " · ";
  std::string text;
  const auto per_matrix = [&](const AdapterMatrixGroup& g) {
    return std::to_string(g.rank) + times + "(" + std::to_string(g.in) + " + " + std::to_string(g.out) +
           ") = " + count(g.parameters_each());
  };
  bool one_shape = true;
  int matrices = 0;
  std::string names;
  for (const AdapterMatrixGroup& g : size.groups) {
    one_shape = one_shape && g.parameters_each() == size.groups.front().parameters_each();
    matrices += g.matrices;
    names += (names.empty() ? "" : ", ") + g.name;
  }
  if (size.groups.empty()) return "0";
  if (one_shape) {
    text = per_matrix(size.groups.front()) + say(" per matrix × ", " 每个矩阵 × ") + std::to_string(matrices) + " (" +
           names + ")";
  } else {
    for (const AdapterMatrixGroup& g : size.groups) {
      text += (text.empty() ? "" : " + ") + std::string("(") + per_matrix(g) + ") × " + std::to_string(g.matrices) +
              " " + g.name;
    }
  }
  return text + " = " + count(size.parameters);
}

void size_rows(const AdapterSize& size, ReportTable& table, const Words& say) {
  for (const AdapterMatrixGroup& g : size.groups) {
    table.rows.push_back({size.model, g.name,
                          std::to_string(g.rank) + " · (" + std::to_string(g.in) + " + " + std::to_string(g.out) + ")",
                          count(g.parameters_each()), std::to_string(g.matrices),
                          count(g.matrices * g.parameters_each())});
  }
  table.rows.push_back({size.model, say("**all**", "**合计**"), "", "", "",
                        "**" + count(size.parameters) + "** (" + percent(size.share_of_model()) +
                            say(" of ", "，模型共 ") + millions(size.model_parameters) + "; " +
                            count(static_cast<long long>(size.fp32_bytes())) + " B fp32, " +
                            count(static_cast<long long>(size.fp16_bytes())) + " B fp16)"});
}

// The tokens at which answers part, ascending: "3", "3 and 10", "1, 3 and 10" (Chinese: "1、3 和 10").
std::string first_steps(const AdapterEffect& effect, const Words& say) {
  std::vector<int> steps;
  for (int step : effect.first_differing_step) {
    if (step >= 0) steps.push_back(step);
  }
  std::sort(steps.begin(), steps.end());
  std::string text;
  for (std::size_t i = 0; i < steps.size(); ++i) {
    if (i > 0) text += i + 1 == steps.size() ? say(" and ", " 和 ") : say(", ", "、");
    text += std::to_string(steps[i]);
  }
  return text;
}

std::string zero_b_paragraph(const AdaptersData& data, const Words& say) {
  const AdapterEffect& zero = data.zero_b;
  const std::string rows = std::to_string(zero.rows_identical) + say(" of ", " / ") + std::to_string(zero.rows);
  const std::string logits = count(zero.positions);
  if (zero.logits_bit_identical && zero.rows_identical == zero.rows) {
    return say("With B = 0 — the adapter as MiniMind initialises it — nothing changed: " + rows +
                   " answers identical, and the logits at all " + logits +
                   " answer positions equal bit for bit (max |Δ| = 0). B (A x) adds exact zeros, so training starts "
                   "from the base model's behaviour exactly, and only what training writes into B moves it.",
               "B = 0 时——也就是 MiniMind 初始化时的适配器——什么都没有改变：" + rows + " 个回答相同，全部 " + logits +
                   " 个回答位置上的 logits 逐位相等（最大 |Δ| = 0）。B (A x) 加上的是精确的零，所以训练从基础模型的行为"
                   "精确地开始，只有训练写进 B 的东西才会改变它。");
  }
  return say("With B = 0 the output **changed** (" + rows + " answers identical, max |Δ logit| = " +
                 exact_or_scientific(zero.max_abs_logit_delta) + ") — a bug: B (A x) with B = 0 must add exact zeros.",
             "B = 0 时输出**改变了**（" + rows +
                 " 个回答相同，最大 |Δ logit| = " + exact_or_scientific(zero.max_abs_logit_delta) +
                 "）——这是一个错误：B = 0 时 B (A x) 必须加上精确的零。");
}

std::string trained_paragraph(const AdaptersData& data, const Words& say) {
  const AdapterEffect& effect = data.trained;
  const std::string positions = count(effect.positions);
  const std::string agreeing = count(effect.top1_agreeing) + say(" of ", " / ") + positions;
  std::string text =
      say("On the base model's own greedy answers to the " + std::to_string(effect.rows) +
              " questions (each up to its eos, at most " + std::to_string(data.new_tokens) + " tokens: " + positions +
              " positions), the adapter moved the logits by up to " + exact_or_scientific(effect.max_abs_logit_delta) +
              ", by a mean KL of " + exact_or_scientific(effect.mean_kl_nats) +
              " nats per position, and its greedy choice was the base's at " + agreeing + " positions (" +
              percent(effect.top1_share()) + "). ",
          "在基础模型对 " + std::to_string(effect.rows) + " 个问题自己的贪心回答上（每个回答到它的 eos 为止，最多 " +
              std::to_string(data.new_tokens) + " 个 token：共 " + positions +
              " 个位置），适配器使 logits 最多移动了 " + exact_or_scientific(effect.max_abs_logit_delta) +
              "，每个位置的平均 KL 为 " + exact_or_scientific(effect.mean_kl_nats) + " nats，它的贪心选择在 " +
              agreeing + " 个位置上与基础模型相同（" + percent(effect.top1_share()) + "）。");
  const std::string rows = std::to_string(effect.rows_identical) + say(" of ", " / ") + std::to_string(effect.rows);
  if (effect.top1_agreeing == effect.positions && effect.rows_identical == effect.rows) {
    text += say("It changed no greedy choice on this text: its effect stays in the probabilities, and all " + rows +
                    " answers are the base's.",
                "在这段文本上它没有改变任何贪心选择：它的作用停留在概率里，" + rows + " 个回答都与基础模型相同。");
  } else if (effect.rows_identical == effect.rows) {
    text +=
        say("Answered freely, all " + rows +
                " answers are still the base's: the choices it changes on the base's text never come up on its "
                "own path.",
            "自由回答时，" + rows + " 个回答仍与基础模型相同：它在基础模型文本上改变的选择没有出现在它自己的路径上。");
  } else {
    text += say("Answered freely, " + rows + " answers stayed the base's; the others part at token" +
                    (effect.rows - effect.rows_identical > 1 ? "s " : " ") + first_steps(effect, say) +
                    ", and from there each continues a text of its own.",
                "自由回答时，" + rows + " 个回答与基础模型相同；其余的在第 " + first_steps(effect, say) +
                    " 个 token 处分开，从那里起各自续写自己的文本。");
  }
  return text;
}

std::string merged_paragraph(const AdaptersData& data, const Words& say) {
  if (!data.merged) return say("Merging was not measured: ", "没有测量合并：") + data.merge_skipped + ".";
  const AdapterEffect& merged = *data.merged;
  const std::string rows = std::to_string(merged.rows_identical) + say(" of ", " / ") + std::to_string(merged.rows);
  const std::string delta = exact_or_scientific(merged.max_abs_logit_delta);
  const std::string tolerance = exact_or_scientific(kMergeRoundingLogitTolerance);
  const bool within = merged.max_abs_logit_delta <= kMergeRoundingLogitTolerance;
  const bool same = merged.rows_identical == merged.rows;
  std::string text =
      say("Merged into a copy of the weights in fp32 (W + scale · B·A, MiniMind's merge_lora before it "
          "rounds to fp16) and compared with the adapter unmerged, both in fp32: ",
          "把适配器以 fp32 合并进权重的副本（W + scale · B·A，即 MiniMind 的 merge_lora 在舍入到 fp16 "
          "之前），并与未合并的适配器比较，两者都用 fp32：");
  if (same && within) {
    text +=
        say("the same answers (" + rows + ") and logits equal up to rounding, max |Δ| = " + delta + " (≤ " + tolerance +
                "). Merging is a way to deploy, not a different model: it saves the per-row term but needs a full "
                "copy of the weights for every adapter.",
            "回答相同（" + rows + "），logits 只差舍入误差，最大 |Δ| = " + delta + "（≤ " + tolerance +
                "）。合并是一种部署方式，而不是另一个模型：它省去了每行的低秩项，但每个适配器都需要一整份权重。");
  } else if (same) {
    text += say("the same answers (" + rows + "), but logits apart by more than rounding: max |Δ| = " + delta + " (> " +
                    tolerance + "). The two should compute the same function; look at the merge.",
                "回答相同（" + rows + "），但 logits 的差别超过了舍入误差：最大 |Δ| = " + delta + "（> " + tolerance +
                    "）。两者应当计算同一个函数；请检查合并。");
  } else if (within) {
    text += say(rows + " answers identical although the logits agree up to rounding (max |Δ| = " + delta + " ≤ " +
                    tolerance +
                    "): where two tokens are nearly tied, rounding alone can pick the other one, and the answer "
                    "continues differently from there (token" +
                    (merged.rows - merged.rows_identical > 1 ? "s " : " ") + first_steps(merged, say) + ").",
                rows + " 个回答相同，尽管 logits 只差舍入误差（最大 |Δ| = " + delta + " ≤ " + tolerance +
                    "）：两个 token 几乎并列时，单是舍入就可能选中另一个，回答从那里开始不同（第 " +
                    first_steps(merged, say) + " 个 token）。");
  } else {
    text += say("they **differ**: " + rows + " answers identical and logits apart by up to " + delta + " (> " +
                    tolerance + ") — merged and unmerged must compute the same function; this is a bug.",
                "两者**不同**：" + rows + " 个回答相同，logits 最多相差 " + delta + "（> " + tolerance +
                    "）——合并与未合并必须计算同一个函数；这是一个错误。");
  }
  return text;
}

std::string timing_paragraph(const AdaptersData& data, const Words& say) {
  const MixedBatchTiming& t = data.timing;
  const double base_ms = median(t.base_ms_per_step);
  const double mixed_ms = median(t.mixed_ms_per_step);
  const double ratio = mixed_ms / base_ms;
  const std::string ratio_text = fixed(ratio, 2);
  const std::string setup = say(
      "One batch of " + std::to_string(t.rows) + " rows, " + std::to_string(t.base_rows) +
          " on the weights alone and " + std::to_string(t.rows - t.base_rows) + " on " + std::to_string(t.adapters) +
          " adapters, against the same rows all on the weights alone (" + std::to_string(t.steps) +
          " decode steps, median of " + std::to_string(t.base_ms_per_step.size()) + " runs each, taken in turn): ",
      "一个 " + std::to_string(t.rows) + " 行的批次，其中 " + std::to_string(t.base_rows) + " 行只用权重，" +
          std::to_string(t.rows - t.base_rows) + " 行用 " + std::to_string(t.adapters) +
          " 个适配器，与同样的行全部只用权重相比（" + std::to_string(t.steps) + " 个解码步，各 " +
          std::to_string(t.base_ms_per_step.size()) + " 次运行交替进行，取中位数）：");
  switch (compare_ratio(ratio)) {
    case Comparison::kAboutSame:
      return setup +
             say("a step takes about the same time (mixed ÷ alone = " + ratio_text +
                     ", within ±10 %). The base projections run once for all rows; each adapter adds two thin "
                     "products per wrapped matrix (A x, then B (A x)) for its own rows only.",
                 "每一步的时间大致相同（混合 ÷ 单独 = " + ratio_text +
                     "，在 ±10 % 以内）。基础模型的投影对所有行只运行一次；每个适配器只为自己的行在每个被包装的矩阵上"
                     "增加两个很窄的乘积（A x，然后 B (A x)）。");
    case Comparison::kLarger:
      return setup + say("a step takes " + ratio_text +
                             "× as long (beyond ±10 %): on this model the adapters' thin products (A x, then B (A x), "
                             "for each adapter's rows) cost more than a tenth of a step.",
                         "每一步的时间是 " + ratio_text +
                             " 倍（超出 ±10 %）：在这个模型上，适配器的窄乘积（为每个适配器的行计算 A x，然后 B (A x)）"
                             "的代价超过了一步的十分之一。");
    case Comparison::kSmaller:
      break;
  }
  return setup + say("the mixed batch was faster (mixed ÷ alone = " + ratio_text +
                         ", beyond ±10 %), which added work cannot cause: the difference comes from the run (a shared "
                         "machine, few repeats).",
                     "混合批次反而更快（混合 ÷ 单独 = " + ratio_text +
                         "，超出 ±10 %），增加的工作不可能造成这一点：差别来自运行环境（共享的机器、重复次数少）。");
}

nlohmann::json size_json(const AdapterSize& size) {
  nlohmann::json groups = nlohmann::json::array();
  for (const AdapterMatrixGroup& g : size.groups) {
    groups.push_back({{"matrix", g.name},
                      {"rank", g.rank},
                      {"in", g.in},
                      {"out", g.out},
                      {"matrices", g.matrices},
                      {"parameters_each", g.parameters_each()}});
  }
  return {{"model", size.model},
          {"model_parameters", size.model_parameters},
          {"groups", groups},
          {"parameters", size.parameters},
          {"fp32_bytes", size.fp32_bytes()},
          {"fp16_bytes", size.fp16_bytes()},
          {"share_of_model", size.share_of_model()}};
}

nlohmann::json effect_json(const AdapterEffect& effect) {
  return {{"positions", effect.positions},
          {"max_abs_logit_delta", effect.max_abs_logit_delta},
          {"logits_bit_identical", effect.logits_bit_identical},
          {"mean_kl_nats", effect.mean_kl_nats},
          {"top1_agreeing", effect.top1_agreeing},
          {"top1_share", effect.top1_share()},
          {"rows", effect.rows},
          {"rows_identical", effect.rows_identical},
          {"first_differing_step", effect.first_differing_step}};
}

std::vector<std::string> effect_row(const std::string& run, const std::string& against, const AdapterEffect& effect,
                                    const Words& say) {
  return {run,
          against,
          exact_or_scientific(effect.max_abs_logit_delta),
          effect.logits_bit_identical ? say("yes", "是") : say("no", "否"),
          exact_or_scientific(effect.mean_kl_nats),
          count(effect.top1_agreeing) + say(" of ", " / ") + count(effect.positions) + " (" +
              percent(effect.top1_share()) + ")",
          std::to_string(effect.rows_identical) + say(" of ", " / ") + std::to_string(effect.rows)};
}

}  // namespace

ReportSection adapters_report(const AdaptersData& data, Language language) {
  const Words say{language};
  ReportSection section;
  section.key = "adapters";
  section.title = say("Adapters: LoRA on the SFT model", "适配器：SFT 模型上的 LoRA");
  const std::string relative = fixed(100 * data.relative_size, 1) + " %";
  std::string intro = say(
      "LoRA fine-tunes a model without changing its weights: for some matrices W it learns a low-rank pair, A "
      "[rank × in] and B [out × rank], and the projection becomes y = W x + scale · B (A x). MiniMind's model_lora.py "
      "wraps every square projection — q_proj and o_proj in its shapes — at rank 16 with scale 1, starting from "
      "A ~ N(0, 0.02²) and B = 0. minigen runs adapters unmerged: the base projections run once for all rows of a "
      "batch and each row adds its own adapter's term, so one copy of the weights serves every adapter and rows with "
      "different adapters share a step. ",
      "LoRA 在不改变模型权重的情况下微调模型：对某些矩阵 W，它学习一对低秩矩阵 A [rank × in] 和 B [out × "
      "rank]，投影变成 "
      "y = W x + scale · B (A x)。MiniMind 的 model_lora.py 以秩 16、scale 1 包装每个方阵投影——在它的形状里就是 q_proj "
      "和 o_proj——初始时 A ~ N(0, 0.02²)，B = 0。minigen "
      "以不合并的方式运行适配器：基础模型的投影对批次中的所有行只运行一次，"
      "每一行再加上自己适配器的项，所以一份权重服务所有适配器，使用不同适配器的行也能共享一步。");
  intro +=
      data.learners_adapter
          ? say("This section measures your adapter `" + data.adapter_source + "` (" + data.adapter_summary +
                    "); its ‖scale · B·A‖_F is " + relative + " of the ‖W‖_F it adapts.",
                "本节测量你的适配器 `" + data.adapter_source + "`（" + data.adapter_summary_zh +
                    "）；它的 ‖scale · B·A‖_F 是它所适配的 ‖W‖_F 的 " + relative + "。")
          : say("No adapter was given (`--lora`), so this section makes a random one in MiniMind's shape (" +
                    data.adapter_summary + ") with B drawn so that ‖B·A‖_F is about " +
                    fixed(100 * data.target_relative_size, 0) + " % of the ‖W‖_F it adapts (measured: " + relative +
                    ") — an assumed size for a trained adapter, not one measured on a trained MiniMind adapter. "
                    "`minigen lab --lora your_adapter.pth` measures your own.",
                "没有给出适配器（`--lora`），所以本节按 MiniMind 的形状生成一个随机适配器（" + data.adapter_summary_zh +
                    "），B 的大小使 ‖B·A‖_F 约为它所适配的 ‖W‖_F 的 " + fixed(100 * data.target_relative_size, 0) +
                    " %（实测：" + relative +
                    "）——这是对训练后适配器大小的假设，而不是在训练过的 MiniMind 适配器上测得的。"
                    "`minigen lab --lora your_adapter.pth` 会测量你自己的适配器。");
  section.paragraph(intro);

  const AdapterSize& size = data.size;
  section.paragraph(say(
      "An adapter adds rank · (in + out) parameters per wrapped matrix — A's rank · in and B's out · rank — against "
      "the in · out of the matrix it wraps. Here: " +
          size_formula(size, say) + " parameters, " + percent(size.share_of_model()) + " of the SFT model's " +
          millions(size.model_parameters) + "; " + count(static_cast<long long>(size.fp32_bytes())) +
          " B in fp32 (as minigen holds them) and " + count(static_cast<long long>(size.fp16_bytes())) +
          " B in fp16 (the .pth MiniMind saves). On minimind-3 at rank 16: " + size_formula(data.minimind3, say) +
          " parameters, " + percent(data.minimind3.share_of_model()) + " of its " +
          millions(data.minimind3.model_parameters) +
          ". Each adapter served costs its own bytes, not another copy of "
          "the model's.",
      "适配器为每个被包装的矩阵增加 rank · (in + out) 个参数——A 的 rank · in 加上 B 的 out · "
      "rank——而被包装的矩阵本身有 "
      "in · out 个。这里：" +
          size_formula(size, say) + " 个参数，占 SFT 模型 " + millions(size.model_parameters) + " 的 " +
          percent(size.share_of_model()) + "；fp32 下 " + count(static_cast<long long>(size.fp32_bytes())) +
          " B（minigen 以 fp32 保存它们），fp16 下 " + count(static_cast<long long>(size.fp16_bytes())) +
          " B（MiniMind 保存的 .pth）。在 minimind-3 上取秩 16：" + size_formula(data.minimind3, say) +
          " 个参数，占其 " + millions(data.minimind3.model_parameters) + " 的 " +
          percent(data.minimind3.share_of_model()) + "。每多服务一个适配器，只多花它自己的字节，而不是再一份模型。"));
  ReportTable sizes{{say("adapter on", "适配的模型"), say("matrix", "矩阵"), "rank · (in + out)",
                     say("per matrix", "每个矩阵"), say("matrices", "矩阵数"), say("parameters", "参数")},
                    {}};
  size_rows(size, sizes, say);
  size_rows(data.minimind3, sizes, say);
  section.table(std::move(sizes));

  section.paragraph(zero_b_paragraph(data, say));
  ReportTable effects{{say("run", "运行"), say("against", "对比"), "max |Δ logit|",
                       say("logits bit-identical", "logits 逐位相等"), say("mean KL (nats)", "平均 KL (nats)"),
                       say("same greedy choice", "相同的贪心选择"), say("answers identical", "回答相同")},
                      {}};
  effects.rows.push_back(effect_row("B = 0", say("base", "基础模型"), data.zero_b, say));
  effects.rows.push_back(effect_row(say("the adapter", "适配器"), say("base", "基础模型"), data.trained, say));
  if (data.merged) {
    effects.rows.push_back(
        effect_row(say("merged (fp32)", "合并 (fp32)"), say("unmerged (fp32)", "未合并 (fp32)"), *data.merged, say));
  }
  section.table(std::move(effects));
  section.paragraph(trained_paragraph(data, say));
  if (!data.prompts.empty()) {
    const std::vector<int>& parted = data.trained.first_differing_step;
    const bool changed = data.example_prompt < static_cast<int>(parted.size()) && parted[data.example_prompt] >= 0;
    section.paragraph(
        (changed ? say("The first question whose answer the adapter changed, ", "适配器改变了回答的第一个问题")
                 : say("The first question, ", "第一个问题")) +
        say.quoted(data.prompts[data.example_prompt]) +
        say(", answered greedily by the base model:", "，基础模型的贪心回答："));
    section.paragraph(blockquote(printable_text(data.base_answer)));
    section.paragraph(say("and with the adapter:", "以及使用适配器的回答："));
    section.paragraph(blockquote(printable_text(data.adapter_answer)));
  }
  section.paragraph(merged_paragraph(data, say));

  const MixedBatchTiming& t = data.timing;
  const double base_ms = median(t.base_ms_per_step);
  const double mixed_ms = median(t.mixed_ms_per_step);
  ReportTable timing{{say("batch", "批次"), say("rows", "行数"), say("ms per step (median)", "每步毫秒（中位数）"),
                      say("tokens/s", "token/秒")},
                     {}};
  timing.rows.push_back({say("the weights alone", "只用权重"), std::to_string(t.rows), fixed(base_ms, 2),
                         grouped(t.rows * 1000.0 / base_ms, 0)});
  timing.rows.push_back({say("mixed: ", "混合：") + std::to_string(t.base_rows) + say(" alone, ", " 行单独，") +
                             std::to_string(t.adapters) + say(" adapters × ", " 个适配器 × ") +
                             std::to_string((t.rows - t.base_rows) / t.adapters),
                         std::to_string(t.rows), fixed(mixed_ms, 2), grouped(t.rows * 1000.0 / mixed_ms, 0)});
  section.table(std::move(timing));
  section.paragraph(timing_paragraph(data, say));

  section.data = {{"learners_adapter", data.learners_adapter},
                  {"adapter_source", data.adapter_source},
                  {"adapter_summary", data.adapter_summary},
                  {"scale", data.scale},
                  {"relative_size", data.relative_size},
                  {"target_relative_size",
                   data.learners_adapter ? nlohmann::json(nullptr) : nlohmann::json(data.target_relative_size)},
                  {"size", size_json(data.size)},
                  {"minimind3_size", size_json(data.minimind3)},
                  {"new_tokens", data.new_tokens},
                  {"prompts", data.prompts},
                  {"zero_b", effect_json(data.zero_b)},
                  {"adapter", effect_json(data.trained)},
                  {"merged", data.merged ? effect_json(*data.merged) : nlohmann::json(nullptr)},
                  {"merge_skipped", data.merge_skipped},
                  {"example_prompt", data.example_prompt},
                  {"base_answer", data.base_answer},
                  {"adapter_answer", data.adapter_answer},
                  {"mixed_batch",
                   {{"rows", t.rows},
                    {"adapters", t.adapters},
                    {"base_rows", t.base_rows},
                    {"steps", t.steps},
                    {"base_ms_per_step", t.base_ms_per_step},
                    {"mixed_ms_per_step", t.mixed_ms_per_step},
                    {"mixed_over_base_time", mixed_ms / base_ms}}}};
  section.summary.push_back(
      "adapters: " + data.adapter_summary + " = " + count(size.parameters) + " parameters (" +
      percent(size.share_of_model()) + " of the model; minimind-3 rank 16: " + count(data.minimind3.parameters) + ", " +
      percent(data.minimind3.share_of_model()) + "); B = 0 " +
      (data.zero_b.logits_bit_identical && data.zero_b.rows_identical == data.zero_b.rows ? "changes nothing"
                                                                                          : "CHANGED the output") +
      "; the adapter: max |Δ logit| " + exact_or_scientific(data.trained.max_abs_logit_delta) + ", top-1 " +
      percent(data.trained.top1_share()) + "; merged vs unmerged " +
      (data.merged ? "max |Δ| " + exact_or_scientific(data.merged->max_abs_logit_delta) : std::string("skipped")) +
      "; mixed batch " + fixed(mixed_ms / base_ms, 2) + "× the base's step time");
  return section;
}

}  // namespace minigen::lab
