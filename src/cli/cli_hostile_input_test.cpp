// Hostile input through the minigen binary: files that never end (FIFOs, /dev/zero) or are too large, configs and
// flags that ask for absurd memory, and every kind of argument-parser error. Each must end with exactly one
// "minigen: error: …" line and exit code 1 — quickly, and where memory is the point, inside an address-space limit
// far below what the input asked for.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "cli/run_binary_test_util.h"
#include "core/memory_limit_test_util.h"
#include "model/io/torch_pth_test_writer.h"

namespace minigen {
namespace {

namespace fs = std::filesystem;
using testing::RunOptions;
using testing::RunResult;

// 1 GiB: minigen needs about 300 MB of address space for the tiny model; the inputs below asked for 2–20 GB.
constexpr long kAddressSpaceKib = 1 << 20;

class CliHostileInput : public ::testing::Test {
 protected:
  static fs::path work_dir() {
    return fs::temp_directory_path() / ("minigen_cli_hostile_test_" + std::to_string(::getpid()));
  }
  static fs::path tiny_model() { return work_dir() / "tiny"; }

  static void SetUpTestSuite() {
    fs::create_directories(work_dir());
    const RunResult made = run("init-random --family tiny --seed 7 --out " + tiny_model().string());
    ASSERT_EQ(made.exit_code, 0) << made.err;
  }
  static void TearDownTestSuite() { fs::remove_all(work_dir()); }

  static RunResult run(const std::string& arguments, RunOptions options = {}) {
    if (options.timeout_seconds == 0) options.timeout_seconds = 60;
    return testing::run_minigen(arguments, work_dir(), options);
  }

  // Exactly one line on stderr, "minigen: error: " + `expected` (or containing it), and exit code 1.
  static void expect_error(const std::string& arguments, const std::string& expected, const RunOptions& options = {},
                           bool exact = false) {
    const RunResult result = run(arguments, options);
    EXPECT_EQ(result.exit_code, 1) << arguments << "\nstderr: " << result.err;
    const std::string prefix = "minigen: error: ";
    ASSERT_TRUE(result.err.starts_with(prefix)) << arguments << "\nstderr: " << result.err;
    EXPECT_EQ(result.err.find('\n'), result.err.size() - 1) << "more than one line: " << result.err;
    const std::string message = result.err.substr(prefix.size(), result.err.size() - prefix.size() - 1);
    if (exact) {
      EXPECT_EQ(message, expected) << arguments;
    } else {
      EXPECT_NE(message.find(expected), std::string::npos) << arguments << "\nmessage: " << message;
    }
  }

  static RunOptions memory_limited() {
    RunOptions options;
    if (testing::kAddressSpaceLimitWorks) options.address_space_kib = kAddressSpaceKib;
    return options;
  }

  // A fresh copy of the tiny model in which `file` is replaced by a FIFO (or a symlink to /dev/zero).
  static fs::path model_with(const std::string& file, const std::string& kind) {
    const fs::path copy = work_dir() / (kind + "_" + file);
    fs::remove_all(copy);
    fs::copy(tiny_model(), copy);
    fs::remove(copy / file);
    if (kind == "fifo") {
      EXPECT_EQ(::mkfifo((copy / file).c_str(), 0600), 0);
    } else {
      fs::create_symlink("/dev/zero", copy / file);
    }
    return copy;
  }

  static fs::path fifo(const std::string& name) {
    const fs::path path = work_dir() / name;
    fs::remove(path);
    EXPECT_EQ(::mkfifo(path.c_str(), 0600), 0);
    return path;
  }
};

TEST_F(CliHostileInput, FifosAndDevicesAreRefusedAtOnceWhereverAFileIsRead) {
  for (const std::string kind : {"fifo", "zero"}) {
    const std::string what = kind == "fifo" ? "a FIFO" : "a character device";
    for (const std::string file : {"config.json", "tokenizer.json", "tokenizer_config.json", "model.safetensors"}) {
      const fs::path model = model_with(file, kind);
      expect_error("generate -m " + model.string() + " -p hi -n 2",
                   (model / file).string() + " is not a regular file (it is " + what + ")");
    }
  }
  const std::string model = " -m " + tiny_model().string();
  expect_error("generate" + model + " -f " + fifo("prompt.txt").string(),
               "-f/--file: " + (work_dir() / "prompt.txt").string() + " is not a regular file (it is a FIFO)", {},
               true);
  expect_error("generate" + model + " -f /dev/zero", "/dev/zero is not a regular file");
  expect_error("generate -m " + fifo("model.pth").string() + " --tokenizer " + tiny_model().string() + " -p hi",
               "model.pth is not a regular file (it is a FIFO)");
  expect_error("tokenize --tokenizer /dev/zero hi", "/dev/zero is not a regular file (it is a character device)");
  expect_error("tokenize" + model + " --jsonl " + fifo("texts.jsonl").string(), "texts.jsonl is not a regular");
  expect_error(
      "tokenizer train --vocab 300 --out " + (work_dir() / "trained").string() + " " + fifo("corpus.txt").string(),
      "corpus.txt is not a regular file (it is a FIFO)");
  EXPECT_FALSE(fs::exists(work_dir() / "trained"));

  // The chat's messages come from stdin; endless input without a newline is one error, not unbounded memory.
  // (chat greets on stderr first, so only the last line is the error.)
  RunOptions zero_stdin = memory_limited();
  zero_stdin.stdin_path = "/dev/zero";
  const RunResult chat = run("chat" + model, zero_stdin);
  EXPECT_EQ(chat.exit_code, 1) << chat.err;
  EXPECT_TRUE(chat.err.ends_with("\nminigen: error: a chat message is longer than 16 MiB\n")) << chat.err;
}

TEST_F(CliHostileInput, FilesLargerThanTheirCapAreRefusedBeforeReading) {
  const fs::path prompt = work_dir() / "huge_prompt.txt";
  std::ofstream(prompt).close();
  fs::resize_file(prompt, (16 << 20) + 1);  // sparse: costs no disk
  expect_error("generate -m " + tiny_model().string() + " -f " + prompt.string(),
               "-f/--file: " + prompt.string() + " is 16777217 bytes; a prompt file may be at most 16 MiB", {}, true);

  const fs::path model = work_dir() / "huge_config";
  fs::remove_all(model);
  fs::copy(tiny_model(), model);
  fs::resize_file(model / "config.json", 17 << 20);
  expect_error("generate -m " + model.string() + " -p hi",
               (model / "config.json").string() + " is 17825792 bytes; a config.json may be at most 16 MiB", {}, true);
  fs::resize_file(model / "tokenizer.json", 65 << 20);
  expect_error("tokenize --tokenizer " + model.string() + " hi",
               "tokenizer.json is 68157440 bytes; a tokenizer.json may be at most 64 MiB");
}

// A config.json may declare any context up to 2^31 − 1 tokens; nothing is sized by it, so a short generation runs
// in the same small memory as with the real 32,768 (it used to allocate 8.4 GB of RoPE table for 2^26).
TEST_F(CliHostileInput, HugeDeclaredContextLoadsAndGeneratesInSmallMemory) {
  for (const long long context : {1LL << 26, 2147483647LL}) {
    const fs::path model = work_dir() / ("context_" + std::to_string(context));
    fs::remove_all(model);
    fs::copy(tiny_model(), model);
    auto config = nlohmann::json::parse(testing::read_text_file(model / "config.json"));
    config["max_position_embeddings"] = context;
    std::ofstream(model / "config.json") << config.dump();
    const RunResult result =
        run("generate -m " + model.string() + " -p 'In the beginning' -n 8 --ignore-eos --json", memory_limited());
    ASSERT_EQ(result.exit_code, 0) << result.err;
    const auto json = nlohmann::json::parse(result.out);
    EXPECT_EQ(json["sequences"][0]["token_ids"].size(), 8u);
    EXPECT_EQ(json["kv_cache_bytes_allocated"], 16 * 2048) << json.dump();  // 4 + 8 tokens: one 16-token block

    const RunResult info = run("info " + model.string() + " --json", memory_limited());
    ASSERT_EQ(info.exit_code, 0) << info.err;
    EXPECT_EQ(nlohmann::json::parse(info.out)["context"], context);

    // What a run would need if it went to the end is refused up front, naming the flags to lower.
    expect_error("generate -m " + model.string() + " -p hi -n 2000000000 --num-return-sequences 4",
                 "lower --num-return-sequences or -n/--max-new-tokens", memory_limited());
  }
}

TEST_F(CliHostileInput, LyingConfigsAreOneClearError) {
  const fs::path model = work_dir() / "lying_config";
  fs::remove_all(model);
  fs::copy(tiny_model(), model);
  const auto original = nlohmann::json::parse(testing::read_text_file(model / "config.json"));
  const std::vector<std::pair<std::string, long long>> lies = {
      {"vocab_size", 1LL << 30},      {"hidden_size", 1 << 20},       {"num_hidden_layers", 100000},
      {"num_attention_heads", 65536}, {"intermediate_size", 1 << 30}, {"max_position_embeddings", 1LL << 31},
  };
  for (const auto& [field, value] : lies) {
    auto config = original;
    config[field] = value;
    std::ofstream(model / "config.json") << config.dump();
    expect_error("generate -m " + model.string() + " -p hi -n 2", field, memory_limited());
  }
}

TEST_F(CliHostileInput, RowsAndCountsHaveBounds) {
  const std::string model = " -m " + tiny_model().string();
  expect_error("generate" + model + " -p hi --num-return-sequences 1000000",
               "--num-return-sequences: 1000000 is not an integer in [1, 256] (see `minigen generate --help`)", {},
               true);
  expect_error("generate" + model + " -p hi -n 2147483648",
               "--max-new-tokens: 2147483648 is not an integer in [1, 2147483647] (see `minigen generate --help`)", {},
               true);
  expect_error("chat" + model + " -n 0", "--max-new-tokens: 0 is not an integer in [1, 2147483647]");
  expect_error("generate" + model + " -p hi --threads 5000", "--threads: 5000 is not an integer in [0, 1024]");
  expect_error("init-random --family minimind2 --layers 1000 --out " + (work_dir() / "never").string(),
               "--layers: 1000 is not an integer in [1, 64]");
  expect_error("bench" + model + " -b 1000", "-b/--batch takes whole numbers from 1 to 256, got '1000'");
  // 256 rows are allowed, but not with the whole context each and no cache: that is an estimate of terabytes.
  expect_error("generate" + model + " -p hi -n 32000 --no-cache --num-return-sequences 256",
               "lower --num-return-sequences or -n/--max-new-tokens", memory_limited());
}

// --seed -1 asks for a random seed, as llama.cpp's does: the run names the seed it drew (stderr and --json), and that
// seed repeats the run. Any other value outside [0, 2^64 − 1] is one error.
TEST_F(CliHostileInput, SeedsAreIntegersFromZeroTo2To64Minus1OrMinus1ForARandomOne) {
  const std::string model = " -m " + tiny_model().string();
  for (const std::string seed : {"-2", "18446744073709551616", "1e23", "0x10", "1.5", "", "seven", "-1.0"}) {
    expect_error("generate" + model + " -p hi -n 1 --seed '" + seed + "'",
                 "--seed: " + seed +
                     " is not an integer in [0, 18446744073709551615], or -1 for a random seed (see `minigen generate "
                     "--help`)",
                 {}, true);
  }
  expect_error("init-random --family tiny --seed -1 --out " + (work_dir() / "never").string(),
               "--seed: -1 is not an integer in [0, 18446744073709551615]");
  const RunResult largest = run("generate" + model + " -p hi -n 3 --seed 18446744073709551615 --json");
  ASSERT_EQ(largest.exit_code, 0) << largest.err;
  EXPECT_EQ(nlohmann::json::parse(largest.out)["settings"]["seed"], 18446744073709551615ULL);
  EXPECT_FALSE(fs::exists(work_dir() / "never"));

  const std::string sampled = "generate" + model + " -p 'In the beginning' -n 12 --ignore-eos --temperature 1 --json";
  const RunResult random = run(sampled + " --seed -1");
  ASSERT_EQ(random.exit_code, 0) << random.err;
  const auto drawn = nlohmann::json::parse(random.out);
  const uint64_t seed = drawn["settings"]["seed"].get<uint64_t>();
  EXPECT_NE(random.err.find("[minigen] --seed -1 drew seed " + std::to_string(seed) + "\n"), std::string::npos)
      << random.err;
  const RunResult again = run(sampled + " --seed " + std::to_string(seed));
  ASSERT_EQ(again.exit_code, 0) << again.err;
  EXPECT_EQ(nlohmann::json::parse(again.out)["sequences"], drawn["sequences"]);
  const RunResult other = run(sampled + " --seed -1");
  EXPECT_NE(nlohmann::json::parse(other.out)["settings"]["seed"], seed);
}

TEST_F(CliHostileInput, ArgumentParserErrorsAreOneLine) {
  const std::string model = " -m " + tiny_model().string();
  expect_error("generate" + model + " -p hi --no-such-flag",
               "unknown option --no-such-flag (see `minigen generate --help`)", {}, true);
  expect_error("generate" + model + " -p hi -n", "--max-new-tokens needs a value (see `minigen generate --help`)", {},
               true);
  expect_error("generate" + model + " -p hi -n abc",
               "--max-new-tokens: abc is not an integer in [1, 2147483647] (see `minigen generate --help`)", {}, true);
  expect_error("generate" + model + " -p hi --temperature warm",
               "--temperature: warm is not a finite number (see `minigen generate --help`)", {}, true);
  expect_error("generate" + model + " -p hi --top-p nan", "--top-p: nan is not a finite number");
  expect_error("generate" + model + " -p a --chat b",
               "--prompt and --chat cannot be used together (see `minigen generate --help`)", {}, true);
  expect_error("generate" + model + " -p hi --weights f8", "--weights");
  for (const std::string command : {"generate -p hi", "chat", "serve", "perplexity -f x", "info"}) {
    expect_error(command + model + " --kv-dtype fp8", "--kv-dtype");
  }
  expect_error("lab --kv-dtype fp8", "--kv-dtype");
  expect_error("bench --quick -m random:tiny --kv-dtype f32,fp8",
               "unknown --kv-dtype 'fp8' (expected f32, bf16, f16 or int8)", {}, true);

  expect_error("generate" + model + " -p hi stray", "unexpected argument stray (see `minigen generate --help`)", {},
               true);
  expect_error("init-random --out x", "--family is required (see `minigen init-random --help`)", {}, true);
  expect_error("bogus", "unknown command 'bogus'; the commands are generate, chat,");
  expect_error("", "give a command: generate, chat,");
  expect_error("tokenizer", "give a command: train (see `minigen tokenizer --help`)", {}, true);

  const RunResult help = run("generate --help");
  EXPECT_EQ(help.exit_code, 0);
  EXPECT_NE(help.out.find("--max-new-tokens"), std::string::npos);
  EXPECT_EQ(help.err, "");
}

TEST_F(CliHostileInput, ServeAndBenchServeFlagsAreOneLineErrors) {
  expect_error("serve --port 70000", "--port: 70000 is not an integer in [0, 65535] (see `minigen serve --help`)", {},
               true);
  expect_error("serve --drain-timeout -1", "--drain-timeout: -1 is not a number in [0, 3600]");
  expect_error("serve --request-timeout nan", "--request-timeout: nan is not a number in [0.1, 3600]");
  expect_error("serve --max-connections 1", "--max-connections: 1 is not an integer in [2, 100000]");
  expect_error("serve --kv-budget 12parsecs", "12parsecs");
  expect_error("bench-serve --seed 1e23", "--seed: 1e23 is not an integer in [0, 18446744073709551615]");
  expect_error("bench-serve --soak 1e9", "--soak: 1e9 is not a number in [0, 1440]");
  expect_error("bench-serve --concurrency 0", "--concurrency: 0 is not an integer in [1, 128]");
}

// Every output follows one rule: an existing target must be a regular file (rename() over a device node or a
// symlink replaced the node itself), a directory output must be a directory, any failure is one error line, exit 1,
// and nothing half-written is left behind.
TEST_F(CliHostileInput, OutputsThatAreNotRegularFilesAreRefusedAndFailuresLeaveNothing) {
  const std::string model = tiny_model().string();
  const fs::path target = work_dir() / "target.txt";
  std::ofstream(target) << "keep me";
  const fs::path link = work_dir() / "link.gguf";
  fs::remove(link);
  fs::create_symlink(target, link);
  expect_error(
      "export gguf " + model + " " + link.string(),
      link.string() + " exists and is not a regular file (it is a symbolic link); remove it or choose another path", {},
      true);
  EXPECT_TRUE(fs::is_symlink(link));
  EXPECT_EQ(testing::read_text_file(target), "keep me");
  const fs::path fifo_gguf = fifo("fifo.gguf");
  expect_error("export gguf " + model + " " + fifo_gguf.string(), "(it is a FIFO); remove it or choose another path");
  EXPECT_TRUE(fs::is_fifo(fifo_gguf));
  if (::geteuid() == 0) {  // only root may make a device node: /dev/full's, under a .gguf name
    const fs::path device = work_dir() / "devfull.gguf";
    fs::remove(device);
    ASSERT_EQ(::mknod(device.c_str(), S_IFCHR | 0600, makedev(1, 7)), 0);
    expect_error("export gguf " + model + " " + device.string(), "(it is a character device)");
    EXPECT_TRUE(fs::is_character_file(device));
  }

  for (const std::string& out : {target.string(), std::string("/dev/full")}) {
    expect_error("quantize " + model + " " + out + " --weights q8",
                 "OUT: " + out + " exists and is not a directory; choose a new or empty directory", {}, true);
    expect_error("tokenizer train --vocab 300 --out " + out + " " + target.string(), out + " exists and is not a");
    expect_error("init-random --family tiny --out " + out, out + " exists and is not a directory");
  }
  expect_error("lab --quick --out " + target.string(), "--out: " + target.string() + " exists and is not a directory");

  // A failure after the weights were written (tokenizer.json is a directory here) leaves no partial file.
  const fs::path blocked = work_dir() / "blocked";
  fs::remove_all(blocked);
  fs::create_directories(blocked / "tokenizer.json");
  expect_error("quantize " + model + " " + blocked.string() + " --weights q8",
               (blocked / "tokenizer.json").string() + " exists and is not a regular file (it is a directory)");
  std::vector<std::string> left;
  for (const auto& entry : fs::directory_iterator(blocked)) left.push_back(entry.path().filename().string());
  EXPECT_EQ(left, std::vector<std::string>{"tokenizer.json"});
  // An output that fails before its first file is written leaves no directory either.
  const fs::path fresh = work_dir() / "fresh" / "out";
  fs::remove_all(work_dir() / "fresh");
  fs::create_directories(work_dir() / "fresh");
  expect_error("init-random --family tiny --tokenizer " + (work_dir() / "fresh").string() + " --out " + fresh.string(),
               "has no tokenizer.json");
  EXPECT_FALSE(fs::exists(fresh));
}

// A GGUF carries its tokenizer: `quantize` of one writes it into the directory (it said "has no tokenizer.json"),
// and the q8 directory generates what the GGUF does with --weights q8.
TEST_F(CliHostileInput, QuantizingAGgufUsesTheTokenizerItCarries) {
  const fs::path gguf = work_dir() / "tiny.gguf";
  const RunResult exported = run("export gguf " + tiny_model().string() + " " + gguf.string());
  ASSERT_EQ(exported.exit_code, 0) << exported.err;
  const fs::path out = work_dir() / "tiny-q8-from-gguf";
  fs::remove_all(out);
  const RunResult quantized = run("quantize " + gguf.string() + " " + out.string() + " --weights q8");
  ASSERT_EQ(quantized.exit_code, 0) << quantized.err;
  EXPECT_TRUE(fs::exists(out / "tokenizer.json"));
  const std::string prompt = " -p 'In the beginning' -n 8 --greedy --ignore-eos --json";
  const RunResult from_directory = run("generate -m " + out.string() + prompt);
  const RunResult from_gguf = run("generate -m " + gguf.string() + " --weights q8" + prompt);
  ASSERT_EQ(from_directory.exit_code, 0) << from_directory.err;
  ASSERT_EQ(from_gguf.exit_code, 0) << from_gguf.err;
  EXPECT_EQ(nlohmann::json::parse(from_directory.out)["sequences"], nlohmann::json::parse(from_gguf.out)["sequences"]);
}

// The review's hostile .pth: 200 storages whose zip entries all point at one compressed MiB of zeros.
TEST_F(CliHostileInput, PthWithSharedEntriesIsRefusedInSmallMemory) {
  std::vector<testing::TestTensor> tensors;
  for (int i = 0; i < 200; ++i) {
    const std::string key = std::to_string(i);
    tensors.push_back({"tensor_" + key, DType::kF32, key, {0.0f}, 0, {1}, {1}, int64_t{1} << 18});
  }
  testing::ZipTestWriter zip;
  zip.add("archive/data.pkl", testing::state_dict_pickle(tensors));
  zip.add("archive/data/0", testing::Bytes(1 << 20, '\0'), /*deflate=*/true);
  for (int i = 1; i < 200; ++i) zip.add_alias("archive/data/" + std::to_string(i), 1);
  const fs::path path = work_dir() / "aliased.pth";
  testing::write_bytes(path, zip.finish());
  expect_error("generate -m " + path.string() + " --tokenizer " + tiny_model().string() + " -p hi",
               "entries 'archive/data/0' and 'archive/data/1' overlap", memory_limited());
}

// Issue 25 through the binary (the shipped chat model): a schema past the compile budget, one whose mask is over
// the step budget once generation reaches a string, and a --logit-bias that bans every token each end with one
// error line naming what is wrong (it used to run for minutes, or die in the softmax).
TEST_F(CliHostileInput, SchemasBeyondTheGrammarBudgetAndABiasThatBansEveryTokenAreOneErrorLine) {
  nlohmann::ordered_json values = nlohmann::ordered_json::array();
  nlohmann::ordered_json strings = nlohmann::ordered_json::array();
  for (int i = 0; i < 20000; ++i) values.push_back("value-" + std::to_string(i));
  for (int i = 0; i < 1000; ++i) strings.push_back({{"type", "string"}, {"maxLength", 100 + i}});
  const fs::path too_many = work_dir() / "enum20000.json";
  const fs::path too_ambiguous = work_dir() / "strings1000.json";
  std::ofstream(too_many) << nlohmann::ordered_json{{"enum", values}}.dump();
  std::ofstream(too_ambiguous) << nlohmann::ordered_json{{"anyOf", strings}}.dump();
  expect_error("generate --chat x -n 4 --json-schema " + too_many.string(),
               "--json-schema " + too_many.string() +
                   ": at /enum: more than 1024 distinct alternatives, the most one choice may have",
               {}, true);
  expect_error("generate --chat x -n 8 --json-schema " + too_ambiguous.string(),
               "matcher steps (1000 parses alive at once): the schema is too ambiguous at this point to generate from");
  std::string bans = " --logit-bias";
  for (int id = 0; id < 6400; ++id) bans += " " + std::to_string(id).append("=-100");
  expect_error("generate --chat x -n 4" + bans,
               "--logit-bias bans every token: all 6400 ids have -100, so nothing is left to sample", {}, true);
}

}  // namespace
}  // namespace minigen
