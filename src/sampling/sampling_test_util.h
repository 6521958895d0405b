// What the sampler tests share.
#pragma once

#include <limits>

namespace minigen {

// The logit of a token a sampler has removed.
inline constexpr float kMinusInfinity = -std::numeric_limits<float>::infinity();

}  // namespace minigen
