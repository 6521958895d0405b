#include "http/request.h"

#include <algorithm>
#include <cctype>

#include "core/ascii.h"

namespace minigen::http {
namespace {

std::string_view trim(std::string_view text) {
  while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) text.remove_prefix(1);
  while (!text.empty() && (text.back() == ' ' || text.back() == '\t')) text.remove_suffix(1);
  return text;
}

}  // namespace

const std::string* Request::header(std::string_view lower_case_name) const {
  for (const auto& [name, value] : headers) {
    if (name == lower_case_name) return &value;
  }
  return nullptr;
}

bool Request::keep_alive() const {
  const std::string* connection = header("connection");
  // Connection is a comma-separated list of options; "close" / "keep-alive" appear as whole items.
  auto has_option = [&](std::string_view option) {
    if (connection == nullptr) return false;
    std::string_view rest = *connection;
    while (!rest.empty()) {
      const std::size_t comma = rest.find(',');
      if (equals_ignoring_ascii_case(trim(rest.substr(0, comma)), option)) return true;
      if (comma == std::string_view::npos) break;
      rest.remove_prefix(comma + 1);
    }
    return false;
  };
  if (has_option("close")) return false;
  return version_minor >= 1 || has_option("keep-alive");
}

}  // namespace minigen::http
