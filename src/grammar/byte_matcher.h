#pragma once
// The pushdown automaton that reads a grammar's language one byte at a time.
//
// A MatchStack is one parse in progress: a stack of frames, each a grammar node and where it is inside that node.
// It is a plain fixed-size value (no pointers, no heap), so copying it is a memcpy and its bytes are a cache key.
// anyOf makes the automaton nondeterministic: a MatchState is the set of stacks still alive, usually one.
//
// advance() feeds one symbol to one stack and appends every stack that results (none: the byte is not allowed).
// Frames that could end only learn it from the next byte (a number "12" may go on with "3" or end at ","): such a
// frame pops itself and hands that byte to its parent. The end of the document is the symbol kEndOfInput, which
// only a stack that has nothing left to read (or only a number that may end) accepts.
#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "grammar/grammar.h"

namespace minigen {

inline constexpr int kEndOfInput = 256;
// Deepest nesting of frames. A schema nests one or two frames per level; free-form JSON deeper than this is not
// generated (the matcher treats it as not allowed).
inline constexpr int kMaxStackDepth = 20;

struct MatchFrame {
  uint16_t node = 0;
  uint8_t phase = 0;    // where inside the node (each kind numbers its own phases)
  uint8_t pending = 0;  // string: UTF-8 continuation bytes or \u hex digits still to come; object: key position
  uint32_t count = 0;   // string code points, array items, sequence part, object: next property, literal: position
  uint64_t bits = 0;    // object: keys still matching; string: allowed range of the next continuation byte / \u value
};
static_assert(sizeof(MatchFrame) == 16, "frames are hashed as raw bytes: no padding");

struct MatchStack {
  uint32_t depth = 0;
  std::array<MatchFrame, kMaxStackDepth> frames{};

  // The bytes that identify this stack (depth and live frames), for hashing and cache keys.
  void append_key(std::string& key) const;
};

// The stack before any byte: the root node at its start.
MatchStack initial_stack(const Grammar& grammar);

// Feeds `symbol` (a byte 0–255 or kEndOfInput) to `stack`; appends the resulting stacks to `out`.
void advance(const Grammar& grammar, MatchStack stack, int symbol, std::vector<MatchStack>& out);
// The same, adding to `steps` the frames it visited (each anyOf branch counts its own): the matcher's unit of work,
// which the mask's budget counts (grammar/compiled_grammar.h) instead of time, so that the limit is deterministic.
void advance(const Grammar& grammar, MatchStack stack, int symbol, std::vector<MatchStack>& out, int64_t& steps);

// A set of live stacks: what a matcher is in after some bytes.
struct MatchState {
  std::vector<MatchStack> stacks;

  static MatchState initial(const Grammar& grammar);
  // Feeds one byte to every stack (duplicates removed). Returns false, leaving the state unchanged, if no stack
  // takes it.
  bool advance_byte(const Grammar& grammar, uint8_t byte);
  bool advance_bytes(const Grammar& grammar, std::string_view bytes);  // all or nothing
  // Whether the document may end here.
  bool accepts_end(const Grammar& grammar) const;
  // Whether any byte can still follow.
  bool can_continue(const Grammar& grammar) const;
  std::string key() const;
};

}  // namespace minigen
