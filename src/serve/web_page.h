#pragma once
// The page served at `/` (src/serve/web/index.html, compiled in by cmake/embed_file.cmake): a chat with the model
// that shows, for every generated token, how sure the model was and which candidates it weighed, plus the time to
// the first token and the tokens per second. One document, plain JavaScript, no external resources.
// `?autotest=PROMPT` sends PROMPT greedily once and writes a JSON summary into #autotest-result
// (tests/web/web_page_test.sh reads it).
#include <string_view>

namespace minigen {

std::string_view web_page_html();

}  // namespace minigen
