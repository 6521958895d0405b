#include "lab/gnuplot_plot.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <string>

#include "core/error.h"
#include "core/file_io.h"
#include "core/planted_links_test_util.h"

namespace minigen::lab {
namespace {

TEST(LabGnuplot, ScriptCarriesTitleAxesLegendAndData) {
  const PlotSpec spec{"t.svg",
                      "Tokens fed, P = 183",
                      "new tokens N",
                      "the model's tokens",
                      false,
                      true,
                      {},
                      {{"with cache", {16, 64}, {198, 246}, "linespoints"}}};
  const std::string script = gnuplot_script(spec);
  EXPECT_NE(script.find("set terminal svg"), std::string::npos);
  EXPECT_EQ(script.find("\nset output"), std::string::npos);  // the SVG goes to stdout, read through a pipe
  EXPECT_NE(script.find("set ylabel 'the model''s tokens'"), std::string::npos);  // quote doubled
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
  const std::string script = gnuplot_script(spec);
  EXPECT_NE(script.find("set encoding utf8\n"), std::string::npos);
  EXPECT_NE(script.find("set title '首个 token 时间'\n"), std::string::npos);
  EXPECT_NE(script.find("title '有缓存'"), std::string::npos);
  EXPECT_NE(script.find("set key inside bottom right box opaque\n"), std::string::npos);
  EXPECT_EQ(script.find("set offsets"), std::string::npos);
}

// issue 43: the top-p histogram's rotated bin labels sat under the markers at 0 and the last one was cut at the
// frame. A categorical axis gets half a bin beside its ends and a right margin, and its labels move down.
TEST(LabGnuplot, BinLabelsKeepClearOfTheMarkersAndTheFrame) {
  const PlotSpec spec{
      "h.svg", "t", "x", "y", false, false, {{0, "1"}, {1, "2–3"}}, {{"a", {0, 1}, {0, 50}, "linespoints"}}};
  const std::string script = gnuplot_script(spec);
  EXPECT_NE(script.find("set offsets 0.5, 0.5, graph 0.12, 0\n"), std::string::npos) << script;
  EXPECT_NE(script.find("set rmargin 10\n"), std::string::npos);
  EXPECT_NE(script.find("set xtics ('1' 0, '2–3' 1)\nset xtics rotate by -35 offset 0, -0.7\n"), std::string::npos)
      << script;
}

TEST(LabGnuplot, UnequalSeriesAreRefused) {
  const PlotSpec spec{"t.svg", "t", "x", "y", false, false, {}, {{"s", {1, 2}, {1}, "lines"}}};
  EXPECT_THROW(gnuplot_script(spec), Error);
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

// gnuplot's path, or "" when it is missing (the tests that draw then skip, saying so).
std::filesystem::path gnuplot_or_empty() {
  try {
    return find_gnuplot();
  } catch (const Error&) {
    return {};
  }
}

// Issue 46 item 3: render_svg wrote its script to $TMPDIR/minigen-lab-<pid>-<plot>.gp (and gnuplot's messages to
// ….stderr) through std::ofstream: a link another user planted there was followed and its target overwritten. The
// script now lives in a private mkdtemp folder, the SVG comes back through a pipe and is written by
// write_file_atomically; links at the old names are left as they were.
TEST(LabGnuplot, DrawingNeverWritesThroughAPlantedLink) {
  const std::filesystem::path gnuplot = gnuplot_or_empty();
  if (gnuplot.empty()) GTEST_SKIP() << "gnuplot is not installed (Debian's gnuplot-nox): the plot is not drawn";
  namespace fs = std::filesystem;
  const fs::path folder = fs::temp_directory_path() / ("minigen_gnuplot_test_" + std::to_string(::getpid()));
  fs::remove_all(folder);
  fs::create_directories(folder / "out");
  testing::PlantedLinks planted(folder / "victims");
  const PlotSpec spec{"planted.svg", "t", "x", "y", false, false, {}, {{"s", {1, 2}, {3, 4}, "lines"}}};
  const std::string old_base =
      (fs::temp_directory_path() / ("minigen-lab-" + std::to_string(::getpid()) + "-" + spec.file_name)).string();
  planted.plant_symbolic(old_base + ".gp");
  planted.plant_hard(old_base + ".stderr");
  const fs::path svg = folder / "out" / spec.file_name;
  render_svg(gnuplot, spec, svg);
  const std::string drawn = read_whole_file(svg, 1 << 20, "svg");
  EXPECT_EQ(drawn.rfind("<?xml", 0), 0u) << drawn.substr(0, 100);
  EXPECT_NE(drawn.find("</svg>"), std::string::npos);
  planted.expect_untouched();
  fs::remove(old_base + ".gp");
  fs::remove(old_base + ".stderr");
  fs::remove_all(folder);
}

// Issue 46 item 5: a lab run on a full disk said "gnuplot failed … (exit status 0)". The SVG is now written by
// minigen itself, so a failure says why; here the output folder is missing (ENOENT), where a full disk says "No space
// left on device" (FileIoTest.AFullDiskIsReportedWithItsErrno shows that errno is kept).
TEST(LabGnuplot, AFailedWriteOfThePlotSaysWhy) {
  const std::filesystem::path gnuplot = gnuplot_or_empty();
  if (gnuplot.empty()) GTEST_SKIP() << "gnuplot is not installed (Debian's gnuplot-nox): the plot is not drawn";
  const PlotSpec spec{"lost.svg", "t", "x", "y", false, false, {}, {{"s", {1, 2}, {3, 4}, "lines"}}};
  const std::filesystem::path svg = std::filesystem::temp_directory_path() / "minigen_no_such_folder" / "lost.svg";
  try {
    render_svg(gnuplot, spec, svg);
    ADD_FAILURE() << "wrote into a missing folder";
  } catch (const Error& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("No such file or directory"), std::string::npos) << message;
    EXPECT_EQ(message.find("gnuplot failed"), std::string::npos) << message;
  }
}

// The same with the write itself failing, as on a full disk: a file size limit below the SVG's size (EFBIG) is
// reported as such, not as "gnuplot failed … (exit status 0)".
TEST(LabGnuplot, APlotThatCannotBeWrittenSaysWhy) {
  const std::filesystem::path gnuplot = gnuplot_or_empty();
  if (gnuplot.empty()) GTEST_SKIP() << "gnuplot is not installed (Debian's gnuplot-nox): the plot is not drawn";
  namespace fs = std::filesystem;
  const fs::path folder = fs::temp_directory_path() / ("minigen_gnuplot_full_" + std::to_string(::getpid()));
  fs::remove_all(folder);
  fs::create_directories(folder);
  const PlotSpec spec{"full.svg", "t", "x", "y", false, false, {}, {{"s", {1, 2}, {3, 4}, "lines"}}};
  const fs::path svg = folder / spec.file_name;
  try {
    const testing::FileSizeLimit limit(2048);  // the script fits; an SVG is some 10 KB
    render_svg(gnuplot, spec, svg);
    ADD_FAILURE() << "wrote past the file size limit";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()), "cannot write " + svg.string() + ": File too large");
  }
  EXPECT_TRUE(fs::is_empty(folder));
  fs::remove_all(folder);
}

}  // namespace
}  // namespace minigen::lab
