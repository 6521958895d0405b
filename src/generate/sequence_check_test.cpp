#include "generate/sequence_check.h"

#include <gtest/gtest.h>

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/error.h"
#include "grammar/json_schema_compiler.h"
#include "grammar/token_vocabulary.h"

namespace minigen {
namespace {

std::string message_of(const std::function<void()>& check) {
  try {
    check();
  } catch (const Error& error) {
    return error.what();
  }
  return "(no error)";
}

TEST(SequenceCheck, EachBadInputGetsItsOwnMessageNamingTheCallersLimit) {
  ModelConfig config;
  config.vocab_size = 100;
  config.max_position_embeddings = 64;
  const SamplingParams sampling;
  const std::vector<int> prompt = {1, 2, 3};
  const auto check = [&](std::vector<int> ids, int max_new) {
    return message_of([&] { check_sequence(config, {ids, max_new, sampling, nullptr}, "max_tokens"); });
  };
  EXPECT_EQ(check(prompt, 61), "(no error)");
  EXPECT_EQ(check({}, 4), "the prompt is empty: nothing to continue from");
  EXPECT_EQ(check(prompt, 0), "max_tokens must be at least 1");
  EXPECT_EQ(check({1, 100}, 4), "prompt token id 100 is outside the vocabulary [0, 100)");
  EXPECT_EQ(check({-1}, 4), "prompt token id -1 is outside the vocabulary [0, 100)");
  EXPECT_EQ(check(prompt, 62),
            "prompt (3 tokens) + max_tokens (62) = 65 tokens exceeds the model's context of 64 tokens");

  SamplingParams bad = sampling;
  bad.top_p = 1.5f;
  EXPECT_THROW(check_sequence(config, {prompt, 4, bad, nullptr}, "max_new_tokens"), InvalidSamplingParam);
}

TEST(SequenceCheck, AGrammarForAnotherVocabularyIsRefused) {
  ModelConfig config;
  config.vocab_size = 4;
  auto vocabulary = std::make_shared<const TokenVocabulary>(std::vector<std::string>{"", "", "", "a"}, 2);
  const auto grammar = std::make_shared<const CompiledGrammar>(compile_json_schema({{"type", "string"}}), vocabulary);
  const SamplingParams sampling;
  const std::vector<int> prompt = {1};
  EXPECT_EQ(message_of([&] {
              check_sequence(config, {prompt, 1, sampling, grammar.get()}, "max_tokens");
            }),
            "(no error)");
  config.vocab_size = 5;
  EXPECT_EQ(message_of([&] {
              check_sequence(config, {prompt, 1, sampling, grammar.get()}, "max_tokens");
            }),
            "the grammar was compiled for a vocabulary of 4 ids with eos 2; the model has 5 with eos 2");
}

}  // namespace
}  // namespace minigen
