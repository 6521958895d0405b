#pragma once
// JSON that minigen did not write — request bodies, JSON Schemas, tool lists, model and tokenizer files, a model's
// own tool calls — parsed with a nesting limit. nlohmann parses any depth without recursion, but copying,
// converting, dumping and the schema compiler recurse once per level: a 1 MB body of 100,000 nested brackets
// overflowed the server's stack before this limit. Real documents stay far below it.
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "core/error.h"

namespace minigen {

inline constexpr int kMaxJsonDepth = 128;

// Parses `text` (Json is nlohmann::json or nlohmann::ordered_json). Throws minigen::Error whose message continues a
// sentence about the input ("<the file> is not valid JSON: …" / "<the file> is nested more than 128 levels deep"),
// so callers prefix what the text was.
template <class Json>
Json parse_untrusted_json(std::string_view text) {
  struct TooDeep {};
  const auto limit_depth = [](int depth, typename Json::parse_event_t, Json&) {
    if (depth > kMaxJsonDepth) throw TooDeep{};
    return true;
  };
  try {
    return Json::parse(text.begin(), text.end(), limit_depth);
  } catch (const TooDeep&) {
    throw Error("is nested more than " + std::to_string(kMaxJsonDepth) + " levels deep");
  } catch (const typename Json::exception& error) {
    throw Error(std::string("is not valid JSON: ") + error.what());
  }
}

}  // namespace minigen
