#include "grammar/byte_matcher.h"

#include <string>
#include <unordered_set>
#include <utility>

namespace minigen {
namespace {

// What one node did with the symbol.
enum class Step {
  kDead,      // the symbol is not allowed here
  kConsumed,  // the symbol is read; the stack is the result
  kRetry,     // the stack changed without reading (a child pushed, a finished frame popped): offer the symbol again
};

MatchFrame& top(MatchStack& stack) { return stack.frames[stack.depth - 1]; }

void pop(MatchStack& stack) { --stack.depth; }

// Pushes a child frame at its start; false when the stack is full (the nesting is too deep to be generated).
bool push(MatchStack& stack, int node) {
  if (stack.depth == kMaxStackDepth) return false;
  stack.frames[stack.depth++] = MatchFrame{static_cast<uint16_t>(node), 0, 0, 0, 0};
  return true;
}

bool is_digit(int c) { return c >= '0' && c <= '9'; }

int hex_value(int c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// --- strings -------------------------------------------------------------------------------------------------
enum StringPhase : uint8_t { kStringOpen, kStringBody, kStringEscape, kStringHex, kStringUtf8 };

// The byte range a UTF-8 continuation byte may take, packed as lo | hi << 8 (RFC 3629: no overlong forms, no
// surrogates, nothing above U+10FFFF).
constexpr uint64_t range(int lo, int hi) { return static_cast<uint64_t>(lo) | static_cast<uint64_t>(hi) << 8; }
constexpr uint64_t kAnyContinuation = range(0x80, 0xBF);

// A new code point starts: counted when the node has length bounds, refused at max_length.
bool start_code_point(const GrammarNode& node, MatchFrame& frame) {
  if (!node.counts()) return true;
  if (frame.count >= node.max_count) return false;
  ++frame.count;
  return true;
}

Step step_string(const GrammarNode& node, MatchStack& stack, int c) {
  MatchFrame& frame = top(stack);
  switch (frame.phase) {
    case kStringOpen:
      if (c != '"') return Step::kDead;
      frame.phase = kStringBody;
      return Step::kConsumed;
    case kStringBody:
      if (c == '"') {
        if (node.counts() && frame.count < node.min_count) return Step::kDead;
        pop(stack);
        return Step::kConsumed;
      }
      if (c == kEndOfInput || c < 0x20 || !start_code_point(node, frame)) return Step::kDead;
      if (c == '\\') {
        frame.phase = kStringEscape;
      } else if (c >= 0x80) {
        // Lead byte → how many continuation bytes follow and the range of the first one.
        if (c >= 0xC2 && c <= 0xDF) {
          frame.pending = 1, frame.bits = kAnyContinuation;
        } else if (c >= 0xE0 && c <= 0xEF) {
          frame.pending = 2, frame.bits = c == 0xE0   ? range(0xA0, 0xBF)
                                          : c == 0xED ? range(0x80, 0x9F)
                                                      : kAnyContinuation;
        } else if (c >= 0xF0 && c <= 0xF4) {
          frame.pending = 3, frame.bits = c == 0xF0   ? range(0x90, 0xBF)
                                          : c == 0xF4 ? range(0x80, 0x8F)
                                                      : kAnyContinuation;
        } else {
          return Step::kDead;
        }
        frame.phase = kStringUtf8;
      }
      return Step::kConsumed;
    case kStringUtf8:
      if (c == kEndOfInput || c < static_cast<int>(frame.bits & 0xFF) || c > static_cast<int>(frame.bits >> 8)) {
        return Step::kDead;
      }
      frame.bits = --frame.pending == 0 ? 0 : kAnyContinuation;
      if (frame.pending == 0) frame.phase = kStringBody;
      return Step::kConsumed;
    case kStringEscape:
      if (c == 'u') {
        frame.phase = kStringHex, frame.pending = 4, frame.bits = 0;
        return Step::kConsumed;
      }
      if (c != '"' && c != '\\' && c != '/' && c != 'b' && c != 'f' && c != 'n' && c != 'r' && c != 't') {
        return Step::kDead;
      }
      frame.phase = kStringBody;
      return Step::kConsumed;
    case kStringHex: {
      const int digit = c == kEndOfInput ? -1 : hex_value(c);
      if (digit < 0) return Step::kDead;
      frame.bits = frame.bits * 16 + static_cast<uint64_t>(digit);
      // After two digits the high byte is known: D8–DF would be half of a surrogate pair, which alone is not a
      // character (and counting a pair as one code point would need a look back), so no surrogates.
      if (--frame.pending == 2 && frame.bits >= 0xD8 && frame.bits <= 0xDF) return Step::kDead;
      if (frame.pending == 0) frame.phase = kStringBody, frame.bits = 0;
      return Step::kConsumed;
    }
    default:
      return Step::kDead;
  }
}

// --- numbers -------------------------------------------------------------------------------------------------
// -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)? with bounded digit counts. `count` counts the digits of the part
// being read, so a model cannot write digits forever and the value stays inside a double (an integer inside int64).
enum NumberPhase : uint8_t {
  kNumberStart,
  kNumberMinus,
  kNumberInteger,
  kNumberZero,
  kNumberDot,
  kNumberFraction,
  kNumberE,
  kNumberExponentSign,
  kNumberExponent
};
constexpr uint32_t kMaxIntegerDigits = 15;
constexpr uint32_t kMaxFractionDigits = 15;
constexpr uint32_t kMaxExponentDigits = 2;

bool may_end(uint8_t phase) {
  return phase == kNumberInteger || phase == kNumberZero || phase == kNumberFraction || phase == kNumberExponent;
}

Step step_number(const GrammarNode& node, MatchStack& stack, int c) {
  MatchFrame& frame = top(stack);
  const auto to = [&frame](NumberPhase phase, uint32_t digits) {
    frame.phase = phase, frame.count = digits;
    return Step::kConsumed;
  };
  const bool fraction_allowed = !node.integer_only;
  switch (frame.phase) {
    case kNumberStart:
      if (c == '-') return to(kNumberMinus, 0);
      [[fallthrough]];
    case kNumberMinus:
      if (c == '0') return to(kNumberZero, 1);
      if (is_digit(c)) return to(kNumberInteger, 1);
      return Step::kDead;
    case kNumberInteger:
      if (is_digit(c)) return frame.count < kMaxIntegerDigits ? to(kNumberInteger, frame.count + 1) : Step::kDead;
      [[fallthrough]];
    case kNumberZero:
      if (fraction_allowed && c == '.') return to(kNumberDot, 0);
      if (fraction_allowed && (c == 'e' || c == 'E')) return to(kNumberE, 0);
      break;
    case kNumberDot:
      return is_digit(c) ? to(kNumberFraction, 1) : Step::kDead;
    case kNumberFraction:
      if (is_digit(c)) return frame.count < kMaxFractionDigits ? to(kNumberFraction, frame.count + 1) : Step::kDead;
      if (c == 'e' || c == 'E') return to(kNumberE, 0);
      break;
    case kNumberE:
      if (c == '+' || c == '-') return to(kNumberExponentSign, 0);
      [[fallthrough]];
    case kNumberExponentSign:
      return is_digit(c) ? to(kNumberExponent, 1) : Step::kDead;
    case kNumberExponent:
      if (is_digit(c)) return frame.count < kMaxExponentDigits ? to(kNumberExponent, frame.count + 1) : Step::kDead;
      break;
    default:
      return Step::kDead;
  }
  // The number is complete and the symbol is not part of it: the parent reads it.
  if (!may_end(frame.phase)) return Step::kDead;
  pop(stack);
  return Step::kRetry;
}

// --- objects -------------------------------------------------------------------------------------------------
enum ObjectPhase : uint8_t {
  kObjectOpen,
  kObjectFirst,
  kObjectKey,
  kObjectColon,
  kObjectSpaceAfterColon,
  kObjectValue,
  kObjectAfterValue,
  kObjectSpaceAfterComma,
  kObjectNextKey
};

// The properties that may come next after property `next` − 1: the optional ones up to and including the next
// required one (properties keep the schema's order).
uint64_t candidate_keys(const GrammarNode& node, uint32_t next) {
  uint64_t keys = 0;
  for (std::size_t i = next; i < node.properties.size(); ++i) {
    keys |= uint64_t{1} << i;
    if (node.properties[i].required) break;
  }
  return keys;
}

bool required_left(const GrammarNode& node, uint32_t next) {
  for (std::size_t i = next; i < node.properties.size(); ++i) {
    if (node.properties[i].required) return true;
  }
  return false;
}

// The opening quote of a key: in map mode the key is a string node (already past its quote); otherwise the keys
// that may come next are matched together, byte by byte.
Step start_key(const GrammarNode& node, MatchStack& stack) {
  MatchFrame& frame = top(stack);
  if (node.map_value >= 0) {
    frame.phase = kObjectColon;
    if (!push(stack, node.map_key)) return Step::kDead;
    top(stack).phase = kStringBody;
    return Step::kConsumed;
  }
  frame.bits = candidate_keys(node, frame.count);
  if (frame.bits == 0) return Step::kDead;
  frame.phase = kObjectKey, frame.pending = 1;
  return Step::kConsumed;
}

Step step_object(const GrammarNode& node, MatchStack& stack, int c) {
  MatchFrame& frame = top(stack);
  const bool map_mode = node.map_value >= 0;
  switch (frame.phase) {
    case kObjectOpen:
      if (c != '{') return Step::kDead;
      frame.phase = kObjectFirst;
      return Step::kConsumed;
    case kObjectFirst:
    case kObjectAfterValue:
      if (c == '}' && (map_mode || !required_left(node, frame.count))) {
        pop(stack);
        return Step::kConsumed;
      }
      if (frame.phase == kObjectFirst) return c == '"' ? start_key(node, stack) : Step::kDead;
      if (c != ',' || (!map_mode && frame.count >= node.properties.size())) return Step::kDead;
      frame.phase = kObjectSpaceAfterComma;
      return Step::kConsumed;
    case kObjectKey: {
      // No key's text is a prefix of another's (each ends at its closing quote), so at most one completes.
      uint64_t live = 0;
      int completed = -1;
      for (uint64_t keys = frame.bits; keys != 0; keys &= keys - 1) {
        const int i = __builtin_ctzll(keys);
        const std::string& key = node.properties[static_cast<std::size_t>(i)].encoded_key;
        if (c == kEndOfInput || static_cast<unsigned char>(key[frame.pending]) != c) continue;
        live |= uint64_t{1} << i;
        if (key.size() == frame.pending + 1u) completed = i;
      }
      if (live == 0) return Step::kDead;
      if (completed >= 0) {
        frame.phase = kObjectColon, frame.count = static_cast<uint32_t>(completed) + 1, frame.bits = 0;
        frame.pending = 0;
      } else {
        frame.bits = live, ++frame.pending;
      }
      return Step::kConsumed;
    }
    case kObjectColon:
      if (c != ':') return Step::kDead;
      frame.phase = kObjectSpaceAfterColon;
      return Step::kConsumed;
    case kObjectSpaceAfterColon:
      frame.phase = kObjectValue;
      return c == ' ' ? Step::kConsumed : Step::kRetry;
    case kObjectValue: {
      frame.phase = kObjectAfterValue;
      const int value = map_mode ? node.map_value : node.properties[frame.count - 1].value;
      return push(stack, value) ? Step::kRetry : Step::kDead;
    }
    case kObjectSpaceAfterComma:
      frame.phase = kObjectNextKey;
      return c == ' ' ? Step::kConsumed : Step::kRetry;
    case kObjectNextKey:
      return c == '"' ? start_key(node, stack) : Step::kDead;
    default:
      return Step::kDead;
  }
}

// --- arrays --------------------------------------------------------------------------------------------------
enum ArrayPhase : uint8_t { kArrayOpen, kArrayFirst, kArrayAfterItem, kArraySpaceAfterComma, kArrayNextItem };

Step push_item(const GrammarNode& node, MatchStack& stack) {
  MatchFrame& frame = top(stack);
  if (node.counts()) ++frame.count;
  frame.phase = kArrayAfterItem;
  return push(stack, node.children[0]) ? Step::kRetry : Step::kDead;
}

Step step_array(const GrammarNode& node, MatchStack& stack, int c) {
  MatchFrame& frame = top(stack);
  switch (frame.phase) {
    case kArrayOpen:
      if (c != '[') return Step::kDead;
      frame.phase = kArrayFirst;
      return Step::kConsumed;
    case kArrayFirst:
      if (c == ']' && node.min_count == 0) {
        pop(stack);
        return Step::kConsumed;
      }
      if (c == ']' || c == kEndOfInput || node.max_count == 0) return Step::kDead;
      return push_item(node, stack);
    case kArrayAfterItem:
      if (c == ']' && (!node.counts() || frame.count >= node.min_count)) {
        pop(stack);
        return Step::kConsumed;
      }
      if (c != ',' || (node.counts() && frame.count >= node.max_count)) return Step::kDead;
      frame.phase = kArraySpaceAfterComma;
      return Step::kConsumed;
    case kArraySpaceAfterComma:
      frame.phase = kArrayNextItem;
      return c == ' ' ? Step::kConsumed : Step::kRetry;
    case kArrayNextItem:
      return push_item(node, stack);
    default:
      return Step::kDead;
  }
}

}  // namespace

void MatchStack::append_key(std::string& key) const {
  key.append(reinterpret_cast<const char*>(&depth), sizeof(depth));
  key.append(reinterpret_cast<const char*>(frames.data()), depth * sizeof(MatchFrame));
}

MatchStack initial_stack(const Grammar& grammar) {
  MatchStack stack;
  push(stack, grammar.root());
  return stack;
}

void advance(const Grammar& grammar, MatchStack stack, int symbol, std::vector<MatchStack>& out) {
  int64_t steps = 0;
  advance(grammar, stack, symbol, out, steps);
}

void advance(const Grammar& grammar, MatchStack stack, int symbol, std::vector<MatchStack>& out, int64_t& steps) {
  while (true) {
    ++steps;
    if (stack.depth == 0) {
      if (symbol == kEndOfInput) out.push_back(stack);  // the document is complete and nothing more may follow
      return;
    }
    MatchFrame& frame = top(stack);
    const GrammarNode& node = grammar.node(frame.node);
    Step step = Step::kDead;
    switch (node.kind) {
      case GrammarNodeKind::kAnyOf:
        // Each alternative takes this frame's place; the stacks that survive the symbol go on separately.
        for (const int alternative : node.children) {
          MatchStack branch = stack;
          top(branch) = MatchFrame{static_cast<uint16_t>(alternative), 0, 0, 0, 0};
          advance(grammar, branch, symbol, out, steps);
        }
        return;
      case GrammarNodeKind::kSequence:
        if (frame.count == node.children.size()) {
          pop(stack);
          step = Step::kRetry;
        } else {
          const int part = node.children[frame.count++];
          step = push(stack, part) ? Step::kRetry : Step::kDead;
        }
        break;
      case GrammarNodeKind::kLiteral:
        if (frame.count == node.literal.size()) {
          pop(stack);
          step = Step::kRetry;
        } else if (symbol != kEndOfInput && static_cast<unsigned char>(node.literal[frame.count]) == symbol) {
          // A finished literal pops at once, so a stack never keeps a finished literal frame on top.
          if (++frame.count == node.literal.size()) pop(stack);
          step = Step::kConsumed;
        }
        break;
      case GrammarNodeKind::kString:
        step = step_string(node, stack, symbol);
        break;
      case GrammarNodeKind::kNumber:
        step = step_number(node, stack, symbol);
        break;
      case GrammarNodeKind::kObject:
        step = step_object(node, stack, symbol);
        break;
      case GrammarNodeKind::kArray:
        step = step_array(node, stack, symbol);
        break;
    }
    if (step == Step::kDead) return;
    if (step == Step::kConsumed) {
      out.push_back(stack);
      return;
    }
  }
}

MatchState MatchState::initial(const Grammar& grammar) { return MatchState{{initial_stack(grammar)}}; }

bool MatchState::advance_byte(const Grammar& grammar, uint8_t byte) {
  std::vector<MatchStack> next;
  for (const MatchStack& stack : stacks) advance(grammar, stack, byte, next);
  if (next.empty()) return false;
  // Identical stacks (two alternatives that read the byte the same way) would double the work of every later step.
  // Found by their bytes in a hash set: comparing each with all the others took seconds with thousands alive.
  if (next.size() > 1) {
    std::vector<MatchStack> unique;
    std::unordered_set<std::string> seen;
    for (const MatchStack& stack : next) {
      std::string key;
      stack.append_key(key);
      if (seen.insert(std::move(key)).second) unique.push_back(stack);
    }
    next = std::move(unique);
  }
  stacks = std::move(next);
  return true;
}

bool MatchState::advance_bytes(const Grammar& grammar, std::string_view bytes) {
  MatchState next = *this;
  for (const char byte : bytes) {
    if (!next.advance_byte(grammar, static_cast<uint8_t>(byte))) return false;
  }
  *this = std::move(next);
  return true;
}

bool MatchState::accepts_end(const Grammar& grammar) const {
  std::vector<MatchStack> out;
  for (const MatchStack& stack : stacks) {
    advance(grammar, stack, kEndOfInput, out);
    if (!out.empty()) return true;
  }
  return false;
}

bool MatchState::can_continue(const Grammar& grammar) const {
  std::vector<MatchStack> out;
  for (int byte = 0; byte < 256; ++byte) {
    for (const MatchStack& stack : stacks) {
      advance(grammar, stack, byte, out);
      if (!out.empty()) return true;
    }
  }
  return false;
}

std::string MatchState::key() const {
  std::string key;
  for (const MatchStack& stack : stacks) stack.append_key(key);
  return key;
}

}  // namespace minigen
