#pragma once
#include <string>

#include <nlohmann/json.hpp>

namespace minigen::cli {

// JSON text for stdout. Token text can hold bytes that are not UTF-8 (a model may stop inside a character);
// they are written as U+FFFD instead of aborting the whole report.
inline std::string to_json_text(const nlohmann::json& value, int indent = 2) {
  return value.dump(indent, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace minigen::cli
