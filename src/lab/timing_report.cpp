// Section 3, written: the cache shortens the time between tokens, not the time to the first token — the first
// token needs the whole prompt computed (the prefill) either way; only the later steps get cheaper. Whether this
// run showed that is decided by the measured ratios (report_thresholds.h), not assumed.
#include <string>
#include <vector>

#include "core/format.h"
#include "lab/lab_scale.h"
#include "lab/report_thresholds.h"
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

// The headline's TTFT: the same prefill in both modes, so the ratio should be about 1.
std::string ttft_sentence(double ttft_ratio, const Words& say) {
  const std::string ratio = fixed(ttft_ratio, 2);
  switch (compare_ratio(ttft_ratio)) {
    case Comparison::kAboutSame:
      return say("TTFT is about the same in both modes (without ÷ with = " + ratio +
                     ", within ±10 %): the first step is the same prefill of 183 tokens.",
                 "两种模式的首个 token 时间（TTFT）大致相同（无缓存 ÷ 有缓存 = " + ratio +
                     "，在 ±10 % 以内）：第一步都是同样的 183 个 token 的预填充。");
    case Comparison::kLarger:
      return say("TTFT was " + ratio +
                     "× as long without the cache, more than the ±10 % within which this report calls two times the "
                     "same, although the first step is the same prefill of 183 tokens in both modes: the cache cannot "
                     "cause this difference, so it comes from the run (a shared machine, few repeats).",
                 "无缓存时的首个 token 时间是有缓存时的 " + ratio +
                     " 倍，超出了本报告视为“相同”的 ±10 % 范围；但两种模式的第一步都是同样的 183 个 token 的预填充，"
                     "KV 缓存不可能造成这一差别，它来自运行环境（共享的机器、重复次数少）。");
    case Comparison::kSmaller:
      break;
  }
  return say("TTFT was shorter without the cache (without ÷ with = " + ratio +
                 ", beyond ±10 %), although the first step is the same prefill of 183 tokens in both modes: the cache "
                 "cannot cause this difference, so it comes from the run (a shared machine, few repeats).",
             "无缓存时的首个 token 时间反而更短（无缓存 ÷ 有缓存 = " + ratio +
                 "，超出 ±10 %）；但两种模式的第一步都是同样的 183 个 token 的预填充，KV 缓存不可能造成这一差别，"
                 "它来自运行环境（共享的机器、重复次数少）。");
}

// The headline speed-up against the drop in tokens fed per step (184 … 246 without the cache, mean P + N/2, against
// one): were a step's time proportional to the tokens it feeds, the two would match. They do not when each step
// also pays costs that do not grow with its tokens; those are estimated from the two measured times, so the
// sentence explains the gap with this run's numbers.
std::string fixed_cost_sentence(double cached_itl_ms, double uncached_itl_ms, const Words& say) {
  const double mean_fed = kHeadlinePromptTokens + kHeadlineNewTokens / 2.0;
  const double itl_ratio = uncached_itl_ms / cached_itl_ms;
  const std::string fed = fixed(mean_fed, 0);
  const std::string range = std::to_string(kHeadlinePromptTokens + 1) + " … " +
                            std::to_string(kHeadlinePromptTokens + kHeadlineNewTokens - 1);
  switch (compare_ratio(itl_ratio / mean_fed)) {
    case Comparison::kAboutSame:
      return say(" That is about the drop in tokens fed per step (" + fed +
                     "× on average, within ±10 %): here a step's time grows in proportion to the tokens it feeds.",
                 "这与每步输入 token 数减少的倍数（平均 " + fed +
                     " 倍）大致相同（在 ±10 % 以内）：这里一步的时间与它输入的 token 数成正比。");
    case Comparison::kLarger:
      return say(" That is more than the drop in tokens fed per step (" + fed +
                     "× on average): without the cache each of those tokens also attends over the whole sequence, "
                     "work that grows faster than the token count.",
                 "这比每步输入 token 数减少的倍数（平均 " + fed +
                     " 倍）还大：无缓存时这些 token 每一个还要在整个序列上做注意力，这部分工作比 token 数增长得更快。");
    case Comparison::kSmaller:
      break;
  }
  const double proportional_ms = uncached_itl_ms / mean_fed;
  const double fixed_ms = cached_itl_ms - proportional_ms;
  const std::string per_token = fixed(uncached_itl_ms, 2) + " ms ÷ " + fed + " = " + fixed(proportional_ms, 2) + " ms";
  return say(
      " That is less than the drop in tokens fed per step (" + fed + "× on average, " + range +
          " against 1), because a step also has costs that do not grow with the tokens it feeds: were the "
          "time proportional to them, a cached step would take " +
          per_token + "; it took " + fixed(cached_itl_ms, 2) + " ms, so about " + fixed(fixed_ms, 2) +
          " ms of every step is fixed (each weight is read once per step however few tokens it multiplies, "
          "and the threads are handed work and gathered several times per layer), and the uncached step pays it once "
          "for " +
          fed + " tokens.",
      "这比每步输入 token 数减少的倍数（平均 " + fed + " 倍，" + range +
          " 个对 1 个）小，因为每一步还有不随输入 token 数增长的开销：如果时间与 token 数成正比，有缓存的一步应为 " +
          per_token + "；实测为 " + fixed(cached_itl_ms, 2) + " ms，所以每一步约有 " + fixed(fixed_ms, 2) +
          " ms 是固定的（不论一步乘几个 token，每个权重都要读一遍；线程在每一层都要多次分派和会合），而无缓存的一步"
          "为 " +
          fed + " 个 token 只付一次。");
}

// The headline's time per token: without the cache each later step is a prefill of the whole sequence so far.
std::string itl_sentence(double cached_itl_ms, double uncached_itl_ms, const Words& say) {
  const double itl_ratio = uncached_itl_ms / cached_itl_ms;

  const std::string fed = std::to_string(kHeadlinePromptTokens + 1) + " to " +
                          std::to_string(kHeadlinePromptTokens + kHeadlineNewTokens - 1);
  const std::string fed_zh = std::to_string(kHeadlinePromptTokens + 1) + " 到 " +
                             std::to_string(kHeadlinePromptTokens + kHeadlineNewTokens - 1);
  switch (compare_ratio(itl_ratio)) {
    case Comparison::kLarger:
      return say(
          "The time between later tokens is " + fixed(itl_ratio, 1) +
              "× as long without the cache, because each such step re-reads " + fed + " tokens instead of one." +
              fixed_cost_sentence(cached_itl_ms, uncached_itl_ms, say) +
              " This is why a long document to summarise still makes the user wait "
              "before the first word, cache or not: only techniques that make the prefill itself cheaper (or "
              "reuse a cached prompt prefix across requests) shorten TTFT.",
          "无缓存时，之后每个 token 的时间是有缓存时的 " + fixed(itl_ratio, 1) + " 倍，因为每一步都要重新读入 " +
              fed_zh + " 个 token，而不是一个。" + fixed_cost_sentence(cached_itl_ms, uncached_itl_ms, say) +
              "这也说明了为什么总结一篇长文档时，无论有没有缓存，用户都要等一会儿才看到第"
              "一个字：只有让预填充本身更便宜的技术（或在请求之间复用已缓存的提示前缀）才能缩短首个 token 时间。");
    case Comparison::kAboutSame:
      return say("The time between later tokens is about the same in both modes (ratio " + fixed(itl_ratio, 2) +
                     ", within ±10 %), although without the cache each step re-reads " + fed +
                     " tokens instead of one: on this model and machine the fixed cost of a forward call hid the "
                     "extra tokens. The module's claim shows in the token counts of section 2, not in this run's "
                     "times.",
                 "两种模式下之后每个 token 的时间大致相同（比值 " + fixed(itl_ratio, 2) +
                     "，在 ±10 % 以内），尽管无缓存时"
                     "每一步要重新读入 " +
                     fed_zh +
                     " 个 token 而不是一个：在这个模型和这台机器上，每次前向调用的固定开销掩盖了多出的 token。"
                     "课程的结论体现在第 2 节的 token 计数中，而不是本次运行的时间里。");
    case Comparison::kSmaller:
      break;
  }
  return say("The time between later tokens was shorter without the cache (ratio " + fixed(itl_ratio, 2) +
                 "), although each such step re-reads " + fed +
                 " tokens instead of one: this contradicts the module's claim; the run's times are not trustworthy "
                 "(check what else the machine ran).",
             "无缓存时之后每个 token 的时间反而更短（比值 " + fixed(itl_ratio, 2) + "），尽管每一步要重新读入 " +
                 fed_zh +
                 " 个 token 而不是一个：这与课程的结论相反，本次运行的时间不可信（请检查机器上同时运行的其他程序）。");
}

double ratio_of(double numerator, double denominator) { return denominator > 0 ? numerator / denominator : 0; }

// What the against-P table shows, read from it: do the TTFT lines coincide, and does the time per token grow with P
// faster without the cache than with it?
std::string against_prompt_caption(const TimingData& data, const Words& say) {
  const std::vector<TimingPoint>& points = data.against_prompt_length;
  if (points.size() < 2) {
    return say("Only one prompt length was measured: this run has no trend against P to read.",
               "本次只测量了一个提示长度：没有随 P 变化的趋势可读。");
  }
  double lowest_ttft_ratio = 1e300;
  double highest_ttft_ratio = 0;
  for (const TimingPoint& point : points) {
    const double ratio = ratio_of(median(point.uncached.ttft_ms), median(point.cached.ttft_ms));
    lowest_ttft_ratio = std::min(lowest_ttft_ratio, ratio);
    highest_ttft_ratio = std::max(highest_ttft_ratio, ratio);
  }
  const bool ttft_together = compare_ratio(lowest_ttft_ratio) == Comparison::kAboutSame &&
                             compare_ratio(highest_ttft_ratio) == Comparison::kAboutSame;
  const std::string ratios = fixed(lowest_ttft_ratio, 2) + "–" + fixed(highest_ttft_ratio, 2);
  std::string text =
      ttft_together
          ? say("The two TTFT lines lie on top of each other (without ÷ with between " + ratios +
                    " at every P, within ±10 %). ",
                "两条首个 token 时间的曲线重合（每个 P 下无缓存 ÷ 有缓存都在 " + ratios + " 之间，±10 % 以内）。")
          : say("The two TTFT lines part at some P (without ÷ with between " + ratios +
                    ", beyond ±10 %): the same prefill in both modes, so that is the run's noise. ",
                "两条首个 token 时间的曲线在某些 P 处分开（无缓存 ÷ 有缓存在 " + ratios +
                    " 之间，超出 ±10 %）：两种模式的预填充相同，所以这是运行中的噪声。");
  const TimingPoint& first = points.front();
  const TimingPoint& last = points.back();
  const double cached_growth = ratio_of(median(last.cached.itl_ms), median(first.cached.itl_ms));
  const double uncached_growth = ratio_of(median(last.uncached.itl_ms), median(first.uncached.itl_ms));
  const std::string span = "P = " + std::to_string(first.prompt_tokens) + " → " + std::to_string(last.prompt_tokens);
  const std::string numbers = " (" + span + ": ×" + fixed(uncached_growth, 1) + " / ×" + fixed(cached_growth, 1) + ")";
  if (compare_ratio(uncached_growth / cached_growth) == Comparison::kLarger) {
    text += say("From the shortest to the longest prompt the time per token grew more without the cache than with it" +
                    numbers + ": without the cache every step is a prefill of the whole sequence.",
                "从最短到最长的提示，每个 token 的时间在无缓存时比有缓存时增长得更多" + numbers +
                    "：无缓存时每一步都是对整个序列的预填充。");
  } else {
    text +=
        say("From the shortest to the longest prompt the time per token did not grow more without the cache "
            "than with it" +
                numbers + ", beyond ±10 %: on this model the prompt lengths measured were too short to show it.",
            "从最短到最长的提示，无缓存时每个 token 的时间并没有比有缓存时增长得更多" + numbers +
                "（超出 ±10 % 才算）：对这个模型来说，所测的提示长度太短，显示不出差别。");
  }
  return text;
}

// TTFT and inter-token time against the prompt length P, with N small.
void add_against_prompt_length(ReportSection& section, const TimingData& data, const Words& say) {
  PlotSeries ttft_cached{say("TTFT, with cache", "首个 token 时间，有缓存"), {}, {}, "linespoints pointtype 7"};
  PlotSeries ttft_uncached{
      say("TTFT, without cache", "首个 token 时间，无缓存"), {}, {}, "linespoints pointtype 5 dashtype 2"};
  PlotSeries itl_cached{
      say("time per token, with cache", "每个 token 的时间，有缓存"), {}, {}, "linespoints pointtype 9"};
  PlotSeries itl_uncached{
      say("time per token, without cache", "每个 token 的时间，无缓存"), {}, {}, "linespoints pointtype 11"};
  ReportTable table{{"P", say("TTFT with cache (ms)", "首个 token 时间，有缓存 (ms)"),
                     say("TTFT without (ms)", "首个 token 时间，无缓存 (ms)"),
                     say("inter-token with (ms)", "每个 token 的时间，有缓存 (ms)"),
                     say("inter-token without (ms)", "每个 token 的时间，无缓存 (ms)")},
                    {}};
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
  const std::string n = std::to_string(data.against_prompt_new_tokens);
  section.paragraph(say("The same measurement over prompt lengths P (N = " + n + "):",
                        "在不同的提示长度 P 下做同样的测量（N = " + n + "）："));
  section.table(std::move(table));
  section.plot(PlotSpec{"ttft_against_prompt.svg",
                        say("TTFT and inter-token time against prompt length",
                            "首个 token 时间和每个 token 的时间随提示长度的变化"),
                        say("prompt length P (tokens)", "提示长度 P（token）"),
                        say("time (ms, log scale)", "时间（ms，对数坐标）"),
                        false,
                        true,
                        {},
                        {ttft_cached, ttft_uncached, itl_uncached, itl_cached},
                        std::nullopt,
                        "top left"},
               against_prompt_caption(data, say));
  section.data["against_prompt_length"] = by_prompt;
}

}  // namespace

ReportSection timing_report(const TimingData& data, Language language) {
  const Words say{language};
  ReportSection section;
  section.key = "time";
  section.title = say("Time to first token and time between tokens", "首个 token 时间与每个 token 的时间");
  const std::string runs = std::to_string(data.repeats);
  const std::string threads = std::to_string(data.threads);
  section.paragraph(say(
      "Two times matter to someone waiting for an answer. The **time to first token (TTFT)** runs from the request "
      "to the first new token: the model must read the whole prompt (the prefill) and choose one token. The "
      "**inter-token time** is the mean time between the later tokens. With the cache, a later step feeds one token "
      "and attends over the stored keys and values; without it, a later step redoes a prefill of the whole sequence "
      "so far. So the cache should leave TTFT alone and shrink the inter-token time — by at most about the factor by "
      "which it shrinks the tokens fed per step, less where a step has costs that do not grow with its tokens "
      "(measured below). Each number below is the median of " +
          runs + (data.repeats == 1 ? " run" : " runs") + " on " + threads +
          " threads (the machine may be shared, so single runs are noisy; the ratios are what to read).",
      "等待回答的人关心两个时间。**首个 token 时间（TTFT）**从发出请求到第一个新 "
      "token：模型必须读完整个提示（预填充），"
      "再选出一个 token。**每个 token 的时间**是之后各 token 之间的平均间隔。有 KV 缓存时，之后的每一步只输入一个 "
      "token，"
      "并在已存的键和值上做注意力；没有缓存时，之后的每一步都要把到目前为止的整个序列重新预填充一遍。"
      "因此缓存应当不影响首个 token 时间，而缩短每个 token 的时间——缩短的倍数至多约等于每步输入 token "
      "数减少的倍数；一步中不随 token 数增长的开销会让它更小（见下面的实测）。"
      "下面每个数字都是 " +
          runs + " 次运行的中位数，使用 " + threads + " 个线程（机器可能被共享，单次运行有噪声；应看的是比值）。"));

  const TimingSamples& cached = data.headline.cached;
  const TimingSamples& uncached = data.headline.uncached;
  const double ttft_ratio = median(uncached.ttft_ms) / median(cached.ttft_ms);
  const double itl_ratio = median(uncached.itl_ms) / median(cached.itl_ms);
  const double total_ratio = median(uncached.total_ms) / median(cached.total_ms);
  section.table(ReportTable{{"P = 183, N = 64", say("TTFT (ms)", "首个 token 时间 (ms)"),
                             say("inter-token time (ms)", "每个 token 的时间 (ms)"), say("total (ms)", "总时间 (ms)")},
                            {{say("with cache", "有缓存"), fixed(median(cached.ttft_ms), 1),
                              fixed(median(cached.itl_ms), 2), fixed(median(cached.total_ms), 0)},
                             {say("without cache", "无缓存"), fixed(median(uncached.ttft_ms), 1),
                              fixed(median(uncached.itl_ms), 2), fixed(median(uncached.total_ms), 0)},
                             {say("without ÷ with", "无缓存 ÷ 有缓存"), fixed(ttft_ratio, 2) + "×",
                              fixed(itl_ratio, 1) + "×", fixed(total_ratio, 1) + "×"}}});
  section.paragraph(ttft_sentence(ttft_ratio, say) + say(" ", "") +
                    itl_sentence(median(cached.itl_ms), median(uncached.itl_ms), say));
  add_against_prompt_length(section, data, say);

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
