#pragma once
// One error type for the whole library. It is thrown where a problem is found, with a message a user can act on,
// and turned into an exit code (CLI) or an HTTP 4xx (server) at the frontend. The library never calls exit().
#include <stdexcept>
#include <string>

namespace minigen {

class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& message) : std::runtime_error(message) {}
};

}  // namespace minigen
