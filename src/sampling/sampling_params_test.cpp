#include "sampling/sampling_params.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>

#include "core/error.h"

namespace minigen {
namespace {

constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();

// The message validate() throws, or "" when the parameters are accepted.
std::string ValidationMessage(const SamplingParams& params) {
  try {
    params.validate();
  } catch (const Error& error) {
    return error.what();
  }
  return "";
}

TEST(SamplingParamsTest, DefaultsAreMiniMinds) {
  const SamplingParams params;
  EXPECT_EQ(params.temperature, 0.85f);
  EXPECT_EQ(params.top_k, 50);
  EXPECT_EQ(params.top_p, 0.85f);
  EXPECT_EQ(params.min_p, 0.0f);
  EXPECT_EQ(params.repetition_penalty, 1.0f);
  EXPECT_FALSE(params.greedy);
  EXPECT_EQ(params.top_p_rule, TopPRule::kMinimind);
  EXPECT_EQ(params.seed, 0u);
  EXPECT_EQ(ValidationMessage(params), "");
}

// The library names each parameter as SamplingParams spells it; the CLI and the API rename it (cli/sampling_flags,
// serve/openai_api), which is why the parameter and the problem also travel apart.
TEST(SamplingParamsTest, MessagesNameTheParameter) {
  EXPECT_EQ(ValidationMessage({.top_p = 1.5f}), "top_p must be in (0, 1], got 1.5");
  EXPECT_EQ(ValidationMessage({.top_p = 0.0f}), "top_p must be in (0, 1], got 0");
  EXPECT_EQ(ValidationMessage({.top_k = -3}), "top_k must be >= 0 (0 turns it off), got -3");
  EXPECT_EQ(ValidationMessage({.min_p = 1.25f}), "min_p must be in [0, 1], got 1.25");
  EXPECT_EQ(ValidationMessage({.min_p = -0.5f}), "min_p must be in [0, 1], got -0.5");
  EXPECT_EQ(ValidationMessage({.repetition_penalty = 0.0f}),
            "repetition_penalty must be in [0.01, 100] (1 turns it off), got 0");
  EXPECT_EQ(ValidationMessage({.temperature = -1.0f}), "temperature must be >= 0 (0 is greedy decoding), got -1");
  try {
    SamplingParams{.top_p = 2.0f}.validate();
    ADD_FAILURE() << "expected InvalidSamplingParam";
  } catch (const InvalidSamplingParam& invalid) {
    EXPECT_EQ(invalid.param(), SamplingParam::kTopP);
    EXPECT_EQ(invalid.problem(), "must be in (0, 1], got 2");
  }
}

TEST(SamplingParamsTest, NaNIsRejectedEverywhere) {
  EXPECT_EQ(ValidationMessage({.temperature = kNaN}), "temperature must be a finite number, got nan");
  EXPECT_EQ(ValidationMessage({.temperature = kNaN, .greedy = true}), "temperature must be a finite number, got nan");
  EXPECT_EQ(ValidationMessage({.top_p = kNaN}), "top_p must be in (0, 1], got nan");
  EXPECT_EQ(ValidationMessage({.min_p = kNaN}), "min_p must be in [0, 1], got nan");
  EXPECT_EQ(ValidationMessage({.repetition_penalty = kNaN}),
            "repetition_penalty must be in [0.01, 100] (1 turns it off), got nan");
}

TEST(SamplingParamsTest, GreedyAcceptsAndIgnoresNonPositiveTemperature) {
  const SamplingParams zero{.temperature = 0.0f, .greedy = true};
  EXPECT_EQ(ValidationMessage(zero), "");
  EXPECT_FALSE(zero.applies_temperature());
  const SamplingParams negative{.temperature = -2.0f, .greedy = true};
  EXPECT_EQ(ValidationMessage(negative), "");
  EXPECT_FALSE(negative.applies_temperature());
  // MiniMind divides by the temperature even for greedy decoding, so a positive one is still applied.
  EXPECT_TRUE((SamplingParams{.temperature = 0.5f, .greedy = true}).applies_temperature());
  EXPECT_TRUE(SamplingParams{}.applies_temperature());
}

// One rule for every frontend: temperature 0 is greedy decoding (the argmax, no division), as OpenAI, llama.cpp and
// vLLM read it.
TEST(SamplingParamsTest, TemperatureZeroIsGreedy) {
  const SamplingParams zero{.temperature = 0.0f};
  EXPECT_EQ(ValidationMessage(zero), "");
  EXPECT_TRUE(zero.takes_argmax());
  EXPECT_FALSE(zero.applies_temperature());
  EXPECT_TRUE((SamplingParams{.temperature = -0.0f}).takes_argmax());
  EXPECT_TRUE((SamplingParams{.greedy = true}).takes_argmax());
  EXPECT_FALSE(SamplingParams{}.takes_argmax());
  EXPECT_FALSE((SamplingParams{.temperature = 0.01f}).takes_argmax());
}

TEST(SamplingParamsTest, TemperaturesAndPenaltiesThatOverflowLogitsAreRejected) {
  EXPECT_EQ(ValidationMessage({.temperature = 1e-39f}),
            "temperature must be at least 0.01 (smaller ones overflow the logits), got 1e-39");
  EXPECT_EQ(ValidationMessage({.temperature = 0.0099f, .greedy = true}),
            "temperature must be at least 0.01 (smaller ones overflow the logits), got 0.0099");
  EXPECT_EQ(ValidationMessage({.repetition_penalty = 1e-38f}),
            "repetition_penalty must be in [0.01, 100] (1 turns it off), got 1e-38");
  EXPECT_EQ(ValidationMessage({.repetition_penalty = 101.0f}),
            "repetition_penalty must be in [0.01, 100] (1 turns it off), got 101");
  EXPECT_EQ(ValidationMessage({.temperature = 0.01f, .repetition_penalty = 0.01f}), "");
  EXPECT_EQ(ValidationMessage({.temperature = 0.01f, .repetition_penalty = 100.0f}), "");
}

TEST(SamplingParamsTest, BoundariesThatAreAllowed) {
  EXPECT_EQ(ValidationMessage({.top_k = 0, .top_p = 1.0f, .min_p = 1.0f}), "");
  EXPECT_EQ(ValidationMessage({.min_p = 0.0f, .repetition_penalty = 0.5f}), "");
}

// Issue 46 item 5: one rule for tiny values in every float field, applied to the number as written. 1e-320 and the
// subnormal 4.9e-324 became 0 as floats (greedy decoding for a temperature, "off" for min-p or a penalty); they are
// refused with the field's range, as is every non-zero value below the smallest normal float.
TEST(SamplingParamsTest, ValuesBelowTheSmallestNormalFloatAreRefusedNotRounded) {
  const auto problem = [](SamplingParam param, double value) -> std::string {
    try {
      sampling_float(param, value);
    } catch (const InvalidSamplingParam& invalid) {
      EXPECT_EQ(invalid.param(), param);
      return invalid.what();
    }
    return "";
  };
  EXPECT_EQ(problem(SamplingParam::kTemperature, 1e-320),
            "temperature must be at least 0.01 (smaller ones overflow the logits), got 1e-320");
  EXPECT_EQ(problem(SamplingParam::kTemperature, 4.9e-324),
            "temperature must be at least 0.01 (smaller ones overflow the logits), got 5e-324");
  EXPECT_EQ(problem(SamplingParam::kRepetitionPenalty, 1e-320),
            "repetition_penalty must be in [0.01, 100] (1 turns it off), got 1e-320");
  EXPECT_EQ(problem(SamplingParam::kTopP, 4.9e-324),
            "top_p must be in (0, 1] and at least 1.1754944e-38 (the smallest normal float), got 5e-324");
  for (const SamplingParam param : {SamplingParam::kMinP, SamplingParam::kFrequencyPenalty,
                                    SamplingParam::kPresencePenalty, SamplingParam::kLogitBias}) {
    for (const double tiny : {1e-320, -4.9e-324, 1e-39}) {
      EXPECT_NE(problem(param, tiny).find(" must be 0 or at least 1.1754944e-38 in magnitude"), std::string::npos)
          << sampling_param_name(param) << " " << tiny;
    }
    EXPECT_EQ(problem(param, 0.0), "");
    EXPECT_EQ(problem(param, -0.0), "");
  }
  // The smallest normal float and everything above it pass unchanged, to the field's own check.
  EXPECT_EQ(sampling_float(SamplingParam::kMinP, kSmallestSamplingMagnitude), std::numeric_limits<float>::min());
  EXPECT_EQ(sampling_float(SamplingParam::kTemperature, 0.0), 0.0f);
  EXPECT_EQ(sampling_float(SamplingParam::kTemperature, 0.85), 0.85f);
  EXPECT_TRUE(std::isnan(sampling_float(SamplingParam::kTopP, std::nan(""))));  // NaN is validate()'s to refuse
}

}  // namespace
}  // namespace minigen
