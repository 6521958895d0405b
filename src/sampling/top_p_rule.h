#pragma once
// Which engine's top-p (nucleus) boundary to reproduce. The three agree except at the token where the cumulative
// probability crosses p, which is exactly what the lab compares.
//   Minimind    — keep tokens through the first whose cumulative probability exceeds p (cum > p, mask shifted right).
//   HuggingFace — in ascending order, remove tokens whose cumulative probability is ≤ 1 − p; the top always stays.
//   LlamaCpp    — keep tokens in descending order until the cumulative probability reaches p (≥ p), that one included.
#include <string_view>

namespace minigen {

enum class TopPRule { Minimind, HuggingFace, LlamaCpp };

// "minimind", "hf", "llamacpp"; anything else throws minigen::Error listing the three.
TopPRule parse_top_p_rule(std::string_view text);

// The name parse_top_p_rule accepts for `rule`.
const char* top_p_rule_name(TopPRule rule);

}  // namespace minigen
