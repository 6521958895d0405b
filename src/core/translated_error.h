#pragma once
// An Error that also carries its message in Chinese, printed instead of the English one under MINIGEN_LANG=zh or
// --lang zh (core/message_language.h). Used for the mistakes a learner makes first (a model or file not found, an
// output folder that already holds a report, gnuplot missing); any other Error is printed in English there too,
// after a Chinese prefix.
#include <string>
#include <utility>

#include "core/error.h"

namespace minigen {

class TranslatedError : public Error {
 public:
  TranslatedError(const std::string& english, std::string chinese) : Error(english), chinese_(std::move(chinese)) {}
  const std::string& chinese() const { return chinese_; }

 private:
  std::string chinese_;
};

// The error again with a prefix that names where it happened ("--base: "), in both languages; an error without a
// translation keeps its English text after the Chinese prefix.
[[noreturn]] inline void rethrow_with_prefix(const Error& error, const std::string& english_prefix,
                                             const std::string& chinese_prefix) {
  const auto* translated = dynamic_cast<const TranslatedError*>(&error);
  throw TranslatedError(english_prefix + error.what(),
                        chinese_prefix + (translated != nullptr ? translated->chinese() : std::string(error.what())));
}

}  // namespace minigen
