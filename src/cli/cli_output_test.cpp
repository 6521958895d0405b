// Issue 46 items 4 and 5 at the command line: every command that writes into an output path refuses to replace
// what is there unless forced, and every float flag refuses values below the smallest normal float.
#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <string>

#include "cli/cli_fixture_test_util.h"
#include "cli/run_binary_test_util.h"

namespace minigen {
namespace {

namespace fs = std::filesystem;

using testing::Cli;
using testing::read_text_file;
using testing::RunResult;

// Every file in `directory` (not recursive) by name, with its bytes.
std::map<std::string, std::string> files_in(const fs::path& directory) {
  std::map<std::string, std::string> files;
  for (const auto& entry : fs::directory_iterator(directory)) {
    files[entry.path().filename().string()] = read_text_file(entry.path());
  }
  return files;
}

// Issue 46 item 4: init-random onto a trained model's folder replaced its weights, tokenizer train onto it replaced
// its tokenizer.json, export overwrote an existing .gguf, all silently. Every command that writes into an output
// path now refuses (one error line, exit 1, the files byte-identical), as quantize and merge-lora did, and replaces
// with --force.
TEST_F(Cli, WritingCommandsRefuseToReplaceWhatIsThereUnlessForced) {
  const fs::path held = work_dir() / "held-model";
  const fs::path gguf = work_dir() / "held.gguf";
  const fs::path lab_out = work_dir() / "held-lab";
  fs::remove_all(held);
  fs::remove_all(lab_out);
  ASSERT_EQ(run("init-random --family tiny --seed 7 --out " + held.string()).exit_code, 0);
  std::ofstream(gguf, std::ios::binary) << "an earlier export";
  fs::create_directories(lab_out);
  std::ofstream(lab_out / "report.md") << "an earlier report\n";
  const fs::path text = work_dir() / "tokenizer-text.txt";
  {
    std::ofstream out(text);
    for (int i = 0; i < 50; ++i) out << "the river runs to the sea and the sea is wide\n";
  }
  const std::string lora = (fs::path(MINIGEN_TEST_DATA_DIR) / "lora" / "tiny_r4.pth").string();
  const std::string model = tiny_model().string();
  const std::string model_files =
      " already holds a model (config.json, model.safetensors, tokenizer.json, "
      "tokenizer_config.json); choose an empty or new directory, or add --force to "
      "replace it\n";
  const std::string replace_file = " already exists; choose another path, or add --force to replace it\n";
  const std::vector<std::pair<std::string, std::string>> refused = {
      {"init-random --family tiny --seed 8 --out " + held.string(), held.string() + model_files},
      {"tokenizer train --vocab 300 --out " + held.string() + " " + text.string(),
       held.string() +
           " already holds a tokenizer (tokenizer.json, tokenizer_config.json); choose an empty or new directory, or "
           "add --force to replace it\n"},
      {"quantize " + model + " " + held.string() + " --weights q8", held.string() + model_files},
      {"merge-lora " + model + " " + lora + " " + held.string(), held.string() + model_files},
      {"export gguf " + model + " " + gguf.string(), gguf.string() + replace_file},
      {"export lora " + model + " " + lora + " " + gguf.string(), gguf.string() + replace_file},
      {"lab --quick --out " + lab_out.string(),
       lab_out.string() +
           " already holds a lab report (report.md); choose an empty or new directory, or add --force to replace it\n"},
  };
  const auto model_before = files_in(held);
  const std::string gguf_before = read_text_file(gguf);
  for (const auto& [command, message] : refused) {
    const RunResult result = run(command);
    EXPECT_EQ(result.exit_code, 1) << command;
    EXPECT_EQ(result.err, "minigen: error: " + message) << command;
    EXPECT_EQ(files_in(held), model_before) << command;
    EXPECT_EQ(read_text_file(gguf), gguf_before) << command;
    EXPECT_EQ(files_in(lab_out), (std::map<std::string, std::string>{{"report.md", "an earlier report\n"}})) << command;
  }

  // --force replaces: random weights of seed 8, byte for byte what a new folder gets.
  const fs::path seed_8 = work_dir() / "seed-8";
  fs::remove_all(seed_8);
  ASSERT_EQ(run("init-random --family tiny --seed 8 --out " + seed_8.string()).exit_code, 0);
  RunResult forced = run("init-random --family tiny --seed 8 --force --out " + held.string());
  ASSERT_EQ(forced.exit_code, 0) << forced.err;
  EXPECT_EQ(files_in(held), files_in(seed_8));
  EXPECT_NE(files_in(held), model_before);
  // The tokenizer alone is replaced; the weights stay.
  const std::string weights = read_text_file(held / "model.safetensors");
  const std::string tokenizer = read_text_file(held / "tokenizer.json");
  forced = run("tokenizer train --vocab 300 --force --out " + held.string() + " " + text.string());
  ASSERT_EQ(forced.exit_code, 0) << forced.err;
  EXPECT_NE(read_text_file(held / "tokenizer.json"), tokenizer);
  EXPECT_EQ(read_text_file(held / "model.safetensors"), weights);
  // quantize and merge-lora: a model written from tiny's weights, which runs.
  for (const std::string& command :
       {"quantize " + model + " " + held.string() + " --weights q8 --force",
        "merge-lora " + model + " " + lora + " " + held.string() + " --dtype f32 --force"}) {
    forced = run(command);
    ASSERT_EQ(forced.exit_code, 0) << command << "\n" << forced.err;
    EXPECT_NE(read_text_file(held / "model.safetensors"), weights) << command;
    EXPECT_EQ(read_text_file(held / "tokenizer.json"), read_text_file(tiny_model() / "tokenizer.json")) << command;
    EXPECT_EQ(run("generate -m " + held.string() + " -p hi -n 2 --greedy").exit_code, 0) << command;
  }
  for (const std::string& command : {"export gguf " + model + " " + gguf.string() + " --force",
                                     "export lora " + model + " " + lora + " " + gguf.string() + " --force"}) {
    forced = run(command);
    ASSERT_EQ(forced.exit_code, 0) << command << "\n" << forced.err;
    EXPECT_EQ(read_text_file(gguf).substr(0, 4), "GGUF") << command;
  }
  // The --help of each names the flag.
  for (const char* command :
       {"init-random", "tokenizer train", "quantize", "merge-lora", "export gguf", "export lora", "lab"}) {
    EXPECT_NE(run(std::string(command) + " --help").out.find("--force"), std::string::npos) << command;
  }
}

// Issue 46 item 5: --temperature 1e-320 was "not a finite number", --min-p 1e-50 ran as 0 and --top-p 1e-50 said
// "got 0". Every float flag now reads the number as written and refuses a non-zero value below the smallest normal
// float with its own range (sampling_float, the rule of the HTTP API and Python too).
TEST_F(Cli, FloatFlagsRefuseValuesBelowTheSmallestNormalFloat) {
  const std::string generate = "generate -m " + tiny_model().string() + " -p hi -n 2";
  const std::string not_rounded =
      " must be 0 or at least 1.1754944e-38 in magnitude (the smallest normal float; smaller ones are not rounded to "
      "0), got ";
  for (const auto& [tiny, got] : {std::pair{"1e-320", "1e-320"}, std::pair{"4.9e-324", "5e-324"}}) {
    const std::pair<std::string, std::string> cases[] = {
        {"--temperature", "--temperature must be at least 0.01 (smaller ones overflow the logits), got " +
                              std::string(got) + " (0 or --greedy takes the argmax)"},
        {"--top-p",
         "--top-p must be in (0, 1] and at least 1.1754944e-38 (the smallest normal float), got " + std::string(got)},
        {"--min-p", "--min-p" + not_rounded + got},
        {"--repetition-penalty",
         "--repetition-penalty must be in [0.01, 100] (1 turns it off), got " + std::string(got)},
        {"--frequency-penalty", "--frequency-penalty" + not_rounded + got},
        {"--presence-penalty", "--presence-penalty" + not_rounded + got},
    };
    for (const auto& [flag, message] : cases) {
      const RunResult result = run(generate + " " + flag + " " + tiny);
      EXPECT_EQ(result.exit_code, 1) << flag << " " << tiny;
      EXPECT_EQ(result.err, "minigen: error: " + message + "\n") << flag << " " << tiny;
    }
    const RunResult bias = run(generate + " --logit-bias 5=" + tiny);
    EXPECT_EQ(bias.err, "minigen: error: --logit-bias of token 5" + not_rounded + got + "\n");
  }
  // 0 is still 0: greedy decoding, and min-p off.
  EXPECT_EQ(run(generate + " --temperature 0 --min-p 0").exit_code, 0);
  // Too small even for a double: strtod reads it as 0, and it is refused all the same, quoted as written.
  EXPECT_EQ(run(generate + " --temperature 1e-400").err,
            "minigen: error: --temperature must be at least 0.01 (smaller ones overflow the logits), got 1e-400 (0 "
            "or --greedy takes the argmax)\n");
  EXPECT_EQ(run(generate + " --min-p 1e-400").err, "minigen: error: --min-p" + not_rounded + "1e-400\n");
}

}  // namespace
}  // namespace minigen
