#include "lab/lab_report.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

namespace minigen::lab {
namespace {

TEST(LabReport, MarkdownHasSectionsTablesAndImagesInOrder) {
  LabReport report;
  report.title = "T";
  report.introduction = {"intro"};
  ReportSection section;
  section.key = "k";
  section.title = "First";
  section.paragraph("before");
  section.table(ReportTable{{"a", "b|c"}, {{"1", "x\ny"}}});
  section.plot(PlotSpec{"p.svg", "Plot title", "x (s)", "y (B)", false, false, {}, {{"s", {1}, {2}, "lines"}}},
               "caption");
  section.data["n"] = 3;
  report.sections.push_back(section);
  EXPECT_EQ(render_markdown(report),
            "# T\n\nintro\n\n## 1. First\n\nbefore\n\n| a | b\\|c |\n|---|---|\n| 1 | x y |\n\n"
            "![Plot title](p.svg)\n\n*caption*\n\n");
  // report.json: the title, the settings and each section's numbers under its key — nothing of the prose.
  EXPECT_EQ(
      report_json(report),
      (nlohmann::json{{"title", "T"}, {"settings", nlohmann::json::object()}, {"sections", {{"k", {{"n", 3}}}}}}));
}

TEST(LabReport, PrintableTextReplacesBrokenUtf8AndControlCharacters) {
  EXPECT_EQ(printable_text("a\xff"
                           "b\tc\nd"),
            "a\xEF\xBF\xBD"
            "b c\nd");
  EXPECT_EQ(blockquote("one\ntwo"), "> one\n> two");
}

TEST(LabReport, AtomicWriteLeavesOnlyTheFinalFile) {
  const std::filesystem::path directory =
      std::filesystem::temp_directory_path() / ("minigen_lab_report_test_" + std::to_string(::getpid()));
  std::filesystem::create_directories(directory);
  write_file_atomically(directory / "out.txt", "hello");
  std::ifstream in(directory / "out.txt");
  std::ostringstream text;
  text << in.rdbuf();
  EXPECT_EQ(text.str(), "hello");
  EXPECT_EQ(std::distance(std::filesystem::directory_iterator(directory), std::filesystem::directory_iterator()), 1);
  std::filesystem::remove_all(directory);
}

}  // namespace
}  // namespace minigen::lab
