#include "core/python_json.h"

#include <array>
#include <charconv>
#include <cmath>

namespace minigen {
namespace {

// Python escapes the two-character forms it knows, every other control character as \u00xx (lowercase hex), and
// leaves everything else alone with ensure_ascii=False (DEL and non-ASCII included).
void append_string(std::string& out, const std::string& text) {
  static constexpr std::array<char, 16> kHex = {'0', '1', '2', '3', '4', '5', '6', '7',
                                                '8', '9', 'a', 'b', 'c', 'd', 'e', 'f'};
  out += '"';
  for (const char character : text) {
    const auto byte = static_cast<unsigned char>(character);
    switch (character) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      case '\b':
        out += "\\b";
        break;
      case '\f':
        out += "\\f";
        break;
      default:
        if (byte < 0x20) {
          out += "\\u00";
          out += kHex[byte >> 4];
          out += kHex[byte & 0xF];
        } else {
          out += character;
        }
    }
  }
  out += '"';
}

// Python's repr of a float: the shortest digits that read back as the same double, the closest such when several
// are (std::to_chars guarantees both; nlohmann's Grisu2 only the first: 1234567890123456.7 where Python writes .8),
// then a decimal point when the point falls within 16 digits of the first one (-4 < point <= 16), else an exponent.
std::string python_float_text(double value) {
  if (!std::isfinite(value)) return nlohmann::ordered_json(value).dump();  // JSON text cannot hold one
  if (value == 0) return std::signbit(value) ? "-0.0" : "0.0";
  std::array<char, 64> buffer{};
  const auto written =
      std::to_chars(buffer.data(), buffer.data() + buffer.size(), value, std::chars_format::scientific);
  std::string_view text(buffer.data(), static_cast<std::size_t>(written.ptr - buffer.data()));  // "-1.25e+15"
  std::string out;
  if (text.front() == '-') {
    out += '-';
    text.remove_prefix(1);
  }
  const std::size_t e = text.find('e');
  std::string digits(text.substr(0, e));
  if (digits.size() > 1) digits.erase(1, 1);  // the point after the first digit
  const int exponent = std::stoi(std::string(text.substr(e + 1)));
  const int point = exponent + 1;  // value = 0.DIGITS × 10^point
  const auto length = static_cast<int>(digits.size());
  // Appended piece by piece: GCC 12 warns falsely (-Wrestrict) about chains of std::string operator+.
  if (point > -4 && point <= 16) {
    if (point <= 0) {
      out.append("0.").append(static_cast<std::size_t>(-point), '0').append(digits);
    } else if (point >= length) {
      out.append(digits).append(static_cast<std::size_t>(point - length), '0').append(".0");
    } else {
      out.append(digits, 0, static_cast<std::size_t>(point))
          .append(".")
          .append(digits, static_cast<std::size_t>(point));
    }
    return out;
  }
  out.push_back(digits.front());
  if (length > 1) out.append(".").append(digits, 1);
  out.append(exponent < 0 ? "e-" : "e+");
  const int magnitude = exponent < 0 ? -exponent : exponent;
  if (magnitude < 10) out.push_back('0');
  out.append(std::to_string(magnitude));
  return out;
}

void append_value(std::string& out, const nlohmann::ordered_json& value) {
  switch (value.type()) {
    case nlohmann::ordered_json::value_t::object: {
      out += '{';
      bool first = true;
      for (const auto& [key, item] : value.items()) {
        if (!first) out += ", ";
        first = false;
        append_string(out, key);
        out += ": ";
        append_value(out, item);
      }
      out += '}';
      return;
    }
    case nlohmann::ordered_json::value_t::array: {
      out += '[';
      bool first = true;
      for (const auto& item : value) {
        if (!first) out += ", ";
        first = false;
        append_value(out, item);
      }
      out += ']';
      return;
    }
    case nlohmann::ordered_json::value_t::string:
      append_string(out, value.get_ref<const std::string&>());
      return;
    case nlohmann::ordered_json::value_t::number_float:
      out += python_float_text(value.get<double>());
      return;
    default:
      // null, true, false and integers, spelled as Python spells them.
      out += value.dump();
  }
}

}  // namespace

std::string python_json_dumps(const nlohmann::ordered_json& value) {
  std::string out;
  append_value(out, value);
  return out;
}

}  // namespace minigen
