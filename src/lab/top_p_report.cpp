// Section 6, written: top-p keeps a varying number of candidates. Sorted by probability, tokens are kept up to and
// including the first at which the cumulative probability exceeds p (MiniMind's shifted mask; the top token always
// stays). A peaked step keeps a few tokens, a flat step many — unlike top-k's fixed count. Whether this run's steps
// show that is read from the medians (report_thresholds.h); a model that is never sure has no peaked step to show.
#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "core/format.h"
#include "lab/report_thresholds.h"
#include "lab/section_reports.h"

namespace minigen::lab {
namespace {

double median_of(const std::vector<int>& values) { return median(std::vector<double>(values.begin(), values.end())); }

// The median kept count over the steps whose top probability satisfies `select`, and how many steps those were
// (0 steps: the median means nothing).
struct StepsMedian {
  double median = 0;
  int steps = 0;
};

template <typename Select>
StepsMedian median_where(const CandidateCounts& counts, Select select) {
  std::vector<double> chosen;
  for (std::size_t i = 0; i < counts.kept.size(); ++i) {
    if (select(counts.top_probability[i])) chosen.push_back(counts.kept[i]);
  }
  return {chosen.empty() ? 0.0 : median(chosen), static_cast<int>(chosen.size())};
}

std::string median_cell(const StepsMedian& steps, const Words& say) {
  if (steps.steps == 0) return say("no such step", "没有这样的步");
  return fixed(steps.median, 0) +
         say(" (" + std::to_string(steps.steps) + " steps)", "（" + std::to_string(steps.steps) + " 步）");
}

struct FilterMedians {
  std::string name;
  StepsMedian peaked;
  StepsMedian flat;
};

// "3–7" or "5" for the medians of the filters that had such steps.
std::string median_range(const std::vector<double>& medians) {
  const auto [low, high] = std::minmax_element(medians.begin(), medians.end());
  return *low == *high ? fixed(*low, 0) : fixed(*low, 0) + "–" + fixed(*high, 0);
}

// "p 0.50, 0.80 and 0.90" from the filters' names ("top-p 0.50", ...), in the report's language.
std::string p_list(const std::vector<const FilterMedians*>& filters, const Words& say) {
  std::vector<std::string> values;
  for (const FilterMedians* filter : filters) {
    const std::string_view name = filter->name;
    values.emplace_back(name.starts_with("top-p ") ? name.substr(6) : name);
  }
  std::string text = "p ";
  for (std::size_t i = 0; i < values.size(); ++i) {
    if (i > 0) text += i + 1 == values.size() ? say(" and ", " 和 ") : say(", ", "、");
    text += values[i];
  }
  return text;
}

std::string medians_list(const std::vector<const FilterMedians*>& filters, const Words& say) {
  std::string text;
  for (const FilterMedians* filter : filters) {
    if (!text.empty()) text += say(", ", "、");
    text += fixed(filter->peaked.median, 0);
  }
  return text;
}

// What the peaked steps' medians say, p by p: which p kept a handful (at most kHandfulCandidates) and which did not.
// When the ones over a handful are exactly the largest p, that is said too, since it is the course's point seen
// from the other side: a larger p reaches into the tail even when the model is sure.
std::string peaked_sentence(const std::vector<FilterMedians>& top_p, const std::string& peaked_at, const Words& say) {
  std::vector<const FilterMedians*> handful;
  std::vector<const FilterMedians*> more;
  for (const FilterMedians& filter : top_p) {
    if (filter.peaked.steps == 0) continue;
    (filter.peaked.median <= kHandfulCandidates ? handful : more).push_back(&filter);
  }
  const std::string on_peaked = say("On peaked steps (top token ≥ " + peaked_at + ")",
                                    "在尖锐的步上（最可能 token 的概率 ≥ " + peaked_at + "），");
  const std::string five = fixed(kHandfulCandidates, 0);
  if (more.empty()) {
    return on_peaked +
           say(" every p kept a handful of tokens (medians " + medians_list(handful, say) + ", at most " + five + "). ",
               "每个 p 都只保留少数几个 token（中位数 " + medians_list(handful, say) + "，不超过 " + five + "）。");
  }
  if (handful.empty()) {
    return on_peaked +
           say(" no p kept only a handful (" + five + " or fewer): the medians were " + medians_list(more, say) +
                   ", because even the surest steps left much probability to "
                   "the tail. ",
               "没有一个 p 只保留少数几个（不超过 " + five + " 个）：中位数为 " + medians_list(more, say) +
                   "，因为即使最有把握的步也给长尾留了不少概率。");
  }
  // top_p is in increasing p, so "the largest p are the ones over a handful" is: every handful one comes first.
  const bool largest_p_reach_further = handful.back() < more.front();
  std::string text =
      on_peaked +
      say(" " + p_list(handful, say) + " kept a handful (medians " + medians_list(handful, say) + ", at most " + five +
              "); " + p_list(more, say) + " kept more (" + medians_list(more, say) + ")",
          p_list(handful, say) + " 只保留少数几个（中位数 " + medians_list(handful, say) + "，不超过 " + five + "）；" +
              p_list(more, say) + " 保留得更多（" + medians_list(more, say) + "）");
  text += largest_p_reach_further ? say(": a larger p reaches into the tail even when the model is sure. ",
                                        "：p 越大，即使模型有把握也会伸进长尾。")
                                  : say(". ", "。");
  return text;
}

// The paragraph after the table: what the peaked and flat columns of the top-p rows say, and top-k beside them.
std::string reading_paragraph(const std::vector<FilterMedians>& top_p, const CandidateCounts& top_k, int vocab_size,
                              const TopPData& data, const Words& say) {
  const std::string peaked_at = fixed(data.peaked_top_probability, 1);
  const std::string flat_at = fixed(data.flat_top_probability, 1);
  std::vector<double> peaked;
  std::vector<double> flat;
  bool spread_everywhere = true;  // every p with both kinds of step kept kSpreadFactor× more on flat ones
  bool any_pair = false;
  for (const FilterMedians& filter : top_p) {
    if (filter.peaked.steps > 0) peaked.push_back(filter.peaked.median);
    if (filter.flat.steps > 0) flat.push_back(filter.flat.median);
    if (filter.peaked.steps > 0 && filter.flat.steps > 0) {
      any_pair = true;
      spread_everywhere = spread_everywhere && filter.flat.median >= kSpreadFactor * filter.peaked.median;
    }
  }
  std::string text;
  if (peaked.empty()) {
    text += say("No step of this run was peaked (top token ≥ " + peaked_at +
                    "), so there is no data here for what top-p does when the model is sure: the model spread its "
                    "probability at every step. ",
                "本次运行没有一步是“尖锐”的（最可能 token 的概率 ≥ " + peaked_at +
                    "），所以这里没有数据说明模型有把握时 top-p 的表现：模型在每一步都把概率分散开了。");
  } else {
    text += peaked_sentence(top_p, peaked_at, say);
  }
  if (flat.empty()) {
    text += say("No step was flat (top token < " + flat_at + "), so there is no data here for a hesitating model. ",
                "没有一步是“平坦”的（最可能 token 的概率 < " + flat_at + "），所以这里没有模型犹豫时的数据。");
  } else {
    text += say("On flat steps (top token < " + flat_at + ") the medians were " + median_range(flat) + " of " +
                    with_thousands(vocab_size) + " tokens",
                "在平坦的步上（最可能 token 的概率 < " + flat_at + "），中位数为 " + median_range(flat) + "（词表共 " +
                    with_thousands(vocab_size) + " 个 token）");
    if (any_pair) {
      text += spread_everywhere ? say(", at least " + fixed(kSpreadFactor, 0) + "× the peaked steps' for every p",
                                      "，对每个 p 都至少是尖锐步的 " + fixed(kSpreadFactor, 0) + " 倍")
                                : say(", not " + fixed(kSpreadFactor, 0) + "× the peaked steps' for every p",
                                      "，并非对每个 p 都达到尖锐步的 " + fixed(kSpreadFactor, 0) + " 倍");
    }
    const bool grows_with_p =
        flat.size() == top_p.size() && std::is_sorted(flat.begin(), flat.end()) && flat.back() > flat.front();
    text += grows_with_p
                ? say(", and the larger p, the further into the tail it reached. ", "；p 越大，它伸进长尾越远。")
                : say("; they did not grow with p at every step of the list. ", "；它们并没有随 p 逐个增大。");
  }
  const auto [fewest, most] = std::minmax_element(top_k.kept.begin(), top_k.kept.end());
  const std::string k = std::to_string(data.top_k);
  text += *fewest == *most
              ? say("top-k kept " + std::to_string(*fewest) + " at every step, whatever the shape",
                    "top-k 在每一步都保留 " + std::to_string(*fewest) + " 个，不论分布形状如何")
              : say("top-k " + k + " kept between " + std::to_string(*fewest) + " and " + std::to_string(*most),
                    "top-k " + k + " 保留了 " + std::to_string(*fewest) + " 到 " + std::to_string(*most) + " 个");
  if (!peaked.empty() && !flat.empty() && spread_everywhere && any_pair) {
    text +=
        say(": too many when the model is sure, too few when it is not. That adaptivity is why top-p is the usual "
            "default (MiniMind: top-p 0.85 with top-k 50 as a cap).",
            "：模型有把握时太多，犹豫时又太少。正是这种自适应让 top-p 成为常用的默认设置（MiniMind：top-p 0.85，"
            "并以 top-k 50 作为上限）。");
  } else {
    text +=
        say(". This run does not show top-p adapting to the shape of the distribution on both sides; the table "
            "says which side had no data or no difference.",
            "。本次运行没有在两边都显示出 top-p 随分布形状自适应；上表说明了是哪一边没有数据或没有差别。");
  }
  return text;
}

// Distinct colours, point shapes and dash patterns, so that the lines can be told apart also in black and white;
// top-k is drawn black and dashed: the fixed count the top-p lines are read against.
std::string histogram_style(std::size_t index, bool top_k) {
  static const char* const kStyles[] = {
      "linespoints pointtype 7 pointsize 1.2 linecolor rgb '#0072b2'",
      "linespoints pointtype 5 pointsize 1.2 dashtype 3 linecolor rgb '#009e73'",
      "linespoints pointtype 9 pointsize 1.4 dashtype 4 linecolor rgb '#e69f00'",
      "linespoints pointtype 11 pointsize 1.4 dashtype 5 linecolor rgb '#cc79a7'",
  };
  if (top_k) return "linespoints pointtype 13 pointsize 1.4 dashtype 2 linecolor rgb 'black'";
  return kStyles[index % std::size(kStyles)];
}

// How many bins hold a step: top-k's count is one bin, top-p's spread over several.
int filled_bins(const std::vector<CountBin>& bins) {
  return static_cast<int>(std::count_if(bins.begin(), bins.end(), [](const CountBin& bin) { return bin.count > 0; }));
}

// Kept count against how peaked the step was, for one p: the mechanism behind the spread.
void add_peakedness_plot(ReportSection& section, const CandidateCounts& p90, const FilterMedians& medians,
                         const Words& say) {
  PlotSeries scatter{
      say("top-p 0.90, one point per step", "top-p 0.90，每点一步"), {}, {}, "points pointtype 7 pointsize 0.6"};
  for (std::size_t i = 0; i < p90.kept.size(); ++i) {
    scatter.x.push_back(p90.top_probability[i]);
    scatter.y.push_back(p90.kept[i]);
  }
  std::string caption;
  if (medians.peaked.steps > 0 && medians.flat.steps > 0 && medians.flat.median > medians.peaked.median) {
    caption = say("The surer the model (right), the fewer tokens top-p keeps: a median of " +
                      fixed(medians.peaked.median, 0) + " on peaked steps against " + fixed(medians.flat.median, 0) +
                      " on flat ones (left).",
                  "模型越有把握（右侧），top-p 保留的 token 越少：尖锐步的中位数为 " + fixed(medians.peaked.median, 0) +
                      "，平坦步（左侧）为 " + fixed(medians.flat.median, 0) + "。");
  } else if (medians.peaked.steps == 0) {
    caption =
        say("No point lies right of the peaked threshold: the model was never sure in this run, so the plot "
            "shows only the hesitating side.",
            "没有点落在尖锐阈值的右侧：模型在本次运行中从未有把握，所以图中只有犹豫的一侧。");
  } else if (medians.flat.steps == 0) {
    caption =
        say("No point lies left of the flat threshold: the model never hesitated in this run, so the plot "
            "shows only the sure side.",
            "没有点落在平坦阈值的左侧：模型在本次运行中从未犹豫，所以图中只有有把握的一侧。");
  } else {
    caption = say("Here the peaked steps did not keep fewer tokens than the flat ones (medians " +
                      fixed(medians.peaked.median, 0) + " and " + fixed(medians.flat.median, 0) + ").",
                  "本次尖锐步保留的 token 并不比平坦步少（中位数分别为 " + fixed(medians.peaked.median, 0) + " 和 " +
                      fixed(medians.flat.median, 0) + "）。");
  }
  section.plot(PlotSpec{"top_p_peakedness.svg",
                        say("top-p 0.9: candidates kept against the top token's probability",
                            "top-p 0.9：保留的候选数与最可能 token 概率的关系"),
                        say("probability of the likeliest token", "最可能 token 的概率"),
                        say("candidates kept (tokens, log scale)", "保留的候选数（token，对数坐标）"),
                        false,
                        true,
                        {},
                        {scatter},
                        std::nullopt,
                        "top right"},
               caption);
}

}  // namespace

ReportSection top_p_report(const TopPData& data, Language language) {
  const Words say{language};
  ReportSection section;
  section.key = "top_p";
  section.title = say("How many candidates top-p keeps", "top-p 保留多少个候选");
  const std::string prompts = std::to_string(data.prompt_count);
  const std::string rows = std::to_string(data.rows);
  const std::string tokens = std::to_string(data.new_tokens);
  section.paragraph(say(
      "top-p (nucleus sampling) sorts the tokens by probability and keeps the smallest head of the list whose "
      "probabilities add up past p; everything else is set to −∞ before the draw. MiniMind shifts its mask by one "
      "position, so it keeps the token at which the running sum first exceeds p, and the top token always survives. "
      "The number kept is therefore not fixed: it depends on how the probability is spread at that step. top-k keeps "
      "exactly k whatever the shape. The SFT model generates real answers (" +
          prompts + " prompts × " + rows + " samples, up to " + tokens +
          " tokens, temperature 1, top-k off) and minigen records the candidates left at every step.",
      "top-p（核采样）把 token 按概率排序，保留概率累加超过 p 的最短前缀，其余的在抽样前都设为 −∞。MiniMind 的掩码"
      "错开一位，因此会保留使累计概率首次超过 p 的那个 token，最可能的 token "
      "总会保留。所以保留的个数不是固定的：它取决于"
      "这一步概率分布的形状。top-k 则不论形状都恰好保留 k 个。SFT 模型生成真实的回答（" +
          prompts + " 个提示 × " + rows + " 个样本，最多 " + tokens +
          " 个 token，温度 1，关闭 top-k），minigen 记录每一步留下的候选数。"));

  const std::string peaked_at = fixed(data.peaked_top_probability, 1);
  const std::string flat_at = fixed(data.flat_top_probability, 1);
  ReportTable table{
      {say("filter", "过滤器"), say("steps", "步数"), say("min", "最少"), say("median", "中位数"), say("max", "最多"),
       say("median on peaked steps (top token ≥ " + peaked_at + ")",
           "尖锐步的中位数（最可能 token ≥ " + peaked_at + "）"),
       say("median on flat steps (top token < " + flat_at + ")", "平坦步的中位数（最可能 token < " + flat_at + "）")},
      {}};
  nlohmann::json filters = nlohmann::json::array();
  std::vector<PlotSeries> histogram_series;
  std::vector<std::pair<double, std::string>> bin_ticks;
  std::vector<FilterMedians> top_p_medians;
  std::vector<int> top_p_filled_bins;
  int top_k_filled_bins = 0;
  std::string summary = "top-p kept candidates (median, min–max):";
  for (std::size_t f = 0; f < data.filters.size(); ++f) {
    const CandidateCounts& counts = data.filters[f];
    const bool top_k = f + 1 == data.filters.size();
    const auto [min_kept, max_kept] = std::minmax_element(counts.kept.begin(), counts.kept.end());
    const StepsMedian peaked = median_where(counts, [&](double top) { return top >= data.peaked_top_probability; });
    const StepsMedian flat = median_where(counts, [&](double top) { return top < data.flat_top_probability; });
    if (!top_k) top_p_medians.push_back({counts.name, peaked, flat});
    table.rows.push_back({counts.name, std::to_string(counts.kept.size()), std::to_string(*min_kept),
                          fixed(median_of(counts.kept), 0), std::to_string(*max_kept), median_cell(peaked, say),
                          median_cell(flat, say)});
    const std::vector<CountBin> bins = power_of_two_histogram(counts.kept, data.vocab_size);
    (top_k ? top_k_filled_bins : top_p_filled_bins.emplace_back()) = filled_bins(bins);
    PlotSeries series{counts.name, {}, {}, histogram_style(f, top_k)};
    nlohmann::json histogram = nlohmann::json::array();
    for (std::size_t b = 0; b < bins.size(); ++b) {
      series.x.push_back(static_cast<double>(b));
      series.y.push_back(100.0 * bins[b].count / static_cast<double>(counts.kept.size()));
      histogram.push_back({{"low", bins[b].low}, {"high", bins[b].high}, {"steps", bins[b].count}});
      if (bin_ticks.size() < bins.size()) bin_ticks.emplace_back(static_cast<double>(b), bins[b].label);
    }
    histogram_series.push_back(std::move(series));
    filters.push_back({{"filter", counts.name},
                       {"steps", counts.kept.size()},
                       {"min", *min_kept},
                       {"median", median_of(counts.kept)},
                       {"max", *max_kept},
                       {"median_on_peaked_steps", peaked.steps > 0 ? nlohmann::json(peaked.median) : nlohmann::json()},
                       {"peaked_steps", peaked.steps},
                       {"median_on_flat_steps", flat.steps > 0 ? nlohmann::json(flat.median) : nlohmann::json()},
                       {"flat_steps", flat.steps},
                       {"histogram", histogram},
                       {"kept", counts.kept}});
    summary += " " + counts.name + " " + fixed(median_of(counts.kept), 0) + " (" + std::to_string(*min_kept) + "–" +
               std::to_string(*max_kept) + "),";
  }
  section.table(std::move(table));
  section.paragraph(reading_paragraph(top_p_medians, data.filters.back(), data.vocab_size, data, say));

  const auto [fewest_bins, most_bins] = std::minmax_element(top_p_filled_bins.begin(), top_p_filled_bins.end());
  const std::string bins_range = *fewest_bins == *most_bins
                                     ? std::to_string(*fewest_bins)
                                     : std::to_string(*fewest_bins) + "–" + std::to_string(*most_bins);
  const std::string top_k_bins = std::to_string(top_k_filled_bins);
  section.plot(
      PlotSpec{"top_p_candidates.svg", say("Candidates kept per step", "每一步保留的候选数"),
               say("candidates kept (tokens, binned)", "保留的候选数（token，分组）"),
               say("share of steps (%)", "步数占比 (%)"), false, false, bin_ticks, histogram_series, std::nullopt,
               "top right"},
      say("Histogram of the number of candidates kept at each step: the top-p filters' steps fall into " + bins_range +
              " bins, top-k's into " + top_k_bins + (top_k_filled_bins == 1 ? " (a single spike)." : "."),
          "每一步保留候选数的直方图：各 top-p 过滤器的步落在 " + bins_range + " 个分组中，top-k 的落在 " + top_k_bins +
              " 个分组中" + (top_k_filled_bins == 1 ? "（单一尖峰）。" : "。")));
  add_peakedness_plot(section, data.filters[2], top_p_medians[2], say);

  section.data["filters"] = filters;
  section.data["peaked_top_probability"] = data.peaked_top_probability;
  section.data["flat_top_probability"] = data.flat_top_probability;
  summary.pop_back();
  section.summary.push_back(summary);
  return section;
}

}  // namespace minigen::lab
