// The Chinese text keeps to docs/zh-glossary.md: the words it replaced do not come back, in the lab's report code
// (every zh string of the report is written in src/lab) nor in the Chinese docs.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace minigen {
namespace {

namespace fs = std::filesystem;

std::string read_text(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

TEST(ZhGlossary, TheReplacedWordsAreNotWrittenAnywhere) {
  const fs::path source(MINIGEN_SOURCE_DIR);
  std::vector<fs::path> files = {source / "README.zh-CN.md", source / "docs" / "lab.md"};
  for (const auto& entry : fs::directory_iterator(source / "src" / "lab")) {
    const std::string name = entry.path().filename().string();
    if (name.ends_with(".cpp") && name != "zh_glossary_test.cpp") files.push_back(entry.path());
  }
  ASSERT_GT(files.size(), 20u);
  // docs/zh-glossary.md's right-hand column: MiniMind's README writes "token" (44 times, 令牌 never) and 基础模型;
  // the rest were mistranslations (去除 is "remove", not "divide"; 簿记 is accounting; 核 read "nucleus" as a kernel).
  const std::vector<std::string> replaced = {"令牌", "基座", "簿记", "去除 logits", "核就是", "缩小核"};
  for (const fs::path& file : files) {
    const std::string text = read_text(file);
    ASSERT_FALSE(text.empty()) << file;
    for (const std::string& word : replaced) {
      EXPECT_EQ(text.find(word), std::string::npos) << file << " writes " << word << " (docs/zh-glossary.md)";
    }
  }
}

}  // namespace
}  // namespace minigen
