// Section 6, measured: how many candidates top-p (nucleus) keeps at every step of real answers, for several p and
// for top-k as the fixed-count comparison, beside how peaked each step's distribution was.
#include <algorithm>
#include <iterator>
#include <string>
#include <vector>

#include "core/format.h"
#include "lab/section_measures.h"

namespace minigen::lab {
namespace {

constexpr uint64_t kSeed = 77;
constexpr int kTopK = 50;  // MiniMind's default top-k, for comparison
constexpr float kTopPValues[] = {0.5f, 0.8f, 0.9f, 0.95f};
static_assert(std::size(kTopPValues) + 1 == kTopPRuns, "the work estimate counts the top-p values and top-k");
// A step is "peaked" when its top token has at least this probability, "flat" when it has less than the second.
constexpr double kPeakedTopProbability = 0.5;
constexpr double kFlatTopProbability = 0.2;

CandidateCounts collect(LabContext& lab, const std::string& name, int top_k, float top_p) {
  const LabScale& scale = lab.scale();
  CandidateCounts counts{name, {}, {}};
  const std::vector<std::string>& messages = lab.chat_messages();
  const int prompt_count = std::min<int>(scale.top_p_prompt_count, static_cast<int>(messages.size()));
  for (int p = 0; p < prompt_count; ++p) {
    GenerateOptions options;
    options.max_new_tokens = scale.top_p_new_tokens;
    options.keep_step_logits = true;
    options.sampling.temperature = 1.0f;  // so that top-p sees the model's own distribution
    options.sampling.top_k = top_k;
    options.sampling.top_p = top_p;
    options.sampling.seed = kSeed;
    const std::vector<std::vector<int>> batch(scale.top_p_rows, lab.chat_prompt(messages[p]));
    const GenerateResult result = lab.generate(lab.sft_transformer(), batch, options);
    for (const GeneratedSequence& sequence : result.sequences) {
      for (std::size_t step = 0; step < sequence.kept_candidates.size(); ++step) {
        counts.kept.push_back(sequence.kept_candidates[step]);
        counts.top_probability.push_back(top_probability(sequence.step_logits[step], 1.0));
      }
    }
  }
  return counts;
}

}  // namespace

TopPData measure_top_p(LabContext& lab) {
  const LabScale& scale = lab.scale();
  TopPData data;
  data.prompt_count = std::min<int>(scale.top_p_prompt_count, static_cast<int>(lab.chat_messages().size()));
  data.rows = scale.top_p_rows;
  data.new_tokens = scale.top_p_new_tokens;
  data.top_k = kTopK;
  data.vocab_size = lab.sft().model->config.vocab_size;
  data.prompts.assign(lab.chat_messages().begin(), lab.chat_messages().begin() + data.prompt_count);
  data.chat_prompts_source = lab.material().chat_prompts.source;
  data.peaked_top_probability = kPeakedTopProbability;
  data.flat_top_probability = kFlatTopProbability;
  for (float p : kTopPValues) {
    lab.progress("  top-p " + fixed(p, 2));
    data.filters.push_back(collect(lab, "top-p " + fixed(p, 2), 0, p));
  }
  lab.progress(lab.say("  top-k " + std::to_string(kTopK) + " for comparison",
                       "  top-k " + std::to_string(kTopK) + "，用于比较"));
  data.filters.push_back(collect(lab, "top-k " + std::to_string(kTopK), kTopK, 1.0f));
  return data;
}

}  // namespace minigen::lab
