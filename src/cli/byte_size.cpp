#include "cli/byte_size.h"

#include <cctype>
#include <charconv>
#include <string>

#include "core/error.h"

namespace minigen {

std::size_t parse_byte_size(std::string_view text) {
  double value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  std::string unit(end, text.data() + text.size());
  for (char& c : unit) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  double scale = 0;
  if (unit.empty() || unit == "b") scale = 1;
  if (unit == "k" || unit == "kb") scale = 1e3;
  if (unit == "m" || unit == "mb") scale = 1e6;
  if (unit == "g" || unit == "gb") scale = 1e9;
  if (unit == "kib") scale = 1024.0;
  if (unit == "mib") scale = 1024.0 * 1024;
  if (unit == "gib") scale = 1024.0 * 1024 * 1024;
  if (error != std::errc() || end == text.data() || scale == 0 || !(value > 0) || value * scale > 1e15) {
    throw Error("'" + std::string(text) + "' is not a byte size (e.g. 256MiB, 1GiB, 500MB)");
  }
  return static_cast<std::size_t>(value * scale);
}

}  // namespace minigen
