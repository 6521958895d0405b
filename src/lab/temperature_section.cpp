// Section 5: temperature. Logits are divided by T before the softmax: T < 1 sharpens the distribution towards the
// likeliest tokens, T > 1 flattens it so that rare tokens get drawn. Only T changes here (top-k off, top-p 1).
#include <string>
#include <vector>

#include "core/format.h"
#include "lab/lab_sections.h"
#include "lab/lab_statistics.h"

namespace minigen::lab {
namespace {

constexpr uint64_t kSeed = 2024;
constexpr int kShownAnswers = 3;
constexpr std::size_t kShownAnswerBytes = 160;
// Whole answers of tens of tokens rarely repeat once anything is sampled; their first few tokens show the spread
// growing with T more gradually.
constexpr std::size_t kOpeningTokens = 4;

struct TemperatureSetting {
  std::string name;
  double temperature;  // 0: greedy
};

const std::vector<TemperatureSetting>& settings() {
  static const std::vector<TemperatureSetting> list = {{"greedy", 0.0},  {"T = 0.3", 0.3}, {"T = 0.7", 0.7},
                                                       {"T = 1.0", 1.0}, {"T = 1.3", 1.3}, {"T = 1.6", 1.6}};
  return list;
}

GenerateOptions temperature_options(const TemperatureSetting& setting, int new_tokens) {
  GenerateOptions options;
  options.max_new_tokens = new_tokens;
  options.keep_step_logits = true;  // for the entropy of each step's distribution
  options.sampling.top_k = 0;       // off
  options.sampling.top_p = 1.0f;    // off
  options.sampling.seed = kSeed;
  options.sampling.greedy = setting.temperature == 0;
  options.sampling.temperature = setting.temperature == 0 ? 1.0f : static_cast<float>(setting.temperature);
  return options;
}

struct BatchStatistics {
  int distinct_answers = 0;
  int distinct_openings = 0;  // among the answers' first kOpeningTokens tokens
  double mean_length_tokens = 0;
  double eos_share = 0;
  double mean_entropy_bits = 0;
};

// The entropy of the distribution each token was drawn from: softmax(logits / T), since no filter is on. Greedy
// draws from nothing, so its column shows the model's own (T = 1) uncertainty along the greedy path.
BatchStatistics batch_statistics(const GenerateResult& result, double temperature) {
  BatchStatistics statistics;
  std::vector<std::vector<int>> answers;
  std::vector<std::vector<int>> openings;
  double entropy_sum = 0;
  long long steps = 0;
  int ended_with_eos = 0;
  long long tokens = 0;
  for (const GeneratedSequence& sequence : result.sequences) {
    answers.push_back(sequence.token_ids);
    openings.emplace_back(sequence.token_ids.begin(),
                          sequence.token_ids.begin() + std::min(kOpeningTokens, sequence.token_ids.size()));
    tokens += static_cast<long long>(sequence.token_ids.size());
    if (sequence.finish_reason == "stop") ++ended_with_eos;
    for (std::size_t step = 0; step < sequence.token_ids.size(); ++step) {
      entropy_sum += entropy_bits(sequence.step_logits[step], temperature == 0 ? 1.0 : temperature);
      ++steps;
    }
  }
  const double rows = static_cast<double>(result.sequences.size());
  statistics.distinct_answers = distinct_count(answers);
  statistics.distinct_openings = distinct_count(openings);
  statistics.mean_length_tokens = static_cast<double>(tokens) / rows;
  statistics.eos_share = ended_with_eos / rows;
  statistics.mean_entropy_bits = steps > 0 ? entropy_sum / static_cast<double>(steps) : 0;
  return statistics;
}

std::string shown_answer(const Tokenizer& tokenizer, const std::vector<int>& token_ids) {
  std::string text = printable_text(tokenizer.decode(token_ids, /*skip_special_tokens=*/true));
  if (text.size() > kShownAnswerBytes) {
    std::size_t cut = kShownAnswerBytes;
    while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) --cut;  // not inside a character
    text = text.substr(0, cut) + "…";
  }
  return "\"" + text + "\"";
}

}  // namespace

int temperature_section_settings() { return static_cast<int>(settings().size()); }

ReportSection temperature_section(LabContext& lab, std::vector<TemperatureBatch>& batches) {
  ReportSection section;
  section.key = "temperature";
  section.title = "Temperature: creativity or nonsense";
  const LabScale& scale = lab.scale();
  const int samples = scale.temperature_samples;
  const std::vector<std::string>& messages = LabContext::chat_messages();
  const int prompt_count = std::min<int>(scale.temperature_prompt_count, static_cast<int>(messages.size()));
  section.paragraph(
      "Temperature T divides the logits before the softmax: p_i ∝ exp(logit_i / T). Below 1 the gaps between logits "
      "grow, so the distribution sharpens onto the likeliest tokens; above 1 they shrink, the distribution flattens, "
      "and rare tokens get drawn. As T approaches 0 sampling becomes greedy decoding. To see temperature alone, "
      "top-k is off and top-p is 1 (every token stays a candidate). The SFT model answers " +
      std::to_string(prompt_count) + " chat prompts; for each temperature, " + std::to_string(samples) +
      " samples per prompt run as one batch (at most " + std::to_string(scale.temperature_new_tokens) +
      " new tokens, seed " + std::to_string(kSeed) + ").");

  ReportTable table{{"setting", "distinct answers (per prompt, of " + std::to_string(samples) + ")",
                     "distinct openings (first " + std::to_string(kOpeningTokens) + " tokens)", "mean length (tokens)",
                     "ended with eos", "mean entropy (bits/token)"},
                    {}};
  nlohmann::json by_setting = nlohmann::json::array();
  std::vector<PlotSeries> distinct_series;
  for (int p = 0; p < prompt_count; ++p) {
    distinct_series.push_back(PlotSeries{"answers: \"" + messages[p] + "\"", {}, {}, "linespoints"});
  }
  PlotSeries openings_series{"openings (first " + std::to_string(kOpeningTokens) + " tokens), mean over prompts",
                             {},
                             {},
                             "linespoints dashtype 2 linecolor rgb 'black'"};
  std::vector<std::vector<std::string>> shown;  // per setting: answers to the first prompt
  for (const TemperatureSetting& setting : settings()) {
    nlohmann::json per_prompt = nlohmann::json::array();
    std::string distinct_cell;
    std::string openings_cell;
    double openings_sum = 0;
    double length_sum = 0;
    double eos_sum = 0;
    double entropy_sum = 0;
    for (int p = 0; p < prompt_count; ++p) {
      lab.progress("  " + setting.name + ", prompt " + std::to_string(p + 1) + " of " + std::to_string(prompt_count) +
                   ": " + std::to_string(samples) + " samples in one batch");
      const std::vector<std::vector<int>> batch(samples, lab.chat_prompt(messages[p]));
      GenerateResult result =
          lab.generate(lab.sft_transformer(), batch, temperature_options(setting, scale.temperature_new_tokens));
      const BatchStatistics statistics = batch_statistics(result, setting.temperature);
      distinct_cell += (p == 0 ? "" : ", ") + std::to_string(statistics.distinct_answers);
      openings_cell += (p == 0 ? "" : ", ") + std::to_string(statistics.distinct_openings);
      openings_sum += statistics.distinct_openings;
      length_sum += statistics.mean_length_tokens;
      eos_sum += statistics.eos_share;
      entropy_sum += statistics.mean_entropy_bits;
      distinct_series[p].x.push_back(setting.temperature);
      distinct_series[p].y.push_back(statistics.distinct_answers);
      std::vector<std::string> texts;
      for (const GeneratedSequence& sequence : result.sequences) {
        texts.push_back(lab.sft().tokenizer->decode(sequence.token_ids, /*skip_special_tokens=*/true));
      }
      if (p == 0) {
        std::vector<std::string> answers;
        for (int row = 0; row < std::min(kShownAnswers, samples); ++row) {
          answers.push_back(shown_answer(*lab.sft().tokenizer, result.sequences[row].token_ids));
        }
        shown.push_back(std::move(answers));
      }
      per_prompt.push_back({{"prompt", messages[p]},
                            {"distinct_answers", statistics.distinct_answers},
                            {"distinct_openings", statistics.distinct_openings},
                            {"mean_length_tokens", statistics.mean_length_tokens},
                            {"eos_share", statistics.eos_share},
                            {"mean_entropy_bits", statistics.mean_entropy_bits},
                            {"answers", texts}});
      for (GeneratedSequence& sequence : result.sequences) sequence.step_logits = {};  // 25 KB per step: release
      batches.push_back(TemperatureBatch{p, setting.name, std::move(result)});
    }
    openings_series.x.push_back(setting.temperature);
    openings_series.y.push_back(openings_sum / prompt_count);
    table.rows.push_back({setting.name, distinct_cell, openings_cell, fixed(length_sum / prompt_count, 1),
                          fixed(100.0 * eos_sum / prompt_count, 0) + " %", fixed(entropy_sum / prompt_count, 2)});
    by_setting.push_back({{"setting", setting.name},
                          {"temperature", setting.temperature},
                          {"greedy", setting.temperature == 0},
                          {"samples", samples},
                          {"prompts", per_prompt}});
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
  ReportTable answers_table{
      {"setting", "first " + std::to_string(kShownAnswers) + " answers to \"" + messages[0] + "\""}, {}};
  for (std::size_t s = 0; s < settings().size(); ++s) {
    std::string cell;
    for (const std::string& answer : shown[s]) cell += (cell.empty() ? "" : " · ") + answer;
    answers_table.rows.push_back({settings()[s].name, cell});
  }
  section.table(std::move(answers_table));
  distinct_series.push_back(std::move(openings_series));
  section.plot(PlotSpec{"temperature_distinct.svg",
                        "Distinct answers among " + std::to_string(samples) + " samples against temperature",
                        "temperature T (0 = greedy)",
                        "distinct answers (of " + std::to_string(samples) + ")",
                        false,
                        false,
                        {},
                        distinct_series,
                        std::make_pair(0.0, samples + 2.0)},
               "One line per prompt: a single answer when greedy, then more distinct answers as T grows; the dashed "
               "line counts only the answers' first " +
                   std::to_string(kOpeningTokens) + " tokens.");

  section.data["samples_per_prompt"] = samples;
  section.data["max_new_tokens"] = scale.temperature_new_tokens;
  section.data["seed"] = kSeed;
  section.data["opening_tokens"] = kOpeningTokens;
  section.data["settings"] = by_setting;
  std::string summary = "distinct answers of " + std::to_string(samples) + ", prompt 1 (distinct first " +
                        std::to_string(kOpeningTokens) + " tokens):";
  for (const nlohmann::json& setting : by_setting) {
    const nlohmann::json& first_prompt = setting["prompts"][0];
    summary += " " + setting["setting"].get<std::string>() + " " +
               std::to_string(first_prompt["distinct_answers"].get<int>()) + " (" +
               std::to_string(first_prompt["distinct_openings"].get<int>()) + "),";
  }
  summary.pop_back();
  section.summary.push_back(summary);
  return section;
}

}  // namespace minigen::lab
