#include "core/nearest_name.h"

#include <algorithm>

namespace minigen {

int edit_distance(std::string_view from, std::string_view to) {
  const std::size_t rows = from.size() + 1;
  const std::size_t columns = to.size() + 1;
  std::vector<int> distance(rows * columns);
  const auto at = [&](std::size_t i, std::size_t j) -> int& { return distance[i * columns + j]; };
  for (std::size_t i = 0; i < rows; ++i) at(i, 0) = static_cast<int>(i);
  for (std::size_t j = 0; j < columns; ++j) at(0, j) = static_cast<int>(j);
  for (std::size_t i = 1; i < rows; ++i) {
    for (std::size_t j = 1; j < columns; ++j) {
      const int substitution = from[i - 1] == to[j - 1] ? 0 : 1;
      at(i, j) = std::min({at(i - 1, j) + 1, at(i, j - 1) + 1, at(i - 1, j - 1) + substitution});
      if (i > 1 && j > 1 && from[i - 1] == to[j - 2] && from[i - 2] == to[j - 1]) {
        at(i, j) = std::min(at(i, j), at(i - 2, j - 2) + 1);
      }
    }
  }
  return at(rows - 1, columns - 1);
}

std::optional<std::string> nearest_name(std::string_view typed, const std::vector<std::string>& candidates) {
  std::optional<std::string> best;
  int best_distance = 0;
  for (const std::string& candidate : candidates) {
    const int distance = edit_distance(typed, candidate);
    if (distance == 0 || distance > 2 || 2 * distance >= static_cast<int>(typed.size())) continue;
    if (!best || distance < best_distance) {
      best = candidate;
      best_distance = distance;
    }
  }
  return best;
}

}  // namespace minigen
