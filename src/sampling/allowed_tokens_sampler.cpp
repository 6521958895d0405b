#include "sampling/allowed_tokens_sampler.h"

#include <limits>

#include "core/error.h"

namespace minigen {

void AllowedTokensSampler::apply(std::span<float> logits, const SamplingContext& context) const {
  const std::span<const uint64_t> allowed = context.allowed_tokens;
  if (allowed.empty()) return;
  if (allowed.size() * 64 < logits.size()) throw Error("the allowed-token mask is shorter than the vocabulary");
  bool any_allowed = false;
  for (std::size_t id = 0; id < logits.size(); ++id) {
    const bool keep = (allowed[id / 64] >> (id % 64)) & 1;
    if (!keep) logits[id] = -std::numeric_limits<float>::infinity();
    any_allowed |= keep;
  }
  if (!any_allowed) throw Error("the grammar allows no token here");
}

}  // namespace minigen
