#pragma once
// OpenAI's response_format as a grammar over the server's vocabulary: a JSON object, or JSON valid against a schema
// (request/output_grammar.h builds the languages; a forced tool call is the other grammar a request may carry).
#include <memory>
#include <nlohmann/json.hpp>

#include "grammar/compiled_grammar.h"
#include "grammar/grammar.h"
#include "grammar/token_vocabulary.h"

namespace minigen {

// response_format: {"type": "text"} → nullptr; {"type": "json_object"}; {"type": "json_schema", "json_schema":
// {"name", "schema", "strict"?}}. Throws ApiError 400 (unsupported schema keywords named).
std::shared_ptr<const CompiledGrammar> response_format_grammar(const nlohmann::ordered_json& response_format,
                                                               std::shared_ptr<const TokenVocabulary> vocabulary);

// `grammar` over the server's vocabulary; ApiError 400 when the server has none (structured output is off).
std::shared_ptr<const CompiledGrammar> server_grammar(Grammar grammar,
                                                      std::shared_ptr<const TokenVocabulary> vocabulary);

}  // namespace minigen
