#include "eval/perplexity.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "cache/kv_cache.h"
#include "cli/run_binary_test_util.h"
#include "core/error.h"
#include "core/memory_limit_test_util.h"
#include "model/test_models.h"

namespace minigen {
namespace {

namespace fs = std::filesystem;

TEST(PerplexitySequences, DocumentsAreCutIntoPiecesOfContextPlusOne) {
  const std::vector<std::vector<int>> documents = {{1, 10, 11, 2}, {1, 20, 21, 22, 23, 24, 2}, {1}};
  const auto sequences = perplexity_sequences_of_documents(documents, 3);
  // The first fits (4 ≤ 3 + 1); the second is cut after 4 tokens; a lone token has nothing to predict.
  ASSERT_EQ(sequences.size(), 3u);
  EXPECT_EQ(sequences[0], (std::vector<int>{1, 10, 11, 2}));
  EXPECT_EQ(sequences[1], (std::vector<int>{1, 20, 21, 22}));
  EXPECT_EQ(sequences[2], (std::vector<int>{23, 24, 2}));
}

TEST(PerplexitySequences, TextIsCutIntoWindowsEachAfterBos) {
  const std::vector<int> text = {5, 6, 7, 8, 9};
  const auto sequences = perplexity_sequences_of_text(text, 1, 2);
  ASSERT_EQ(sequences.size(), 3u);
  EXPECT_EQ(sequences[0], (std::vector<int>{1, 5, 6}));
  EXPECT_EQ(sequences[2], (std::vector<int>{1, 9}));
}

// The windows are described, not built: 20 M tokens at --ctx 1 are 20 M sequences, which as vectors took over a GB
// (21 M two-token windows of a 50 MB text: 1.48 GB). Described, they take a few bytes, inside a 16 MB limit.
TEST(PerplexitySequences, TwentyMillionWindowsAreDescribedInConstantMemory) {
  const std::vector<int> text(20'000'000, 7);
  const testing::LimitedRun run = testing::run_with_memory_limit(uint64_t{16} << 20, [&] {
    const PerplexitySequences windows = PerplexitySequences::text_windows(text, 1, 1);
    if (windows.at(19'999'999) != std::vector<int>{1, 7}) throw Error("wrong last window");
    throw Error(std::to_string(windows.size()) + " windows of at most " + std::to_string(windows.longest()));
  });
  if (!testing::kAddressSpaceLimitWorks) GTEST_SKIP() << "no address-space limit under AddressSanitizer";
  EXPECT_EQ(run.outcome, testing::LimitedRun::Outcome::kError);
  EXPECT_EQ(run.message, "20000000 windows of at most 2");
}

// Scoring windows made one batch at a time gives the very bits of scoring them built up front, at any context.
TEST(Perplexity, StreamedWindowsScoreBitIdenticallyToBuiltOnes) {
  const auto model = testing::random_test_model("tiny", 5);
  ThreadPool pool(2);
  Transformer transformer(*model, pool);
  Transformer reference(*model, pool);
  const std::vector<int> text = testing::test_prompt(61, 4);
  for (const int context : {1, 2, 7, 61, 100}) {
    std::vector<std::vector<int>> built;  // the windows as the command used to build them
    for (std::size_t start = 0; start < text.size(); start += context) {
      std::vector<int> window{1};
      window.insert(window.end(), text.begin() + start,
                    text.begin() + std::min(text.size(), start + static_cast<std::size_t>(context)));
      built.push_back(window);
    }
    const PerplexityResult streamed =
        score_perplexity(transformer, &reference, PerplexitySequences::text_windows(text, 1, context));
    const PerplexityResult whole = score_perplexity(transformer, &reference, built);
    EXPECT_EQ(streamed.sequences, static_cast<int64_t>(built.size())) << context;
    EXPECT_EQ(streamed.targets, 61) << context;
    EXPECT_EQ(std::memcmp(&streamed.loss_sum, &whole.loss_sum, sizeof(double)), 0) << context;
    EXPECT_EQ(std::memcmp(&streamed.kl_sum, &whole.kl_sum, sizeof(double)), 0) << context;
    EXPECT_EQ(streamed.top1_agreements, whole.top1_agreements) << context;
  }
}

// The loss of each target computed by hand from one forward pass per sequence: the batched scorer (several
// sequences per call, softmaxes on the pool) must give the same sum, on any number of threads.
TEST(Perplexity, EqualsTheSoftmaxOfEachSequenceAloneOnAnyNumberOfThreads) {
  const auto model = testing::random_test_model("tiny", 5);
  const int vocab = model->config.vocab_size;
  const std::vector<std::vector<int>> sequences = {testing::test_prompt(2, 1), testing::test_prompt(9, 2),
                                                   testing::test_prompt(5, 3)};
  double expected = 0;
  {
    ThreadPool pool(1);
    Transformer transformer(*model, pool);
    for (const std::vector<int>& sequence : sequences) {
      KvCache cache(model->config.kv_layout(), static_cast<int>(sequence.size()));
      const ForwardRow row{&cache, sequence, true};
      const std::vector<float>& logits = transformer.forward(std::span(&row, 1));
      for (std::size_t t = 0; t + 1 < sequence.size(); ++t) {
        const float* position = logits.data() + t * vocab;
        double sum = 0;
        const double top = *std::max_element(position, position + vocab);
        for (int i = 0; i < vocab; ++i) sum += std::exp(position[i] - top);
        expected += top + std::log(sum) - position[sequence[t + 1]];
      }
    }
  }
  std::vector<double> sums;
  for (const int threads : {1, 3}) {
    ThreadPool pool(threads);
    Transformer transformer(*model, pool);
    const PerplexityResult result = score_perplexity(transformer, nullptr, sequences);
    sums.push_back(result.loss_sum);
    EXPECT_EQ(result.targets, 1 + 8 + 4);
    EXPECT_EQ(result.sequences, 3);
    EXPECT_NEAR(result.loss_sum, expected, 1e-9 * expected) << threads << " threads";
    EXPECT_FALSE(result.has_reference);
  }
  EXPECT_EQ(std::memcmp(&sums[0], &sums[1], sizeof(double)), 0) << "1 and 3 threads differ";
}

TEST(Perplexity, AgainstItselfTheKlIsZeroAndTheTopTokensAgree) {
  const auto model = testing::random_test_model("tiny", 6);
  ThreadPool pool(2);
  Transformer f32(*model, pool);
  Transformer same(*model, pool);
  Transformer bf16(*model, pool, WeightType::kBF16);
  const std::vector<std::vector<int>> sequences = {testing::test_prompt(12, 4), testing::test_prompt(7, 5)};
  const PerplexityResult itself = score_perplexity(same, &f32, sequences);
  EXPECT_TRUE(itself.has_reference);
  EXPECT_EQ(itself.kl_sum, 0.0);
  EXPECT_EQ(itself.top1_agreements, itself.targets);
  const PerplexityResult rounded = score_perplexity(bf16, &f32, sequences);
  EXPECT_GT(rounded.mean_kl(), 0.0);   // bf16 weights change the distribution a little …
  EXPECT_LT(rounded.mean_kl(), 1e-2);  // … but not much
  EXPECT_NE(rounded.loss_sum, itself.loss_sum);
}

// Scoring several settings in one pass shares the reference's logits; each result is still what it is alone, the
// reference itself included (its forward is skipped, not its sums). Rows enough for more than one batch.
TEST(Perplexity, VariantsScoredTogetherEqualEachScoredAlone) {
  const auto model = testing::random_test_model("tiny", 6);
  ThreadPool pool(2);
  Transformer f32(*model, pool);
  Transformer q8(*model, pool, WeightType::kQ8);
  std::vector<std::vector<int>> sequences;
  for (int i = 0; i < 20; ++i) sequences.push_back(testing::test_prompt(5 + i % 7, 30 + i));
  const std::vector<PerplexityVariant> variants = {
      {&f32, KvDType::kF32}, {&f32, KvDType::kInt8}, {&q8, KvDType::kF32}, {&q8, KvDType::kBF16}};
  const std::vector<PerplexityResult> together = score_perplexity_variants(variants, &f32, sequences);
  ASSERT_EQ(together.size(), variants.size());
  for (std::size_t v = 0; v < variants.size(); ++v) {
    const PerplexityResult alone =
        score_perplexity(*variants[v].transformer, &f32, sequences, {}, variants[v].kv_dtype);
    EXPECT_EQ(together[v].loss_sum, alone.loss_sum) << v;
    EXPECT_EQ(together[v].kl_sum, alone.kl_sum) << v;
    EXPECT_EQ(together[v].top1_agreements, alone.top1_agreements) << v;
    EXPECT_EQ(together[v].targets, alone.targets) << v;
    EXPECT_EQ(together[v].sequences, 20) << v;
  }
  EXPECT_EQ(together[0].kl_sum, 0.0);
  EXPECT_GT(together[1].kl_sum, 0.0);
  EXPECT_GT(together[2].kl_sum, together[1].kl_sum);  // q8 weights move more than the int8 cache here
  EXPECT_THROW(score_perplexity_variants({}, &f32, sequences), Error);
}

TEST(Perplexity, RejectsSequencesTheModelCannotTake) {
  const auto model = testing::random_test_model("tiny", 7);  // a 512-token context
  ThreadPool pool(1);
  Transformer transformer(*model, pool);
  const std::vector<std::vector<int>> too_short = {{1}};
  EXPECT_THROW(score_perplexity(transformer, nullptr, too_short), Error);
  const std::vector<std::vector<int>> too_long = {testing::test_prompt(513, 1)};
  EXPECT_THROW(score_perplexity(transformer, nullptr, too_long), Error);
}

fs::path scratch_directory(const std::string& name) {
  return fs::temp_directory_path() / ("minigen_perplexity_test_" + std::to_string(::getpid()) + "_" + name);
}

// The shipped base model on the first 400 held-out documents: the loss minigen measures equals the training recipe's
// evaluation in PyTorch (tests/data/perplexity/expected.json, from tools/reference/make_perplexity_golden.py) to
// float32 accuracy, with the same number of targets. Labelled heavy (19,403 targets).
TEST(PerplexityCommand, HeldOutLossMatchesTheTrainingRecipesEvaluation) {
  const fs::path data = fs::path(MINIGEN_TEST_DATA_DIR) / "perplexity";
  const nlohmann::json expected = nlohmann::json::parse(testing::read_text_file(data / "expected.json"));
  const fs::path scratch = scratch_directory("golden");
  const testing::RunResult result =
      testing::run_minigen("perplexity -m " + (fs::path(MINIGEN_SOURCE_DIR) / "models" / "minigen-tiny-base").string() +
                               " --jsonl " + (data / "heldout-400.jsonl").string() + " --json",
                           scratch);
  ASSERT_EQ(result.exit_code, 0) << result.err;
  const nlohmann::json measured = nlohmann::json::parse(result.out);
  EXPECT_EQ(measured["targets"], expected["targets"]);
  EXPECT_EQ(measured["documents"], 400);
  EXPECT_NEAR(measured["loss"].get<double>(), expected["loss"].get<double>(), 1e-5);
  EXPECT_NEAR(measured["bits_per_byte"].get<double>(), expected["bits_per_byte"].get<double>(), 1e-5);
  fs::remove_all(scratch);
}

TEST(PerplexityCommand, BadInputIsOneClearError) {
  const fs::path scratch = scratch_directory("bad");
  fs::create_directories(scratch);
  const fs::path bad_jsonl = scratch / "bad.jsonl";
  std::ofstream(bad_jsonl) << "{\"text\": \"fine\"}\n{not json\n";
  const fs::path empty = scratch / "empty.txt";
  std::ofstream(empty) << "";
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"perplexity", "give one of -f FILE and --jsonl FILE"},
      {"perplexity --jsonl " + bad_jsonl.string(), bad_jsonl.string() + ":2 is not valid JSON"},
      {"perplexity -f " + empty.string(), "the input has no text to score"},
      {"perplexity -f " + empty.string() + " --ctx 40000", "--ctx 40000 needs 40001 positions (with bos)"},
      {"perplexity -f " + empty.string() + " --kl-base bf16", "--kl-base"},
  };
  for (const auto& [arguments, message] : cases) {
    const testing::RunResult result = testing::run_minigen(arguments, scratch);
    EXPECT_NE(result.exit_code, 0) << arguments;
    EXPECT_LT(result.exit_code, 128) << arguments;
    EXPECT_NE(result.err.find(message), std::string::npos) << arguments << "\n" << result.err;
  }
  fs::remove_all(scratch);
}

}  // namespace
}  // namespace minigen
