#include "serve/structured_output.h"

#include "core/error.h"
#include "grammar/json_schema_compiler.h"
#include "serve/openai_api.h"

namespace minigen {
namespace {

using json = nlohmann::ordered_json;  // as the client sent it: a schema's properties are generated in its order

std::shared_ptr<const CompiledGrammar> compiled(Grammar grammar, std::shared_ptr<const TokenVocabulary> vocabulary) {
  if (!vocabulary) throw ApiError(400, "structured output is not available on this server", "response_format");
  return std::make_shared<const CompiledGrammar>(std::move(grammar), std::move(vocabulary));
}

}  // namespace

std::vector<ToolFunction> tool_functions(const json& tools) {
  if (!tools.is_array()) throw ApiError(400, "'tools' must be an array of function definitions", "tools");
  std::vector<ToolFunction> functions;
  for (const json& tool : tools) {
    if (!tool.is_object() || tool.value("type", "") != "function" || !tool.contains("function") ||
        !tool["function"].is_object()) {
      throw ApiError(400, "every tool must be {\"type\": \"function\", \"function\": {\"name\": …}}", "tools");
    }
    const json& function = tool["function"];
    if (!function.contains("name") || !function["name"].is_string() || function["name"].get<std::string>().empty()) {
      throw ApiError(400, "every tool function needs a non-empty string 'name'", "tools");
    }
    ToolFunction entry{function["name"], json{{"type", "object"}}};
    if (function.contains("parameters") && !function["parameters"].is_null()) {
      if (!function["parameters"].is_object()) {
        throw ApiError(400, "the parameters of tool '" + entry.name + "' must be a JSON Schema object", "tools");
      }
      entry.parameters = function["parameters"];
    }
    functions.push_back(std::move(entry));
  }
  return functions;
}

std::shared_ptr<const CompiledGrammar> response_format_grammar(const json& response_format,
                                                               std::shared_ptr<const TokenVocabulary> vocabulary) {
  if (!response_format.is_object() || !response_format.contains("type") || !response_format["type"].is_string()) {
    throw ApiError(400, "'response_format' must be an object with a string 'type'", "response_format");
  }
  const std::string type = response_format["type"];
  if (type == "text") return nullptr;
  if (type == "json_object") return compiled(json_object_grammar(), std::move(vocabulary));
  if (type != "json_schema") {
    throw ApiError(400, "'response_format.type' must be text, json_object or json_schema, got '" + type + "'",
                   "response_format");
  }
  const auto found = response_format.find("json_schema");
  if (found == response_format.end() || !found->is_object() || !found->contains("schema") ||
      !(*found)["schema"].is_object()) {
    throw ApiError(400, "'response_format.json_schema' must be {\"name\": …, \"schema\": {…}}", "response_format");
  }
  try {
    return compiled(compile_json_schema((*found)["schema"]), std::move(vocabulary));
  } catch (const ApiError&) {
    throw;
  } catch (const Error& error) {
    throw ApiError(400, std::string("response_format.json_schema.schema: ") + error.what(), "response_format");
  }
}

std::shared_ptr<const CompiledGrammar> forced_tool_call_grammar(const std::vector<ToolFunction>& functions,
                                                                bool close_think_first,
                                                                std::shared_ptr<const TokenVocabulary> vocabulary) {
  GrammarBuilder builder;
  std::vector<int> calls;
  for (const ToolFunction& function : functions) {
    int arguments = -1;
    try {
      arguments = add_json_schema(builder, function.parameters);
    } catch (const Error& error) {
      throw ApiError(400, "the parameters of tool '" + function.name + "': " + error.what(), "tools");
    }
    try {
      calls.push_back(builder.sequence(
          {builder.literal("<tool_call>\n{\"name\": " + json(function.name).dump() + ", \"arguments\": "), arguments,
           builder.literal("}\n</tool_call>")}));
    } catch (const GrammarTooLarge& error) {
      throw ApiError(400, "the calls of tool '" + function.name + "': " + error.what(), "tools");
    }
  }
  int root = -1;
  try {
    root = builder.any_of(calls);  // every call opens with the same bytes: each one's parse stays alive till its name
    if (close_think_first) root = builder.sequence({builder.literal("</think>\n\n"), root});
  } catch (const GrammarTooLarge& error) {
    throw ApiError(400, std::string("the calls of the ") + std::to_string(functions.size()) + " tools: " + error.what(),
                   "tools");
  }
  return compiled(std::move(builder).build(root), std::move(vocabulary));
}

}  // namespace minigen
