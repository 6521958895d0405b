#pragma once
// JSON text exactly as Python's json.dumps(value, ensure_ascii=False) writes it: ", " between items, ": " after keys,
// keys in the order they came, non-ASCII characters as themselves. Chat templates render tool definitions and tool
// call arguments with that call (transformers' `tojson` filter), so a prompt that must match a template byte for byte
// needs the same spelling. Keep the order by parsing into nlohmann::ordered_json.
#include <nlohmann/json.hpp>
#include <string>

namespace minigen {

std::string python_json_dumps(const nlohmann::ordered_json& value);

}  // namespace minigen
