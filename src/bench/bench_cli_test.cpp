// `minigen bench` through the binary: the --quick JSON on the shipped model, and bad flags ending in one error line.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "cli/run_binary_test_util.h"
#include "ops/cpu_kernel_switch.h"

namespace minigen {
namespace {

namespace fs = std::filesystem;

using testing::RunResult;

RunResult run_minigen(const std::string& arguments, const std::string& environment = "") {
  const fs::path directory = fs::temp_directory_path() / ("minigen_bench_cli_" + std::to_string(::getpid()));
  testing::RunOptions options;
  options.environment = environment;
  RunResult result = testing::run_minigen(arguments, directory, options);
  fs::remove_all(directory);
  return result;
}

// MINIGEN_SIMD runs a lower target's kernels (how the AVX2 numbers are measured on an AVX-512 machine): the report
// says which ran, and the peak is that target's instruction. Every machine minigen targets has AVX2.
TEST(BenchCli, MinigenSimdChoosesALowerTarget) {
  const RunResult avx2 =
      run_minigen("bench --quick -p 16 -n 4 -b 1 --threads 1 -r 1 --weights f32,q8,bf16 --json", "MINIGEN_SIMD=avx2");
  ASSERT_EQ(avx2.exit_code, 0) << avx2.err;
  const auto json = nlohmann::json::parse(avx2.out);
  EXPECT_EQ(json["system"]["simd_target"], "AVX2");
  EXPECT_NE(json["results"][0]["compute_peak"]["instruction"].get<std::string>().find("(AVX2)"), std::string::npos);
  EXPECT_NE(json["results"][1]["compute_peak"]["instruction"].get<std::string>().find("vpmaddwd"), std::string::npos);
  // The BF16 kernel goes with the AVX-512 target: bf16 runs the AVX2 pair kernel, on fp32 FMAs.
  EXPECT_EQ(json["results"][2]["compute_peak"]["instruction"], "fp32 FMA, 8 lanes (AVX2)");
  // avxvnni: the AVX2 target with the 256-bit VNNI kernel, as an Alder Lake runs it — or one error line on a CPU
  // without AVX-VNNI.
  const RunResult vnni =
      run_minigen("bench --quick -p 16 -n 4 -b 1 --threads 1 -r 1 --weights q8,q4 --json", "MINIGEN_SIMD=avxvnni");
  if (cpu_has(CpuExtension::kAvxVnni)) {
    ASSERT_EQ(vnni.exit_code, 0) << vnni.err;
    const auto vnni_json = nlohmann::json::parse(vnni.out);
    EXPECT_EQ(vnni_json["system"]["simd_target"], "AVX2");
    EXPECT_EQ(vnni_json["results"][0]["compute_peak"]["instruction"], "vpdpwssd int16 pairs, 256-bit (AVX-VNNI)");
    EXPECT_EQ(vnni_json["results"][1]["compute_peak"]["instruction"], "vpdpbusd int8 quads, 256-bit (AVX-VNNI)");
  } else {
    EXPECT_EQ(vnni.exit_code, 1);
    EXPECT_EQ(vnni.err, "minigen: error: MINIGEN_SIMD=avxvnni: this CPU has no AVX-VNNI\n");
  }
  const RunResult unknown = run_minigen("bench --quick", "MINIGEN_SIMD=avx1024");
  EXPECT_EQ(unknown.exit_code, 1);
  EXPECT_EQ(unknown.err,
            "minigen: error: MINIGEN_SIMD='avx1024' is not known (expected best, avxvnni, avx2 or scalar)\n");
}

TEST(BenchCli, QuickJsonOnTheShippedModelHasEveryNumber) {
  const RunResult result = run_minigen("bench --quick -p 16 -n 8 -b 1,2 --threads 1 --json");
  ASSERT_EQ(result.exit_code, 0) << result.err;
  const auto json = nlohmann::json::parse(result.out);
  for (const char* key : {"system", "model", "settings", "bandwidth", "results", "bf16_drift", "elapsed_s"}) {
    EXPECT_TRUE(json.contains(key)) << key;
  }
  EXPECT_FALSE(json["system"]["simd_target"].get<std::string>().empty());
  EXPECT_GT(json["system"]["cores"].get<int>(), 0);
  EXPECT_EQ(json["model"]["family"], "tiny");
  EXPECT_GT(json["model"]["parameters"].get<long long>(), 0);
  EXPECT_EQ(json["settings"]["repetitions"], 2);

  ASSERT_EQ(json["results"].size(), 1u);
  const auto& configuration = json["results"][0];
  EXPECT_EQ(configuration["weights"], "f32");
  EXPECT_EQ(configuration["threads"], 1);
  EXPECT_GT(configuration["weight_bytes"].get<double>(), 0);
  std::vector<std::string> names;
  for (const auto& test : configuration["tests"]) {
    names.push_back(test["name"]);
    EXPECT_GT(test["time_ms"]["mean"].get<double>(), 0) << test["name"];
    EXPECT_EQ(test["time_ms"]["samples"].size(), 2u) << test["name"];
    if (test["name"] != "ttft") {
      EXPECT_GT(test["tokens_per_second"]["mean"].get<double>(), 0) << test["name"];
    }
  }
  EXPECT_EQ(names, (std::vector<std::string>{"pp16", "tg8", "b1 decode", "b2 decode", "ttft"}));
  EXPECT_GT(configuration["tests"][3]["speedup_vs_batch1"].get<double>(), 0);
  EXPECT_GT(configuration["bound"]["bound_tokens_per_second"].get<double>(), 0);
  EXPECT_GT(configuration["bound"]["fraction_of_bound"].get<double>(), 0);
  // The roofline: every test but none against a bound, the one its resource sets, with the fraction reached.
  EXPECT_GT(configuration["compute_peak"]["ops_per_second"].get<double>(), 0);
  // The batch tests are bound by whichever takes longer on this build and machine (an unoptimised sanitizer build
  // measures a low compute peak, so even one row can come out compute-bound there).
  const std::vector<std::string> resources = {"compute", "memory bandwidth", "", "", "compute"};
  for (std::size_t i = 0; i < resources.size(); ++i) {
    const auto& test = configuration["tests"][i];
    if (resources[i].empty()) {  // b1 and b2 decode
      EXPECT_TRUE(test["bound"]["resource"] == "compute" || test["bound"]["resource"] == "memory bandwidth") << test;
    } else {
      EXPECT_EQ(test["bound"]["resource"], resources[i]) << test;
    }
    EXPECT_GT(test["bound"]["fraction"].get<double>(), 0) << test;
    EXPECT_NEAR(test["bound"]["fraction"].get<double>(),
                test["bound"]["time_ms"].get<double>() / test["time_ms"]["mean"].get<double>(), 1e-12);
  }
  ASSERT_GE(json["bandwidth"].size(), 2u);  // the DRAM buffer and the cache-sized one
  for (const auto& measured : json["bandwidth"]) {
    EXPECT_GT(measured["bytes_per_second"].get<double>(), 0);
    EXPECT_EQ(measured["checksum"], measured["expected_checksum"]);
  }
}

// The LoRA tests in the JSON: each with the run it is measured against, the fraction reached and the target.
TEST(BenchCli, LoraRankAddsTheAdapterTestsToTheJson) {
  const RunResult result = run_minigen("bench --quick -p 16 -n 4 -b 1 --threads 1 -r 1 --lora-rank 4 --json");
  ASSERT_EQ(result.exit_code, 0) << result.err;
  const auto json = nlohmann::json::parse(result.out);
  EXPECT_EQ(json["settings"]["lora_rank"], 4);
  EXPECT_EQ(json["lora"]["source"], "random");
  EXPECT_EQ(json["lora"]["adapters"], 4);
  EXPECT_EQ(json["lora"]["parameters_per_adapter"], 16384);  // 4 layers · q_proj, o_proj · 4 · (256 + 256)
  const auto& tests = json["results"][0]["tests"];
  ASSERT_GE(tests.size(), 2u);
  const auto& decode = tests[tests.size() - 2];
  const auto& batch = tests.back();
  EXPECT_EQ(decode["name"], "tg4 lora r4");
  EXPECT_EQ(decode["lora"]["base_test"], "tg4");
  EXPECT_EQ(decode["lora"]["target_fraction"], 0.9);
  EXPECT_GT(decode["lora"]["fraction_of_base"].get<double>(), 0);
  EXPECT_EQ(batch["name"], "b32 4 adapters");
  EXPECT_EQ(batch["lora"]["base_test"], "b32 decode");
  EXPECT_EQ(batch["lora"]["target_fraction"], 0.85);
  EXPECT_GT(batch["lora"]["fraction_of_base"].get<double>(), 0);
  EXPECT_GT(batch["lora"]["mixed_over_separate"].get<double>(), 0);
  EXPECT_TRUE(batch["lora"]["mixed_equals_separate"].get<bool>());
  EXPECT_GT(batch["lora"]["rows_differing_from_base"].get<int>(), 0);
}

// --one-shot: `minigen generate` as a fresh process beside the warm run, each ratio with what it is measured against;
// the fresh process's greedy tokens are the warm run's and the bare decode's.
TEST(BenchCli, OneShotComparesAFreshProcessWithTheWarmRun) {
  const std::string text = std::string(MINIGEN_SOURCE_DIR) + "/examples/genesis-183.txt";
  const RunResult result = run_minigen("bench --quick -p 16 -n 4 -b 1 --threads 1 -r 2 --one-shot " + text + " --json");
  ASSERT_EQ(result.exit_code, 0) << result.err;
  const auto json = nlohmann::json::parse(result.out);
  const auto& tests = json["results"][0]["tests"];
  const auto named = [&](const std::string& name) {
    const auto found = std::find_if(tests.begin(), tests.end(), [&](const auto& test) { return test["name"] == name; });
    EXPECT_NE(found, tests.end()) << name;
    return found == tests.end() ? nlohmann::json() : *found;
  };
  const auto ttft = named("one-shot ttft");
  const auto itl = named("one-shot itl");
  const auto tg = named("tg4");
  ASSERT_FALSE(ttft.is_null() || itl.is_null() || tg.is_null());
  for (const auto* test : {&ttft, &itl}) {
    const auto& one_shot = (*test)["one_shot"];
    EXPECT_EQ(one_shot["prompt_tokens"], 183);  // examples/genesis-183.txt as generate -f encodes it
    EXPECT_EQ(one_shot["new_tokens"], 4);
    EXPECT_TRUE(one_shot["tokens_identical"].get<bool>());
    EXPECT_EQ((*test)["time_ms"]["samples"].size(), 2u);
    EXPECT_DOUBLE_EQ(one_shot["ratio"].get<double>(),
                     (*test)["time_ms"]["mean"].get<double>() / one_shot["against_ms"]["mean"].get<double>());
  }
  EXPECT_EQ(ttft["one_shot"]["against"], "warm ttft");
  EXPECT_EQ(ttft["one_shot"]["target_ratio"], 1.5);
  EXPECT_GT(ttft["one_shot"]["load_ms"]["mean"].get<double>(), 0);
  // The yardstick decodes the same positions (tokens_identical above includes its tokens); tg's step is beside it.
  EXPECT_EQ(itl["one_shot"]["against"], "decode step after the prompt");
  EXPECT_EQ(itl["one_shot"]["target_ratio"], 1.2);
  EXPECT_EQ(itl["one_shot"]["against_ms"]["samples"].size(), 2u);
  EXPECT_EQ(itl["one_shot"]["tg4_step_ms"]["mean"], tg["time_ms"]["mean"]);
  EXPECT_GT(itl["one_shot"]["warm_itl_ms"]["mean"].get<double>(), 0);
}

// One "minigen: error: …" line naming the problem, exit code 1.
void expect_one_error_line(const std::string& arguments, const std::string& needle) {
  const RunResult result = run_minigen(arguments);
  EXPECT_EQ(result.exit_code, 1) << arguments;
  EXPECT_TRUE(result.out.empty()) << arguments;
  EXPECT_EQ(result.err.rfind("minigen: error: ", 0), 0u) << result.err;
  EXPECT_EQ(std::count(result.err.begin(), result.err.end(), '\n'), 1) << result.err;
  EXPECT_NE(result.err.find(needle), std::string::npos) << arguments << "\nstderr: " << result.err;
}

TEST(BenchCli, BadFlagsGiveOneErrorLine) {
  expect_one_error_line("bench --quick -b 1,x", "-b/--batch");
  expect_one_error_line("bench --quick --threads 0", "--threads");
  expect_one_error_line("bench --quick --weights f32,f8", "--weights");
  expect_one_error_line("bench --quick -r 1.5", "--repetitions");
  expect_one_error_line("bench --quick -p 32000 -n 1000", "context");
  expect_one_error_line("bench --quick -m random:huge", "huge");
  expect_one_error_line("bench --quick -m /nonexistent/model", "not found");
  expect_one_error_line("bench --quick --lora-rank 0", "--lora-rank");
  expect_one_error_line("bench --quick --lora-rank 300", "--lora-rank 300 exceeds the width");
  expect_one_error_line("bench --quick --lora-rank 4 --lora x.pth", "--lora-rank and --lora");
  expect_one_error_line("bench --quick --lora /nonexistent/adapter.pth", "/nonexistent/adapter.pth");
  expect_one_error_line("bench --quick -m random:tiny --one-shot x.txt", "needs a model file with a tokenizer");
  expect_one_error_line("bench --quick --one-shot /nonexistent/prompt.txt", "/nonexistent/prompt.txt");
}

}  // namespace
}  // namespace minigen
