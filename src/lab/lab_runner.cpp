#include "lab/lab_runner.h"

#include <chrono>
#include <functional>

#include "core/error.h"
#include "core/format.h"
#include "core/json_text.h"
#include "lab/gnuplot_plot.h"
#include "lab/lab_report.h"
#include "lab/lab_sections.h"

namespace minigen::lab {
namespace {

namespace fs = std::filesystem;

void check_output_path(const fs::path& out_dir) {
  if (out_dir.empty()) throw Error("--out: give a directory for the report");
  std::error_code error;
  if (fs::exists(out_dir, error) && !fs::is_directory(out_dir, error)) {
    throw Error("--out: " + out_dir.string() + " exists and is not a directory");
  }
}

void create_output_directory(const fs::path& out_dir) {
  std::error_code error;
  fs::create_directories(out_dir, error);
  if (error) throw Error("--out: cannot create " + out_dir.string() + ": " + error.message());
}

nlohmann::json model_json(const LoadedModel& loaded) {
  const ModelConfig& config = loaded.model->config;
  return {{"path", loaded.path.string()}, {"family", identify_family(config)}, {"parameters", config.parameter_count()},
          {"layers", config.num_layers},  {"q_heads", config.num_q_heads},     {"kv_heads", config.num_kv_heads},
          {"head_dim", config.head_dim},  {"vocab_size", config.vocab_size}};
}

std::string model_line(const char* role, const LoadedModel& loaded) {
  const ModelConfig& c = loaded.model->config;
  return std::string("- ") + role + ": `" + loaded.path.string() + "` — " + identify_family(c) + ", " +
         with_thousands(static_cast<long long>(c.parameter_count())) + " parameters, " + std::to_string(c.num_layers) +
         " layers, " + std::to_string(c.num_q_heads) + " query heads, " + std::to_string(c.num_kv_heads) +
         " key/value heads, head_dim " + std::to_string(c.head_dim);
}

std::vector<std::string> introduction(const LabContext& lab, bool quick) {
  return {
      "This report measures what the course module on KV caches and sampling claims, on minigen's own tiny "
      "MiniMind-family models. Every number comes from minigen's generate loop — the same loop as MiniMind's "
      "`generate`, with counters added — or from its cache and configuration code; nothing is estimated. Each "
      "section states a claim, how it was measured, the numbers, and what they mean. The machine-readable numbers are "
      "in `report.json`, the plots are SVG files beside this report.",
      "Two ideas run through the sections. The **KV cache** decides how much is computed: it never changes which "
      "token comes out (sections 1–4). The **sampler** (greedy decoding, temperature, top-p) decides which token is "
      "chosen from the model's distribution (sections 5–8).",
      "Models:\n\n" + model_line("base (pretrained, for the cache sections)", lab.base()) + "\n" +
          model_line("SFT (chat, for the sampling sections)", lab.sft()),
      std::string("Run: ") + (quick ? "`--quick` (smaller grids, fewer repeats and samples)" : "full") + ", " +
          std::to_string(lab.threads()) +
          " threads, fp32 throughout. Times depend on the machine and on what else it "
          "runs; counts, bytes and tokens do not.",
  };
}

}  // namespace

LabOutcome run_lab(const LabOptions& options, std::ostream& progress) {
  const auto start = std::chrono::steady_clock::now();
  // Everything that can be wrong with the input is found before the output directory is touched.
  const fs::path gnuplot = find_gnuplot();
  check_output_path(options.out_dir);
  LabContext lab(options, progress);
  create_output_directory(options.out_dir);
  lab.progress(std::string("loaded the models; running the ") + (options.quick ? "quick" : "full") + " lab");

  LabReport report;
  report.title = "minigen lab: the KV cache and sampling, measured";
  report.introduction = introduction(lab, options.quick);
  report.settings = {{"quick", options.quick},
                     {"threads", lab.threads()},
                     {"base_model", model_json(lab.base())},
                     {"sft_model", model_json(lab.sft())}};

  std::vector<TemperatureBatch> temperature_batches;
  const std::vector<std::pair<const char*, std::function<ReportSection()>>> sections = {
      {"same tokens with and without the cache", [&] { return cache_equivalence_section(lab); }},
      {"tokens entering forward", [&] { return forward_tokens_section(lab); }},
      {"time to first token and between tokens", [&] { return timing_section(lab); }},
      {"cache bytes", [&] { return cache_bytes_section(lab); }},
      {"temperature", [&] { return temperature_section(lab, temperature_batches); }},
      {"top-p candidates", [&] { return top_p_section(lab); }},
      {"eos padding in a batch", [&] { return eos_padding_section(temperature_batches); }},
      {"seeds, cache and greedy", [&] { return seed_section(lab); }},
  };
  for (std::size_t i = 0; i < sections.size(); ++i) {
    lab.progress("section " + std::to_string(i + 1) + "/" + std::to_string(sections.size()) + ": " + sections[i].first);
    report.sections.push_back(sections[i].second());
  }

  LabOutcome outcome;
  lab.progress("drawing the plots with gnuplot");
  for (const ReportSection& section : report.sections) {
    for (const ReportBlock& block : section.blocks) {
      if (const auto* plot = std::get_if<ReportPlot>(&block)) {
        render_svg(gnuplot, plot->spec, options.out_dir);
        outcome.plots.push_back(options.out_dir / plot->spec.file_name);
      }
    }
  }
  // report.md last: once it exists, everything it shows exists too.
  outcome.report_json = options.out_dir / "report.json";
  outcome.report_markdown = options.out_dir / "report.md";
  write_file_atomically(outcome.report_json, to_json_text(report_json(report), 1) + "\n");
  write_file_atomically(outcome.report_markdown, render_markdown(report));
  for (std::size_t i = 0; i < report.sections.size(); ++i) {
    for (const std::string& line : report.sections[i].summary) {
      outcome.summary.push_back(std::to_string(i + 1) + ". " + line);
    }
  }
  outcome.elapsed_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  lab.progress("done");
  return outcome;
}

}  // namespace minigen::lab
