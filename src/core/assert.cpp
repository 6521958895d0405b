#include "core/assert.h"

#include <cstdio>
#include <cstdlib>

namespace minigen::detail {

void assertion_failed(const char* file, int line, const char* condition, const std::string& message) {
  std::fprintf(stderr, "%s:%d: minigen assertion failed: %s — %s\n", file, line, condition, message.c_str());
  std::fflush(stderr);
  std::abort();
}

}  // namespace minigen::detail
