#pragma once
// Plots for the lab report, drawn by gnuplot (Debian package gnuplot-nox) as SVG. The plot is plain data; the
// script is generated from it, written to a private temporary folder, and run by gnuplot as a child process.
#include <filesystem>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace minigen::lab {

struct PlotSeries {
  std::string title;  // the legend entry
  std::vector<double> x;
  std::vector<double> y;
  std::string style = "linespoints";  // gnuplot's `with` clause: linespoints, lines, points, steps, boxes
};

struct PlotSpec {
  std::string file_name;  // e.g. "forward_tokens.svg", written into the output directory
  std::string title;
  std::string x_label;  // with the unit: "new tokens N"
  std::string y_label;  // with the unit: "wall time (ms)"
  bool log_x = false;
  bool log_y = false;
  // Named ticks for a categorical x axis (histogram bins): (x position, label). Empty: numeric ticks.
  std::vector<std::pair<double, std::string>> x_tick_labels;
  std::vector<PlotSeries> series;
  // Fixed y range, when lines along the automatic range's edge would hide in the frame. Empty: automatic.
  std::optional<std::pair<double, double>> y_range = std::nullopt;
  // Where the legend sits inside the frame (gnuplot's `set key` position): the corner the data leaves empty.
  std::string key_position = "top right";
};

// gnuplot's path on PATH. Throws minigen::Error naming the Debian package when it is missing.
std::filesystem::path find_gnuplot();

// The gnuplot script that draws `spec` as SVG on stdout (data inline as here-documents).
std::string gnuplot_script(const PlotSpec& spec);

// Draws `spec` into `svg_path` (the lab's OutputDirectory gives a path in its private folder, renamed with the
// report) through write_file_atomically. Throws minigen::Error with gnuplot's own message when it fails, or with the
// reason the script or the SVG could not be written ("No space left on device"), leaving no file at `svg_path`.
void render_svg(const std::filesystem::path& gnuplot, const PlotSpec& spec, const std::filesystem::path& svg_path);

}  // namespace minigen::lab
