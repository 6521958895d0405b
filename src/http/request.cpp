#include "http/request.h"

#include <algorithm>
#include <cctype>

namespace minigen::http {
namespace {

std::string_view trim(std::string_view text) {
  while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) text.remove_prefix(1);
  while (!text.empty() && (text.back() == ' ' || text.back() == '\t')) text.remove_suffix(1);
  return text;
}

bool equals_ignoring_case(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) == std::tolower(static_cast<unsigned char>(y));
         });
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
      if (equals_ignoring_case(trim(rest.substr(0, comma)), option)) return true;
      if (comma == std::string_view::npos) break;
      rest.remove_prefix(comma + 1);
    }
    return false;
  };
  if (has_option("close")) return false;
  return version_minor >= 1 || has_option("keep-alive");
}

}  // namespace minigen::http
