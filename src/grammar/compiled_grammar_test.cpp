#include "grammar/compiled_grammar.h"

#include <gtest/gtest.h>

#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
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

// Three strings of different bounds: one byte inside them, three parses are alive.
Grammar three_bounded_strings() {
  nlohmann::ordered_json strings = nlohmann::ordered_json::array();
  for (int i = 0; i < 3; ++i) strings.push_back({{"type", "string"}, {"maxLength", 10 + i}});
  return compile_json_schema({{"anyOf", strings}});
}

MatchState inside_the_strings(const Grammar& grammar) {
  MatchState state = MatchState::initial(grammar);
  EXPECT_TRUE(state.advance_bytes(grammar, "\"a"));
  return state;
}

// Runs a job to the end in slices of `allowance` steps; returns the mask and counts the slices.
std::shared_ptr<const TokenMask> sliced_mask(const CompiledGrammar& grammar, const MatchState& state, int64_t allowance,
                                             int& slices, int64_t& steps) {
  MaskJob job(grammar, state);
  for (slices = 0; !job.done(); ++slices) job.advance(allowance);
  steps = job.steps();
  return job.take();
}

// A mask in slices is the same walk paused between trie nodes: the same bits, count and steps as the whole walk,
// whatever the slice, in states with one parse, with many (an enum's values right after its quote, strings of
// different bounds) and where eos is allowed (a top-level number may end).
TEST(CompiledGrammar, AMaskComputedInSlicesEqualsTheWholeMaskBitForBit) {
  using json = nlohmann::json;  // kSchema as the other tests read it
  json values = json::array();
  for (int i = 0; i < 40; ++i) values.push_back("name" + std::to_string(i));
  json strings = json::array();
  for (int i = 0; i < 5; ++i) strings.push_back({{"type", "string"}, {"maxLength", 3 + i}});
  const std::vector<std::pair<json, std::vector<std::string>>> cases = {
      {json::parse(kSchema), kPrefixes},
      {{{"enum", values}}, {"", "\"", "\"name", "\"name1", "\"name12\""}},
      {{{"anyOf", strings}}, {"\"", "\"ab", "\"abc\xC3"}},
      {{{"type", "number"}}, {"", "1", "-1.5", "2e"}}};
  int many_stacks = 0;
  int with_eos = 0;
  for (const auto& [schema, prefixes] : cases) {
    const CompiledGrammar grammar(compile_json_schema(schema), small_vocabulary(), {false, 0});
    for (const std::string& prefix : prefixes) {
      MatchState state = MatchState::initial(grammar.grammar());
      ASSERT_TRUE(state.advance_bytes(grammar.grammar(), prefix)) << prefix;
      many_stacks += state.stacks.size() >= 5;
      int64_t whole_steps = 0;
      const TokenMask whole = grammar.compute_allowed_tokens(state, &whole_steps);
      with_eos += whole.allows(0);
      EXPECT_EQ(whole.bits, brute_force_mask(grammar, state).bits) << prefix;
      for (const int64_t allowance : {int64_t{1}, int64_t{7}, int64_t{100}, int64_t{1} << 40}) {
        int slices = 0;
        int64_t steps = 0;
        const std::shared_ptr<const TokenMask> mask = sliced_mask(grammar, state, allowance, slices, steps);
        EXPECT_EQ(mask->bits, whole.bits) << schema.dump() << " after '" << prefix << "' in slices of " << allowance;
        EXPECT_EQ(mask->allowed_count, whole.allowed_count) << prefix;
        EXPECT_EQ(steps, whole_steps) << prefix;
        // Each call walks at least one node and stops once it has used its allowance.
        if (allowance == 1) {
          EXPECT_GT(slices, 1) << prefix;
        } else if (allowance == int64_t{1} << 40) {
          EXPECT_EQ(slices, 1) << prefix;
        }
      }
    }
  }
  EXPECT_GE(many_stacks, 3);  // the enum after its quote and the strings
  EXPECT_GE(with_eos, 3);     // numbers that may end
}

// A sliced mask is counted against the same budget as a whole one, and what it ends with goes into the cache: the
// finished mask for the next row that reaches the state, the refusal for every later attempt.
TEST(CompiledGrammar, AMaskJobFillsTheCacheAndIsRefusedAtTheSameBudget) {
  const Grammar grammar = three_bounded_strings();
  const MatchState state = inside_the_strings(grammar);
  int64_t needed = 0;
  const TokenMask expected = CompiledGrammar(grammar, small_vocabulary()).compute_allowed_tokens(state, &needed);

  const CompiledGrammar inside(grammar, small_vocabulary(), {}, needed);
  EXPECT_EQ(inside.cached_tokens(state), nullptr);
  int slices = 0;
  int64_t steps = 0;
  const std::shared_ptr<const TokenMask> mask = sliced_mask(inside, state, 50, slices, steps);
  EXPECT_GT(slices, 3);
  EXPECT_EQ(mask->bits, expected.bits);
  EXPECT_EQ(inside.cached_tokens(state), mask);  // the same mask, not a copy
  EXPECT_EQ(inside.cache_stats().hits, 1);
  EXPECT_EQ(inside.cache_stats().misses, 1);

  const CompiledGrammar over(grammar, small_vocabulary(), {}, needed - 1);
  MaskJob job(over, state);
  int advanced = 0;
  EXPECT_THROW(
      while (true) {
        job.advance(50);
        ++advanced;
      },
      MaskWorkLimit);
  EXPECT_GT(advanced, 3);  // refused only once the total passed the budget
  EXPECT_THROW(over.cached_tokens(state), MaskWorkLimit);
  EXPECT_THROW(over.allowed_tokens(state), MaskWorkLimit);
}

// The mask's work budget counts matcher steps, so where a row is stopped is the same on every machine: a budget of
// exactly the steps a state needs computes its mask, one step less refuses it, and the refusal is remembered.
TEST(CompiledGrammar, AMaskJustInsideItsStepBudgetIsComputedAndOneStepOverIsRefusedAgainFromTheCache) {
  const Grammar grammar = three_bounded_strings();
  const MatchState state = inside_the_strings(grammar);
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
