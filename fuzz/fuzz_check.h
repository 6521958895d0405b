#pragma once
// What a fuzz target does when an invariant (not just "no crash") fails: say which, and abort — libFuzzer reports
// that as a crash and saves the input.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <span>
#include <string_view>

namespace minigen::fuzz {

inline void check(bool holds, const char* invariant) {
  if (!holds) {
    std::fprintf(stderr, "fuzz invariant broken: %s\n", invariant);
    std::abort();
  }
}

inline std::span<const std::byte> as_bytes(const uint8_t* data, size_t size) {
  return {reinterpret_cast<const std::byte*>(data), size};
}

inline std::string_view as_text(const uint8_t* data, size_t size) {
  return {reinterpret_cast<const char*>(data), size};
}

}  // namespace minigen::fuzz
