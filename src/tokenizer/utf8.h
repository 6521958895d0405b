#pragma once
// UTF-8 decoding one character at a time, tolerant of bad input. The tokenizer sees arbitrary bytes (a model can emit
// half a character, a file can hold Latin-1), so every byte sequence must decode to *something* without throwing.
#include <cstddef>
#include <string>
#include <string_view>

namespace minigen {

inline constexpr char32_t kReplacementCharacter = U'\uFFFD';

enum class Utf8StepKind {
  kValid,      // a complete, well-formed character
  kInvalid,    // bytes that can never start or finish a character here
  kTruncated,  // a well-formed start of a character cut off by the end of the text
};

struct Utf8Step {
  Utf8StepKind kind;
  char32_t code_point;  // meaningful only for kValid
  // Bytes consumed: the whole character when valid; otherwise the "maximal subpart" of Unicode §3.9 (the longest
  // prefix that could still have begun a character, at least 1 byte), so one U+FFFD replaces each such run.
  std::size_t length;
};

// Decodes the character starting at text[offset]; offset must be < text.size().
Utf8Step decode_utf8_step(std::string_view text, std::size_t offset);

// Appends the UTF-8 encoding of a valid scalar value.
void append_utf8(std::string& out, char32_t code_point);

// The text with every ill-formed run (a maximal subpart, as above) replaced by one U+FFFD: always valid UTF-8, so
// it can go into JSON whatever bytes a token holds (a token may be half of a Chinese character).
std::string valid_utf8(std::string_view bytes);

// The offset of the first byte that is not part of a well-formed character, or npos when the text is valid UTF-8.
std::size_t first_invalid_utf8(std::string_view bytes);

}  // namespace minigen
