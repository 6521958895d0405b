#pragma once
// JSONL input of `tokenize --jsonl`, `perplexity --jsonl` and the lab's held-out documents: one {"text": "…"} object
// per line (other fields ignored, blank lines skipped), streamed, so a corpus may be any size.
#include <functional>
#include <string>

namespace minigen {

// Calls on_text with each record's text, in file order. Throws minigen::Error naming FILE:LINE for a line that is not
// JSON or has no string "text", and for a line over kMaxLineBytes.
void for_each_jsonl_text(const std::string& path, const std::function<void(const std::string& text)>& on_text);

}  // namespace minigen
