// End-to-end: the minigen binary on a random tiny model — the acceptance run of the core engine and every kind
// of bad input, each of which must end with one clear error line and a non-zero exit, never a crash.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <utility>

#include "checkpoint/model_loader.h"
#include "cli/cli_fixture_test_util.h"
#include "cli/run_binary_test_util.h"
#include "request/reply_parser.h"

namespace minigen {
namespace {

namespace fs = std::filesystem;

using testing::read_text_file;
using testing::RunResult;

using testing::Cli;

TEST_F(Cli, GreedyWithAndWithoutCacheGiveIdenticalTokensAnd246Versus13728ForwardTokens) {
  const fs::path prompt = prompt_file_of_length(183);
  const std::string common =
      "generate -m " + tiny_model().string() + " -f " + prompt.string() + " --greedy --ignore-eos -n 64 --json";
  const RunResult cached = run(common);
  const RunResult uncached = run(common + " --no-cache");
  ASSERT_EQ(cached.exit_code, 0) << cached.err;
  ASSERT_EQ(uncached.exit_code, 0) << uncached.err;
  const auto with_cache = nlohmann::json::parse(cached.out);
  const auto without_cache = nlohmann::json::parse(uncached.out);
  EXPECT_EQ(with_cache["prompt_tokens"], 183);
  EXPECT_EQ(with_cache["forward_calls"], 64);
  EXPECT_EQ(with_cache["forward_tokens"], 246);
  EXPECT_EQ(without_cache["forward_tokens"], 13728);
  EXPECT_EQ(with_cache["kv_cache_bytes"], 2 * 4 * 246 * 2 * 32 * 4);
  EXPECT_EQ(with_cache["recompute_buffer_bytes"], 0);
  // --no-cache reports no cache; the buffer its last step filled is named for what it is.
  EXPECT_EQ(without_cache["kv_cache_bytes"], 0);
  EXPECT_EQ(without_cache["recompute_buffer_bytes"], 2 * 4 * 246 * 2 * 32 * 4);
  ASSERT_EQ(with_cache["sequences"][0]["token_ids"].size(), 64u);
  EXPECT_EQ(with_cache["sequences"][0]["token_ids"], without_cache["sequences"][0]["token_ids"]);
  EXPECT_EQ(with_cache["sequences"][0]["finish_reason"], "length");
  EXPECT_EQ(with_cache["settings"]["top_p_rule"], "minimind");
}

// --version prints CMake's project version alone on stdout and exits 0, without a command.
TEST_F(Cli, VersionPrintsTheProjectVersion) {
  const RunResult result = run("--version");
  EXPECT_EQ(result.exit_code, 0) << result.err;
  EXPECT_EQ(result.out, std::string("minigen ") + MINIGEN_VERSION + "\n");
  EXPECT_EQ(result.err, "");
}

TEST_F(Cli, StreamsTextAndReportsCountersOnStderr) {
  const RunResult result = run("generate -m " + tiny_model().string() + " -p 'In the beginning' -n 5 --seed 3");
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_FALSE(result.out.empty());
  EXPECT_NE(result.err.find("forward calls"), std::string::npos);
}

TEST_F(Cli, SeveralReturnSequencesAndSeedsAreReproducible) {
  const std::string command = "generate -m " + tiny_model().string() +
                              " --chat 'What does river mean?' -n 6 --ignore-eos --num-return-sequences 3 "
                              "--temperature 1.3 --top-p 1 --top-k 0 --seed 5 --json";
  const auto first = nlohmann::json::parse(run(command).out);
  const auto second = nlohmann::json::parse(run(command).out);
  ASSERT_EQ(first["sequences"].size(), 3u);
  EXPECT_EQ(first["sequences"], second["sequences"]);
  EXPECT_NE(first["sequences"][0]["token_ids"], first["sequences"][1]["token_ids"]);
}

TEST_F(Cli, ChatJsonSplitsEachReplyIntoReasoningContentAndToolCalls) {
  for (const bool think : {true, false}) {
    const RunResult result = run("generate -m " + tiny_model().string() + " --chat 'Why?' -n 12 --ignore-eos --greedy" +
                                 (think ? " --think" : "") + " --json");
    ASSERT_EQ(result.exit_code, 0) << result.err;
    const auto sequence = nlohmann::json::parse(result.out)["sequences"][0];
    ReplyParserOptions options;
    options.prompt_opened_think = think;
    const ParsedReply reply = parse_reply(sequence["text"].get<std::string>(), options);
    EXPECT_EQ(sequence["reasoning_content"], reply.reasoning_content);
    EXPECT_EQ(sequence["content"], reply.content);
    EXPECT_EQ(sequence["tool_calls"].size(), reply.tool_calls.size());
  }
  const auto raw = nlohmann::json::parse(run("generate -m " + tiny_model().string() + " -p 'In' -n 2 --json").out);
  EXPECT_FALSE(raw["sequences"][0].contains("content"));  // a base-model prompt has no reply to split
}

// --profile: the table on stderr, and in --json a "profile" object whose counts follow the run — 5 greedy tokens
// are 5 forward calls (prefill + 4 decodes), each with 4 layers × 4 products + the lm_head, and 5 samplings.
TEST_F(Cli, GenerateProfileCountsTheZonesOfTheRun) {
  const RunResult profiled =
      run("generate -m " + tiny_model().string() + " -p 'In' -n 5 --ignore-eos --greedy --json --profile");
  ASSERT_EQ(profiled.exit_code, 0) << profiled.err;
  const auto json = nlohmann::json::parse(profiled.out);
  EXPECT_EQ(json["forward_calls"], 5);
  const auto& zones = json["profile"]["zones"];
  EXPECT_EQ(zones["forward"]["calls"], 5);
  EXPECT_EQ(zones["attention"]["calls"], 4 * 5);
  EXPECT_EQ(zones["matmul"]["calls"], (4 * 4 + 1) * 5);
  EXPECT_EQ(zones["sampling"]["calls"], 5);
  EXPECT_LE(zones["forward"]["total_ms"].get<double>(), json["profile"]["wall_ms"].get<double>());
  // Loading is timed apart from the run: TTFT starts when generation does.
  EXPECT_GT(json["load_ms"].get<double>(), 0.0);
  EXPECT_LE(json["ttft_ms"].get<double>(), json["total_ms"].get<double>());
  EXPECT_NE(profiled.err.find("[profile] inclusive time per zone"), std::string::npos) << profiled.err;
  // Streamed text goes through the detokeniser, one push per token.
  const RunResult streamed = run("generate -m " + tiny_model().string() + " -p 'In' -n 5 --ignore-eos --profile");
  ASSERT_EQ(streamed.exit_code, 0) << streamed.err;
  EXPECT_NE(streamed.err.find("\ndetokenise                5 "), std::string::npos) << streamed.err;
  EXPECT_NE(streamed.err.find("[minigen] load "), std::string::npos) << streamed.err;
  const RunResult plain = run("generate -m " + tiny_model().string() + " -p 'In' -n 2 --json");
  EXPECT_FALSE(nlohmann::json::parse(plain.out).contains("profile"));
  EXPECT_EQ(plain.err.find("[profile]"), std::string::npos);
}

// --tools renders the functions into the system turn; --tool-choice required (or a name) forces one well-formed call
// through the grammar stage, even from a random model, and --json reports it parsed.
TEST_F(Cli, ToolChoiceRequiredForcesAWellFormedCallFromTheCommandLine) {
  const fs::path tools = work_dir() / "tools.json";
  std::ofstream(tools) << R"([{"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object",
    "properties": {"city": {"type": "string", "maxLength": 8}, "unit": {"enum": ["celsius", "fahrenheit"]}},
    "required": ["city", "unit"], "additionalProperties": false}}},
    {"type": "function", "function": {"name": "get_time"}}])";
  const std::string chat = "generate -m " + tiny_model().string() + " --chat 'Weather in Paris?' --tools " +
                           tools.string() + " --seed 4 --json";
  for (const std::string choice : {"required", "get_weather"}) {
    const RunResult result = run(chat + " -n 120 --tool-choice " + choice);
    ASSERT_EQ(result.exit_code, 0) << result.err;
    const auto sequence = nlohmann::json::parse(result.out)["sequences"][0];
    ASSERT_EQ(sequence["finish_reason"], "stop") << sequence.dump();
    ASSERT_EQ(sequence["tool_calls"].size(), 1u) << sequence.dump();
    const auto& function = sequence["tool_calls"][0]["function"];
    if (choice == "get_weather") {
      EXPECT_EQ(function["name"], "get_weather");
    }
    const auto arguments = nlohmann::json::parse(function["arguments"].get<std::string>());
    ASSERT_TRUE(arguments.is_object()) << function.dump();
    if (function["name"] == "get_weather") {
      EXPECT_TRUE(arguments["city"].is_string()) << function.dump();
      EXPECT_TRUE(arguments["unit"] == "celsius" || arguments["unit"] == "fahrenheit") << function.dump();
    }
  }
  // Offered but not forced, the prompt is longer than without tools by the # Tools block.
  const auto offered = nlohmann::json::parse(run(chat + " -n 2").out);
  const auto without = nlohmann::json::parse(
      run("generate -m " + tiny_model().string() + " --chat 'Weather in Paris?' -n 2 --json").out);
  EXPECT_GT(offered["prompt_tokens"].get<int>(), without["prompt_tokens"].get<int>() + 100);
  expect_clear_error("generate -m " + tiny_model().string() + " --chat hi --tool-choice required", "needs --tools");
  expect_clear_error(chat + " --tool-choice fly", "--tool-choice fly: no such function");
  expect_clear_error(chat + " --tool-choice required --json-object", "cannot be combined");
  std::ofstream(work_dir() / "bad_tools.json") << R"([{"type": "retrieval"}])";
  expect_clear_error(
      "generate -m " + tiny_model().string() + " --chat hi --tools " + (work_dir() / "bad_tools.json").string(),
      "--tools");
}

TEST_F(Cli, TokenizeDetokenizeAndInfo) {
  const RunResult ids = run("tokenize -m " + tiny_model().string() + " 'In the beginning'");
  ASSERT_EQ(ids.exit_code, 0) << ids.err;
  const RunResult text =
      run("detokenize -m " + tiny_model().string() + " '" + ids.out.substr(0, ids.out.size() - 1) + "'");
  EXPECT_EQ(text.out, "In the beginning\n");
  const RunResult info = run("info " + tiny_model().string() + " --json");
  ASSERT_EQ(info.exit_code, 0) << info.err;
  const auto json = nlohmann::json::parse(info.out);
  EXPECT_EQ(json["family"], "tiny");
  EXPECT_EQ(json["kv_bytes_per_token"], 2048);
  EXPECT_EQ(json["kv_bytes_per_1000_tokens"], 2048000);
  EXPECT_EQ(json["stored_dtype"], "F32");
  EXPECT_EQ(json["weight_type"], "f32");
}

// The docs' commands name shipped files by their place in the tree (models/minigen-tiny-base,
// examples/genesis-183.txt): from a folder outside the checkout they find the shipped ones,
// and a file that exists neither here nor there is still the reader's own error.
TEST_F(Cli, ShippedExamplesAndModelsResolveFromAnyFolder) {
  const fs::path elsewhere = fs::temp_directory_path() / ("minigen_cli_elsewhere_" + std::to_string(::getpid()));
  fs::create_directories(elsewhere);
  testing::RunOptions options;
  options.working_directory = elsewhere.string();
  const std::string scratch = (elsewhere / "run").string();
  const RunResult generated = testing::run_minigen(
      "generate -m models/minigen-tiny-base -f examples/genesis-183.txt --greedy --ignore-eos -n 4 --json", scratch,
      options);
  ASSERT_EQ(generated.exit_code, 0) << generated.err;
  EXPECT_EQ(nlohmann::json::parse(generated.out)["prompt_tokens"], 183);
  const RunResult scored = testing::run_minigen(
      "perplexity -m minigen-tiny-base -f examples/genesis-183.txt --ctx 64 --json", scratch, options);
  ASSERT_EQ(scored.exit_code, 0) << scored.err;
  const RunResult ids =
      testing::run_minigen("tokenize --tokenizer models/minigen-tiny-sft 'In the beginning'", scratch, options);
  EXPECT_EQ(ids.exit_code, 0) << ids.err;
  const RunResult missing = testing::run_minigen("generate -f examples/no-such-file.txt -n 2", scratch, options);
  EXPECT_EQ(missing.exit_code, 1);
  EXPECT_NE(missing.err.find("examples/no-such-file.txt: cannot open"), std::string::npos) << missing.err;
  fs::remove_all(elsewhere);
}

// An fp16 checkpoint (MiniMind's update_policy layout) runs as f16 unless told otherwise, and info says so.
TEST_F(Cli, InfoNamesTheWeightTypeAnFp16CheckpointRunsAs) {
  const std::string policy = std::string(MINIGEN_TEST_DATA_DIR) + "/rollout/policy_v1";
  const RunResult json_run = run("info " + policy + " --json");
  ASSERT_EQ(json_run.exit_code, 0) << json_run.err;
  const auto json = nlohmann::json::parse(json_run.out);
  EXPECT_EQ(json["stored_dtype"], "F16");
  EXPECT_EQ(json["weight_type"], "f16");
  EXPECT_EQ(nlohmann::json::parse(run("info " + policy + " --json --weights f32").out)["weight_type"], "f32");
  const RunResult text = run("info " + policy);
  EXPECT_NE(text.out.find("weights      f16 (the default for a checkpoint stored in fp16"), std::string::npos)
      << text.out;
}

// What each --kv-dtype costs the tiny model (4 layers, 2 kv heads, head_dim 32) per token, as info reports it,
// and what a generate run reports after 183 + 64 tokens (246 cached positions).
TEST_F(Cli, InfoAndGenerateReportTheBytesOfEachKvDType) {
  const fs::path prompt = prompt_file_of_length(183);
  const std::pair<std::string, int> cases[] = {{"f32", 2048}, {"bf16", 1024}, {"f16", 1024}, {"int8", 576}};
  for (const auto& [dtype, bytes_per_token] : cases) {
    const RunResult info = run("info " + tiny_model().string() + " --json --kv-dtype " + dtype);
    ASSERT_EQ(info.exit_code, 0) << info.err;
    const auto json = nlohmann::json::parse(info.out);
    EXPECT_EQ(json["kv_cache_dtype"], dtype);
    EXPECT_EQ(json["kv_bytes_per_token"], bytes_per_token) << dtype;
    EXPECT_EQ(json["kv_bytes_per_1000_tokens"], 1000 * bytes_per_token) << dtype;
    const RunResult generated = run("generate -m " + tiny_model().string() + " -f " + prompt.string() +
                                    " --greedy --ignore-eos -n 64 --json --kv-dtype " + dtype);
    ASSERT_EQ(generated.exit_code, 0) << generated.err;
    const auto summary = nlohmann::json::parse(generated.out);
    EXPECT_EQ(summary["kv_cache_bytes"], 246 * bytes_per_token) << dtype;
    EXPECT_EQ(summary["settings"]["kv_dtype"], dtype);
  }
}

TEST_F(Cli, BatchTokenizeAndTokenizerTraining) {
  const fs::path jsonl = work_dir() / "texts.jsonl";
  std::ofstream(jsonl) << "{\"text\": \"In the beginning\"}\n{\"text\": \"<|im_end|>\"}\n";
  const RunResult batch = run("tokenize -m " + tiny_model().string() + " --bos --jsonl " + jsonl.string());
  ASSERT_EQ(batch.exit_code, 0) << batch.err;
  const auto tokenizer = load_tokenizer(tiny_model());
  std::vector<int> first = tokenizer->encode("In the beginning");
  first.insert(first.begin(), 1);
  std::istringstream lines(batch.out);
  std::string line;
  std::getline(lines, line);
  EXPECT_EQ(nlohmann::json::parse(line).get<std::vector<int>>(), first);
  std::getline(lines, line);
  EXPECT_EQ(nlohmann::json::parse(line).get<std::vector<int>>(), (std::vector<int>{1, 2}));  // bos, <|im_end|>

  std::ofstream(jsonl) << "{\"text\": 5}\n";
  expect_clear_error("tokenize -m " + tiny_model().string() + " --jsonl " + jsonl.string(), "texts.jsonl:1");
  std::ofstream(jsonl) << "{not json\n";
  expect_clear_error("tokenize -m " + tiny_model().string() + " --jsonl " + jsonl.string(), "not valid JSON");

  const fs::path corpus = work_dir() / "corpus.txt";
  std::ofstream(corpus) << "low lower lowest newer newest wider widest low low lower";
  const fs::path out = work_dir() / "trained";
  const RunResult trained = run("tokenizer train --vocab 300 --out " + out.string() + " " + corpus.string());
  ASSERT_EQ(trained.exit_code, 0) << trained.err;
  const auto small = load_tokenizer(out);
  EXPECT_LE(small->vocab_size(), 300);
  EXPECT_GT(small->vocab_size(), 292);  // some merges were learned
  const std::vector<int> ids = small->encode("low lower");
  EXPECT_EQ(small->decode(ids, false), "low lower");
  expect_clear_error("tokenizer train --vocab 300 --out " + out.string() + " /nonexistent/corpus.txt", "not found");
}

TEST_F(Cli, BadSettingsGiveOneClearError) {
  const std::string model = " -m " + tiny_model().string();
  expect_clear_error("generate" + model + " -p hi --temperature -1", "temperature");
  expect_clear_error("generate" + model + " -p hi --top-p 1.5", "top-p");
  expect_clear_error("generate" + model + " -p hi --top-p 0", "top-p");
  expect_clear_error("generate" + model + " -p hi --top-k -1", "top-k");
  expect_clear_error("generate" + model + " -p hi --min-p 2", "min-p");
  expect_clear_error("generate" + model + " -p hi --repetition-penalty 0", "repetition");
  expect_clear_error("generate" + model + " -p hi --top-p-rule nucleus", "minimind");
  // The library names the parameter top_p; the CLI names its flag.
  EXPECT_EQ(run("generate" + model + " -p hi --top-p 1.5").err, "minigen: error: --top-p must be in (0, 1], got 1.5\n");
  EXPECT_EQ(run("generate" + model + " -p hi --temperature 0.005").err,
            "minigen: error: --temperature must be at least 0.01 (smaller ones overflow the logits), got 0.005 (0 or "
            "--greedy takes the argmax)\n");  // 0 itself is greedy decoding (cli_names_test.cpp)
  expect_clear_error("generate" + model + " -p hi --frequency-penalty 3", "--frequency-penalty must be in [-2, 2]");
  expect_clear_error("generate" + model + " -p hi --presence-penalty -2.5", "--presence-penalty");
  expect_clear_error("generate" + model + " -p hi --logit-bias 5", "--logit-bias takes ID=BIAS");
  expect_clear_error("generate" + model + " -p hi --logit-bias 5=x", "--logit-bias takes ID=BIAS");
  expect_clear_error("generate" + model + " -p hi --logit-bias 5=-101",
                     "--logit-bias of token 5 must be in [-100, 100]");
  expect_clear_error("generate" + model + " -p hi --logit-bias 6400=1", "outside the vocabulary [0, 6400)");
  expect_clear_error("generate" + model + " -p hi --logit-bias 5=1 --logit-bias 5=2", "names token 5 twice");
  expect_clear_error("generate" + model + " -p hi -n 0", "max-new-tokens");
  expect_clear_error("generate" + model + " -p hi --num-return-sequences 0", "num-return-sequences");
  expect_clear_error("generate" + model + " -p hi -n 40000", "context");
  expect_clear_error("generate" + model, "prompt");
  expect_clear_error("generate" + model + " -f /nonexistent/prompt.txt", "prompt");
  expect_clear_error("detokenize" + model + " 5 99999", "99999");
  expect_clear_error("detokenize" + model + " 5 x7", "x7");
  expect_clear_error("init-random --family huge --out " + (work_dir() / "never").string(), "huge");
  EXPECT_FALSE(fs::exists(work_dir() / "never"));
}

// `minigen quantize` from its command line: the written model generates the same tokens as quantizing at load, and
// each misuse (a directory that already holds a model, a model already quantized, a float type) is one clear error.
TEST_F(Cli, QuantizeWritesAModelThatRunsAsQuantizingAtLoadDoes) {
  const fs::path out = work_dir() / "tiny-q8";
  const RunResult made = run("quantize " + tiny_model().string() + " " + out.string() + " --weights q8");
  ASSERT_EQ(made.exit_code, 0) << made.err;
  for (const char* file : {"config.json", "model.safetensors", "tokenizer.json", "README.md"}) {
    EXPECT_TRUE(fs::exists(out / file)) << file;
  }
  const std::string settings = " -p 'In the beginning' -n 12 --greedy --ignore-eos --json";
  const RunResult at_load = run("generate -m " + tiny_model().string() + " --weights q8" + settings);
  const RunResult stored = run("generate -m " + out.string() + settings);
  ASSERT_EQ(at_load.exit_code, 0) << at_load.err;
  ASSERT_EQ(stored.exit_code, 0) << stored.err;
  const auto from_load = nlohmann::json::parse(at_load.out);
  const auto from_file = nlohmann::json::parse(stored.out);
  EXPECT_EQ(from_file["weights"], "q8");
  EXPECT_EQ(from_file["sequences"][0]["token_ids"], from_load["sequences"][0]["token_ids"]);
  EXPECT_EQ(from_file["sequences"][0]["new_tokens"], 12);
  EXPECT_EQ(from_file["weight_bytes"], from_load["weight_bytes"]);

  expect_clear_error("quantize " + tiny_model().string() + " " + out.string() + " --weights q4",
                     "already holds a model");
  expect_clear_error("quantize " + out.string() + " " + (work_dir() / "twice").string() + " --weights q4",
                     "already quantized");
  expect_clear_error("quantize " + tiny_model().string() + " " + (work_dir() / "float").string() + " --weights bf16",
                     "{q8,q4}");
  expect_clear_error("generate -m " + out.string() + " --weights f32 -p hi", "q8");
  for (const char* never : {"twice", "float"}) EXPECT_FALSE(fs::exists(work_dir() / never)) << never;
}

// --activations from the command line: int8 (W8A8) runs q8 with another model's numbers and says so in --json and
// `info`; a value or weight type that cannot take it is one clear error.
TEST_F(Cli, ActivationsFlagChoosesW8A8AndRefusesWhatCannotRunIt) {
  const std::string settings = " -p 'In the beginning' -n 6 --greedy --ignore-eos --json";
  const RunResult int16 = run("generate -m " + tiny_model().string() + " --weights q8" + settings);
  const RunResult int8 = run("generate -m " + tiny_model().string() + " --weights q8 --activations int8" + settings);
  ASSERT_EQ(int16.exit_code, 0) << int16.err;
  ASSERT_EQ(int8.exit_code, 0) << int8.err;
  EXPECT_EQ(nlohmann::json::parse(int16.out)["activations"], "int16");
  EXPECT_EQ(nlohmann::json::parse(int8.out)["activations"], "int8");
  EXPECT_EQ(nlohmann::json::parse(int8.out)["weight_bytes"], nlohmann::json::parse(int16.out)["weight_bytes"]);
  const RunResult line = run("generate -m " + tiny_model().string() + " --weights q8 --activations int8 -p hi -n 2");
  EXPECT_NE(line.err.find("· q8·int8 weights "), std::string::npos) << line.err;
  const auto info = nlohmann::json::parse(run("info " + tiny_model().string() + " --json --weights q4").out);
  EXPECT_EQ(info["activations"], "int8");
  EXPECT_FALSE(nlohmann::json::parse(run("info " + tiny_model().string() + " --json").out).contains("activations"));
  EXPECT_NE(run("info " + tiny_model().string() + " --weights q8 --activations int8")
                .out.find("weights      q8 · activations int8 in blocks of 32\n"),
            std::string::npos);
  expect_clear_error("generate -m " + tiny_model().string() + " --weights q8 --activations int4 -p hi",
                     "--activations: int4 not in {int8,int16}");
  expect_clear_error("generate -m " + tiny_model().string() + " --activations int8 -p hi",
                     "--activations int8 needs --weights q8 or q4 (f32 products take fp32 activations)");
  expect_clear_error("generate -m " + tiny_model().string() + " --weights q4 --activations int16 -p hi",
                     "q4 weights take int8 activations only");
  expect_clear_error("bench -m " + tiny_model().string() + " --weights f32 --activations int8 --quick",
                     "--activations applies to q8 and q4 weights");
  expect_clear_error("bench -m " + tiny_model().string() + " --weights q4 --activations int16 --quick",
                     "q4 weights take int8 activations only");
}

// `minigen export gguf` from its command line: the f32 file generates the original's tokens, the q8_0 file those of
// --weights q8 (its codes are minigen's), a GGUF re-exports, and misuse is one clear error.
TEST_F(Cli, ExportGgufWritesFilesThatRunAsTheOriginal) {
  const std::string settings = " -p 'In the beginning' -n 12 --greedy --ignore-eos --json";
  for (const auto& [type, weights] : {std::pair{"f32", "f32"}, std::pair{"q8_0", "q8"}}) {
    const fs::path out = work_dir() / (std::string("tiny-") + type + ".gguf");
    const RunResult made = run("export gguf " + tiny_model().string() + " " + out.string() + " --type " + type);
    ASSERT_EQ(made.exit_code, 0) << made.err;
    EXPECT_NE(made.err.find("architecture qwen3"), std::string::npos) << made.err;
    const RunResult original = run("generate -m " + tiny_model().string() + " --weights " + weights + settings);
    const RunResult exported = run("generate -m " + out.string() + settings);
    ASSERT_EQ(exported.exit_code, 0) << exported.err;
    const auto from_original = nlohmann::json::parse(original.out);
    const auto from_gguf = nlohmann::json::parse(exported.out);
    EXPECT_EQ(from_gguf["weights"], weights);
    EXPECT_EQ(from_gguf["sequences"][0]["token_ids"], from_original["sequences"][0]["token_ids"]) << type;
  }
  const fs::path again = work_dir() / "again.gguf";
  EXPECT_EQ(
      run("export gguf " + (work_dir() / "tiny-q8_0.gguf").string() + " " + again.string() + " --type q8_0").exit_code,
      0);
  EXPECT_EQ(testing::read_text_file(again), testing::read_text_file(work_dir() / "tiny-q8_0.gguf"));
  expect_clear_error("export gguf " + tiny_model().string() + " " + (work_dir() / "x.bin").string(), ".gguf");
  expect_clear_error("export gguf " + (work_dir() / "tiny-q8_0.gguf").string() + " " +
                         (work_dir() / "f.gguf").string() + " --type f32",
                     "cannot be written as floats");
  std::string truncated = testing::read_text_file(again);
  truncated.resize(truncated.size() / 2);
  std::ofstream(work_dir() / "truncated.gguf", std::ios::binary) << truncated;
  expect_clear_error("generate -m " + (work_dir() / "truncated.gguf").string() + " -p hi", "truncated.gguf: GGUF");
}

// tokenize and detokenize read a GGUF's own tokenizer, as every other command does (they once looked for a
// tokenizer.json beside the file). The ids are the fixture's, written by the Python trainer of the shipped tokenizer.
TEST_F(Cli, TokenizeReadsTheTokenizerInsideAGguf) {
  const fs::path gguf = work_dir() / "tiny-sft.gguf";
  const RunResult made = run("export gguf minigen-tiny-sft " + gguf.string() + " --type q8_0");
  ASSERT_EQ(made.exit_code, 0) << made.err;
  ASSERT_FALSE(fs::exists(work_dir() / "tokenizer.json"));
  const auto fixture = nlohmann::json::parse(
      read_text_file(fs::path(MINIGEN_TEST_DATA_DIR) / "tokenizer" / "minigen-6400.json"))["encodings"];
  ASSERT_EQ(fixture.size(), 4u);
  for (const auto& encoding : fixture) {
    const std::string text = encoding["text"];
    const std::string text_file = (work_dir() / "text.jsonl").string();
    std::ofstream(text_file) << nlohmann::json{{"text", text}}.dump() << "\n";
    const RunResult ids = run("tokenize -m " + gguf.string() + " --jsonl " + text_file);
    ASSERT_EQ(ids.exit_code, 0) << ids.err;
    EXPECT_EQ(nlohmann::json::parse(ids.out), encoding["ids"]) << text;
  }
  const RunResult beginning = run("tokenize -m " + gguf.string() + " 'In the beginning God created the heaven'");
  EXPECT_EQ(beginning.out, "2043 300 3684 719 3572 300 2274\n");
  const RunResult text = run("detokenize -m " + gguf.string() + " '1 343 298 234 2201 719 694 2 234'");
  EXPECT_EQ(text.out, "<|im_start|>user\nAnd God said<|im_end|>\n\n");
  expect_clear_error("tokenize -m " + (work_dir() / "none.gguf").string() + " hi", "none.gguf");
}

TEST_F(Cli, BadModelFilesGiveOneClearError) {
  expect_clear_error("generate -m /nonexistent/model -p hi", "not found");
  const fs::path broken = work_dir() / "broken";
  auto fresh_copy = [&] {
    fs::remove_all(broken);
    fs::copy(tiny_model(), broken);
  };
  fresh_copy();
  std::ofstream(broken / "config.json") << "{\"model_type\": \"minimind\", \"hidden_size\": ";
  expect_clear_error("generate -m " + broken.string() + " -p hi", "JSON");

  fresh_copy();
  auto config = nlohmann::json::parse(read_text_file(tiny_model() / "config.json"));
  config["intermediate_size"] = 1024;  // the tensors say 832
  std::ofstream(broken / "config.json") << config.dump();
  expect_clear_error("generate -m " + broken.string() + " -p hi", "shape");

  fresh_copy();
  fs::resize_file(broken / "model.safetensors", fs::file_size(broken / "model.safetensors") / 2);
  expect_clear_error("generate -m " + broken.string() + " -p hi", "model.safetensors");

  fresh_copy();
  std::ofstream(broken / "model.safetensors", std::ios::binary) << "garbage";
  expect_clear_error("generate -m " + broken.string() + " -p hi", "model.safetensors");

  fresh_copy();
  fs::remove(broken / "tokenizer.json");
  expect_clear_error("generate -m " + broken.string() + " -p hi", "tokenizer");

  fresh_copy();
  std::ofstream(broken / "tokenizer.json") << "[1, 2";
  expect_clear_error("generate -m " + broken.string() + " -p hi", "tokenizer");

  std::ofstream(work_dir() / "fake.pth") << "not a zip archive at all";
  expect_clear_error(
      "generate -m " + (work_dir() / "fake.pth").string() + " --tokenizer " + tiny_model().string() + " -p hi",
      "fake.pth");
}

}  // namespace
}  // namespace minigen

namespace minigen {
namespace {

// `minigen bench-serve` from its command line: an in-process server on a free port, 8 requests two at a time,
// every one answered and its [DONE] received, no error, no KV block left, and the flags echoed in the report.
TEST(CliBenchServe, QuickRunThroughTheCommandLineReportsEveryRequest) {
  const std::filesystem::path scratch =
      std::filesystem::temp_directory_path() / ("minigen_cli_bench_serve_" + std::to_string(::getpid()));
  const testing::RunResult run = testing::run_minigen(
      "bench-serve --quick --json --requests 8 --concurrency 2 --compare-sequential 0 --max-tokens 8 "
      "--cancel-fraction 0 --threads 2",
      scratch);
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const nlohmann::json report = nlohmann::json::parse(run.out);
  EXPECT_TRUE(report["passed"].get<bool>());
  EXPECT_EQ(report["errors"], 0);
  EXPECT_EQ(report["leaked_blocks"], 0);
  EXPECT_EQ(report["settings"]["requests"], 8);
  EXPECT_EQ(report["settings"]["concurrency"], 2);
  EXPECT_EQ(report["settings"]["max_tokens"], 8);
  EXPECT_EQ(report["load"]["requests"], 8);
  EXPECT_EQ(report["load"]["done_received"], 8);
  EXPECT_EQ(report["load"]["cancelled"], 0);
  EXPECT_EQ(report["load"]["chat_requests"].get<int>() + report["load"]["completion_requests"].get<int>(), 8);
  EXPECT_GE(report["load"]["generated_tokens"].get<int>(), 8);   // at least one token each …
  EXPECT_LE(report["load"]["generated_tokens"].get<int>(), 64);  // … and at most max_tokens
  std::filesystem::remove_all(scratch);
}

// `minigen bench-serve --rollout`: MiniMind's RL rollout shape through /generate, with a weight update from disk (the
// fp16 pytorch_model.bin MiniMind's update_policy writes) between the rounds; every row B·G·N tokens, each with its
// logprob, and the update's time reported.
TEST(CliBenchServe, RolloutShapeWithAWeightUpdateBetweenRounds) {
  const std::filesystem::path scratch =
      std::filesystem::temp_directory_path() / ("minigen_cli_bench_rollout_" + std::to_string(::getpid()));
  const std::string data = std::string(MINIGEN_TEST_DATA_DIR) + "/rollout/";
  const testing::RunResult run =
      testing::run_minigen("bench-serve -m " + data + "policy_v1 --rollout 2x3x8 --update-from " + data +
                               "policy_v2 --rollout-rounds 2 --json --threads 2",
                           scratch);
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const nlohmann::json report = nlohmann::json::parse(run.out);
  EXPECT_TRUE(report["passed"].get<bool>()) << report.dump();
  ASSERT_EQ(report["rounds"].size(), 2u);
  for (const nlohmann::json& round : report["rounds"]) EXPECT_EQ(round["tokens"], 2 * 3 * 8);
  EXPECT_EQ(report["rounds"][0]["update_seconds"], 0.0);
  EXPECT_GT(report["rounds"][1]["server_load_seconds"].get<double>(), 0.0);
  // A shape the trainer could not send is refused before anything starts.
  EXPECT_NE(testing::run_minigen("bench-serve --rollout 4x6", scratch).exit_code, 0);
  std::filesystem::remove_all(scratch);
}

// The prompt token counts of the --stats lines ("[minigen] load 0.1 ms · prompt 21 tokens · …"), in order.
std::vector<int> stats_prompt_tokens(const std::string& err) {
  std::vector<int> counts;
  const std::string marker = " ms · prompt ";
  for (std::size_t at = err.find(marker); at != std::string::npos; at = err.find(marker, at + 1)) {
    counts.push_back(std::stoi(err.substr(at + marker.size())));
  }
  return counts;
}

// `minigen chat` driven through stdin with the shipped chat model: two turns (the second sees the first in its
// prompt), /reset (the same question again gets the first answer, from the same prompt), /quit (what follows is
// never read).
TEST(CliChat, TwoTurnsResetAndQuitThroughStdin) {
  const std::filesystem::path scratch =
      std::filesystem::temp_directory_path() / ("minigen_cli_chat_" + std::to_string(::getpid()));
  std::filesystem::create_directories(scratch);
  const std::filesystem::path input = scratch / "input.txt";
  std::ofstream(input) << "What does 'river' mean?\nAnd 'stone'?\n/reset\nWhat does 'river' mean?\n/quit\nHello?\n";
  testing::RunOptions options;
  options.stdin_path = input.string();
  const testing::RunResult chat = testing::run_minigen(
      "chat -m " + (minigen_home() / "models" / "minigen-tiny-sft").string() + " --greedy -n 16 --stats --threads 2",
      scratch, options);
  ASSERT_EQ(chat.exit_code, 0) << chat.err;
  EXPECT_NE(chat.err.find("(history cleared)"), std::string::npos) << chat.err;

  // stdout: a "> " prompt before each line read, each answer on its own line; five lines read, three answered.
  std::vector<std::string> answers;
  std::string rest = chat.out;
  ASSERT_TRUE(rest.starts_with("> ")) << chat.out;
  std::size_t prompts = 0;
  for (std::size_t at = 0; (at = rest.find("> ", at)) != std::string::npos; at += 2) ++prompts;
  EXPECT_EQ(prompts, 5u) << chat.out;
  std::istringstream lines(chat.out);
  for (std::string line; std::getline(lines, line);) {
    while (line.starts_with("> ")) line = line.substr(2);
    if (!line.empty()) answers.push_back(line);
  }
  ASSERT_EQ(answers.size(), 3u) << chat.out;
  EXPECT_EQ(answers[2], answers[0]);  // greedy, and the history was cleared

  const std::vector<int> prompt_tokens = stats_prompt_tokens(chat.err);
  ASSERT_EQ(prompt_tokens.size(), 3u) << chat.err;
  EXPECT_GT(prompt_tokens[1], prompt_tokens[0] + 5);  // turn two carries turn one, its answer and a new question
  EXPECT_EQ(prompt_tokens[2], prompt_tokens[0]);
  std::filesystem::remove_all(scratch);
}

}  // namespace
}  // namespace minigen
