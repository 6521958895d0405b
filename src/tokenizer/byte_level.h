#pragma once
// GPT-2's reversible map between bytes and printable code points. A byte-level BPE vocabulary stores every token as
// text; bytes that would be invisible or ambiguous in JSON (control bytes, space, 0x7F-0xA0, the soft hyphen 0xAD) are
// moved to U+0100 and up, so a space is spelled "Ġ" (U+0120) and a newline "Ċ" (U+010A). All other bytes keep their
// Latin-1 code point ('a' stays 'a', 0xE9 stays 'é').
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace minigen {

// The printable code point that spells `byte`.
char32_t byte_to_code_point(std::uint8_t byte);

// The byte a code point spells, or nothing when the code point is not one of the 256 in the map.
std::optional<std::uint8_t> code_point_to_byte(char32_t code_point);

// Raw bytes → their byte-level spelling (UTF-8), e.g. " the" → "Ġthe".
std::string bytes_to_byte_level(std::string_view bytes);

// Byte-level spelling → raw bytes, e.g. "Ġthe" → " the". Nothing if the text is not valid UTF-8 or holds a code
// point outside the map (such text cannot be a byte-level token).
std::optional<std::string> byte_level_to_bytes(std::string_view byte_level_text);

}  // namespace minigen
