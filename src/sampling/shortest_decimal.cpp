#include "sampling/shortest_decimal.h"

#include <array>
#include <charconv>
#include <cmath>

namespace minigen {

std::string shortest_decimal(float value) {
  // 32 characters hold any float in shortest form ("-1.17549435e-38" is 15).
  std::array<char, 32> buffer{};
  const auto result = std::to_chars(buffer.data(), buffer.data() + buffer.size(), value);
  return std::string(buffer.data(), result.ptr);
}

double as_typed_decimal(float value) {
  if (!std::isfinite(value)) return static_cast<double>(value);
  const std::string text = shortest_decimal(value);
  double parsed = 0.0;
  std::from_chars(text.data(), text.data() + text.size(), parsed);
  return parsed;
}

}  // namespace minigen
