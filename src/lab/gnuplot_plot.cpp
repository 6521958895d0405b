#include "lab/gnuplot_plot.h"

#include <unistd.h>

#include <cstdlib>
#include <sstream>

#include "core/child_process.h"
#include "core/error.h"
#include "core/file_io.h"
#include "core/translated_error.h"

namespace minigen::lab {
namespace {

namespace fs = std::filesystem;

// gnuplot's single-quoted strings take every character literally except the quote itself, written twice.
std::string quoted(const std::string& text) {
  std::string out = "'";
  for (char c : text) {
    out += c;
    if (c == '\'') out += '\'';
  }
  return out + "'";
}

// gnuplot's messages about a script we wrote: a few lines; more than a megabyte is cut off rather than read.
std::string read_text(const fs::path& path) {
  constexpr uint64_t kMaxMessageBytes = uint64_t{1} << 20;
  try {
    return read_whole_file(path, kMaxMessageBytes, "gnuplot error log");
  } catch (const Error& error) {
    return error.what();
  }
}

}  // namespace

fs::path find_gnuplot() {
  const char* path_variable = std::getenv("PATH");
  std::istringstream directories(path_variable != nullptr ? path_variable : "/usr/bin:/bin");
  std::string directory;
  while (std::getline(directories, directory, ':')) {
    if (directory.empty()) continue;
    const fs::path candidate = fs::path(directory) / "gnuplot";
    if (::access(candidate.c_str(), X_OK) == 0) return candidate;
  }
  throw TranslatedError(
      "gnuplot was not found on PATH; the lab draws its plots with it: install Debian's package gnuplot-nox "
      "(apt-get install gnuplot-nox)",
      "在 PATH 上找不到 gnuplot；lab 用它画图：请安装 Debian 的 gnuplot-nox 包（apt-get install gnuplot-nox）");
}

std::string gnuplot_script(const PlotSpec& spec) {
  std::ostringstream script;
  script.precision(10);
  // noenhanced: titles are printed as written (no ^ or _ markup); a white background keeps dark-mode viewers legible.
  // The SVG names the font family "sans" and the viewer draws it: Chinese labels come from the viewer's CJK fallback
  // for sans (e.g. Noto Sans CJK or Droid Sans Fallback); the text is written as UTF-8 (`set encoding utf8`).
  // The legend sits inside the frame with an opaque box, so the plot keeps the whole width. No `set output`: the SVG
  // goes to stdout, which render_svg reads through a pipe and writes itself.
  script << "set encoding utf8\n"
         << "set terminal svg size 860,520 dynamic noenhanced font 'sans,13' background rgb 'white'\n"
         << "set title " << quoted(spec.title) << "\n"
         << "set xlabel " << quoted(spec.x_label) << "\n"
         << "set ylabel " << quoted(spec.y_label) << "\n"
         << "set grid\n"
         << "set key inside " << spec.key_position << " box opaque\n";
  // On a log axis gnuplot's default labels print every decade with the smallest one's decimals (100.00000000);
  // %g writes each as itself (1e-08, 0.0001, 100).
  if (spec.log_x) script << "set logscale x\nset format x '%g'\n";
  if (spec.log_y) script << "set logscale y\nset format y '%g'\n";
  if (spec.y_range) script << "set yrange [" << spec.y_range->first << ":" << spec.y_range->second << "]\n";
  // A legend inside the top of the frame needs room above the data, or it hides the highest points: an automatic
  // y range grows by one legend line (~6 % of the frame) per series.
  const double top = !spec.y_range && spec.key_position.find("top") != std::string::npos
                         ? 0.06 * static_cast<double>(spec.series.size() + 1)
                         : 0.0;
  // A categorical axis: half a bin beside the first and last and a right margin, so that the last rotated bin label
  // is not cut at the frame; the labels move down (below) out from under the markers drawn at 0.
  const bool categorical = !spec.x_tick_labels.empty();
  if (top > 0 || categorical) {
    script << "set offsets " << (categorical ? "0.5, 0.5" : "0, 0") << ", graph " << top << ", 0\n";
  }
  if (categorical) script << "set rmargin 10\n";
  if (!spec.x_tick_labels.empty()) {
    script << "set xtics (";
    for (std::size_t i = 0; i < spec.x_tick_labels.size(); ++i) {
      script << (i == 0 ? "" : ", ") << quoted(spec.x_tick_labels[i].second) << " " << spec.x_tick_labels[i].first;
    }
    script << ")\n"
           << "set xtics rotate by -35 offset 0, -0.7\n";  // "1025–2048" would overlap its neighbours level
  }
  for (std::size_t s = 0; s < spec.series.size(); ++s) {
    const PlotSeries& series = spec.series[s];
    if (series.x.size() != series.y.size()) throw Error("plot series '" + series.title + "' has unequal x and y");
    script << "$series" << s << " << EOD\n";
    for (std::size_t i = 0; i < series.x.size(); ++i) script << series.x[i] << " " << series.y[i] << "\n";
    script << "EOD\n";
  }
  if (spec.series.empty()) throw Error("plot " + spec.file_name + " has no data");
  script << "plot ";
  for (std::size_t s = 0; s < spec.series.size(); ++s) {
    script << (s == 0 ? "" : ", \\\n     ") << "$series" << s << " using 1:2 with " << spec.series[s].style
           << " linewidth 2 title " << quoted(spec.series[s].title);
  }
  script << "\nunset output\n";
  return script.str();
}

void render_svg(const fs::path& gnuplot, const PlotSpec& spec, const fs::path& svg_path) {
  // The script and gnuplot's messages live in a folder only this user can enter (a fixed name in $TMPDIR could be a
  // link another user planted); the SVG comes back through a pipe and is written here, so that a full disk is
  // reported as such ("No space left on device") rather than as an empty plot.
  const PrivateTemporaryDirectory work("minigen-lab");
  const fs::path script_path = work.path() / "plot.gp";
  const fs::path stderr_path = work.path() / "gnuplot.stderr";
  write_file_atomically(script_path, gnuplot_script(spec));
  constexpr std::size_t kMaxSvgBytes = std::size_t{64} << 20;  // a plot of a few hundred points is some 50 KB
  const CapturedChild drawn = run_child_capturing_stdout(gnuplot, {script_path.string()}, stderr_path, kMaxSvgBytes);
  if (drawn.status != 0 || drawn.stdout_text.find("</svg>") == std::string::npos) {
    throw Error("gnuplot failed to draw " + spec.file_name + " (exit status " + std::to_string(drawn.status) +
                "): " + read_text(stderr_path));
  }
  write_file_atomically(svg_path, drawn.stdout_text);
}

}  // namespace minigen::lab
