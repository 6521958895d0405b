#pragma once
// "256MiB", "1GiB", "512MB", "1048576": a byte count as people write it (binary and decimal units, no fractions
// beyond what a double holds). Throws minigen::Error for anything else.
#include <cstddef>
#include <string_view>

namespace minigen {

std::size_t parse_byte_size(std::string_view text);

}  // namespace minigen
