#include "cli/grammar_flags.h"

#include <nlohmann/json.hpp>

#include "core/error.h"
#include "core/file_io.h"
#include "core/json_parse.h"
#include "request/output_grammar.h"

namespace minigen::cli {

void GrammarFlags::add_to(CLI::App& command) {
  auto* schema = command.add_option("--json-schema", json_schema_file,
                                    "constrain the output to JSON valid against this JSON Schema file");
  auto* object = command.add_flag("--json-object", json_object, "constrain the output to one JSON object");
  schema->excludes(object);
}

namespace {

// The grammar of `schema` (null: any JSON object) over this model's vocabulary.
std::shared_ptr<const CompiledGrammar> compiled(const nlohmann::ordered_json& schema, const Tokenizer& tokenizer,
                                                const ModelConfig& config) {
  return std::make_shared<const CompiledGrammar>(
      json_output_grammar(schema), TokenVocabulary::from_tokenizer(tokenizer, config.vocab_size, config.eos_token_id));
}

}  // namespace

std::shared_ptr<const CompiledGrammar> GrammarFlags::compile(const Tokenizer& tokenizer,
                                                             const ModelConfig& config) const {
  if (json_schema_file.empty() && !json_object) return nullptr;
  if (json_object) return compiled(nullptr, tokenizer, config);
  try {
    constexpr uint64_t kMaxSchemaBytes = uint64_t{1} << 20;
    const std::string text = read_whole_file(json_schema_file, kMaxSchemaBytes, "JSON Schema file");
    nlohmann::ordered_json schema;
    try {
      schema = parse_untrusted_json<nlohmann::ordered_json>(text);
    } catch (const Error& error) {
      throw Error(std::string("the file ") + error.what());
    }
    if (schema.is_null()) throw Error("the file holds null, not a JSON Schema");
    return compiled(schema, tokenizer, config);
  } catch (const Error& error) {
    throw Error("--json-schema " + json_schema_file + ": " + error.what());
  }
}

}  // namespace minigen::cli
