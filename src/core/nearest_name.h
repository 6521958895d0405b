#pragma once
// "Did you mean …?": the known name nearest to a mistyped one (`genrate` → `generate`, `--temprature` →
// `--temperature`), by edit distance, as git and cargo suggest commands.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace minigen {

// Edits (insert, delete, substitute one character, or swap two neighbours) that turn `from` into `to`: the
// optimal-string-alignment distance, so a swapped pair ("teh") costs one edit like a missing letter does.
int edit_distance(std::string_view from, std::string_view to);

// The candidate nearest to `typed`, if it is near enough to be what was meant: at most 2 edits, and fewer than half
// of `typed`'s characters (so "x" does not suggest "-n"). Ties go to the first candidate in the list.
std::optional<std::string> nearest_name(std::string_view typed, const std::vector<std::string>& candidates);

}  // namespace minigen
