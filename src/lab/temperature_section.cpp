// Section 5, measured: temperature. Logits are divided by T before the softmax: T < 1 sharpens the distribution
// towards the likeliest tokens, T > 1 flattens it so that rare tokens get drawn. Only T changes here (top-k off,
// top-p 1); each setting samples every prompt as one batch, kept for section 7.
#include <algorithm>
#include <iterator>
#include <string>
#include <vector>

#include "lab/section_measures.h"

namespace minigen::lab {
namespace {

constexpr uint64_t kSeed = 2024;
// Whole answers of tens of tokens rarely repeat once anything is sampled; their first few tokens show the spread
// growing with T more gradually.
constexpr std::size_t kOpeningTokens = 4;

struct TemperatureSetting {
  const char* name;
  double temperature;  // 0: greedy
};
constexpr TemperatureSetting kSettings[] = {{"greedy", 0.0},  {"T = 0.3", 0.3}, {"T = 0.7", 0.7},
                                            {"T = 1.0", 1.0}, {"T = 1.3", 1.3}, {"T = 1.6", 1.6}};
static_assert(std::size(kSettings) == kTemperatureSettings, "the work estimate counts the settings");

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

// The entropy of the distribution each token was drawn from: softmax(logits / T), since no filter is on. Greedy
// draws from nothing, so its column shows the model's own (T = 1) uncertainty along the greedy path.
TemperaturePromptResult batch_statistics(const GenerateResult& result, double temperature, const Tokenizer& tokenizer) {
  TemperaturePromptResult statistics;
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
    statistics.answers.push_back(tokenizer.decode(sequence.token_ids, /*skip_special_tokens=*/true));
  }
  const double rows = static_cast<double>(result.sequences.size());
  statistics.distinct_answers = distinct_count(answers);
  statistics.distinct_openings = distinct_count(openings);
  statistics.openings = std::move(openings);
  statistics.mean_length_tokens = static_cast<double>(tokens) / rows;
  statistics.eos_share = ended_with_eos / rows;
  statistics.mean_entropy_bits = steps > 0 ? entropy_sum / static_cast<double>(steps) : 0;
  return statistics;
}

}  // namespace

TemperatureData measure_temperature(LabContext& lab, std::vector<TemperatureBatch>& batches) {
  const LabScale& scale = lab.scale();
  TemperatureData data;
  data.samples = scale.temperature_samples;
  data.max_new_tokens = scale.temperature_new_tokens;
  data.seed = kSeed;
  data.opening_tokens = kOpeningTokens;
  data.chat_prompts_source = lab.material().chat_prompts.source;
  const std::vector<std::string>& messages = lab.chat_messages();
  const int prompt_count = std::min<int>(scale.temperature_prompt_count, static_cast<int>(messages.size()));
  for (const TemperatureSetting& setting : kSettings) {
    TemperatureSettingResult by_setting{setting.name, setting.temperature, {}};
    for (int p = 0; p < prompt_count; ++p) {
      const std::string which = std::to_string(p + 1);
      const std::string of = std::to_string(prompt_count);
      const std::string samples = std::to_string(data.samples);
      lab.progress(
          lab.say("  " + by_setting.name + ", prompt " + which + " of " + of + ": " + samples + " samples in one batch",
                  "  " + Words{Language::kChinese}.label(by_setting.name) + "，第 " + which + " / " + of + " 个提示：" +
                      samples + " 个样本作为一个批次"));
      const std::vector<std::vector<int>> batch(data.samples, lab.chat_prompt(messages[p]));
      GenerateResult result =
          lab.generate(lab.sft_transformer(), batch, temperature_options(setting, data.max_new_tokens));
      by_setting.prompts.push_back(batch_statistics(result, setting.temperature, *lab.sft().tokenizer));
      by_setting.prompts.back().prompt = messages[p];
      for (GeneratedSequence& sequence : result.sequences) sequence.step_logits = {};  // 25 KB per step: release
      batches.push_back(TemperatureBatch{p, by_setting.name, std::move(result)});
    }
    data.settings.push_back(std::move(by_setting));
  }
  return data;
}

}  // namespace minigen::lab
