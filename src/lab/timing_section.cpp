// Section 3: time. The cache shortens the time between tokens, not the time to the first token: the first token
// needs the whole prompt computed (the prefill) either way; only the later steps get cheaper.
#include <string>
#include <vector>

#include "core/format.h"
#include "lab/lab_sections.h"
#include "lab/lab_statistics.h"

namespace minigen::lab {
namespace {

struct TimingSamples {
  std::vector<double> ttft_ms;
  std::vector<double> itl_ms;
  std::vector<double> total_ms;

  void add(const GenerateStats& stats) {
    ttft_ms.push_back(stats.ttft_ms);
    itl_ms.push_back(stats.itl_ms);
    total_ms.push_back(stats.total_ms);
  }
  nlohmann::json to_json() const {
    return {{"ttft_ms", ttft_ms},
            {"itl_ms", itl_ms},
            {"total_ms", total_ms},
            {"ttft_ms_median", median(ttft_ms)},
            {"itl_ms_median", median(itl_ms)},
            {"total_ms_median", median(total_ms)}};
  }
};

// The first repeat is the memoized run (already measured by sections 1 and 2); the others are fresh runs.
TimingSamples time_runs(LabContext& lab, const std::vector<int>& prompt, int new_tokens, bool use_cache, int repeats) {
  TimingSamples samples;
  samples.add(lab.base_greedy_run(prompt, new_tokens, use_cache).stats);
  const GenerateOptions options = LabContext::base_greedy_options(new_tokens, use_cache);  // the same work each time
  const std::vector<std::vector<int>> batch = {prompt};
  for (int repeat = 1; repeat < repeats; ++repeat)
    samples.add(lab.generate(lab.base_transformer(), batch, options).stats);
  return samples;
}

}  // namespace

ReportSection timing_section(LabContext& lab) {
  ReportSection section;
  section.key = "time";
  section.title = "Time to first token and time between tokens";
  const int repeats = lab.scale().timing_repeats;
  section.paragraph(
      "Two times matter to someone waiting for an answer. The **time to first token (TTFT)** runs from the request "
      "to the first new token: the model must read the whole prompt (the prefill) and choose one token. The "
      "**inter-token time** is the mean time between the later tokens. With the cache, a later step feeds one token "
      "and attends over the stored keys and values; without it, a later step redoes a prefill of the whole sequence "
      "so far. So the cache should leave TTFT alone and shrink the inter-token time — by about the factor by which "
      "it shrinks the tokens fed per step. Each number below is the median of " +
      std::to_string(repeats) + (repeats == 1 ? " run" : " runs") + " on " + std::to_string(lab.threads()) +
      " threads (the machine may be shared, so single runs are noisy; the ratios are what to read).");

  lab.progress("  P = 183, N = 64: " + std::to_string(repeats) + " repeat(s) with and without the cache");
  const std::vector<int>& prompt = lab.genesis_prompt();
  const TimingSamples cached = time_runs(lab, prompt, kHeadlineNewTokens, true, repeats);
  const TimingSamples uncached = time_runs(lab, prompt, kHeadlineNewTokens, false, repeats);
  const double ttft_ratio = median(uncached.ttft_ms) / median(cached.ttft_ms);
  const double itl_ratio = median(uncached.itl_ms) / median(cached.itl_ms);
  const double total_ratio = median(uncached.total_ms) / median(cached.total_ms);
  section.table(ReportTable{
      {"P = 183, N = 64", "TTFT (ms)", "inter-token time (ms)", "total (ms)"},
      {{"with cache", fixed(median(cached.ttft_ms), 1), fixed(median(cached.itl_ms), 2),
        fixed(median(cached.total_ms), 0)},
       {"without cache", fixed(median(uncached.ttft_ms), 1), fixed(median(uncached.itl_ms), 2),
        fixed(median(uncached.total_ms), 0)},
       {"without ÷ with", fixed(ttft_ratio, 2) + "×", fixed(itl_ratio, 1) + "×", fixed(total_ratio, 1) + "×"}}});
  section.paragraph("TTFT is about the same in both modes (ratio " + fixed(ttft_ratio, 2) +
                    "): the first step is the same prefill of 183 tokens. The time between later tokens is " +
                    fixed(itl_ratio, 0) + "× longer without the cache, because each such step re-reads " +
                    std::to_string(kHeadlinePromptTokens + 1) + " to " +
                    std::to_string(kHeadlinePromptTokens + kHeadlineNewTokens - 1) +
                    " tokens instead of one. "
                    "This is why a long document to summarise still makes the user wait before the first word, "
                    "cache or not: only techniques that make the prefill itself cheaper (or reuse a cached prompt "
                    "prefix across requests) shorten TTFT.");

  // TTFT and inter-token time against the prompt length P, with N small: TTFT grows with P in both modes; the
  // inter-token time grows with P only without the cache.
  const int new_tokens = lab.scale().ttft_new_tokens;
  PlotSeries ttft_cached{"TTFT, with cache", {}, {}, "linespoints pointtype 7"};
  PlotSeries ttft_uncached{"TTFT, without cache", {}, {}, "linespoints pointtype 5 dashtype 2"};
  PlotSeries itl_cached{"inter-token, with cache", {}, {}, "linespoints pointtype 9"};
  PlotSeries itl_uncached{"inter-token, without cache", {}, {}, "linespoints pointtype 11"};
  ReportTable against_prompt{
      {"P", "TTFT with cache (ms)", "TTFT without (ms)", "inter-token with (ms)", "inter-token without (ms)"}, {}};
  nlohmann::json by_prompt = nlohmann::json::array();
  for (int prompt_tokens : lab.scale().ttft_prompt_tokens) {
    lab.progress("  TTFT at P = " + std::to_string(prompt_tokens) + ", N = " + std::to_string(new_tokens));
    const std::vector<int> sized_prompt = lab.base_prompt_of_length(prompt_tokens);
    const TimingSamples with_cache = time_runs(lab, sized_prompt, new_tokens, true, repeats);
    const TimingSamples without_cache = time_runs(lab, sized_prompt, new_tokens, false, repeats);
    ttft_cached.x.push_back(prompt_tokens);
    ttft_cached.y.push_back(median(with_cache.ttft_ms));
    ttft_uncached.x.push_back(prompt_tokens);
    ttft_uncached.y.push_back(median(without_cache.ttft_ms));
    itl_cached.x.push_back(prompt_tokens);
    itl_cached.y.push_back(median(with_cache.itl_ms));
    itl_uncached.x.push_back(prompt_tokens);
    itl_uncached.y.push_back(median(without_cache.itl_ms));
    against_prompt.rows.push_back({std::to_string(prompt_tokens), fixed(ttft_cached.y.back(), 1),
                                   fixed(ttft_uncached.y.back(), 1), fixed(itl_cached.y.back(), 2),
                                   fixed(itl_uncached.y.back(), 2)});
    by_prompt.push_back({{"prompt_tokens", prompt_tokens},
                         {"new_tokens", new_tokens},
                         {"cached", with_cache.to_json()},
                         {"uncached", without_cache.to_json()}});
  }
  section.paragraph("The same measurement over prompt lengths P (N = " + std::to_string(new_tokens) + "):");
  section.table(std::move(against_prompt));
  section.plot(PlotSpec{"ttft_against_prompt.svg",
                        "TTFT and inter-token time against prompt length",
                        "prompt length P (tokens)",
                        "time (ms, log scale)",
                        false,
                        true,
                        {},
                        {ttft_cached, ttft_uncached, itl_uncached, itl_cached}},
               "TTFT rises with P in both modes and the two lines lie on top of each other. Without the cache the "
               "inter-token time rises with P too (every step is a prefill); with the cache it stays near the cost "
               "of one token.");

  section.data["repeats"] = repeats;
  section.data["threads"] = lab.threads();
  section.data["headline"] = {{"prompt_tokens", kHeadlinePromptTokens},
                              {"new_tokens", kHeadlineNewTokens},
                              {"cached", cached.to_json()},
                              {"uncached", uncached.to_json()},
                              {"ttft_ratio", ttft_ratio},
                              {"itl_ratio", itl_ratio},
                              {"total_ratio", total_ratio}};
  section.data["against_prompt_length"] = by_prompt;
  section.summary.push_back("time, P = 183, N = 64 (median of " + std::to_string(repeats) + "): TTFT " +
                            fixed(median(cached.ttft_ms), 1) + " vs " + fixed(median(uncached.ttft_ms), 1) + " ms (" +
                            fixed(ttft_ratio, 2) + "×), inter-token " + fixed(median(cached.itl_ms), 2) + " vs " +
                            fixed(median(uncached.itl_ms), 2) + " ms (" + fixed(itl_ratio, 0) + "×), total " +
                            fixed(total_ratio, 1) + "×");
  return section;
}

}  // namespace minigen::lab
