#include "tokenizer/pretokenizer.h"

#include <gtest/gtest.h>

#include <string>

namespace minigen {
namespace {

std::vector<std::string> pieces_of(std::string_view text) {
  std::vector<std::string> pieces;
  for (const std::string_view piece : pretokenize(text)) pieces.emplace_back(piece);
  return pieces;
}

using Pieces = std::vector<std::string>;

TEST(PretokenizerTest, WordsTakeTheSpaceBeforeThem) {
  EXPECT_EQ(pieces_of("Hello world"), (Pieces{"Hello", " world"}));
}

TEST(PretokenizerTest, ContractionsSplitOffOnlyInLowerCase) {
  EXPECT_EQ(pieces_of("I'm can't they're we've he'll I'd it's"),
            (Pieces{"I", "'m", " can", "'t", " they", "'re", " we", "'ve", " he", "'ll", " I", "'d", " it", "'s"}));
  // Upper case is not in the pattern: the apostrophe becomes punctuation and the letter a word.
  EXPECT_EQ(pieces_of("IT'S"), (Pieces{"IT", "'", "S"}));
  // A contraction only starts a piece; inside a punctuation run the apostrophe stays with the run.
  EXPECT_EQ(pieces_of("!'s"), (Pieces{"!'", "s"}));
}

TEST(PretokenizerTest, NumbersAreSeparateFromLettersAndKeepTheirSpace) {
  EXPECT_EQ(pieces_of("abc123 4567x"), (Pieces{"abc", "123", " 4567", "x"}));
}

TEST(PretokenizerTest, PunctuationRunsStayTogether) {
  EXPECT_EQ(pieces_of("Wait... what?!? (yes)"), (Pieces{"Wait", "...", " what", "?!?", " (", "yes", ")"}));
}

TEST(PretokenizerTest, SpacesBeforeAWordLeaveTheLastOneToTheWord) {
  EXPECT_EQ(pieces_of("a   b"), (Pieces{"a", "  ", " b"}));
  EXPECT_EQ(pieces_of("a b"), (Pieces{"a", " b"}));
}

TEST(PretokenizerTest, TrailingWhitespaceIsOnePiece) {
  EXPECT_EQ(pieces_of("end   "), (Pieces{"end", "   "}));
  EXPECT_EQ(pieces_of("   "), (Pieces{"   "}));
}

TEST(PretokenizerTest, NewlinesAndTabs) {
  EXPECT_EQ(pieces_of("line one\nline two\n"), (Pieces{"line", " one", "\n", "line", " two", "\n"}));
  // "\n\n" before a word: the run minus its last character, then that single "\n" on its own (it is not a space).
  EXPECT_EQ(pieces_of("a\n\nb"), (Pieces{"a", "\n", "\n", "b"}));
  EXPECT_EQ(pieces_of("x\n  y"), (Pieces{"x", "\n ", " y"}));
  EXPECT_EQ(pieces_of("\tx"), (Pieces{"\t", "x"}));
}

TEST(PretokenizerTest, ChineseIsLettersAndItsPunctuationIsPunctuation) {
  EXPECT_EQ(pieces_of("你好，世界。"), (Pieces{"你好", "，", "世界", "。"}));
  // U+3000 (ideographic space) is whitespace but not " ", so it never leads a word.
  EXPECT_EQ(pieces_of("中\u3000文"), (Pieces{"中", "\u3000", "文"}));
}

TEST(PretokenizerTest, UnicodeNumbersAndNonBreakingSpace) {
  EXPECT_EQ(pieces_of("x²½ Ⅻ"), (Pieces{"x", "²½", " Ⅻ"}));        // No and Nl count as numbers
  EXPECT_EQ(pieces_of("a\u00A0b"), (Pieces{"a", "\u00A0", "b"}));  // NBSP is whitespace
}

TEST(PretokenizerTest, EmojiArePunctuation) {
  EXPECT_EQ(pieces_of("hi 😀👍🏽!"), (Pieces{"hi", " 😀👍🏽!"}));
}

TEST(PretokenizerTest, InvalidUtf8BytesArePunctuationAndRoundTrip) {
  const std::string text = "ab\xFF\xFE cd \xC3(\xE4\xB8";  // stray bytes, a cut 2-byte and a cut 3-byte character
  EXPECT_EQ(pieces_of(text), (Pieces{"ab", "\xFF\xFE", " cd", " \xC3(\xE4\xB8"}));
}

TEST(PretokenizerTest, PiecesAlwaysConcatenateToTheInput) {
  const std::string text = "  Mixed: 3.14, 'quoted' \xF0\x9F\x98\x80\x80 text\r\n\t end  ";
  std::string joined;
  for (const std::string_view piece : pretokenize(text)) {
    EXPECT_FALSE(piece.empty());
    joined += piece;
  }
  EXPECT_EQ(joined, text);
}

TEST(PretokenizerTest, EmptyTextHasNoPieces) { EXPECT_TRUE(pretokenize("").empty()); }

}  // namespace
}  // namespace minigen
