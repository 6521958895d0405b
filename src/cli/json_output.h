#pragma once
#include <string>

#include "core/json_text.h"

namespace minigen::cli {

// JSON text for stdout, indented (see core/json_text.h for why invalid UTF-8 never aborts it).
inline std::string to_json_text(const nlohmann::json& value, int indent = 2) {
  return minigen::to_json_text(value, indent);
}

}  // namespace minigen::cli
