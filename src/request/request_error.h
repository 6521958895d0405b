#pragma once
// What the request layer raises: the neutral name of the field at fault ("tools", "tool_choice") and a message that
// presumes no frontend's syntax. Each frontend says it in its own words: the CLI as its flag with exit code 1, the
// API as an HTTP 400 with the field in OpenAI's "param", Python as minigen.Error naming the keyword argument. It is a
// minigen::Error, so that a frontend that adds nothing still reports one clear error.
#include <string>
#include <utility>

#include "core/error.h"

namespace minigen {

class RequestError : public Error {
 public:
  RequestError(std::string field, const std::string& message) : Error(message), field_(std::move(field)) {}
  const std::string& field() const { return field_; }

 private:
  std::string field_;
};

}  // namespace minigen
