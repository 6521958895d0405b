#include "bench/one_shot.h"

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

#include "bench/bench_statistics.h"
#include "bench/greedy_decode.h"
#include "core/child_process.h"
#include "core/error.h"
#include "core/file_io.h"
#include "generate/generate.h"

namespace minigen::bench {
namespace {

namespace fs = std::filesystem;

// The one-shot targets of the speed issue (reported beside each ratio, never asserted).
constexpr double kTtftTarget = 1.5;
constexpr double kInterTokenTarget = 1.2;
constexpr uint64_t kMaxReportBytes = uint64_t{16} << 20;  // generate's --json for one row: a few KB

struct Timings {
  double load_ms = 0;
  double ttft_ms = 0;
  double itl_ms = 0;
  std::vector<int> tokens;
};

std::string first_line(const std::string& text) { return text.substr(0, text.find('\n')); }

Timings fresh_process(const OneShotPrompt& prompt, const BenchOptions& options, int threads, WeightType weights) {
  std::vector<std::string> arguments = {"generate"};
  arguments.insert(arguments.end(), prompt.model_arguments.begin(), prompt.model_arguments.end());
  for (const std::string& word :
       {std::string("-f"), prompt.text_path.string(), std::string("--greedy"), std::string("-n"),
        std::to_string(options.generate_tokens), std::string("--ignore-eos"), std::string("--json"),
        std::string("--threads"), std::to_string(threads), std::string("--weights"),
        std::string(weight_type_name(weights)), std::string("--kv-dtype"),
        std::string(kv_dtype_name(options.kv_dtypes.front()))}) {
    arguments.push_back(word);
  }
  // The child's output goes to fixed names in a folder only this user can enter, removed however the run ends.
  const PrivateTemporaryDirectory work("minigen-bench-one-shot");
  const fs::path out_path = work.path() / "report.json";
  const fs::path err_path = work.path() / "stderr.txt";
  const int status = run_child(prompt.program, arguments, out_path, err_path);
  if (status != 0) {
    throw Error("the one-shot run (" + prompt.program.string() + " generate -f " + prompt.text_path.string() +
                ") failed with exit status " + std::to_string(status) + ": " +
                first_line(read_whole_file(err_path, kMaxReportBytes, "its error output")));
  }
  Timings timings;
  try {
    const nlohmann::json report =
        nlohmann::json::parse(read_whole_file(out_path, kMaxReportBytes, "the one-shot run's --json report"));
    timings.load_ms = report.at("load_ms").get<double>();
    timings.ttft_ms = report.at("ttft_ms").get<double>();
    timings.itl_ms = report.at("itl_ms").get<double>();
    timings.tokens = report.at("sequences").at(0).at("token_ids").get<std::vector<int>>();
  } catch (const nlohmann::json::exception& error) {
    throw Error(std::string("the one-shot run's --json report is not what generate writes: ") + error.what());
  }
  return timings;
}

Timings warm_generation(Transformer& transformer, const OneShotPrompt& prompt, const BenchOptions& options) {
  GenerateOptions generation;
  generation.max_new_tokens = options.generate_tokens;
  generation.ignore_eos = true;
  generation.sampling.greedy = true;  // and every other setting at generate's defaults, as --greedy leaves them
  generation.kv_dtype = options.kv_dtypes.front();
  const std::vector<std::vector<int>> prompts = {prompt.ids};
  const GenerateResult result = generate(transformer, prompts, generation);
  return {0.0, result.stats.ttft_ms, result.stats.itl_ms, result.sequences.front().token_ids};
}

// The itl test's yardstick: bench's bare decode step — a forward call and an argmax, no sampler, no detokeniser —
// at the positions generate decodes, after the same prompt (prefilled untimed): the same context lengths, so the
// difference is what generate adds around the forward pass. tg's step from an empty cache is reported beside it.
Timings bare_decode(Transformer& transformer, const OneShotPrompt& prompt, const BenchOptions& options) {
  const int steps = options.generate_tokens - 1;  // the first token comes from the prefill
  KvCache cache(transformer.model().config.kv_layout(options.kv_dtypes.front()),
                static_cast<int>(prompt.ids.size()) + options.generate_tokens);
  Timings timings;
  timings.tokens.push_back(prefill_argmax(transformer, cache, prompt.ids));
  const auto start = std::chrono::steady_clock::now();
  const std::vector<int> decoded = greedy_decode(transformer, cache, timings.tokens.front(), steps);
  timings.itl_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count() / std::max(steps, 1);
  timings.tokens.insert(timings.tokens.end(), decoded.begin(), decoded.end());
  return timings;
}

// A test of the fresh process's times, with the comparison fields both tests share filled in.
TestResult compared_test(std::string name, std::string kind, std::string per, const std::vector<double>& samples_ms,
                         const OneShotComparison& shared) {
  TestResult test;
  test.name = std::move(name);
  test.kind = std::move(kind);
  test.time_ms = summarize(samples_ms);
  test.time_per = std::move(per);
  test.one_shot = shared;
  return test;
}

}  // namespace

std::vector<TestResult> one_shot_tests(Transformer& transformer, const BenchOptions& options,
                                       const TestResult& generate_test) {
  const OneShotPrompt& prompt = *options.one_shot;
  const int threads = transformer.pool().num_threads();
  const WeightType weights = transformer.weight_type();
  static_cast<void>(fresh_process(prompt, options, threads, weights));
  static_cast<void>(warm_generation(transformer, prompt, options));
  static_cast<void>(bare_decode(transformer, prompt, options));
  std::vector<double> load, fresh_ttft, fresh_itl, warm_ttft, warm_itl, bare_step;
  bool tokens_identical = true;
  for (int run = 0; run < options.repetitions; ++run) {
    const Timings fresh = fresh_process(prompt, options, threads, weights);
    const Timings warm = warm_generation(transformer, prompt, options);
    const Timings bare = bare_decode(transformer, prompt, options);
    load.push_back(fresh.load_ms);
    fresh_ttft.push_back(fresh.ttft_ms);
    fresh_itl.push_back(fresh.itl_ms);
    warm_ttft.push_back(warm.ttft_ms);
    warm_itl.push_back(warm.itl_ms);
    bare_step.push_back(bare.itl_ms);
    tokens_identical = tokens_identical && fresh.tokens == warm.tokens && bare.tokens == warm.tokens;
  }

  OneShotComparison shared;
  shared.prompt_tokens = static_cast<int>(prompt.ids.size());
  shared.new_tokens = options.generate_tokens;
  shared.tokens_identical = tokens_identical;
  TestResult ttft = compared_test("one-shot ttft", "one_shot_ttft", "call", fresh_ttft, shared);
  OneShotComparison& first = *ttft.one_shot;
  first.against = "warm ttft";
  first.against_ms = summarize(warm_ttft);
  first.target_ratio = kTtftTarget;
  first.load_ms = summarize(load);
  TestResult itl = compared_test("one-shot itl", "one_shot_itl", "token", fresh_itl, shared);
  OneShotComparison& later = *itl.one_shot;
  later.against = "decode step after the prompt";
  later.against_ms = summarize(bare_step);
  later.tg_step_ms = generate_test.time_ms;
  later.tg_name = generate_test.name;
  later.target_ratio = kInterTokenTarget;
  later.warm_itl_ms = summarize(warm_itl);
  for (TestResult* test : {&ttft, &itl}) test->one_shot->ratio = test->time_ms.mean / test->one_shot->against_ms.mean;
  return {ttft, itl};
}

}  // namespace minigen::bench
