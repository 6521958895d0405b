// llama-perplexity's windows and the saved KL reference (`minigen perplexity --llama-windows N --kl-base-out FILE`,
// then `--kl-base FILE`): the targets are the ones llama-perplexity scores, computed here by its rule written out as
// a loop, and a reference read back from its file gives the KL of the reference run in the same process.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "cache/kv_cache.h"
#include "checkpoint/model_loader.h"
#include "cli/run_binary_test_util.h"
#include "core/error.h"
#include "core/file_io.h"
#include "eval/kl_base_file.h"
#include "eval/perplexity.h"
#include "model/test_models.h"

namespace minigen {
namespace {

namespace fs = std::filesystem;

// llama-perplexity's rule (examples/perplexity/perplexity.cpp, b4748), as a loop: the tokens (bos first) are cut into
// tokens / n_ctx chunks; a chunk's first token becomes bos; the logits at positions n_ctx / 2 … n_ctx − 2 are
// scored against the next token. Returns the (chunk, position, target) of every scored token.
struct LlamaTarget {
  int chunk;
  int position;
  int target;
};
std::vector<LlamaTarget> llama_perplexity_targets(const std::vector<int>& tokens, int n_ctx, int n_chunks) {
  const int n_chunk_max = static_cast<int>(tokens.size()) / n_ctx;
  const int n_chunk = n_chunks < 0 ? n_chunk_max : std::min(n_chunks, n_chunk_max);
  const int first = n_ctx / 2;
  std::vector<LlamaTarget> targets;
  for (int i = 0; i < n_chunk; ++i) {
    for (int k = 0; k < n_ctx - 1 - first; ++k)
      targets.push_back({i, first + k, tokens[static_cast<std::size_t>(i * n_ctx + first + k + 1)]});
  }
  return targets;
}

std::vector<int> with_bos(std::vector<int> text) {
  text.insert(text.begin(), 1);
  return text;
}

// Odd and even windows, a tail that does not fill a window, --chunks below and above the count: the windows hold
// bos and then the text from the window's second token, and the scored targets are the rule's, one for one.
TEST(LlamaWindows, HoldTheTargetsLlamaPerplexityScores) {
  const std::vector<int> tokens = with_bos(testing::test_prompt(40, 3));  // 41 tokens
  for (const auto& [window, chunks] : std::vector<std::pair<int, int>>{{7, -1}, {8, -1}, {8, 2}, {20, 9}, {3, -1}}) {
    const PerplexitySequences windows = PerplexitySequences::llama_windows(tokens, 1, window, chunks);
    const std::vector<LlamaTarget> expected = llama_perplexity_targets(tokens, window, chunks);
    const std::size_t count = chunks < 0 ? tokens.size() / window : std::min<std::size_t>(chunks, 41 / window);
    ASSERT_EQ(windows.size(), count) << window;
    std::size_t next = 0;
    for (std::size_t w = 0; w < windows.size(); ++w) {
      const std::vector<int> sequence = windows.at(w);
      ASSERT_EQ(sequence.size(), static_cast<std::size_t>(window));
      EXPECT_EQ(sequence[0], 1);  // bos replaces the window's first token (in window 0 it was bos already)
      for (int t = 1; t < window; ++t) EXPECT_EQ(sequence[t], tokens[w * window + t]) << window << " " << w;
      for (std::size_t t = windows.first_target(w); t < sequence.size(); ++t, ++next) {
        ASSERT_LT(next, expected.size());
        EXPECT_EQ(expected[next].chunk, static_cast<int>(w));
        EXPECT_EQ(expected[next].position + 1, static_cast<int>(t));
        EXPECT_EQ(expected[next].target, sequence[t]);
      }
    }
    EXPECT_EQ(next, expected.size()) << window;
    EXPECT_EQ(expected.size(), count * static_cast<std::size_t>(window - 1 - window / 2)) << window;
  }
  // Without bos (a model that adds none) each window is the text as it is.
  const PerplexitySequences plain = PerplexitySequences::llama_windows(tokens, -1, 8, -1);
  EXPECT_EQ(plain.at(1), std::vector<int>(tokens.begin() + 8, tokens.begin() + 16));
}

TEST(LlamaWindows, RefuseTextsShorterThanTwoWindowsAsLlamaPerplexityDoes) {
  const std::vector<int> tokens = with_bos(testing::test_prompt(15, 3));  // 16 tokens
  EXPECT_EQ(PerplexitySequences::llama_windows(tokens, 1, 8, -1).size(), 2u);
  try {
    PerplexitySequences::llama_windows(tokens, 1, 9, -1);
    FAIL() << "16 tokens are not two windows of 9";
  } catch (const Error& error) {
    EXPECT_STREQ(error.what(),
                 "perplexity: llama-perplexity's windows of 9 tokens need at least 18 tokens of text; it has 16");
  }
  EXPECT_THROW(PerplexitySequences::llama_windows(tokens, 1, 2, -1), Error);
}

// The scorer counts exactly those targets, and their loss is the softmax of each window's own forward pass there.
TEST(LlamaWindows, ScoreTheLossOfTheRulesTargets) {
  const auto model = testing::random_test_model("tiny", 5);
  const int vocab = model->config.vocab_size;
  const std::vector<int> tokens = with_bos(testing::test_prompt(52, 7));  // 53 tokens: 4 windows of 13, 1 left
  const int window = 13;
  ThreadPool pool(2);
  Transformer transformer(*model, pool);
  double expected = 0;
  const std::vector<LlamaTarget> targets = llama_perplexity_targets(tokens, window, -1);
  for (int chunk = 0; chunk < 4; ++chunk) {
    std::vector<int> sequence(tokens.begin() + chunk * window, tokens.begin() + (chunk + 1) * window);
    sequence[0] = 1;
    KvCache cache(model->config.kv_layout(), window);
    const ForwardRow row{&cache, sequence, true};
    const std::vector<float> logits = transformer.forward(std::span(&row, 1));
    for (const LlamaTarget& target : targets) {
      if (target.chunk != chunk) continue;
      const float* at = logits.data() + static_cast<std::size_t>(target.position) * vocab;
      const double top = *std::max_element(at, at + vocab);
      double sum = 0;
      for (int i = 0; i < vocab; ++i) sum += std::exp(at[i] - top);
      expected += top + std::log(sum) - at[target.target];
    }
  }
  const PerplexityResult result =
      score_perplexity(transformer, nullptr, PerplexitySequences::llama_windows(tokens, 1, window, -1));
  EXPECT_EQ(result.targets, 4 * (13 - 1 - 6));
  EXPECT_EQ(result.sequences, 4);
  EXPECT_NEAR(result.loss_sum, expected, 1e-9 * expected);
}

TEST(KlPercentile, InterpolatesBetweenRanksAsLlamaPerplexity) {
  EXPECT_DOUBLE_EQ(percentile({4, 0, 3, 1, 2}, 0.99), 3.96);  // rank 0.99 × 4 = 3.96, between 3 and 4
  EXPECT_DOUBLE_EQ(percentile({4, 0, 3, 1, 2}, 0.5), 2.0);
  EXPECT_DOUBLE_EQ(percentile({5}, 0.99), 5.0);
  EXPECT_DOUBLE_EQ(percentile({}, 0.99), 0.0);
}

fs::path kl_base_scratch(const std::string& name) {
  return fs::temp_directory_path() / ("minigen_llama_windows_test_" + std::to_string(::getpid()) + "_" + name);
}

// A reference written to a file and read back gives the bits of the reference run in the process: KL against
// itself exactly 0 and top-1 100 %, q8's KL the in-process value, bit for bit.
TEST(KlBaseFile, ReadBackEqualsTheReferenceRunInProcess) {
  const auto model = testing::random_test_model("tiny", 6);
  ThreadPool pool(2);
  Transformer f32(*model, pool);
  Transformer q8(*model, pool, WeightType::kQ8);
  const std::vector<int> tokens = with_bos(testing::test_prompt(70, 2));
  const PerplexitySequences windows = PerplexitySequences::llama_windows(tokens, 1, 16, -1);  // 4 windows
  const fs::path scratch = kl_base_scratch("roundtrip");
  fs::create_directories(scratch);
  const fs::path path = scratch / "base.klb";
  const KlBaseShape shape{16, 4, model->config.vocab_size};
  write_file_atomically(path, [&](std::ostream& out) {
    KlBaseWriter writer(out, shape, std::span<const int>(tokens).first(64));
    score_perplexity(f32, nullptr, windows, {}, KvDType::kF32, {},
                     [&](std::span<const float> logits) { writer.append(logits); });
    writer.finish();
  });
  EXPECT_EQ(fs::file_size(path), 24 + 64 * 4 + 4 * 7 * 6400 * 4u);
  const KlBaseFile base(path);
  EXPECT_EQ(base.shape().targets(), 28);
  EXPECT_EQ(base.tokens(), std::vector<int>(tokens.begin(), tokens.begin() + 64));
  const SavedReferenceLogits saved = [&](int64_t first, int64_t count) { return base.logits(first, count); };
  const PerplexityResult itself = score_perplexity(f32, nullptr, windows, {}, KvDType::kF32, saved);
  EXPECT_EQ(itself.targets, 28);
  EXPECT_EQ(itself.kl_sum, 0.0);
  EXPECT_EQ(itself.top1_agreements, 28);
  const PerplexityResult from_file = score_perplexity(q8, nullptr, windows, {}, KvDType::kF32, saved);
  const PerplexityResult in_process = score_perplexity(q8, &f32, windows);
  EXPECT_GT(from_file.kl_sum, 0.0);
  EXPECT_EQ(std::memcmp(&from_file.kl_sum, &in_process.kl_sum, sizeof(double)), 0);
  EXPECT_EQ(from_file.kl_values, in_process.kl_values);
  EXPECT_EQ(from_file.top1_agreements, in_process.top1_agreements);
  fs::remove_all(scratch);
}

TEST(KlBaseFile, RefusesFilesThatAreNotWholeBases) {
  const fs::path scratch = kl_base_scratch("bad");
  fs::create_directories(scratch);
  std::string good;
  {
    std::ostringstream out;
    KlBaseWriter writer(out, {4, 2, 3}, std::vector<int>{1, 2, 3, 4, 1, 6, 7, 8});
    writer.append(std::vector<float>(2 * 1 * 3, 0.5f));  // 4 − 1 − 2 = 1 target per window
    writer.finish();
    good = out.str();
  }
  ASSERT_EQ(good.size(), 24u + 32u + 24u);
  const auto write = [&](const std::string& name, const std::string& bytes) {
    std::ofstream(scratch / name, std::ios::binary) << bytes;
    return scratch / name;
  };
  const auto message_of = [](const fs::path& path) -> std::string {
    try {
      const KlBaseFile base(path);
      base.logits(0, 2);
    } catch (const Error& error) {
      return error.what();
    }
    return "accepted";
  };
  EXPECT_EQ(message_of(write("good", good)), "accepted");
  const std::string p = scratch.string() + "/";
  EXPECT_EQ(message_of(write("magic", "_logits_" + good.substr(8))),
            p + "magic: not a minigen KL base file (--kl-base-out writes one)");
  EXPECT_EQ(message_of(write("cut", good.substr(0, good.size() - 1))),
            p + "cut: KL base file of 79 bytes; its header (window 4, 2 windows, vocabulary 3) needs 80");
  std::string version = good;
  version[8] = 2;
  EXPECT_EQ(message_of(write("version", version)), p + "version: KL base file version 2, this minigen reads version 1");
  std::string window = good;
  window[12] = 2;
  EXPECT_EQ(message_of(write("window", window)),
            p + "window: KL base header out of range (window 2, windows 2, vocabulary 3)");
  std::string nan = good;
  const float not_a_number = std::nanf("");
  std::memcpy(nan.data() + 24 + 32 + 4 * 4, &not_a_number, 4);
  EXPECT_EQ(message_of(write("nan", nan)), p + "nan: logit 1 of target 1 is not finite");
  EXPECT_THROW(KlBaseWriter(std::cout, {4, 2, 3}, std::vector<int>{1, 2}), Error);
  std::ostringstream short_out;
  KlBaseWriter short_writer(short_out, {4, 2, 3}, std::vector<int>(8, 1));
  short_writer.append(std::vector<float>(3, 0.f));
  EXPECT_THROW(short_writer.finish(), Error);
  fs::remove_all(scratch);
}

}  // namespace
}  // namespace minigen
