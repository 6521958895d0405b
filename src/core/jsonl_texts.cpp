#include "core/jsonl_texts.h"

#include <nlohmann/json.hpp>

#include "core/error.h"
#include "core/file_io.h"
#include "core/json_parse.h"

namespace minigen {

void for_each_jsonl_text(const std::string& path, const std::function<void(const std::string& text)>& on_text) {
  LineReader lines(path, kMaxLineBytes);
  std::string line;
  while (lines.next(line)) {
    const int line_number = lines.line_number();
    if (line.empty()) continue;
    nlohmann::json record;
    try {
      record = parse_untrusted_json<nlohmann::json>(line);
    } catch (const Error& error) {
      throw Error(path + ":" + std::to_string(line_number) + " " + error.what());
    }
    if (!record.is_object() || !record.contains("text") || !record["text"].is_string()) {
      throw Error(path + ":" + std::to_string(line_number) + " has no string field \"text\"");
    }
    on_text(record["text"].get<std::string>());
  }
}

}  // namespace minigen
