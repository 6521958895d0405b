// Section 6, written: top-p keeps a varying number of candidates. Sorted by probability, tokens are kept up to and
// including the first at which the cumulative probability exceeds p (MiniMind's shifted mask; the top token always
// stays). A peaked step keeps a few tokens, a flat step many — unlike top-k's fixed count.
#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "core/format.h"
#include "lab/section_reports.h"

namespace minigen::lab {
namespace {

double median_of(const std::vector<int>& values) { return median(std::vector<double>(values.begin(), values.end())); }

// Median kept count over the steps whose top probability satisfies `select`; −1 when there are none.
template <typename Select>
std::pair<double, int> median_where(const CandidateCounts& counts, Select select) {
  std::vector<double> chosen;
  for (std::size_t i = 0; i < counts.kept.size(); ++i) {
    if (select(counts.top_probability[i])) chosen.push_back(counts.kept[i]);
  }
  return {chosen.empty() ? -1.0 : median(chosen), static_cast<int>(chosen.size())};
}

std::string median_cell(const std::pair<double, int>& median_and_steps) {
  if (median_and_steps.second == 0) return "no such step";
  return fixed(median_and_steps.first, 0) + " (" + std::to_string(median_and_steps.second) + " steps)";
}

// Kept count against how peaked the step was, for one p: the mechanism behind the spread.
void add_peakedness_plot(ReportSection& section, const CandidateCounts& p90) {
  PlotSeries scatter{"top-p 0.90, one point per step", {}, {}, "points pointtype 7 pointsize 0.6"};
  for (std::size_t i = 0; i < p90.kept.size(); ++i) {
    scatter.x.push_back(p90.top_probability[i]);
    scatter.y.push_back(p90.kept[i]);
  }
  section.plot(PlotSpec{"top_p_peakedness.svg",
                        "top-p 0.9: candidates kept against the top token's probability",
                        "probability of the likeliest token",
                        "candidates kept (tokens, log scale)",
                        false,
                        true,
                        {},
                        {scatter}},
               "The surer the model (right), the fewer tokens top-p keeps; on flat steps (left) it keeps many.");
}

}  // namespace

ReportSection top_p_report(const TopPData& data) {
  ReportSection section;
  section.key = "top_p";
  section.title = "How many candidates top-p keeps";
  section.paragraph(
      "top-p (nucleus sampling) sorts the tokens by probability and keeps the smallest head of the list whose "
      "probabilities add up past p; everything else is set to −∞ before the draw. MiniMind shifts its mask by one "
      "position, so it keeps the token at which the running sum first exceeds p, and the top token always survives. "
      "The number kept is therefore not fixed: when the model is sure (one token has most of the probability) top-p "
      "keeps one or two, and when it hesitates among many tokens it keeps dozens or hundreds. top-k keeps exactly k "
      "whatever the shape. The SFT model generates real answers (" +
      std::to_string(data.prompt_count) + " prompts × " + std::to_string(data.rows) + " samples, up to " +
      std::to_string(data.new_tokens) +
      " tokens, temperature 1, top-k off) and minigen records the candidates left at every step.");

  ReportTable table{{"filter", "steps", "min", "median", "max", "median on peaked steps (top token ≥ 0.5)",
                     "median on flat steps (top token < 0.2)"},
                    {}};
  nlohmann::json filters = nlohmann::json::array();
  std::vector<PlotSeries> histogram_series;
  std::vector<std::pair<double, std::string>> bin_ticks;
  std::string summary = "top-p kept candidates (median, min–max):";
  for (const CandidateCounts& counts : data.filters) {
    const auto [min_kept, max_kept] = std::minmax_element(counts.kept.begin(), counts.kept.end());
    const auto peaked = median_where(counts, [&](double top) { return top >= data.peaked_top_probability; });
    const auto flat = median_where(counts, [&](double top) { return top < data.flat_top_probability; });
    table.rows.push_back({counts.name, std::to_string(counts.kept.size()), std::to_string(*min_kept),
                          fixed(median_of(counts.kept), 0), std::to_string(*max_kept), median_cell(peaked),
                          median_cell(flat)});
    const std::vector<CountBin> bins = power_of_two_histogram(counts.kept, data.vocab_size);
    const bool top_k =
        &counts == &data.filters.back();  // drawn apart: the fixed count the top-p lines are read against
    PlotSeries series{counts.name, {}, {}, top_k ? "linespoints dashtype 2 linecolor rgb 'black'" : "linespoints"};
    nlohmann::json histogram = nlohmann::json::array();
    for (std::size_t b = 0; b < bins.size(); ++b) {
      series.x.push_back(static_cast<double>(b));
      series.y.push_back(100.0 * bins[b].count / static_cast<double>(counts.kept.size()));
      histogram.push_back({{"low", bins[b].low}, {"high", bins[b].high}, {"steps", bins[b].count}});
      if (bin_ticks.size() < bins.size()) bin_ticks.emplace_back(static_cast<double>(b), bins[b].label);
    }
    histogram_series.push_back(std::move(series));
    filters.push_back(
        {{"filter", counts.name},
         {"steps", counts.kept.size()},
         {"min", *min_kept},
         {"median", median_of(counts.kept)},
         {"max", *max_kept},
         {"median_on_peaked_steps", peaked.second > 0 ? nlohmann::json(peaked.first) : nlohmann::json(nullptr)},
         {"peaked_steps", peaked.second},
         {"median_on_flat_steps", flat.second > 0 ? nlohmann::json(flat.first) : nlohmann::json(nullptr)},
         {"flat_steps", flat.second},
         {"histogram", histogram},
         {"kept", counts.kept}});
    summary += " " + counts.name + " " + fixed(median_of(counts.kept), 0) + " (" + std::to_string(*min_kept) + "–" +
               std::to_string(*max_kept) + "),";
  }
  section.table(std::move(table));
  section.paragraph(
      "Read the last two columns: on peaked steps every p keeps a handful of tokens, on flat steps the count "
      "explodes — and the larger p, the further into the tail it reaches. top-k keeps " +
      std::to_string(data.top_k) +
      " at every step: too many when the model is sure (most of them were never plausible), too few when "
      "it is not. That adaptivity is why top-p is the usual default (MiniMind: top-p 0.85 with top-k 50 as a cap).");
  section.plot(PlotSpec{"top_p_candidates.svg", "Candidates kept per step", "candidates kept (tokens, binned)",
                        "share of steps (%)", false, false, bin_ticks, histogram_series},
               "Histogram of the number of candidates kept at each step: top-p spreads over a wide range, top-k is a "
               "single spike.");
  add_peakedness_plot(section, data.filters[2]);

  section.data["filters"] = filters;
  section.data["peaked_top_probability"] = data.peaked_top_probability;
  section.data["flat_top_probability"] = data.flat_top_probability;
  summary.pop_back();
  section.summary.push_back(summary);
  return section;
}

}  // namespace minigen::lab
