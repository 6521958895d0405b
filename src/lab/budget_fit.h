#pragma once
// Shrinking a run to its time budget: the work estimate priced at the calibrated costs, cut step by step until it
// fits. Above both the scale (what is cut) and the work estimate (what it costs).
#include <vector>

#include "lab/lab_scale.h"
#include "lab/work_estimate.h"

namespace minigen::lab {

// Time budgets: --quick on a 64 M-parameter model must finish in under 5 minutes on 2 cores, the full run in under
// 30; the budgets leave a margin for the estimate's error.
inline constexpr double kQuickBudgetSeconds = 4 * 60;
inline constexpr double kFullBudgetSeconds = 25 * 60;

struct BudgetFit {
  double estimated_seconds_before = 0;  // at the default sizes
  double estimated_seconds = 0;         // after the cuts
  std::vector<double> section_seconds;  // after the cuts, per section
};

// Shrinks the scale step by step (repeats first, then the no-cache runs, then sample counts and lengths) until the
// estimate fits the budget or nothing is left to cut; each step taken is added to scale.cuts.
BudgetFit fit_to_budget(LabScale& scale, const LabPromptSizes& prompts, const ForwardCost& base, const ForwardCost& sft,
                        double budget_seconds);

}  // namespace minigen::lab
