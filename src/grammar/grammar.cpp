#include "grammar/grammar.h"

#include <nlohmann/json.hpp>
#include <utility>

#include "core/error.h"

namespace minigen {
namespace {

// The matcher keeps a node index in 16 bits and an object's live keys in a 64-bit mask with the key position in
// 8 bits (grammar/byte_matcher.h).
constexpr int kMaxNodes = 65535;
constexpr std::size_t kMaxProperties = 64;
constexpr std::size_t kMaxEncodedKeyBytes = 255;

}  // namespace

std::string json_string_literal(std::string_view text) { return nlohmann::json(std::string(text)).dump(); }

int GrammarBuilder::add(GrammarNode node) {
  nodes_.push_back(std::move(node));
  return static_cast<int>(nodes_.size()) - 1;
}

int GrammarBuilder::literal(std::string_view text) {
  GrammarNode node;
  node.kind = GrammarNodeKind::kLiteral;
  node.literal = std::string(text);
  return add(std::move(node));
}

int GrammarBuilder::string(int64_t min_length, int64_t max_length) {
  if (min_length < 0 || max_length < min_length) throw Error("string length bounds must satisfy 0 ≤ min ≤ max");
  GrammarNode node;
  node.kind = GrammarNodeKind::kString;
  node.min_count = min_length;
  node.max_count = max_length;
  return add(std::move(node));
}

int GrammarBuilder::number() {
  GrammarNode node;
  node.kind = GrammarNodeKind::kNumber;
  return add(std::move(node));
}

int GrammarBuilder::integer() {
  GrammarNode node;
  node.kind = GrammarNodeKind::kNumber;
  node.integer_only = true;
  return add(std::move(node));
}

int GrammarBuilder::boolean() { return any_of({literal("true"), literal("false")}); }

int GrammarBuilder::null() { return literal("null"); }

int GrammarBuilder::object(std::vector<GrammarProperty> properties) {
  GrammarNode node;
  node.kind = GrammarNodeKind::kObject;
  node.properties = std::move(properties);
  return add(std::move(node));
}

int GrammarBuilder::map(int value) {
  GrammarNode node;
  node.kind = GrammarNodeKind::kObject;
  node.map_key = string();
  node.map_value = value;
  return add(std::move(node));
}

int GrammarBuilder::array(int item, int64_t min_items, int64_t max_items) {
  if (min_items < 0 || max_items < min_items) throw Error("array item bounds must satisfy 0 ≤ min ≤ max");
  GrammarNode node;
  node.kind = GrammarNodeKind::kArray;
  node.children = {item};
  node.min_count = min_items;
  node.max_count = max_items;
  return add(std::move(node));
}

int GrammarBuilder::any_of(std::vector<int> alternatives) {
  if (alternatives.empty()) throw Error("anyOf needs at least one alternative");
  GrammarNode node;
  node.kind = GrammarNodeKind::kAnyOf;
  node.children = std::move(alternatives);
  return add(std::move(node));
}

int GrammarBuilder::sequence(std::vector<int> parts) {
  GrammarNode node;
  node.kind = GrammarNodeKind::kSequence;
  node.children = std::move(parts);
  return add(std::move(node));
}

int GrammarBuilder::any_value() {
  if (any_value_ >= 0) return any_value_;
  // The alternatives refer back to the anyOf itself, so it is added first and filled in afterwards.
  any_value_ = add(GrammarNode{});
  std::vector<int> alternatives = {map(any_value_), array(any_value_), string(), number(), boolean(), null()};
  nodes_[static_cast<std::size_t>(any_value_)].kind = GrammarNodeKind::kAnyOf;
  nodes_[static_cast<std::size_t>(any_value_)].children = std::move(alternatives);
  return any_value_;
}

Grammar GrammarBuilder::build(int root) && {
  const int count = static_cast<int>(nodes_.size());
  if (count > kMaxNodes)
    throw Error("the grammar has " + std::to_string(count) + " nodes, more than " + std::to_string(kMaxNodes) +
                ": the schema is too large");
  const auto check_reference = [count](int index) {
    if (index < 0 || index >= count) throw Error("grammar node reference " + std::to_string(index) + " is invalid");
  };
  check_reference(root);
  for (const GrammarNode& node : nodes_) {
    for (const int child : node.children) check_reference(child);
    if (node.kind == GrammarNodeKind::kArray && node.children.size() != 1) throw Error("an array needs one item node");
    if (node.kind != GrammarNodeKind::kObject) continue;
    if (node.map_value >= 0) {
      check_reference(node.map_key);
      check_reference(node.map_value);
    }
    if (node.properties.size() > kMaxProperties) {
      throw Error("an object lists " + std::to_string(node.properties.size()) + " properties, more than " +
                  std::to_string(kMaxProperties));
    }
    for (const GrammarProperty& property : node.properties) {
      check_reference(property.value);
      const std::string& key = property.encoded_key;
      if (key.size() < 2 || key.size() > kMaxEncodedKeyBytes || key.front() != '"' || key.back() != '"') {
        throw Error("property key " + key + " must be JSON string text of at most 255 bytes");
      }
    }
  }
  return Grammar(std::move(nodes_), root);
}

}  // namespace minigen
