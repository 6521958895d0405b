#pragma once
// The page served at `/` (src/serve/web/index.html with the page.css, page_strings.js and page_tokens.js it links,
// written into one document by cmake/embed_file.cmake): a chat with the model that shows, for every generated token,
// the model's probability of it beside the kept set's and which candidates it weighed, plus the time to the first
// token and the tokens per second. Plain JavaScript, no external resources; English or Chinese (?lang=, else the
// browser's language). `?autotest=PROMPT` sends PROMPT greedily once and writes a JSON summary into #autotest-result
// (tests/web/web_page_test.sh reads it).
#include <string_view>

namespace minigen {

std::string_view web_page_html();

}  // namespace minigen
