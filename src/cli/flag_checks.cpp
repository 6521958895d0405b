#include "cli/flag_checks.h"

#include <cerrno>
#include <charconv>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <regex>
#include <sstream>

namespace minigen::cli {
namespace {

std::string range_text(const std::string& minimum, const std::string& maximum) {
  return "[" + minimum + ", " + maximum + "]";
}

// The deepest command being parsed: the app itself, or the subcommand the user chose ("tokenizer train").
const CLI::App& current_command(const CLI::App& app) {
  const CLI::App* current = &app;
  while (!current->get_subcommands().empty()) current = current->get_subcommands().front();
  return *current;
}

// The words that name it after "minigen".
std::string command_path(const CLI::App& app) {
  std::string path;
  for (const CLI::App* current = &app; !current->get_subcommands().empty();) {
    current = current->get_subcommands().front();
    path += (path.empty() ? "" : " ") + current->get_name();
  }
  return path;
}

// CLI11's "--name: rest" → {"--name", "rest"}; empty name when the message does not start with a flag.
std::pair<std::string, std::string> split_flag(const std::string& message) {
  const std::size_t colon = message.find(": ");
  if (message.empty() || message[0] != '-' || colon == std::string::npos) return {"", message};
  return {message.substr(0, colon), message.substr(colon + 2)};
}

std::string rewrite(const CLI::ParseError& error, const CLI::App& app) {
  const std::string message = error.what();
  std::smatch match;
  if (dynamic_cast<const CLI::ExtrasError*>(&error) != nullptr) {
    static const std::regex extras("The following arguments? (?:was|were) not expected: (.*)");
    const std::string arguments = std::regex_match(message, match, extras) ? match[1].str() : message;
    if (!arguments.empty() && arguments[0] == '-') return "unknown option " + arguments;
    return "unexpected argument " + arguments;
  }
  if (dynamic_cast<const CLI::ConversionError*>(&error) != nullptr) {
    static const std::regex conversion("Could not convert: (\\S+) = (.*)");
    if (std::regex_match(message, match, conversion)) {
      return match[1].str() + ": " + match[2].str() + " is not a valid value";
    }
    return message;
  }
  if (dynamic_cast<const CLI::ArgumentMismatch*>(&error) != nullptr) {
    const auto [flag, rest] = split_flag(message);
    if (!flag.empty() && rest.find("missing") != std::string::npos) return flag + " needs a value";
    if (!flag.empty()) return flag + " takes one value";
    return message;
  }
  if (dynamic_cast<const CLI::ExcludesError*>(&error) != nullptr) {
    static const std::regex excludes("(\\S+) excludes (\\S+)");
    if (std::regex_match(message, match, excludes)) {
      return match[1].str() + " and " + match[2].str() + " cannot be used together";
    }
    return message;
  }
  if (dynamic_cast<const CLI::RequiredError*>(&error) != nullptr && message == "A subcommand is required") {
    const CLI::App& command = current_command(app);
    std::string names;
    for (const CLI::App* subcommand : command.get_subcommands({})) {
      names += (names.empty() ? "" : ", ") + subcommand->get_name();
    }
    const std::vector<std::string> left = command.remaining();
    if (!left.empty() && !left.front().empty() && left.front()[0] != '-') {
      return "unknown command '" + left.front() + "'; the commands are " + names;
    }
    return "give a command: " + names;
  }
  if (dynamic_cast<const CLI::ValidationError*>(&error) != nullptr) {
    // CLI::Range's text, for flags that still use it: "--port: Value 70000 not in range 0 to 65535".
    static const std::regex range("(\\S+): Value (.*) not in range (\\S+) to (\\S+)");
    if (std::regex_match(message, match, range)) {
      return match[1].str() + ": " + match[2].str() + " is not in " + range_text(match[3].str(), match[4].str());
    }
  }
  return message;
}

}  // namespace

CLI::Validator integer_in(int64_t minimum, int64_t maximum) {
  const std::string range = range_text(std::to_string(minimum), std::to_string(maximum));
  return CLI::Validator(
      [minimum, maximum, range](std::string& text) -> std::string {
        int64_t value = 0;
        const char* begin = text.data();
        const char* end = text.data() + text.size();
        const auto [stop, status] = std::from_chars(begin, end, value);
        if (text.empty() || status != std::errc() || stop != end || value < minimum || value > maximum) {
          return text + " is not an integer in " + range;
        }
        return "";
      },
      "INT in " + range, "integer_in");
}

CLI::Validator seed_value() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        uint64_t value = 0;
        const char* end = text.data() + text.size();
        const auto [stop, status] = std::from_chars(text.data(), end, value);  // no sign: "-1" does not parse
        if (text.empty() || status != std::errc() || stop != end) {
          return text + " is not an integer in [0, 18446744073709551615]";
        }
        return "";
      },
      "UINT64", "seed_value");
}

CLI::Validator finite_number() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        // strtod, not from_chars: CLI11 converts with the C library, so accept exactly what it accepts, minus
        // infinities, NaN and values out of double's range.
        char* stop = nullptr;
        errno = 0;
        const double value = text.empty() ? 0.0 : std::strtod(text.c_str(), &stop);
        if (text.empty() || stop != text.c_str() + text.size() || errno == ERANGE || !std::isfinite(value) ||
            std::isspace(static_cast<unsigned char>(text[0]))) {
          return text + " is not a finite number";
        }
        return "";
      },
      "NUMBER", "finite_number");
}

CLI::Validator number_in(double minimum, double maximum) {
  const auto shortest = [](double value) {
    std::ostringstream out;
    out << value;
    return out.str();
  };
  const std::string range = "[" + shortest(minimum) + ", " + shortest(maximum) + "]";
  return CLI::Validator(
      [minimum, maximum, range, check = finite_number()](std::string& text) -> std::string {
        std::string copy = text;
        if (std::string error = check(copy); !error.empty()) return text + " is not a number in " + range;
        const double value = std::strtod(text.c_str(), nullptr);
        return value >= minimum && value <= maximum ? "" : text + " is not a number in " + range;
      },
      "NUMBER in " + range, "number_in");
}

std::string parse_error_line(const CLI::ParseError& error, const CLI::App& app) {
  std::string line = rewrite(error, app);
  const std::string command = command_path(app);
  line += " (see `minigen " + (command.empty() ? std::string() : command + " ") + "--help`)";
  return line;
}

}  // namespace minigen::cli
