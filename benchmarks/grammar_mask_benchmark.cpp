// How long the grammar's allowed-token mask takes per generation step (benchmarks/README.md, "Grammar masks").
//
// For each test schema (tests/data/grammar_schemas.json) it walks documents the way generation does: ask the
// row's matcher for the mask (timed, with the shared per-state cache as in a server that has seen the schema
// before within this run), pick one allowed token at random (eos preferred once allowed, so documents end), accept
// it. It reports the median and p90 of the timed steps, and of the same steps' masks computed without the cache
// (the cost of a state seen for the first time), at two vocabularies:
//   - the shipped tokenizer's 6,400 tokens;
//   - 151,665 tokens (Qwen's size): the shipped tokens plus concatenations of two of them drawn at random, which is
//     how a BPE vocabulary grows (each merge joins two existing tokens), until there are that many distinct ones.
//
//   minigen_grammar_bench [documents per schema, default 20]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <random>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "grammar/grammar_matcher.h"
#include "grammar/json_schema_compiler.h"
#include "tokenizer/bpe_tokenizer.h"

namespace {

using Clock = std::chrono::steady_clock;
using minigen::CompiledGrammar;
using minigen::GrammarMatcher;
using minigen::TokenVocabulary;

double percentile(std::vector<double> values, double fraction) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  return values[static_cast<std::size_t>(fraction * static_cast<double>(values.size() - 1))];
}

std::shared_ptr<const TokenVocabulary> synthetic_vocabulary(const TokenVocabulary& base, int size) {
  std::vector<std::string> tokens;
  std::set<std::string> seen;
  for (int id = 0; id < base.size(); ++id) {
    tokens.push_back(base.token_bytes(id));
    if (!tokens.back().empty()) seen.insert(tokens.back());
  }
  std::vector<int> pieces;
  for (int id = 0; id < base.size(); ++id) {
    if (!base.token_bytes(id).empty()) pieces.push_back(id);
  }
  std::mt19937_64 random(42);
  std::uniform_int_distribution<std::size_t> pick(0, pieces.size() - 1);
  while (static_cast<int>(tokens.size()) < size) {
    std::string token = base.token_bytes(pieces[pick(random)]) + base.token_bytes(pieces[pick(random)]);
    if (token.size() > 16 || !seen.insert(token).second) continue;
    tokens.push_back(std::move(token));
  }
  return std::make_shared<const TokenVocabulary>(std::move(tokens), base.eos());
}

struct StepTimes {
  std::vector<double> cached_us;
  std::vector<double> uncached_us;
  int documents_complete = 0;
  int documents = 0;
};

void walk_documents(const std::shared_ptr<const CompiledGrammar>& grammar, int documents, uint64_t seed,
                    StepTimes& times) {
  std::mt19937_64 random(seed);
  const int eos = grammar->vocabulary().eos();
  for (int document = 0; document < documents; ++document) {
    GrammarMatcher matcher(grammar);
    ++times.documents;
    for (int step = 0; step < 200; ++step) {
      const Clock::time_point start = Clock::now();
      const minigen::TokenMask& mask = matcher.allowed_tokens();
      times.cached_us.push_back(std::chrono::duration<double, std::micro>(Clock::now() - start).count());
      if (mask.allows(eos)) {
        ++times.documents_complete;
        break;
      }
      std::vector<int> allowed;
      for (int id = 0; id < grammar->vocab_size(); ++id) {
        if (mask.allows(id)) allowed.push_back(id);
      }
      matcher.accept(allowed[std::uniform_int_distribution<std::size_t>(0, allowed.size() - 1)(random)]);
    }
  }
}

// The cost of a state seen for the first time: the same walks against a grammar without the cache.
void time_uncached(const std::shared_ptr<const CompiledGrammar>& uncached, int documents, uint64_t seed,
                   StepTimes& times) {
  StepTimes scratch;
  walk_documents(uncached, documents, seed, scratch);
  times.uncached_us.insert(times.uncached_us.end(), scratch.cached_us.begin(), scratch.cached_us.end());
}

void run(const char* label, const std::shared_ptr<const TokenVocabulary>& vocabulary,
         const std::vector<nlohmann::json>& schemas, int documents) {
  StepTimes times;
  for (std::size_t s = 0; s < schemas.size(); ++s) {
    const minigen::Grammar grammar = minigen::compile_json_schema(schemas[s]);
    walk_documents(std::make_shared<const CompiledGrammar>(grammar, vocabulary), documents, s, times);
    time_uncached(std::make_shared<const CompiledGrammar>(grammar, vocabulary, minigen::MaskCacheOptions{false, 0}),
                  std::max(1, documents / 4), s, times);
  }
  std::printf("%s: vocab %d, %zu steps, %d of %d documents complete\n", label, vocabulary->size(),
              times.cached_us.size(), times.documents_complete, times.documents);
  for (const auto& [name, values] :
       {std::pair{"  with the cache   ", &times.cached_us}, std::pair{"  without the cache", &times.uncached_us}}) {
    std::printf("%s  median %9.2f us  p90 %9.2f us  p99 %9.2f us  max %9.2f us\n", name, percentile(*values, 0.5),
                percentile(*values, 0.9), percentile(*values, 0.99), percentile(*values, 1.0));
  }
}

}  // namespace

int main(int argc, char** argv) {
  const int documents = argc > 1 ? std::max(1, std::atoi(argv[1])) : 20;
  std::ifstream file(MINIGEN_SOURCE_DIR "/tests/data/grammar_schemas.json");
  const std::vector<nlohmann::json> schemas = nlohmann::json::parse(file).get<std::vector<nlohmann::json>>();
  const minigen::Tokenizer tokenizer =
      minigen::Tokenizer::from_files(MINIGEN_SOURCE_DIR "/models/minigen-tiny-sft/tokenizer.json",
                                     MINIGEN_SOURCE_DIR "/models/minigen-tiny-sft/tokenizer_config.json");
  const auto shipped = TokenVocabulary::from_tokenizer(tokenizer, tokenizer.vocab_size(), tokenizer.eos_id());
  std::printf("grammar masks, %zu schemas, %d random documents each (the uncached column: a quarter of them)\n",
              schemas.size(), documents);
  run("shipped tokenizer", shipped, schemas, documents);
  const Clock::time_point start = Clock::now();
  const auto large = synthetic_vocabulary(*shipped, 151665);
  std::printf("(synthetic 151,665-token vocabulary and its trie built in %.0f ms: %zu trie nodes)\n",
              std::chrono::duration<double, std::milli>(Clock::now() - start).count(), large->trie().size());
  run("synthetic 151,665", large, schemas, documents);
  return 0;
}
