#pragma once
// A grammar for constrained sampling: a small graph of nodes, each one piece of JSON syntax (or literal text), that
// the byte matcher (grammar/byte_matcher.h) walks byte by byte. Plain data, immutable once built, shared by rows.
//
// The language it describes is deliberately narrower than JSON where JSON leaves choices that do not change the
// value, so that a model cannot wander: no whitespace except one optional space after ':' and after ','
// (Python's json.dumps style, {"a": 1, "b": [1, 2]}), object properties in the order the schema lists them,
// numbers of at most 15 integer digits, 15 fraction digits and 2 exponent digits, no \u escapes of surrogates.
// Every document it accepts is still valid JSON that validates against the schema it was compiled from.
//
// GrammarBuilder composes nodes; besides the JSON pieces it has literal text and sequences, so a caller can build
// "literal prefix + JSON value matching a schema + literal suffix" (a forced tool call:
// <tool_call>{"name": "NAME", "arguments": VALUE}</tool_call>).
//
// The builder normalises as it goes, so that what the matcher walks is no larger than the language needs: equal
// nodes are built once (a schema that lists "string" 20,000 times has one string node), and an anyOf drops repeated
// alternatives and takes in the alternatives of an anyOf among them. It also keeps the grammar inside a complexity
// budget (GrammarBudget below), because the matcher's cost grows with it: every generation step of a row walks the
// vocabulary with each parse still alive, so 20,000 alternatives alive at once cost 20,000 walks per step.
#include <cstdint>
#include <limits>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.h"

namespace minigen {

// What one grammar may cost. The numbers admit every realistic schema with a wide margin (OpenAI's structured
// outputs allow at most 1,000 enum values in a whole schema and 5,000 properties) and refuse, before any token is
// generated, the schemas whose every step would cost hundreds of walks of the vocabulary.
struct GrammarBudget {
  // States: distinct grammar nodes after normalisation (the matcher's frames hold a node index in 16 bits).
  int max_nodes = 16384;
  // Alternatives of one choice (an anyOf, an enum, a list of types) after duplicates are removed.
  int max_alternatives = 1024;
  // Parses a matcher may have to keep alive at once, the sum over an anyOf's alternatives and the largest over an
  // object's properties, an array's items or a sequence's parts: alternatives nested under alternatives multiply
  // (an anyOf of 100 objects whose first property is an anyOf of 100 keeps 10,000 parses alive).
  int64_t max_live_stacks = 2048;
};

// The grammar would exceed its budget; what() says which limit and by how much (the schema compiler adds where).
class GrammarTooLarge : public Error {
 public:
  using Error::Error;
};

enum class GrammarNodeKind : uint8_t {
  kLiteral,   // exactly `literal`
  kString,    // a JSON string of min_count … max_count code points
  kNumber,    // a JSON number; integer_only: no fraction, no exponent
  kObject,    // `properties` in order (the required ones present), or with map_value ≥ 0 any keys → map_value
  kArray,     // '[' children[0] (',' children[0])* ']' with min_count … max_count items
  kAnyOf,     // one of `children`
  kSequence,  // every one of `children`, in order
};

inline constexpr int64_t kUnbounded = std::numeric_limits<int64_t>::max();

struct GrammarProperty {
  std::string encoded_key;  // the key as JSON text, quotes included: "\"name\""
  int value = -1;           // node of the property's value
  bool required = false;
};

struct GrammarNode {
  GrammarNodeKind kind = GrammarNodeKind::kLiteral;
  std::string literal;
  bool integer_only = false;
  int64_t min_count = 0;
  int64_t max_count = kUnbounded;
  std::vector<int> children;
  std::vector<GrammarProperty> properties;
  int map_key = -1;    // kObject in map mode: the key's string node
  int map_value = -1;  // kObject in map mode: every value's node

  // Whether the matcher must count (string code points, array items): only then does the count enter the state,
  // so that states without bounds repeat and their masks can be cached.
  bool counts() const { return min_count > 0 || max_count != kUnbounded; }
};

class Grammar {
 public:
  Grammar() = default;
  Grammar(std::vector<GrammarNode> nodes, int root) : nodes_(std::move(nodes)), root_(root) {}

  const GrammarNode& node(int index) const { return nodes_[static_cast<std::size_t>(index)]; }
  int node_count() const { return static_cast<int>(nodes_.size()); }
  int root() const { return root_; }

 private:
  std::vector<GrammarNode> nodes_;
  int root_ = -1;
};

// Builds a Grammar node by node; every method returns the node's index (an existing one when an equal node was
// built before). Throws GrammarTooLarge when the grammar would leave its budget.
class GrammarBuilder {
 public:
  explicit GrammarBuilder(GrammarBudget budget = {}) : budget_(budget) {}

  int literal(std::string_view text);
  int string(int64_t min_length = 0, int64_t max_length = kUnbounded);
  int number();
  int integer();
  int boolean();  // "true" or "false"
  int null();
  // Properties in the order they must appear (at most 64; a key's JSON text at most 255 bytes).
  int object(std::vector<GrammarProperty> properties);
  // Any string keys, each value matching `value` (duplicate keys are not prevented).
  int map(int value);
  int array(int item, int64_t min_items = 0, int64_t max_items = kUnbounded);
  // One of `alternatives`, repeated ones removed and nested anyOfs taken in; a single alternative is returned
  // as it is.
  int any_of(std::vector<int> alternatives);
  int sequence(std::vector<int> parts);
  // Any JSON value (objects with any keys, nested arrays): one recursive node, built once per builder.
  int any_value();

  // Checks the limits above and the node references; throws minigen::Error.
  Grammar build(int root) &&;

  int node_count() const { return static_cast<int>(nodes_.size()); }
  const GrammarBudget& budget() const { return budget_; }
  // Parses that may be alive at once inside `node` (GrammarBudget::max_live_stacks).
  int64_t live_stacks(int node) const { return live_stacks_[static_cast<std::size_t>(node)]; }

 private:
  int add(GrammarNode node);
  void check_room_for_a_node() const;
  int64_t live_stacks_of(const GrammarNode& node) const;

  GrammarBudget budget_;
  std::vector<GrammarNode> nodes_;
  std::vector<int64_t> live_stacks_;           // per node
  std::map<std::string, int> index_by_shape_;  // a node's shape (kind and every field) → its index
  int any_value_ = -1;
};

// The JSON text of a string value, quotes included (the encoding the grammar's literals and keys use).
std::string json_string_literal(std::string_view text);

}  // namespace minigen
