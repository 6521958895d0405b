// Issue 43: under MINIGEN_LANG=zh (or the lab's --lang zh) minigen speaks Chinese on the terminal — its error line,
// translated where the error has a translation, and the lab's progress lines. Output other programs read does not
// change.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "cli/run_binary_test_util.h"
#include "core/message_language.h"
#include "core/translated_error.h"

namespace minigen {
namespace {

namespace fs = std::filesystem;
using testing::RunOptions;
using testing::RunResult;

fs::path chinese_scratch() { return fs::temp_directory_path() / ("minigen_cli_zh_" + std::to_string(::getpid())); }

RunResult run_in_chinese(const std::string& arguments) {
  RunOptions options;
  options.environment = "MINIGEN_LANG=zh_CN.UTF-8";
  return testing::run_minigen(arguments, chinese_scratch(), options);
}

TEST(ChineseMessages, MinigenLangZhTranslatesTheErrorLine) {
  RunResult result = run_in_chinese("generate -m minigen-tiny-sf -p hi");
  EXPECT_EQ(result.exit_code, 1);
  EXPECT_EQ(result.err, "minigen：错误：找不到模型：minigen-tiny-sf（是指自带的模型 “minigen-tiny-sft” 吗？）\n");
  result = run_in_chinese("generate -m no-such-model -p hi");
  EXPECT_EQ(result.err,
            "minigen：错误：找不到模型：no-such-model（这里没有这个文件或文件夹，它也不是自带的模型："
            "minigen-tiny-base、minigen-tiny-sft）\n");
  // An error with no translation keeps its English words after the Chinese prefix, and its exit code.
  result = run_in_chinese("generate -p hi --temperature -1");
  EXPECT_EQ(result.exit_code, 1);
  EXPECT_TRUE(result.err.starts_with("minigen：错误：--temperature must be >= 0")) << result.err;
  // The same commands without MINIGEN_LANG: English, as before.
  result = testing::run_minigen("generate -m minigen-tiny-sf -p hi", chinese_scratch());
  EXPECT_EQ(result.err,
            "minigen: error: model not found: minigen-tiny-sf (did you mean the shipped model "
            "'minigen-tiny-sft'?)\n");
}

TEST(ChineseMessages, TheLabsLangZhSpeaksChineseWithoutTheEnvironment) {
  const fs::path out = chinese_scratch() / "report";
  fs::create_directories(out);
  std::ofstream(out / "report.md") << "an earlier report\n";
  const RunResult result =
      testing::run_minigen("lab --lang zh --quick --out '" + out.string() + "'", chinese_scratch());
  EXPECT_EQ(result.exit_code, 1);
  EXPECT_EQ(result.err,
            "minigen：错误：" + out.string() + " 里已经有 report.md；请换一个空的或新的文件夹，或加上 --force 覆盖\n");
  EXPECT_EQ(testing::read_text_file(out / "report.md"), "an earlier report\n");
  fs::remove_all(chinese_scratch());
}

TEST(ChineseMessages, APrefixKeepsTheTranslation) {
  try {
    rethrow_with_prefix(TranslatedError("model x does not exist", "模型 x 不存在"), "--base: ", "--base：");
  } catch (const TranslatedError& error) {
    EXPECT_STREQ(error.what(), "--base: model x does not exist");
    EXPECT_EQ(error.chinese(), "--base：模型 x 不存在");
  }
  try {
    rethrow_with_prefix(Error("bad header"), "--sft: ", "--sft：");
  } catch (const TranslatedError& error) {
    EXPECT_EQ(error.chinese(), "--sft：bad header");  // untranslated: the English after the Chinese prefix
  }
}

}  // namespace
}  // namespace minigen
