// Section 11's sentences from made-up data on both sides of each claim: B = 0 changing nothing or something, the
// adapter changing no greedy choice or some, merged against unmerged within rounding or beyond it, and a mixed
// batch about as fast, slower or faster than the base alone.
#include <gtest/gtest.h>

#include <string>

#include "lab/report_text_expectations.h"
#include "lab/report_thresholds.h"
#include "lab/section_reports.h"

namespace minigen::lab {
namespace {

AdapterEffect same_as_reference(int rows, int64_t positions) {
  AdapterEffect effect;
  effect.rows = rows;
  effect.rows_identical = rows;
  effect.positions = positions;
  effect.top1_agreeing = positions;
  effect.logits_bit_identical = true;
  effect.first_differing_step.assign(rows, -1);
  return effect;
}

// The shipped tiny SFT model's shape: a random rank-16 adapter on q_proj and o_proj of its 4 layers.
AdaptersData made_up() {
  AdaptersData data;
  data.adapter_source = "random";
  data.adapter_summary = "q_proj, o_proj in 4 of 4 layers, rank 16";
  data.adapter_summary_zh = "q_proj、o_proj（4 层中的 4 层），秩 16";
  data.relative_size = 0.0987;
  data.target_relative_size = 0.10;
  data.size = {"tiny", 4'852'224, {{"q_proj", 256, 256, 16, 4}, {"o_proj", 256, 256, 16, 4}}, 65'536};
  data.minimind3 = {"minimind-3", 63'912'960, {{"q_proj", 768, 768, 16, 8}, {"o_proj", 768, 768, 16, 8}}, 393'216};
  data.new_tokens = 16;
  data.prompts = {"What does 'river' mean?", "Who are you?", "Name a colour.", "Count to three."};
  data.zero_b = same_as_reference(4, 64);
  data.trained = same_as_reference(4, 64);
  data.trained.logits_bit_identical = false;
  data.trained.max_abs_logit_delta = 0.42;
  data.trained.mean_kl_nats = 0.0031;
  data.merged = same_as_reference(4, 64);
  data.merged->logits_bit_identical = false;
  data.merged->max_abs_logit_delta = 3.8e-6;
  data.base_answer = "A river is water that flows.";
  data.adapter_answer = "A river is a stream.";
  data.timing = {8, 3, 2, 8, {2.0, 2.1}, {2.1, 2.2}};
  return data;
}

TEST(AdaptersReport, FormulaFilledInForTheModelAndForMiniMind3) {
  const std::string text = markdown_of(adapters_report(made_up()));
  expect_says(text,
              "Here: 16 · (256 + 256) = 8,192 per matrix × 8 (q_proj, o_proj) = 65,536 parameters, 1.35 % of "
              "the SFT model's 4.85 M; 262,144 B in fp32 (as minigen holds them) and 131,072 B in fp16");
  expect_says(text,
              "On minimind-3 at rank 16: 16 · (768 + 768) = 24,576 per matrix × 16 (q_proj, o_proj) = 393,216 "
              "parameters, 0.62 % of its 63.91 M.");
  expect_says(text, "| tiny | q_proj | 16 · (256 + 256) | 8,192 | 4 | 32,768 |");
  expect_says(text,
              "| minimind-3 | **all** |  |  |  | **393,216** (0.62 % of 63.91 M; 1,572,864 B fp32, 786,432 B fp16) |");
  expect_says(text, "No adapter was given (`--lora`), so this section makes a random one");
  expect_not_says(text, "This section measures your adapter");
  const ReportSection section = adapters_report(made_up());
  EXPECT_EQ(section.data["size"]["parameters"], 65536);
  EXPECT_EQ(section.data["minimind3_size"]["fp16_bytes"], 786432);
}

TEST(AdaptersReport, ZeroBChangesNothingOrIsABug) {
  AdaptersData data = made_up();
  expect_says(markdown_of(adapters_report(data)),
              "With B = 0 — the adapter as MiniMind initialises it — nothing changed: 4 of 4 answers identical, and "
              "the logits at all 64 answer positions equal bit for bit (max |Δ| = 0).");
  data.zero_b.logits_bit_identical = false;
  data.zero_b.max_abs_logit_delta = 1e-7;
  const std::string text = markdown_of(adapters_report(data));
  expect_says(text, "With B = 0 the output **changed** (4 of 4 answers identical, max |Δ logit| = 1.00e-07) — a bug");
  expect_not_says(text, "nothing changed");
  EXPECT_NE(adapters_report(data).summary.front().find("B = 0 CHANGED the output"), std::string::npos);
}

TEST(AdaptersReport, TheAdapterChangesNoChoiceOnlyOffPathOrSomeAnswers) {
  AdaptersData data = made_up();
  std::string text = markdown_of(adapters_report(data));
  expect_says(text,
              "its greedy choice was the base's at 64 of 64 positions (100.00 %). It changed no greedy choice on "
              "this text: its effect stays in the probabilities, and all 4 of 4 answers are the base's.");
  data.trained.top1_agreeing = 62;
  text = markdown_of(adapters_report(data));
  expect_says(text, "Answered freely, all 4 of 4 answers are still the base's");
  data.trained.rows_identical = 2;
  data.trained.first_differing_step = {-1, 3, -1, 11};
  text = markdown_of(adapters_report(data));
  expect_says(text, "Answered freely, 2 of 4 answers stayed the base's; the others part at tokens 3 and 11, and from");
  expect_not_says(text, "It changed no greedy choice");
  expect_says(text, "The first question, \"What does 'river' mean?\", answered greedily by the base model:");
  data.example_prompt = 1;  // the measurement shows the first question whose answer changed
  data.trained.first_differing_step = {-1, 3, -1, -1};
  data.trained.rows_identical = 3;
  text = markdown_of(adapters_report(data));
  expect_says(text, "the others part at token 3, and from");
  expect_says(text, "The first question whose answer the adapter changed, \"Who are you?\", answered greedily");
}

TEST(AdaptersReport, MergedAgainstUnmergedWithinRoundingOrNot) {
  AdaptersData data = made_up();
  expect_says(markdown_of(adapters_report(data)),
              "the same answers (4 of 4) and logits equal up to rounding, max |Δ| = 3.80e-06 (≤ 1.00e-03).");
  data.merged->max_abs_logit_delta = 2 * kMergeRoundingLogitTolerance;
  expect_says(markdown_of(adapters_report(data)), "the same answers (4 of 4), but logits apart by more than rounding");
  data.merged->rows_identical = 3;
  data.merged->first_differing_step = {-1, -1, 9, -1};
  expect_says(markdown_of(adapters_report(data)),
              "they **differ**: 3 of 4 answers identical and logits apart by up "
              "to 2.00e-03 (> 1.00e-03) — merged and unmerged must compute");
  data.merged->max_abs_logit_delta = 1e-5;
  expect_says(markdown_of(adapters_report(data)),
              "3 of 4 answers identical although the logits agree up to rounding (max |Δ| = 1.00e-05 ≤ 1.00e-03): "
              "where two tokens are nearly tied");
  data.merged.reset();
  data.merge_skipped = "the SFT model's file stores q8 codes, not the fp32 weights a merge adds B·A to";
  const std::string text = markdown_of(adapters_report(data));
  expect_says(text, "Merging was not measured: the SFT model's file stores q8 codes");
  expect_not_says(text, "merged (fp32)");
}

TEST(AdaptersReport, MixedBatchAboutTheSameSlowerOrFaster) {
  AdaptersData data = made_up();  // medians 2.05 and 2.15 ms: 1.05
  expect_says(markdown_of(adapters_report(data)),
              "a step takes about the same time (mixed ÷ alone = 1.05, within ±10 %)");
  expect_says(markdown_of(adapters_report(data)), "| mixed: 2 alone, 3 adapters × 2 | 8 | 2.15 | 3,721 |");
  data.timing.mixed_ms_per_step = {2.6, 2.7};
  expect_says(markdown_of(adapters_report(data)), "a step takes 1.29× as long (beyond ±10 %)");
  data.timing.mixed_ms_per_step = {1.6, 1.6};
  const std::string text = markdown_of(adapters_report(data));
  expect_says(text, "the mixed batch was faster (mixed ÷ alone = 0.78, beyond ±10 %), which added work cannot cause");
  expect_not_says(text, "about the same");
}

TEST(AdaptersReport, ChineseFollowsTheSameNumbers) {
  AdaptersData data = made_up();
  data.learners_adapter = true;
  data.adapter_source = "out/lora/lora_identity_768.pth";
  const std::string text = markdown_of(adapters_report(data, Language::kChinese));
  expect_says(text, "本节测量你的适配器 `out/lora/lora_identity_768.pth`（q_proj、o_proj（4 层中的 4 层），秩 16）");
  EXPECT_EQ(text.find("layers, rank"), std::string::npos) << "the English summary in the Chinese report";
  expect_says(text, "B = 0 时——也就是 MiniMind 初始化时的适配器——什么都没有改变：4 / 4 个回答相同");
  expect_says(text, "在 minimind-3 上取秩 16：16 · (768 + 768) = 24,576 每个矩阵 × 16 (q_proj, o_proj) = 393,216");
}

}  // namespace
}  // namespace minigen::lab
