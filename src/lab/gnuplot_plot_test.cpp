#include "lab/gnuplot_plot.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <string>

#include "core/error.h"

namespace minigen::lab {
namespace {

TEST(LabGnuplot, ScriptCarriesTitleAxesLegendAndData) {
  const PlotSpec spec{"t.svg",
                      "Tokens fed, P = 183",
                      "new tokens N",
                      "tokens",
                      false,
                      true,
                      {},
                      {{"with cache", {16, 64}, {198, 246}, "linespoints"}}};
  const std::string script = gnuplot_script(spec, "/tmp/out's.svg");
  EXPECT_NE(script.find("set terminal svg"), std::string::npos);
  EXPECT_NE(script.find("set output '/tmp/out''s.svg'"), std::string::npos);  // quote doubled
  EXPECT_NE(script.find("set title 'Tokens fed, P = 183'"), std::string::npos);
  EXPECT_NE(script.find("set xlabel 'new tokens N'"), std::string::npos);
  EXPECT_NE(script.find("set logscale y\nset format y '%g'"), std::string::npos);
  EXPECT_NE(script.find("16 198\n64 246\nEOD"), std::string::npos);
  EXPECT_NE(script.find("with linespoints linewidth 2 title 'with cache'"), std::string::npos);
  // The legend inside the frame (the default corner, top right), with room above the data for its two lines.
  EXPECT_NE(script.find("set key inside top right box opaque\n"), std::string::npos);
  EXPECT_NE(script.find("set offsets 0, 0, graph 0.12, 0\n"), std::string::npos);
}

TEST(LabGnuplot, ChineseLabelsAreWrittenAsUtf8AndAFixedRangeTakesNoOffset) {
  PlotSpec spec{"t.svg",
                "首个 token 时间",
                "提示长度 P（token）",
                "时间 (ms)",
                false,
                false,
                {},
                {{"有缓存", {1}, {2}, "lines"}},
                std::make_pair(0.0, 4.0),
                "bottom right"};
  const std::string script = gnuplot_script(spec, "t.svg");
  EXPECT_NE(script.find("set encoding utf8\n"), std::string::npos);
  EXPECT_NE(script.find("set title '首个 token 时间'\n"), std::string::npos);
  EXPECT_NE(script.find("title '有缓存'"), std::string::npos);
  EXPECT_NE(script.find("set key inside bottom right box opaque\n"), std::string::npos);
  EXPECT_EQ(script.find("set offsets"), std::string::npos);
}

TEST(LabGnuplot, UnequalSeriesAreRefused) {
  const PlotSpec spec{"t.svg", "t", "x", "y", false, false, {}, {{"s", {1, 2}, {1}, "lines"}}};
  EXPECT_THROW(gnuplot_script(spec, "t.svg"), Error);
}

TEST(LabGnuplot, MissingGnuplotNamesTheDebianPackage) {
  const char* saved = std::getenv("PATH");
  const std::string saved_path = saved != nullptr ? saved : "";
  const std::filesystem::path empty = std::filesystem::temp_directory_path() / "minigen_lab_no_gnuplot_here";
  std::filesystem::create_directories(empty);
  ::setenv("PATH", empty.c_str(), 1);
  try {
    find_gnuplot();
    ADD_FAILURE() << "found a gnuplot in an empty directory";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("gnuplot-nox"), std::string::npos) << e.what();
  }
  ::setenv("PATH", saved_path.c_str(), 1);
  std::filesystem::remove_all(empty);
}

}  // namespace
}  // namespace minigen::lab
