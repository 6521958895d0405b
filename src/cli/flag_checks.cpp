#include "cli/flag_checks.h"

#include <sys/stat.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <optional>
#include <sstream>

#include "core/error.h"
#include "core/nearest_name.h"
#include "core/translated_error.h"

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

// The text after `prefix`, if `text` starts with it.
std::optional<std::string> after(const std::string& text, std::string_view prefix) {
  if (!text.starts_with(prefix)) return std::nullopt;
  return text.substr(prefix.size());
}

// "left<separator>right" with a non-empty part on each side (no <regex>: GCC 12 warns inside it under the
// sanitizers, and -Werror turns that into a failed build).
std::optional<std::pair<std::string, std::string>> split_once(const std::string& text, std::string_view separator) {
  const std::size_t at = text.find(separator);
  if (at == std::string::npos || at == 0 || at + separator.size() >= text.size()) return std::nullopt;
  return std::pair{text.substr(0, at), text.substr(at + separator.size())};
}

// The long and short flags `command` takes, spelled as typed ("--temperature", "-n").
std::vector<std::string> flag_names(const CLI::App& command) {
  std::vector<std::string> names = {"--help"};
  for (const CLI::Option* option : command.get_options()) {
    for (const std::string& name : option->get_lnames()) names.push_back("--" + name);
    for (const std::string& name : option->get_snames()) names.push_back("-" + name);
  }
  return names;
}

std::string without_dashes(const std::string& flag) { return flag.substr(flag.find_first_not_of('-')); }

// "; did you mean '--temperature'?" when a known flag is near `typed`, else nothing. Compared without their dashes,
// which every flag shares: "--bar" is not near "--yarn".
std::string flag_suggestion(const std::string& typed, const std::vector<std::string>& flags) {
  std::vector<std::string> names;
  for (const std::string& flag : flags) names.push_back(without_dashes(flag));
  const std::optional<std::string> nearest = nearest_name(without_dashes(typed), names);
  if (!nearest) return "";
  const auto index = std::find(names.begin(), names.end(), *nearest) - names.begin();
  return "; did you mean '" + flags[static_cast<std::size_t>(index)] + "'?";
}

// CLI11 lists the unexpected arguments last first ("0.5 --temprature"): back in the order they were typed.
std::vector<std::string> typed_order(const std::string& arguments) {
  std::vector<std::string> words;
  std::istringstream in(arguments);
  for (std::string word; in >> word;) words.push_back(word);
  std::reverse(words.begin(), words.end());
  return words;
}

// The first unknown flag, without a "=value" ("--temprature=0"); empty when none of `words` is a flag.
std::string first_flag(const std::vector<std::string>& words) {
  for (const std::string& word : words) {
    if (word.size() > 1 && word[0] == '-' && word.find_first_not_of('-') != std::string::npos) {
      return word.substr(0, word.find('='));
    }
  }
  return "";
}

std::string rewrite(const CLI::ParseError& error, const CLI::App& app) {
  const std::string message = error.what();
  if (dynamic_cast<const CLI::ExtrasError*>(&error) != nullptr) {
    std::string arguments = message;
    for (std::string_view prefix :
         {"The following argument was not expected: ", "The following arguments were not expected: "}) {
      if (auto rest = after(message, prefix)) arguments = *rest;
    }
    const std::vector<std::string> words = typed_order(arguments);
    std::string typed;
    for (const std::string& word : words) typed += (typed.empty() ? "" : " ") + word;
    if (const std::string flag = first_flag(words); !flag.empty()) {
      return "unknown option " + typed + flag_suggestion(flag, flag_names(current_command(app)));
    }
    return "unexpected argument " + typed;
  }
  if (dynamic_cast<const CLI::ConversionError*>(&error) != nullptr) {
    if (auto rest = after(message, "Could not convert: ")) {
      if (auto parts = split_once(*rest, " = ")) return parts->first + ": " + parts->second + " is not a valid value";
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
    if (auto parts = split_once(message, " excludes ")) {
      return parts->first + " and " + parts->second + " cannot be used together";
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
      std::vector<std::string> commands;
      for (const CLI::App* subcommand : command.get_subcommands({})) commands.push_back(subcommand->get_name());
      const std::optional<std::string> nearest = nearest_name(left.front(), commands);
      if (nearest) return "unknown command '" + left.front() + "'; did you mean '" + *nearest + "'?";
      return "unknown command '" + left.front() + "'; the commands are " + names;
    }
    return "give a command: " + names;
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

namespace {

bool is_uint64(const std::string& text) {
  uint64_t value = 0;
  const char* end = text.data() + text.size();
  const auto [stop, status] = std::from_chars(text.data(), end, value);  // no sign: "-1" does not parse
  return !text.empty() && status == std::errc() && stop == end;
}

}  // namespace

CLI::Validator seed_value() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        return is_uint64(text) ? "" : text + " is not an integer in [0, 18446744073709551615]";
      },
      "UINT64", "seed_value");
}

CLI::Validator sampling_seed_value() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        if (is_uint64(text) || text == "-1") return "";
        return text + " is not an integer in [0, 18446744073709551615], or -1 for a random seed";
      },
      "UINT64 or -1", "sampling_seed_value");
}

CLI::Validator finite_number() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        // strtod, not from_chars: CLI11 converts with the C library, so accept exactly what it accepts, minus
        // infinities, NaN and values above double's range. An underflow (1e-320, 4.9e-324) is a finite number: the
        // flag's own check refuses it (sampling_float), with the flag's range rather than "not a finite number".
        char* stop = nullptr;
        errno = 0;
        const double value = text.empty() ? 0.0 : std::strtod(text.c_str(), &stop);
        const bool overflow = errno == ERANGE && std::fabs(value) > 1.0;
        if (text.empty() || stop != text.c_str() + text.size() || overflow || !std::isfinite(value) ||
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

namespace {

bool is_plain_file(const std::filesystem::path& path) {
  struct stat status {};
  return ::lstat(path.c_str(), &status) == 0 && S_ISREG(status.st_mode);
}

}  // namespace

void check_nothing_replaced(const std::filesystem::path& directory, const std::vector<std::string>& names,
                            const std::string& what, bool force) {
  if (force) return;
  std::string held;
  for (const std::string& name : names) {
    if (is_plain_file(directory / name)) held += (held.empty() ? "" : ", ") + name;
  }
  if (held.empty()) return;
  std::string held_zh = held;  // the same names, listed with the Chinese enumeration comma
  for (std::size_t at = held_zh.find(", "); at != std::string::npos; at = held_zh.find(", ", at)) {
    held_zh.replace(at, 2, "、");
  }
  throw TranslatedError(
      directory.string() + " already holds " + what + " (" + held +
          "); choose an empty or new directory, or add --force to replace it",
      directory.string() + " 里已经有 " + held_zh + "；请换一个空的或新的文件夹，或加上 --force 覆盖");
}

void check_file_not_replaced(const std::filesystem::path& path, bool force) {
  if (force || !is_plain_file(path)) return;
  throw TranslatedError(path.string() + " already exists; choose another path, or add --force to replace it",
                        path.string() + " 已经存在；请换一个路径，或加上 --force 覆盖");
}

void add_force_flag(CLI::App& command, bool& force) {
  command.add_flag("--force", force, "replace the files already at the output path (without it, they are refused)");
}

}  // namespace minigen::cli
