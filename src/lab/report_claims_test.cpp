// Every sentence of the lab's report that compares numbers or states a claim about the data, rendered from
// fabricated section data on both sides of its threshold (report_thresholds.h) and with no data for the claim: the
// prose must say what the numbers say.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "core/error.h"
#include "core/format.h"
#include "lab/report_introduction.h"
#include "lab/report_text_expectations.h"
#include "lab/report_thresholds.h"
#include "lab/section_reports.h"

namespace minigen::lab {
namespace {

const PlotSpec& plot_named(const ReportSection& section, const std::string& file_name) {
  for (const ReportBlock& block : section.blocks) {
    if (const auto* plot = std::get_if<ReportPlot>(&block); plot != nullptr && plot->spec.file_name == file_name) {
      return plot->spec;
    }
  }
  throw std::runtime_error("no plot " + file_name);
}

std::string caption_of(const ReportSection& section, const std::string& file_name) {
  for (const ReportBlock& block : section.blocks) {
    if (const auto* plot = std::get_if<ReportPlot>(&block); plot != nullptr && plot->spec.file_name == file_name) {
      return plot->caption;
    }
  }
  return "";
}

TEST(LabReportThresholds, AboutTheSameIsWithinTenPercentBothWays) {
  EXPECT_EQ(compare_ratio(1.10), Comparison::kAboutSame);
  EXPECT_EQ(compare_ratio(0.90), Comparison::kAboutSame);
  EXPECT_EQ(compare_ratio(1.11), Comparison::kLarger);
  EXPECT_EQ(compare_ratio(0.89), Comparison::kSmaller);
  EXPECT_EQ(compare_ratio(std::nan("")), Comparison::kAboutSame);
  EXPECT_TRUE(looks_untrained(6400, 6400));
  EXPECT_FALSE(looks_untrained(6399.9, 6400));
  EXPECT_FALSE(looks_untrained(9999, 0));  // no vocabulary size known: no claim
}

// ---- 3. time ----

TimingData timing(double ttft_uncached_ms, double itl_uncached_ms) {
  TimingData data;
  data.repeats = 1;
  data.threads = 2;
  data.headline = {183, 64, {{100}, {2}, {230}}, {{ttft_uncached_ms}, {itl_uncached_ms}, {900}}};
  data.against_prompt_new_tokens = 8;
  return data;
}

TEST(LabReportClaims, TtftIsAboutTheSameOnlyWithinTenPercent) {
  std::string text = markdown_of(timing_report(timing(110, 20)));
  expect_says(text, "TTFT is about the same in both modes (without ÷ with = 1.10, within ±10 %)");
  text = markdown_of(timing_report(timing(112, 20)));
  expect_says(text, "TTFT was 1.12× as long without the cache, more than the ±10 %");
  expect_not_says(text, "about the same in both modes");
  text = markdown_of(timing_report(timing(81, 20)));  // the learner's model of issue 27: ratio 0.81
  expect_says(text, "TTFT was shorter without the cache (without ÷ with = 0.81, beyond ±10 %)");
  expect_not_says(text, "about the same");
}

TEST(LabReportClaims, TimePerTokenLongerAboutTheSameOrShorterWithoutTheCache) {
  expect_says(markdown_of(timing_report(timing(100, 20))),
              "The time between later tokens is 10.0× as long without the cache, because each such step re-reads "
              "184 to 246 tokens instead of one.");
  expect_says(markdown_of(timing_report(timing(100, 2.2))),
              "The time between later tokens is about the same in both modes (ratio 1.10, within ±10 %)");
  expect_says(markdown_of(timing_report(timing(100, 1.5))),
              "The time between later tokens was shorter without the cache (ratio 0.75)");
}

// issue 43: the report said the speed-up is about the drop in tokens fed per step (184–246×) beside a measured 16–43×
// and did not say why. The gap is now computed: the cached step's time minus its proportional share is fixed cost.
TEST(LabReportClaims, SpeedUpIsReadAgainstTheTokensFedAndTheFixedCostIsComputed) {
  std::string text = markdown_of(timing_report(timing(100, 20)));
  expect_says(text,
              "That is less than the drop in tokens fed per step (215× on average, 184 … 246 against 1), because a "
              "step also has costs that do not grow with the tokens it feeds: were the time proportional to them, a "
              "cached step would take 20.00 ms ÷ 215 = 0.09 ms; it took 2.00 ms, so about 1.91 ms of every step is "
              "fixed");
  std::string chinese = markdown_of(timing_report(timing(100, 20), Language::kChinese));
  expect_says(chinese, "这比每步输入 token 数减少的倍数（平均 215 倍，184 … 246 个对 1 个）小");
  expect_says(chinese, "有缓存的一步应为 20.00 ms ÷ 215 = 0.09 ms；实测为 2.00 ms，所以每一步约有 1.91 ms 是固定的");
  // 430 ms against 2 ms is 215×: the speed-up is the drop in tokens fed.
  text = markdown_of(timing_report(timing(100, 430)));
  expect_says(text, "That is about the drop in tokens fed per step (215× on average, within ±10 %)");
  expect_not_says(text, "is fixed");
  chinese = markdown_of(timing_report(timing(100, 430), Language::kChinese));
  expect_says(chinese, "这与每步输入 token 数减少的倍数（平均 215 倍）大致相同（在 ±10 % 以内）");
  // 300×: more than the tokens fed, attention over the longer sequence.
  text = markdown_of(timing_report(timing(100, 600)));
  expect_says(text, "That is more than the drop in tokens fed per step (215× on average)");
  expect_says(markdown_of(timing_report(timing(100, 600), Language::kChinese)),
              "这比每步输入 token 数减少的倍数（平均 215 倍）还大");
  // No speed-up at all: no sentence about the gap.
  expect_not_says(markdown_of(timing_report(timing(100, 2.2))), "drop in tokens fed per step (");
}

TEST(LabReportClaims, AgainstPromptCaptionReadsTheTable) {
  TimingData data = timing(100, 20);
  data.against_prompt_length = {{16, 8, {{10}, {1}, {20}}, {{10.5}, {2}, {30}}}};
  expect_says(caption_of(timing_report(data), "ttft_against_prompt.svg"),
              "Only one prompt length was measured: this run has no trend against P to read.");
  data.against_prompt_length.push_back({256, 8, {{100}, {1.2}, {120}}, {{104}, {12}, {300}}});
  std::string caption = caption_of(timing_report(data), "ttft_against_prompt.svg");
  expect_says(caption, "The two TTFT lines lie on top of each other (without ÷ with between 1.04–1.05 at every P");
  expect_says(caption, "grew more without the cache than with it (P = 16 → 256: ×6.0 / ×1.2)");
  data.against_prompt_length[1] = {256, 8, {{100}, {1.2}, {120}}, {{130}, {2.2}, {300}}};
  caption = caption_of(timing_report(data), "ttft_against_prompt.svg");
  expect_says(caption, "The two TTFT lines part at some P (without ÷ with between 1.05–1.30, beyond ±10 %)");
  expect_says(caption, "did not grow more without the cache than with it (P = 16 → 256: ×1.1 / ×1.2)");
  EXPECT_EQ(plot_named(timing_report(data), "ttft_against_prompt.svg").key_position, "top left");
}

// ---- 6. top-p ----

// One top-p filter: `peaked` steps whose top token has probability 0.9 and `flat` steps at 0.05.
CandidateCounts filter(const std::string& name, const std::vector<int>& peaked, const std::vector<int>& flat) {
  CandidateCounts counts{name, {}, {}};
  for (int kept : peaked) {
    counts.kept.push_back(kept);
    counts.top_probability.push_back(0.9);
  }
  for (int kept : flat) {
    counts.kept.push_back(kept);
    counts.top_probability.push_back(0.05);
  }
  return counts;
}

TopPData top_p_data(std::vector<CandidateCounts> top_p) {
  TopPData data;
  data.prompt_count = 2;
  data.rows = 2;
  data.new_tokens = 8;
  data.top_k = 50;
  data.vocab_size = 6400;
  data.peaked_top_probability = 0.5;
  data.flat_top_probability = 0.2;
  data.filters = std::move(top_p);
  data.filters.push_back(filter("top-k 50", {50, 50}, {50, 50}));
  return data;
}

TEST(LabReportClaims, TopPOnATrainedModelAdaptsToTheShape) {
  const ReportSection section =
      top_p_report(top_p_data({filter("top-p 0.50", {1, 1}, {8, 10}), filter("top-p 0.80", {1, 2}, {20, 24}),
                               filter("top-p 0.90", {2, 3}, {40, 50}), filter("top-p 0.95", {4, 6}, {80, 90})}));
  const std::string text = markdown_of(section);
  expect_says(text,
              "On peaked steps (top token ≥ 0.5) every p kept a handful of tokens (medians 1, 2, 2, 5, at most 5).");
  expect_says(text,
              "On flat steps (top token < 0.2) the medians were 9–85 of 6,400 tokens, at least 4× the peaked steps' "
              "for every p, and the larger p, the further into the tail it reached.");
  expect_says(text, "top-k kept 50 at every step, whatever the shape: too many when the model is sure");
  expect_says(caption_of(section, "top_p_peakedness.svg"),
              "The surer the model (right), the fewer tokens top-p keeps: a median of 2 on peaked steps against 45");
  expect_says(caption_of(section, "top_p_candidates.svg"), "top-k's into 1 (a single spike).");
}

// issue 27: "on peaked steps every p keeps a handful" beside a table with no peaked step.
TEST(LabReportClaims, TopPWithoutPeakedStepsSaysThereIsNoData) {
  const ReportSection section =
      top_p_report(top_p_data({filter("top-p 0.50", {}, {2000, 2100}), filter("top-p 0.80", {}, {4000, 4100}),
                               filter("top-p 0.90", {}, {5000, 5100}), filter("top-p 0.95", {}, {5800, 5900})}));
  const std::string text = markdown_of(section);
  expect_says(text, "| top-p 0.90 | 2 | 5000 | 5050 | 5100 | no such step | 5050 (2 steps) |");
  expect_says(text,
              "No step of this run was peaked (top token ≥ 0.5), so there is no data here for what top-p does when "
              "the model is sure");
  expect_not_says(text, "handful");
  expect_not_says(text, "That adaptivity is why");
  expect_says(text, "This run does not show top-p adapting to the shape of the distribution on both sides");
  expect_says(caption_of(section, "top_p_peakedness.svg"), "No point lies right of the peaked threshold");
}

TEST(LabReportClaims, TopPMoreThanAHandfulAndNoSpreadAreSaid) {
  const ReportSection section =
      top_p_report(top_p_data({filter("top-p 0.50", {6}, {20}), filter("top-p 0.80", {6}, {23}),
                               filter("top-p 0.90", {6}, {22}), filter("top-p 0.95", {6}, {24})}));
  const std::string text = markdown_of(section);
  expect_says(text,
              "On peaked steps (top token ≥ 0.5) no p kept only a handful (5 or fewer): the medians were 6, 6, 6, 6");
  expect_says(text, ", not 4× the peaked steps' for every p; they did not grow with p at every step of the list.");
  expect_says(text, "This run does not show top-p adapting");
}

// issue 43: peaked medians 1, 2, 4, 26 were reported as "more than a handful (5)" though three of four are at most 5.
TEST(LabReportClaims, TopPPeakedMediansAreReadPByP) {
  const TopPData data = top_p_data({filter("top-p 0.50", {1}, {24}), filter("top-p 0.80", {2}, {150}),
                                    filter("top-p 0.90", {4}, {222}), filter("top-p 0.95", {26}, {268})});
  expect_says(markdown_of(top_p_report(data)),
              "On peaked steps (top token ≥ 0.5) p 0.50, 0.80 and 0.90 kept a handful (medians 1, 2, 4, at most 5); "
              "p 0.95 kept more (26): a larger p reaches into the tail even when the model is sure.");
  const std::string chinese = markdown_of(top_p_report(data, Language::kChinese));
  expect_says(chinese,
              "在尖锐的步上（最可能 token 的概率 ≥ 0.5），p 0.50、0.80 和 0.90 只保留少数几个（中位数 1、2、4，不超过 "
              "5）；p 0.95 保留得更多（26）：p 越大，即使模型有把握也会伸进长尾。");
  expect_not_says(chinese, "多于少数几个");
  // Over a handful at a smaller p than one that kept a handful: listed, with no claim about larger p.
  const std::string unordered =
      markdown_of(top_p_report(top_p_data({filter("top-p 0.50", {1}, {24}), filter("top-p 0.80", {9}, {150}),
                                           filter("top-p 0.90", {4}, {222}), filter("top-p 0.95", {3}, {268})})));
  expect_says(unordered, "p 0.50, 0.90 and 0.95 kept a handful (medians 1, 4, 3, at most 5); p 0.80 kept more (9).");
  expect_not_says(unordered, "a larger p reaches");
}

TEST(LabReportClaims, TopPWithoutFlatStepsSaysThereIsNoData) {
  const ReportSection section =
      top_p_report(top_p_data({filter("top-p 0.50", {1}, {}), filter("top-p 0.80", {1}, {}),
                               filter("top-p 0.90", {2}, {}), filter("top-p 0.95", {2}, {})}));
  expect_says(markdown_of(section),
              "No step was flat (top token < 0.2), so there is no data here for a hesitating model.");
  expect_says(caption_of(section, "top_p_peakedness.svg"), "No point lies left of the flat threshold");
}

TEST(LabReportClaims, TopPHistogramLinesAreDrawnApart) {
  const ReportSection section =
      top_p_report(top_p_data({filter("top-p 0.50", {1}, {8}), filter("top-p 0.80", {1}, {20}),
                               filter("top-p 0.90", {2}, {40}), filter("top-p 0.95", {4}, {80})}));
  const PlotSpec& histogram = plot_named(section, "top_p_candidates.svg");
  ASSERT_EQ(histogram.series.size(), 5u);
  for (std::size_t i = 0; i < histogram.series.size(); ++i) {
    for (std::size_t j = i + 1; j < histogram.series.size(); ++j) {
      EXPECT_NE(histogram.series[i].style, histogram.series[j].style) << i << " and " << j;
    }
  }
}

// ---- 9. shrinking ----

PerplexityResult perplexity(double value, double kl) {
  PerplexityResult result;
  result.sequences = 1;
  result.targets = 100;
  result.loss_sum = 100 * std::log(value);
  result.kl_sum = 100 * kl;
  result.top1_agreements = 90;
  result.has_reference = true;
  return result;
}

ShrinkingData shrinking(double int8_perplexity, double q4_tokens_per_second) {
  ShrinkingData data;
  data.new_tokens = 8;
  data.documents = 2;
  data.decode_tokens = 16;
  data.budget_lengths = {256, 2048};
  const Agreement agreement{0.01, 64, 64, 63, 4, 3};
  for (auto* rows : {&data.base_kv, &data.sft_kv}) {
    *rows = {{KvDType::kF32, 204800, {20, 2}, {}, perplexity(100, 0)},
             {KvDType::kBF16, 102400, {40, 5}, agreement, perplexity(100.2, 1e-6)},
             {KvDType::kF16, 102400, {40, 5}, agreement, perplexity(100.1, 0)},
             {KvDType::kInt8, 54400, {77, 9}, agreement, perplexity(int8_perplexity, 2e-3)}};
  }
  data.weights = {{WeightType::kF32, 4000000, 100, perplexity(100, 0)},
                  {WeightType::kBF16, 2000000, 150, perplexity(100.3, 1e-5)},
                  {WeightType::kQ8, 1100000, 180, perplexity(101, 1e-3)},
                  {WeightType::kQ4, 600000, q4_tokens_per_second, perplexity(110, 3e-2)}};
  return data;
}

TEST(LabReportClaims, ShrinkingPerplexityChangeAndSpeedFollowTheirThresholds) {
  std::string text = markdown_of(shrinking_report(shrinking(100.9, 200)));
  expect_says(text, "perplexity went 100.000 → 100.900 (+0.90 %, practically unchanged: within ±1 %)");
  expect_says(text, "decoded faster, at 200 tokens/s against 100 (2.00×)");
  expect_says(text, "memory for every sequence and, here, speed;");
  text = markdown_of(shrinking_report(shrinking(101.5, 105)));
  expect_says(text, "perplexity went 100.000 → 101.500 (+1.50 %).");
  expect_says(text, "decoded at about the same speed, 105 tokens/s against 100 (within ±10 %");
  expect_not_says(text, "here, speed");
  text = markdown_of(shrinking_report(shrinking(101.5, 80)));
  expect_says(text, "decoded slower, at 80 tokens/s against 100 (0.80×");
}

// issue 43: the Chinese text said "63 of 64 (98.4 %）" — English words and mixed brackets inside a Chinese sentence.
TEST(LabReportClaims, ShrinkingInChineseWritesItsCountsAndBracketsInChinese) {
  const std::string text = markdown_of(shrinking_report(shrinking(100.9, 200), Language::kChinese));
  expect_says(text, "贪心解码选出与 f32 缓存相同 token 的有 63 / 64（98.4 %）");
  expect_says(text, "困惑度变化为 100.000 → 100.900（+0.90 %，几乎不变：在 ±1 % 以内）");
  expect_says(text, "| 63 / 64（98.4 %） |");
  expect_not_says(text, " of ");
  expect_says(markdown_of(shrinking_report(shrinking(100.9, 200))), "token at 63 of 64 (98.4 %) steps");
}

// issue 27: four of the plot's eight points sat on zero and could not be seen.
TEST(LabReportClaims, ShrinkingPlotIsLogLogAndNamesThePointsItCannotDraw) {
  const ReportSection section = shrinking_report(shrinking(101.5, 200));
  const PlotSpec& plot = plot_named(section, "shrinking.svg");
  EXPECT_TRUE(plot.log_x);
  EXPECT_TRUE(plot.log_y);
  ASSERT_EQ(plot.series.size(), 5u);  // bf16, int8 cache; bf16, q8, q4 weights
  EXPECT_EQ(plot.series[0].title, "KV cache bf16");
  EXPECT_EQ(plot.series[0].y, std::vector<double>{1e-6});
  expect_says(caption_of(section, "shrinking.svg"),
              "The furthest from f32: weights q4 (mean KL 3.00e-02). Not drawn, because their KL is exactly 0 (the "
              "f32 distribution itself) and a log axis has no 0: KV cache f32, KV cache f16, weights f32.");
}

// ---- 4. cache bytes ----

CacheBytesData cache_bytes(KvShape model) {
  CacheBytesData data;
  data.model = model;
  data.formula_bytes_per_token = 2048;
  data.kv_bytes_per_token = 2048;
  data.max_length = 2;
  data.lengths = {1, 2};
  data.bytes_used = {2048, 4096};
  data.bytes_allocated = {2048, 4096};
  data.bytes_used_match_formula = true;
  data.generate_runs = {{37, 64, 100, 204800, 204800, 204800}};
  data.bytes_at_100_tokens = 204800;
  KvShape own = model;
  own.name = model.name + " (this model)";
  // f32 bytes per token: 2 · layers · kv_heads · head_dim · 4
  const auto per_token = [](const KvShape& s) { return std::size_t{2} * s.layers * s.kv_heads * s.head_dim * 4; };
  const auto saving = [&](const KvShape& s) {
    const uint64_t bytes = 100 * per_token(s);
    return GqaSaving{s, per_token(s), bytes, bytes * s.q_heads / s.kv_heads,
                     static_cast<double>(s.q_heads) / s.kv_heads};
  };
  data.gqa = {saving(own), saving({"MiniMind2", 8, 8, 2, 64}), saving({"minimind-3", 8, 8, 4, 32})};
  for (const std::string& name : {own.name, std::string("MiniMind2"), std::string("minimind-3")}) {
    data.budgets.push_back({name, 256, 2048, 1000, {{"1 GiB", 7}, {"24 GiB", 8}, {"80 GiB", 9}}});
  }
  return data;
}

// issue 43: the reserved column (229,376 B for 101 positions) is P + N rounded up to blocks of 16, and the report
// says so with the run's own numbers; a reservation of exactly P + N says that instead.
TEST(LabReportClaims, ReservedBytesNameTheBlockRounding) {
  CacheBytesData data = cache_bytes({"tiny", 4, 8, 2, 32});
  data.generate_runs = {{37, 64, 100, 204800, 229376, 204800}};
  for (const Language language : {Language::kEnglish, Language::kChinese}) {
    const std::string text = markdown_of(cache_bytes_report(data, language));
    expect_says(text,
                language == Language::kEnglish
                    ? "The reserved column is P + N positions rounded up to whole blocks of 16 (the attention "
                      "kernel reads 16 keys per vector load): 37 + 64 = 101 → 112 positions = 229,376 B."
                    : "预留一列是 P + N 个位置向上取整到 16 的整块（注意力内核每次向量加载读 16 个键）：37 + 64 = "
                      "101 → 112 个位置 = 229,376 B。");
  }
  data.generate_runs = {{36, 64, 99, 202752, 204800, 202752}};
  expect_says(markdown_of(cache_bytes_report(data)), "The reserved column is exactly P + N positions (36 + 64 = 100).");
}

// issue 27: "minimind3 (this model)" and "minimind-3" as two rows of one shape.
TEST(LabReportClaims, GqaTableListsAModelOfACatalogueShapeOnce) {
  const std::string text = markdown_of(cache_bytes_report(cache_bytes({"minimind3", 8, 8, 4, 32})));
  expect_says(text, "| minimind-3 (this model) | 8 | 4 | 8,192 | 16,384 | 819,200 | 1,638,400 | 2× |");
  expect_not_says(text, "| minimind-3 | 8 | 4 |");
  expect_not_says(text, "minimind3 (this model)");
  expect_says(text, "| minimind-3 (this model) | 0.00 MiB | 256 |");
  expect_says(text, "| MiniMind2 | 0.00 MiB | 256 |");
  expect_not_says(text, "| minimind-3 | 0.00 MiB");
  // The two remaining rows need the same bytes per token by different shapes: said.
  expect_says(text,
              "minimind-3 (this model) and MiniMind2 need the same 8,192 B per token by different routes: 8 layers × 4 "
              "kv heads × head_dim 32 against 8 layers × 2 kv heads × head_dim 64.");
}

TEST(LabReportClaims, GqaTableKeepsEveryRowForAnOwnShapeAndGenerateRunsAgainstTheFormula) {
  CacheBytesData data = cache_bytes({"tiny", 4, 8, 2, 32});
  std::string text = markdown_of(cache_bytes_report(data));
  expect_says(text, "| tiny (this model) | 8 | 2 |");
  expect_says(text, "| minimind-3 | 8 | 4 |");
  expect_says(text, "Real generations report the same bytes as the formula");
  data.generate_runs[0].kv_bytes_used = 204801;
  text = markdown_of(cache_bytes_report(data));
  expect_says(text, "Real generations do **NOT** all report the formula's bytes");
  data.bytes_used_match_formula = false;
  expect_says(markdown_of(cache_bytes_report(data)), "the bytes used do **NOT** equal the formula at every length");
}

// ---- 1. cache equivalence ----

CacheEquivalenceData equivalence(bool tokens_identical, bool bit_identical, bool with_sampled_run) {
  CacheEquivalenceData data;
  data.new_tokens = 4;
  data.sampling_seed = 7;
  data.vocab_size = 6400;
  RowComparison comparison;
  comparison.token_ids_identical = tokens_identical;
  comparison.logits_bit_identical = bit_identical;
  comparison.max_abs_logit_difference = bit_identical ? 0 : 3e-6;
  data.runs = {{"a", 4, false, comparison, {1}, {1}, {1}}};
  if (with_sampled_run) data.runs.push_back({"a", 4, true, comparison, {1}, {1}, {1}});
  data.genesis_continuation_text = "and the earth";
  return data;
}

TEST(LabReportClaims, CacheEquivalenceVerdictHasThreeCases) {
  std::string text = markdown_of(cache_equivalence_report(equivalence(true, true, true)));
  expect_says(text, "Every pair agrees: the same token ids, and logits equal bit for bit");
  expect_says(text, "The sampled pairs agree too because");
  expect_says(text, "The greedy continuation of the 183-token prompt, identical in both modes");
  text = markdown_of(cache_equivalence_report(equivalence(true, false, false)));
  expect_says(text, "Every pair chose the same token ids, but the logits are not bit-identical (max |Δ| = 3.00e-06)");
  expect_not_says(text, "The sampled pairs");  // none was run
  text = markdown_of(cache_equivalence_report(equivalence(false, false, true)));
  expect_says(text, "**Not every pair agrees**");
  expect_not_says(text, "The sampled pairs agree too");
  expect_not_says(text, "identical in both modes");
}

// ---- 2. forward tokens ----

ForwardTokensPoint sweep_point(int n, double cached_ms, double uncached_ms) {
  ForwardTokensPoint point;
  point.prompt_tokens = 183;
  point.new_tokens = n;
  point.cached = {183 + n - 1, 183 + n - 1, n, cached_ms};
  point.uncached_run = true;
  const int64_t uncached = int64_t{183} * n + int64_t{n} * (n - 1) / 2;
  point.uncached = {uncached, uncached, n, uncached_ms};
  return point;
}

ForwardTokensData forward_tokens(double last_uncached_ms) {
  ForwardTokensData data;
  data.grid = {sweep_point(16, 10, 40)};
  data.sweep_at_183 = {sweep_point(16, 10, 40), sweep_point(64, 40, last_uncached_ms)};
  data.formula_new_tokens = {16, 64};
  data.cached_formula_curve = {198, 246};
  data.uncached_formula_curve = {3048, 13728};
  data.headline = sweep_point(64, 40, last_uncached_ms);
  return data;
}

TEST(LabReportClaims, WallTimeCaptionComparesTheTwoGrowths) {
  expect_says(caption_of(forward_tokens_report(forward_tokens(600)), "forward_time.svg"),
              "it grew faster without the cache than with it (N = 16 → 64: ×15.0 without, ×4.0 with)");
  expect_says(caption_of(forward_tokens_report(forward_tokens(170)), "forward_time.svg"),
              "Here the wall time did not grow faster without the cache than with it (N = 16 → 64: ×4.2 without, "
              "×4.0 with)");
  ForwardTokensData off = forward_tokens(600);
  off.sweep_at_183[1].cached.forward_tokens += 1;
  expect_says(caption_of(forward_tokens_report(off), "forward_tokens.svg"),
              "Not every measured count (points) lies on its formula");
}

// ---- 5. temperature ----

TemperatureSettingResult setting(const std::string& name, double temperature, int distinct, double eos_share,
                                 double entropy, std::vector<std::vector<int>> openings = {},
                                 int distinct_openings = -1) {
  TemperaturePromptResult prompt{"hi",
                                 distinct,
                                 distinct_openings < 0 ? distinct : distinct_openings,
                                 10,
                                 eos_share,
                                 entropy,
                                 {"a", "b", "c"},
                                 std::move(openings)};
  return {name, temperature, {prompt}};
}

TemperatureData temperature(std::vector<TemperatureSettingResult> settings) {
  TemperatureData data;
  data.samples = 3;
  data.max_new_tokens = 8;
  data.seed = 1;
  data.opening_tokens = 4;
  data.settings = std::move(settings);
  return data;
}

TEST(LabReportClaims, TemperatureSentencesFollowTheTable) {
  std::string text = markdown_of(
      temperature_report(temperature({setting("greedy", 0, 1, 0.9, 1.0), setting("T = 1.6", 1.6, 3, 0.3, 2.0)})));
  expect_says(text, "Greedy decoding gave one answer per prompt however many times it ran.");
  expect_says(text, "From greedy → T = 1.6 the answers spread: 1.0 → 3.0 distinct answers per prompt on average.");
  expect_says(text, "The share of answers that ended with eos moved with T (90 % → 30 %)");
  text = markdown_of(
      temperature_report(temperature({setting("greedy", 0, 2, 0, 1.0), setting("T = 1.6", 1.6, 2, 0, 1.05)})));
  expect_says(text, "**Greedy decoding gave more than one answer to a prompt**");
  expect_says(text, "the answers did not spread: 2.0 → 2.0");
  expect_says(text,
              "No answer ended with eos at either end, so this run says nothing about how T moves the stop token.");
  text = markdown_of(
      temperature_report(temperature({setting("greedy", 0, 1, 0.5, 2.0), setting("T = 1.6", 1.6, 3, 0.52, 1.0)})));
  expect_says(text, "The share of answers that ended with eos stayed about the same (50 % → 52 %).");
}

// issue 43: the entropy was compared between the greedy row (the model's T = 1 entropy on its own path) and T 1.6,
// hiding T 0.3's 0.80; on a flat model "about the same" was said while T 0.3 was 5.98. Now only sampled rows, and
// "about the same" over the whole range.
TEST(LabReportClaims, TemperatureEntropyIsComparedOverTheSampledRowsOnly) {
  const auto report = [](std::vector<double> entropy, Language language = Language::kEnglish) {
    std::vector<TemperatureSettingResult> settings = {setting("greedy", 0, 1, 1, 5.42)};
    const double temperatures[] = {0.3, 0.7, 1.6};
    for (std::size_t i = 0; i < entropy.size(); ++i) {
      settings.push_back(setting("T = " + fixed(temperatures[i], 1), temperatures[i], 3, 1, entropy[i]));
    }
    return markdown_of(temperature_report(temperature(std::move(settings)), language));
  };
  std::string text = report({0.80, 3.0, 9.69});
  expect_says(text,
              "The entropy of the distribution drawn from rose with T at every row (T = 0.3 → T = 1.6: 0.80 → "
              "9.69 bits per token). The greedy row (5.42) is left out: it is the model's own T = 1 entropy");
  expect_says(report({0.80, 3.0, 9.69}, Language::kChinese),
              "所抽取的分布的熵随温度逐行升高（T = 0.3 → T = 1.6：0.80 → 9.69 比特/token）。贪心那一行（5.42）不在比较"
              "之内");
  expect_not_says(report({0.80, 3.0, 9.69}, Language::kChinese), "熵也升高了");
  // The flat model: greedy and T 1.6 alike, T 0.3 far below — not "about the same".
  text = report({5.98, 8.0, 5.5});
  expect_not_says(text, "drawn from stayed about the same");
  expect_says(text, "did not rise with T (T = 0.3 → T = 1.6: 5.98 → 5.50 bits per token)");
  expect_says(report({5.98, 6.8, 7.5}), "rose with T at every row (T = 0.3 → T = 1.6: 5.98 → 7.50");
  text = report({6.0, 6.3, 6.5});
  expect_says(text, "stayed about the same across the sampled rows (6.00–6.50 bits per token, within ±10 %)");
  expect_says(report({6.0, 6.3, 6.5}, Language::kChinese),
              "各抽样行所抽取的分布的熵大致不变（每个 token 6.00–6.50 比特");
  text = report({1.0, 3.0, 2.0});
  expect_says(text, "rose overall (T = 0.3 → T = 1.6: 1.00 → 2.00 bits per token), though not at every row");
  expect_says(report({1.0, 3.0, 2.0}, Language::kChinese),
              "总体上升高了（T = 0.3 → T = 1.6：1.00 → 2.00 比特/token），但并非逐行升高");
}

// issue 43: "the openings show the trend more gradually" and "at low T the samples are variations of the greedy
// answer" were printed whatever the data; both are now read from the openings.
TEST(LabReportClaims, TemperatureOpeningsAndGreedyVariationsAreRead) {
  const std::vector<int> greedy_opening = {5, 6, 7, 8};
  const auto data = [&](int same_as_greedy, int distinct_openings) {
    std::vector<std::vector<int>> cool(3, {9, 9, 9, 9});
    for (int i = 0; i < same_as_greedy; ++i) cool[i] = greedy_opening;
    return temperature({setting("greedy", 0, 1, 1, 2.0, {greedy_opening, greedy_opening, greedy_opening}),
                        setting("T = 0.3", 0.3, 3, 1, 1.0, cool, distinct_openings),
                        setting("T = 1.6", 1.6, 3, 0.5, 4.5, {{1}, {2}, {3}})});
  };
  std::string text = markdown_of(temperature_report(data(2, 2)));
  expect_says(text,
              "At T = 0.3, 2 of 3 samples open with the greedy answer's first 4 tokens: low temperature draws "
              "variations of the greedy answer.");
  expect_says(text,
              "The openings (first 4 tokens) spread more slowly than whole answers, which differ as soon as one "
              "token does: at T = 0.3, 2.0 distinct openings against 3.0 distinct answers per prompt.");
  expect_says(text, "At T = 1.6 each token is drawn from a distribution of 4.50 bits on average");
  std::string chinese = markdown_of(temperature_report(data(2, 2), Language::kChinese));
  expect_says(chinese, "T = 0.3 时，2 / 3 个样本的前 4 个 token 与贪心回答相同：低温抽出的是贪心回答的变体。");
  expect_says(chinese, "T = 0.3 时每个提示平均有 2.0 个不同的开头，而不同的回答有 3.0 个。");
  text = markdown_of(temperature_report(data(1, 3)));
  expect_says(text,
              "At T = 0.3, only 1 of 3 samples open with the greedy answer's first 4 tokens: on this model even "
              "the lowest temperature measured leaves the greedy path early.");
  expect_not_says(text, "variations of the greedy answer");
  expect_says(text, "The openings (first 4 tokens) were as varied as the whole answers at every T");
  expect_not_says(text, "more slowly");
  chinese = markdown_of(temperature_report(data(1, 3), Language::kChinese));
  expect_says(chinese, "只有 1 / 3 个样本的前 4 个 token 与贪心回答相同");
  expect_says(chinese, "每个温度下，开头（前 4 个 token）都与整个回答一样分散");
}

// ---- 7. eos padding ----

TEST(LabReportClaims, EosPaddingSaysWhenNothingWasPadded) {
  EosPaddingData data;
  data.rows_per_batch = 2;
  data.settings = {{"greedy", {2, 4, 8, 0, 2}, {{0, 4, {0, 0}}}}};
  data.all = {2, 4, 8, 0, 2};
  expect_says(markdown_of(eos_padding_report(data)), "No row finished before the rest of its batch in this run");
  data.settings.push_back({"T = 1.0", {2, 4, 6, 2, 2}, {{0, 4, {0, 2}}}});
  data.all = {4, 8, 14, 2, 4};
  expect_says(markdown_of(eos_padding_report(data)),
              "In this run 12.5 % of the row-steps computed were padding; the most at T = 1.0 (25.0 %).");
}

// ---- 8. seeds ----

SeedData seeds(bool seeds_same, bool cache_same, bool greedy_same, bool usual_bug_same, bool batch_same) {
  SeedData data;
  data.new_tokens = 8;
  data.prompt = "hi";
  for (bool same : {seeds_same, cache_same, greedy_same, usual_bug_same, batch_same}) {
    SeedCheck check;
    check.question = "q";
    check.comparison.token_ids_identical = same;
    check.comparison.logits_bit_identical = same;
    check.comparison.first_differing_step = same ? -1 : 3;
    data.checks.push_back(check);
  }
  return data;
}

TEST(LabReportClaims, SeedChecksAreReadOneByOne) {
  std::string text = markdown_of(seed_report(seeds(false, true, true, false, true)));
  expect_says(text, "Different seeds gave different answers");
  expect_says(text,
              "With the same seed, turning the cache on or off changed nothing, bit for bit, and sharing the "
              "batch changed nothing either.");
  expect_says(text, "here the greedy answers with and without the cache agree token for token");
  expect_says(text,
              "The usual culprit reproduces: sampling on one side and greedy on the other gave different "
              "answers (first differing token 3).");
  text = markdown_of(seed_report(seeds(true, false, false, true, false)));
  expect_says(text, "Different seeds gave the same answer here");
  expect_says(text,
              "turning the cache on or off **changed the output** — a bug, but sharing the batch **changed the "
              "answer** — a bug.");
  expect_says(text, "here even the greedy answers differ with and without the cache");
  expect_says(text, "The usual culprit (sampling on one side, greedy on the other) happened to give the same answer");
}

// ---- 10. constraining ----

ConstrainingData constraining(int free_parsed, int constrained_parsed, int constrained_stopped,
                              double constrained_kept) {
  ConstrainingData data;
  data.question = "name?";
  data.schema = nlohmann::ordered_json::object();
  data.samples = 4;
  data.new_tokens = 16;
  data.seed = 1;
  data.vocab_size = 6400;
  data.free = {free_parsed, 4, {0, 0}, {30, 30}, {"text"}};
  data.constrained = {
      constrained_parsed, constrained_stopped, {0.5, 0.9}, {constrained_kept, constrained_kept}, {"{}"}};
  return data;
}

TEST(LabReportClaims, ConstrainingSentencesFollowTheCounts) {
  std::string text = markdown_of(constraining_report(constraining(0, 3, 3, 1)));
  expect_says(text, "Without the schema no answer parses (0 of 4)");
  expect_says(text, "With it, every answer that ended by itself is a valid document (3 of 4 parse;");
  expect_says(text, "top-p then keeps a median of 1 candidates instead of 30");
  text = markdown_of(constraining_report(constraining(2, 2, 3, 40)));
  expect_says(text, "Without the schema 2 of 4 answers parse");
  expect_says(text, "**not every answer that ended by itself is valid** (2 of 4 parse, 3 ended by eos)");
  expect_says(text, "top-p kept a median of 40 candidates with the schema against 30 without");
}

// ---- the untrained warning at the top ----

RunDescription run_with(std::optional<double> base_perplexity, std::optional<double> sft_perplexity) {
  RunDescription run;
  run.base.vocab_size = 6400;
  run.sft.vocab_size = 6400;
  run.base_perplexity = base_perplexity;
  run.sft_perplexity = sft_perplexity;
  return run;
}

TEST(LabReportClaims, UntrainedWarningAtOrAboveTheVocabularySize) {
  EXPECT_EQ(untrained_warning(run_with(6400, 6399)).value_or(""),
            "> **Warning: the base model (perplexity 6400.0, vocabulary 6,400) looks untrained.** Its perplexity on "
            "the held-out documents (section 9) is at or above its vocabulary size: it predicts the next token no "
            "better than a uniform guess. The cache sections (1–4) still hold, since they count work and compare "
            "runs, but the sampling sections (5–8, 10) describe noise rather than a learned distribution: expect no "
            "peaked steps, answers that read as random tokens, and numbers unlike a trained model's.");
  EXPECT_FALSE(untrained_warning(run_with(6399.9, 12.5)).has_value());
  EXPECT_FALSE(untrained_warning(run_with(std::nullopt, std::nullopt)).has_value());  // no perplexity measured
  const std::vector<std::string> paragraphs = introduction(run_with(9000, 7000), Language::kChinese);
  EXPECT_TRUE(
      paragraphs.front().starts_with("> **警告：基础模型（困惑度 9000.0，词表大小 6,400）和SFT 模型（困惑度 "
                                     "7000.0，词表大小 6,400）看起来没有训练过。**"))
      << paragraphs.front();
}

// issue 43: the introduction's list of what the sections do ended at section 10 of eleven.
TEST(LabReportClaims, IntroductionNamesEverySection) {
  for (const Language language : {Language::kEnglish, Language::kChinese}) {
    std::string text;
    for (const std::string& paragraph : introduction(run_with(20, 20), language)) text += paragraph + "\n";
    for (int section = 9; section <= 11; ++section) {
      expect_says(text, language == Language::kEnglish
                            ? "ection " + std::to_string(section) + " "  // "Section 9 …", "section 10 …"
                            : "第 " + std::to_string(section) + " 节");
    }
    expect_says(text, language == Language::kEnglish ? "LoRA adapter on the SFT model" : "给 SFT 模型加上 LoRA 适配器");
  }
}

// ---- the same numbers in Chinese ----

TEST(LabReportClaims, ChineseReportHasTheSameNumbersAndChineseSentences) {
  const ReportSection english = timing_report(timing(81, 20));
  const ReportSection chinese = timing_report(timing(81, 20), Language::kChinese);
  const std::string text = markdown_of(chinese);
  EXPECT_EQ(chinese.title, "首个 token 时间与每个 token 的时间");
  expect_says(text, "| P = 183, N = 64 | 首个 token 时间 (ms) | 每个 token 的时间 (ms) | 总时间 (ms) |");
  expect_says(text, "| 无缓存 ÷ 有缓存 | 0.81× | 10.0× | 3.9× |");
  expect_says(markdown_of(english), "| without ÷ with | 0.81× | 10.0× | 3.9× |");
  expect_says(text, "无缓存时的首个 token 时间反而更短（无缓存 ÷ 有缓存 = 0.81，超出 ±10 %）");
  EXPECT_EQ(chinese.data, english.data);  // report.json does not depend on the language
  const ReportSection seeds_zh = seed_report(seeds(false, true, true, false, true), Language::kChinese);
  expect_says(markdown_of(seeds_zh), "不同的种子给出了不同的回答");
  EXPECT_EQ(Words{Language::kChinese}.label("greedy"), "贪心解码");
  EXPECT_EQ(Words{Language::kChinese}.label("T = 0.7"), "T = 0.7");
  EXPECT_EQ(parse_language("zh"), Language::kChinese);
  EXPECT_THROW(parse_language("fr"), Error);
}

}  // namespace
}  // namespace minigen::lab
