// Structured output through the whole generate loop on the shipped SFT model: sampled documents parse and validate,
// and the grammar keeps the loop's contracts (batch = alone, KV cache and mask cache on = off, seed → output).
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <vector>

#include "checkpoint/model_loader.h"
#include "core/error.h"
#include "generate/generate.h"
#include "grammar/json_schema_compiler.h"
#include "ops/thread_pool.h"

namespace minigen {
namespace {

using nlohmann::json;

// --- an independent validator: what each keyword means, read straight from JSON Schema ------------------------
int64_t code_points(const std::string& text) {
  int64_t count = 0;
  for (const char byte : text) count += (static_cast<unsigned char>(byte) & 0xC0) != 0x80;  // not a continuation
  return count;
}

bool has_type(const json& value, const std::string& type) {
  if (type == "integer") return value.is_number_integer();
  if (type == "number") return value.is_number();
  if (type == "string") return value.is_string();
  if (type == "boolean") return value.is_boolean();
  if (type == "null") return value.is_null();
  if (type == "array") return value.is_array();
  return type == "object" && value.is_object();
}

bool validates(const json& value, const json& schema, std::string& why) {
  const auto fail = [&why](const std::string& reason) {
    why = reason;
    return false;
  };
  if (schema.contains("const") && value != schema["const"]) return fail("const " + value.dump());
  if (schema.contains("enum")) {
    bool listed = false;
    for (const json& option : schema["enum"]) listed |= option == value;
    if (!listed) return fail("enum " + value.dump());
  }
  if (schema.contains("anyOf")) {
    bool any = false;
    std::string ignored;
    for (const json& alternative : schema["anyOf"]) any |= validates(value, alternative, ignored);
    if (!any) return fail("anyOf " + value.dump());
  }
  if (schema.contains("type")) {
    const json types = schema["type"].is_array() ? schema["type"] : json::array({schema["type"]});
    bool matched = false;
    for (const json& type : types) matched |= has_type(value, type.get<std::string>());
    if (!matched) return fail("type " + value.dump());
  }
  if (value.is_string()) {
    const int64_t length = code_points(value.get<std::string>());
    if (schema.contains("minLength") && length < schema["minLength"].get<int64_t>()) return fail("minLength");
    if (schema.contains("maxLength") && length > schema["maxLength"].get<int64_t>()) return fail("maxLength");
  }
  if (value.is_array()) {
    const auto size = static_cast<int64_t>(value.size());
    if (schema.contains("minItems") && size < schema["minItems"].get<int64_t>()) return fail("minItems");
    if (schema.contains("maxItems") && size > schema["maxItems"].get<int64_t>()) return fail("maxItems");
    if (schema.contains("items")) {
      for (const json& item : value) {
        if (!validates(item, schema["items"], why)) return false;
      }
    }
  }
  if (value.is_object()) {
    const json properties = schema.value("properties", json::object());
    for (const json& name : schema.value("required", json::array())) {
      if (!value.contains(name.get<std::string>())) return fail("required " + name.get<std::string>());
    }
    for (const auto& [key, member] : value.items()) {
      if (properties.contains(key)) {
        if (!validates(member, properties[key], why)) return false;
      } else if (schema.contains("additionalProperties")) {
        const json& additional = schema["additionalProperties"];
        if (additional == json(false)) return fail("additional property " + key);
        if (additional.is_object() && !validates(member, additional, why)) return false;
      }
    }
  }
  return true;
}

// Twelve schemas (tests/data/grammar_schemas.json, shared with benchmarks/grammar_mask_benchmark.cpp): nested
// objects, arrays, enums, strings with escapes and non-ASCII text, anyOf, length and item bounds.
const std::vector<json>& schemas() {
  static const std::vector<json> all = [] {
    std::ifstream file(MINIGEN_TEST_DATA_DIR "/grammar_schemas.json");
    return json::parse(file).get<std::vector<json>>();
  }();
  return all;
}

class GrammarGenerate : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    loaded_ = new LoadedModel(load_model(minigen_home() / "models" / "minigen-tiny-sft"));
    vocabulary_holder_ = new std::shared_ptr<const TokenVocabulary>(TokenVocabulary::from_tokenizer(
        *loaded_->tokenizer, loaded_->model->config.vocab_size, loaded_->model->config.eos_token_id));
  }
  static void TearDownTestSuite() {
    delete vocabulary_holder_;
    delete loaded_;
  }

  static std::shared_ptr<const CompiledGrammar> compiled(const json& schema, bool mask_cache = true) {
    return std::make_shared<const CompiledGrammar>(compile_json_schema(schema), *vocabulary_holder_,
                                                   MaskCacheOptions{mask_cache, std::size_t{64} << 20});
  }

  static std::vector<int> prompt(const std::string& question) {
    return loaded_->tokenizer->encode("<|im_start|>user\n" + question + "<|im_end|>\n<|im_start|>assistant\n");
  }

  static GenerateResult run(std::span<const std::vector<int>> prompts, GenerateOptions options) {
    ThreadPool pool(1);
    Transformer transformer(*loaded_->model, pool);
    return generate(transformer, prompts, options);
  }

  static std::string text_of(const GeneratedSequence& sequence) {
    std::vector<int> ids = sequence.token_ids;
    if (!ids.empty() && ids.back() == loaded_->model->config.eos_token_id) ids.pop_back();
    return loaded_->tokenizer->decode(ids, false);
  }

  static inline LoadedModel* loaded_ = nullptr;
  static inline std::shared_ptr<const TokenVocabulary>* vocabulary_holder_ = nullptr;
};

GenerateOptions sampling_at_temperature_one(int max_new_tokens, uint64_t seed) {
  GenerateOptions options;
  options.max_new_tokens = max_new_tokens;
  options.sampling.temperature = 1.0f;
  options.sampling.top_k = 0;
  options.sampling.top_p = 1.0f;
  options.sampling.seed = seed;
  return options;
}

// 1,008 documents: 12 schemas × 84 rows (6 batches of 14), sampled at T = 1 from the full distribution.
TEST_F(GrammarGenerate, ThousandSampledDocumentsParseAndValidate) {
  int documents = 0;
  int stopped = 0;
  std::string cut;
  for (std::size_t s = 0; s < schemas().size(); ++s) {
    const json& schema = schemas()[s];
    GenerateOptions options = sampling_at_temperature_one(160, 1000 + s);
    options.grammars = {compiled(schema)};
    const std::vector<std::vector<int>> prompts(14, prompt("Answer in JSON."));
    for (int batch = 0; batch < 6; ++batch) {
      options.sampling.seed = 1000 * s + batch;
      const GenerateResult result = run(prompts, options);
      for (const GeneratedSequence& sequence : result.sequences) {
        ++documents;
        ASSERT_EQ(sequence.grammar_allowed_tokens.size(), sequence.token_ids.size());
        if (sequence.finish_reason != "stop") {  // cut by max_new_tokens: counted below
          cut += "schema " + std::to_string(s) + ": " + text_of(sequence).substr(0, 80) + "\n";
          continue;
        }
        ++stopped;
        const std::string text = text_of(sequence);
        json value;
        ASSERT_NO_THROW(value = json::parse(text)) << "schema " << s << ": " << text;
        std::string why;
        EXPECT_TRUE(validates(value, schema, why)) << "schema " << s << ": " << text << " (" << why << ")";
      }
    }
  }
  EXPECT_EQ(documents, 1008);
  // Every schema bounds its strings and arrays (a free-form map's keys are not: the model wrote them for hundreds of
  // tokens), so 160 tokens are enough for every document to end.
  EXPECT_EQ(stopped, documents) << "of " << documents << "; cut:\n" << cut;
}

TEST_F(GrammarGenerate, EachRowAloneEqualsTheRowInABatchWithOtherSchemas) {
  const std::vector<std::vector<int>> prompts = {prompt("Name a person."), prompt("Pick a color."),
                                                 prompt("List numbers."), prompt("Describe a user.")};
  GenerateOptions batch = sampling_at_temperature_one(60, 7);
  for (int r = 0; r < 4; ++r) batch.grammars.push_back(compiled(schemas()[static_cast<std::size_t>(r)]));
  const GenerateResult together = run(prompts, batch);
  for (int r = 0; r < 4; ++r) {
    GenerateOptions alone = sampling_at_temperature_one(60, 7);
    alone.grammars = {batch.grammars[static_cast<std::size_t>(r)]};
    alone.rng_rows = {static_cast<uint64_t>(r)};
    const GenerateResult single = run(std::span(prompts).subspan(static_cast<std::size_t>(r), 1), alone);
    EXPECT_EQ(single.sequences[0].token_ids, together.sequences[static_cast<std::size_t>(r)].token_ids) << r;
  }
}

TEST_F(GrammarGenerate, KvCacheAndMaskCacheOnOrOffAndTheSameSeedGiveTheSameTokens) {
  const std::vector<std::vector<int>> prompts(3, prompt("Describe a user."));
  GenerateOptions reference = sampling_at_temperature_one(48, 11);
  reference.grammars = {compiled(schemas()[3])};
  const GenerateResult first = run(prompts, reference);
  const GenerateResult again = run(prompts, reference);
  GenerateOptions no_kv_cache = reference;
  no_kv_cache.use_cache = false;
  GenerateOptions no_mask_cache = reference;
  no_mask_cache.grammars = {compiled(schemas()[3], false)};
  const GenerateResult without_kv = run(prompts, no_kv_cache);
  const GenerateResult without_masks = run(prompts, no_mask_cache);
  for (std::size_t r = 0; r < prompts.size(); ++r) {
    EXPECT_EQ(again.sequences[r].token_ids, first.sequences[r].token_ids);
    EXPECT_EQ(without_kv.sequences[r].token_ids, first.sequences[r].token_ids);
    EXPECT_EQ(without_masks.sequences[r].token_ids, first.sequences[r].token_ids);
  }
}

TEST_F(GrammarGenerate, MaxTokensInsideADocumentEndsWithLength) {
  GenerateOptions options = sampling_at_temperature_one(3, 5);
  options.grammars = {compiled(schemas()[3])};
  const std::vector<std::vector<int>> prompts = {prompt("Describe a user.")};
  const GenerateResult result = run(prompts, options);
  EXPECT_EQ(result.sequences[0].finish_reason, "length");
  EXPECT_THROW(json::parse(text_of(result.sequences[0])), json::parse_error);
  EXPECT_EQ(result.sequences[0].grammar_allowed_tokens.size(), 3u);
}

TEST_F(GrammarGenerate, GreedyJsonObjectModeGivesAnObjectAndUnconstrainedRowsStayFree) {
  GenerateOptions options;
  options.max_new_tokens = 64;
  options.sampling.greedy = true;
  options.grammars = {std::make_shared<const CompiledGrammar>(json_object_grammar(), *vocabulary_holder_), nullptr};
  const std::vector<std::vector<int>> prompts(2, prompt("What does 'river' mean?"));
  const GenerateResult result = run(prompts, options);
  EXPECT_TRUE(result.sequences[1].grammar_allowed_tokens.empty());
  GenerateOptions free_options = options;
  free_options.grammars.clear();
  EXPECT_EQ(run(prompts, free_options).sequences[1].token_ids, result.sequences[1].token_ids);
  if (result.sequences[0].finish_reason == "stop") {
    EXPECT_TRUE(json::parse(text_of(result.sequences[0])).is_object()) << text_of(result.sequences[0]);
  }
}

TEST_F(GrammarGenerate, AGrammarForAnotherVocabularyIsRefused) {
  GenerateOptions options = sampling_at_temperature_one(4, 1);
  std::vector<std::string> tokens(10);
  tokens[1] = "{";
  options.grammars = {std::make_shared<const CompiledGrammar>(
      json_object_grammar(), std::make_shared<const TokenVocabulary>(std::move(tokens), 0))};
  const std::vector<std::vector<int>> prompts = {prompt("x")};
  EXPECT_THROW(run(prompts, options), Error);
}

// The mask's step budget (grammar/compiled_grammar.h) with a wide margin for real schemas: every test schema's
// masks along random documents, and an enum of 1,000 values (OpenAI's most in a schema) at its costliest state.
TEST_F(GrammarGenerate, TestSchemasAndAThousandValueEnumStayFarInsideTheMaskStepBudget) {
  std::mt19937_64 random(7);
  int64_t most = 0;
  json thousand = json::array();
  for (int i = 0; i < 1000; ++i) thousand.push_back("value " + std::to_string(i));
  std::vector<json> all = schemas();
  all.push_back({{"enum", thousand}});
  for (const json& schema : all) {
    const auto grammar = compiled(schema, false);
    for (int document = 0; document < 3; ++document) {
      MatchState state = MatchState::initial(grammar->grammar());
      for (int step = 0; step < 80; ++step) {
        int64_t steps = 0;
        const TokenMask mask = grammar->compute_allowed_tokens(state, &steps);
        most = std::max(most, steps);
        std::vector<int> allowed;
        for (int id = 0; id < grammar->vocab_size(); ++id) {
          if (mask.allows(id) && id != grammar->vocabulary().eos()) allowed.push_back(id);
        }
        if (allowed.empty()) break;
        const int token = allowed[std::uniform_int_distribution<std::size_t>(0, allowed.size() - 1)(random)];
        ASSERT_TRUE(state.advance_bytes(grammar->grammar(), grammar->vocabulary().token_bytes(token)));
      }
    }
  }
  EXPECT_GT(most, 100000);  // the enum's first byte: every value alive
  EXPECT_LT(most * 3 / 2, compiled(schemas()[0])->max_mask_steps()) << most;
}

// What only shows while generating ends the run with one error: a state whose mask is over its step budget (a
// thousand strings of different bounds all alive inside the string), and a logit_bias that bans every token the
// grammar allows at a step (here every token that can begin "true" or "false").
TEST_F(GrammarGenerate, AMaskOverItsBudgetAndABiasThatBansEveryAllowedTokenEndTheRunWithAClearError) {
  json strings = json::array();
  for (int i = 0; i < 1000; ++i) strings.push_back({{"type", "string"}, {"maxLength", 100 + i}});
  GenerateOptions options = sampling_at_temperature_one(8, 1);
  options.grammars = {compiled({{"anyOf", strings}})};
  const std::vector<std::vector<int>> prompts = {prompt("Answer in JSON.")};
  try {
    run(prompts, options);
    ADD_FAILURE() << "no MaskWorkLimit";
  } catch (const MaskWorkLimit& error) {
    EXPECT_NE(std::string(error.what()).find("(1000 parses alive at once)"), std::string::npos) << error.what();
  }

  options = sampling_at_temperature_one(8, 1);
  options.grammars = {compiled({{"type", "boolean"}})};
  for (int id = 0; id < loaded_->model->config.vocab_size; ++id) {
    const std::string& bytes = options.grammars[0]->vocabulary().token_bytes(id);
    if (!bytes.empty() && (std::string("true").starts_with(bytes) || std::string("false").starts_with(bytes))) {
      options.sampling.logit_bias.push_back({id, -100.0f});
    }
  }
  ASSERT_GT(options.sampling.logit_bias.size(), 2u);
  try {
    run(prompts, options);
    ADD_FAILURE() << "no error";
  } catch (const InvalidSamplingParam& error) {
    EXPECT_EQ(std::string(error.what()),
              "logit_bias bans every token the grammar allows at this step: nothing is left to sample");
  }
}

}  // namespace
}  // namespace minigen
