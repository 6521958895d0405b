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

const std::set<std::string>& type_names() {
  static const std::set<std::string> names = {"object", "array", "string", "number", "integer", "boolean", "null"};
  return names;
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

// RFC 6901: "~" and "/" inside a key are written "~0" and "~1".
std::string pointer_segment(std::string_view key) {
  std::string segment;
  for (const char c : key) segment += c == '~' ? "~0" : c == '/' ? "~1" : std::string(1, c);
  return segment;
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
    // Each name once, in the order first listed: ["string"] × 20,000 is "string" (and "array" with a large
    // "items" is compiled once, not once per repeat).
    std::vector<std::string> names;
    for (const json& one : type) {
      if (!one.is_string()) throw Error("JSON Schema \"type\" lists a non-string: " + one.dump());
      if (!type_names().count(one.get<std::string>())) {
        throw Error("unknown JSON Schema type \"" + one.get<std::string>() + "\"");
      }
      if (std::find(names.begin(), names.end(), one.get<std::string>()) == names.end()) names.push_back(one);
    }
    std::vector<int> alternatives;
    for (const std::string& name : names) alternatives.push_back(compile_type(schema, name));
    return at("type", [&] { return builder_.any_of(std::move(alternatives)); });
  }

 private:
  // Runs `build` one level deeper in the schema, at `segment`: a GrammarTooLarge thrown there becomes an Error
  // that says where ("at /properties/a/anyOf: 20000 alternatives …"), once, at the deepest level.
  template <typename Build>
  int at(std::string_view segment, Build&& build) {
    path_.push_back(pointer_segment(segment));
    struct Pop {
      std::vector<std::string>& path;
      ~Pop() { path.pop_back(); }
    } pop{path_};
    try {
      return build();
    } catch (const GrammarTooLarge& error) {
      throw Error("at " + pointer() + ": " + error.what());
    }
  }

  // Where in the schema the compiler is, as a JSON pointer ("/properties/a/anyOf"; "" is the root).
  std::string pointer() const {
    std::string out;
    for (const std::string& segment : path_) out += "/" + segment;
    return out;
  }

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
    return at(schema.contains("const") ? "const" : "enum", [&] {
      Alternatives literals(builder_);
      for (const json& value : values) {
        // Equal values give equal literals, which the builder keeps once.
        if (!schema.contains("type") || type_allows(schema["type"], value))
          literals.add(builder_.literal(value.dump()));
      }
      if (literals.nodes.empty()) throw Error("JSON Schema enum/const: no value matches the schema's type");
      return builder_.any_of(std::move(literals.nodes));
    });
  }

  // The alternatives of one choice as they are compiled, refused as soon as there are more distinct ones than the
  // budget allows (20,000 of them are not all compiled first).
  struct Alternatives {
    explicit Alternatives(const GrammarBuilder& builder) : limit(builder.budget().max_alternatives) {}
    void add(int node) {
      nodes.push_back(node);
      if (distinct.insert(node).second && static_cast<int>(distinct.size()) > limit) {
        throw GrammarTooLarge("more than " + std::to_string(limit) +
                              " distinct alternatives, the most one choice may have");
      }
    }
    int limit;
    std::vector<int> nodes;
    std::set<int> distinct;
  };

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
    return at("anyOf", [&] {
      Alternatives nodes(builder_);
      for (std::size_t i = 0; i < alternatives.size(); ++i) {
        nodes.add(at(std::to_string(i), [&] { return compile(alternatives[i]); }));
      }
      return builder_.any_of(std::move(nodes.nodes));  // repeated alternatives are one node, kept once
    });
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
      const int item =
          schema.contains("items") ? at("items", [&] { return compile(schema["items"]); }) : builder_.any_value();
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
      return builder_.map(additional.is_object() ? at("additionalProperties", [&] { return compile(additional); })
                                                 : builder_.any_value());
    }
    std::vector<GrammarProperty> compiled;
    for (const auto& item : properties.items()) {
      // Named, not a structured binding: clang 14 (the fuzz build) cannot capture a binding in a lambda.
      const std::string& name = item.key();
      const auto& property = item.value();
      const int value = at("properties", [&] { return at(name, [&] { return compile(property); }); });
      compiled.push_back(GrammarProperty{json_string_literal(name), value, required.count(name) > 0});
    }
    return builder_.object(std::move(compiled));
  }

  GrammarBuilder& builder_;
  std::vector<std::string> path_;  // the pointer's segments, escaped
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
  SchemaCompiler compiler(builder);
  try {
    return compiler.compile(schema);
  } catch (const GrammarTooLarge& error) {  // at the root itself: the deeper levels say where
    throw Error(std::string("at the root: ") + error.what());
  }
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
