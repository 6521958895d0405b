#pragma once
// The fixture of the end-to-end CLI tests (cli_test.cpp, cli_output_test.cpp): the minigen binary run in a scratch
// folder holding a random tiny model made once per suite.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "checkpoint/model_loader.h"
#include "cli/run_binary_test_util.h"

namespace minigen::testing {

class Cli : public ::testing::Test {
 protected:
  static std::filesystem::path work_dir() {
    return std::filesystem::temp_directory_path() / ("minigen_cli_test_" + std::to_string(::getpid()));
  }
  static std::filesystem::path tiny_model() { return work_dir() / "tiny"; }

  static void SetUpTestSuite() {
    std::filesystem::create_directories(work_dir());
    const RunResult made = run("init-random --family tiny --seed 7 --out " + tiny_model().string());
    ASSERT_EQ(made.exit_code, 0) << made.err;
  }
  static void TearDownTestSuite() { std::filesystem::remove_all(work_dir()); }

  static RunResult run(const std::string& arguments) { return run_minigen(arguments, work_dir()); }

  // A bad input must exit non-zero (not by a signal) with one "minigen: error: …" line that mentions `needle`.
  static void expect_clear_error(const std::string& arguments, const std::string& needle) {
    const RunResult result = run(arguments);
    EXPECT_NE(result.exit_code, 0) << arguments;
    EXPECT_LT(result.exit_code, 128) << "crashed: " << arguments;
    EXPECT_NE(result.err.find(needle), std::string::npos) << arguments << "\nstderr: " << result.err;
  }

  // A text whose base-model prompt (bos + text) is exactly `length` tokens.
  static std::filesystem::path prompt_file_of_length(int length) {
    const auto tokenizer = load_tokenizer(tiny_model());
    std::string text;
    const std::string words[] = {"In the beginning ", "God created ", "the heaven ", "and the earth. ", "And "};
    for (int i = 0; static_cast<int>(tokenizer->encode(text).size()) + 1 < length; ++i) text += words[i % 5];
    while (static_cast<int>(tokenizer->encode(text).size()) + 1 > length) text.pop_back();
    EXPECT_EQ(static_cast<int>(tokenizer->encode(text).size()) + 1, length);
    const std::filesystem::path path = work_dir() / ("prompt_" + std::to_string(length) + ".txt");
    std::ofstream(path) << text;
    return path;
  }
};

}  // namespace minigen::testing
