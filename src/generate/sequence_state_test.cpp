#include "generate/sequence_state.h"

#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "grammar/json_schema_compiler.h"
#include "grammar/token_vocabulary.h"

namespace minigen {
namespace {

constexpr int kVocab = 8;
constexpr int kEos = 2;

SamplingParams greedy() {
  SamplingParams params;
  params.greedy = true;
  return params;
}

// Logits of kVocab ids where `best` is the argmax.
std::vector<float> logits_favouring(int best) {
  std::vector<float> logits(kVocab, 0.0f);
  logits[static_cast<std::size_t>(best)] = 5.0f;
  return logits;
}

TEST(SequenceState, AcceptAppendsAfterThePromptAndMaxNewTokensEndsWithLength) {
  SequenceState state({4, 5}, greedy(), 0, nullptr, {3, false, kEos});
  for (int token : {6, 7}) {
    std::vector<float> logits = logits_favouring(token);
    const TokenChoice choice = state.choose(logits);
    EXPECT_EQ(choice.token, token);
    EXPECT_EQ(choice.grammar_allowed, -1);
    EXPECT_EQ(choice.kept_candidates, 1);  // the default top-p 0.85 keeps only the favoured id
    state.accept(choice.token);
    EXPECT_FALSE(state.finished());
  }
  state.accept(3);
  EXPECT_EQ(state.tokens(), (std::vector<int>{4, 5, 6, 7, 3}));
  EXPECT_EQ(state.prompt_tokens(), 2);
  EXPECT_EQ(state.generated(), 3);
  EXPECT_EQ(state.finish_reason(), "length");
}

TEST(SequenceState, EosStopsTheRowUnlessIgnoreEosAndPaddingIsNotGenerated) {
  SequenceState stops({4}, greedy(), 0, nullptr, {10, false, kEos});
  stops.accept(kEos);
  EXPECT_EQ(stops.finish_reason(), "stop");
  stops.pad_with_eos();
  EXPECT_EQ(stops.tokens(), (std::vector<int>{4, kEos, kEos}));
  EXPECT_EQ(stops.generated(), 1);

  SequenceState forced({4}, greedy(), 0, nullptr, {2, true, kEos});
  forced.accept(kEos);
  EXPECT_FALSE(forced.finished());
  forced.accept(kEos);
  EXPECT_EQ(forced.finish_reason(), "length");
}

// SGLang's stop_token_ids end a row like eos does, and like eos they are not checked with ignore_eos.
TEST(SequenceState, StopTokenIdsEndTheRowWithStopUnlessIgnoreEos) {
  SequenceState stops({4}, greedy(), 0, nullptr, {10, false, kEos, {7, 9}});
  stops.accept(5);
  EXPECT_FALSE(stops.finished());
  stops.accept(9);
  EXPECT_EQ(stops.finish_reason(), "stop");
  SequenceState ignored({4}, greedy(), 0, nullptr, {2, true, kEos, {7}});
  ignored.accept(7);
  EXPECT_FALSE(ignored.finished());
}

// The raw log-probability is the raw row's, whatever the chain did to the logits before the draw.
TEST(SequenceState, RawLogprobsAreTakenBeforeTheChainFilters) {
  SamplingParams sharp = greedy();
  sharp.temperature = 0.5f;
  SequenceState state({4}, sharp, 0, nullptr, {10, false, kEos});
  std::vector<float> logits = {0.0f, 1.0f, 3.0f, 2.0f};
  const std::vector<float> raw = logits;
  const TokenChoice choice = state.choose(logits, 0, 1);
  ASSERT_TRUE(choice.has_raw_logprob);
  EXPECT_EQ(choice.token, 2);
  EXPECT_FLOAT_EQ(choice.raw.chosen, raw_logprobs(raw, 2, 0).chosen);
  EXPECT_EQ(choice.raw.top.at(0).token, 2);
  EXPECT_FALSE(state.choose(logits, 0).has_raw_logprob);
}

// With the draw's distribution reported too, each of the raw top tokens carries its probability in the kept set:
// top-k 2 keeps tokens 2 and 3 (raw logits 3 and 2), so they split the mass e³ : e² and token 1 gets 0.
TEST(SequenceState, RawTopTokensCarryTheirKeptProbabilityWhenTheDrawIsReported) {
  SamplingParams top_two = greedy();
  top_two.temperature = 1.0f;
  top_two.top_k = 2;
  top_two.top_p = 1.0f;
  SequenceState state({4}, top_two, 0, nullptr, {10, false, kEos});
  std::vector<float> logits = {0.0f, 1.0f, 3.0f, 2.0f};
  const TokenChoice choice = state.choose(logits, 1, 3);
  ASSERT_EQ(choice.raw.top.size(), 3u);
  const float kept_2 = std::exp(3.0f) / (std::exp(3.0f) + std::exp(2.0f));
  EXPECT_EQ(choice.raw.top[0].token, 2);
  EXPECT_NEAR(choice.raw.top[0].kept_probability, kept_2, 1e-6);
  EXPECT_NEAR(choice.raw.top[1].kept_probability, 1.0f - kept_2, 1e-6);
  EXPECT_EQ(choice.raw.top[2].token, 1);
  EXPECT_EQ(choice.raw.top[2].kept_probability, 0.0f);
  EXPECT_NEAR(choice.probability, kept_2, 1e-6);
  // The raw one is smaller: tokens 0 and 1 hold part of the model's mass, e³ / (1 + e + e³ + e²) = 0.644 < 0.731.
  const float raw_2 = std::exp(3.0f) / (1.0f + std::exp(1.0f) + std::exp(3.0f) + std::exp(2.0f));
  EXPECT_NEAR(std::exp(choice.raw.top[0].logprob), raw_2, 1e-6);
  EXPECT_LT(raw_2, kept_2 - 0.05f);
  std::vector<float> again = {0.0f, 1.0f, 3.0f, 2.0f};
  EXPECT_EQ(state.choose(again, 0, 3).raw.top[0].kept_probability, -1.0f);  // not asked for
}

// The grammar masks before the chain: the favoured "a" is not allowed before the opening quote.
TEST(SequenceState, TheGrammarMaskComesFirstAndAcceptMovesTheMatcherOn) {
  const std::vector<std::string> texts = {"", "", "", "a", "\"", "b", "\"a", "x"};
  auto vocabulary = std::make_shared<const TokenVocabulary>(texts, kEos);
  auto grammar = std::make_shared<const CompiledGrammar>(compile_json_schema({{"enum", {"a"}}}), vocabulary);
  SequenceState state({4}, greedy(), 0, grammar, {8, false, kEos});

  std::vector<float> logits = logits_favouring(3);
  TokenChoice choice = state.choose(logits);
  EXPECT_EQ(choice.grammar_allowed, 2);  // `"` and `"a`
  EXPECT_TRUE(choice.token == 4 || choice.token == 6);
  state.accept(6);
  logits = logits_favouring(3);
  choice = state.choose(logits);
  EXPECT_EQ(choice.grammar_allowed, 1);  // only the closing quote
  EXPECT_EQ(choice.token, 4);
  state.accept(4);
  logits = logits_favouring(5);
  EXPECT_EQ(state.choose(logits).token, kEos);  // the document is complete: only eos
  state.accept(kEos);
  EXPECT_EQ(state.finish_reason(), "stop");
}

// A seeded draw is keyed by (seed, rng_row, step): the same row and step draw the same, another row need not.
TEST(SequenceState, DrawsAreKeyedByTheRowAndTheStep) {
  SamplingParams params;
  params.temperature = 5.0f;  // a nearly flat distribution
  params.seed = 42;
  const auto draws_of = [&](uint64_t row) {
    SequenceState state({4}, params, row, nullptr, {16, true, kEos});
    std::vector<int> tokens;
    for (int step = 0; step < 16; ++step) {
      std::vector<float> logits(kVocab, 0.0f);
      tokens.push_back(state.choose(logits).token);
      state.accept(tokens.back());
    }
    return tokens;
  };
  EXPECT_EQ(draws_of(0), draws_of(0));
  EXPECT_NE(draws_of(0), draws_of(1));
}

}  // namespace
}  // namespace minigen
