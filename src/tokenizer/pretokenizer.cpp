#include "tokenizer/pretokenizer.h"

#include <unicode/uchar.h>

#include <array>
#include <cstddef>
#include <cstdint>

#include "tokenizer/utf8.h"

namespace minigen {
namespace {

// The four classes the pattern distinguishes. kOther is [^\s\p{L}\p{N}], which also takes invalid bytes.
enum class CharClass { kLetter, kNumber, kWhitespace, kOther };

struct CharAt {
  CharClass char_class;
  std::size_t length;  // bytes
  bool is_space;       // exactly U+0020, the optional prefix of " ?\p{L}+" etc.
};

CharClass classify_with_icu(char32_t code_point) {
  // \s in the regex engines HF uses is the Unicode White_Space property, which is what u_isUWhiteSpace tests.
  if (u_isUWhiteSpace(static_cast<UChar32>(code_point))) return CharClass::kWhitespace;
  const std::uint32_t category_mask = U_GET_GC_MASK(static_cast<UChar32>(code_point));
  if (category_mask & U_GC_L_MASK) return CharClass::kLetter;  // Lu Ll Lt Lm Lo
  if (category_mask & U_GC_N_MASK) return CharClass::kNumber;  // Nd Nl No
  return CharClass::kOther;
}

CharClass classify_code_point(char32_t code_point) {
  // Most text is ASCII: answer it from a table (filled from ICU itself, so the two can never disagree).
  static const std::array<CharClass, 128> kAsciiClasses = [] {
    std::array<CharClass, 128> classes{};
    for (char32_t ascii = 0; ascii < 128; ++ascii) classes[ascii] = classify_with_icu(ascii);
    return classes;
  }();
  if (code_point < 128) return kAsciiClasses[code_point];
  return classify_with_icu(code_point);
}

CharAt char_at(std::string_view text, std::size_t offset) {
  const Utf8Step step = decode_utf8_step(text, offset);
  if (step.kind != Utf8StepKind::kValid) return {CharClass::kOther, step.length, false};
  return {classify_code_point(step.code_point), step.length, step.code_point == U' '};
}

// End of the run of characters of `char_class` that starts at `offset`.
std::size_t end_of_run(std::string_view text, std::size_t offset, CharClass char_class) {
  while (offset < text.size()) {
    const CharAt next = char_at(text, offset);
    if (next.char_class != char_class) break;
    offset += next.length;
  }
  return offset;
}

// Length of a contraction ('s 't 're 've 'm 'll 'd) at `offset`, or 0. Only lower-case ASCII, as in the pattern.
std::size_t contraction_length(std::string_view text, std::size_t offset) {
  if (text[offset] != '\'') return 0;
  const std::string_view rest = text.substr(offset + 1);
  for (const std::string_view suffix : {"s", "t", "re", "ve", "m", "ll", "d"}) {
    if (rest.starts_with(suffix)) return 1 + suffix.size();
  }
  return 0;
}

// End of the piece that starts at `offset`; alternatives are tried in the pattern's order.
std::size_t end_of_piece(std::string_view text, std::size_t offset) {
  if (const std::size_t length = contraction_length(text, offset); length > 0) return offset + length;

  const CharAt first = char_at(text, offset);
  // " ?\p{L}+", " ?\p{N}+", " ?[^\s\p{L}\p{N}]+": one space may lead a run of a single class.
  if (first.is_space && offset + first.length < text.size()) {
    const std::size_t after_space = offset + first.length;
    const CharAt second = char_at(text, after_space);
    if (second.char_class != CharClass::kWhitespace) return end_of_run(text, after_space, second.char_class);
  }
  if (first.char_class != CharClass::kWhitespace) return end_of_run(text, offset, first.char_class);

  // "\s+(?!\S)": the whitespace run, minus its last character when a non-space follows, so that this last
  // character (typically a space) can lead the next word. A single whitespace character before a non-space matches
  // the final "\s+" instead. At the end of the text the whole run is one piece.
  std::size_t last_char_start = offset;
  std::size_t run_end = offset + first.length;
  while (run_end < text.size()) {
    const CharAt next = char_at(text, run_end);
    if (next.char_class != CharClass::kWhitespace) break;
    last_char_start = run_end;
    run_end += next.length;
  }
  if (run_end == text.size() || last_char_start == offset) return run_end;
  return last_char_start;
}

}  // namespace

std::vector<std::string_view> pretokenize(std::string_view text) {
  std::vector<std::string_view> pieces;
  for (std::size_t offset = 0; offset < text.size();) {
    const std::size_t end = end_of_piece(text, offset);
    pieces.push_back(text.substr(offset, end - offset));
    offset = end;
  }
  return pieces;
}

}  // namespace minigen
