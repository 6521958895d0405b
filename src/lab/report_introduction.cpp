#include "lab/report_introduction.h"

#include "core/format.h"

namespace minigen::lab {
namespace {

nlohmann::json cost_json(const ForwardCost& cost) {
  return {{"seconds_per_call", cost.seconds_per_call},
          {"seconds_per_token", cost.seconds_per_token},
          {"seconds_per_attention_pair", cost.seconds_per_attention_pair},
          {"seconds_per_row_step", cost.seconds_per_row_step}};
}

// Estimated against measured seconds per section, and the calibration behind the estimate.
std::string timing_paragraph(const RunDescription& run) {
  const auto prices = [](const ForwardCost& cost) {
    return fixed(cost.seconds_per_call * 1e3, 2) + " ms per forward call + " + fixed(cost.seconds_per_token * 1e3, 3) +
           " ms per fed token + " + fixed(cost.seconds_per_attention_pair * 1e6, 3) + " µs per attention pair + " +
           fixed(cost.seconds_per_row_step * 1e3, 3) + " ms per row and step";
  };
  std::string text = "Run time per section, estimated before the run from a few timed forwards of each model (base: " +
                     prices(run.base_cost) + "; SFT: " + prices(run.sft_cost) + "), then measured:\n";
  text += "\n| section | estimated | measured |\n|---|---:|---:|";
  for (std::size_t i = 0; i < run.section_titles.size(); ++i) {
    text += "\n| " + std::to_string(i + 1) + ". " + run.section_titles[i] + " | " +
            duration_text(run.estimate.section_seconds[i]) + " | " + fixed(run.measured_seconds[i], 1) + " s |";
  }
  return text;
}

}  // namespace

std::string model_text(const ModelSummary& model) {
  std::string text = "`" + model.path + "` (" + model.format + ", " + model.stored_dtype + ") — " + model.family +
                     ", " + with_thousands(model.parameters) + " parameters, " + std::to_string(model.layers) +
                     " layers, " + std::to_string(model.q_heads) + " query heads, " + std::to_string(model.kv_heads) +
                     " key/value heads, head_dim " + std::to_string(model.head_dim) + ", context " +
                     with_thousands(model.context);
  if (model.experts > 0) {
    text += ", " + std::to_string(model.experts) + " experts (top " + std::to_string(model.experts_per_token) + ")";
  }
  if (model.yarn_factor) text += ", YaRN ×" + fixed(*model.yarn_factor, 0);
  return text;
}

std::string section_model_line(SectionModels models, const RunDescription& run) {
  switch (models) {
    case SectionModels::kBase:
      return "*Model: base, " + model_text(run.base) + ".*";
    case SectionModels::kSft:
      return "*Model: SFT, " + model_text(run.sft) + ".*";
    case SectionModels::kBoth:
      break;
  }
  return "*Models: base and SFT (above); the weight types on the base model.*";
}

std::vector<std::string> introduction(const RunDescription& run) {
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
      "Models:\n\n- base (pretrained, for the cache sections): " + model_text(run.base) +
          "\n- SFT (chat, for the sampling sections): " + model_text(run.sft) +
          (run.models_note.empty() ? std::string() : "\n\n**Note:** " + run.models_note),
      "Material: base-model prompts cut from `" + run.prompt_text_source + "`; questions from `" +
          run.chat_prompts_source + "`; section 9's perplexity on `" + run.eval_source + "` (" +
          (run.eval_is_documents ? "documents" : "a plain text") + ")" +
          (run.chinese_set_reason.empty() ? std::string(".") : " — " + run.chinese_set_reason + "."),
      "Prompts are built with each model's own tokenizer. The prompt text (`" + run.prompt_text_source + "`) is " +
          std::to_string(run.genesis_text_prompt_tokens) +
          " tokens with bos for the base model's tokenizer; every prompt of P tokens is that token sequence cut "
          "or repeated to exactly P, so the 183-token prompt is 183 tokens for any tokenizer. Chat prompts use " +
          run.chat_template + ", thinking off.",
      std::string("Run: ") + (run.quick ? "`--quick` (smaller grids, fewer repeats and samples)" : "full") + ", " +
          std::to_string(run.threads) + " threads, weights read as " + run.weights +
          ". Times depend on the machine and on what else it runs; counts, bytes and tokens do not.",
  };
  if (!run.cuts.empty()) {
    std::string cuts = "Cut from the default sizes (the estimate at full size was " +
                       duration_text(run.estimate.estimated_seconds_before) + "):";
    for (const std::string& cut : run.cuts) cuts += "\n- " + cut;
    paragraphs.push_back(cuts);
  }
  paragraphs.push_back(timing_paragraph(run));
  return paragraphs;
}

nlohmann::json settings_json(const RunDescription& run) {
  return {{"quick", run.quick},
          {"threads", run.threads},
          {"weights", run.requested_weights},
          {"base_model", run.base_description},
          {"sft_model", run.sft_description},
          {"chat_template", run.chat_template},
          {"genesis_text_prompt_tokens", run.genesis_text_prompt_tokens},
          {"material",
           {{"prompt_text", run.prompt_text_source},
            {"chat_prompts", run.chat_prompts_source},
            {"eval", run.eval_source},
            {"eval_format", run.eval_is_documents ? "jsonl documents" : "plain text"},
            {"chinese_set_reason", run.chinese_set_reason}}},
          {"models_note", run.models_note},
          {"cuts", run.cuts},
          {"estimated_seconds_at_default_sizes", run.estimate.estimated_seconds_before},
          {"estimated_seconds", run.estimate.estimated_seconds},
          {"calibration", {{"base", cost_json(run.base_cost)}, {"sft", cost_json(run.sft_cost)}}}};
}

}  // namespace minigen::lab
