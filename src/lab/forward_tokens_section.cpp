// Section 2, measured: how many tokens enter forward, with the cache and without, at every point of the grid and of
// the N sweep at P = 183, each beside the module's formula (P + N − 1 and P·N + N(N−1)/2, work_estimate.h).
#include <string>
#include <vector>

#include "lab/section_measures.h"

namespace minigen::lab {
namespace {

ForwardTokensMode mode_of(const GenerateResult& result, int64_t formula) {
  return ForwardTokensMode{result.stats.forward_tokens, formula, result.stats.forward_calls, result.stats.total_ms};
}

ForwardTokensPoint measure_point(LabContext& lab, int prompt_tokens, int new_tokens, bool run_uncached) {
  const std::vector<int> prompt = lab.base_prompt_of_length(prompt_tokens);
  ForwardTokensPoint point{prompt_tokens, new_tokens, {}, run_uncached, {}};
  point.cached =
      mode_of(lab.base_greedy_run(prompt, new_tokens, true), cached_forward_tokens(prompt_tokens, new_tokens));
  point.uncached.formula = uncached_forward_tokens(prompt_tokens, new_tokens);
  if (run_uncached) point.uncached = mode_of(lab.base_greedy_run(prompt, new_tokens, false), point.uncached.formula);
  return point;
}

// Mixture of experts: every fed token goes to top-k experts in every layer, so the cache cuts the experts' work by
// the same factor as the tokens. The counts come from the router itself, during the headline runs.
ExpertRouting measure_routing(const LabContext& lab, const ForwardTokensPoint& headline) {
  const ModelConfig& config = lab.base().model->config;
  const std::vector<int> prompt = lab.base_prompt_of_length(kHeadlinePromptTokens);
  ExpertRouting routing{config.num_experts, config.num_experts_per_token, config.num_layers, {}};
  for (const bool cache : {true, false}) {
    ExpertRoutingRun run;
    run.cached = cache;
    run.tokens_per_expert = lab.base_greedy_routing(prompt, kHeadlineNewTokens, cache);
    run.forward_tokens = cache ? headline.cached.forward_tokens : headline.uncached.forward_tokens;
    for (int64_t count : run.tokens_per_expert) run.expert_assignments += count;
    run.expected_assignments = run.forward_tokens * config.num_experts_per_token * config.num_layers;
    routing.runs.push_back(std::move(run));
  }
  return routing;
}

}  // namespace

ForwardTokensData measure_forward_tokens(LabContext& lab) {
  const LabScale& scale = lab.scale();
  ForwardTokensData data;
  data.max_uncached_grid_tokens = scale.max_uncached_grid_tokens;
  for (int prompt_tokens : scale.grid_prompt_tokens) {
    for (int new_tokens : scale.grid_new_tokens) {
      const bool run_uncached = uncached_forward_tokens(prompt_tokens, new_tokens) <= scale.max_uncached_grid_tokens;
      data.grid.push_back(measure_point(lab, prompt_tokens, new_tokens, run_uncached));
    }
  }
  for (int new_tokens : scale.sweep_new_tokens) {
    data.sweep_at_183.push_back(measure_point(lab, kHeadlinePromptTokens, new_tokens, true));
  }
  for (int new_tokens = 1; new_tokens <= scale.sweep_new_tokens.back(); ++new_tokens) {
    data.formula_new_tokens.push_back(new_tokens);
    data.cached_formula_curve.push_back(cached_forward_tokens(kHeadlinePromptTokens, new_tokens));
    data.uncached_formula_curve.push_back(uncached_forward_tokens(kHeadlinePromptTokens, new_tokens));
  }
  data.headline = measure_point(lab, kHeadlinePromptTokens, kHeadlineNewTokens, true);
  if (lab.base().model->config.use_moe) data.routing = measure_routing(lab, data.headline);
  data.prompt_text_source = lab.material().prompt_text.source;
  return data;
}

}  // namespace minigen::lab
