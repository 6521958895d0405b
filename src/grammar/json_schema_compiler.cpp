#include "grammar/json_schema_compiler.h"

#include <algorithm>
#include <cmath>
#include <set>
#include <string>
#include <vector>

#include "core/error.h"

namespace minigen {
namespace {

using json = nlohmann::ordered_json;  // the schema in its own order: properties are generated in it

const std::set<std::string>& supported_keywords() {
  static const std::set<std::string> keywords = {"type", "properties", "required", "additionalProperties", "items",
                                                 "minItems", "maxItems", "minLength", "maxLength", "enum", "const",
                                                 "anyOf",
                                                 // Annotations: they describe the value and do not constrain it.
                                                 "title", "description", "default", "examples", "$schema", "$id",
                                                 "$comment", "deprecated", "readOnly", "writeOnly"};
  return keywords;
}

// Every keyword the compiler does not know, anywhere in the schema, so that one error names them all.
void collect_unsupported(const json& schema, std::set<std::string>& unsupported) {
  if (!schema.is_object()) return;
  for (const auto& [keyword, value] : schema.items()) {
    if (!supported_keywords().count(keyword)) {
      unsupported.insert(keyword);
      continue;
    }
    if (keyword == "properties" && value.is_object()) {
      for (const auto& [name, property] : value.items()) collect_unsupported(property, unsupported);
    } else if (keyword == "items" || keyword == "additionalProperties") {
      collect_unsupported(value, unsupported);
    } else if (keyword == "anyOf" && value.is_array()) {
      for (const json& alternative : value) collect_unsupported(alternative, unsupported);
    }
  }
}

bool matches_type(const json& value, const std::string& type) {
  if (type == "object") return value.is_object();
  if (type == "array") return value.is_array();
  if (type == "string") return value.is_string();
  if (type == "integer")
    return value.is_number_integer() || (value.is_number_float() && value == std::floor(value.get<double>()));
  if (type == "number") return value.is_number();
  if (type == "boolean") return value.is_boolean();
  if (type == "null") return value.is_null();
  throw Error("unknown JSON Schema type \"" + type + "\"");
}

int64_t count_keyword(const json& schema, const char* keyword, int64_t fallback) {
  if (!schema.contains(keyword)) return fallback;
  const json& value = schema[keyword];
  if (!value.is_number_integer() || value.get<int64_t>() < 0) {
    throw Error(std::string("JSON Schema keyword ") + keyword + " must be a non-negative integer");
  }
  return value.get<int64_t>();
}

class SchemaCompiler {
 public:
  explicit SchemaCompiler(GrammarBuilder& builder) : builder_(builder) {}

  int compile(const json& schema) {
    if (schema.is_boolean()) {
      if (!schema.get<bool>()) throw Error("the JSON Schema false accepts no value");
      return builder_.any_value();
    }
    if (!schema.is_object()) throw Error("a JSON Schema must be an object, got: " + schema.dump());
    if (schema.contains("enum") || schema.contains("const")) return compile_values(schema);
    if (schema.contains("anyOf")) return compile_any_of(schema);
    if (!schema.contains("type")) return builder_.any_value();
    const json& type = schema["type"];
    if (type.is_string()) return compile_type(schema, type.get<std::string>());
    if (!type.is_array() || type.empty()) throw Error("JSON Schema \"type\" must be a string or a non-empty array");
    std::vector<int> alternatives;
    for (const json& one : type) {
      if (!one.is_string()) throw Error("JSON Schema \"type\" lists a non-string: " + one.dump());
      alternatives.push_back(compile_type(schema, one.get<std::string>()));
    }
    return alternatives.size() == 1 ? alternatives[0] : builder_.any_of(std::move(alternatives));
  }

 private:
  // enum and const: each allowed value as literal JSON text (values of another type than "type" left out).
  int compile_values(const json& schema) {
    std::vector<json> values;
    if (schema.contains("enum") && (!schema["enum"].is_array() || schema["enum"].empty())) {
      throw Error("JSON Schema enum must be a non-empty array");
    }
    if (schema.contains("const")) {
      values.push_back(schema["const"]);
      const json& listed = schema.contains("enum") ? schema["enum"] : json::array({schema["const"]});
      if (std::find(listed.begin(), listed.end(), schema["const"]) == listed.end()) {
        throw Error("JSON Schema const is not one of its enum values");
      }
    } else {
      values.assign(schema["enum"].begin(), schema["enum"].end());
    }
    std::vector<int> literals;
    for (const json& value : values) {
      if (schema.contains("type") && !type_allows(schema["type"], value)) continue;
      literals.push_back(builder_.literal(value.dump()));
    }
    if (literals.empty()) throw Error("JSON Schema enum/const: no value matches the schema's type");
    return literals.size() == 1 ? literals[0] : builder_.any_of(std::move(literals));
  }

  static bool type_allows(const json& type, const json& value) {
    if (type.is_string()) return matches_type(value, type.get<std::string>());
    for (const json& one : type) {
      if (one.is_string() && matches_type(value, one.get<std::string>())) return true;
    }
    return false;
  }

  int compile_any_of(const json& schema) {
    for (const auto& [keyword, value] : schema.items()) {
      if (keyword == "anyOf" || keyword == "title" || keyword == "description" || keyword == "default" ||
          keyword == "examples" || keyword == "$schema" || keyword == "$id" || keyword == "$comment") {
        continue;
      }
      throw Error("JSON Schema anyOf is supported alone (with annotations), not beside \"" + keyword + "\"");
    }
    const json& alternatives = schema["anyOf"];
    if (!alternatives.is_array() || alternatives.empty()) throw Error("JSON Schema anyOf must be a non-empty array");
    std::vector<int> nodes;
    for (const json& alternative : alternatives) nodes.push_back(compile(alternative));
    return nodes.size() == 1 ? nodes[0] : builder_.any_of(std::move(nodes));
  }

  int compile_type(const json& schema, const std::string& type) {
    if (type == "string") {
      return builder_.string(count_keyword(schema, "minLength", 0), count_keyword(schema, "maxLength", kUnbounded));
    }
    if (type == "number") return builder_.number();
    if (type == "integer") return builder_.integer();
    if (type == "boolean") return builder_.boolean();
    if (type == "null") return builder_.null();
    if (type == "array") {
      const int item = schema.contains("items") ? compile(schema["items"]) : builder_.any_value();
      return builder_.array(item, count_keyword(schema, "minItems", 0), count_keyword(schema, "maxItems", kUnbounded));
    }
    if (type == "object") return compile_object(schema);
    throw Error("unknown JSON Schema type \"" + type + "\"");
  }

  int compile_object(const json& schema) {
    const json empty = json::object();
    const json& properties = schema.contains("properties") ? schema["properties"] : empty;
    if (!properties.is_object()) throw Error("JSON Schema properties must be an object");
    std::set<std::string> required;
    if (schema.contains("required")) {
      if (!schema["required"].is_array()) throw Error("JSON Schema required must be an array of names");
      for (const json& name : schema["required"]) {
        if (!name.is_string()) throw Error("JSON Schema required must be an array of names");
        if (!properties.contains(name.get<std::string>())) {
          throw Error("required property \"" + name.get<std::string>() + "\" is not in properties");
        }
        required.insert(name.get<std::string>());
      }
    }
    const json additional = schema.contains("additionalProperties") ? schema["additionalProperties"] : json(true);
    if (!additional.is_boolean() && !additional.is_object()) {
      throw Error("JSON Schema additionalProperties must be a boolean or a schema");
    }
    if (properties.empty() && additional != json(false)) {
      // No property listed: a map, any keys, each value matching additionalProperties.
      return builder_.map(additional.is_object() ? compile(additional) : builder_.any_value());
    }
    std::vector<GrammarProperty> compiled;
    for (const auto& [name, property] : properties.items()) {
      compiled.push_back(GrammarProperty{json_string_literal(name), compile(property), required.count(name) > 0});
    }
    return builder_.object(std::move(compiled));
  }

  GrammarBuilder& builder_;
};

}  // namespace

int add_json_schema(GrammarBuilder& builder, const json& schema) {
  std::set<std::string> unsupported;
  collect_unsupported(schema, unsupported);
  if (!unsupported.empty()) {
    std::string names;
    for (const std::string& name : unsupported) names += (names.empty() ? "" : ", ") + name;
    throw Error("unsupported JSON Schema keyword(s): " + names);
  }
  return SchemaCompiler(builder).compile(schema);
}

Grammar compile_json_schema(const json& schema) {
  GrammarBuilder builder;
  const int root = add_json_schema(builder, schema);
  return std::move(builder).build(root);
}

Grammar json_object_grammar() {
  GrammarBuilder builder;
  const int root = builder.map(builder.any_value());
  return std::move(builder).build(root);
}

}  // namespace minigen
