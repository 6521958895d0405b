#include "lab/section_reports.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <sstream>
#include <string>
#include <vector>

namespace minigen::lab {
namespace {

// The section's Markdown as report.md shows it, one entry per line.
std::vector<std::string> markdown_lines(const ReportSection& section) {
  LabReport report;
  report.sections.push_back(section);
  std::istringstream markdown(render_markdown(report));
  std::vector<std::string> lines;
  for (std::string line; std::getline(markdown, line);) lines.push_back(line);
  return lines;
}

bool has_line(const std::vector<std::string>& lines, const std::string& line) {
  return std::find(lines.begin(), lines.end(), line) != lines.end();
}

bool has_line_starting(const std::vector<std::string>& lines, const std::string& start) {
  return std::any_of(lines.begin(), lines.end(), [&](const std::string& line) { return line.starts_with(start); });
}

ForwardTokensPoint point(int p, int n, int64_t cached, int64_t uncached, bool uncached_run) {
  ForwardTokensPoint point;
  point.prompt_tokens = p;
  point.new_tokens = n;
  point.cached = {cached, p + n - 1, n, 100};
  point.uncached_run = uncached_run;
  const int64_t uncached_formula = int64_t{p} * n + int64_t{n} * (n - 1) / 2;
  point.uncached = {uncached_run ? uncached : 0, uncached_formula, uncached_run ? n : 0, uncached_run ? 1500.0 : 0};
  return point;
}

// A grid with a point that matches both formulas, one whose no-cache run was too big to make, and one whose
// cached count is off by one: the table marks each, and the verdict follows the mismatch.
TEST(LabSectionReports, ForwardTokensTableMarksEachPointAgainstTheFormulas) {
  ForwardTokensData data;
  data.max_uncached_grid_tokens = 50000;
  data.grid = {point(16, 16, 31, 376, true), point(183, 256, 438, 0, false), point(4, 3, 7, 15, true)};
  data.sweep_at_183 = {point(183, 64, 246, 13728, true)};
  data.formula_new_tokens = {1, 2};
  data.cached_formula_curve = {183, 184};
  data.uncached_formula_curve = {183, 367};
  data.headline = point(183, 64, 246, 13728, true);
  const ReportSection section = forward_tokens_report(data);
  const std::vector<std::string> lines = markdown_lines(section);
  EXPECT_TRUE(has_line(lines, "| P | N | fed with cache (P+N−1) | fed without cache (P·N+N(N−1)/2) | ratio |"));
  EXPECT_TRUE(has_line(lines, "| 16 | 16 | 31 ✓ | 376 ✓ | 12.1× |"));
  EXPECT_TRUE(has_line(lines, "| 183 | 256 | 438 ✓ | not run (formula: 79,488) | 181.5× |"));
  EXPECT_TRUE(has_line(lines, "| 4 | 3 | 7 ≠ 6 | 15 ✓ | 2.5× |"));
  EXPECT_TRUE(has_line(lines,
                       "The ratio column is the saving: it grows with both P and N, because the no-cache run pays for "
                       "the whole prefix again at every step. Points marked \"not run\" would feed more than 50,000 "
                       "tokens without the cache, too slow for this run; the cached run is still measured there."));
  EXPECT_TRUE(has_line(lines,
                       "The module's example, P = 183 and N = 64: **246** tokens with the cache against **13,728** "
                       "without, 55.8× as many (100 ms against 1500 ms of wall time in this run)."));
  EXPECT_TRUE(has_line(lines, "![Tokens fed to forward, P = 183](forward_tokens.svg)"));
  EXPECT_FALSE(section.data["all_counts_match_formulas"].get<bool>());
  EXPECT_TRUE(section.data["grid"][1]["uncached"].is_null());
  EXPECT_EQ(section.data["grid"][1]["uncached_formula"].get<int64_t>(), 79488);
  EXPECT_FALSE(section.data.contains("routing"));  // a dense model
  ASSERT_EQ(section.summary.size(), 1u);
  EXPECT_EQ(section.summary[0],
            "forward tokens, P = 183, N = 64: 246 with the cache, 13,728 without (55.8×); every grid point does NOT "
            "equal the formulas");
}

TEST(LabSectionReports, EosPaddingRowsPerSettingAndTheWastedShare) {
  EosPaddingData data;
  data.rows_per_batch = 4;
  data.settings = {{"greedy", {4, 10, 30, 10, 4}, {{0, 10, {0, 2, 3, 5}}}},
                   {"T = 1.0", {8, 30, 100, 25, 3}, {{0, 12, {0, 0, 4, 8}}, {1, 18, {3, 3, 3, 4}}}}};
  data.all = {12, 40, 130, 35, 7};
  ReportSection section = eos_padding_report(data);
  std::vector<std::string> lines = markdown_lines(section);
  EXPECT_TRUE(has_line_starting(lines, "Section 5 ran each temperature as one batch of 4 rows."));
  EXPECT_TRUE(has_line(lines, "| greedy | 1 | 4 of 4 | 10.0 | 30 | 10 | 25.0 % |"));
  EXPECT_TRUE(has_line(lines, "| T = 1.0 | 2 | 3 of 8 | 15.0 | 100 | 25 | 20.0 % |"));
  EXPECT_FALSE(has_line_starting(lines, "![One batch at T = 1.0"));  // no trace measured, no plot
  EXPECT_EQ(section.data["settings"][1]["batches"][1]["padding_steps_per_row"], (nlohmann::json{3, 3, 3, 4}));
  EXPECT_EQ(section.summary[0], "eos padding: 35 of 165 row-steps were padding for finished rows (21.2 % wasted)");

  data.trace = PaddingTrace{4, {4, 3, 1}, {0, 1, 3}};
  section = eos_padding_report(data);
  lines = markdown_lines(section);
  EXPECT_TRUE(has_line(lines, "![One batch at T = 1.0: rows generating and rows padded, per step](eos_padding.svg)"));
  const auto plot = std::find_if(section.blocks.begin(), section.blocks.end(),
                                 [](const ReportBlock& block) { return std::holds_alternative<ReportPlot>(block); });
  ASSERT_NE(plot, section.blocks.end());
  const PlotSpec& spec = std::get<ReportPlot>(*plot).spec;
  EXPECT_EQ(spec.series[1].y, (std::vector<double>{0, 1, 3}));
  EXPECT_EQ(spec.y_range, std::make_pair(0.0, 6.0));
}

// One pair that differs: its row says NO and the paragraph after the table says the claim failed, not that it held.
TEST(LabSectionReports, CacheEquivalenceVerdictFollowsTheComparedPairs) {
  CacheEquivalenceData data;
  data.new_tokens = 8;
  data.sampling_seed = 1234;
  data.vocab_size = 6400;
  RowComparison same;
  same.token_ids_identical = true;
  same.logits_bit_identical = true;
  same.logits_compared = 51200;
  RowComparison parted;
  parted.first_differing_step = 5;
  parted.max_abs_logit_difference = 0.25;
  parted.logits_compared = 1000;
  data.runs = {{"\"In the beginning\"", 4, false, same, {1, 2}, {1, 2}, {1, 9, 8, 7}},
               {"\"In the beginning\"", 4, true, parted, {1, 2}, {1, 3}, {1, 9, 8, 7}}};
  data.genesis_continuation_text = "first line\nsecond line";
  data.genesis_prompt_tokens = 183;
  data.genesis_text_prompt_tokens = 201;
  const ReportSection section = cache_equivalence_report(data);
  const std::vector<std::string> lines = markdown_lines(section);
  EXPECT_TRUE(has_line(lines, "| \"In the beginning\" | 4 | greedy | yes | 0 | yes | 51,200 |"));
  EXPECT_TRUE(
      has_line(lines, "| \"In the beginning\" | 4 | sampled, seed 1234 | **NO** | 2.50e-01 | **NO** | 1,000 |"));
  EXPECT_TRUE(has_line_starting(lines, "**Not every pair agrees** — see the table;"));
  EXPECT_FALSE(has_line_starting(lines, "Every pair agrees"));
  EXPECT_TRUE(has_line(lines, "> first line"));
  EXPECT_TRUE(has_line(lines, "> second line"));
  EXPECT_EQ(section.data["runs"][1]["seed"].get<uint64_t>(), 1234u);
  EXPECT_TRUE(section.data["runs"][0]["seed"].is_null());
  EXPECT_EQ(section.data["max_abs_logit_difference"].get<double>(), 0.25);
  EXPECT_EQ(section.summary[0],
            "cache on/off: token ids identical in NOT every one of 2 runs, max |Δ logit| = 2.50e-01");
}

TEST(LabSectionReports, TimingTableShowsMediansAndTheirRatios) {
  TimingData data;
  data.repeats = 3;
  data.threads = 2;
  data.headline = {183, 64, {{20, 10, 30}, {1.0, 3.0, 2.0}, {150, 130, 140}}, {{22, 24, 26}, {40, 30, 35}, {2000}}};
  data.against_prompt_new_tokens = 8;
  data.against_prompt_length = {{16, 8, {{2}, {1}, {9}}, {{3}, {4}, {30}}}};
  const ReportSection section = timing_report(data);
  const std::vector<std::string> lines = markdown_lines(section);
  EXPECT_TRUE(has_line(lines, "| with cache | 20.0 | 2.00 | 140 |"));
  EXPECT_TRUE(has_line(lines, "| without cache | 24.0 | 35.00 | 2000 |"));
  EXPECT_TRUE(has_line(lines, "| without ÷ with | 1.20× | 17.5× | 14.3× |"));
  EXPECT_TRUE(has_line(lines, "The same measurement over prompt lengths P (N = 8):"));
  EXPECT_TRUE(has_line(lines, "| 16 | 2.0 | 3.0 | 1.00 | 4.00 |"));
  EXPECT_TRUE(has_line_starting(lines, "TTFT was 1.20× as long without the cache, more than the ±10 % "));
  EXPECT_EQ(section.data["headline"]["cached"]["ttft_ms_median"].get<double>(), 20.0);
}

}  // namespace
}  // namespace minigen::lab
