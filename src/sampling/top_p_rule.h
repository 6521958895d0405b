#pragma once
// Which engine's top-p (nucleus) boundary to reproduce. The three agree except at the token where the cumulative
// probability crosses p, which is exactly what the lab compares.
//   minimind  — keep tokens through the first whose cumulative probability exceeds p (cum > p, mask shifted right).
//   hf        — in ascending order, remove tokens whose cumulative probability is ≤ 1 − p; the top always stays.
//   llamacpp  — keep tokens in descending order until the cumulative probability reaches p (≥ p), that one included.
#include <string_view>

#include "core/enum_names.h"

namespace minigen {

enum class TopPRule { kMinimind, kHuggingFace, kLlamaCpp };
inline constexpr EnumName<TopPRule> kTopPRuleNames[] = {
    {TopPRule::kMinimind, "minimind"}, {TopPRule::kHuggingFace, "hf"}, {TopPRule::kLlamaCpp, "llamacpp"}};

// "minimind", "hf", "llamacpp"; anything else throws minigen::Error listing the three.
TopPRule parse_top_p_rule(std::string_view text);

// The name parse_top_p_rule accepts for `rule`.
const char* top_p_rule_name(TopPRule rule);

}  // namespace minigen
