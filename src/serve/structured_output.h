#pragma once
// The grammar a request's tokens must follow, from OpenAI's response_format and tool_choice: a JSON object, JSON
// valid against a schema, or a tool call that names a function offered in `tools` with arguments valid against its
// parameter schema. The grammar stage of the sampler chain (grammar/, sampling/allowed_tokens_sampler.h) then masks
// every token that would leave that language, so even the tiny model's output parses.
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "grammar/compiled_grammar.h"
#include "grammar/token_vocabulary.h"

namespace minigen {

// One function of a request's `tools`.
struct ToolFunction {
  std::string name;
  // Its JSON Schema in the client's key order ({"type": "object"} when the client gave none).
  nlohmann::ordered_json parameters;
};

// The functions of OpenAI's `tools` array ([{"type": "function", "function": {"name", "parameters"?}}]). Throws
// ApiError 400 naming what is wrong.
std::vector<ToolFunction> tool_functions(const nlohmann::ordered_json& tools);

// response_format: {"type": "text"} → nullptr; {"type": "json_object"}; {"type": "json_schema", "json_schema":
// {"name", "schema", "strict"?}}. Throws ApiError 400 (unsupported schema keywords named).
std::shared_ptr<const CompiledGrammar> response_format_grammar(const nlohmann::ordered_json& response_format,
                                                               std::shared_ptr<const TokenVocabulary> vocabulary);

// One call of one of `functions`, written as minimind-3's template writes calls:
//   <tool_call>\n{"name": "NAME", "arguments": ARGUMENTS}\n</tool_call>
// then eos. After an open think block (thinking on), "</think>\n\n" first: the reply gives up its reasoning to call.
std::shared_ptr<const CompiledGrammar> forced_tool_call_grammar(const std::vector<ToolFunction>& functions,
                                                                bool close_think_first,
                                                                std::shared_ptr<const TokenVocabulary> vocabulary);

}  // namespace minigen
