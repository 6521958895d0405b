#include "grammar/grammar.h"

#include <algorithm>
#include <nlohmann/json.hpp>
#include <set>
#include <utility>

#include "core/error.h"

namespace minigen {
namespace {

// The matcher keeps a node index in 16 bits and an object's live keys in a 64-bit mask with the key position in
// 8 bits (grammar/byte_matcher.h).
constexpr int kMaxNodes = 65535;
constexpr std::size_t kMaxProperties = 64;
constexpr std::size_t kMaxEncodedKeyBytes = 255;

template <typename T>
void append_raw(std::string& out, const T& value) {
  out.append(reinterpret_cast<const char*>(&value), sizeof(value));
}

// Every field of a node, as bytes: two nodes with the same shape match the same text.
std::string shape_of(const GrammarNode& node) {
  std::string shape;
  append_raw(shape, node.kind);
  append_raw(shape, node.integer_only);
  append_raw(shape, node.min_count);
  append_raw(shape, node.max_count);
  append_raw(shape, node.map_key);
  append_raw(shape, node.map_value);
  append_raw(shape, node.literal.size());
  shape += node.literal;
  append_raw(shape, node.children.size());
  for (const int child : node.children) append_raw(shape, child);
  for (const GrammarProperty& property : node.properties) {
    append_raw(shape, property.value);
    append_raw(shape, property.required);
    append_raw(shape, property.encoded_key.size());
    shape += property.encoded_key;
  }
  return shape;
}

}  // namespace

std::string json_string_literal(std::string_view text) { return nlohmann::json(std::string(text)).dump(); }

int64_t GrammarBuilder::live_stacks_of(const GrammarNode& node) const {
  int64_t most = 1;
  // Saturating: a sum past the budget is refused anyway, and 20,000 nested sums must not overflow.
  // (An invalid reference counts 1 here; build() refuses it.)
  const auto count = [this](int index) {
    return index < 0 || index >= node_count() ? 1 : std::min(live_stacks(index), budget_.max_live_stacks + 1);
  };
  switch (node.kind) {
    case GrammarNodeKind::kAnyOf:  // each alternative's parses, side by side
      most = 0;
      for (const int child : node.children) most += count(child);
      return most;
    case GrammarNodeKind::kSequence:  // one part at a time, and one property value or array item at a time
    case GrammarNodeKind::kArray:
      for (const int child : node.children) most = std::max(most, count(child));
      return most;
    case GrammarNodeKind::kObject:
      for (const GrammarProperty& property : node.properties) most = std::max(most, count(property.value));
      if (node.map_value >= 0) most = std::max(most, count(node.map_value));
      return most;
    default:
      return 1;
  }
}

void GrammarBuilder::check_room_for_a_node() const {
  if (static_cast<int>(nodes_.size()) >= budget_.max_nodes) {
    throw GrammarTooLarge("the grammar needs more than " + std::to_string(budget_.max_nodes) +
                          " distinct nodes (states)");
  }
}

int GrammarBuilder::add(GrammarNode node) {
  std::string shape = shape_of(node);
  if (const auto found = index_by_shape_.find(shape); found != index_by_shape_.end()) return found->second;
  check_room_for_a_node();
  live_stacks_.push_back(live_stacks_of(node));
  nodes_.push_back(std::move(node));
  const int index = static_cast<int>(nodes_.size()) - 1;
  index_by_shape_.emplace(std::move(shape), index);
  return index;
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
  // Equal alternatives are one node already (add() builds each shape once), so repeats are repeated indices.
  std::vector<int> distinct;
  std::set<int> seen;
  for (const int alternative : alternatives) {
    if (alternative < 0 || alternative >= node_count()) {
      throw Error("grammar node reference " + std::to_string(alternative) + " is invalid");
    }
    const GrammarNode& node = nodes_[static_cast<std::size_t>(alternative)];
    const bool nested = node.kind == GrammarNodeKind::kAnyOf && alternative != any_value_;
    for (const int one : nested ? node.children : std::vector<int>{alternative}) {
      if (seen.insert(one).second) distinct.push_back(one);
    }
  }
  if (distinct.size() == 1) return distinct.front();
  if (distinct.size() > static_cast<std::size_t>(budget_.max_alternatives)) {
    throw GrammarTooLarge(std::to_string(distinct.size()) + " alternatives (after duplicates are removed), more than " +
                          "the " + std::to_string(budget_.max_alternatives) + " one choice may have");
  }
  GrammarNode node;
  node.kind = GrammarNodeKind::kAnyOf;
  node.children = std::move(distinct);
  const int64_t live = live_stacks_of(node);
  if (live > budget_.max_live_stacks) {
    throw GrammarTooLarge(
        "at least " + std::to_string(live) +
        " parses may be alive at once (alternatives nested in alternatives multiply), more than the " +
        std::to_string(budget_.max_live_stacks) + " a grammar may keep");
  }
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
  // The alternatives refer back to the anyOf itself, so it is added first and filled in afterwards (outside the
  // shapes: its placeholder must not stand for an empty literal).
  check_room_for_a_node();
  any_value_ = static_cast<int>(nodes_.size());
  nodes_.emplace_back();
  live_stacks_.push_back(1);
  std::vector<int> alternatives = {map(any_value_), array(any_value_), string(), number(), boolean(), null()};
  GrammarNode& node = nodes_[static_cast<std::size_t>(any_value_)];
  node.kind = GrammarNodeKind::kAnyOf;
  node.children = std::move(alternatives);
  live_stacks_[static_cast<std::size_t>(any_value_)] = live_stacks_of(node);
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
