// The lab on a learner's own MiniMind checkpoints: random-weight models of the minimind3, minimind3-moe and
// minimind2 layouts saved as fp16 .pth state dicts, with a MiniMind-layout tokenizer trained here that splits the
// genesis text into a different number of tokens than minigen-6400 does. The report's counts and bytes must follow
// the formulas for each model's own shape.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "checkpoint/model_loader.h"
#include "cli/run_binary_test_util.h"
#include "core/error.h"
#include "lab/lab_context.h"
#include "lab/lab_runner.h"
#include "lab/own_models_test_util.h"
#include "lab/zh_report_words_test_util.h"

namespace minigen::lab {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using testing::small_config;
using testing::write_pth;
using testing::write_tokenizer;
using testing::WrittenTokenizer;

fs::path own_models_scratch(const std::string& name) {
  return fs::temp_directory_path() / ("minigen_lab_own_" + std::to_string(::getpid()) + "_" + name);
}

struct OwnModelCase {
  std::string name;
  std::string family;
  uint64_t bytes_at_100_tokens;  // 2 · 2 layers · 100 · kv_heads · 16 · 4 B
  double gqa_ratio;
  bool minimind2_template;
  bool yarn = false;                       // loaded with --yarn: minimind-3's YaRN rope scaling
  Language language = Language::kEnglish;  // the report's; a Chinese one is checked against the glossary too
};

class LabOnOwnModels : public ::testing::TestWithParam<OwnModelCase> {};

// Labelled heavy with the other whole-lab runs.
TEST_P(LabOnOwnModels, QuickLabOnFp16PthCheckpointsHoldsTheFormulasForTheirShape) {
  const OwnModelCase& test = GetParam();
  const fs::path scratch = own_models_scratch(test.family);
  fs::remove_all(scratch);
  fs::create_directories(scratch);
  const WrittenTokenizer written = write_tokenizer(scratch / "tokenizer", test.minimind2_template);
  const fs::path& tokenizer = written.directory;
  const ModelConfig config = small_config(test.family, written.vocab_size);
  const fs::path base = write_pth(scratch, "pretrain_128", config, tokenizer);
  const fs::path sft = write_pth(scratch, "full_sft_128", config, tokenizer);

  LabOptions options;
  options.base_model = base;
  options.sft_model = sft;
  options.out_dir = scratch / "report";
  options.pth_options.num_q_heads = config.num_q_heads;
  options.pth_options.tokenizer_path = tokenizer;
  options.pth_options.yarn = test.yarn;
  options.quick = true;
  options.threads = 2;
  std::ostringstream progress;
  const LabOutcome outcome = run_lab(options, progress, test.language);
  if (test.language == Language::kChinese) {
    // issue 43: a learner's own minimind-3 .pth in a Chinese report writes only the glossary's English.
    const std::string markdown = minigen::testing::read_text_file(outcome.report_json.parent_path() / "report.md");
    ASSERT_NE(markdown.find("## 5. 温度：创造力还是胡言乱语"), std::string::npos);
    const std::set<std::string> kept =
        testing::glossary_english_words(fs::path(MINIGEN_SOURCE_DIR) / "docs" / "zh-glossary.md");
    for (const std::string& word : testing::english_outside_the_glossary(markdown, kept)) ADD_FAILURE() << word;
  }
  const std::string last_section =
      test.language == Language::kChinese ? "] 第 11/11 节：适配器" : " left] section 11/11";
  EXPECT_NE(progress.str().find(last_section), std::string::npos) << "progress lines carry the time left";
  if (test.language == Language::kChinese) {
    EXPECT_NE(progress.str().find("，还剩约 "), std::string::npos);
  }
  const json report = json::parse(minigen::testing::read_text_file(outcome.report_json));
  const json& settings = report["settings"];
  const json& sections = report["sections"];

  EXPECT_EQ(settings["base_model"]["format"], "pth");
  EXPECT_EQ(settings["base_model"]["stored_dtype"], "F16");
  EXPECT_EQ(settings["base_model"]["layers"], 2);
  EXPECT_EQ(settings["base_model"]["kv_heads"], config.num_kv_heads);
  if (config.use_moe) {
    EXPECT_EQ(settings["base_model"]["moe"]["experts"], config.num_experts);
  } else {
    EXPECT_TRUE(settings["base_model"]["moe"].is_null());
  }
  EXPECT_EQ(settings["base_model"]["yarn"], test.yarn);
  // MiniMind's tokenizer layout with a vocabulary that is not minigen-6400's: the shipped Chinese material is chosen,
  // and the report says so.
  EXPECT_EQ(settings["material"]["prompt_text"], "examples/zh/poems.txt");
  EXPECT_EQ(settings["material"]["chat_prompts"], "examples/zh/questions.txt");
  EXPECT_EQ(settings["material"]["eval"], "examples/zh/heldout.jsonl");
  EXPECT_NE(settings["material"]["chinese_set_reason"].get<std::string>().find("MiniMind's"), std::string::npos);
  EXPECT_EQ(sections["temperature"]["settings"][0]["prompts"][0]["prompt"], "“江”是什么意思？");
  // The poems are not 183 tokens with this tokenizer (trained on English: a Chinese character is three byte
  // tokens), yet the prompt is cut to exactly 183.
  EXPECT_GT(settings["genesis_text_prompt_tokens"].get<int>(), 3000);
  EXPECT_EQ(sections["cache_equivalence"]["genesis_prompt_tokens"], 183);
  EXPECT_EQ(sections["cache_equivalence"]["genesis_text_prompt_tokens"], settings["genesis_text_prompt_tokens"]);
  EXPECT_EQ(settings["chat_template"].get<std::string>().rfind(
                test.minimind2_template ? "MiniMind2's template" : "minimind-3's template", 0),
            0u)
      << settings["chat_template"];
  for (const json& run : sections["cache_equivalence"]["runs"]) {
    EXPECT_TRUE(run["token_ids_identical"].get<bool>()) << run["prompt"];
    EXPECT_TRUE(run["logits_bit_identical"].get<bool>()) << run["prompt"];
  }

  const json& forward = sections["forward_tokens"];
  EXPECT_EQ(forward["headline"]["cached_forward_tokens"], 246);      // 183 + 64 − 1
  EXPECT_EQ(forward["headline"]["uncached_forward_tokens"], 13728);  // 183·64 + 64·63/2
  EXPECT_TRUE(forward["all_counts_match_formulas"].get<bool>());
  if (config.use_moe) {
    const json& routing = forward["routing"];
    EXPECT_EQ(routing["cached"]["expert_assignments"], 246 * config.num_experts_per_token * 2);
    EXPECT_EQ(routing["uncached"]["expert_assignments"], 13728 * config.num_experts_per_token * 2);
    EXPECT_EQ(routing["cached"]["tokens_per_expert"].size(), static_cast<std::size_t>(2 * config.num_experts));
  } else {
    EXPECT_FALSE(forward.contains("routing"));
  }

  const json& bytes = sections["cache_bytes"];
  EXPECT_EQ(bytes["bytes_at_100_tokens"].get<uint64_t>(), test.bytes_at_100_tokens);
  EXPECT_EQ(bytes["gqa_ratio"].get<double>(), test.gqa_ratio);
  for (const json& run : bytes["generate_runs"]) {
    EXPECT_EQ(run["kv_bytes_used"].get<uint64_t>(), run["positions"].get<uint64_t>() * test.bytes_at_100_tokens / 100);
  }
  EXPECT_TRUE(sections["seeds"]["same_seed_cache_on_off_identical"].get<bool>());
  EXPECT_TRUE(sections["seeds"]["alone_and_in_batch_identical"].get<bool>());
  // Section 9's f32 cache is this shape's formula and its own reference; bf16 and f16 halve its bytes.
  const json& kv_types = sections["shrinking"]["kv_dtypes"];
  ASSERT_EQ(kv_types.size(), 4u);
  EXPECT_EQ(kv_types[0]["base"]["bytes_at_100_tokens"].get<uint64_t>(), test.bytes_at_100_tokens);
  EXPECT_EQ(kv_types[1]["base"]["bytes_at_100_tokens"].get<uint64_t>(), test.bytes_at_100_tokens / 2);
  EXPECT_EQ(kv_types[0]["base"]["max_abs_logit_delta"].get<double>(), 0.0);
  EXPECT_EQ(kv_types[0]["base"]["agreement_share"].get<double>(), 1.0);
  EXPECT_EQ(sections["shrinking"]["weight_types"].size(), 4u);
  EXPECT_EQ(sections["temperature"]["settings"][0]["prompts"][0]["distinct_answers"], 1);  // greedy
  fs::remove_all(scratch);
}

INSTANTIATE_TEST_SUITE_P(
    Families, LabOnOwnModels,
    ::testing::Values(OwnModelCase{"minimind3", "minimind3", 2 * 2 * 100 * 4 * 16 * 4, 2.0, false, false,
                                   Language::kChinese},
                      OwnModelCase{"minimind3_moe", "minimind3-moe", 2 * 2 * 100 * 4 * 16 * 4, 2.0, false},
                      OwnModelCase{"minimind3_yarn", "minimind3", 2 * 2 * 100 * 4 * 16 * 4, 2.0, false, true},
                      OwnModelCase{"minimind2", "minimind2", 2 * 2 * 100 * 2 * 16 * 4, 4.0, true}),
    [](const auto& info) { return info.param.name; });

// A model whose context cannot hold the experiment is refused before anything runs; one that holds it but not the
// longest grid points gets a cut grid, and the cut is written down.
TEST(LabOnOwnModelsContext, ShortContextIsRefusedOrTheGridIsCut) {
  const fs::path scratch = own_models_scratch("context");
  fs::remove_all(scratch);
  const WrittenTokenizer written = write_tokenizer(scratch / "tokenizer", false);
  const fs::path& tokenizer = written.directory;
  ModelConfig config = small_config("minimind3", written.vocab_size);
  config.num_layers = 1;
  for (const int context : {200, 300}) {
    config.max_position_embeddings = context;
    const fs::path model = scratch / ("context-" + std::to_string(context));
    save_model_directory(model, config, random_weights(config, 3), tokenizer, DType::kF32);
    LabOptions options;
    options.base_model = model;
    options.sft_model = model;
    options.quick = true;
    options.threads = 1;
    std::ostringstream progress;
    if (context == 200) {
      try {
        LabContext lab(options, progress);
        ADD_FAILURE() << "a 200-position model was accepted";
      } catch (const Error& error) {
        EXPECT_STREQ(error.what(),
                     "--base: the model's context is 200 positions; the lab's experiment needs 247 (a 183-token "
                     "prompt and 64 new tokens)");
      }
      continue;
    }
    LabContext lab(options, progress);
    EXPECT_EQ(lab.scale().ttft_prompt_tokens, (std::vector<int>{16, 64, 183}));
    EXPECT_EQ(lab.scale().kv_max_length, 300);
    ASSERT_EQ(lab.scale().cuts.size(), 1u);
    EXPECT_EQ(lab.scale().cuts[0], "TTFT prompt lengths P = 384 left out (the base model's context is 300 positions)");
  }
  fs::remove_all(scratch);
}

}  // namespace
}  // namespace minigen::lab
