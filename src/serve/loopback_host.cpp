#include "serve/loopback_host.h"

#include <algorithm>
#include <cctype>
#include <string>

#include "core/ascii.h"

namespace minigen {
namespace {

bool all_digits(std::string_view text) {
  return !text.empty() && std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; });
}

// "127.a.b.c" with four decimal parts of 0–255, no more than three digits each.
bool is_loopback_ipv4(std::string_view text) {
  int parts = 0;
  while (true) {
    const std::size_t dot = text.find('.');
    const std::string_view part = text.substr(0, dot);
    if (!all_digits(part) || part.size() > 3 || std::stoi(std::string(part)) > 255) return false;
    if (parts == 0 && part != "127") return false;
    ++parts;
    if (dot == std::string_view::npos) break;
    text.remove_prefix(dot + 1);
  }
  return parts == 4;
}

}  // namespace

bool is_loopback_address(std::string_view address) {
  const std::string name = ascii_lower(address);
  return name == "localhost" || name == "::1" || is_loopback_ipv4(name);
}

bool is_loopback_host_header(std::string_view host) {
  std::string_view name = host;
  std::string_view port;
  bool has_port = false;
  if (host.starts_with('[')) {
    const std::size_t close = host.find(']');
    if (close == std::string_view::npos) return false;
    name = host.substr(1, close - 1);
    const std::string_view rest = host.substr(close + 1);
    if (!rest.empty()) {
      if (rest.front() != ':') return false;
      has_port = true;
      port = rest.substr(1);
    }
    if (name != "::1") return false;
  } else {
    const std::size_t colon = host.find(':');
    if (colon != std::string_view::npos) {
      has_port = true;
      name = host.substr(0, colon);
      port = host.substr(colon + 1);
    }
    if (ascii_lower(name) != "localhost" && !is_loopback_ipv4(name)) return false;
  }
  return !has_port || (all_digits(port) && port.size() <= 5);
}

}  // namespace minigen
