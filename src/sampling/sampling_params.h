#pragma once
// What the user asks for: plain data, filled from command-line flags or a request body, checked by validate().
// The defaults written here are the only copy: MiniMind's generate (temperature 0.85, top-k 50, top-p 0.85, no
// repetition penalty); the CLI flags and the HTTP API take theirs from SamplingParams{}.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/enum_names.h"
#include "core/error.h"
#include "sampling/top_p_rule.h"

namespace minigen {

// Dividing logits by a temperature of 1e-39 (or by a repetition penalty of 1e-38) overflows them to ±inf, after
// which no softmax is defined. Below these bounds the distribution is argmax for all practical purposes anyway
// (vLLM clamps temperatures below 0.01 for the same reason); use greedy decoding instead.
inline constexpr float kMinTemperature = 0.01f;
inline constexpr float kMinRepetitionPenalty = 0.01f;
inline constexpr float kMaxRepetitionPenalty = 100.0f;
// OpenAI's ranges: penalties in [-2, 2], a logit bias in [-100, 100], where -100 bans the token.
inline constexpr float kMaxOpenAiPenalty = 2.0f;
inline constexpr float kMaxLogitBias = 100.0f;

// One entry of OpenAI's logit_bias: added to the token's logit; kMaxLogitBias below zero removes the token.
struct LogitBias {
  int token = 0;
  float bias = 0.0f;
};

// llama.cpp's LLAMA_DEFAULT_SEED: a seed of −1 asks for a random one. Each frontend takes it where seeds are given
// (the API's "seed", --seed, Python's seed=), draws the seed once per run and reports the one it used (the response's
// "seed", --json's settings.seed and a stderr line, the summary's settings.seed), so that the run can be repeated.
// Any other negative seed is an error.
inline constexpr int64_t kRandomSeed = -1;
// 64 bits from the system's entropy source (std::random_device).
uint64_t draw_random_seed();

// Whether the entry removes its token (its logit becomes −inf whatever it was).
inline bool bans_token(const LogitBias& entry) { return entry.bias <= -kMaxLogitBias; }

struct SamplingParams {
  float temperature = 0.85f;
  int top_k = 50;                   // 0 turns top-k off
  float top_p = 0.85f;              // 1 turns top-p off
  float min_p = 0.0f;               // 0 turns min-p off
  float repetition_penalty = 1.0f;  // 1 turns the penalty off
  float frequency_penalty = 0.0f;   // OpenAI's: minus penalty × (times the token was generated); 0 turns it off
  float presence_penalty = 0.0f;    // OpenAI's: minus penalty once the token was generated at all; 0 turns it off
  std::vector<LogitBias> logit_bias = {};  // OpenAI's logit_bias, each token at most once
  bool greedy = false;                     // argmax instead of a random draw (MiniMind's do_sample = False)
  TopPRule top_p_rule = TopPRule::kMinimind;
  uint64_t seed = 0;  // with (row, step), determines every draw; see counter_rng.h

  // Throws InvalidSamplingParam for the first parameter out of range; NaN is rejected everywhere. A temperature of
  // exactly 0 is greedy decoding (takes_argmax). When greedy, a temperature ≤ 0 is accepted and ignored; a positive
  // one is still applied, because MiniMind divides by the temperature even when it then takes the argmax.
  void validate() const;
  // The part only the model can check: every logit_bias id inside [0, vocab_size), and not every id banned (then
  // every logit is −inf and no token can be drawn). Throws InvalidSamplingParam.
  void check_vocabulary(int vocab_size) const;

  // Whether the chain divides by the temperature: always when sampling, only for a positive one when greedy.
  bool applies_temperature() const;
  // Whether each token is the argmax rather than a random draw: greedy, or a temperature of exactly 0 — the one rule
  // of the CLI (--temperature 0 = --greedy), Python (temperature=0) and the API ("temperature": 0), as OpenAI,
  // llama.cpp and vLLM read it: softmax(z / T) tends to the argmax as T → 0.
  bool takes_argmax() const;
};

enum class SamplingParam {
  kTemperature,
  kTopK,
  kTopP,
  kMinP,
  kRepetitionPenalty,
  kFrequencyPenalty,
  kPresencePenalty,
  kLogitBias
};
inline constexpr EnumName<SamplingParam> kSamplingParamNames[] = {
    {SamplingParam::kTemperature, "temperature"},
    {SamplingParam::kTopK, "top_k"},
    {SamplingParam::kTopP, "top_p"},
    {SamplingParam::kMinP, "min_p"},
    {SamplingParam::kRepetitionPenalty, "repetition_penalty"},
    {SamplingParam::kFrequencyPenalty, "frequency_penalty"},
    {SamplingParam::kPresencePenalty, "presence_penalty"},
    {SamplingParam::kLogitBias, "logit_bias"}};

// The name SamplingParams (and OpenAI's API) gives the parameter: "temperature", "top_k", "top_p", ...
std::string_view sampling_param_name(SamplingParam param);

// Which parameter is out of range and why, kept apart so that each boundary names the parameter its own way (the
// CLI "--top-p", the API the JSON field "top_p"); what() names it as SamplingParams does.
class InvalidSamplingParam : public Error {
 public:
  InvalidSamplingParam(SamplingParam param, std::string problem);
  SamplingParam param() const { return param_; }
  const std::string& problem() const { return problem_; }  // e.g. "must be in (0, 1], got 1.5"

 private:
  SamplingParam param_;
  std::string problem_;
};

// The one rule for a number given for a float field, in every frontend (CLI flags, the HTTP API's fields, Python's
// keyword arguments), applied to the number as written (a double) before it becomes a float: a non-zero value smaller
// in magnitude than the smallest normal float (FLT_MIN, 1.17549435e-38) — 1e-320, 4.9e-324, 1e-39 — is refused with
// the field's range, never rounded. As a float it would become 0 (greedy decoding for a temperature, "off" for min-p
// or a penalty) or a subnormal, silently. Returns the float; throws InvalidSamplingParam.
inline constexpr double kSmallestSamplingMagnitude = 1.17549435082228750797e-38;  // FLT_MIN
float sampling_float(SamplingParam param, double value);
// The same refusal for a number written as text that is too small even for a double (the CLI's "1e-400", which
// strtod reads as 0 with ERANGE): `written` is quoted in the message.
[[noreturn]] void refuse_tiny_sampling_value(SamplingParam param, const std::string& written);

// Each parameter's rule, written once: validate() applies them all, and each sampler stage checks its own argument
// with the same function. check_temperature is the rule for a temperature that is applied (divided by).
void check_temperature(float temperature);
void check_top_k(int top_k);
void check_top_p(float top_p);
void check_min_p(float min_p);
void check_repetition_penalty(float penalty);
void check_openai_penalty(SamplingParam which, float penalty);  // frequency or presence
// Finite, in [-100, 100], ids >= 0 and each at most once (the vocabulary is checked where it is known).
void check_logit_bias(const std::vector<LogitBias>& logit_bias);

}  // namespace minigen
