#pragma once
// The single-page web UI served at `/` (HTML, CSS and JavaScript in one document, no external resources).
#include <string_view>

namespace minigen {

std::string_view web_page_html();

}  // namespace minigen
