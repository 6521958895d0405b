// --json-schema and --json-object through the minigen binary.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "cli/run_binary_test_util.h"

namespace minigen {
namespace {

namespace fs = std::filesystem;

fs::path scratch_dir() { return fs::temp_directory_path() / ("minigen_grammar_flags_" + std::to_string(getpid())); }

fs::path write_file(const std::string& name, const std::string& text) {
  fs::create_directories(scratch_dir());
  const fs::path path = scratch_dir() / name;
  std::ofstream(path) << text;
  return path;
}

TEST(CliGrammarFlags, JsonSchemaFileConstrainsTheOutput) {
  const fs::path schema = write_file("person.json", R"({"type": "object", "properties": {"name": {"type": "string",
      "maxLength": 10}, "age": {"type": "integer"}}, "required": ["name", "age"], "additionalProperties": false})");
  const testing::RunResult run = testing::run_minigen(
      "generate --chat 'Describe a person.' --seed 3 -n 64 --json-schema " + schema.string(), scratch_dir());
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const std::string text = run.out.substr(0, run.out.find_last_not_of('\n') + 1);
  const nlohmann::json value = nlohmann::json::parse(text);
  EXPECT_TRUE(value.contains("name") && value["name"].is_string()) << text;
  EXPECT_TRUE(value.contains("age") && value["age"].is_number_integer()) << text;
}

TEST(CliGrammarFlags, JsonObjectGivesAnObject) {
  const testing::RunResult run =
      testing::run_minigen("generate --chat 'Hello' --greedy -n 48 --json-object --json", scratch_dir());
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const nlohmann::json result = nlohmann::json::parse(run.out);
  ASSERT_TRUE(result.contains("sequences")) << run.out;
  const nlohmann::json& sequence = result["sequences"][0];
  if (sequence["finish_reason"] == "stop") {
    EXPECT_TRUE(nlohmann::json::parse(sequence["text"].get<std::string>()).is_object()) << run.out;
  }
}

TEST(CliGrammarFlags, BadSchemaFilesAreOneErrorLine) {
  const fs::path unsupported = write_file("pattern.json", R"({"type": "string", "pattern": "a+", "format": "x"})");
  const fs::path not_json = write_file("broken.json", "{\"type\": ");
  std::string nested;
  for (int i = 0; i < 100000; ++i) nested += "{\"items\":";
  const fs::path deep = write_file("deep.json", nested + "{}" + std::string(100000, '}'));
  for (const auto& [file, message] :
       {std::pair{unsupported.string(), "unsupported JSON Schema keyword(s): format, pattern"},
        std::pair{not_json.string(), "the file is not valid JSON"},
        std::pair{deep.string(), "the file is nested more than 128 levels deep"},
        std::pair{(scratch_dir() / "missing.json").string(), "missing.json"}}) {
    const testing::RunResult run =
        testing::run_minigen("generate --chat 'x' -n 4 --json-schema " + file, scratch_dir());
    EXPECT_EQ(run.exit_code, 1) << file;
    EXPECT_NE(run.err.find("minigen: error: --json-schema"), std::string::npos) << run.err;
    EXPECT_NE(run.err.find(message), std::string::npos) << run.err;
    EXPECT_EQ(std::count(run.err.begin(), run.err.end(), '\n'), 1) << run.err;
  }
  const testing::RunResult both =
      testing::run_minigen("generate --chat 'x' --json-object --json-schema " + not_json.string(), scratch_dir());
  EXPECT_NE(both.exit_code, 0);
}

}  // namespace
}  // namespace minigen
