// Section 2, written: the two formulas, the grid's table of measured counts against them (✓ where equal), the
// counts and wall times of the N sweep as plots, the module's 183 + 64 example, and for a mixture-of-experts model
// the router's assignments.
#include <algorithm>
#include <string>
#include <vector>

#include "core/format.h"
#include "lab/lab_scale.h"
#include "lab/report_thresholds.h"
#include "lab/section_reports.h"

namespace minigen::lab {
namespace {

// One colour per mode in both plots, so that a reader matches them at a glance.
const std::string kCachedColour = "linecolor rgb '#0072b2'";
const std::string kUncachedColour = "linecolor rgb '#d55e00'";

bool matches(const ForwardTokensPoint& point) {
  return point.cached.forward_tokens == point.cached.formula &&
         (!point.uncached_run || point.uncached.forward_tokens == point.uncached.formula);
}

double formula_ratio(const ForwardTokensPoint& point) {
  return static_cast<double>(point.uncached.formula) / static_cast<double>(point.cached.formula);
}

nlohmann::json mode_json(const ForwardTokensMode& mode) {
  return {{"forward_tokens", mode.forward_tokens},
          {"formula", mode.formula},
          {"forward_calls", mode.forward_calls},
          {"total_ms", mode.total_ms}};
}

nlohmann::json point_json(const ForwardTokensPoint& point) {
  return {{"prompt_tokens", point.prompt_tokens},
          {"new_tokens", point.new_tokens},
          {"cached", mode_json(point.cached)},
          {"uncached", point.uncached_run ? mode_json(point.uncached) : nlohmann::json(nullptr)},
          {"uncached_formula", point.uncached.formula},
          {"ratio", formula_ratio(point)}};
}

std::string measured_cell(const ForwardTokensMode& mode) {
  return with_thousands(mode.forward_tokens) +
         (mode.forward_tokens == mode.formula ? " ✓" : " ≠ " + with_thousands(mode.formula));
}

void add_grid(ReportSection& section, const ForwardTokensData& data, const Words& say) {
  ReportTable table{
      {"P", "N", say("fed with cache (P+N−1)", "有缓存时输入的 token (P+N−1)"),
       say("fed without cache (P·N+N(N−1)/2)", "无缓存时输入的 token (P·N+N(N−1)/2)"), say("ratio", "比值")},
      {}};
  bool skipped_uncached_points = false;
  for (const ForwardTokensPoint& point : data.grid) {
    skipped_uncached_points = skipped_uncached_points || !point.uncached_run;
    const std::string uncached_cell = point.uncached_run ? measured_cell(point.uncached)
                                                         : say("not run (formula: ", "未运行（公式：") +
                                                               with_thousands(point.uncached.formula) + say(")", "）");
    table.rows.push_back({std::to_string(point.prompt_tokens), std::to_string(point.new_tokens),
                          measured_cell(point.cached), uncached_cell, fixed(formula_ratio(point), 1) + "×"});
  }
  section.table(std::move(table));
  std::string note =
      say("The ratio column is the saving: it grows with both P and N, because the no-cache run pays for "
          "the whole prefix again at every step.",
          "比值一列就是节省的倍数：它随 P 和 N 增长，因为无缓存的运行在每一步都要为整个前缀重新付出计算。");
  if (skipped_uncached_points) {
    const std::string limit = with_thousands(data.max_uncached_grid_tokens);
    note +=
        say(" Points marked \"not run\" would feed more than " + limit +
                " tokens without the cache, too slow for this run; the cached run is still measured there.",
            "标为“未运行”的点在无缓存时要输入超过 " + limit + " 个 token，对本次运行太慢；有缓存的运行仍然测量了。");
  }
  section.paragraph(note);
}

// How much a mode's wall time grew from the sweep's first N to its last.
double time_growth(const std::vector<ForwardTokensPoint>& sweep, bool cached) {
  const double first = cached ? sweep.front().cached.total_ms : sweep.front().uncached.total_ms;
  const double last = cached ? sweep.back().cached.total_ms : sweep.back().uncached.total_ms;
  return first > 0 ? last / first : 0;
}

// The time plot's caption, read from the sweep: did the no-cache run's time grow faster than the cached run's?
std::string time_caption(const std::vector<ForwardTokensPoint>& sweep, const Words& say) {
  if (sweep.size() < 2) {
    return say("One N only: no growth to read.", "只有一个 N：没有增长可读。");
  }
  const double cached = time_growth(sweep, true);
  const double uncached = time_growth(sweep, false);
  const std::string span =
      "N = " + std::to_string(sweep.front().new_tokens) + " → " + std::to_string(sweep.back().new_tokens);
  const std::string numbers = " (" + span + ": ×" + fixed(uncached, 1) + say(" without, ×", " 无缓存，×") +
                              fixed(cached, 1) + say(" with", " 有缓存") + ")";
  if (cached > 0 && compare_ratio(uncached / cached) == Comparison::kLarger) {
    return say(
        "Wall time follows the token counts: it grew faster without the cache than with it" + numbers +
            " (one run each; the times include the shared machine's noise).",
        "墙钟时间随 token 数变化：无缓存时比有缓存时增长得更快" + numbers + "（各运行一次；时间包含共享机器的噪声）。");
  }
  return say("Here the wall time did not grow faster without the cache than with it" + numbers +
                 ", beyond ±10 %: on this model the fixed cost of each forward call hid the extra tokens.",
             "这里无缓存时的墙钟时间并没有比有缓存时增长得更快" + numbers +
                 "（超出 ±10 % 才算）：在这个模型上，每次前向调用的固定开销掩盖了多出的 token。");
}

// N sweep at P = 183: tokens and wall time against N, quadratic against linear.
void add_sweep_plots(ReportSection& section, const ForwardTokensData& data, const Words& say) {
  PlotSeries measured_cached{
      say("with cache (measured)", "有缓存（实测）"), {}, {}, "points pointtype 7 pointsize 1.3 " + kCachedColour};
  PlotSeries measured_uncached{
      say("without cache (measured)", "无缓存（实测）"), {}, {}, "points pointtype 5 pointsize 1.3 " + kUncachedColour};
  PlotSeries formula_cached{"P + N − 1", {}, {}, "lines dashtype 2 " + kCachedColour};
  PlotSeries formula_uncached{"P·N + N(N−1)/2", {}, {}, "lines dashtype 2 " + kUncachedColour};
  PlotSeries time_cached{say("with cache", "有缓存"), {}, {}, "linespoints pointtype 7 " + kCachedColour};
  PlotSeries time_uncached{say("without cache", "无缓存"), {}, {}, "linespoints pointtype 5 " + kUncachedColour};
  bool sweep_matches = true;
  for (const ForwardTokensPoint& point : data.sweep_at_183) {
    sweep_matches = sweep_matches && matches(point);
    measured_cached.x.push_back(point.new_tokens);
    measured_cached.y.push_back(static_cast<double>(point.cached.forward_tokens));
    measured_uncached.x.push_back(point.new_tokens);
    measured_uncached.y.push_back(static_cast<double>(point.uncached.forward_tokens));
    time_cached.x.push_back(point.new_tokens);
    time_cached.y.push_back(point.cached.total_ms);
    time_uncached.x.push_back(point.new_tokens);
    time_uncached.y.push_back(point.uncached.total_ms);
  }
  // The formulas as continuous curves, so the measured points can be seen sitting on them.
  for (std::size_t i = 0; i < data.formula_new_tokens.size(); ++i) {
    formula_cached.x.push_back(data.formula_new_tokens[i]);
    formula_cached.y.push_back(static_cast<double>(data.cached_formula_curve[i]));
    formula_uncached.x.push_back(data.formula_new_tokens[i]);
    formula_uncached.y.push_back(static_cast<double>(data.uncached_formula_curve[i]));
  }
  section.plot(PlotSpec{"forward_tokens.svg",
                        say("Tokens fed to forward, P = 183", "输入前向计算的 token 数，P = 183"),
                        say("new tokens N", "新 token 数 N"),
                        say("tokens fed to forward (tokens)", "输入前向计算的 token 数（token）"),
                        false,
                        false,
                        {},
                        {formula_uncached, measured_uncached, formula_cached, measured_cached},
                        std::nullopt,
                        "top left"},
               sweep_matches
                   ? say("Measured counts (points) on the two formulas (dashed): the no-cache count is a parabola in "
                         "N, the cached one a nearly flat line starting at P.",
                         "实测的计数（点）落在两条公式曲线（虚线）上：无缓存的计数是 N 的抛物线，有缓存的几乎是一条从 "
                         "P 开始的水平线。")
                   : say("Not every measured count (points) lies on its formula (dashed): see the table above.",
                         "并非每个实测计数（点）都落在公式曲线（虚线）上：见上表。"));
  section.plot(PlotSpec{"forward_time.svg",
                        say("Wall time of a whole generation, P = 183", "一次完整生成的墙钟时间，P = 183"),
                        say("new tokens N", "新 token 数 N"),
                        say("wall time (ms)", "墙钟时间 (ms)"),
                        false,
                        false,
                        {},
                        {time_uncached, time_cached},
                        std::nullopt,
                        "top left"},
               time_caption(data.sweep_at_183, say));
}

void add_routing(ReportSection& section, const ExpertRouting& routing, const Words& say) {
  nlohmann::json routing_json = {
      {"experts", routing.experts}, {"experts_per_token", routing.experts_per_token}, {"layers", routing.layers}};
  ReportTable table{{"P = 183, N = 64", say("tokens fed", "输入的 token"),
                     say("expert assignments (all layers)", "专家分配次数（所有层）"),
                     say("tokens × top-k × layers", "token × top-k × 层数"),
                     say("busiest / idlest expert (layer 1)", "最忙 / 最闲的专家（第 1 层）")},
                    {}};
  bool all_expected = true;
  for (const ExpertRoutingRun& run : routing.runs) {
    const auto first_layer = run.tokens_per_expert.begin();
    const auto [idlest, busiest] = std::minmax_element(first_layer, first_layer + routing.experts);
    all_expected = all_expected && run.expert_assignments == run.expected_assignments;
    table.rows.push_back(
        {run.cached ? say("with cache", "有缓存") : say("without cache", "无缓存"), with_thousands(run.forward_tokens),
         with_thousands(run.expert_assignments),
         with_thousands(run.expected_assignments) + (run.expert_assignments == run.expected_assignments ? " ✓" : " ≠"),
         with_thousands(*busiest) + " / " + with_thousands(*idlest)});
    routing_json[run.cached ? "cached" : "uncached"] = {{"forward_tokens", run.forward_tokens},
                                                        {"expert_assignments", run.expert_assignments},
                                                        {"expected_assignments", run.expected_assignments},
                                                        {"tokens_per_expert", run.tokens_per_expert}};
  }
  const std::string experts = std::to_string(routing.experts);
  const std::string top = std::to_string(routing.experts_per_token);
  section.paragraph(
      say("This base model is a mixture of experts (" + experts + " routed experts, top " + top + " per token). ",
          "这个基础模型是混合专家模型（" + experts + " 个路由专家，每个 token 取前 " + top + " 个）。") +
      (all_expected
           ? say("The router sent every token it was fed to that many experts in every layer, so the experts' "
                 "work follows the tokens fed: counted in the router during the two runs above,",
                 "路由器把输入的每个 token 在每一层都送给这么多个专家，所以专家的工作量随输入的 token 数变化：以下是在"
                 "上面两次运行中由路由器统计的，")
           : say("The router's assignments do **NOT** equal tokens × top-k × layers in every run — see the "
                 "table:",
                 "路由器的分配次数**并非**在每次运行中都等于 token × top-k × 层数——见下表：")));
  section.table(std::move(table));
  section.data["routing"] = routing_json;
}

}  // namespace

ReportSection forward_tokens_report(const ForwardTokensData& data, Language language) {
  const Words say{language};
  ReportSection section;
  section.key = "forward_tokens";
  section.title = say("Tokens entering forward", "进入前向计算的 token");
  section.paragraph(say(
      "Where the cache saves work can be counted exactly. With a prompt of P tokens and N new tokens, the cached "
      "run feeds the P prompt tokens once (the prefill), then one token per step; the last token chosen is never "
      "fed, so the total is **P + N − 1**. Without the cache, step s (counting from 0) re-feeds the prompt plus the s "
      "tokens generated so far: P + (P + 1) + … + (P + N − 1) = **P·N + N(N−1)/2**. The first grows linearly in N, "
      "the second quadratically. minigen counts every token it hands to the model; the table compares that count "
      "with both formulas (✓: equal). Prompts of any length P are cut from `" +
          data.prompt_text_source + "` after tokenization; the model is the base model, greedy, eos ignored.",
      "缓存在哪里节省了计算，可以精确地数出来。提示有 P 个 token、生成 N 个新 token 时，有缓存的运行先把 P 个提示 "
      "token 输入"
      "一次（预填充），之后每步输入一个 token；最后选出的 token 不再输入，所以总数是 **P + N − 1**。没有缓存时，第 s 步"
      "（从 0 数起）要重新输入提示和到目前为止生成的 s 个 token：P + (P + 1) + … + (P + N − 1) = **P·N + N(N−1)/2**。"
      "前者随 N 线性增长，后者按平方增长。minigen 统计交给模型的每一个 token；下表把这个计数与两个公式比较（✓：相等）。"
      "任意长度 P 的提示都在分词之后从 `" +
          data.prompt_text_source + "` 截取；模型为基础模型，贪心解码，忽略 eos。"));
  add_grid(section, data, say);
  add_sweep_plots(section, data, say);

  const ForwardTokensPoint& headline = data.headline;
  const double ratio =
      static_cast<double>(headline.uncached.forward_tokens) / static_cast<double>(headline.cached.forward_tokens);
  const std::string cached_tokens = with_thousands(headline.cached.forward_tokens);
  const std::string uncached_tokens = with_thousands(headline.uncached.forward_tokens);
  const std::string cached_ms = fixed(headline.cached.total_ms, 0);
  const std::string uncached_ms = fixed(headline.uncached.total_ms, 0);
  section.paragraph(say("The module's example, P = 183 and N = 64: **" + cached_tokens +
                            "** tokens with the cache against **" + uncached_tokens + "** without, " + fixed(ratio, 1) +
                            "× as many (" + cached_ms + " ms against " + uncached_ms + " ms of wall time in this run).",
                        "课程中的例子，P = 183、N = 64：有缓存时 **" + cached_tokens + "** 个 token，无缓存时 **" +
                            uncached_tokens + "** 个，是前者的 " + fixed(ratio, 1) + " 倍（本次运行的墙钟时间为 " +
                            cached_ms + " ms 与 " + uncached_ms + " ms）。"));

  nlohmann::json grid = nlohmann::json::array();
  nlohmann::json sweep = nlohmann::json::array();
  bool all_match = true;
  for (const ForwardTokensPoint& point : data.grid) {
    grid.push_back(point_json(point));
    all_match = all_match && matches(point);
  }
  for (const ForwardTokensPoint& point : data.sweep_at_183) {
    sweep.push_back(point_json(point));
    all_match = all_match && matches(point);
  }
  section.data["grid"] = grid;
  section.data["sweep_at_183"] = sweep;
  section.data["headline"] = {{"prompt_tokens", kHeadlinePromptTokens},
                              {"new_tokens", kHeadlineNewTokens},
                              {"cached_forward_tokens", headline.cached.forward_tokens},
                              {"uncached_forward_tokens", headline.uncached.forward_tokens},
                              {"cached_formula", headline.cached.formula},
                              {"uncached_formula", headline.uncached.formula},
                              {"ratio", ratio},
                              {"cached_total_ms", headline.cached.total_ms},
                              {"uncached_total_ms", headline.uncached.total_ms}};
  section.data["all_counts_match_formulas"] = all_match;
  if (data.routing) add_routing(section, *data.routing, say);
  section.summary.push_back("forward tokens, P = 183, N = 64: " + with_thousands(headline.cached.forward_tokens) +
                            " with the cache, " + with_thousands(headline.uncached.forward_tokens) + " without (" +
                            fixed(ratio, 1) + "×); every grid point " +
                            (all_match ? "equals the formulas" : "does NOT equal the formulas"));
  return section;
}

}  // namespace minigen::lab
