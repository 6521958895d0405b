#include "lab/lab_report.h"

#include <cstdio>
#include <sstream>

#include "core/error.h"
#include "tokenizer/utf8.h"

namespace minigen::lab {
namespace {

// A table cell holds one line of Markdown: pipes would end the cell and newlines the row.
std::string table_cell(const std::string& text) {
  std::string cell;
  for (char c : text) {
    if (c == '|') {
      cell += "\\|";
    } else if (c == '\n' || c == '\r') {
      cell += ' ';
    } else {
      cell += c;
    }
  }
  return cell;
}

void render_table(const ReportTable& table, std::ostringstream& out) {
  out << "|";
  for (const std::string& heading : table.header) out << " " << table_cell(heading) << " |";
  out << "\n|";
  for (std::size_t i = 0; i < table.header.size(); ++i) out << "---|";
  out << "\n";
  for (const std::vector<std::string>& row : table.rows) {
    if (row.size() != table.header.size()) throw Error("report table row has the wrong number of cells");
    out << "|";
    for (const std::string& cell : row) out << " " << table_cell(cell) << " |";
    out << "\n";
  }
  out << "\n";
}

}  // namespace

std::string render_markdown(const LabReport& report) {
  std::ostringstream out;
  out << "# " << report.title << "\n\n";
  for (const std::string& paragraph : report.introduction) out << paragraph << "\n\n";
  int number = 0;
  for (const ReportSection& section : report.sections) {
    out << "## " << ++number << ". " << section.title << "\n\n";
    for (const ReportBlock& block : section.blocks) {
      if (const auto* paragraph = std::get_if<ReportParagraph>(&block)) {
        out << paragraph->text << "\n\n";
      } else if (const auto* table = std::get_if<ReportTable>(&block)) {
        render_table(*table, out);
      } else if (const auto* plot = std::get_if<ReportPlot>(&block)) {
        out << "![" << plot->spec.title << "](" << plot->spec.file_name << ")\n\n*" << plot->caption << "*\n\n";
      }
    }
  }
  return out.str();
}

nlohmann::json report_json(const LabReport& report) {
  nlohmann::json sections = nlohmann::json::object();
  for (const ReportSection& section : report.sections) sections[section.key] = section.data;
  return {{"title", report.title}, {"settings", report.settings}, {"sections", sections}};
}

std::string printable_text(std::string_view bytes) {
  std::string text;
  for (std::size_t offset = 0; offset < bytes.size();) {
    const Utf8Step step = decode_utf8_step(bytes, offset);
    if (step.kind != Utf8StepKind::kValid) {
      append_utf8(text, kReplacementCharacter);
    } else if (step.code_point < 0x20 && step.code_point != '\n') {
      text += ' ';
    } else {
      text.append(bytes.substr(offset, step.length));
    }
    offset += step.length;
  }
  return text;
}

std::string blockquote(std::string_view text) {
  std::string quoted = "> ";
  for (char c : text) {
    quoted += c;
    if (c == '\n') quoted += "> ";
  }
  return quoted;
}

}  // namespace minigen::lab
