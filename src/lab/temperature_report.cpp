// Section 5, written: how the spread of answers, their lengths and the entropy per token move with temperature,
// the first answers to one prompt at each setting, and the distinct answers as a plot.
#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "core/format.h"
#include "lab/report_thresholds.h"
#include "lab/section_reports.h"

namespace minigen::lab {
namespace {

constexpr int kShownAnswers = 3;
constexpr std::size_t kShownAnswerBytes = 160;

std::string shown_answer(const std::string& answer) {
  std::string text = printable_text(answer);
  if (text.size() > kShownAnswerBytes) {
    std::size_t cut = kShownAnswerBytes;
    while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) --cut;  // not inside a character
    text = text.substr(0, cut) + "…";
  }
  // Quotes and backslashes the model wrote are escaped (Markdown shows \" as " and \\ as \), so the quoted answer
  // ends where it ends.
  std::string escaped;
  for (const char c : text) {
    if (c == '"' || c == '\\') escaped += '\\';
    escaped += c;
  }
  return "\"" + escaped + "\"";
}

// A setting's values averaged over its prompts.
struct SettingMeans {
  double distinct_answers = 0;
  double eos_share = 0;
  double entropy_bits = 0;
  bool every_prompt_one_answer = true;
};

SettingMeans means_of(const TemperatureSettingResult& setting) {
  SettingMeans means;
  for (const TemperaturePromptResult& prompt : setting.prompts) {
    means.distinct_answers += prompt.distinct_answers;
    means.eos_share += prompt.eos_share;
    means.entropy_bits += prompt.mean_entropy_bits;
    means.every_prompt_one_answer = means.every_prompt_one_answer && prompt.distinct_answers == 1;
  }
  const double prompts = static_cast<double>(std::max<std::size_t>(1, setting.prompts.size()));
  means.distinct_answers /= prompts;
  means.eos_share /= prompts;
  means.entropy_bits /= prompts;
  return means;
}

// The sampled settings (T > 0), lowest T first: the entropy column means the same thing only on these rows, since
// the greedy row shows the model's T = 1 entropy along its one path and draws nothing.
std::vector<const TemperatureSettingResult*> sampled_settings(const TemperatureData& data) {
  std::vector<const TemperatureSettingResult*> sampled;
  for (const TemperatureSettingResult& setting : data.settings) {
    if (setting.temperature > 0) sampled.push_back(&setting);
  }
  return sampled;
}

// How the entropy of the distribution drawn from moved with T, over every sampled row: "about the same" only when
// the whole range (not just the two ends) is within ±10 %, "rose with T" only when it rose at every row.
std::string entropy_sentence(const TemperatureData& data, const Words& say) {
  const std::vector<const TemperatureSettingResult*> sampled = sampled_settings(data);
  if (sampled.size() < 2) return "";
  std::vector<double> entropy;
  for (const TemperatureSettingResult* setting : sampled) entropy.push_back(means_of(*setting).entropy_bits);
  const auto [lowest, highest] = std::minmax_element(entropy.begin(), entropy.end());
  const std::string span = say.label(sampled.front()->name) + " → " + say.label(sampled.back()->name) +
                           say(": ", "：") + fixed(entropy.front(), 2) + " → " + fixed(entropy.back(), 2);
  const std::string greedy_note =
      data.settings.front().temperature == 0
          ? say(" The greedy row (" + fixed(means_of(data.settings.front()).entropy_bits, 2) +
                    ") is left out: it is the model's own T = 1 entropy along its single path, since greedy draws "
                    "nothing.",
                "贪心那一行（" + fixed(means_of(data.settings.front()).entropy_bits, 2) +
                    "）不在比较之内：贪心解码不抽样，它显示的是模型沿唯一路径在 T = 1 下自身的不确定性。")
          : "";
  if (*lowest > 0 && compare_ratio(*highest / *lowest) == Comparison::kAboutSame) {
    return say("The entropy of the distribution drawn from stayed about the same across the sampled rows (" +
                   fixed(*lowest, 2) + "–" + fixed(*highest, 2) + " bits per token, within ±10 %).",
               "各抽样行所抽取的分布的熵大致不变（每个 token " + fixed(*lowest, 2) + "–" + fixed(*highest, 2) +
                   " 比特，在 ±10 % 以内）。") +
           greedy_note + say(" ", "");
  }
  std::string text;
  if (std::is_sorted(entropy.begin(), entropy.end()) && entropy.back() > entropy.front()) {
    text = say("The entropy of the distribution drawn from rose with T at every row (" + span + " bits per token).",
               "所抽取的分布的熵随温度逐行升高（" + span + " 比特/token）。");
  } else if (entropy.back() > entropy.front()) {
    text = say("The entropy of the distribution drawn from rose overall (" + span +
                   " bits per token), though not at every row of the table.",
               "所抽取的分布的熵总体上升高了（" + span + " 比特/token），但并非逐行升高。");
  } else {
    text = say("The entropy of the distribution drawn from did not rise with T (" + span + " bits per token).",
               "所抽取的分布的熵没有随温度升高（" + span + " 比特/token）。");
  }
  return text + greedy_note + say(" ", "");
}

// Whether the openings (the first few tokens) spread more slowly than whole answers, read from the two columns: an
// answer differs as soon as one token does, so openings can only be as varied or less.
std::string openings_sentence(const TemperatureData& data, const Words& say) {
  const TemperatureSettingResult* widest = nullptr;
  double widest_gap = 0;
  for (const TemperatureSettingResult* setting : sampled_settings(data)) {
    double gap = 0;
    for (const TemperaturePromptResult& prompt : setting->prompts) {
      gap += prompt.distinct_answers - prompt.distinct_openings;
    }
    gap /= static_cast<double>(std::max<std::size_t>(1, setting->prompts.size()));
    if (gap > widest_gap) {
      widest_gap = gap;
      widest = setting;
    }
  }
  const std::string tokens = std::to_string(data.opening_tokens);
  if (widest == nullptr) {
    return say("The openings (first " + tokens +
                   " tokens) were as varied as the whole answers at every T: the "
                   "answers parted within their first " +
                   tokens + " tokens. ",
               "每个温度下，开头（前 " + tokens + " 个 token）都与整个回答一样分散：回答在前 " + tokens +
                   " 个 token 之内就分开了。");
  }
  double answers = 0;
  double openings = 0;
  for (const TemperaturePromptResult& prompt : widest->prompts) {
    answers += prompt.distinct_answers;
    openings += prompt.distinct_openings;
  }
  const double prompts = static_cast<double>(widest->prompts.size());
  return say("The openings (first " + tokens +
                 " tokens) spread more slowly than whole answers, which differ as soon "
                 "as one token does: at " +
                 say.label(widest->name) + ", " + fixed(openings / prompts, 1) + " distinct openings against " +
                 fixed(answers / prompts, 1) + " distinct answers per prompt. ",
             "开头（前 " + tokens + " 个 token）比整个回答分散得慢，因为回答只要有一个 token 不同就算不同：" +
                 say.label(widest->name) + " 时每个提示平均有 " + fixed(openings / prompts, 1) +
                 " 个不同的开头，而不同的回答有 " + fixed(answers / prompts, 1) + " 个。");
}

// The paragraph before the answers: whether the lowest temperature's samples start as the greedy answer does
// (kGreedyVariationShare of them), and the highest temperature's entropy, from which the long tail is drawn.
std::string reading_the_answers(const TemperatureData& data, const Words& say) {
  const std::vector<const TemperatureSettingResult*> sampled = sampled_settings(data);
  std::string text =
      say("Whether the spread is creativity or noise shows in the text. ", "这种分散是创造力还是噪声，要看文本本身。");
  const TemperatureSettingResult& greedy = data.settings.front();
  if (greedy.temperature == 0 && !sampled.empty()) {
    const TemperatureSettingResult& coolest = *sampled.front();
    int same = 0;
    int total = 0;
    for (std::size_t p = 0; p < coolest.prompts.size() && p < greedy.prompts.size(); ++p) {
      if (greedy.prompts[p].openings.empty()) continue;
      for (const std::vector<int>& opening : coolest.prompts[p].openings) {
        same += opening == greedy.prompts[p].openings.front() ? 1 : 0;
        ++total;
      }
    }
    const std::string tokens = std::to_string(data.opening_tokens);
    const std::string count = std::to_string(same) + say(" of ", " / ") + std::to_string(total);
    const std::string at = say.label(coolest.name);
    if (total > 0 && same >= kGreedyVariationShare * total) {
      text += say(
          "At " + at + ", " + count + " samples open with the greedy answer's first " + tokens +
              " tokens: low temperature draws variations of the greedy answer. ",
          at + " 时，" + count + " 个样本的前 " + tokens + " 个 token 与贪心回答相同：低温抽出的是贪心回答的变体。");
    } else if (total > 0) {
      text += say("At " + at + ", only " + count + " samples open with the greedy answer's first " + tokens +
                      " tokens: on this model even the lowest temperature measured leaves the greedy path early. ",
                  at + " 时，只有 " + count + " 个样本的前 " + tokens +
                      " 个 token 与贪心回答相同：在这个模型上，即使所测的最低温度也很早就离开了贪心的路径。");
    }
  }
  if (!sampled.empty()) {
    const TemperatureSettingResult& hottest = *sampled.back();
    text += say("At " + say.label(hottest.name) + " each token is drawn from a distribution of " +
                    fixed(means_of(hottest).entropy_bits, 2) +
                    " bits on average, the long tail of the vocabulary "
                    "included. ",
                say.label(hottest.name) + " 时每个 token 平均从 " + fixed(means_of(hottest).entropy_bits, 2) +
                    " 比特的分布中抽出，词表的长尾也在其中。");
  }
  return text + say("Read the answers:", "请读下面的回答：");
}

// What the table says, from the lowest setting (greedy when measured) to the highest temperature: one greedy answer,
// more distinct answers and more entropy as T rises, and how the share ending with eos moved.
std::string reading_paragraph(const TemperatureData& data, const Words& say) {
  const TemperatureSettingResult& lowest = data.settings.front();
  const TemperatureSettingResult& highest = data.settings.back();
  const SettingMeans low = means_of(lowest);
  const SettingMeans high = means_of(highest);
  std::string text;
  if (lowest.temperature == 0) {
    text +=
        low.every_prompt_one_answer
            ? say("Greedy decoding gave one answer per prompt however many times it ran. ",
                  "贪心解码对每个提示无论运行多少次都只给出一个回答。")
            : say("**Greedy decoding gave more than one answer to a prompt** — it draws nothing, so this is a bug. ",
                  "**贪心解码对某个提示给出了不止一个回答**——它不做抽样，所以这是一个错误。");
  }
  const std::string from_to = say.label(lowest.name) + " → " + say.label(highest.name);
  if (data.settings.size() < 2) return text;
  if (high.distinct_answers > low.distinct_answers) {
    text += say("From " + from_to + " the answers spread: " + fixed(low.distinct_answers, 1) + " → " +
                    fixed(high.distinct_answers, 1) + " distinct answers per prompt on average. ",
                "从" + from_to + "，回答逐渐分散：每个提示平均 " + fixed(low.distinct_answers, 1) + " → " +
                    fixed(high.distinct_answers, 1) + " 个不同的回答。");
  } else {
    text += say("From " + from_to + " the answers did not spread: " + fixed(low.distinct_answers, 1) + " → " +
                    fixed(high.distinct_answers, 1) + " distinct answers per prompt on average. ",
                "从" + from_to + "，回答并没有分散：每个提示平均 " + fixed(low.distinct_answers, 1) + " → " +
                    fixed(high.distinct_answers, 1) + " 个不同的回答。");
  }
  text += entropy_sentence(data, say) + openings_sentence(data, say);
  const std::string eos = fixed(100 * low.eos_share, 0) + " % → " + fixed(100 * high.eos_share, 0) + " %";
  if (low.eos_share == 0 && high.eos_share == 0) {
    text += say("No answer ended with eos at either end, so this run says nothing about how T moves the stop token.",
                "两端都没有回答以 eos 结束，因此本次运行无法说明温度如何影响停止 token。");
  } else if (compare_ratio(low.eos_share > 0 ? high.eos_share / low.eos_share : 2.0) == Comparison::kAboutSame) {
    text += say("The share of answers that ended with eos stayed about the same (" + eos + ").",
                "以 eos 结束的回答比例大致不变（" + eos + "）。");
  } else {
    text += say("The share of answers that ended with eos moved with T (" + eos +
                    "): a flattened distribution makes the stop token one candidate among many.",
                "以 eos 结束的回答比例随温度变化（" + eos + "）：分布被压平后，停止 token 只是众多候选之一。");
  }
  return text;
}

// One row per setting: per-prompt counts listed, the rest averaged over the prompts.
std::vector<std::string> setting_row(const TemperatureSettingResult& setting, const Words& say) {
  std::string distinct_cell;
  std::string openings_cell;
  double length_sum = 0;
  double eos_sum = 0;
  double entropy_sum = 0;
  for (const TemperaturePromptResult& prompt : setting.prompts) {
    distinct_cell += (distinct_cell.empty() ? "" : ", ") + std::to_string(prompt.distinct_answers);
    openings_cell += (openings_cell.empty() ? "" : ", ") + std::to_string(prompt.distinct_openings);
    length_sum += prompt.mean_length_tokens;
    eos_sum += prompt.eos_share;
    entropy_sum += prompt.mean_entropy_bits;
  }
  const double prompts = static_cast<double>(setting.prompts.size());
  return {say.label(setting.name),
          distinct_cell,
          openings_cell,
          fixed(length_sum / prompts, 1),
          fixed(100.0 * eos_sum / prompts, 0) + " %",
          fixed(entropy_sum / prompts, 2)};
}

nlohmann::json setting_json(const TemperatureSettingResult& setting, int samples) {
  nlohmann::json per_prompt = nlohmann::json::array();
  for (const TemperaturePromptResult& prompt : setting.prompts) {
    per_prompt.push_back({{"prompt", prompt.prompt},
                          {"distinct_answers", prompt.distinct_answers},
                          {"distinct_openings", prompt.distinct_openings},
                          {"mean_length_tokens", prompt.mean_length_tokens},
                          {"eos_share", prompt.eos_share},
                          {"mean_entropy_bits", prompt.mean_entropy_bits},
                          {"answers", prompt.answers}});
  }
  return {{"setting", setting.name},
          {"temperature", setting.temperature},
          {"greedy", setting.temperature == 0},
          {"samples", samples},
          {"prompts", per_prompt}};
}

void add_distinct_plot(ReportSection& section, const TemperatureData& data, const Words& say) {
  const std::string opening_tokens = std::to_string(data.opening_tokens);
  std::vector<PlotSeries> series;
  static const char* const kStyles[] = {"linespoints pointtype 7", "linespoints pointtype 5", "linespoints pointtype 9",
                                        "linespoints pointtype 11"};
  for (const TemperaturePromptResult& prompt : data.settings.front().prompts) {
    series.push_back(PlotSeries{
        say("answers: ", "回答：") + say.quoted(prompt.prompt), {}, {}, kStyles[series.size() % std::size(kStyles)]});
  }
  PlotSeries openings{say("openings (first " + opening_tokens + " tokens), mean over prompts",
                          "开头（前 " + opening_tokens + " 个 token），各提示的平均"),
                      {},
                      {},
                      "linespoints dashtype 2 linecolor rgb 'black'"};
  for (const TemperatureSettingResult& setting : data.settings) {
    double openings_sum = 0;
    for (std::size_t p = 0; p < setting.prompts.size(); ++p) {
      series[p].x.push_back(setting.temperature);
      series[p].y.push_back(setting.prompts[p].distinct_answers);
      openings_sum += setting.prompts[p].distinct_openings;
    }
    openings.x.push_back(setting.temperature);
    openings.y.push_back(openings_sum / static_cast<int>(setting.prompts.size()));
  }
  series.push_back(std::move(openings));
  const std::string samples = std::to_string(data.samples);
  section.plot(
      PlotSpec{"temperature_distinct.svg",
               say("Distinct answers among " + samples + " samples against temperature",
                   samples + " 个样本中不同回答的个数随温度的变化"),
               say("temperature T (0 = greedy)", "温度 T（0 = 贪心解码）"),
               say("distinct answers (of " + samples + ")", "不同的回答（共 " + samples + " 个）"),
               false,
               false,
               {},
               series,
               std::make_pair(0.0, data.samples + 2.0),
               "bottom right"},
      say("One line per prompt, the table's distinct answers against T; the dashed line counts only the "
          "answers' first " +
              opening_tokens + " tokens.",
          "每个提示一条线，即上表中不同回答的个数随 T 的变化；虚线只统计回答的前 " + opening_tokens + " 个 token。"));
}

}  // namespace

ReportSection temperature_report(const TemperatureData& data, Language language) {
  const Words say{language};
  ReportSection section;
  section.key = "temperature";
  section.title = say("Temperature: creativity or nonsense", "温度：创造力还是胡言乱语");
  const int samples = data.samples;
  const std::string& first_prompt = data.settings.front().prompts.front().prompt;
  const std::string prompts = std::to_string(data.settings.front().prompts.size());
  const std::string samples_text = std::to_string(samples);
  const std::string max_new = std::to_string(data.max_new_tokens);
  const std::string seed = std::to_string(data.seed);
  section.paragraph(say(
      "Temperature T divides the logits before the softmax: p_i ∝ exp(logit_i / T). Below 1 the gaps between logits "
      "grow, so the distribution sharpens onto the likeliest tokens; above 1 they shrink, the distribution flattens, "
      "and rare tokens get drawn. As T approaches 0 sampling becomes greedy decoding. To see temperature alone, "
      "top-k is off and top-p is 1 (every token stays a candidate). The SFT model answers " +
          prompts + " chat prompts; for each temperature, " + samples_text +
          " samples per prompt run as one batch (at most " + max_new + " new tokens, seed " + seed + ").",
      "在 softmax 之前把 logits 除以温度 T：p_i ∝ exp(logit_i / T)。T 小于 1 时 logits 之间的差距变大，分布集中到最可能"
      "的 token 上；大于 1 时差距缩小，分布变平，罕见的 token 也会被抽中。T 趋近 0 时，抽样就成了贪心解码。为了单独观察"
      "温度，这里关闭 top-k，top-p 取 1（每个 token 都是候选）。SFT 模型回答 " +
          prompts + " 个对话提示；每个温度下，每个提示的 " + samples_text + " 个样本作为一个批次运行（最多 " + max_new +
          " 个新 token，种子 " + seed + "）。"));

  const std::string opening_tokens = std::to_string(data.opening_tokens);
  ReportTable table{{say("setting", "设置"),
                     say("distinct answers (per prompt, of " + samples_text + ")",
                         "不同的回答（每个提示，共 " + samples_text + " 个）"),
                     say("distinct openings (first " + opening_tokens + " tokens)",
                         "不同的开头（前 " + opening_tokens + " 个 token）"),
                     say("mean length (tokens)", "平均长度（token）"), say("ended with eos", "以 eos 结束"),
                     say("mean entropy (bits/token)", "平均熵（比特/token）")},
                    {}};
  ReportTable answers_table{
      {say("setting", "设置"),
       say("first " + std::to_string(kShownAnswers) + " answers to \"" + first_prompt + "\"",
           "对" + say.quoted(first_prompt) + "的前 " + std::to_string(kShownAnswers) + " 个回答")},
      {}};
  nlohmann::json by_setting = nlohmann::json::array();
  std::string summary = "distinct answers of " + std::to_string(samples) + ", prompt 1 (distinct first " +
                        std::to_string(data.opening_tokens) + " tokens):";
  for (const TemperatureSettingResult& setting : data.settings) {
    table.rows.push_back(setting_row(setting, say));
    by_setting.push_back(setting_json(setting, samples));
    const TemperaturePromptResult& first = setting.prompts.front();
    std::string shown;
    for (int row = 0; row < std::min(kShownAnswers, samples); ++row) {
      shown += (shown.empty() ? "" : " · ") + shown_answer(first.answers[row]);
    }
    answers_table.rows.push_back({say.label(setting.name), shown});
    summary += " " + setting.name + " " + std::to_string(first.distinct_answers) + " (" +
               std::to_string(first.distinct_openings) + "),";
  }
  section.table(std::move(table));
  section.paragraph(reading_paragraph(data, say));
  section.paragraph(reading_the_answers(data, say));
  section.table(std::move(answers_table));
  add_distinct_plot(section, data, say);

  section.data["samples_per_prompt"] = samples;
  section.data["max_new_tokens"] = data.max_new_tokens;
  section.data["seed"] = data.seed;
  section.data["opening_tokens"] = data.opening_tokens;
  section.data["settings"] = by_setting;
  summary.pop_back();
  section.summary.push_back(summary);
  return section;
}

}  // namespace minigen::lab
