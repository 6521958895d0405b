#pragma once
// JSON text that is always valid UTF-8. Token text can hold bytes that are not UTF-8 (a token may be half of a
// Chinese character, a model may stop inside one); nlohmann::json throws on such strings by default, which must
// never abort a report or a server's response. They are written as U+FFFD instead.
#include <nlohmann/json.hpp>
#include <string>

namespace minigen {

inline std::string to_json_text(const nlohmann::json& value, int indent = -1) {
  return value.dump(indent, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace minigen
