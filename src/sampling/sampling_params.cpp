#include "sampling/sampling_params.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <random>
#include <string>

#include "core/format.h"

namespace minigen {

uint64_t draw_random_seed() {
  std::random_device entropy;
  return (static_cast<uint64_t>(entropy()) << 32) ^ entropy();  // random_device gives 32 bits at a time
}

std::string_view sampling_param_name(SamplingParam param) {
  return name_in(kSamplingParamNames, param, "unknown sampling parameter");
}

InvalidSamplingParam::InvalidSamplingParam(SamplingParam param, std::string problem)
    : Error(std::string(sampling_param_name(param)) + " " + problem), param_(param), problem_(std::move(problem)) {}

void check_temperature(float temperature) {
  if (!std::isfinite(temperature)) {
    throw InvalidSamplingParam(SamplingParam::kTemperature,
                               "must be a finite number, got " + shortest_decimal(temperature));
  }
  if (!(temperature > 0.0f)) {
    throw InvalidSamplingParam(SamplingParam::kTemperature,
                               "must be > 0 when sampling, got " + shortest_decimal(temperature));
  }
  if (temperature < kMinTemperature) {
    throw InvalidSamplingParam(SamplingParam::kTemperature, "must be at least " + shortest_decimal(kMinTemperature) +
                                                                " (smaller ones overflow the logits), got " +
                                                                shortest_decimal(temperature));
  }
}

namespace {

// The shortest decimal that reads back as `value` ("1e-320"), as the user would have written it.
std::string shortest_double(double value) {
  char text[32];
  const auto written = std::to_chars(text, text + sizeof text, value);
  return std::string(text, written.ptr);
}

}  // namespace

float sampling_float(SamplingParam param, double value) {
  if (value == 0.0 || !(std::fabs(value) < kSmallestSamplingMagnitude)) return static_cast<float>(value);  // NaN too
  refuse_tiny_sampling_value(param, shortest_double(value));
}

void refuse_tiny_sampling_value(SamplingParam param, const std::string& written) {
  const std::string got = ", got " + written;
  const std::string smallest = shortest_decimal(static_cast<float>(kSmallestSamplingMagnitude));
  switch (param) {
    case SamplingParam::kTemperature:
      throw InvalidSamplingParam(
          param, "must be at least " + shortest_decimal(kMinTemperature) + " (smaller ones overflow the logits)" + got);
    case SamplingParam::kRepetitionPenalty:
      throw InvalidSamplingParam(param, "must be in [" + shortest_decimal(kMinRepetitionPenalty) + ", " +
                                            shortest_decimal(kMaxRepetitionPenalty) + "] (1 turns it off)" + got);
    case SamplingParam::kTopP:
      throw InvalidSamplingParam(param,
                                 "must be in (0, 1] and at least " + smallest + " (the smallest normal float)" + got);
    default:
      throw InvalidSamplingParam(
          param, "must be 0 or at least " + smallest +
                     " in magnitude (the smallest normal float; smaller ones are not rounded to 0)" + got);
  }
}

void check_top_k(int top_k) {
  if (top_k < 0) {
    throw InvalidSamplingParam(SamplingParam::kTopK, "must be >= 0 (0 turns it off), got " + std::to_string(top_k));
  }
}

void check_top_p(float top_p) {
  if (!(top_p > 0.0f && top_p <= 1.0f)) {
    throw InvalidSamplingParam(SamplingParam::kTopP, "must be in (0, 1], got " + shortest_decimal(top_p));
  }
}

void check_min_p(float min_p) {
  if (!(min_p >= 0.0f && min_p <= 1.0f)) {
    throw InvalidSamplingParam(SamplingParam::kMinP, "must be in [0, 1], got " + shortest_decimal(min_p));
  }
}

void check_repetition_penalty(float penalty) {
  if (!(penalty >= kMinRepetitionPenalty && penalty <= kMaxRepetitionPenalty)) {  // NaN fails both
    throw InvalidSamplingParam(SamplingParam::kRepetitionPenalty,
                               "must be in [" + shortest_decimal(kMinRepetitionPenalty) + ", " +
                                   shortest_decimal(kMaxRepetitionPenalty) + "] (1 turns it off), got " +
                                   shortest_decimal(penalty));
  }
}

void check_openai_penalty(SamplingParam which, float penalty) {
  if (!(penalty >= -kMaxOpenAiPenalty && penalty <= kMaxOpenAiPenalty)) {
    throw InvalidSamplingParam(which, "must be in [-2, 2] (0 turns it off), got " + shortest_decimal(penalty));
  }
}

void check_logit_bias(const std::vector<LogitBias>& logit_bias) {
  std::vector<int> tokens;
  for (const LogitBias& entry : logit_bias) {
    if (entry.token < 0) {
      throw InvalidSamplingParam(SamplingParam::kLogitBias,
                                 "token ids must be >= 0, got " + std::to_string(entry.token));
    }
    if (!(entry.bias >= -kMaxLogitBias && entry.bias <= kMaxLogitBias)) {
      throw InvalidSamplingParam(
          SamplingParam::kLogitBias,
          "of token " + std::to_string(entry.token) + " must be in [-100, 100], got " + shortest_decimal(entry.bias));
    }
    tokens.push_back(entry.token);
  }
  std::sort(tokens.begin(), tokens.end());
  if (const auto twice = std::adjacent_find(tokens.begin(), tokens.end()); twice != tokens.end()) {
    throw InvalidSamplingParam(SamplingParam::kLogitBias, "names token " + std::to_string(*twice) + " twice");
  }
}

void SamplingParams::validate() const {
  if (std::isnan(temperature) || std::isinf(temperature)) check_temperature(temperature);
  if (!greedy && temperature < 0.0f) {
    throw InvalidSamplingParam(SamplingParam::kTemperature,
                               "must be >= 0 (0 is greedy decoding), got " + shortest_decimal(temperature));
  }
  if (applies_temperature()) check_temperature(temperature);
  check_top_k(top_k);
  check_top_p(top_p);
  check_min_p(min_p);
  check_repetition_penalty(repetition_penalty);
  check_openai_penalty(SamplingParam::kFrequencyPenalty, frequency_penalty);
  check_openai_penalty(SamplingParam::kPresencePenalty, presence_penalty);
  check_logit_bias(logit_bias);
}

void SamplingParams::check_vocabulary(int vocab_size) const {
  int64_t banned = 0;
  for (const LogitBias& entry : logit_bias) {
    if (entry.token >= vocab_size) {
      throw InvalidSamplingParam(SamplingParam::kLogitBias, "names token " + std::to_string(entry.token) +
                                                                ", outside the vocabulary [0, " +
                                                                std::to_string(vocab_size) + ")");
    }
    if (bans_token(entry)) ++banned;
  }
  // Ids are distinct (check_logit_bias) and inside the vocabulary, so this many bans are all of its ids.
  if (banned == vocab_size) {
    throw InvalidSamplingParam(SamplingParam::kLogitBias, "bans every token: all " + std::to_string(vocab_size) +
                                                              " ids have -100, so nothing is left to sample");
  }
}

bool SamplingParams::applies_temperature() const { return !takes_argmax() || temperature > 0.0f; }

bool SamplingParams::takes_argmax() const { return greedy || temperature == 0.0f; }

}  // namespace minigen
