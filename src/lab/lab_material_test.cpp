// The learner's files for the lab are user input: each way they can be wrong is one clear error naming the flag and
// the file, found before anything is measured or written; and the shipped Chinese set is chosen for MiniMind's
// tokenizer only.
#include "lab/lab_material.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>

#include "checkpoint/model_loader.h"
#include "cli/run_binary_test_util.h"
#include "core/error.h"
#include "lab/lab_context.h"
#include "lab/lab_runner.h"
#include "lab/own_models_test_util.h"

namespace minigen::lab {
namespace {

namespace fs = std::filesystem;

class LabMaterialInput : public ::testing::Test {
 protected:
  void SetUp() override {
    scratch_ = fs::temp_directory_path() / ("minigen_lab_material_" + std::to_string(::getpid()) + "_" +
                                            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(scratch_);
    fs::create_directories(scratch_);
  }
  void TearDown() override { fs::remove_all(scratch_); }

  fs::path write(const std::string& name, const std::string& bytes) const {
    const fs::path path = scratch_ / name;
    std::ofstream(path, std::ios::binary) << bytes;
    return path;
  }

  fs::path scratch_;
};

std::string error_of(const std::function<void()>& call) {
  try {
    call();
  } catch (const Error& error) {
    return error.what();
  }
  return "no error";
}

TEST_F(LabMaterialInput, ReadsEachFileAsTheFlagDescribes) {
  const PromptText text = read_prompt_text(write("text.txt", "\xEF\xBB\xBFIn the beginning.\n"));
  EXPECT_EQ(text.text, "In the beginning.\n");  // the byte-order mark dropped
  EXPECT_FALSE(text.may_repeat);
  EXPECT_TRUE(text.short_prompts.empty());

  const ChatPrompts questions = read_chat_prompts(write("q.txt", "  What is a river?\r\n\n你好吗？\n   \n"));
  EXPECT_EQ(questions.questions, (std::vector<std::string>{"What is a river?", "你好吗？"}));
  EXPECT_EQ(questions.constraining_question, "What is a river?");

  const EvalText documents =
      read_eval_text(write("eval.jsonl", "{\"text\": \"床前明月光\", \"source\": \"x\"}\n\n{\"text\": \"\"}\n"));
  EXPECT_TRUE(documents.documents);
  EXPECT_EQ(documents.texts, (std::vector<std::string>{"床前明月光", ""}));

  const EvalText plain = read_eval_text(write("eval.txt", "{\"text\": \"not parsed\"}\nsecond line\n"));
  EXPECT_FALSE(plain.documents);
  EXPECT_EQ(plain.texts, (std::vector<std::string>{"{\"text\": \"not parsed\"}\nsecond line\n"}));
}

TEST_F(LabMaterialInput, EmptyFilesAreRefused) {
  const fs::path blank = write("blank.txt", " \n\t\n");
  EXPECT_EQ(error_of([&] { read_prompt_text(blank); }), "--prompt-text: " + blank.string() + " holds no text");
  EXPECT_EQ(error_of([&] { read_chat_prompts(blank); }),
            "--chat-prompts: " + blank.string() + " holds no questions (one question per line)");
  EXPECT_EQ(error_of([&] { read_eval_text(blank); }), "--eval: " + blank.string() + " holds no text");
  const fs::path empty_jsonl = write("empty.jsonl", "\n\n");
  EXPECT_EQ(error_of([&] { read_eval_text(empty_jsonl); }),
            "--eval: " + empty_jsonl.string() + " holds no documents (one {\"text\": \"…\"} per line)");
}

TEST_F(LabMaterialInput, BadJsonLinesNameTheLine) {
  const fs::path broken = write("broken.jsonl", "{\"text\": \"one\"}\n{\"text\": \"two\"\n");
  const std::string broken_error = error_of([&] { read_eval_text(broken); });
  EXPECT_TRUE(broken_error.starts_with("--eval: " + broken.string() + ":2 is not valid JSON: ")) << broken_error;
  EXPECT_TRUE(broken_error.ends_with(" (a .jsonl file holds one {\"text\": \"…\"} per line)")) << broken_error;

  const fs::path no_text = write("no_text.jsonl", "{\"text\": \"one\"}\n{\"content\": \"two\"}\n");
  EXPECT_EQ(error_of([&] { read_eval_text(no_text); }),
            "--eval: " + no_text.string() +
                ":2 has no string field \"text\" (a .jsonl file holds one {\"text\": \"…\"} per line)");
}

TEST_F(LabMaterialInput, TextThatIsNotUtf8IsRefusedWithItsLine) {
  // Latin-1 "café" on the second line.
  const fs::path latin1 = write("latin1.txt", "first line\ncaf\xE9\n");
  const std::string where = latin1.string() + " is not UTF-8 text (line 2, byte 14); save it as UTF-8";
  EXPECT_EQ(error_of([&] { read_prompt_text(latin1); }), "--prompt-text: " + where);
  EXPECT_EQ(error_of([&] { read_chat_prompts(latin1); }), "--chat-prompts: " + where);
  EXPECT_EQ(error_of([&] { read_eval_text(latin1); }), "--eval: " + where);
}

TEST_F(LabMaterialInput, MissingFilesAndDirectoriesAreRefused) {
  const fs::path missing = scratch_ / "missing.txt";
  EXPECT_EQ(error_of([&] { read_prompt_text(missing); }), "--prompt-text: " + missing.string() + " does not exist");
  EXPECT_EQ(error_of([&] { read_eval_text(scratch_); }), "--eval: " + scratch_.string() + " is not a file");
}

// MiniMind's layout with another vocabulary is MiniMind's tokenizer; minigen-6400 (the same layout) is not. Either
// way a Chinese report reads the Chinese set.
TEST_F(LabMaterialInput, ChineseSetIsChosenForMiniMindsTokenizerOrAChineseReport) {
  const fs::path home = minigen_home();
  const auto minigen_6400 = load_tokenizer(home / "tokenizers" / "minigen-6400");
  EXPECT_FALSE(is_minimind_tokenizer(*minigen_6400, home));
  const LabMaterial english = choose_lab_material({}, *minigen_6400, home);
  EXPECT_EQ(english.prompt_text.source, "examples/genesis-183.txt");
  EXPECT_EQ(english.chat_prompts.source, "examples/questions.txt");
  EXPECT_EQ(english.chat_prompts.questions.size(), 4u);
  EXPECT_EQ(english.chat_prompts.constraining_question, "What does 'river' mean? Answer as JSON.");
  EXPECT_EQ(english.eval.source, "examples/heldout.jsonl");
  EXPECT_EQ(english.prompt_text.short_prompts.size(), 3u);
  EXPECT_TRUE(english.chinese_set_reason.empty());

  const auto learner = load_tokenizer(testing::write_tokenizer(scratch_ / "tokenizer", false).directory);
  EXPECT_TRUE(is_minimind_tokenizer(*learner, home));
  const LabMaterial chinese = choose_lab_material({}, *learner, home);
  EXPECT_EQ(chinese.prompt_text.source, "examples/zh/poems.txt");
  EXPECT_TRUE(chinese.prompt_text.text.starts_with("《感遇・其一》\n作者：张九龄\n"));
  EXPECT_TRUE(chinese.prompt_text.short_prompts.empty());
  EXPECT_EQ(chinese.chat_prompts.source, "examples/zh/questions.txt");
  EXPECT_EQ(chinese.chat_prompts.questions.size(), 12u);
  EXPECT_EQ(chinese.chat_prompts.constraining_question, "“江”是什么意思？");
  EXPECT_EQ(chinese.eval.source, "examples/zh/heldout.jsonl");
  EXPECT_TRUE(chinese.eval.documents);
  EXPECT_EQ(chinese.eval.texts.size(), 96u);  // the Song poems of fortunes-zh's song100 that parse
  EXPECT_FALSE(chinese.chinese_set_reason.empty());
  EXPECT_FALSE(chinese.chinese_set_for_report);

  // A Chinese report (--lang zh) reads the Chinese set with minigen-6400 too (issue 43: the zh report of the shipped
  // models quoted Genesis and "What does 'river' mean?"), and says why.
  LabMaterialFiles zh_report;
  zh_report.chinese_report = true;
  const LabMaterial shipped_zh = choose_lab_material(zh_report, *minigen_6400, home);
  EXPECT_EQ(shipped_zh.prompt_text.source, "examples/zh/poems.txt");
  EXPECT_EQ(shipped_zh.chat_prompts.source, "examples/zh/questions.txt");
  EXPECT_EQ(shipped_zh.eval.source, "examples/zh/heldout.jsonl");
  EXPECT_TRUE(shipped_zh.chinese_set_for_report);
  EXPECT_TRUE(shipped_zh.chinese_set_reason.starts_with("the report is in Chinese (--lang zh)"))
      << shipped_zh.chinese_set_reason;

  // Every file given: nothing shipped is read, and no reason is given.
  LabMaterialFiles files;
  files.prompt_text = write("text.txt", "text");
  files.chat_prompts = write("q.txt", "question");
  files.eval = write("eval.txt", "eval");
  const LabMaterial own = choose_lab_material(files, *learner, home);
  EXPECT_EQ(own.prompt_text.source, files.prompt_text->string());
  EXPECT_EQ(own.chat_prompts.questions, (std::vector<std::string>{"question"}));
  EXPECT_TRUE(own.chinese_set_reason.empty());
}

// A learner's text must hold the longest prompt the run cuts from it (the quick lab's TTFT prompt of 384 tokens).
TEST_F(LabMaterialInput, PromptTextShorterThanTheLongestPromptIsRefusedBeforeAnyRun) {
  LabOptions options;
  options.base_model = minigen_home() / "models" / "minigen-tiny-base";
  options.quick = true;
  options.threads = 1;
  options.material.prompt_text = write("short.txt", "In the beginning God created the heaven and the earth.");
  std::ostringstream progress;
  EXPECT_EQ(error_of([&] { LabContext lab(options, progress); }),
            "--prompt-text: " + options.material.prompt_text->string() +
                " is 12 tokens (with bos) for the base model's tokenizer; the quick lab cuts prompts of up to 384 "
                "tokens from it. Give a longer text.");
  EXPECT_EQ(progress.str(), "") << "nothing was timed";
}

// The command: one error line, exit status 1, and no report directory.
TEST_F(LabMaterialInput, CommandRefusesABadFileAndWritesNothing) {
  const fs::path out = scratch_ / "report";
  const fs::path questions = write("questions.txt", "\n\n");
  const minigen::testing::RunResult result = minigen::testing::run_minigen(
      "lab --quick --chat-prompts " + questions.string() + " --out " + out.string(), scratch_);
  EXPECT_EQ(result.exit_code, 1);
  EXPECT_EQ(result.err,
            "minigen: error: --chat-prompts: " + questions.string() + " holds no questions (one question per line)\n");
  EXPECT_FALSE(fs::exists(out));
}

}  // namespace
}  // namespace minigen::lab
