#pragma once
// The grammar a run's tokens must follow, from what every frontend can ask for: JSON valid against a JSON Schema,
// any JSON object, or one call of the offered tools. The grammar stage of the sampler chain (grammar/,
// sampling/allowed_tokens_sampler.h) then masks every token that would leave that language, so even the tiny model's
// output parses. Compiling a grammar over a vocabulary is the frontend's step: the server has one vocabulary for all
// requests (or none), the CLI and Python build one per run.
#include <memory>
#include <nlohmann/json.hpp>
#include <vector>

#include "grammar/compiled_grammar.h"
#include "grammar/grammar.h"
#include "grammar/token_vocabulary.h"
#include "request/tools.h"

namespace minigen {

// JSON valid against `schema` (a parsed JSON Schema, in the client's key order: properties are generated in it), or
// any JSON object when `schema` is null. Throws Error from the schema compiler (unsupported keywords named).
Grammar json_output_grammar(const nlohmann::ordered_json& schema);

// One call of one of `functions`, written as minimind-3's template writes calls:
//   <tool_call>\n{"name": "NAME", "arguments": ARGUMENTS}\n</tool_call>
// then eos. After an open think block (thinking on), "</think>\n\n" first: the reply gives up its reasoning to call.
// Throws RequestError on "tools" for a parameter schema the compiler refuses or calls too large to compile.
Grammar forced_tool_call_grammar(const std::vector<ToolFunction>& functions, bool close_think_first);

// tool_choice's grammar over `vocabulary`: the forced call (forced_functions, then forced_tool_call_grammar), or
// nullptr when the choice forces none.
std::shared_ptr<const CompiledGrammar> tool_choice_grammar(const std::vector<ToolFunction>& functions,
                                                           const ToolChoice& choice, bool close_think_first,
                                                           std::shared_ptr<const TokenVocabulary> vocabulary);

// A run follows one grammar: an output format (a JSON Schema, any JSON object) or a forced tool call, not both — a
// call is a <tool_call> block, never the format's JSON. Throws RequestError on "tool_choice" when both are asked for.
void check_one_output_grammar(bool constrains_format, bool forces_tool_call);

}  // namespace minigen
