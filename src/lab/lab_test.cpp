// End-to-end: the quick lab on the shipped models, checked against the module's invariants in report.json — exact
// counts, bytes and token equality, never timings — and the command's handling of bad input.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <utility>

#include "checkpoint/model_loader.h"
#include "cli/run_binary_test_util.h"
#include "core/error.h"
#include "lab/lab_context.h"
#include "lab/lab_runner.h"
#include "lab/section_measures.h"
#include "lab/section_reports.h"
#include "lab/zh_report_words_test_util.h"

namespace minigen::lab {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

using minigen::testing::read_text_file;

fs::path lab_scratch(const std::string& name) {
  return fs::temp_directory_path() / ("minigen_lab_test_" + std::to_string(::getpid()) + "_" + name);
}

int64_t cached_formula(int64_t p, int64_t n) { return p + n - 1; }
int64_t uncached_formula(int64_t p, int64_t n) { return p * n + n * (n - 1) / 2; }

void expect_counts_match_formulas(const json& point) {
  const int64_t p = point["prompt_tokens"];
  const int64_t n = point["new_tokens"];
  EXPECT_EQ(point["cached"]["forward_tokens"].get<int64_t>(), cached_formula(p, n)) << "P " << p << " N " << n;
  if (!point["uncached"].is_null()) {
    EXPECT_EQ(point["uncached"]["forward_tokens"].get<int64_t>(), uncached_formula(p, n)) << "P " << p << " N " << n;
  }
}

// The quick lab on the shipped models, on two threads: what the single-section tests measure with.
LabOptions shipped_models_quick() {
  const fs::path models = minigen_home() / "models";
  LabOptions options;
  options.base_model = models / "minigen-tiny-base";
  options.sft_model = models / "minigen-tiny-sft";
  options.quick = true;
  options.threads = 2;
  return options;
}

// Labelled heavy (src/CMakeLists.txt): the sanitizer pass leaves the whole quick lab to the Release pass.
TEST(LabQuick, ReportHoldsTheModuleInvariantsFor183PromptTokens) {
  const fs::path models = minigen_home() / "models";
  const fs::path out = lab_scratch("quick");
  fs::remove_all(out);
  LabOptions options;
  options.base_model = models / "minigen-tiny-base";
  options.sft_model = models / "minigen-tiny-sft";
  options.out_dir = out;
  options.quick = true;
  std::ostringstream progress;
  const LabOutcome outcome = run_lab(options, progress);
  const json report = json::parse(read_text_file(out / "report.json"));
  const json& sections = report["sections"];

  // 1. Cache on and off: identical token ids and bit-identical logits, for the 183-token prompt among others.
  const json& equivalence = sections["cache_equivalence"];
  bool saw_183_greedy = false;
  for (const json& run : equivalence["runs"]) {
    EXPECT_TRUE(run["token_ids_identical"].get<bool>()) << run["prompt"];
    EXPECT_EQ(run["token_ids_cached"], run["token_ids_uncached"]) << run["prompt"];
    EXPECT_EQ(run["token_ids_cached"].size(), 64u);
    EXPECT_EQ(run["max_abs_logit_difference"].get<double>(), 0.0) << run["prompt"];
    EXPECT_TRUE(run["logits_bit_identical"].get<bool>()) << run["prompt"];
    saw_183_greedy = saw_183_greedy || (run["prompt_tokens"] == 183 && run["decoding"] == "greedy");
  }
  EXPECT_TRUE(saw_183_greedy);
  EXPECT_EQ(equivalence["genesis_prompt_tokens"].get<int>(), 183);

  // 2. Tokens fed to forward equal P + N − 1 and P·N + N(N−1)/2 at every point; 246 against 13,728 for 183 / 64.
  const json& forward = sections["forward_tokens"];
  ASSERT_FALSE(forward["grid"].empty());
  for (const json& point : forward["grid"]) expect_counts_match_formulas(point);
  ASSERT_FALSE(forward["sweep_at_183"].empty());
  for (const json& point : forward["sweep_at_183"]) expect_counts_match_formulas(point);
  EXPECT_EQ(forward["headline"]["cached_forward_tokens"].get<int64_t>(), 246);
  EXPECT_EQ(forward["headline"]["uncached_forward_tokens"].get<int64_t>(), 13728);

  // 4. Bytes used = 2 · layers · length · kv_heads · head_dim · 4 at every length; 204,800 B at 100 tokens; GQA 4×.
  const json& bytes = sections["cache_bytes"];
  const json& config = bytes["config"];
  const uint64_t layers = config["layers"];
  const uint64_t kv_heads = config["kv_heads"];
  const uint64_t head_dim = config["head_dim"];
  EXPECT_EQ(config["bytes_per_element"].get<int>(), 4);
  EXPECT_EQ(config["kv_dtype"], "f32");
  // What each --kv-dtype would cost this model per token: 2 · 4 · 2 · 32 · bytes (+ int8: 2 · 4 · 2 · 4 of scales).
  const json& dtypes = bytes["kv_dtypes"];
  ASSERT_EQ(dtypes.size(), 4u);
  const std::pair<std::string, uint64_t> expected_dtypes[] = {
      {"f32", 2048}, {"bf16", 1024}, {"f16", 1024}, {"int8", 576}};
  for (std::size_t i = 0; i < 4; ++i) {
    EXPECT_EQ(dtypes[i]["kv_dtype"], expected_dtypes[i].first);
    EXPECT_EQ(dtypes[i]["kv_bytes_per_token"].get<uint64_t>(), expected_dtypes[i].second);
  }
  const json& lengths = bytes["lengths"];
  ASSERT_EQ(lengths.size(), bytes["bytes_used"].size());
  ASSERT_GE(lengths.size(), 100u);
  for (std::size_t i = 0; i < lengths.size(); ++i) {
    const uint64_t length = lengths[i];
    ASSERT_EQ(length, i + 1);
    ASSERT_EQ(bytes["bytes_used"][i].get<uint64_t>(), 2 * layers * length * kv_heads * head_dim * 4) << length;
  }
  EXPECT_EQ(bytes["bytes_at_100_tokens"].get<uint64_t>(), 204800u);
  ASSERT_FALSE(bytes["generate_runs"].empty());
  for (const json& run : bytes["generate_runs"]) {
    EXPECT_EQ(run["kv_bytes_used"].get<uint64_t>(),
              2 * layers * run["positions"].get<uint64_t>() * kv_heads * head_dim * 4);
  }
  EXPECT_EQ(bytes["generate_runs"][0]["kv_bytes_used"].get<uint64_t>(), 204800u);
  EXPECT_EQ(bytes["gqa_ratio"].get<double>(), config["q_heads"].get<double>() / config["kv_heads"].get<double>());
  EXPECT_EQ(bytes["gqa_ratio"].get<double>(), 4.0);

  // 5–7. The sampling sections ran: greedy gives one answer per prompt; padding is counted.
  const json& temperature = sections["temperature"];
  ASSERT_FALSE(temperature["settings"].empty());
  EXPECT_TRUE(temperature["settings"][0]["greedy"].get<bool>());
  ASSERT_FALSE(temperature["settings"][0]["prompts"].empty());
  for (const json& prompt : temperature["settings"][0]["prompts"]) EXPECT_EQ(prompt["distinct_answers"], 1);
  int top_k_filters = 0;
  for (const json& filter : sections["top_p"]["filters"]) {
    if (filter["filter"] == "top-k 50") {
      ++top_k_filters;
      EXPECT_EQ(filter["min"], 50);
      EXPECT_EQ(filter["max"], 50);
    }
    EXPECT_GE(filter["min"].get<int>(), 1);
  }
  EXPECT_EQ(top_k_filters, 1);  // the loop above checked it
  EXPECT_TRUE(sections["eos_padding"].contains("total_padding_row_steps"));

  // 8. Same seed: the same answer with the cache on or off; greedy too.
  EXPECT_TRUE(sections["seeds"]["same_seed_cache_on_off_identical"].get<bool>());
  EXPECT_TRUE(sections["seeds"]["greedy_cache_on_off_identical"].get<bool>());
  EXPECT_TRUE(sections["seeds"]["alone_and_in_batch_identical"].get<bool>());

  // 9. Shrinking: one row per KV type and per weight type. The bytes are the formula's (int8: 1 B per element plus
  // 2 · 4 layers · 100 · 2 kv heads · 4 B of scales); the f32 cache is its own reference, so it moves nothing.
  const json& shrinking = sections["shrinking"];
  const json& kv_types = shrinking["kv_dtypes"];
  ASSERT_EQ(kv_types.size(), 4u);
  const std::pair<std::string, uint64_t> expected_bytes_at_100[] = {
      {"f32", 204800}, {"bf16", 102400}, {"f16", 102400}, {"int8", 57600}};
  for (std::size_t i = 0; i < 4; ++i) {
    EXPECT_EQ(kv_types[i]["kv_dtype"], expected_bytes_at_100[i].first);
    for (const char* model : {"base", "sft"}) {
      const json& row = kv_types[i][model];
      EXPECT_EQ(row["bytes_at_100_tokens"].get<uint64_t>(), expected_bytes_at_100[i].second) << model;
      // ⌊1 GiB / (bytes per token · 2,048)⌋: 256 sequences of 2,048 tokens in f32.
      EXPECT_EQ(row["sequences_per_gib"]["2048"].get<int64_t>(),
                static_cast<int64_t>((uint64_t{1} << 30) / (expected_bytes_at_100[i].second / 100 * 2048)))
          << model;
      EXPECT_EQ(row["steps"].get<int64_t>(), 4 * 64) << model;  // 4 prompts × 64 greedy tokens
      EXPECT_GT(row["perplexity"].get<double>(), 1.0) << model;
      EXPECT_LE(row["agreeing_steps"].get<int64_t>(), row["compared_steps"].get<int64_t>()) << model;
      // A row that parts from f32 stops being compared at that step, so a row either agrees throughout or parts once.
      EXPECT_EQ(row["compared_steps"].get<int64_t>() - row["agreeing_steps"].get<int64_t>(),
                row["rows"].get<int64_t>() - row["identical_rows"].get<int64_t>())
          << model;
    }
  }
  for (const char* model : {"base", "sft"}) {
    const json& f32 = kv_types[0][model];
    EXPECT_EQ(f32["max_abs_logit_delta"].get<double>(), 0.0) << model;
    EXPECT_EQ(f32["agreement_share"].get<double>(), 1.0) << model;
    EXPECT_EQ(f32["identical_rows"].get<int64_t>(), 4) << model;
    EXPECT_EQ(f32["compared_steps"].get<int64_t>(), 4 * 64) << model;
    EXPECT_EQ(f32["mean_kl"].get<double>(), 0.0) << model;
    EXPECT_EQ(f32["top1_agreement"].get<double>(), 1.0) << model;
    // A rounded cache does move the logits (int8 most of all), while its perplexity stays within 5 % of f32's.
    EXPECT_GT(kv_types[3][model]["max_abs_logit_delta"].get<double>(), 0.0) << model;
    EXPECT_NEAR(kv_types[3][model]["perplexity"].get<double>(), f32["perplexity"].get<double>(),
                0.05 * f32["perplexity"].get<double>())
        << model;
  }
  const json& weight_types = shrinking["weight_types"];
  ASSERT_EQ(weight_types.size(), 4u);
  const char* expected_weights[] = {"f32", "bf16", "q8", "q4"};
  for (std::size_t i = 0; i < 4; ++i) {
    EXPECT_EQ(weight_types[i]["weights"], expected_weights[i]);
    EXPECT_GT(weight_types[i]["decode_tokens_per_second"].get<double>(), 0.0);
    // Each type reads fewer bytes than the one before it.
    if (i > 0) {
      EXPECT_LT(weight_types[i]["weight_bytes"].get<uint64_t>(), weight_types[i - 1]["weight_bytes"].get<uint64_t>());
    }
  }
  EXPECT_EQ(weight_types[0]["mean_kl"].get<double>(), 0.0);
  EXPECT_EQ(weight_types[0]["top1_agreement"].get<double>(), 1.0);
  EXPECT_GT(weight_types[3]["mean_kl"].get<double>(), weight_types[1]["mean_kl"].get<double>());
  EXPECT_EQ(shrinking["documents"].get<int>(), 20);

  // Section 10: with the schema every answer that ended by eos is a valid document (checked again here), and the
  // mask removed most of the vocabulary on average; without it the SFT model answers in prose.
  const json& constraining = sections["constraining"];
  EXPECT_EQ(constraining["samples"].get<int>(), 8);
  const json& constrained = constraining["constrained"];
  int stopped_and_valid = 0;
  for (const json& text : constrained["texts"]) {
    const json parsed = json::parse(text.get<std::string>(), nullptr, false);
    stopped_and_valid += parsed.is_object() && parsed.contains("word") && parsed.contains("meaning") ? 1 : 0;
  }
  EXPECT_EQ(stopped_and_valid, constrained["parsed"].get<int>());
  EXPECT_GE(constrained["parsed"].get<int>(), constrained["stopped"].get<int>());
  EXPECT_GT(constrained["mean_removed_share"].get<double>(), 0.5);
  EXPECT_LE(constrained["median_kept_candidates"].get<double>(),
            constraining["free"]["median_kept_candidates"].get<double>());
  EXPECT_EQ(constraining["free"]["mean_removed_share"].get<double>(), 0.0);

  // Section 11: B = 0 changes nothing; the sizes are the formula's.
  const json& adapters = sections["adapters"];
  EXPECT_TRUE(adapters["zero_b"]["logits_bit_identical"].get<bool>());
  EXPECT_EQ(adapters["zero_b"]["rows_identical"], adapters["zero_b"]["rows"]);
  EXPECT_EQ(adapters["size"]["parameters"], 65536);
  EXPECT_EQ(adapters["minimind3_size"]["parameters"], 393216);

  // report.md and every plot it shows exist and are not empty.
  const std::string markdown = read_text_file(out / "report.md");
  ASSERT_FALSE(markdown.empty());
  // Image links look like ![title](name.svg). (A plain scan: GCC 12 warns inside <regex> under the sanitizers.)
  int images = 0;
  for (std::size_t at = markdown.find("]("); at != std::string::npos; at = markdown.find("](", at + 2)) {
    const std::size_t end = markdown.find(')', at);
    if (end == std::string::npos) break;
    const std::string target = markdown.substr(at + 2, end - at - 2);
    if (target.size() < 4 || target.compare(target.size() - 4, 4, ".svg") != 0) continue;
    const fs::path plot = out / target;
    ASSERT_TRUE(fs::exists(plot)) << plot;
    EXPECT_GT(fs::file_size(plot), 0u) << plot;
    EXPECT_NE(read_text_file(plot).find("<svg"), std::string::npos) << plot;
    ++images;
  }
  EXPECT_EQ(images, static_cast<int>(outcome.plots.size()));
  EXPECT_GE(images, 9);
  for (const fs::directory_entry& entry : fs::directory_iterator(out)) {
    EXPECT_EQ(entry.path().string().find(".partial"), std::string::npos) << "left over: " << entry.path();
  }
  EXPECT_EQ(outcome.summary.size(), 11u);
  fs::remove_all(out);
}

// issue 43: English was left in the Chinese report ("256 of 256", "in 4 of 4 layers, rank 16", "the first 8 tokens
// of"). The whole quick lab in Chinese on the shipped models: outside code, quotes and the models' own answers, only
// the glossary's English (docs/zh-glossary.md). Labelled heavy with the other whole-lab runs.
TEST(LabQuick, ChineseReportKeepsOnlyTheGlossarysEnglish) {
  const fs::path out = lab_scratch("quick_zh");
  fs::remove_all(out);
  LabOptions options = shipped_models_quick();
  options.out_dir = out;
  std::ostringstream progress;
  run_lab(options, progress, Language::kChinese);
  // The progress lines are Chinese too.
  EXPECT_NE(progress.str().find("，还剩约 "), std::string::npos) << progress.str();
  EXPECT_NE(progress.str().find("] 第 1/11 节：有无 KV 缓存，token 相同\n"), std::string::npos);
  EXPECT_NE(progress.str().find("]   基础模型，贪心解码，P = 183, N = 64，无缓存\n"), std::string::npos);
  EXPECT_NE(progress.str().find("] 用 gnuplot 画图\n"), std::string::npos);
  EXPECT_EQ(progress.str().find("section "), std::string::npos);
  const std::string markdown = read_text_file(out / "report.md");
  ASSERT_NE(markdown.find("## 6. top-p 保留多少个候选"), std::string::npos);
  const std::set<std::string> kept =
      testing::glossary_english_words(fs::path(MINIGEN_SOURCE_DIR) / "docs" / "zh-glossary.md");
  ASSERT_GT(kept.size(), 50u) << "the glossary's list of English words was not found";
  for (const std::string& word : testing::english_outside_the_glossary(markdown, kept)) ADD_FAILURE() << word;
  // The checker itself finds a sentence left in English.
  EXPECT_EQ(testing::english_outside_the_glossary("在 4 of 4 layers 中", kept).size(), 2u);  // "of", "layers"
  EXPECT_TRUE(testing::english_outside_the_glossary("> the model wrote this\n“江”是 `--lang zh`", kept).empty());
  fs::remove_all(out);
}

// One section of the lab on the shipped models, small enough for the sanitizer pass (the whole quick lab is
// heavy): the cache-bytes section, whose numbers are the module's formula.
TEST(LabSections, CacheBytesSectionFollowsTheFormulaOnTheShippedModels) {
  std::ostringstream progress;
  LabContext lab(shipped_models_quick(), progress);
  const ReportSection section = cache_bytes_report(measure_cache_bytes(lab));
  const json& data = section.data;
  EXPECT_EQ(data["bytes_at_100_tokens"].get<uint64_t>(), 204800u);  // 2 · 4 layers · 100 · 2 kv heads · 32 · 4 B
  ASSERT_GE(data["lengths"].size(), 100u);
  EXPECT_EQ(data["bytes_used"][0].get<uint64_t>(), 2048u);  // one token
  EXPECT_EQ(data["gqa_ratio"].get<double>(), 4.0);
}

// Section 11 on the shipped SFT model: its numbers are real ones — B = 0 changes no token and no bit of a logit, the
// bytes are the formula rank · (in + out) per wrapped matrix, and merging in fp32 keeps the answers.
TEST(LabSections, AdaptersSectionOnTheShippedSftModel) {
  std::ostringstream progress;
  LabContext lab(shipped_models_quick(), progress);
  const AdaptersData data = measure_adapters(lab);
  EXPECT_FALSE(data.learners_adapter);
  EXPECT_EQ(data.adapter_summary, "q_proj, o_proj in 4 of 4 layers, rank 16");
  EXPECT_EQ(data.size.parameters, 4 * 2 * 16 * (256 + 256));  // layers · q_proj, o_proj · rank · (in + out)
  EXPECT_EQ(data.size.fp32_bytes(), 4u * 65'536);
  EXPECT_EQ(data.minimind3.parameters, 393'216);
  EXPECT_NEAR(data.relative_size, 0.10, 0.01);
  ASSERT_EQ(data.prompts.size(), 4u);
  EXPECT_EQ(data.new_tokens, 16);

  // The base model's answers up to their eos: at most 16 tokens each, the same positions for every comparison.
  EXPECT_GT(data.zero_b.positions, 0);
  EXPECT_LE(data.zero_b.positions, 4 * 16);
  EXPECT_EQ(data.trained.positions, data.zero_b.positions);
  EXPECT_TRUE(data.zero_b.logits_bit_identical);
  EXPECT_EQ(data.zero_b.max_abs_logit_delta, 0.0);
  EXPECT_EQ(data.zero_b.mean_kl_nats, 0.0);
  EXPECT_EQ(data.zero_b.rows_identical, 4);
  EXPECT_EQ(data.zero_b.first_differing_step, (std::vector<int>{-1, -1, -1, -1}));

  EXPECT_FALSE(data.trained.logits_bit_identical);  // a B of a tenth of W's size moves the logits
  EXPECT_GT(data.trained.max_abs_logit_delta, 0.0);
  EXPECT_GT(data.trained.mean_kl_nats, 0.0);
  EXPECT_LE(data.trained.top1_agreeing, data.trained.positions);

  ASSERT_TRUE(data.merged.has_value());
  EXPECT_LE(data.merged->max_abs_logit_delta, 1e-3);
  EXPECT_GT(data.merged->top1_share(), 0.9);

  EXPECT_EQ(data.timing.rows, 8);
  EXPECT_EQ(data.timing.base_rows, 2);
  EXPECT_EQ(data.timing.base_ms_per_step.size(), 3u);
  EXPECT_GT(data.timing.mixed_ms_per_step.front(), 0.0);
}

// The learner's adapter in place of the random one: MiniMind's own tiny adapter file (its model_lora.py's save_lora,
// rank 4 on q_proj and o_proj), read against the shipped SFT model's shape; a wrong path is one error naming --lora.
TEST(LabSections, AdaptersSectionMeasuresTheLearnersAdapter) {
  LabOptions options = shipped_models_quick();
  options.lora = fs::path(MINIGEN_TEST_DATA_DIR) / "lora" / "tiny_r4.pth";
  std::ostringstream progress;
  LabContext lab(options, progress);
  const AdaptersData data = measure_adapters(lab);
  EXPECT_TRUE(data.learners_adapter);
  EXPECT_EQ(data.adapter_summary, "q_proj, o_proj in 4 of 4 layers, rank 4");
  EXPECT_EQ(data.size.parameters, 4 * 2 * 4 * (256 + 256));
  EXPECT_GT(data.relative_size, 0.0);
  EXPECT_TRUE(data.zero_b.logits_bit_identical);
  EXPECT_EQ(data.zero_b.rows_identical, 4);

  options.lora = "/nonexistent/adapter.pth";
  try {
    LabContext missing(options, progress);
    ADD_FAILURE() << "no error";
  } catch (const Error& error) {
    EXPECT_EQ(std::string(error.what()).rfind("--lora: ", 0), 0u) << error.what();
  }
}

// Section 2's measurement on the shipped base model returns the module's arithmetic, computed here on its own: with
// the cache P + N − 1 tokens in N forward calls, without it P·N + N(N−1)/2 (heavy: the no-cache runs).
TEST(LabQuick, ForwardTokensMeasureReturnsTheModulesArithmetic) {
  std::ostringstream progress;
  LabContext lab(shipped_models_quick(), progress);
  const ForwardTokensData data = measure_forward_tokens(lab);
  ASSERT_EQ(data.grid.size(), 4u);  // P ∈ {16, 183} × N ∈ {16, 64}
  std::vector<ForwardTokensPoint> points = data.grid;
  points.insert(points.end(), data.sweep_at_183.begin(), data.sweep_at_183.end());
  for (const ForwardTokensPoint& point : points) {
    const int64_t p = point.prompt_tokens;
    const int64_t n = point.new_tokens;
    EXPECT_EQ(point.cached.forward_tokens, p + n - 1) << "P " << p << " N " << n;
    EXPECT_EQ(point.cached.formula, p + n - 1);
    EXPECT_EQ(point.cached.forward_calls, n);
    ASSERT_TRUE(point.uncached_run);  // the quick grid stays under the no-cache guard
    EXPECT_EQ(point.uncached.forward_tokens, p * n + n * (n - 1) / 2) << "P " << p << " N " << n;
    EXPECT_EQ(point.uncached.formula, p * n + n * (n - 1) / 2);
    EXPECT_EQ(point.uncached.forward_calls, n);
  }
  EXPECT_EQ(data.headline.cached.forward_tokens, 246);
  EXPECT_EQ(data.headline.uncached.forward_tokens, 13728);
  ASSERT_EQ(data.formula_new_tokens.size(), 64u);  // N = 1 … the sweep's last N
  EXPECT_EQ(data.cached_formula_curve.front(), 183);
  EXPECT_EQ(data.uncached_formula_curve.back(), 13728);
  EXPECT_FALSE(data.routing.has_value());  // the shipped base model is dense
}

minigen::testing::RunResult run_minigen(const std::string& arguments, const fs::path& scratch) {
  return minigen::testing::run_minigen(arguments, scratch);
}

TEST(LabCommand, MissingModelIsOneClearErrorAndWritesNothing) {
  const fs::path scratch = lab_scratch("missing_model");
  const fs::path out = scratch / "report";
  const minigen::testing::RunResult result =
      run_minigen("lab --quick --base " + (scratch / "no-such-model").string() + " --out " + out.string(), scratch);
  EXPECT_EQ(result.exit_code, 1);
  EXPECT_NE(result.err.find("minigen: error: --base: model"), std::string::npos) << result.err;
  EXPECT_FALSE(fs::exists(out));
  fs::remove_all(scratch);
}

TEST(LabCommand, UnknownFlagFails) {
  const fs::path scratch = lab_scratch("bad_flag");
  const minigen::testing::RunResult result = run_minigen("lab --quick --no-such-flag", scratch);
  EXPECT_NE(result.exit_code, 0);
  EXPECT_LT(result.exit_code, 128);
  EXPECT_NE(result.err.find("no-such-flag"), std::string::npos) << result.err;
  fs::remove_all(scratch);
}

TEST(LabCommand, OutputPathThatIsAFileIsRefused) {
  const fs::path scratch = lab_scratch("out_is_file");
  fs::create_directories(scratch);
  const fs::path file = scratch / "plain-file";
  std::ofstream(file) << "x";
  const minigen::testing::RunResult result = run_minigen("lab --quick --out " + file.string(), scratch);
  EXPECT_EQ(result.exit_code, 1);
  EXPECT_NE(result.err.find("is not a directory"), std::string::npos) << result.err;
  fs::remove_all(scratch);
}

}  // namespace
}  // namespace minigen::lab
