#pragma once
// The ASCII words of a Chinese report that docs/zh-glossary.md does not keep in English: what is left of report.md
// after code, quoted prompts, quoted model answers, links and numbers are left out. A sentence the report forgot to
// translate ("in 4 of 4 layers", "the first 8 tokens of") shows up here.
#include <filesystem>
#include <fstream>
#include <regex>
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

// Every ASCII word of `markdown` outside what may be English, with the line it is on, as "word: line".
inline std::set<std::string> english_outside_the_glossary(const std::string& markdown,
                                                          const std::set<std::string>& kept) {
  static const std::regex kFence(R"(```[\s\S]*?```)");
  static const std::regex kCode("`[^`\n]*`");
  // A quoted answer escapes the quotes the model wrote (\").
  static const std::regex kQuoted(R"("(\\.|[^"\\\n])*"|“[^”\n]*”)");
  static const std::regex kLink(R"(!?\[[^\]\n]*\]\([^)\n]*\))");
  // A number ("2.39e-02", "1.5") is one word that starts with a digit; "bf16" and "top-1" are words.
  static const std::regex kWord(R"([A-Za-z0-9][A-Za-z0-9_.\-]*)");
  std::set<std::string> found;
  std::istringstream lines(std::regex_replace(markdown, kFence, ""));
  for (std::string line; std::getline(lines, line);) {
    if (line.starts_with(">")) continue;  // a model's answer, quoted as it wrote it
    std::string prose = std::regex_replace(line, kCode, " ");
    prose = std::regex_replace(prose, kQuoted, " ");
    prose = std::regex_replace(prose, kLink, " ");
    for (std::sregex_iterator word(prose.begin(), prose.end(), kWord), end; word != end; ++word) {
      std::string text = word->str();
      if (text.front() >= '0' && text.front() <= '9') continue;
      while (!text.empty() && (text.back() == '.' || text.back() == '-')) text.pop_back();
      if (!kept.contains(text)) found.insert(text + ": " + line.substr(0, 200));
    }
  }
  return found;
}

}  // namespace minigen::lab::testing
