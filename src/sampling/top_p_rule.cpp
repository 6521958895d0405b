#include "sampling/top_p_rule.h"

#include <string>

#include "core/error.h"

namespace minigen {

TopPRule parse_top_p_rule(std::string_view text) {
  if (const auto rule = value_named(kTopPRuleNames, text)) return *rule;
  throw Error("--top-p-rule must be one of " + names_listed(kTopPRuleNames, ", ") + "; got '" + std::string(text) +
              "'");
}

// The table's names are string literals, so the view's data is a terminated C string.
const char* top_p_rule_name(TopPRule rule) { return name_in(kTopPRuleNames, rule, "unknown").data(); }

}  // namespace minigen
