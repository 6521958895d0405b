#include "grammar/compiled_grammar.h"

#include <gtest/gtest.h>

#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "grammar/json_schema_compiler.h"
#include "tokenizer/bpe_tokenizer.h"

namespace minigen {
namespace {

// A small byte-level vocabulary: every byte, and tokens that span grammar steps, end inside a UTF-8 character or
// inside an escape. Id 0 is eos.
std::shared_ptr<const TokenVocabulary> small_vocabulary() {
  std::vector<std::string> tokens = {""};
  for (int byte = 0; byte < 256; ++byte) tokens.emplace_back(1, static_cast<char>(byte));
  for (const char* piece :
       {"{\"",  "\":",          "\": ", "\", \"", "\"}", "}",    "true",     "false",  "null",     "1.5",
        "-0",   "e+",           "\\u",  "\\u00",  "e9",  "\xC3", "\xC3\xA9", "\xA9\"", "\xE2\x82", "\x82\xAC",
        "name", "\"name\": \"", "[\"",  "\"]",    ", ",  "],",   "abc def",  " \"",    "\\\"",     "\\n\""}) {
    tokens.emplace_back(piece);
  }
  tokens.emplace_back("{\"");  // the same bytes under a second id
  return std::make_shared<const TokenVocabulary>(std::move(tokens), 0);
}

// The mask by definition: each token's bytes fed one by one from the state.
TokenMask brute_force_mask(const CompiledGrammar& grammar, const MatchState& state) {
  TokenMask mask;
  mask.bits.assign((static_cast<std::size_t>(grammar.vocab_size()) + 63) / 64, 0);
  for (int id = 0; id < grammar.vocab_size(); ++id) {
    const std::string& bytes = grammar.vocabulary().token_bytes(id);
    MatchState next = state;
    const bool allowed = id == grammar.vocabulary().eos()
                             ? state.accepts_end(grammar.grammar())
                             : !bytes.empty() && next.advance_bytes(grammar.grammar(), bytes);
    if (allowed) {
      mask.bits[static_cast<std::size_t>(id) / 64] |= uint64_t{1} << (id % 64);
      ++mask.allowed_count;
    }
  }
  return mask;
}

const char* kSchema = R"({"type": "object", "properties": {"name": {"type": "string", "maxLength": 12}, "tags":
    {"type": "array", "items": {"enum": ["a", "b\u00e9"]}}, "n": {"type": "number"}, "ok": {"type": "boolean"}},
    "required": ["name", "n"], "additionalProperties": false})";

// Prefixes of documents that visit every kind of state: keys, values, escapes, split characters, numbers.
const std::vector<std::string> kPrefixes = {"",
                                            "{",
                                            "{\"",
                                            "{\"n",
                                            "{\"n\": -",
                                            "{\"n\": -0",
                                            "{\"n\": 1.5e",
                                            "{\"n\":2,",
                                            "{\"n\":2, \"name\": \"x\\",
                                            "{\"n\":2, \"name\": \"x\\u00",
                                            "{\"n\":2,\"name\":\"\xE2\x82",
                                            "{\"n\":2,\"name\":\"abc\"",
                                            "{\"n\":2,\"name\":\"abc\",\"tags\":[\"b\xC3",
                                            "{\"n\":2,\"name\":\"abc\",\"tags\":[]}"};

TEST(CompiledGrammar, TrieWalkEqualsCheckingEveryTokenAlone) {
  const CompiledGrammar grammar(compile_json_schema(nlohmann::json::parse(kSchema)), small_vocabulary());
  for (const std::string& prefix : kPrefixes) {
    MatchState state = MatchState::initial(grammar.grammar());
    ASSERT_TRUE(state.advance_bytes(grammar.grammar(), prefix)) << prefix;
    const TokenMask expected = brute_force_mask(grammar, state);
    const TokenMask actual = grammar.compute_allowed_tokens(state);
    EXPECT_EQ(actual.bits, expected.bits) << prefix;
    EXPECT_EQ(actual.allowed_count, expected.allowed_count) << prefix;
    EXPECT_GT(actual.allowed_count, 0) << prefix;
  }
}

TEST(CompiledGrammar, ShippedVocabularyMasksEqualBruteForceAndSpecialTokensStayMasked) {
  const Tokenizer tokenizer =
      Tokenizer::from_files(MINIGEN_SOURCE_DIR "/models/minigen-tiny-sft/tokenizer.json",
                            MINIGEN_SOURCE_DIR "/models/minigen-tiny-sft/tokenizer_config.json");
  const auto vocabulary = TokenVocabulary::from_tokenizer(tokenizer, 6400, tokenizer.eos_id());
  const CompiledGrammar grammar(compile_json_schema(nlohmann::json::parse(kSchema)), vocabulary);
  for (const std::string& prefix : kPrefixes) {
    MatchState state = MatchState::initial(grammar.grammar());
    ASSERT_TRUE(state.advance_bytes(grammar.grammar(), prefix)) << prefix;
    const TokenMask mask = grammar.compute_allowed_tokens(state);
    EXPECT_EQ(mask.bits, brute_force_mask(grammar, state).bits) << prefix;
    for (const char* added : {"<|im_start|>", "<tool_call>", "<think>"}) {
      EXPECT_FALSE(mask.allows(*tokenizer.find_token(added))) << added;
    }
    EXPECT_EQ(mask.allows(tokenizer.eos_id()), prefix == kPrefixes.back()) << prefix;
  }
}

TEST(CompiledGrammar, CachedMasksEqualComputedOnesAndRepeatedStatesHit) {
  const CompiledGrammar cached(compile_json_schema(nlohmann::json::parse(kSchema)), small_vocabulary());
  const CompiledGrammar uncached(compile_json_schema(nlohmann::json::parse(kSchema)), small_vocabulary(),
                                 MaskCacheOptions{false, 0});
  for (int round = 0; round < 2; ++round) {
    for (const std::string& prefix : kPrefixes) {
      MatchState state = MatchState::initial(cached.grammar());
      ASSERT_TRUE(state.advance_bytes(cached.grammar(), prefix));
      EXPECT_EQ(cached.allowed_tokens(state)->bits, uncached.allowed_tokens(state)->bits) << prefix;
    }
  }
  EXPECT_EQ(cached.cache_stats().misses, static_cast<int64_t>(kPrefixes.size()));
  EXPECT_EQ(cached.cache_stats().hits, static_cast<int64_t>(kPrefixes.size()));
  EXPECT_EQ(uncached.cache_stats().hits, 0);
}

TEST(CompiledGrammar, AFullCacheStartsOverAndStillAnswersRight) {
  const CompiledGrammar tiny_cache(compile_json_schema(nlohmann::json::parse(kSchema)), small_vocabulary(),
                                   MaskCacheOptions{true, 200});
  for (const std::string& prefix : kPrefixes) {
    MatchState state = MatchState::initial(tiny_cache.grammar());
    ASSERT_TRUE(state.advance_bytes(tiny_cache.grammar(), prefix));
    EXPECT_EQ(tiny_cache.allowed_tokens(state)->bits, tiny_cache.compute_allowed_tokens(state).bits);
  }
}

// The mask's work budget counts matcher steps, so where a row is stopped is the same on every machine: a budget of
// exactly the steps a state needs computes its mask, one step less refuses it, and the refusal is remembered.
TEST(CompiledGrammar, AMaskJustInsideItsStepBudgetIsComputedAndOneStepOverIsRefusedAgainFromTheCache) {
  using json = nlohmann::ordered_json;
  json strings = json::array();
  for (int i = 0; i < 3; ++i) strings.push_back({{"type", "string"}, {"maxLength", 10 + i}});
  const Grammar grammar = compile_json_schema({{"anyOf", strings}});
  MatchState state = MatchState::initial(grammar);
  ASSERT_TRUE(state.advance_bytes(grammar, "\"a"));
  ASSERT_EQ(state.stacks.size(), 3u);  // three strings of different bounds: three parses alive
  int64_t needed = 0;
  const TokenMask expected =
      CompiledGrammar(grammar, small_vocabulary(), {false, 0}, int64_t{1} << 40).compute_allowed_tokens(state, &needed);
  int64_t again = 0;
  CompiledGrammar(grammar, small_vocabulary()).compute_allowed_tokens(state, &again);
  EXPECT_EQ(again, needed);
  EXPECT_GT(needed, 3 * static_cast<int64_t>(small_vocabulary()->trie().size()) / 2);

  const CompiledGrammar inside(grammar, small_vocabulary(), {}, needed);
  EXPECT_EQ(inside.allowed_tokens(state)->bits, expected.bits);
  const CompiledGrammar over(grammar, small_vocabulary(), {}, needed - 1);
  for (int attempt = 0; attempt < 2; ++attempt) {
    try {
      over.allowed_tokens(state);
      ADD_FAILURE() << "no MaskWorkLimit";
    } catch (const MaskWorkLimit& error) {
      EXPECT_EQ(std::string(error.what()), "the grammar's allowed-token mask here needs more than " +
                                               std::to_string(needed - 1) +
                                               " matcher steps (3 parses alive at once): the schema is too ambiguous "
                                               "at this point to generate from");
    }
  }
  EXPECT_EQ(over.cache_stats().misses, 1);
  EXPECT_EQ(over.cache_stats().hits, 1);

  const CompiledGrammar by_default(grammar, small_vocabulary());
  EXPECT_EQ(by_default.max_mask_steps(), kMaskWalks * static_cast<int64_t>(small_vocabulary()->trie().size()) +
                                             kMaskStepsPerAlternative * GrammarBudget{}.max_alternatives);
}

}  // namespace
}  // namespace minigen
