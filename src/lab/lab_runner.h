#pragma once
// `minigen lab` as a library call: runs the eleven sections of the KV-cache and sampling module (the eleventh: LoRA
// adapters), with progress on a stream, and writes report.md, report.json and the SVG plots into the output directory.
#include <filesystem>
#include <ostream>
#include <string>
#include <vector>

#include "lab/lab_context.h"
#include "lab/report_language.h"

namespace minigen::lab {

struct LabOutcome {
  std::vector<std::string> summary;  // one headline line per finding, numbered by section
  std::filesystem::path report_markdown;
  std::filesystem::path report_json;
  std::vector<std::filesystem::path> plots;
  double elapsed_s = 0;
  double estimated_s = 0;         // the estimate made before the sections ran
  std::vector<std::string> cuts;  // what was cut from the default sizes, and why
};

// Throws minigen::Error for a missing model, an output path that is not a directory, or a missing gnuplot — all
// before any section runs — and for any failure after, in which case no report.md or report.json is written.
// `language` is the report's (report.md and the plots' labels); report.json's numbers are the same in every language.
LabOutcome run_lab(const LabOptions& options, std::ostream& progress, Language language = Language::kEnglish);

}  // namespace minigen::lab
