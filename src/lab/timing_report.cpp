// Section 3, written: the cache shortens the time between tokens, not the time to the first token — the first
// token needs the whole prompt computed (the prefill) either way; only the later steps get cheaper.
#include <string>
#include <vector>

#include "core/format.h"
#include "lab/lab_scale.h"
#include "lab/section_reports.h"

namespace minigen::lab {
namespace {

nlohmann::json samples_json(const TimingSamples& samples) {
  return {{"ttft_ms", samples.ttft_ms},
          {"itl_ms", samples.itl_ms},
          {"total_ms", samples.total_ms},
          {"ttft_ms_median", median(samples.ttft_ms)},
          {"itl_ms_median", median(samples.itl_ms)},
          {"total_ms_median", median(samples.total_ms)}};
}

// TTFT and inter-token time against the prompt length P, with N small: TTFT grows with P in both modes; the
// inter-token time grows with P only without the cache.
void add_against_prompt_length(ReportSection& section, const TimingData& data) {
  PlotSeries ttft_cached{"TTFT, with cache", {}, {}, "linespoints pointtype 7"};
  PlotSeries ttft_uncached{"TTFT, without cache", {}, {}, "linespoints pointtype 5 dashtype 2"};
  PlotSeries itl_cached{"inter-token, with cache", {}, {}, "linespoints pointtype 9"};
  PlotSeries itl_uncached{"inter-token, without cache", {}, {}, "linespoints pointtype 11"};
  ReportTable table{
      {"P", "TTFT with cache (ms)", "TTFT without (ms)", "inter-token with (ms)", "inter-token without (ms)"}, {}};
  nlohmann::json by_prompt = nlohmann::json::array();
  for (const TimingPoint& point : data.against_prompt_length) {
    ttft_cached.x.push_back(point.prompt_tokens);
    ttft_cached.y.push_back(median(point.cached.ttft_ms));
    ttft_uncached.x.push_back(point.prompt_tokens);
    ttft_uncached.y.push_back(median(point.uncached.ttft_ms));
    itl_cached.x.push_back(point.prompt_tokens);
    itl_cached.y.push_back(median(point.cached.itl_ms));
    itl_uncached.x.push_back(point.prompt_tokens);
    itl_uncached.y.push_back(median(point.uncached.itl_ms));
    table.rows.push_back({std::to_string(point.prompt_tokens), fixed(ttft_cached.y.back(), 1),
                          fixed(ttft_uncached.y.back(), 1), fixed(itl_cached.y.back(), 2),
                          fixed(itl_uncached.y.back(), 2)});
    by_prompt.push_back({{"prompt_tokens", point.prompt_tokens},
                         {"new_tokens", point.new_tokens},
                         {"cached", samples_json(point.cached)},
                         {"uncached", samples_json(point.uncached)}});
  }
  section.paragraph(
      "The same measurement over prompt lengths P (N = " + std::to_string(data.against_prompt_new_tokens) + "):");
  section.table(std::move(table));
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
  section.data["against_prompt_length"] = by_prompt;
}

}  // namespace

ReportSection timing_report(const TimingData& data) {
  ReportSection section;
  section.key = "time";
  section.title = "Time to first token and time between tokens";
  section.paragraph(
      "Two times matter to someone waiting for an answer. The **time to first token (TTFT)** runs from the request "
      "to the first new token: the model must read the whole prompt (the prefill) and choose one token. The "
      "**inter-token time** is the mean time between the later tokens. With the cache, a later step feeds one token "
      "and attends over the stored keys and values; without it, a later step redoes a prefill of the whole sequence "
      "so far. So the cache should leave TTFT alone and shrink the inter-token time — by about the factor by which "
      "it shrinks the tokens fed per step. Each number below is the median of " +
      std::to_string(data.repeats) + (data.repeats == 1 ? " run" : " runs") + " on " + std::to_string(data.threads) +
      " threads (the machine may be shared, so single runs are noisy; the ratios are what to read).");

  const TimingSamples& cached = data.headline.cached;
  const TimingSamples& uncached = data.headline.uncached;
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
  add_against_prompt_length(section, data);

  section.data["repeats"] = data.repeats;
  section.data["threads"] = data.threads;
  section.data["headline"] = {{"prompt_tokens", kHeadlinePromptTokens},
                              {"new_tokens", kHeadlineNewTokens},
                              {"cached", samples_json(cached)},
                              {"uncached", samples_json(uncached)},
                              {"ttft_ratio", ttft_ratio},
                              {"itl_ratio", itl_ratio},
                              {"total_ratio", total_ratio}};
  section.summary.push_back("time, P = 183, N = 64 (median of " + std::to_string(data.repeats) + "): TTFT " +
                            fixed(median(cached.ttft_ms), 1) + " vs " + fixed(median(uncached.ttft_ms), 1) + " ms (" +
                            fixed(ttft_ratio, 2) + "×), inter-token " + fixed(median(cached.itl_ms), 2) + " vs " +
                            fixed(median(uncached.itl_ms), 2) + " ms (" + fixed(itl_ratio, 0) + "×), total " +
                            fixed(total_ratio, 1) + "×");
  return section;
}

}  // namespace minigen::lab
