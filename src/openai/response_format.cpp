#include "openai/response_format.h"

#include <string>

#include "core/error.h"
#include "openai/api_error.h"
#include "request/output_grammar.h"

namespace minigen {

using nlohmann::ordered_json;  // as the client sent it: a schema's properties are generated in its order

std::shared_ptr<const CompiledGrammar> server_grammar(Grammar grammar,
                                                      std::shared_ptr<const TokenVocabulary> vocabulary) {
  if (!vocabulary) throw ApiError(400, "structured output is not available on this server", "response_format");
  return std::make_shared<const CompiledGrammar>(std::move(grammar), std::move(vocabulary));
}

std::shared_ptr<const CompiledGrammar> response_format_grammar(const ordered_json& response_format,
                                                               std::shared_ptr<const TokenVocabulary> vocabulary) {
  if (!response_format.is_object() || !response_format.contains("type") || !response_format["type"].is_string()) {
    throw ApiError(400, "'response_format' must be an object with a string 'type'", "response_format");
  }
  const std::string type = response_format["type"];
  if (type == "text") return nullptr;
  if (type == "json_object") return server_grammar(json_output_grammar(nullptr), std::move(vocabulary));
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
    return server_grammar(json_output_grammar((*found)["schema"]), std::move(vocabulary));
  } catch (const ApiError&) {
    throw;
  } catch (const Error& error) {
    throw ApiError(400, std::string("response_format.json_schema.schema: ") + error.what(), "response_format");
  }
}

}  // namespace minigen
