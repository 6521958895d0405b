#include "grammar/grammar_matcher.h"

#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/error.h"
#include "grammar/json_schema_compiler.h"

namespace minigen {
namespace {

// Id 0 is eos; ids 1–256 are the bytes; then a few longer tokens.
std::shared_ptr<const TokenVocabulary> byte_vocabulary(std::vector<std::string> extra = {}) {
  std::vector<std::string> tokens = {""};
  for (int byte = 0; byte < 256; ++byte) tokens.emplace_back(1, static_cast<char>(byte));
  for (std::string& token : extra) tokens.push_back(std::move(token));
  return std::make_shared<const TokenVocabulary>(std::move(tokens), 0);
}

int byte_id(char byte) { return 1 + static_cast<unsigned char>(byte); }

void accept_text(GrammarMatcher& matcher, std::string_view text) {
  for (const char byte : text) matcher.accept(byte_id(byte));
}

TEST(GrammarMatcher, EosOnlyWhereTheDocumentIsCompleteThenOnlyEos) {
  auto grammar = std::make_shared<const CompiledGrammar>(json_object_grammar(), byte_vocabulary());
  GrammarMatcher matcher(grammar);
  EXPECT_FALSE(matcher.allowed_tokens().allows(0));
  EXPECT_THROW(matcher.accept(0), Error);
  accept_text(matcher, "{\"a\": 1");
  EXPECT_FALSE(matcher.is_complete());
  EXPECT_THROW(matcher.accept(byte_id(']')), Error);
  accept_text(matcher, "}");
  EXPECT_TRUE(matcher.is_complete());
  EXPECT_EQ(matcher.allowed_tokens().allowed_count, 1);
  EXPECT_TRUE(matcher.allowed_tokens().allows(0));
  matcher.accept(0);
  EXPECT_TRUE(matcher.is_finished());
  EXPECT_EQ(matcher.allowed_tokens().allowed_count, 1);
  matcher.accept(0);  // a finished row padded with eos stays valid
  EXPECT_THROW(matcher.accept(byte_id(' ')), Error);
}

TEST(GrammarMatcher, MaskSetsDisallowedLogitsToMinusInfinity) {
  auto grammar = std::make_shared<const CompiledGrammar>(
      compile_json_schema(nlohmann::json::parse(R"({"type": "boolean"})")), byte_vocabulary({"true", "tr"}));
  GrammarMatcher matcher(grammar);
  std::vector<float> logits(static_cast<std::size_t>(grammar->vocab_size()), 1.0f);
  EXPECT_EQ(matcher.mask(logits), 4);  // 't', 'f', "true", "tr"
  for (std::size_t id = 0; id < logits.size(); ++id) {
    const bool allowed = id == 258 || id == 257 || id == static_cast<std::size_t>(byte_id('t')) ||
                         id == static_cast<std::size_t>(byte_id('f'));
    EXPECT_EQ(std::isinf(logits[id]), !allowed) << id;
  }
  std::vector<float> wrong_size(10);
  EXPECT_THROW(matcher.mask(wrong_size), Error);
}

// The shape a forced tool call needs: literal text, a JSON value matching a schema, literal text.
TEST(GrammarMatcher, LiteralPrefixSchemaValueLiteralSuffix) {
  GrammarBuilder builder;
  const int arguments = add_json_schema(
      builder, nlohmann::json::parse(
                   R"({"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"],
          "additionalProperties": false})"));
  const int root = builder.sequence({builder.literal("<tool_call>{\"name\": \"weather\", \"arguments\": "), arguments,
                                     builder.literal("}</tool_call>")});
  auto grammar = std::make_shared<const CompiledGrammar>(std::move(builder).build(root),
                                                         byte_vocabulary({"<tool_call>", "\"}}</tool_call>"}));
  GrammarMatcher matcher(grammar);
  // The first token must begin the literal: only '<' and "<tool_call>".
  EXPECT_EQ(matcher.allowed_tokens().allowed_count, 2);
  matcher.accept(257);
  accept_text(matcher, "{\"name\": \"weather\", \"arguments\": {\"city\": \"Oslo");
  EXPECT_FALSE(matcher.is_complete());
  matcher.accept(258);  // closes the string, the arguments, the call object and the tag in one token
  EXPECT_TRUE(matcher.is_complete());
  EXPECT_EQ(matcher.allowed_tokens().allowed_count, 1);

  GrammarMatcher wrong(grammar);
  accept_text(wrong, "<tool_call>{\"name\": \"weather\", \"arguments\": ");
  EXPECT_THROW(wrong.accept(byte_id('[')), Error);
}

}  // namespace
}  // namespace minigen
