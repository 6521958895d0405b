#pragma once
// The sampling flags of `generate` and `chat`. Their defaults are SamplingParams{}'s (MiniMind's generate defaults);
// this file only names them as flags.
#include <CLI/CLI.hpp>
#include <array>
#include <iterator>
#include <string>
#include <string_view>
#include <vector>

#include "sampling/sampling_params.h"

namespace minigen::cli {

// The float flags, each read as written and passed through sampling_float (--temperature 1e-320 is refused, not 0).
struct FloatFlag {
  SamplingParam param;
  float SamplingParams::*field;
};
inline constexpr FloatFlag kFloatFlags[] = {{SamplingParam::kTemperature, &SamplingParams::temperature},
                                            {SamplingParam::kTopP, &SamplingParams::top_p},
                                            {SamplingParam::kMinP, &SamplingParams::min_p},
                                            {SamplingParam::kRepetitionPenalty, &SamplingParams::repetition_penalty},
                                            {SamplingParam::kFrequencyPenalty, &SamplingParams::frequency_penalty},
                                            {SamplingParam::kPresencePenalty, &SamplingParams::presence_penalty}};

struct SamplingFlags {
  SamplingParams values;  // the flags other than kFloatFlags write straight into it
  // kFloatFlags as given, in the same order (defaults: SamplingParams{}'s, as their shortest decimals).
  std::array<std::string, std::size(kFloatFlags)> float_texts = default_float_texts();
  std::string top_p_rule = std::string(top_p_rule_name(SamplingParams{}.top_p_rule));
  std::vector<std::string> logit_bias;  // "ID=BIAS" each, as given
  std::string seed = "0";               // as given: "-1" asks for a random seed

  void add_to(CLI::App& command);
  // The parameters, validated; an out-of-range value is an Error naming its flag ("--top-p must be in (0, 1], got
  // 1.5"; "--temperature must be >= 0 (0 is greedy decoding), got -1 (0 or --greedy takes the argmax)"); a
  // temperature of 0 is greedy decoding (SamplingParams::takes_argmax). For --seed -1 the seed is
  // drawn here and named on stderr, so call it once per run.
  SamplingParams params() const;

 private:
  bool random_seed() const { return seed == "-1"; }
  static std::array<std::string, std::size(kFloatFlags)> default_float_texts();
};

// The flag that sets a parameter: "--temperature", "--top-k", "--top-p", "--min-p", "--repetition-penalty",
// "--frequency-penalty", "--presence-penalty", "--logit-bias"; by the parameter or by its field name ("top_p").
std::string sampling_flag_name(SamplingParam param);
std::string sampling_flag_name(std::string_view field);

}  // namespace minigen::cli
