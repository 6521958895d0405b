#include "serve/sequence_output.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tokenizer/tokenizer_test_fixture.h"

namespace minigen {
namespace {

using tokenizer_testing::tiny_byte_id;

struct Sent {
  std::vector<std::string> texts;  // what each push sent
  bool stopped = false;
};

Sent push_all(SequenceOutput& output, const std::vector<int>& ids) {
  Sent sent;
  for (std::size_t i = 0; i < ids.size() && !sent.stopped; ++i) {
    SequenceOutput::Text text = output.push(ids[i], i + 1 == ids.size());
    sent.texts.push_back(text.text);
    sent.stopped = text.stopped;
  }
  return sent;
}

std::vector<int> byte_ids(const std::string& text) {
  std::vector<int> ids;
  for (unsigned char byte : text) ids.push_back(tiny_byte_id(byte));
  return ids;
}

class SequenceOutputTest : public ::testing::Test {
 protected:
  Tokenizer tokenizer_ = Tokenizer::from_json_text(tokenizer_testing::tiny_tokenizer_json());
};

TEST_F(SequenceOutputTest, WithoutStopStringsTextIsSentAsItsCharactersComplete) {
  SequenceOutput output(tokenizer_, {});
  const Sent sent = push_all(output, byte_ids("a\xC3\xA9z"));  // a, é in two bytes, z
  EXPECT_EQ(sent.texts, (std::vector<std::string>{"a", "", "\xC3\xA9", "z"}));
  EXPECT_FALSE(sent.stopped);
}

// A stop string spread over three tokens: what could still begin it is held; the text ends before it.
TEST_F(SequenceOutputTest, AStopStringSpanningTokensEndsTheTextBeforeIt) {
  SequenceOutput output(tokenizer_, {"END"});
  const Sent sent = push_all(output, byte_ids("abENDxyz"));
  EXPECT_EQ(sent.texts, (std::vector<std::string>{"", "", "a", "b", ""}));
  EXPECT_TRUE(sent.stopped);
}

TEST_F(SequenceOutputTest, HeldTextIsSentWhenTheSequenceEndsWithoutAStop) {
  SequenceOutput output(tokenizer_, {"xyz"});
  const Sent sent = push_all(output, byte_ids("abcxy"));
  EXPECT_EQ(sent.texts, (std::vector<std::string>{"", "", "a", "b", "cxy"}));
  EXPECT_FALSE(sent.stopped);
}

// The earliest of several stop strings wins, wherever it is in the list; a held cut never splits a character.
TEST_F(SequenceOutputTest, TheEarliestStopStringWinsAndNoCharacterIsSplit) {
  SequenceOutput output(tokenizer_, {"zz", "\xC3\xA9q"});
  const Sent sent = push_all(output, byte_ids("x\xC3\xA9qzz"));
  std::string joined;
  for (const std::string& text : sent.texts) joined += text;
  EXPECT_EQ(joined, "x");
  EXPECT_TRUE(sent.stopped);
}

}  // namespace
}  // namespace minigen
