#include "request/tools.h"

#include "request/request_error.h"

namespace minigen {

using nlohmann::ordered_json;

std::vector<ToolFunction> tool_functions(const ordered_json& tools) {
  if (!tools.is_array()) throw RequestError("tools", "'tools' must be an array of function definitions");
  std::vector<ToolFunction> functions;
  for (const ordered_json& tool : tools) {
    if (!tool.is_object() || tool.value("type", "") != "function" || !tool.contains("function") ||
        !tool["function"].is_object()) {
      throw RequestError("tools", "every tool must be {\"type\": \"function\", \"function\": {\"name\": …}}");
    }
    const ordered_json& function = tool["function"];
    if (!function.contains("name") || !function["name"].is_string() || function["name"].get<std::string>().empty()) {
      throw RequestError("tools", "every tool function needs a non-empty string 'name'");
    }
    ToolFunction entry{function["name"], ordered_json{{"type", "object"}}};
    if (function.contains("parameters") && !function["parameters"].is_null()) {
      if (!function["parameters"].is_object()) {
        throw RequestError("tools", "the parameters of tool '" + entry.name + "' must be a JSON Schema object");
      }
      entry.parameters = function["parameters"];
    }
    functions.push_back(std::move(entry));
  }
  return functions;
}

ToolChoice ToolChoice::from_text(const std::string& text) {
  if (text == "auto") return {};
  if (text == "none") return {Mode::kNone, ""};
  if (text == "required") return {Mode::kRequired, ""};
  return {Mode::kFunction, text};
}

std::vector<ToolFunction> forced_functions(const std::vector<ToolFunction>& functions, const ToolChoice& choice) {
  if (choice.mode == ToolChoice::Mode::kRequired) return functions;
  if (choice.mode != ToolChoice::Mode::kFunction) return {};
  for (const ToolFunction& function : functions) {
    if (function.name == choice.function) return {function};
  }
  throw RequestError("tool_choice", "no such function among the tools");
}

}  // namespace minigen
