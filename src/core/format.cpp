#include "core/format.h"

#include <array>
#include <charconv>
#include <cmath>
#include <cstdio>

namespace minigen {

std::string with_thousands(long long value) {
  std::string digits = std::to_string(value < 0 ? -value : value);
  std::string grouped_digits;
  for (std::size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) grouped_digits += ',';
    grouped_digits += digits[i];
  }
  return value < 0 ? "-" + grouped_digits : grouped_digits;
}

std::string fixed(double value, int decimals) {
  char text[64];
  std::snprintf(text, sizeof text, "%.*f", decimals, value);
  return text;
}

std::string grouped(double value, int decimals) {
  const std::string plain = fixed(std::fabs(value), decimals);
  const std::size_t point = plain.find('.');
  const std::string whole = plain.substr(0, point);
  const std::string fraction = point == std::string::npos ? "" : plain.substr(point);
  std::string text = value < 0 ? "-" : "";  // built in steps: GCC 12 warns (-Wrestrict) on "-" + std::string
  text += with_thousands(std::stoll(whole));
  text += fraction;
  return text;
}

std::string exact_or_scientific(double value) {
  if (value == 0) return "0";
  char text[64];
  std::snprintf(text, sizeof text, "%.2e", value);
  return text;
}

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
