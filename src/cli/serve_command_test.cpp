// `minigen serve` as a user starts it (issue 27): a model by its shipped name, --served-model-name in /v1/models and
// the responses, one log line per finished request, the warning for a KV budget below one full-context request, and
// temperature 0 answering exactly what `minigen generate --greedy` does.
#include <gtest/gtest.h>
#include <httplib.h>

#include <nlohmann/json.hpp>
#include <string>

#include "cli/run_binary_test_util.h"
#include "serve/serve_process_test_util.h"

namespace minigen {
namespace {

using nlohmann::json;
using namespace std::chrono_literals;
using testing::ServeProcess;

// The lines of `log` that start with `prefix`.
std::vector<std::string> lines_starting_with(const std::string& log, const std::string& prefix) {
  std::vector<std::string> lines;
  std::istringstream in(log);
  for (std::string line; std::getline(in, line);) {
    if (line.starts_with(prefix)) lines.push_back(line);
  }
  return lines;
}

// The value of `key=` in a log line ("" when absent).
std::string field_of(const std::string& line, const std::string& key) {
  const std::size_t at = line.find(" " + key + "=");
  if (at == std::string::npos) return "";
  const std::size_t begin = at + key.size() + 2;
  return line.substr(begin, line.find(' ', begin) - begin);
}

TEST(ServeCommand, ServedModelNameLogLineAndKvBudgetWarning) {
  ServeProcess server({"-m", "minigen-tiny-sft", "--served-model-name", "minimind", "--kv-budget", "1MiB"});
  ASSERT_GT(server.port(), 0) << server.log();
  // 2,048 bytes of f32 K and V per token (4 layers × 2 kv heads × 32 × 2 × 4): 1 MiB holds 512 of 32,768 tokens.
  EXPECT_NE(server.log().find("[minigen] warning: --kv-budget 1MiB holds 512 tokens, fewer than one request of the "
                              "model's full context (32768 tokens): a request whose prompt and max_tokens need more "
                              "is refused with a 400; --kv-budget 64MiB holds one\n"),
            std::string::npos)
      << server.log();

  httplib::Client client("127.0.0.1", server.port());
  client.set_read_timeout(120, 0);
  const auto models = client.Get("/v1/models");
  ASSERT_TRUE(models);
  EXPECT_EQ(json::parse(models->body)["data"][0]["id"], "minimind");

  const json body = {{"prompt", "In the beginning"}, {"max_tokens", 8}, {"temperature", 0}, {"ignore_eos", true}};
  const auto answer = client.Post("/v1/completions", body.dump(), "application/json");
  ASSERT_TRUE(answer);
  ASSERT_EQ(answer->status, 200) << answer->body;
  const json response = json::parse(answer->body);
  EXPECT_EQ(response["model"], "minimind");

  // Temperature 0 is greedy decoding: the program's --greedy answer, token for token (the same text and count).
  const testing::RunResult greedy = testing::run_minigen(
      "generate -m minigen-tiny-sft -p 'In the beginning' -n 8 --ignore-eos --greedy --threads 2 --json",
      std::filesystem::temp_directory_path() / ("minigen_serve_command_" + std::to_string(::getpid())));
  ASSERT_EQ(greedy.exit_code, 0) << greedy.err;
  const json cli = json::parse(greedy.out);
  EXPECT_EQ(response["choices"][0]["text"], cli["sequences"][0]["text"]);
  EXPECT_EQ(response["usage"]["prompt_tokens"], cli["prompt_tokens"]);

  std::vector<std::string> logged;
  for (int i = 0; i < 200 && logged.empty(); ++i) {
    logged = lines_starting_with(server.log(), "[minigen] request cmpl-");
    if (logged.empty()) std::this_thread::sleep_for(10ms);
  }
  ASSERT_EQ(logged.size(), 1u) << server.log();
  const std::string& line = logged.front();
  EXPECT_TRUE(line.starts_with("[minigen] request " + response["id"].get<std::string>() + ": ")) << line;
  EXPECT_EQ(field_of(line, "prompt_tokens"), std::to_string(response["usage"]["prompt_tokens"].get<int>())) << line;
  EXPECT_EQ(field_of(line, "new_tokens"), "8") << line;
  EXPECT_EQ(field_of(line, "finish_reason"), "length") << line;
  for (const char* timing : {"ttft_ms", "total_ms", "tokens_per_s"}) {
    const std::string value = field_of(line, timing);
    EXPECT_FALSE(value.empty()) << timing << " in " << line;
    EXPECT_GT(std::stod(value.empty() ? "0" : value), 0.0) << timing << " in " << line;
  }
}

TEST(ServeCommand, NoWarningWhenTheBudgetHoldsAFullContextAndTheNameDefaultsToTheFolders) {
  ServeProcess server({"-m", "minigen-tiny-sft", "--kv-budget", "64MiB"});
  ASSERT_GT(server.port(), 0) << server.log();
  EXPECT_EQ(server.log().find("warning"), std::string::npos) << server.log();
  httplib::Client client("127.0.0.1", server.port());
  const auto models = client.Get("/v1/models");
  ASSERT_TRUE(models);
  EXPECT_EQ(json::parse(models->body)["data"][0]["id"], "minigen-tiny-sft");
}

}  // namespace
}  // namespace minigen
