#include "tokenizer/byte_level.h"

#include <array>

#include "tokenizer/utf8.h"

namespace minigen {
namespace {

// Bytes that already print as themselves: '!'..'~', '¡'..'¬', '®'..'ÿ'.
constexpr bool is_self_printing(int byte) {
  return (byte >= 0x21 && byte <= 0x7E) || (byte >= 0xA1 && byte <= 0xAC) || (byte >= 0xAE && byte <= 0xFF);
}

// The remaining 68 bytes get U+0100, U+0101, ... in increasing byte order; so the highest code point used is U+0143.
constexpr char32_t kFirstShiftedCodePoint = 0x100;
constexpr int kShiftedCount = 256 - (0x7E - 0x21 + 1) - (0xAC - 0xA1 + 1) - (0xFF - 0xAE + 1);
constexpr char32_t kCodePointLimit = kFirstShiftedCodePoint + kShiftedCount;

struct ByteLevelTables {
  std::array<char32_t, 256> code_point_of_byte{};
  std::array<std::int16_t, kCodePointLimit> byte_of_code_point{};  // -1 where no byte maps
};

constexpr ByteLevelTables build_tables() {
  ByteLevelTables tables;
  for (auto& byte : tables.byte_of_code_point) byte = -1;
  char32_t next_shifted = kFirstShiftedCodePoint;
  for (int byte = 0; byte < 256; ++byte) {
    const char32_t code_point = is_self_printing(byte) ? static_cast<char32_t>(byte) : next_shifted++;
    tables.code_point_of_byte[byte] = code_point;
    tables.byte_of_code_point[code_point] = static_cast<std::int16_t>(byte);
  }
  return tables;
}

constexpr ByteLevelTables kTables = build_tables();
static_assert(kTables.code_point_of_byte[' '] == 0x120, "space must be spelled U+0120 (Ġ) as in GPT-2");
static_assert(kTables.code_point_of_byte['\n'] == 0x10A, "newline must be spelled U+010A (Ċ) as in GPT-2");

}  // namespace

char32_t byte_to_code_point(std::uint8_t byte) { return kTables.code_point_of_byte[byte]; }

std::optional<std::uint8_t> code_point_to_byte(char32_t code_point) {
  if (code_point >= kCodePointLimit) return std::nullopt;
  const std::int16_t byte = kTables.byte_of_code_point[code_point];
  if (byte < 0) return std::nullopt;
  return static_cast<std::uint8_t>(byte);
}

std::string bytes_to_byte_level(std::string_view bytes) {
  std::string spelled;
  spelled.reserve(bytes.size() * 2);
  for (const char byte : bytes) append_utf8(spelled, byte_to_code_point(static_cast<std::uint8_t>(byte)));
  return spelled;
}

std::optional<std::string> byte_level_to_bytes(std::string_view byte_level_text) {
  std::string bytes;
  bytes.reserve(byte_level_text.size());
  for (std::size_t offset = 0; offset < byte_level_text.size();) {
    const Utf8Step step = decode_utf8_step(byte_level_text, offset);
    if (step.kind != Utf8StepKind::kValid) return std::nullopt;
    const std::optional<std::uint8_t> byte = code_point_to_byte(step.code_point);
    if (!byte) return std::nullopt;
    bytes.push_back(static_cast<char>(*byte));
    offset += step.length;
  }
  return bytes;
}

}  // namespace minigen
