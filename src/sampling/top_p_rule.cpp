#include "sampling/top_p_rule.h"

#include <string>

#include "core/error.h"

namespace minigen {

TopPRule parse_top_p_rule(std::string_view text) {
  if (text == "minimind") return TopPRule::Minimind;
  if (text == "hf") return TopPRule::HuggingFace;
  if (text == "llamacpp") return TopPRule::LlamaCpp;
  throw Error("--top-p-rule must be one of minimind, hf, llamacpp; got '" + std::string(text) + "'");
}

const char* top_p_rule_name(TopPRule rule) {
  switch (rule) {
    case TopPRule::Minimind:
      return "minimind";
    case TopPRule::HuggingFace:
      return "hf";
    case TopPRule::LlamaCpp:
      return "llamacpp";
  }
  throw Error("unknown top-p rule value " + std::to_string(static_cast<int>(rule)));
}

}  // namespace minigen
