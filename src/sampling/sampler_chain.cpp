#include "sampling/sampler_chain.h"

#include <cmath>
#include <limits>
#include <string>

#include "core/error.h"
#include "core/profiler.h"
#include "sampling/counter_rng.h"
#include "sampling/token_choice.h"
#include "sampling/vocab_scan.h"

namespace minigen {
namespace {

// "Removed" means −inf, exactly as MiniMind masks; every other value is still a candidate.
bool is_removed(float logit) { return logit == -std::numeric_limits<float>::infinity(); }

}  // namespace

SamplerChain::SamplerChain(const SamplingParams& params) : params_(params) {
  params_.validate();
  // The row's grammar mask, then MiniMind's order. This is the one place it is written.
  stages_.emplace_back(AllowedTokensSampler());
  if (params_.applies_temperature()) stages_.emplace_back(TemperatureSampler(params_.temperature));
  if (params_.repetition_penalty != 1.0f) stages_.emplace_back(RepetitionPenaltySampler(params_.repetition_penalty));
  if (params_.frequency_penalty != 0.0f || params_.presence_penalty != 0.0f) {
    stages_.emplace_back(OpenAiPenaltySampler(params_.frequency_penalty, params_.presence_penalty));
  }
  if (!params_.logit_bias.empty()) stages_.emplace_back(LogitBiasSampler(params_.logit_bias));
  if (params_.top_k > 0) stages_.emplace_back(TopKSampler(params_.top_k));
  if (params_.top_p < 1.0f) stages_.emplace_back(TopPSampler(params_.top_p, params_.top_p_rule));
  if (params_.min_p > 0.0f) stages_.emplace_back(MinPSampler(params_.min_p));
}

void SamplerChain::filter(std::span<float> logits, const SamplingContext& context) const {
  if (logits.empty()) throw Error("cannot sample from an empty row of logits");
  // A NaN would silently break every comparison below (sorting, thresholds, argmax), so it stops here. Only a row
  // that has one pays for finding where.
  if (any_nan(logits)) {
    for (size_t id = 0; id < logits.size(); ++id) {
      if (std::isnan(logits[id])) throw Error("logit of token " + std::to_string(id) + " is NaN");
    }
  }
  for (const Stage& stage : stages_) {
    std::visit([&](const auto& sampler) { sampler.apply(logits, context); }, stage);
  }
}

std::vector<uint8_t> SamplerChain::kept_mask(std::span<const float> logits, const SamplingContext& context) const {
  std::vector<float> filtered(logits.begin(), logits.end());
  filter(filtered, context);
  std::vector<uint8_t> mask(filtered.size());
  for (size_t id = 0; id < filtered.size(); ++id) mask[id] = is_removed(filtered[id]) ? 0 : 1;
  return mask;
}

SampledToken SamplerChain::sample(std::span<float> logits, const SamplingContext& context) const {
  ProfileZone zone(Zone::kSampling);
  filter(logits, context);
  SampledToken result;
  result.kept_count = count_candidates(logits);
  result.token = params_.takes_argmax()
                     ? argmax(logits)
                     : draw_from_softmax(logits, uniform_for(params_.seed, context.row, context.step));
  return result;
}

std::vector<std::string> SamplerChain::stage_names() const {
  std::vector<std::string> names;
  for (const Stage& stage : stages_) {
    if (std::holds_alternative<AllowedTokensSampler>(stage)) continue;  // a no-op unless the row has a grammar
    names.push_back(std::visit([](const auto& sampler) { return sampler.name(); }, stage));
  }
  names.push_back(params_.takes_argmax() ? "argmax" : "draw(seed=" + std::to_string(params_.seed) + ")");
  return names;
}

}  // namespace minigen
