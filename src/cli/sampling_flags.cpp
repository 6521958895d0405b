#include "cli/sampling_flags.h"

#include <cctype>
#include <cerrno>
#include <climits>
#include <cstdlib>
#include <iostream>
#include <stdexcept>
#include <string>

#include "cli/flag_checks.h"
#include "core/format.h"
#include "request/sampling_settings.h"

namespace minigen::cli {

std::string sampling_flag_name(std::string_view field) {
  std::string name = "--" + std::string(field);  // "top_p" → "--top-p"
  for (char& c : name) c = c == '_' ? '-' : c;
  return name;
}

std::string sampling_flag_name(SamplingParam param) { return sampling_flag_name(sampling_param_name(param)); }

std::array<std::string, std::size(kFloatFlags)> SamplingFlags::default_float_texts() {
  const SamplingParams defaults;
  std::array<std::string, std::size(kFloatFlags)> texts;
  for (std::size_t i = 0; i < texts.size(); ++i) texts[i] = shortest_decimal(defaults.*kFloatFlags[i].field);
  return texts;
}

void SamplingFlags::add_to(CLI::App& command) {
  // Each float flag's help, in kFloatFlags' order.
  constexpr const char* kFloatHelp[] = {
      "divide logits by T before sampling; 0 takes the argmax, as --greedy",
      "nucleus sampling threshold in (0, 1]; 1 turns it off",
      "drop tokens below min-p × the top probability; 0 turns it off",
      "MiniMind's sign-aware penalty on every token already in the row; 1 turns it off",
      "OpenAI's: minus F × how often a token was generated so far, in [-2, 2]; 0 turns it off",
      "OpenAI's: minus P once a token was generated, in [-2, 2]; 0 turns it off"};
  static_assert(std::size(kFloatHelp) == std::size(kFloatFlags));
  for (std::size_t i = 0; i < std::size(kFloatFlags); ++i) {
    command.add_option(sampling_flag_name(kFloatFlags[i].param), float_texts[i], kFloatHelp[i])
        ->type_name("FLOAT")
        ->check(finite_number())
        ->capture_default_str();
    if (i == 0) {  // --top-k after --temperature, as the sampler chain reads them
      command.add_option("--top-k", values.top_k, "keep the k most likely tokens; 0 turns it off")
          ->check(integer_in(0, INT_MAX))
          ->capture_default_str();
    }
  }
  command.add_option("--logit-bias", logit_bias, "ID=BIAS: add BIAS in [-100, 100] to token ID's logit; -100 bans it")
      ->take_all();
  command.add_flag("--greedy", values.greedy, "take the most likely token (argmax) instead of sampling");
  command.add_option("--seed", seed, "seed of the per-row random streams, 0 to 2^64 − 1, or -1 for a random one")
      ->check(sampling_seed_value())
      ->capture_default_str();
  command.add_option("--top-p-rule", top_p_rule, "where top-p cuts: minimind (default), hf or llamacpp")
      ->capture_default_str();
}

namespace {

// "17=-100" → {17, -100}; anything else is one clear error naming the flag.
LogitBias parse_logit_bias(const std::string& text) {
  const std::size_t equals = text.find('=');
  const std::string problem = "--logit-bias takes ID=BIAS (a token id and a number), got '" + text + "'";
  if (equals == std::string::npos) throw Error(problem);
  LogitBias entry;
  try {
    std::size_t used = 0;
    const long token = std::stol(text.substr(0, equals), &used);
    if (used != equals || token < 0 || token > INT_MAX) throw Error(problem);
    const std::string bias = text.substr(equals + 1);
    // strtod, not stod, which throws on an underflow: 1e-320 is a number, refused below by sampling_float.
    char* stop = nullptr;
    errno = 0;
    const double value = bias.empty() ? 0.0 : std::strtod(bias.c_str(), &stop);
    if (bias.empty() || stop != bias.c_str() + bias.size() || std::isspace(static_cast<unsigned char>(bias[0]))) {
      throw Error(problem);
    }
    try {
      if (value == 0.0 && errno == ERANGE) refuse_tiny_sampling_value(SamplingParam::kLogitBias, bias);
      entry.bias = sampling_float(SamplingParam::kLogitBias, value);
    } catch (const InvalidSamplingParam& invalid) {
      throw Error("--logit-bias of token " + text.substr(0, equals) + " " + invalid.problem());
    }
    entry.token = static_cast<int>(token);
  } catch (const std::logic_error&) {  // stol/stof: no number, or out of range
    throw Error(problem);
  }
  return entry;
}

}  // namespace

SamplingParams SamplingFlags::params() const {
  SamplingParams params = values;
  for (std::size_t i = 0; i < std::size(kFloatFlags); ++i) {
    const SamplingParam param = kFloatFlags[i].param;
    try {
      // strtod as finite_number() checked it; the number as written, before it becomes a float. One too small even
      // for a double ("1e-400") reads as 0 with ERANGE: it is not 0 either.
      errno = 0;
      const double value = std::strtod(float_texts[i].c_str(), nullptr);
      if (value == 0.0 && errno == ERANGE) refuse_tiny_sampling_value(param, float_texts[i]);
      params.*kFloatFlags[i].field = sampling_float(param, value);
    } catch (const InvalidSamplingParam& invalid) {
      throw Error(sampling_flag_name(param) + " " + invalid.problem() +
                  (param == SamplingParam::kTemperature ? " (0 or --greedy takes the argmax)" : ""));
    }
  }
  params.seed = random_seed() ? draw_random_seed() : std::stoull(seed);  // checked by sampling_seed_value()
  if (random_seed()) std::cerr << "[minigen] --seed -1 drew seed " << params.seed << "\n";  // to repeat the run
  params.top_p_rule = parse_top_p_rule(top_p_rule);
  for (const std::string& entry : logit_bias) params.logit_bias.push_back(parse_logit_bias(entry));
  try {
    check_sampling_settings(params);
  } catch (const RequestError& error) {
    throw Error(sampling_flag_name(error.field()) + " " + error.what() +
                (is_temperature_error(error) ? " (0 or --greedy takes the argmax)" : ""));
  }
  return params;
}

}  // namespace minigen::cli
