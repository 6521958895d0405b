#pragma once
// MINIGEN_ASSERT(condition, message…): an invariant the code relies on, checked in builds without NDEBUG (the Debug
// build, which is also the sanitizer build whose suite CI runs) and compiled away where NDEBUG is set (Release, and
// the fuzz build, RelWithDebInfo), so that it costs nothing there.
//
// A broken invariant is a bug in minigen, not bad input: it prints where it failed, the condition and the message
// (each further argument streamed after the other) to stderr, and aborts. Input a user can get wrong keeps its
// minigen::Error with a message to act on.
#include <sstream>
#include <string>

namespace minigen::detail {

[[noreturn]] void assertion_failed(const char* file, int line, const char* condition, const std::string& message);

template <class... Parts>
std::string assertion_message(const Parts&... parts) {
  std::ostringstream message;
  (message << ... << parts);
  return message.str();
}

}  // namespace minigen::detail

#ifdef NDEBUG
// sizeof keeps the condition and message compiled (so they cannot rot) but never evaluated.
#define MINIGEN_ASSERT(condition, ...) static_cast<void>(sizeof(!(condition)))
#else
#define MINIGEN_ASSERT(condition, ...)                                               \
  ((condition) ? static_cast<void>(0)                                                \
               : ::minigen::detail::assertion_failed(__FILE__, __LINE__, #condition, \
                                                     ::minigen::detail::assertion_message(__VA_ARGS__)))
#endif
