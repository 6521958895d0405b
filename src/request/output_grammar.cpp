#include "request/output_grammar.h"

#include <string>

#include "core/error.h"
#include "grammar/json_schema_compiler.h"
#include "request/request_error.h"

namespace minigen {

Grammar json_output_grammar(const nlohmann::ordered_json& schema) {
  return schema.is_null() ? json_object_grammar() : compile_json_schema(schema);
}

Grammar forced_tool_call_grammar(const std::vector<ToolFunction>& functions, bool close_think_first) {
  GrammarBuilder builder;
  std::vector<int> calls;
  for (const ToolFunction& function : functions) {
    int arguments = -1;
    try {
      arguments = add_json_schema(builder, function.parameters);
    } catch (const Error& error) {
      throw RequestError("tools", "the parameters of tool '" + function.name + "': " + error.what());
    }
    try {
      const std::string name = nlohmann::ordered_json(function.name).dump();
      calls.push_back(builder.sequence({builder.literal("<tool_call>\n{\"name\": " + name + ", \"arguments\": "),
                                        arguments, builder.literal("}\n</tool_call>")}));
    } catch (const GrammarTooLarge& error) {
      throw RequestError("tools", "the calls of tool '" + function.name + "': " + error.what());
    }
  }
  int root = -1;
  try {
    root = builder.any_of(calls);  // every call opens with the same bytes: each one's parse stays alive till its name
    if (close_think_first) root = builder.sequence({builder.literal("</think>\n\n"), root});
  } catch (const GrammarTooLarge& error) {
    throw RequestError("tools",
                       std::string("the calls of the ") + std::to_string(functions.size()) + " tools: " + error.what());
  }
  return std::move(builder).build(root);
}

std::shared_ptr<const CompiledGrammar> tool_choice_grammar(const std::vector<ToolFunction>& functions,
                                                           const ToolChoice& choice, bool close_think_first,
                                                           std::shared_ptr<const TokenVocabulary> vocabulary) {
  if (!choice.forces_call()) return nullptr;
  return std::make_shared<const CompiledGrammar>(
      forced_tool_call_grammar(forced_functions(functions, choice), close_think_first), std::move(vocabulary));
}

void check_one_output_grammar(bool constrains_format, bool forces_tool_call) {
  if (constrains_format && forces_tool_call) {
    throw RequestError("tool_choice", "a forced tool call cannot be combined with a JSON Schema or a JSON object");
  }
}

}  // namespace minigen
