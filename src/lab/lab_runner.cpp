#include "lab/lab_runner.h"

#include <chrono>
#include <functional>

#include "checkpoint/model_description.h"
#include "core/error.h"
#include "core/format.h"
#include "core/json_text.h"
#include "lab/gnuplot_plot.h"
#include "lab/lab_report.h"
#include "lab/lab_sections.h"

namespace minigen::lab {
namespace {

namespace fs = std::filesystem;

std::string model_text(const LoadedModel& loaded) {
  const ModelConfig& c = loaded.model->config;
  std::string text = "`" + loaded.path.string() + "` (" + loaded.format + ", " + dtype_name(loaded.stored_dtype) +
                     ") — " + identify_family(c) + ", " + with_thousands(static_cast<long long>(c.parameter_count())) +
                     " parameters, " + std::to_string(c.num_layers) + " layers, " + std::to_string(c.num_q_heads) +
                     " query heads, " + std::to_string(c.num_kv_heads) + " key/value heads, head_dim " +
                     std::to_string(c.head_dim) + ", context " + with_thousands(c.max_position_embeddings);
  if (c.use_moe) {
    text += ", " + std::to_string(c.num_experts) + " experts (top " + std::to_string(c.num_experts_per_token) + ")";
  }
  if (c.rope_scaling) text += ", YaRN ×" + fixed(c.rope_scaling->factor, 0);
  return text;
}

std::vector<std::string> introduction(const LabContext& lab, bool quick) {
  std::vector<std::string> paragraphs = {
      "This report measures what the course module on KV caches and sampling claims, on the models below. Every "
      "number comes from minigen's generate loop — the same loop as MiniMind's `generate`, with counters added — or "
      "from its cache and configuration code; nothing is estimated. Each section states a claim, how it was "
      "measured, the numbers, and what they mean. The machine-readable numbers are in `report.json`, the plots are "
      "SVG files beside this report.",
      "Two ideas run through the sections. The **KV cache** decides how much is computed: it never changes which "
      "token comes out (sections 1–4, on the base model). The **sampler** (greedy decoding, temperature, top-p) "
      "decides which token is chosen from the model's distribution (sections 5–8, on the SFT model). Section 9 shrinks "
      "the cache's and the weights' element types on both models and measures what that gives up; section 10 adds "
      "a grammar stage to the sampler and shows what it takes away.",
      "Models:\n\n- base (pretrained, for the cache sections): " + model_text(lab.base()) +
          "\n- SFT (chat, for the sampling sections): " + model_text(lab.sft()),
      "Prompts are built with each model's own tokenizer. The genesis text (`examples/genesis-183.txt`) is " +
          std::to_string(lab.genesis_text_prompt_tokens()) +
          " tokens with bos for the base model's tokenizer; every prompt of P tokens is that token sequence cut "
          "or repeated to exactly P, so the 183-token prompt is 183 tokens for any tokenizer. Chat prompts use " +
          lab.chat_format().description + ", thinking off.",
      std::string("Run: ") + (quick ? "`--quick` (smaller grids, fewer repeats and samples)" : "full") + ", " +
          std::to_string(lab.threads()) + " threads, weights read as " +
          std::string(weight_type_name(lab.weight_type())) +
          ". Times depend on the machine and on what else it runs; counts, bytes and tokens do not.",
  };
  const LabScale& scale = lab.scale();
  if (!scale.cuts.empty()) {
    std::string cuts = "Cut from the default sizes (the estimate at full size was " +
                       duration_text(lab.estimate().estimated_seconds_before) + "):";
    for (const std::string& cut : scale.cuts) cuts += "\n- " + cut;
    paragraphs.push_back(cuts);
  }
  return paragraphs;
}

nlohmann::json cost_json(const ForwardCost& cost) {
  return {{"seconds_per_call", cost.seconds_per_call},
          {"seconds_per_token", cost.seconds_per_token},
          {"seconds_per_attention_pair", cost.seconds_per_attention_pair},
          {"seconds_per_row_step", cost.seconds_per_row_step}};
}

// Estimated against measured seconds per section, and the calibration behind the estimate.
std::string timing_paragraph(const LabContext& lab, const std::vector<std::string>& titles,
                             const std::vector<double>& measured) {
  const ForwardCost& base = lab.base_cost();
  const ForwardCost& sft = lab.sft_cost();
  const auto prices = [](const ForwardCost& cost) {
    return fixed(cost.seconds_per_call * 1e3, 2) + " ms per forward call + " + fixed(cost.seconds_per_token * 1e3, 3) +
           " ms per fed token + " + fixed(cost.seconds_per_attention_pair * 1e6, 3) + " µs per attention pair + " +
           fixed(cost.seconds_per_row_step * 1e3, 3) + " ms per row and step";
  };
  std::string text =
      "Run time per section, estimated before the run from a few timed forwards of each model (base: " + prices(base) +
      "; SFT: " + prices(sft) + "), then measured:\n";
  text += "\n| section | estimated | measured |\n|---|---:|---:|";
  for (std::size_t i = 0; i < titles.size(); ++i) {
    text += "\n| " + std::to_string(i + 1) + ". " + titles[i] + " | " +
            duration_text(lab.estimate().section_seconds[i]) + " | " + fixed(measured[i], 1) + " s |";
  }
  return text;
}

}  // namespace

LabOutcome run_lab(const LabOptions& options, std::ostream& progress) {
  const auto start = std::chrono::steady_clock::now();
  // Everything that can be wrong with the input is found before the output directory is touched.
  const fs::path gnuplot = find_gnuplot();
  check_output_directory(options.out_dir, "--out");
  LabContext lab(options, progress);
  // Made once the models loaded; every file is renamed into it only when all are drawn and written.
  OutputDirectory out(options.out_dir, "--out");
  lab.progress(std::string("loaded the models; the ") + (options.quick ? "quick" : "full") + " lab should take about " +
               duration_text(lab.estimate().estimated_seconds) +
               (lab.scale().cuts.empty() ? std::string()
                                         : " (sizes cut to fit: " + std::to_string(lab.scale().cuts.size()) +
                                               " cuts, listed in the report)"));

  LabReport report;
  report.title = "minigen lab: the KV cache and sampling, measured";

  std::vector<TemperatureBatch> temperature_batches;
  enum class Models { kBase, kSft, kBoth };  // which models the section runs
  struct Section {
    const char* title;
    Models models;
    std::function<ReportSection()> run;
  };
  const std::vector<Section> sections = {
      {"same tokens with and without the cache", Models::kBase, [&] { return cache_equivalence_section(lab); }},
      {"tokens entering forward", Models::kBase, [&] { return forward_tokens_section(lab); }},
      {"time to first token and between tokens", Models::kBase, [&] { return timing_section(lab); }},
      {"cache bytes", Models::kBase, [&] { return cache_bytes_section(lab); }},
      {"temperature", Models::kSft, [&] { return temperature_section(lab, temperature_batches); }},
      {"top-p candidates", Models::kSft, [&] { return top_p_section(lab); }},
      {"eos padding in a batch", Models::kSft, [&] { return eos_padding_section(temperature_batches); }},
      {"seeds, cache and greedy", Models::kSft, [&] { return seed_section(lab); }},
      {"shrinking the cache", Models::kBoth, [&] { return shrinking_section(lab); }},
      {"constraining the sampler", Models::kSft, [&] { return constraining_section(lab); }},
  };
  std::vector<std::string> titles;
  std::vector<double> measured_seconds;
  for (std::size_t i = 0; i < sections.size(); ++i) {
    lab.begin_section(static_cast<int>(i));
    lab.progress("section " + std::to_string(i + 1) + "/" + std::to_string(sections.size()) + ": " + sections[i].title);
    const auto section_start = std::chrono::steady_clock::now();
    ReportSection section = sections[i].run();
    measured_seconds.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - section_start).count());
    const Models models = sections[i].models;
    const std::string model_line = models == Models::kBase ? "*Model: base, " + model_text(lab.base()) + ".*"
                                   : models == Models::kSft
                                       ? "*Model: SFT, " + model_text(lab.sft()) + ".*"
                                       : "*Models: base and SFT (above); the weight types on the base model.*";
    section.blocks.insert(section.blocks.begin(), ReportParagraph{model_line});
    section.data["model"] = models == Models::kBase ? "base" : models == Models::kSft ? "sft" : "both";
    section.data["seconds"] = measured_seconds.back();
    section.data["estimated_seconds"] = lab.estimate().section_seconds[i];
    titles.push_back(sections[i].title);
    report.sections.push_back(std::move(section));
  }
  report.introduction = introduction(lab, options.quick);
  report.introduction.push_back(timing_paragraph(lab, titles, measured_seconds));
  report.settings = {{"quick", options.quick},
                     {"threads", lab.threads()},
                     {"weights", weight_type_name(options.weight_type)},
                     {"base_model", model_description(lab.base())},
                     {"sft_model", model_description(lab.sft())},
                     {"chat_template", lab.chat_format().description},
                     {"genesis_text_prompt_tokens", lab.genesis_text_prompt_tokens()},
                     {"cuts", lab.scale().cuts},
                     {"estimated_seconds_at_default_sizes", lab.estimate().estimated_seconds_before},
                     {"estimated_seconds", lab.estimate().estimated_seconds},
                     {"calibration", {{"base", cost_json(lab.base_cost())}, {"sft", cost_json(lab.sft_cost())}}}};

  LabOutcome outcome;
  lab.progress("drawing the plots with gnuplot");
  for (const ReportSection& section : report.sections) {
    for (const ReportBlock& block : section.blocks) {
      if (const auto* plot = std::get_if<ReportPlot>(&block)) {
        out.write_with(plot->spec.file_name, [&](const fs::path& svg) { render_svg(gnuplot, plot->spec, svg); });
        outcome.plots.push_back(options.out_dir / plot->spec.file_name);
      }
    }
  }
  // report.md last: once it exists, everything it shows exists too.
  outcome.report_json = options.out_dir / "report.json";
  outcome.report_markdown = options.out_dir / "report.md";
  out.write("report.json", to_json_text(report_json(report), 1) + "\n");
  out.write("report.md", render_markdown(report));
  out.commit();
  for (std::size_t i = 0; i < report.sections.size(); ++i) {
    for (const std::string& line : report.sections[i].summary) {
      outcome.summary.push_back(std::to_string(i + 1) + ". " + line);
    }
  }
  outcome.elapsed_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  outcome.estimated_s = lab.estimate().estimated_seconds;
  outcome.cuts = lab.scale().cuts;
  lab.progress("done");
  return outcome;
}

}  // namespace minigen::lab
