#include "tokenizer/utf8.h"

#include <cstdint>

namespace minigen {

Utf8Step decode_utf8_step(std::string_view text, std::size_t offset) {
  const auto byte_at = [&](std::size_t i) { return static_cast<std::uint8_t>(text[offset + i]); };
  const std::uint8_t lead = byte_at(0);
  if (lead < 0x80) return {Utf8StepKind::kValid, lead, 1};

  // Table 3-7 of the Unicode standard: the sequence length and the allowed range of the *second* byte, which is what
  // rules out overlong forms (E0, F0), surrogates (ED) and values above U+10FFFF (F4).
  std::size_t length = 0;
  std::uint8_t second_low = 0x80;
  std::uint8_t second_high = 0xBF;
  char32_t code_point = 0;
  if (lead >= 0xC2 && lead <= 0xDF) {
    length = 2;
    code_point = lead & 0x1F;
  } else if (lead >= 0xE0 && lead <= 0xEF) {
    length = 3;
    code_point = lead & 0x0F;
    if (lead == 0xE0) second_low = 0xA0;
    if (lead == 0xED) second_high = 0x9F;
  } else if (lead >= 0xF0 && lead <= 0xF4) {
    length = 4;
    code_point = lead & 0x07;
    if (lead == 0xF0) second_low = 0x90;
    if (lead == 0xF4) second_high = 0x8F;
  } else {
    return {Utf8StepKind::kInvalid, 0, 1};  // a stray continuation byte, C0/C1, or F5..FF
  }

  for (std::size_t i = 1; i < length; ++i) {
    if (offset + i >= text.size()) return {Utf8StepKind::kTruncated, 0, i};
    const std::uint8_t byte = byte_at(i);
    const std::uint8_t low = i == 1 ? second_low : 0x80;
    const std::uint8_t high = i == 1 ? second_high : 0xBF;
    if (byte < low || byte > high) return {Utf8StepKind::kInvalid, 0, i};
    code_point = (code_point << 6) | (byte & 0x3F);
  }
  return {Utf8StepKind::kValid, code_point, length};
}

void append_utf8(std::string& out, char32_t code_point) {
  if (code_point < 0x80) {
    out.push_back(static_cast<char>(code_point));
  } else if (code_point < 0x800) {
    out.push_back(static_cast<char>(0xC0 | (code_point >> 6)));
    out.push_back(static_cast<char>(0x80 | (code_point & 0x3F)));
  } else if (code_point < 0x10000) {
    out.push_back(static_cast<char>(0xE0 | (code_point >> 12)));
    out.push_back(static_cast<char>(0x80 | ((code_point >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (code_point & 0x3F)));
  } else {
    out.push_back(static_cast<char>(0xF0 | (code_point >> 18)));
    out.push_back(static_cast<char>(0x80 | ((code_point >> 12) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | ((code_point >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (code_point & 0x3F)));
  }
}

std::string valid_utf8(std::string_view bytes) {
  std::string text;
  text.reserve(bytes.size());
  for (std::size_t offset = 0; offset < bytes.size();) {
    const Utf8Step step = decode_utf8_step(bytes, offset);
    if (step.kind == Utf8StepKind::kValid) {
      text.append(bytes.substr(offset, step.length));
    } else {
      append_utf8(text, kReplacementCharacter);
    }
    offset += step.length;
  }
  return text;
}

std::size_t first_invalid_utf8(std::string_view bytes) {
  for (std::size_t offset = 0; offset < bytes.size();) {
    const Utf8Step step = decode_utf8_step(bytes, offset);
    if (step.kind != Utf8StepKind::kValid) return offset;
    offset += step.length;
  }
  return std::string_view::npos;
}

}  // namespace minigen
