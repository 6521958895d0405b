#include "loadtest/rollout_bench.h"

#include <httplib.h>

#include <chrono>
#include <cmath>
#include <random>

#include "core/error.h"

namespace minigen::load_test {
namespace {

using nlohmann::json;
using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

// Left padding already stripped, as SGLangRolloutEngine sends them: each prompt G times in a row.
json rollout_request(const RolloutBenchOptions& options) {
  std::mt19937 generator(static_cast<unsigned>(options.seed));
  std::uniform_int_distribution<int> id(3, options.vocab_size - 1);
  json input_ids = json::array();
  for (int b = 0; b < options.batch; ++b) {
    json prompt = json::array();
    for (int t = 0; t < options.prompt_tokens; ++t) prompt.push_back(id(generator));
    for (int g = 0; g < options.generations; ++g) input_ids.push_back(prompt);
  }
  return {{"input_ids", input_ids},
          {"sampling_params",
           {{"temperature", options.temperature},
            {"max_new_tokens", options.new_tokens},
            {"stop_token_ids", {2}},
            {"ignore_eos", true},
            {"sampling_seed", options.seed}}},
          {"return_logprob", true}};
}

// What the trainer reads from the answer; the first problem, or empty.
std::string check_answer(const json& results, const RolloutBenchOptions& options, RolloutRound& round) {
  const std::size_t rows = static_cast<std::size_t>(options.batch) * options.generations;
  if (!results.is_array() || results.size() != rows) {
    return "expected a list of " + std::to_string(rows) + " results, got " + results.dump().substr(0, 200);
  }
  for (const json& result : results) {
    const json& ids = result["meta_info"]["output_ids"];
    const json& logprobs = result["meta_info"]["output_token_logprobs"];
    if (!ids.is_array() || static_cast<int>(ids.size()) != options.new_tokens) return "a row without N output ids";
    if (!logprobs.is_array() || logprobs.size() != ids.size()) return "a row whose logprobs do not match its ids";
    for (std::size_t t = 0; t < ids.size(); ++t) {
      const double logprob = logprobs[t][0].get<double>();
      if (!std::isfinite(logprob) || logprob > 0 || logprobs[t][1] != ids[t]) return "a logprob that is not one";
    }
    round.tokens += static_cast<long long>(ids.size());
    round.cached_tokens += result["meta_info"]["cached_tokens"].get<int>();
  }
  return "";
}

// A failed call's status and the start of its body, or the transport error.
std::string what_came_back(const httplib::Result& answer) {
  return answer ? std::to_string(answer->status) + " " + answer->body.substr(0, 300)
                : httplib::to_string(answer.error());
}

}  // namespace

RolloutBenchReport run_rollout_bench(const std::string& url, const RolloutBenchOptions& options) {
  RolloutBenchReport report;
  report.options = options;
  httplib::Client client(url);
  if (!client.is_valid()) throw Error("not a usable server address: " + url);
  client.set_connection_timeout(10, 0);
  client.set_read_timeout(3600, 0);  // a 64 M model's rollout of thousands of tokens, on a busy machine
  // Prompt ids from the served vocabulary (SGLang's /get_model_info has no vocab_size; minigen's does).
  RolloutBenchOptions shaped = options;
  if (auto info = client.Get("/get_model_info"); info && info->status == 200) {
    const json model = json::parse(info->body, nullptr, false);
    if (model.is_object() && model.contains("vocab_size")) shaped.vocab_size = model["vocab_size"].get<int>();
  }
  const std::string body = rollout_request(shaped).dump();
  for (int r = 0; r < options.rounds; ++r) {
    RolloutRound round;
    if (r > 0 && !options.update_from.empty()) {
      const auto started = Clock::now();
      auto answer = client.Post("/update_weights_from_disk", json{{"model_path", options.update_from}}.dump(),
                                "application/json");
      round.update_seconds = seconds_since(started);
      if (!answer || answer->status != 200) {
        report.errors.push_back("the weight update failed: " + what_came_back(answer));
        break;
      }
      const json update = json::parse(answer->body, nullptr, false);
      round.server_load_seconds = update.value("load_seconds", 0.0);
      round.server_switch_seconds = update.value("switch_seconds", 0.0);
    }
    const auto started = Clock::now();
    auto answer = client.Post("/generate", body, "application/json");
    round.wall_seconds = seconds_since(started);
    if (!answer || answer->status != 200) {
      report.errors.push_back("/generate failed: " + what_came_back(answer));
      break;
    }
    const std::string problem = check_answer(json::parse(answer->body, nullptr, false), options, round);
    if (!problem.empty()) {
      report.errors.push_back("round " + std::to_string(r + 1) + ": " + problem);
      break;
    }
    report.rounds.push_back(round);
  }
  return report;
}

json rollout_report_json(const RolloutBenchReport& report) {
  const RolloutBenchOptions& options = report.options;
  json rounds = json::array();
  for (const RolloutRound& round : report.rounds) {
    rounds.push_back({{"wall_seconds", round.wall_seconds},
                      {"tokens", round.tokens},
                      {"tokens_per_second", round.tokens_per_second()},
                      {"cached_tokens", round.cached_tokens},
                      {"update_seconds", round.update_seconds},
                      {"server_load_seconds", round.server_load_seconds},
                      {"server_switch_seconds", round.server_switch_seconds}});
  }
  return {{"batch", options.batch},
          {"generations", options.generations},
          {"new_tokens", options.new_tokens},
          {"prompt_tokens", options.prompt_tokens},
          {"temperature", options.temperature},
          {"update_from", options.update_from},
          {"rounds", rounds},
          {"errors", report.errors},
          {"passed", report.passed()}};
}

}  // namespace minigen::load_test
