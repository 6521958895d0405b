// What the lab's report tests share: a section rendered on its own, and checks that fail with the whole text, so a
// changed sentence shows beside the expected one.
#pragma once

#include <gtest/gtest.h>

#include <string>

#include "lab/section_reports.h"

namespace minigen::lab {

inline std::string markdown_of(const ReportSection& section) {
  LabReport report;
  report.sections.push_back(section);
  return render_markdown(report);
}

inline void expect_says(const std::string& text, const std::string& part) {
  EXPECT_NE(text.find(part), std::string::npos) << "missing: " << part << "\nin:\n" << text;
}

inline void expect_not_says(const std::string& text, const std::string& part) {
  EXPECT_EQ(text.find(part), std::string::npos) << "unexpected: " << part << "\nin:\n" << text;
}

}  // namespace minigen::lab
