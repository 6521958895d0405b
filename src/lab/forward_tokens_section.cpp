// Section 2: how many tokens enter forward. With the cache: the prompt once, then one token per step,
// P + N − 1 in all. Without: the whole sequence at every step, P + (P+1) + … + (P+N−1) = P·N + N(N−1)/2.
#include <algorithm>
#include <string>
#include <vector>

#include "core/format.h"
#include "lab/lab_sections.h"

namespace minigen::lab {
namespace {

// One colour per mode in both plots, so that a reader matches them at a glance.
const std::string kCachedColour = "linecolor rgb '#0072b2'";
const std::string kUncachedColour = "linecolor rgb '#d55e00'";

// P + N − 1: the prompt once (prefill), then the N − 1 tokens generated before the last one (the last is never fed).
int64_t cached_formula(int64_t prompt_tokens, int64_t new_tokens) { return prompt_tokens + new_tokens - 1; }
// Σ_{s=0}^{N−1} (P + s) = P·N + N(N−1)/2: every step re-feeds the prompt and all tokens generated so far.
int64_t uncached_formula(int64_t prompt_tokens, int64_t new_tokens) {
  return prompt_tokens * new_tokens + new_tokens * (new_tokens - 1) / 2;
}

struct ModeMeasurement {
  int64_t forward_tokens = 0;
  int64_t formula = 0;
  int forward_calls = 0;
  double total_ms = 0;

  nlohmann::json to_json() const {
    return {{"forward_tokens", forward_tokens},
            {"formula", formula},
            {"forward_calls", forward_calls},
            {"total_ms", total_ms}};
  }
};

struct GridPoint {
  int prompt_tokens = 0;
  int new_tokens = 0;
  ModeMeasurement cached;
  bool uncached_run = false;  // false when the no-cache run would exceed the run's budget
  ModeMeasurement uncached;
};

ModeMeasurement measure(const GenerateResult& result, int64_t formula) {
  return ModeMeasurement{result.stats.forward_tokens, formula, result.stats.forward_calls, result.stats.total_ms};
}

GridPoint measure_point(LabContext& lab, int prompt_tokens, int new_tokens, bool run_uncached) {
  const std::vector<int> prompt = lab.base_prompt_of_length(prompt_tokens);
  GridPoint point{prompt_tokens, new_tokens, {}, run_uncached, {}};
  point.cached = measure(lab.base_greedy_run(prompt, new_tokens, true), cached_formula(prompt_tokens, new_tokens));
  if (run_uncached) {
    point.uncached =
        measure(lab.base_greedy_run(prompt, new_tokens, false), uncached_formula(prompt_tokens, new_tokens));
  }
  return point;
}

bool matches(const GridPoint& point) {
  return point.cached.forward_tokens == point.cached.formula &&
         (!point.uncached_run || point.uncached.forward_tokens == point.uncached.formula);
}

nlohmann::json point_json(const GridPoint& point) {
  return {{"prompt_tokens", point.prompt_tokens},
          {"new_tokens", point.new_tokens},
          {"cached", point.cached.to_json()},
          {"uncached", point.uncached_run ? point.uncached.to_json() : nlohmann::json(nullptr)},
          {"uncached_formula", uncached_formula(point.prompt_tokens, point.new_tokens)},
          {"ratio", static_cast<double>(uncached_formula(point.prompt_tokens, point.new_tokens)) /
                        static_cast<double>(cached_formula(point.prompt_tokens, point.new_tokens))}};
}

std::string measured_cell(const ModeMeasurement& measurement) {
  return with_thousands(measurement.forward_tokens) +
         (measurement.forward_tokens == measurement.formula ? " ✓" : " ≠ " + with_thousands(measurement.formula));
}

// Mixture of experts: every fed token goes to top-k experts in every layer, so the cache cuts the experts' work by
// the same factor as the tokens. The counts come from the router itself, during the headline runs.
void add_routing(ReportSection& section, const LabContext& lab, const GridPoint& headline) {
  const ModelConfig& config = lab.base().model->config;
  const std::vector<int> prompt = lab.base_prompt_of_length(kHeadlinePromptTokens);
  nlohmann::json routing = {{"experts", config.num_experts},
                            {"experts_per_token", config.num_experts_per_token},
                            {"layers", config.num_layers}};
  ReportTable table{{"P = 183, N = 64", "tokens fed", "expert assignments (all layers)", "tokens × top-k × layers",
                     "busiest / idlest expert (layer 1)"},
                    {}};
  for (const bool cache : {true, false}) {
    const std::vector<int64_t> counts = lab.base_greedy_routing(prompt, kHeadlineNewTokens, cache);
    const int64_t fed = cache ? headline.cached.forward_tokens : headline.uncached.forward_tokens;
    int64_t assignments = 0;
    for (int64_t count : counts) assignments += count;
    const int64_t expected = fed * config.num_experts_per_token * config.num_layers;
    const auto first_layer = counts.begin();
    const auto [idlest, busiest] = std::minmax_element(first_layer, first_layer + config.num_experts);
    table.rows.push_back({cache ? "with cache" : "without cache", with_thousands(fed), with_thousands(assignments),
                          with_thousands(expected) + (assignments == expected ? " ✓" : " ≠"),
                          with_thousands(*busiest) + " / " + with_thousands(*idlest)});
    routing[cache ? "cached" : "uncached"] = {{"forward_tokens", fed},
                                              {"expert_assignments", assignments},
                                              {"expected_assignments", expected},
                                              {"tokens_per_expert", counts}};
  }
  section.paragraph("This base model is a mixture of experts (" + std::to_string(config.num_experts) +
                    " routed experts, top " + std::to_string(config.num_experts_per_token) +
                    " per token). The router sends every token it is fed to that many experts in every layer, so "
                    "the experts' work follows the tokens fed: counted in the router during the two runs above,");
  section.table(std::move(table));
  section.data["routing"] = routing;
}

}  // namespace

ReportSection forward_tokens_section(LabContext& lab) {
  ReportSection section;
  section.key = "forward_tokens";
  section.title = "Tokens entering forward";
  const LabScale& scale = lab.scale();
  section.paragraph(
      "Where the cache saves work can be counted exactly. With a prompt of P tokens and N new tokens, the cached "
      "run feeds the P prompt tokens once (the prefill), then one token per step; the last token chosen is never "
      "fed, so the total is **P + N − 1**. Without the cache, step s (counting from 0) re-feeds the prompt plus the s "
      "tokens generated so far: P + (P + 1) + … + (P + N − 1) = **P·N + N(N−1)/2**. The first grows linearly in N, "
      "the second quadratically. minigen counts every token it hands to the model; the table compares that count "
      "with both formulas (✓: equal). Prompts of any length P are cut from the genesis text (or repeat it); the "
      "model is the base model, greedy, eos ignored.");

  ReportTable table{{"P", "N", "fed with cache (P+N−1)", "fed without cache (P·N+N(N−1)/2)", "ratio"}, {}};
  nlohmann::json grid = nlohmann::json::array();
  bool all_match = true;
  int skipped_uncached_points = 0;
  for (int prompt_tokens : scale.grid_prompt_tokens) {
    for (int new_tokens : scale.grid_new_tokens) {
      const bool run_uncached = uncached_formula(prompt_tokens, new_tokens) <= scale.max_uncached_grid_tokens;
      if (!run_uncached) ++skipped_uncached_points;
      const GridPoint point = measure_point(lab, prompt_tokens, new_tokens, run_uncached);
      all_match = all_match && matches(point);
      grid.push_back(point_json(point));
      const std::string uncached_cell =
          run_uncached ? measured_cell(point.uncached)
                       : "not run (formula: " + with_thousands(uncached_formula(prompt_tokens, new_tokens)) + ")";
      table.rows.push_back({std::to_string(prompt_tokens), std::to_string(new_tokens), measured_cell(point.cached),
                            uncached_cell, fixed(grid.back()["ratio"].get<double>(), 1) + "×"});
    }
  }
  section.table(std::move(table));
  std::string note =
      "The ratio column is the saving: it grows with both P and N, because the no-cache run pays for "
      "the whole prefix again at every step.";
  if (skipped_uncached_points > 0) {
    note += " Points marked \"not run\" would feed more than " + with_thousands(scale.max_uncached_grid_tokens) +
            " tokens without the cache, too slow for this run; the cached run is still measured there.";
  }
  section.paragraph(note);

  // N sweep at P = 183 for the plots: tokens and wall time against N, quadratic against linear.
  PlotSeries measured_cached{"with cache (measured)", {}, {}, "points pointtype 7 pointsize 1.3 " + kCachedColour};
  PlotSeries measured_uncached{
      "without cache (measured)", {}, {}, "points pointtype 5 pointsize 1.3 " + kUncachedColour};
  PlotSeries formula_cached{"P + N − 1", {}, {}, "lines dashtype 2 " + kCachedColour};
  PlotSeries formula_uncached{"P·N + N(N−1)/2", {}, {}, "lines dashtype 2 " + kUncachedColour};
  PlotSeries time_cached{"with cache", {}, {}, "linespoints pointtype 7 " + kCachedColour};
  PlotSeries time_uncached{"without cache", {}, {}, "linespoints pointtype 5 " + kUncachedColour};
  nlohmann::json sweep = nlohmann::json::array();
  for (int new_tokens : scale.sweep_new_tokens) {
    const GridPoint point = measure_point(lab, kHeadlinePromptTokens, new_tokens, true);
    all_match = all_match && matches(point);
    sweep.push_back(point_json(point));
    measured_cached.x.push_back(new_tokens);
    measured_cached.y.push_back(static_cast<double>(point.cached.forward_tokens));
    measured_uncached.x.push_back(new_tokens);
    measured_uncached.y.push_back(static_cast<double>(point.uncached.forward_tokens));
    time_cached.x.push_back(new_tokens);
    time_cached.y.push_back(point.cached.total_ms);
    time_uncached.x.push_back(new_tokens);
    time_uncached.y.push_back(point.uncached.total_ms);
  }
  // The formulas as continuous curves, so the measured points can be seen sitting on them.
  for (int new_tokens = 1; new_tokens <= scale.sweep_new_tokens.back(); ++new_tokens) {
    formula_cached.x.push_back(new_tokens);
    formula_cached.y.push_back(static_cast<double>(cached_formula(kHeadlinePromptTokens, new_tokens)));
    formula_uncached.x.push_back(new_tokens);
    formula_uncached.y.push_back(static_cast<double>(uncached_formula(kHeadlinePromptTokens, new_tokens)));
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

  const GridPoint headline = measure_point(lab, kHeadlinePromptTokens, kHeadlineNewTokens, true);
  const double ratio =
      static_cast<double>(headline.uncached.forward_tokens) / static_cast<double>(headline.cached.forward_tokens);
  section.paragraph("The module's example, P = 183 and N = 64: **" + with_thousands(headline.cached.forward_tokens) +
                    "** tokens with the cache against **" + with_thousands(headline.uncached.forward_tokens) +
                    "** without, " + fixed(ratio, 1) + "× as many (" + fixed(headline.cached.total_ms, 0) +
                    " ms against " + fixed(headline.uncached.total_ms, 0) + " ms of wall time in this run).");

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
  if (lab.base().model->config.use_moe) add_routing(section, lab, headline);
  section.summary.push_back("forward tokens, P = 183, N = 64: " + with_thousands(headline.cached.forward_tokens) +
                            " with the cache, " + with_thousands(headline.uncached.forward_tokens) + " without (" +
                            fixed(ratio, 1) + "×); every grid point " +
                            (all_match ? "equals the formulas" : "does NOT equal the formulas"));
  return section;
}

}  // namespace minigen::lab
