#pragma once
// The language the lab's report is written in (`minigen lab --lang`). Every sentence, label and heading of the
// report is written once per language at the place that builds it, through Words: say("English", "中文"). Numbers
// are formatted by the same functions in both languages, so the two reports show the same digits.
#include <string>
#include <string_view>

namespace minigen::lab {

enum class Language { kEnglish, kChinese };

// "en" or "zh"; anything else throws minigen::Error naming the accepted values.
Language parse_language(std::string_view name);
std::string_view language_name(Language language);

// Picks one of a sentence's two wordings.
struct Words {
  Language language = Language::kEnglish;
  std::string operator()(std::string_view english, std::string_view chinese) const {
    return std::string(language == Language::kChinese ? chinese : english);
  }
  bool chinese() const { return language == Language::kChinese; }
  // A label that the measuring sections wrote in English ("greedy", "seed 1, cache on", a seed check's question),
  // in this language; a label with no translation (a prompt, "T = 0.7") is returned as it is.
  std::string label(const std::string& english) const;
  // Text quoted inside a sentence: "…" in English; “…” in Chinese, with the text's own “” turned into the inner ‘’
  // (a question such as “江”是什么意思？ would otherwise print as ““江”是什么意思？”).
  std::string quoted(const std::string& text) const;
};

}  // namespace minigen::lab
