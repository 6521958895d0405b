#pragma once
// The ASCII words of a Chinese report that docs/zh-glossary.md does not keep in English: what is left of report.md
// after code, quoted prompts, quoted model answers, links and numbers are left out. A sentence the report forgot to
// translate ("in 4 of 4 layers", "the first 8 tokens of") shows up here.
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>

namespace minigen::lab::testing {

// The words of the glossary's ```text block under its "English a Chinese report keeps" heading.
inline std::set<std::string> glossary_english_words(const std::filesystem::path& glossary) {
  std::ifstream in(glossary);
  std::string line;
  bool in_section = false;
  bool in_block = false;
  std::set<std::string> words;
  while (std::getline(in, line)) {
    if (line.starts_with("## ")) in_section = line.find("the English a Chinese report keeps") != std::string::npos;
    if (!in_section) continue;
    if (line.starts_with("```")) {
      if (in_block) break;
      in_block = true;
      continue;
    }
    if (!in_block) continue;
    std::istringstream split(line);
    for (std::string word; split >> word;) words.insert(word);
  }
  return words;
}

// `text` without the spans from `open` to the next `close` on the same line (a closing mark after a backslash does not
// close: quoted answers escape the quotes they contain). std::regex is avoided: GCC 12's Debug build warns in it.
inline std::string without_spans(const std::string& text, const std::string& open, const std::string& close) {
  std::string kept;
  for (std::size_t at = 0; at < text.size();) {
    const std::size_t start = text.find(open, at);
    if (start == std::string::npos) {
      kept += text.substr(at);
      break;
    }
    kept += text.substr(at, start - at) + " ";
    std::size_t end = start + open.size();
    while (end < text.size() && text.compare(end, close.size(), close) != 0) end += text[end] == '\\' ? 2 : 1;
    at = std::min(text.size(), end + close.size());
  }
  return kept;
}

inline bool word_character(char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '.' || c == '-';
}

// Every ASCII word of `markdown` outside what may be English, with the line it is on, as "word: line". A number
// ("2.39e-02", "1.5") is one word that starts with a digit and is skipped; "bf16" and "top-1" are words.
inline std::set<std::string> english_outside_the_glossary(const std::string& markdown,
                                                          const std::set<std::string>& kept) {
  std::set<std::string> found;
  std::istringstream lines(markdown);
  bool in_fence = false;
  for (std::string line; std::getline(lines, line);) {
    if (line.starts_with("```")) {
      in_fence = !in_fence;
      continue;
    }
    if (in_fence || line.starts_with(">")) continue;  // code, or a model's answer quoted as it wrote it
    std::string prose = without_spans(line, "`", "`");
    prose = without_spans(prose, "](", ")");  // link and image targets
    prose = without_spans(prose, "\"", "\"");
    prose = without_spans(prose, "“", "”");
    for (std::size_t at = 0; at < prose.size();) {
      if (!word_character(prose[at])) {
        ++at;
        continue;
      }
      std::size_t end = at;
      while (end < prose.size() && word_character(prose[end])) ++end;
      std::string word = prose.substr(at, end - at);
      at = end;
      while (!word.empty() && (word.back() == '.' || word.back() == '-')) word.pop_back();
      if (word.empty() || (word.front() >= '0' && word.front() <= '9') || word.front() == '.' || word.front() == '-' ||
          word.front() == '_') {
        continue;
      }
      if (!kept.contains(word)) found.insert(word + ": " + line.substr(0, 200));
    }
  }
  return found;
}

}  // namespace minigen::lab::testing
