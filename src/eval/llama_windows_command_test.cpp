// `minigen perplexity --llama-windows N` on the shipped SFT model: the count of targets is llama-perplexity's rule
// for the text's tokens (counted here with the model's tokenizer), a saved reference compares with itself at KL 0,
// and q8 and q4 against it give golden numbers (the model and its kernels are deterministic: integer sums and a
// fixed float order on every SIMD target). Bad flags and files end with one line and leave no file.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "checkpoint/model_loader.h"
#include "cli/run_binary_test_util.h"

namespace minigen {
namespace {

namespace fs = std::filesystem;

const fs::path kSft = fs::path(MINIGEN_SOURCE_DIR) / "models" / "minigen-tiny-sft";
const fs::path kGenesis = fs::path(MINIGEN_SOURCE_DIR) / "examples" / "genesis-183.txt";

fs::path command_scratch(const std::string& name) {
  return fs::temp_directory_path() / ("minigen_llama_windows_command_" + std::to_string(::getpid()) + "_" + name);
}

nlohmann::json run_json(const std::string& arguments, const fs::path& scratch) {
  const testing::RunResult result = testing::run_minigen(arguments + " --json", scratch);
  EXPECT_EQ(result.exit_code, 0) << arguments << "\n" << result.err;
  return result.exit_code == 0 ? nlohmann::json::parse(result.out) : nlohmann::json::object();
}

TEST(PerplexityCommand, LlamaWindowsScoreTheRulesTargetsAndCompareWithASavedReference) {
  // The rule: bos + the text's tokens, tokens / 50 windows, 50 − 1 − 25 targets in each.
  const std::size_t text_tokens = load_model_tokenizer(kSft)->encode(testing::read_text_file(kGenesis)).size();
  ASSERT_EQ(text_tokens, 182u);  // 183 with bos: 3 windows of 50, the last 33 tokens unused
  const int64_t expected_targets = static_cast<int64_t>((text_tokens + 1) / 50) * (50 - 1 - 50 / 2);
  const fs::path scratch = command_scratch("golden");
  const std::string base = (scratch / "base.klb").string();
  const std::string run = "perplexity -m " + kSft.string() + " -f " + kGenesis.string() + " --llama-windows 50";

  const nlohmann::json saved = run_json(run + " --kl-base-out " + base, scratch);
  EXPECT_EQ(saved["targets"], expected_targets);
  EXPECT_EQ(saved["sequences"], 3);
  EXPECT_EQ(fs::file_size(base), 24 + 150 * 4 + 72 * 6400 * 4u);
  EXPECT_FALSE(saved.contains("mean_kl"));

  const nlohmann::json itself = run_json(run + " --kl-base " + base, scratch);
  EXPECT_EQ(itself["targets"], expected_targets);
  EXPECT_EQ(itself["loss"], saved["loss"]);
  EXPECT_EQ(itself["mean_kl"], 0.0);
  EXPECT_EQ(itself["kl_p99"], 0.0);
  EXPECT_EQ(itself["top1_agreement"], 1.0);
  EXPECT_NEAR(itself["perplexity"].get<double>(), 36.256772, 1e-5);

  const nlohmann::json q8 = run_json(run + " --weights q8 --kl-base " + base, scratch);
  EXPECT_EQ(q8["targets"], expected_targets);
  EXPECT_NEAR(q8["mean_kl"].get<double>(), 1.0566239e-4, 1e-11);
  EXPECT_NEAR(q8["kl_p99"].get<double>(), 4.3157241e-4, 1e-11);
  EXPECT_DOUBLE_EQ(q8["top1_agreement"].get<double>(), 70.0 / 72);
  // The same comparison with the f32 reference run in the process: the very numbers.
  const nlohmann::json q8_here = run_json(run + " --weights q8 --kl-base f32", scratch);
  EXPECT_EQ(q8_here["mean_kl"], q8["mean_kl"]);
  EXPECT_EQ(q8_here["kl_p99"], q8["kl_p99"]);

  // W8A8: q8's codes with int8 activations — about 2.3× q8 × int16's mean KL, as llama.cpp's Q8_0 against it.
  const nlohmann::json w8a8 = run_json(run + " --weights q8 --activations int8 --kl-base " + base, scratch);
  EXPECT_EQ(w8a8["activations"], "int8");
  EXPECT_EQ(q8["activations"], "int16");
  EXPECT_NEAR(w8a8["mean_kl"].get<double>(), 2.4241356e-4, 1e-11);
  EXPECT_NEAR(w8a8["kl_p99"].get<double>(), 1.4042120e-3, 1e-10);
  EXPECT_DOUBLE_EQ(w8a8["top1_agreement"].get<double>(), 69.0 / 72);

  const nlohmann::json q4 = run_json(run + " --weights q4 --kl-base " + base, scratch);
  EXPECT_NEAR(q4["mean_kl"].get<double>(), 0.018946526, 1e-9);
  EXPECT_NEAR(q4["kl_p99"].get<double>(), 0.072472662, 1e-9);
  EXPECT_DOUBLE_EQ(q4["top1_agreement"].get<double>(), 68.0 / 72);
  fs::remove_all(scratch);
}

TEST(PerplexityCommand, LlamaWindowFlagsAndBaseFilesRefuseWhatDoesNotFit) {
  const fs::path scratch = command_scratch("bad");
  fs::create_directories(scratch);
  const std::string run = "perplexity -m " + kSft.string() + " -f " + kGenesis.string();
  const std::string base = (scratch / "base.klb").string();
  ASSERT_EQ(testing::run_minigen(run + " --llama-windows 50 --chunks 2 --kl-base-out " + base, scratch).exit_code, 0);
  const fs::path other_text = scratch / "other.txt";
  std::ofstream(other_text) << testing::read_text_file(kGenesis).substr(1);
  const fs::path not_base = scratch / "not-base.klb";
  std::ofstream(not_base) << "_logits_ is llama.cpp's magic, not minigen's";
  const std::vector<std::pair<std::string, std::string>> cases = {
      {run + " --llama-windows 2", "--llama-windows: 2 is not an integer in [3, 1048576]"},
      {run + " --llama-windows 50 --ctx 40", "--ctx and --llama-windows cannot be used together"},
      {run + " --chunks 2", "--chunks counts llama-perplexity's windows: it needs --llama-windows"},
      {run + " --llama-windows 50 --chunks 0", "--chunks: 0 is not an integer in [1, 2147483647]"},
      {"perplexity -m " + kSft.string() + " --jsonl x.jsonl --llama-windows 50", "give it with -f, not --jsonl"},
      {run + " --llama-windows 100", "windows of 100 tokens need at least 200 tokens of text; it has 183"},
      {run + " --llama-windows 40000", "--llama-windows 40000 is longer than the model's context of 32768"},
      {run + " --kl-base-out " + base, "--kl-base-out holds llama-perplexity's windows: it needs --llama-windows N"},
      {run + " --kl-base " + base, "--kl-base FILE holds llama-perplexity's windows: it needs --llama-windows N"},
      {run + " --llama-windows 50 --kl-base f32 --kl-base-out " + (scratch / "new.klb").string(),
       "--kl-base-out saves a reference and --kl-base compares with one: give one of them"},
      {run + " --llama-windows 50 --chunks 2 --kl-base-out " + base,
       base + " already exists; choose another path, or add --force to replace it"},
      {run + " --llama-windows 50 --kl-base " + base, base + " holds 2 windows, this text and --chunks give 3"},
      {run + " --llama-windows 60 --chunks 2 --kl-base " + base, base + " was written with --llama-windows 50, not 60"},
      {"perplexity -m " + kSft.string() + " -f " + other_text.string() + " --llama-windows 50 --chunks 2 --kl-base " +
           base,
       base + " was written for other tokens (token 1 is "},
      {run + " --llama-windows 50 --kl-base " + not_base.string(),
       not_base.string() + ": not a minigen KL base file (--kl-base-out writes one)"},
      {run + " --llama-windows 50 --kl-base " + (scratch / "missing.klb").string(), "missing.klb"},
      {run + " --llama-windows 50 --kl-base-out " + (scratch / "no-such-dir" / "x.klb").string(), "no-such-dir"},
  };
  const uintmax_t base_bytes = fs::file_size(base);
  for (const auto& [arguments, message] : cases) {
    const testing::RunResult result = testing::run_minigen(arguments, scratch);
    EXPECT_EQ(result.exit_code, 1) << arguments;
    EXPECT_NE(result.err.find(message), std::string::npos) << arguments << "\n" << result.err;
    EXPECT_EQ(std::count(result.err.begin(), result.err.end(), '\n'), 1) << arguments << "\n" << result.err;
  }
  // Nothing was written: the refused base is as it was, no other file or temporary appeared.
  EXPECT_EQ(fs::file_size(base), base_bytes);
  std::vector<std::string> left;
  for (const auto& entry : fs::directory_iterator(scratch)) left.push_back(entry.path().filename().string());
  std::sort(left.begin(), left.end());
  EXPECT_EQ(left, (std::vector<std::string>{"base.klb", "not-base.klb", "other.txt", "stderr.txt", "stdout.txt"}));
  fs::remove_all(scratch);
}

}  // namespace
}  // namespace minigen
