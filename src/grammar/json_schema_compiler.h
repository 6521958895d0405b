#pragma once
// JSON Schema → Grammar, for the subset structured output needs (OpenAI's response_format json_schema):
//   type (one or a list): object, array, string, number, integer, boolean, null
//   properties, required, additionalProperties (false; true or absent generates only the listed properties, or any
//   keys when none are listed; a schema applies to every key when none are listed), items, minItems, maxItems,
//   minLength, maxLength, enum, const, anyOf; annotations (title, description, default, examples, $schema, …) are
//   ignored.
// Any other keyword (pattern, format, minimum, $ref, oneOf, …) is refused with a minigen::Error naming every such
// keyword in the schema: "unsupported JSON Schema keyword(s): format, pattern".
//
// Properties come out in the order the schema lists them (parse it into nlohmann::ordered_json to keep that order;
// OpenAI's structured outputs keep it too); the grammar never generates keys a schema does not list, which every schema
// here allows.
#include <nlohmann/json.hpp>

#include "grammar/grammar.h"

namespace minigen {

// Adds the schema's nodes to `builder` and returns the value's node: for composing, e.g. a tool call's literal
// prefix + arguments matching a schema + literal suffix.
int add_json_schema(GrammarBuilder& builder, const nlohmann::ordered_json& schema);

// A grammar whose documents are one JSON value valid against `schema`.
Grammar compile_json_schema(const nlohmann::ordered_json& schema);

// response_format {"type": "json_object"}: any JSON object.
Grammar json_object_grammar();

}  // namespace minigen
