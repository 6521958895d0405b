#include "lab/budget_fit.h"

#include <algorithm>
#include <functional>
#include <numeric>
#include <string>

namespace minigen::lab {
namespace {

double total_seconds(const LabScale& scale, const LabPromptSizes& prompts, const ForwardCost& base,
                     const ForwardCost& sft) {
  const std::vector<double> seconds = section_seconds(lab_work(scale, prompts), base, sft);
  return std::accumulate(seconds.begin(), seconds.end(), 0.0);
}

}  // namespace

BudgetFit fit_to_budget(LabScale& scale, const LabPromptSizes& prompts, const ForwardCost& base, const ForwardCost& sft,
                        double budget_seconds) {
  BudgetFit fit;
  fit.estimated_seconds_before = total_seconds(scale, prompts, base, sft);
  // Each step cuts something and returns what, or returns "" when there was nothing left to cut.
  const std::vector<std::function<std::string(LabScale&)>> steps = {
      [](LabScale& s) -> std::string {
        if (s.timing_repeats <= 3) return "";
        s.timing_repeats = 3;
        return "timing medians of 3 runs instead of 5";
      },
      [](LabScale& s) -> std::string {
        if (s.max_uncached_grid_tokens <= 50000) return "";
        s.max_uncached_grid_tokens = 50000;
        return "grid points whose no-cache run would feed more than 50,000 tokens measured with the cache only";
      },
      [](LabScale& s) -> std::string {
        const std::vector<int> dropped = drop_above(s.sweep_new_tokens, 128);
        return dropped.empty() ? "" : "N sweep at P = 183 stops at N = 128";
      },
      [](LabScale& s) -> std::string {
        if (s.temperature_samples <= 20) return "";
        s.temperature_samples = 20;
        return "20 samples per temperature instead of 30";
      },
      [](LabScale& s) -> std::string {
        if (s.temperature_new_tokens <= 64) return "";
        s.temperature_new_tokens = 64;
        s.top_p_new_tokens = std::min(s.top_p_new_tokens, 64);
        return "temperature and top-p answers of at most 64 tokens";
      },
      [](LabScale& s) -> std::string {
        if (s.shrinking_documents <= 100) return "";
        s.shrinking_documents = 100;
        return "section 9's perplexities on 100 held-out documents";
      },
      [](LabScale& s) -> std::string {
        if (s.timing_repeats <= 1) return "";
        s.timing_repeats = 1;
        return "one timed run per point instead of a median";
      },
      [](LabScale& s) -> std::string {
        const std::vector<int> dropped = drop_above(s.ttft_prompt_tokens, 256);
        return dropped.empty() ? "" : "TTFT measured up to P = 256 (P = " + list_text(dropped) + " left out)";
      },
      [](LabScale& s) -> std::string {
        if (s.max_uncached_grid_tokens <= 15000) return "";
        s.max_uncached_grid_tokens = 15000;
        return "grid points whose no-cache run would feed more than 15,000 tokens measured with the cache only";
      },
      [](LabScale& s) -> std::string {
        const std::vector<int> dropped = drop_above(s.sweep_new_tokens, kHeadlineNewTokens);
        return dropped.empty() ? "" : "N sweep at P = 183 stops at N = 64";
      },
      [](LabScale& s) -> std::string {
        if (s.temperature_samples <= 10 && s.temperature_prompt_count <= 2 && s.top_p_prompt_count <= 2) return "";
        s.temperature_samples = std::min(s.temperature_samples, 10);
        s.temperature_prompt_count = std::min(s.temperature_prompt_count, 2);
        s.top_p_prompt_count = std::min(s.top_p_prompt_count, 2);
        return "temperature and top-p on 2 chat prompts, 10 samples per temperature";
      },
      [](LabScale& s) -> std::string {
        if (s.shrinking_documents <= 40) return "";
        s.shrinking_documents = 40;
        return "section 9's perplexities on 40 held-out documents";
      },
  };
  double estimate = fit.estimated_seconds_before;
  for (std::size_t i = 0; i < steps.size() && estimate > budget_seconds; ++i) {
    const std::string cut = steps[i](scale);
    if (cut.empty()) continue;
    estimate = total_seconds(scale, prompts, base, sft);
    scale.cuts.push_back(cut + " (to fit the " + (scale.quick ? "quick" : "full") + " run's budget of " +
                         duration_text(budget_seconds) + ")");
  }
  fit.section_seconds = section_seconds(lab_work(scale, prompts), base, sft);
  fit.estimated_seconds = std::accumulate(fit.section_seconds.begin(), fit.section_seconds.end(), 0.0);
  return fit;
}

}  // namespace minigen::lab
