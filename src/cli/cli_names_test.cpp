// The program where people expect it (issue 27), end to end: a mistyped command or flag names the nearest one,
// shipped models load by name from any folder, and --temperature 0 is --greedy.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "checkpoint/model_loader.h"
#include "cli/run_binary_test_util.h"

namespace minigen {
namespace {

namespace fs = std::filesystem;
using testing::RunResult;

fs::path scratch() { return fs::temp_directory_path() / ("minigen_cli_names_" + std::to_string(::getpid())); }

RunResult run(const std::string& arguments) { return testing::run_minigen(arguments, scratch()); }

TEST(CliNames, AMistypedCommandOrFlagNamesTheNearestOne) {
  EXPECT_EQ(run("genrate -p hi").err,
            "minigen: error: unknown command 'genrate'; did you mean 'generate'? (see "
            "`minigen --help`)\n");
  EXPECT_EQ(run("generate -p hi --temprature 0.5").err,
            "minigen: error: unknown option --temprature 0.5; did you mean '--temperature'? (see `minigen generate "
            "--help`)\n");
  EXPECT_EQ(run("generate -p hi --greddy").err,
            "minigen: error: unknown option --greddy; did you mean '--greedy'? (see `minigen generate --help`)\n");
  // Nothing near: no guess, the list of commands as before.
  const RunResult far = run("compile");
  EXPECT_EQ(far.exit_code, 1);
  EXPECT_TRUE(far.err.starts_with("minigen: error: unknown command 'compile'; the commands are generate, chat,"))
      << far.err;
  EXPECT_EQ(run("generate -p hi --verbose").err,
            "minigen: error: unknown option --verbose (see `minigen generate --help`)\n");
}

TEST(CliNames, ThreadsZeroIsDocumentedAsOnePerCore) {
  const RunResult help = run("generate --help");
  EXPECT_NE(help.out.find("worker threads; 0 (the default) means one per core"), std::string::npos) << help.out;
}

// --temperature 0 and --greedy: the same token ids, and not the sampled ones.
TEST(CliNames, TemperatureZeroIsGreedy) {
  const std::string prompt = "generate -m minigen-tiny-sft --chat 'What does river mean?' -n 16 --threads 2 --json";
  const RunResult zero = run(prompt + " --temperature 0");
  const RunResult greedy = run(prompt + " --greedy");
  const RunResult sampled = run(prompt + " --seed 0");
  ASSERT_EQ(zero.exit_code, 0) << zero.err;
  ASSERT_EQ(greedy.exit_code, 0) << greedy.err;
  ASSERT_EQ(sampled.exit_code, 0) << sampled.err;
  const auto ids = [](const RunResult& result) {
    return nlohmann::json::parse(result.out)["sequences"][0]["token_ids"].get<std::vector<int>>();
  };
  EXPECT_EQ(ids(zero), ids(greedy));
  EXPECT_NE(ids(zero), ids(sampled));
  EXPECT_EQ(nlohmann::json::parse(zero.out)["settings"]["greedy"], true);
  // Below 0, and between 0 and the smallest temperature that keeps the logits finite, stays an error.
  EXPECT_EQ(run(prompt + " --temperature -1").err,
            "minigen: error: --temperature must be >= 0 (0 is greedy decoding), got -1 (0 or --greedy takes the "
            "argmax)\n");
  EXPECT_EQ(run(prompt + " --temperature 0.001").err,
            "minigen: error: --temperature must be at least 0.01 (smaller ones overflow the logits), got 0.001 (0 or "
            "--greedy takes the argmax)\n");
}

TEST(CliNames, ShippedModelsByNameFromAnyFolder) {
  const fs::path before = fs::current_path();
  fs::current_path("/");
  const RunResult info = run("info minigen-tiny-base");
  const RunResult tokens = run("tokenize -m minigen-tiny-sft 'In the beginning'");
  const RunResult typo = run("generate -m minigen-tiny-sfft -p hi");
  fs::current_path(before);
  ASSERT_EQ(info.exit_code, 0) << info.err;
  EXPECT_NE(info.out.find("minigen-tiny-base"), std::string::npos) << info.out;
  ASSERT_EQ(tokens.exit_code, 0) << tokens.err;
  EXPECT_EQ(typo.err,
            "minigen: error: model not found: minigen-tiny-sfft (did you mean the shipped model "
            "'minigen-tiny-sft'?)\n");
}

}  // namespace
}  // namespace minigen
