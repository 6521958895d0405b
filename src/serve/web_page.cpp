#include "serve/web_page.h"

namespace minigen {

std::string_view web_page_html() {
  return R"html(<!doctype html>
<html><head><meta charset="utf-8"><title>minigen</title></head>
<body><h1>minigen</h1><p>The chat page is being written.</p></body></html>
)html";
}

}  // namespace minigen
