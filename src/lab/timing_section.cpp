// Section 3, measured: time to first token and between tokens, with and without the cache, at P = 183 and over
// prompt lengths; each point repeated as the run's scale says (the report shows medians).
#include <string>
#include <vector>

#include "lab/section_measures.h"

namespace minigen::lab {
namespace {

void add(TimingSamples& samples, const GenerateStats& stats) {
  samples.ttft_ms.push_back(stats.ttft_ms);
  samples.itl_ms.push_back(stats.itl_ms);
  samples.total_ms.push_back(stats.total_ms);
}

// The first repeat is the memoized run (already measured by sections 1 and 2); the others are fresh runs.
TimingSamples time_runs(LabContext& lab, const std::vector<int>& prompt, int new_tokens, bool use_cache, int repeats) {
  TimingSamples samples;
  add(samples, lab.base_greedy_run(prompt, new_tokens, use_cache).stats);
  const GenerateOptions options = LabContext::base_greedy_options(new_tokens, use_cache);  // the same work each time
  const std::vector<std::vector<int>> batch = {prompt};
  for (int repeat = 1; repeat < repeats; ++repeat)
    add(samples, lab.generate(lab.base_transformer(), batch, options).stats);
  return samples;
}

TimingPoint time_point(LabContext& lab, const std::vector<int>& prompt, int new_tokens, int repeats) {
  TimingPoint point{static_cast<int>(prompt.size()), new_tokens, {}, {}};
  point.cached = time_runs(lab, prompt, new_tokens, true, repeats);
  point.uncached = time_runs(lab, prompt, new_tokens, false, repeats);
  return point;
}

}  // namespace

TimingData measure_timing(LabContext& lab) {
  TimingData data;
  data.repeats = lab.scale().timing_repeats;
  data.threads = lab.threads();
  lab.progress(lab.say("  P = 183, N = 64: " + std::to_string(data.repeats) + " repeat(s) with and without the cache",
                       "  P = 183, N = 64：有缓存和无缓存各重复 " + std::to_string(data.repeats) + " 次"));
  data.headline = time_point(lab, lab.headline_prompt(), kHeadlineNewTokens, data.repeats);
  const int new_tokens = lab.scale().ttft_new_tokens;
  data.against_prompt_new_tokens = new_tokens;
  for (int prompt_tokens : lab.scale().ttft_prompt_tokens) {
    const std::string shape = "P = " + std::to_string(prompt_tokens) + ", N = " + std::to_string(new_tokens);
    lab.progress(lab.say("  TTFT at " + shape, "  " + shape + " 时的首个 token 时间"));
    data.against_prompt_length.push_back(
        time_point(lab, lab.base_prompt_of_length(prompt_tokens), new_tokens, data.repeats));
  }
  return data;
}

}  // namespace minigen::lab
