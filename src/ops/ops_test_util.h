#pragma once
// Deterministic test vectors and a bitwise comparison for the ops tests.
#include <cstdint>
#include <cstring>
#include <vector>

namespace minigen::testing {

inline std::vector<float> pseudo_random_vector(std::size_t n, uint32_t seed) {
  std::vector<float> values(n);
  uint32_t state = seed * 2654435761u + 1u;
  for (float& value : values) {
    state = state * 1664525u + 1013904223u;
    value = static_cast<float>(state >> 8) / static_cast<float>(1u << 24) * 2.0f - 1.0f;
  }
  return values;
}

inline bool bitwise_equal(const float* a, const float* b, std::size_t n) {
  return std::memcmp(a, b, n * sizeof(float)) == 0;
}

}  // namespace minigen::testing
