// The lab on the learner's own material (`--prompt-text`, `--chat-prompts`, `--eval`) and on one model alone: every
// section measures what the files hold — the prompts' token ids are the text's, the questions are the file's lines,
// section 9 scores exactly the evaluation file's tokens — and a model given alone plays both parts, which the report
// says. Labelled heavy with the other whole-lab runs.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "checkpoint/model_loader.h"
#include "cli/run_binary_test_util.h"
#include "lab/lab_context.h"
#include "lab/lab_runner.h"
#include "lab/section_measures.h"

namespace minigen::lab {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

fs::path scratch_directory(const std::string& name) {
  return fs::temp_directory_path() / ("minigen_lab_inputs_" + std::to_string(::getpid()) + "_" + name);
}

void write_file(const fs::path& path, const std::string& text) { std::ofstream(path, std::ios::binary) << text; }

// A long English text of distinct lines, so that no prompt cut from it repeats a piece of it.
std::string long_text() {
  std::string text;
  for (int line = 1; line <= 80; ++line) {
    text.append("Line ").append(std::to_string(line)).append(": the river that ran past house ");
    text.append(std::to_string(line * 7)).append(" was wide and slow in the evening.\n");
  }
  return text;
}

// bos + the text's first tokens: a prompt of `tokens` tokens cut from the text, as the lab must cut it.
std::vector<int> expected_prompt(const Tokenizer& tokenizer, const std::vector<int>& text_ids, int tokens) {
  std::vector<int> prompt{tokenizer.bos_id()};
  prompt.insert(prompt.end(), text_ids.begin(), text_ids.begin() + (tokens - 1));
  return prompt;
}

const std::vector<std::string> kDocuments = {"The river ran to the sea.", "A fool and his money are soon parted.",
                                             "In the beginning was the word."};

// Every target of a document bos + text + eos is scored: the text's tokens and the eos.
int64_t document_targets(const Tokenizer& tokenizer) {
  int64_t targets = 0;
  for (const std::string& text : kDocuments) targets += static_cast<int64_t>(tokenizer.encode(text).size()) + 1;
  return targets;
}

TEST(LabOnLearnerMaterial, SectionsMeasureTheLearnersFiles) {
  const fs::path scratch = scratch_directory("files");
  fs::remove_all(scratch);
  fs::create_directories(scratch);
  const std::string text = long_text();
  const fs::path text_file = scratch / "my text.txt";
  write_file(text_file, text);
  const fs::path questions_file = scratch / "questions.txt";
  write_file(questions_file, "What is a cat?\nName a colour.\n");
  const fs::path eval_file = scratch / "eval.jsonl";
  std::string eval_lines;
  for (const std::string& document : kDocuments) eval_lines += json{{"text", document}}.dump() + "\n";
  write_file(eval_file, eval_lines);

  const fs::path models = minigen_home() / "models";
  LabOptions options;
  options.base_model = models / "minigen-tiny-base";
  options.sft_model = models / "minigen-tiny-sft";
  options.material = {text_file, questions_file, eval_file};
  options.quick = true;
  options.threads = 2;
  std::ostringstream progress;
  LabContext lab(options, progress);
  const Tokenizer& tokenizer = *lab.base().tokenizer;
  const std::vector<int> text_ids = tokenizer.encode(text);
  ASSERT_GE(text_ids.size(), 384u);
  EXPECT_EQ(lab.prompt_text_tokens(), static_cast<int>(text_ids.size()) + 1);
  EXPECT_TRUE(lab.material().chinese_set_reason.empty());

  // Sections 1–4 cut their prompts from the text: the longest (the quick TTFT prompt) too, not repeated.
  EXPECT_EQ(lab.base_prompt_of_length(384), expected_prompt(tokenizer, text_ids, 384));
  EXPECT_EQ(lab.headline_prompt(), expected_prompt(tokenizer, text_ids, 183));
  const CacheEquivalenceData equivalence = measure_cache_equivalence(lab);
  EXPECT_EQ(equivalence.prompt_text_source, text_file.string());
  ASSERT_EQ(equivalence.runs.size(), 7u);  // four prompts greedy, then the three short ones sampled (--quick)
  const std::vector<int> lengths = {8, 24, 64, 183};
  const std::vector<std::string> kPromptNames = {"the first 8 tokens of `", "the first 24 tokens of `",
                                                 "the first 64 tokens of `", "`"};
  for (std::size_t i = 0; i < equivalence.runs.size(); ++i) {
    const EquivalenceRun& run = equivalence.runs[i];
    const std::size_t prompt = i < 4 ? i : i - 4;
    const int tokens = lengths[prompt];
    EXPECT_EQ(run.prompt_tokens, tokens);
    EXPECT_EQ(run.prompt_token_ids, expected_prompt(tokenizer, text_ids, tokens)) << run.prompt_name;
    EXPECT_EQ(run.prompt_name, kPromptNames[prompt] + text_file.string() + "`");
    EXPECT_EQ(run.token_ids_cached, run.token_ids_uncached) << run.prompt_name;
  }

  // The SFT sections ask the file's questions; section 10 the first.
  const TopPData top_p = measure_top_p(lab);
  EXPECT_EQ(top_p.prompts, (std::vector<std::string>{"What is a cat?", "Name a colour."}));
  EXPECT_EQ(top_p.chat_prompts_source, questions_file.string());
  const SeedData seeds = measure_seeds(lab);
  EXPECT_EQ(seeds.prompt, "What is a cat?");
  ASSERT_EQ(seeds.checks.size(), 5u);
  EXPECT_TRUE(seeds.checks.back().comparison.token_ids_identical);  // alone against row 0 of a batch of 3 (2 questions)
  const ConstrainingData constraining = measure_constraining(lab);
  EXPECT_EQ(constraining.question, "What is a cat?");

  // Section 9 scores the evaluation file, every target once: each document's tokens and its eos.
  const ShrinkingData shrinking = measure_shrinking(lab);
  EXPECT_EQ(shrinking.eval_source, eval_file.string());
  EXPECT_TRUE(shrinking.eval_is_documents);
  EXPECT_EQ(shrinking.documents, 3);
  for (const KvTypeResult& row : shrinking.base_kv) {
    EXPECT_EQ(row.perplexity.targets, document_targets(tokenizer)) << kv_dtype_name(row.dtype);
  }
  for (const KvTypeResult& row : shrinking.sft_kv) {
    EXPECT_EQ(row.perplexity.targets, document_targets(*lab.sft().tokenizer)) << kv_dtype_name(row.dtype);
  }
  for (const WeightTypeResult& row : shrinking.weights) {
    EXPECT_EQ(row.perplexity.targets, document_targets(tokenizer)) << weight_type_name(row.type);
  }
  fs::remove_all(scratch);
}

// Only --base: the SFT sections run on the base model itself (loaded once), and the report says so; a plain-text
// --eval is scored in windows of bos + 256 tokens, every token of the text a target once.
TEST(LabOnLearnerMaterial, BaseModelAlonePlaysBothPartsAndTheReportSaysSo) {
  const fs::path scratch = scratch_directory("base_alone");
  fs::remove_all(scratch);
  fs::create_directories(scratch);
  const std::string eval_text = long_text();
  const fs::path eval_file = scratch / "eval.txt";
  write_file(eval_file, eval_text);
  const fs::path base = minigen_home() / "models" / "minigen-tiny-base";

  LabOptions options;
  options.base_model = base;
  options.material.eval = eval_file;
  options.out_dir = scratch / "report";
  options.quick = true;
  options.threads = 2;
  std::ostringstream progress;
  const LabOutcome outcome = run_lab(options, progress);
  const json report = json::parse(minigen::testing::read_text_file(outcome.report_json));
  const json& settings = report["settings"];
  const json& sections = report["sections"];
  EXPECT_EQ(settings["sft_model"]["path"], base.string());
  EXPECT_EQ(settings["base_model"]["path"], base.string());
  EXPECT_TRUE(settings["models_note"].get<std::string>().starts_with(
      "Only `--base` was given, so the SFT sections (5–8 and 10, and section 9's SFT rows) ran on that same "
      "pretrained model."));
  const std::string markdown = minigen::testing::read_text_file(outcome.report_markdown);
  EXPECT_NE(markdown.find("**Note:** Only `--base` was given"), std::string::npos);
  EXPECT_NE(markdown.find("*Model: SFT, `" + base.string() + "`"), std::string::npos);

  // The rest of the material is the shipped English set (the shipped base model's tokenizer is minigen-6400).
  EXPECT_EQ(settings["material"]["prompt_text"], "examples/genesis-183.txt");
  EXPECT_EQ(settings["material"]["chat_prompts"], "examples/questions.txt");
  EXPECT_EQ(settings["material"]["eval"], eval_file.string());
  EXPECT_EQ(settings["material"]["eval_format"], "plain text");
  EXPECT_EQ(sections["temperature"]["settings"][0]["prompts"][0]["prompt"], "What does 'river' mean?");

  const std::unique_ptr<const Tokenizer> tokenizer = load_tokenizer(base);
  const int64_t text_tokens = static_cast<int64_t>(tokenizer->encode(eval_text).size());
  ASSERT_LE(text_tokens, 20 * 256) << "the quick run scores 20 windows";
  const json& shrinking = sections["shrinking"];
  EXPECT_EQ(shrinking["eval_format"], "plain text");
  EXPECT_EQ(shrinking["documents"].get<int64_t>(), (text_tokens + 255) / 256);
  for (const json& row : shrinking["kv_dtypes"]) {
    EXPECT_EQ(row["base"]["targets"].get<int64_t>(), text_tokens);
    EXPECT_EQ(row["sft"]["targets"].get<int64_t>(), text_tokens);
  }
  for (const json& row : shrinking["weight_types"]) EXPECT_EQ(row["targets"].get<int64_t>(), text_tokens);
  fs::remove_all(scratch);
}

}  // namespace
}  // namespace minigen::lab
