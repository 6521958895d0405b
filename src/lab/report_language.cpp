#include "lab/report_language.h"

#include <map>

#include "core/error.h"

namespace minigen::lab {

Language parse_language(std::string_view name) {
  if (name == "en") return Language::kEnglish;
  if (name == "zh") return Language::kChinese;
  throw Error("--lang must be en (English) or zh (Chinese), not '" + std::string(name) + "'");
}

std::string Words::label(const std::string& english) const {
  if (language != Language::kChinese) return english;
  // The labels of temperature_section.cpp and seed_section.cpp.
  static const std::map<std::string, std::string, std::less<>> kChinese = {
      {"greedy", "贪心解码"},
      {"different seeds, both with the cache", "不同的种子，都有缓存"},
      {"same seed, cache on against off", "相同的种子，有缓存对比无缓存"},
      {"greedy, cache on against off", "贪心解码，有缓存对比无缓存"},
      {"the usual bug: sampling on one side, greedy on the other", "常见的错误：一边抽样，另一边贪心解码"},
      {"same seed, alone against in a batch of 3", "相同的种子，单独运行对比在 3 行的批次中"},
      {"seed 1, cache on", "种子 1，有缓存"},
      {"seed 2, cache on", "种子 2，有缓存"},
      {"seed 1, cache off", "种子 1，无缓存"},
      {"greedy, cache on", "贪心解码，有缓存"},
      {"greedy, cache off", "贪心解码，无缓存"},
      {"seed 1, alone", "种子 1，单独运行"},
      {"seed 1, row 0 of 3", "种子 1，3 行中的第 0 行"},
  };
  const auto found = kChinese.find(english);
  if (found != kChinese.end()) return found->second;
  // lab_context.cpp's prompt names: "the first 8 tokens of `examples/zh/poems.txt`".
  constexpr std::string_view kFirst = "the first ";
  constexpr std::string_view kTokensOf = " tokens of ";
  const std::size_t tokens_of = english.find(kTokensOf);
  if (english.starts_with(kFirst) && tokens_of != std::string::npos) {
    const std::string count = english.substr(kFirst.size(), tokens_of - kFirst.size());
    return english.substr(tokens_of + kTokensOf.size()) + " 的前 " + count + " 个 token";
  }
  return english;
}

std::string Words::quoted(const std::string& text) const {
  if (language != Language::kChinese) return "\"" + text + "\"";
  std::string inner;
  for (std::size_t i = 0; i < text.size();) {
    if (text.compare(i, 3, "“") == 0) {
      inner += "‘";
      i += 3;
    } else if (text.compare(i, 3, "”") == 0) {
      inner += "’";
      i += 3;
    } else {
      inner += text[i++];
    }
  }
  return "“" + inner + "”";
}

std::string_view language_name(Language language) { return language == Language::kChinese ? "zh" : "en"; }

}  // namespace minigen::lab
