#pragma once
// The tools a request offers and the call it may force. Every frontend takes OpenAI's tools array (the CLI's --tools
// file, Python's tools=[...], the API's "tools"), and tool_choice means the same in each: auto (the model may call),
// none (nothing is offered), required (one call of any function) or one function by name.
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace minigen {

// One function of a request's tools.
struct ToolFunction {
  std::string name;
  // Its JSON Schema in the client's key order ({"type": "object"} when the client gave none).
  nlohmann::ordered_json parameters;
};

// The functions of OpenAI's tools array ([{"type": "function", "function": {"name", "parameters"?}}]). Throws
// RequestError on "tools" naming what is wrong.
std::vector<ToolFunction> tool_functions(const nlohmann::ordered_json& tools);

struct ToolChoice {
  enum class Mode { kAuto, kNone, kRequired, kFunction };
  Mode mode = Mode::kAuto;
  std::string function;  // kFunction: the name

  // "auto", "none", "required", or else a function's name (the CLI's and Python's spelling).
  static ToolChoice from_text(const std::string& text);
  bool offers_tools() const { return mode != Mode::kNone; }
  bool forces_call() const { return mode == Mode::kRequired || mode == Mode::kFunction; }
};

// The functions one call is forced to: none for auto and none, all of them for required, the named one. Throws
// RequestError on "tool_choice" when the name is not among `functions`.
std::vector<ToolFunction> forced_functions(const std::vector<ToolFunction>& functions, const ToolChoice& choice);

}  // namespace minigen
