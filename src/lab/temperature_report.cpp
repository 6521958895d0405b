// Section 5, written: how the spread of answers, their lengths and the entropy per token move with temperature,
// the first answers to one prompt at each setting, and the distinct answers as a plot.
#include <string>
#include <utility>
#include <vector>

#include "core/format.h"
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
  return "\"" + text + "\"";
}

// One row per setting: per-prompt counts listed, the rest averaged over the prompts.
std::vector<std::string> setting_row(const TemperatureSettingResult& setting) {
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
  return {setting.name,
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

void add_distinct_plot(ReportSection& section, const TemperatureData& data) {
  const std::string opening_tokens = std::to_string(data.opening_tokens);
  std::vector<PlotSeries> series;
  for (const TemperaturePromptResult& prompt : data.settings.front().prompts) {
    series.push_back(PlotSeries{"answers: \"" + prompt.prompt + "\"", {}, {}, "linespoints"});
  }
  PlotSeries openings{"openings (first " + opening_tokens + " tokens), mean over prompts",
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
  section.plot(PlotSpec{"temperature_distinct.svg",
                        "Distinct answers among " + samples + " samples against temperature",
                        "temperature T (0 = greedy)",
                        "distinct answers (of " + samples + ")",
                        false,
                        false,
                        {},
                        series,
                        std::make_pair(0.0, data.samples + 2.0)},
               "One line per prompt: a single answer when greedy, then more distinct answers as T grows; the dashed "
               "line counts only the answers' first " +
                   opening_tokens + " tokens.");
}

}  // namespace

ReportSection temperature_report(const TemperatureData& data) {
  ReportSection section;
  section.key = "temperature";
  section.title = "Temperature: creativity or nonsense";
  const int samples = data.samples;
  const std::string& first_prompt = data.settings.front().prompts.front().prompt;
  section.paragraph(
      "Temperature T divides the logits before the softmax: p_i ∝ exp(logit_i / T). Below 1 the gaps between logits "
      "grow, so the distribution sharpens onto the likeliest tokens; above 1 they shrink, the distribution flattens, "
      "and rare tokens get drawn. As T approaches 0 sampling becomes greedy decoding. To see temperature alone, "
      "top-k is off and top-p is 1 (every token stays a candidate). The SFT model answers " +
      std::to_string(data.settings.front().prompts.size()) + " chat prompts; for each temperature, " +
      std::to_string(samples) + " samples per prompt run as one batch (at most " + std::to_string(data.max_new_tokens) +
      " new tokens, seed " + std::to_string(data.seed) + ").");

  ReportTable table{{"setting", "distinct answers (per prompt, of " + std::to_string(samples) + ")",
                     "distinct openings (first " + std::to_string(data.opening_tokens) + " tokens)",
                     "mean length (tokens)", "ended with eos", "mean entropy (bits/token)"},
                    {}};
  ReportTable answers_table{
      {"setting", "first " + std::to_string(kShownAnswers) + " answers to \"" + first_prompt + "\""}, {}};
  nlohmann::json by_setting = nlohmann::json::array();
  std::string summary = "distinct answers of " + std::to_string(samples) + ", prompt 1 (distinct first " +
                        std::to_string(data.opening_tokens) + " tokens):";
  for (const TemperatureSettingResult& setting : data.settings) {
    table.rows.push_back(setting_row(setting));
    by_setting.push_back(setting_json(setting, samples));
    const TemperaturePromptResult& first = setting.prompts.front();
    std::string shown;
    for (int row = 0; row < std::min(kShownAnswers, samples); ++row) {
      shown += (shown.empty() ? "" : " · ") + shown_answer(first.answers[row]);
    }
    answers_table.rows.push_back({setting.name, shown});
    summary += " " + setting.name + " " + std::to_string(first.distinct_answers) + " (" +
               std::to_string(first.distinct_openings) + "),";
  }
  section.table(std::move(table));
  section.paragraph(
      "Greedy decoding gives one answer however many times it runs. As T rises the answers spread: more distinct "
      "answers (a whole answer differs as soon as one of its tokens does, so the openings show the trend more "
      "gradually) and a higher entropy (the number of bits of choice per token; the greedy row shows the model's own "
      "T = 1 uncertainty along its single path, since greedy draws nothing). Whether the spread is creativity or "
      "noise shows in the text: at low T the samples are variations of the greedy answer, at high T the long tail of "
      "the vocabulary gets drawn and the answers stop making sense — on a model this small the line comes early. "
      "How often an answer ends with eos also moves with T: a flattened distribution makes the stop token one "
      "candidate among many.");
  section.table(std::move(answers_table));
  add_distinct_plot(section, data);

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
