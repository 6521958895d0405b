// Section 2, written: the two formulas, the grid's table of measured counts against them (✓ where equal), the
// counts and wall times of the N sweep as plots, the module's 183 + 64 example, and for a mixture-of-experts model
// the router's assignments.
#include <algorithm>
#include <string>
#include <vector>

#include "core/format.h"
#include "lab/lab_scale.h"
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

void add_grid(ReportSection& section, const ForwardTokensData& data) {
  ReportTable table{{"P", "N", "fed with cache (P+N−1)", "fed without cache (P·N+N(N−1)/2)", "ratio"}, {}};
  bool skipped_uncached_points = false;
  for (const ForwardTokensPoint& point : data.grid) {
    skipped_uncached_points = skipped_uncached_points || !point.uncached_run;
    const std::string uncached_cell = point.uncached_run
                                          ? measured_cell(point.uncached)
                                          : "not run (formula: " + with_thousands(point.uncached.formula) + ")";
    table.rows.push_back({std::to_string(point.prompt_tokens), std::to_string(point.new_tokens),
                          measured_cell(point.cached), uncached_cell, fixed(formula_ratio(point), 1) + "×"});
  }
  section.table(std::move(table));
  std::string note =
      "The ratio column is the saving: it grows with both P and N, because the no-cache run pays for "
      "the whole prefix again at every step.";
  if (skipped_uncached_points) {
    note += " Points marked \"not run\" would feed more than " + with_thousands(data.max_uncached_grid_tokens) +
            " tokens without the cache, too slow for this run; the cached run is still measured there.";
  }
  section.paragraph(note);
}

// N sweep at P = 183: tokens and wall time against N, quadratic against linear.
void add_sweep_plots(ReportSection& section, const ForwardTokensData& data) {
  PlotSeries measured_cached{"with cache (measured)", {}, {}, "points pointtype 7 pointsize 1.3 " + kCachedColour};
  PlotSeries measured_uncached{
      "without cache (measured)", {}, {}, "points pointtype 5 pointsize 1.3 " + kUncachedColour};
  PlotSeries formula_cached{"P + N − 1", {}, {}, "lines dashtype 2 " + kCachedColour};
  PlotSeries formula_uncached{"P·N + N(N−1)/2", {}, {}, "lines dashtype 2 " + kUncachedColour};
  PlotSeries time_cached{"with cache", {}, {}, "linespoints pointtype 7 " + kCachedColour};
  PlotSeries time_uncached{"without cache", {}, {}, "linespoints pointtype 5 " + kUncachedColour};
  for (const ForwardTokensPoint& point : data.sweep_at_183) {
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
                        "Tokens fed to forward, P = 183",
                        "new tokens N",
                        "tokens fed to forward (tokens)",
                        false,
                        false,
                        {},
                        {formula_uncached, measured_uncached, formula_cached, measured_cached}},
               "Measured counts (points) on the two formulas (dashed): the no-cache count is a parabola in N, the "
               "cached one a nearly flat line starting at P.");
  section.plot(PlotSpec{"forward_time.svg",
                        "Wall time of a whole generation, P = 183",
                        "new tokens N",
                        "wall time (ms)",
                        false,
                        false,
                        {},
                        {time_uncached, time_cached}},
               "Wall time follows the token counts: quadratic without the cache, linear with it (one run each, "
               "same machine, timings include the shared machine's noise).");
}

void add_routing(ReportSection& section, const ExpertRouting& routing) {
  nlohmann::json routing_json = {
      {"experts", routing.experts}, {"experts_per_token", routing.experts_per_token}, {"layers", routing.layers}};
  ReportTable table{{"P = 183, N = 64", "tokens fed", "expert assignments (all layers)", "tokens × top-k × layers",
                     "busiest / idlest expert (layer 1)"},
                    {}};
  for (const ExpertRoutingRun& run : routing.runs) {
    const auto first_layer = run.tokens_per_expert.begin();
    const auto [idlest, busiest] = std::minmax_element(first_layer, first_layer + routing.experts);
    table.rows.push_back(
        {run.cached ? "with cache" : "without cache", with_thousands(run.forward_tokens),
         with_thousands(run.expert_assignments),
         with_thousands(run.expected_assignments) + (run.expert_assignments == run.expected_assignments ? " ✓" : " ≠"),
         with_thousands(*busiest) + " / " + with_thousands(*idlest)});
    routing_json[run.cached ? "cached" : "uncached"] = {{"forward_tokens", run.forward_tokens},
                                                        {"expert_assignments", run.expert_assignments},
                                                        {"expected_assignments", run.expected_assignments},
                                                        {"tokens_per_expert", run.tokens_per_expert}};
  }
  section.paragraph("This base model is a mixture of experts (" + std::to_string(routing.experts) +
                    " routed experts, top " + std::to_string(routing.experts_per_token) +
                    " per token). The router sends every token it is fed to that many experts in every layer, so "
                    "the experts' work follows the tokens fed: counted in the router during the two runs above,");
  section.table(std::move(table));
  section.data["routing"] = routing_json;
}

}  // namespace

ReportSection forward_tokens_report(const ForwardTokensData& data) {
  ReportSection section;
  section.key = "forward_tokens";
  section.title = "Tokens entering forward";
  section.paragraph(
      "Where the cache saves work can be counted exactly. With a prompt of P tokens and N new tokens, the cached "
      "run feeds the P prompt tokens once (the prefill), then one token per step; the last token chosen is never "
      "fed, so the total is **P + N − 1**. Without the cache, step s (counting from 0) re-feeds the prompt plus the s "
      "tokens generated so far: P + (P + 1) + … + (P + N − 1) = **P·N + N(N−1)/2**. The first grows linearly in N, "
      "the second quadratically. minigen counts every token it hands to the model; the table compares that count "
      "with both formulas (✓: equal). Prompts of any length P are cut from `" +
      data.prompt_text_source + "` after tokenization; the model is the base model, greedy, eos ignored.");
  add_grid(section, data);
  add_sweep_plots(section, data);

  const ForwardTokensPoint& headline = data.headline;
  const double ratio =
      static_cast<double>(headline.uncached.forward_tokens) / static_cast<double>(headline.cached.forward_tokens);
  section.paragraph("The module's example, P = 183 and N = 64: **" + with_thousands(headline.cached.forward_tokens) +
                    "** tokens with the cache against **" + with_thousands(headline.uncached.forward_tokens) +
                    "** without, " + fixed(ratio, 1) + "× as many (" + fixed(headline.cached.total_ms, 0) +
                    " ms against " + fixed(headline.uncached.total_ms, 0) + " ms of wall time in this run).");

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
  if (data.routing) add_routing(section, *data.routing);
  section.summary.push_back("forward tokens, P = 183, N = 64: " + with_thousands(headline.cached.forward_tokens) +
                            " with the cache, " + with_thousands(headline.uncached.forward_tokens) + " without (" +
                            fixed(ratio, 1) + "×); every grid point " +
                            (all_match ? "equals the formulas" : "does NOT equal the formulas"));
  return section;
}

}  // namespace minigen::lab
