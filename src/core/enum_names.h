#pragma once
// One table per enum of the names users type and read ("f32", "minimind", "top_p"): the enum's name function, its
// parser, the list of choices in that parser's error message and the CLI's allowed values all read the same table,
// so a new value is named in one place and no list can fall out of step with another.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace minigen {

template <typename Enum>
struct EnumName {
  Enum value;
  std::string_view name;
};

// The name of `value`; `fallback` for a value the table lacks (a corrupt enum).
template <typename Table, typename Enum = decltype(std::declval<Table>()[0].value)>
constexpr std::string_view name_in(const Table& table, Enum value, std::string_view fallback = "?") {
  for (const auto& entry : table) {
    if (entry.value == value) return entry.name;
  }
  return fallback;
}

template <typename Table, typename Enum = decltype(std::declval<Table>()[0].value)>
constexpr std::optional<Enum> value_named(const Table& table, std::string_view name) {
  for (const auto& entry : table) {
    if (entry.name == name) return entry.value;
  }
  return std::nullopt;
}

// Every name, in table order (the CLI's CLI::IsMember list).
template <typename Table>
std::vector<std::string> names_in(const Table& table) {
  std::vector<std::string> names;
  for (const auto& entry : table) names.emplace_back(entry.name);
  return names;
}

// "f32, bf16, f16 or int8": the choices as an error message lists them.
template <typename Table>
std::string names_listed(const Table& table, std::string_view last_joiner = " or ") {
  std::string text;
  const std::size_t count = std::size(table);
  for (std::size_t i = 0; i < count; ++i) {
    if (i > 0) text += i + 1 == count ? std::string(last_joiner) : std::string(", ");
    text += table[i].name;
  }
  return text;
}

}  // namespace minigen
