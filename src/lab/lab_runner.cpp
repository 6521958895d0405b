#include "lab/lab_runner.h"

#include <chrono>
#include <functional>

#include "checkpoint/model_description.h"
#include "core/json_text.h"
#include "lab/gnuplot_plot.h"
#include "lab/lab_report.h"
#include "lab/report_introduction.h"
#include "lab/section_measures.h"
#include "lab/section_reports.h"

namespace minigen::lab {
namespace {

namespace fs = std::filesystem;

ModelSummary summary_of(const LoadedModel& loaded) {
  const ModelConfig& c = loaded.model->config;
  ModelSummary summary{loaded.path.string(),
                       loaded.format,
                       std::string(dtype_name(loaded.stored_dtype)),
                       identify_family(c),
                       static_cast<long long>(c.parameter_count()),
                       c.num_layers,
                       c.num_q_heads,
                       c.num_kv_heads,
                       c.head_dim,
                       c.max_position_embeddings,
                       c.vocab_size,
                       c.use_moe ? c.num_experts : 0,
                       c.num_experts_per_token,
                       std::nullopt};
  if (c.rope_scaling) summary.yarn_factor = c.rope_scaling->factor;
  return summary;
}

RunDescription describe_run(const LabContext& lab, const LabOptions& options) {
  RunDescription run;
  run.quick = options.quick;
  run.threads = lab.threads();
  run.weights = std::string(weight_type_name(lab.weight_type()));
  run.requested_weights = std::string(weight_type_name(options.weight_type));
  run.base = summary_of(lab.base());
  run.sft = summary_of(lab.sft());
  run.base_description = model_description(lab.base());
  run.sft_description = model_description(lab.sft());
  run.chat_template = lab.chat_format().description;
  run.chat_template_zh = lab.chat_format().description_zh;
  run.genesis_text_prompt_tokens = lab.prompt_text_tokens();
  const LabMaterial& material = lab.material();
  run.prompt_text_source = material.prompt_text.source;
  run.chat_prompts_source = material.chat_prompts.source;
  run.eval_source = material.eval.source;
  run.eval_is_documents = material.eval.documents;
  run.chinese_set = !material.chinese_set_reason.empty();
  run.chinese_set_for_report = material.chinese_set_for_report;
  run.one_model_for_both = lab.one_model_for_both();
  run.cuts = lab.scale().cuts;
  run.estimate = lab.estimate();
  run.base_cost = lab.base_cost();
  run.sft_cost = lab.sft_cost();
  return run;
}

}  // namespace

LabOutcome run_lab(const LabOptions& options, std::ostream& progress, Language language) {
  const auto start = std::chrono::steady_clock::now();
  // Everything that can be wrong with the input is found before the output directory is touched.
  const fs::path gnuplot = find_gnuplot();
  check_output_directory(options.out_dir, "--out");
  LabOptions chosen = options;
  chosen.material.chinese_report = language == Language::kChinese;  // a Chinese report reads Chinese material
  chosen.language = language;
  LabContext lab(chosen, progress);
  // Made once the models loaded; every file is renamed into it only when all are drawn and written.
  OutputDirectory out(options.out_dir, "--out");
  const std::string about = duration_text(lab.estimate().estimated_seconds);
  const std::string cuts = std::to_string(lab.scale().cuts.size());
  lab.progress(lab.say(
      std::string("loaded the models; the ") + (options.quick ? "quick" : "full") + " lab should take about " + about +
          (lab.scale().cuts.empty() ? std::string() : " (sizes cut to fit: " + cuts + " cuts, listed in the report)"),
      std::string("模型已加载；") + (options.quick ? "快速" : "完整") + "的 lab 预计需要约 " + about +
          (lab.scale().cuts.empty() ? std::string() : "（为适应模型缩小了 " + cuts + " 处规模，见报告）")));

  LabReport report;
  report.title =
      Words{language}("minigen lab: the KV cache and sampling, measured", "`minigen lab`：KV 缓存与采样的实测");

  // Each section measures into plain data, then the report writer renders that data; nothing else passes between.
  std::vector<TemperatureBatch> temperature_batches;
  std::optional<double> base_perplexity;  // section 9's, for the untrained-model warning at the top
  std::optional<double> sft_perplexity;
  struct Section {
    const char* title;
    const char* title_zh;
    SectionModels models;
    std::function<ReportSection()> run;
  };
  const std::vector<Section> sections = {
      {"same tokens with and without the cache", "有无 KV 缓存，token 相同", SectionModels::kBase,
       [&] { return cache_equivalence_report(measure_cache_equivalence(lab), language); }},
      {"tokens entering forward", "进入前向计算的 token", SectionModels::kBase,
       [&] { return forward_tokens_report(measure_forward_tokens(lab), language); }},
      {"time to first token and between tokens", "首个 token 时间与每个 token 的时间", SectionModels::kBase,
       [&] { return timing_report(measure_timing(lab), language); }},
      {"cache bytes", "缓存的字节数", SectionModels::kBase,
       [&] { return cache_bytes_report(measure_cache_bytes(lab), language); }},
      {"temperature", "温度", SectionModels::kSft,
       [&] { return temperature_report(measure_temperature(lab, temperature_batches), language); }},
      {"top-p candidates", "top-p 的候选", SectionModels::kSft,
       [&] { return top_p_report(measure_top_p(lab), language); }},
      {"eos padding in a batch", "批次中的 eos 填充", SectionModels::kSft,
       [&] { return eos_padding_report(measure_eos_padding(temperature_batches), language); }},
      {"seeds, cache and greedy", "种子、缓存与贪心解码", SectionModels::kSft,
       [&] { return seed_report(measure_seeds(lab), language); }},
      {"shrinking the cache", "缩小缓存", SectionModels::kBoth,
       [&] {
         const ShrinkingData shrinking = measure_shrinking(lab);
         base_perplexity = f32_perplexity(shrinking.base_kv);
         sft_perplexity = f32_perplexity(shrinking.sft_kv);
         return shrinking_report(shrinking, language);
       }},
      {"constraining the sampler", "约束采样器", SectionModels::kSft,
       [&] { return constraining_report(measure_constraining(lab), language); }},
      {"adapters", "适配器", SectionModels::kSft, [&] { return adapters_report(measure_adapters(lab), language); }},
  };
  RunDescription run = describe_run(lab, options);
  for (std::size_t i = 0; i < sections.size(); ++i) {
    lab.begin_section(static_cast<int>(i));
    const std::string which = std::to_string(i + 1) + "/" + std::to_string(sections.size());
    lab.progress(
        lab.say("section " + which + ": " + sections[i].title, "第 " + which + " 节：" + sections[i].title_zh));
    const auto section_start = std::chrono::steady_clock::now();
    ReportSection section = sections[i].run();
    run.measured_seconds.push_back(
        std::chrono::duration<double>(std::chrono::steady_clock::now() - section_start).count());
    const SectionModels models = sections[i].models;
    section.blocks.insert(section.blocks.begin(), ReportParagraph{section_model_line(models, run, language)});
    section.data["model"] = models == SectionModels::kBase ? "base" : models == SectionModels::kSft ? "sft" : "both";
    section.data["seconds"] = run.measured_seconds.back();
    section.data["estimated_seconds"] = lab.estimate().section_seconds[i];
    run.section_titles.push_back(section.title);
    report.sections.push_back(std::move(section));
  }
  run.base_perplexity = base_perplexity;
  run.sft_perplexity = sft_perplexity;
  report.introduction = introduction(run, language);
  report.settings = settings_json(run);
  report.settings["language"] = language_name(language);

  LabOutcome outcome;
  lab.progress(lab.say("drawing the plots with gnuplot", "用 gnuplot 画图"));
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
  lab.progress(lab.say("done", "完成"));
  return outcome;
}

}  // namespace minigen::lab
