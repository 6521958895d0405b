// `minigen lab`: the KV-cache and sampling module's experiment as one command — runs every section with progress on
// stderr, prints a summary, and writes report.md, report.json and SVG plots.
#include <cstdio>
#include <filesystem>
#include <iostream>

#include "checkpoint/model_loader.h"
#include "checkpoint/model_settings.h"
#include "cli/command_context.h"
#include "cli/commands.h"
#include "cli/flag_checks.h"
#include "core/error.h"
#include "core/message_language.h"
#include "core/translated_error.h"
#include "lab/lab_runner.h"

namespace minigen::cli {
namespace {

struct LabFlags {
  std::string base_model;
  std::string sft_model;
  std::string out_dir = "lab-report";
  std::string tokenizer_path;
  std::string prompt_text;
  std::string chat_prompts;
  std::string eval;
  std::string lora;
  int num_q_heads = 8;
  bool yarn = false;
  std::string weights = "f32";
  std::string kv_dtype = "f32";
  bool quick = false;
  int threads = 0;
  std::string language = "en";
  bool force = false;
};

// A shipped model's name or a path; the error names the flag, since the lab takes two models.
std::filesystem::path resolve_model_flag(const std::string& flag, const std::string& given) {
  try {
    return resolve_model_path(given);
  } catch (const Error& error) {
    rethrow_with_prefix(error, flag + ": ", flag + "：");
  }
}

int run_lab_command(const LabFlags& flags) {
  lab::LabOptions options;
  // Neither model given: the shipped tiny pair; one given: it plays both parts (the report says so).
  if (!flags.base_model.empty()) options.base_model = resolve_model_flag("--base", flags.base_model);
  if (!flags.sft_model.empty()) options.sft_model = resolve_model_flag("--sft", flags.sft_model);
  // A relative path of the shipped tree (examples/zh/poems.txt) is found from any folder.
  if (!flags.prompt_text.empty()) options.material.prompt_text = resolve_user_file(flags.prompt_text);
  if (!flags.chat_prompts.empty()) options.material.chat_prompts = resolve_user_file(flags.chat_prompts);
  if (!flags.eval.empty()) options.material.eval = resolve_user_file(flags.eval);
  if (!flags.lora.empty()) options.lora = flags.lora;
  options.out_dir = flags.out_dir;
  options.pth_options.num_q_heads = flags.num_q_heads;
  options.pth_options.yarn = flags.yarn;
  if (!flags.tokenizer_path.empty()) options.pth_options.tokenizer_path = flags.tokenizer_path;
  options.weight_type = parse_weight_type(flags.weights);
  options.kv_dtype = parse_kv_dtype(flags.kv_dtype);
  options.quick = flags.quick;
  options.threads = flags.threads;
  const lab::Language language = lab::parse_language(flags.language);
  // A Chinese report speaks Chinese on the terminal too: its progress lines and the errors that have a translation.
  set_chinese_messages(language == lab::Language::kChinese);
  // Before the models load: an earlier report is replaced only with --force.
  check_nothing_replaced(options.out_dir, {"report.md", "report.json"}, "a lab report", flags.force);
  const lab::LabOutcome outcome = lab::run_lab(options, std::cerr, language);
  const bool chinese = language == lab::Language::kChinese;
  if (chinese) {
    std::printf("minigen lab（%s）用时 %.1f s（估计 %.0f s）\n", flags.quick ? "快速" : "完整", outcome.elapsed_s,
                outcome.estimated_s);
  } else {
    std::printf("minigen lab (%s) finished in %.1f s (estimated %.0f s)\n", flags.quick ? "quick" : "full",
                outcome.elapsed_s, outcome.estimated_s);
  }
  for (const std::string& cut : outcome.cuts) std::printf("  cut: %s\n", cut.c_str());
  for (const std::string& line : outcome.summary) std::printf("  %s\n", line.c_str());
  std::printf(chinese ? "报告：%s（数字：%s，%zu 张图）\n" : "report: %s (numbers: %s, %zu plots)\n",
              outcome.report_markdown.string().c_str(), outcome.report_json.string().c_str(), outcome.plots.size());
  return 0;
}

}  // namespace

CommandAction add_lab_command(CLI::App& app) {
  auto flags = std::make_shared<LabFlags>();
  CLI::App* command = app.add_subcommand(
      "lab", "measure the KV cache and sampling: report.md, report.json and SVG plots (needs gnuplot)");
  command->add_option("--base", flags->base_model,
                      "base (pretrained) model: an HF directory or a MiniMind .pth (--heads, --tokenizer); given "
                      "alone, it also plays the SFT part [default: models/minigen-tiny-base]");
  command->add_option("--sft", flags->sft_model,
                      "SFT (chat) model, any family; given alone, it also plays the base part "
                      "[default: models/minigen-tiny-sft]");
  command->add_option("--prompt-text", flags->prompt_text,
                      "UTF-8 text the base-model prompts are cut from (sections 1-4, 9), at least as many tokens as "
                      "the longest prompt [default: examples/genesis-183.txt; examples/zh/poems.txt with --lang zh or "
                      "MiniMind's tokenizer]");
  command->add_option("--chat-prompts", flags->chat_prompts,
                      "UTF-8 file of questions, one per line, for the SFT sections (5-8, 10) [default: "
                      "examples/questions.txt; examples/zh/questions.txt with --lang zh or MiniMind's tokenizer]");
  command->add_option("--eval", flags->eval,
                      "section 9's perplexity text: .jsonl of {\"text\": ...} documents (MiniMind's pretraining "
                      "format) or a plain UTF-8 text [default: examples/heldout.jsonl; examples/zh/heldout.jsonl with "
                      "--lang zh or MiniMind's tokenizer]");
  command->add_option("--lora", flags->lora,
                      "your LoRA adapter for the SFT model (MiniMind .pth, PEFT folder or GGUF), measured in section "
                      "11 [default: a random adapter in MiniMind's shape]");
  command->add_option("--out", flags->out_dir, "directory for the report (new, or --force)")->default_val("lab-report");
  add_pth_flags(*command, flags->tokenizer_path, flags->num_q_heads, flags->yarn);
  add_weights_flag(*command, flags->weights);
  add_kv_dtype_flag(*command, flags->kv_dtype);
  command->add_flag("--quick", flags->quick,
                    "smaller grids, fewer repeats and samples (under a minute on 2 cores for the shipped models, "
                    "under 5 for a 64 M-parameter one)");
  add_threads_flag(*command, flags->threads);
  add_force_flag(*command, flags->force);
  command
      ->add_option(
          "--lang", flags->language,
          "language of report.md, the plots and the progress lines: en or zh (Chinese); report.json stays the same "
          "[default: zh when MINIGEN_LANG starts with zh, else en]")
      ->check(CLI::IsMember({"en", "zh"}))
      ->default_val(chinese_messages() ? "zh" : "en");
  return [flags] { return run_lab_command(*flags); };
}

}  // namespace minigen::cli
