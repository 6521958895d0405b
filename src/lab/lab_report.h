#pragma once
// The lab's report as plain data: sections made of paragraphs, tables and plots in reading order, plus every
// measured number as JSON. Two writers turn it into report.md (for a learner reading top to bottom) and report.json
// (for scripts and the CI test); each output file is written under a temporary name and renamed when complete.
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "core/file_io.h"  // OutputDirectory, with which the runner writes the report
#include "lab/gnuplot_plot.h"

namespace minigen::lab {

struct ReportParagraph {
  std::string text;  // Markdown
};

struct ReportTable {
  std::vector<std::string> header;
  std::vector<std::vector<std::string>> rows;  // each as long as header
};

// A plot the section asks for; the runner renders it to spec.file_name and the markdown shows it as an image.
struct ReportPlot {
  PlotSpec spec;
  std::string caption;
};

using ReportBlock = std::variant<ReportParagraph, ReportTable, ReportPlot>;

struct ReportSection {
  std::string key;    // the section's object name in report.json, e.g. "forward_tokens"
  std::string title;  // the heading in report.md
  std::vector<ReportBlock> blocks;
  nlohmann::json data = nlohmann::json::object();  // every number the section measured
  std::vector<std::string> summary;                // a few headline lines for the console

  void paragraph(std::string text) { blocks.emplace_back(ReportParagraph{std::move(text)}); }
  void table(ReportTable table) { blocks.emplace_back(std::move(table)); }
  void plot(PlotSpec spec, std::string caption) {
    blocks.emplace_back(ReportPlot{std::move(spec), std::move(caption)});
  }
};

struct LabReport {
  std::string title;
  std::vector<std::string> introduction;  // Markdown paragraphs before the first section
  nlohmann::json settings = nlohmann::json::object();
  std::vector<ReportSection> sections;
};

std::string render_markdown(const LabReport& report);
// {"settings": …, "sections": {key: data, …}}
nlohmann::json report_json(const LabReport& report);

// Model output as report text: invalid UTF-8 (a model can stop inside a character) becomes U+FFFD and control
// characters other than newline become spaces.
std::string printable_text(std::string_view bytes);
// Markdown quote block of `text`, one "> " line per line.
std::string blockquote(std::string_view text);

}  // namespace minigen::lab
