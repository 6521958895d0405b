#pragma once
// A program the tests start (minigen, minigen serve) may exit with an ordinary-looking code after AddressSanitizer
// or UndefinedBehaviorSanitizer found a bug in it, and its report names the functions involved ("tokenizer", …), so
// a test that expects "a clean error mentioning tokenizer" would pass on a memory error. Every test that starts a
// process checks its stderr with this: a report is a failure, whatever the exit code.
#include <gtest/gtest.h>

#include <string>
#include <string_view>

namespace minigen::testing {

// The exit codes cli/sanitizer_defaults.cpp gives the sanitizers' reports, so that a report is never exit code 1,
// the code of every clean error.
inline constexpr int kAddressSanitizerExitCode = 86;
inline constexpr int kUndefinedBehaviorExitCode = 87;

inline bool has_sanitizer_report(std::string_view err) {
  return err.find("Sanitizer") != std::string_view::npos || err.find("runtime error:") != std::string_view::npos;
}

// Records a test failure naming `what` when `err` holds a sanitizer report or the exit code is a sanitizer's.
inline void expect_no_sanitizer_report(const std::string& what, int exit_code, const std::string& err) {
  if (has_sanitizer_report(err) || exit_code == kAddressSanitizerExitCode || exit_code == kUndefinedBehaviorExitCode) {
    ADD_FAILURE() << "sanitizer report from " << what << " (exit code " << exit_code << "):\n" << err;
  }
}

}  // namespace minigen::testing
