#pragma once
// A request the OpenAI API refuses: the HTTP status, the message, and the field at fault as OpenAI's error "param"
// (empty: none). openai_api.h raises it for every check a client can fail, turning the request layer's RequestError
// into it; the server answers with error_body's shape instead of crashing or guessing.
#include <stdexcept>
#include <string>
#include <utility>

namespace minigen {

struct ApiError : std::runtime_error {
  ApiError(int status_code, const std::string& message, std::string parameter = "")
      : std::runtime_error(message), status(status_code), param(std::move(parameter)) {}
  int status;
  std::string param;
};

}  // namespace minigen
