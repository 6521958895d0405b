// Section 10: constraining the sampler. A grammar stage placed first in the chain masks every token that would take
// the text out of a JSON Schema's language (grammar/, sampling/allowed_tokens_sampler.h). The same SFT model, the
// same prompt and seeds, with and without the schema: how often the answer parses, how much of the vocabulary the
// mask removes per step, and what is left for top-p to choose from.
#include <algorithm>
#include <string>
#include <vector>

#include "core/format.h"
#include "grammar/json_schema_compiler.h"
#include "grammar/token_vocabulary.h"
#include "lab/lab_sections.h"
#include "lab/lab_statistics.h"

namespace minigen::lab {
namespace {

const char* const kQuestion = "What does 'river' mean? Answer as JSON.";
// Short strings, so an answer fits in the section's tokens; "additionalProperties": false, so nothing else fits.
const char* const kSchema = R"({"type": "object", "properties": {
  "word": {"type": "string", "minLength": 1, "maxLength": 12},
  "meaning": {"type": "string", "minLength": 1, "maxLength": 40}},
  "required": ["word", "meaning"], "additionalProperties": false})";

// Whether `text` is a JSON object with exactly the schema's two string properties within their lengths, checked
// here by hand, not by the grammar that produced it.
bool valid_answer(const std::string& text) {
  const nlohmann::json parsed = nlohmann::json::parse(text, nullptr, false);
  if (!parsed.is_object() || parsed.size() != 2) return false;
  for (const auto& [key, most] : {std::pair<const char*, std::size_t>{"word", 12}, {"meaning", 40}}) {
    if (!parsed.contains(key) || !parsed[key].is_string()) return false;
    const std::string value = parsed[key];
    const std::size_t code_points = static_cast<std::size_t>(std::count_if(
        value.begin(), value.end(), [](char c) { return (static_cast<unsigned char>(c) & 0xC0) != 0x80; }));
    if (code_points < 1 || code_points > most) return false;
  }
  return true;
}

struct Run {
  int parsed = 0;
  int stopped = 0;                      // ended by eos rather than max_new_tokens
  std::vector<double> removed_share;    // per step: 1 − allowed / vocabulary
  std::vector<double> kept_candidates;  // per step: what top-k/top-p/min-p left
  std::vector<std::string> texts;
};

Run sample(LabContext& lab, const std::vector<int>& prompt, const std::shared_ptr<const CompiledGrammar>& grammar) {
  const LabScale& scale = lab.scale();
  const std::vector<std::vector<int>> batch(static_cast<std::size_t>(scale.constraining_samples), prompt);
  GenerateOptions options;  // MiniMind's defaults: T 0.85, top-k 50, top-p 0.85
  options.max_new_tokens = scale.constraining_new_tokens;
  options.sampling.seed = 10;
  if (grammar) options.grammars = {grammar};
  const GenerateResult result = lab.generate(lab.sft_transformer(), batch, options);
  const int vocabulary = lab.sft().model->config.vocab_size;
  Run run;
  for (const GeneratedSequence& sequence : result.sequences) {
    const std::string text = lab.sft().tokenizer->decode(sequence.token_ids, true);
    run.parsed += valid_answer(text) ? 1 : 0;
    run.stopped += sequence.finish_reason == "stop" ? 1 : 0;
    run.texts.push_back(text);
    for (int kept : sequence.kept_candidates) run.kept_candidates.push_back(kept);
    for (int allowed : sequence.grammar_allowed_tokens) run.removed_share.push_back(1.0 - double(allowed) / vocabulary);
  }
  return run;
}

}  // namespace

ReportSection constraining_section(LabContext& lab) {
  ReportSection section;
  section.key = "constraining";
  section.title = "Constraining the sampler";
  const LabScale& scale = lab.scale();
  const Model& model = *lab.sft().model;
  const nlohmann::ordered_json schema = nlohmann::ordered_json::parse(kSchema);
  const auto grammar = std::make_shared<const CompiledGrammar>(
      compile_json_schema(schema),
      TokenVocabulary::from_tokenizer(*lab.sft().tokenizer, model.config.vocab_size, model.config.eos_token_id));
  const std::vector<int> prompt = lab.chat_prompt(kQuestion);
  section.paragraph(
      "Temperature, top-k and top-p reshape the model's distribution; none of them can promise a format. A grammar "
      "stage can: placed first in the chain, it sets every token that would take the text out of a language — here "
      "JSON valid against a schema — to −inf, then the usual stages run on what is left and the chosen token "
      "advances the grammar. eos is allowed only where the document is complete. The SFT model is asked \"" +
      std::string(kQuestion) + "\" " + std::to_string(scale.constraining_samples) +
      " times (MiniMind's sampling defaults, seed 10, up to " + std::to_string(scale.constraining_new_tokens) +
      " tokens), once freely and once with the schema `" + schema.dump() +
      "` (`--json-schema`, or `response_format` "
      "in the API). An answer counts as parsed when it is a JSON object with exactly these two strings within their "
      "lengths, checked without the grammar.");

  lab.progress("  " + std::to_string(scale.constraining_samples) + " answers without a schema");
  const Run free = sample(lab, prompt, nullptr);
  lab.progress("  " + std::to_string(scale.constraining_samples) + " answers with the schema");
  const Run constrained = sample(lab, prompt, grammar);

  const auto row = [&](const std::string& name, const Run& run, bool masked) {
    return std::vector<std::string>{name,
                                    std::to_string(run.parsed) + " of " + std::to_string(scale.constraining_samples),
                                    std::to_string(run.stopped) + " of " + std::to_string(scale.constraining_samples),
                                    masked ? fixed(100 * mean(run.removed_share), 2) + " %" : "—",
                                    fixed(median(run.kept_candidates), 0),
                                    fixed(mean(run.kept_candidates), 1)};
  };
  section.table(ReportTable{{"sampling", "answers that parse and validate", "ended by eos",
                             "vocabulary removed per step (mean)", "top-p kept candidates (median)", "(mean)"},
                            {row("free", free, false), row("with the schema", constrained, true)}});
  const int vocabulary = model.config.vocab_size;
  section.paragraph(
      "Without the schema the model answers in prose, as it was trained to: " + std::to_string(free.parsed) + " of " +
      std::to_string(scale.constraining_samples) +
      " answers parse. With it, every answer that ends by itself is a "
      "valid document (" +
      std::to_string(constrained.parsed) + " of " + std::to_string(scale.constraining_samples) +
      "; an answer cut by the token limit cannot be complete). The mask removes " +
      fixed(100 * mean(constrained.removed_share), 2) + " % of the " + with_thousands(vocabulary) +
      " ids per step on average: inside a string nearly every token may follow, at a brace or a key only one. "
      "Top-p then keeps a median of " +
      fixed(median(constrained.kept_candidates), 0) + " candidates instead of " +
      fixed(median(free.kept_candidates), 0) +
      ": where the grammar leaves one token, the nucleus is that token, and "
      "the temperature no longer matters. The cost is a different text, not only a different format — the mask "
      "renormalises the model's probabilities over what is left, which can push a small model into answers it "
      "would rarely give.");
  section.paragraph("First answers: free — \"" + printable_text(free.texts.front()) + "\"; with the schema — `" +
                    printable_text(constrained.texts.front()) + "`.");

  const auto run_json = [](const Run& run) {
    return nlohmann::json{{"parsed", run.parsed},
                          {"stopped", run.stopped},
                          {"mean_removed_share", mean(run.removed_share)},
                          {"median_kept_candidates", median(run.kept_candidates)},
                          {"mean_kept_candidates", mean(run.kept_candidates)},
                          {"texts", run.texts}};
  };
  section.data["schema"] = schema;
  section.data["samples"] = scale.constraining_samples;
  section.data["max_new_tokens"] = scale.constraining_new_tokens;
  section.data["free"] = run_json(free);
  section.data["constrained"] = run_json(constrained);
  section.summary.push_back("constraining: answers that parse " + std::to_string(free.parsed) + " of " +
                            std::to_string(scale.constraining_samples) + " free, " +
                            std::to_string(constrained.parsed) + " with a schema; the mask removes " +
                            fixed(100 * mean(constrained.removed_share), 1) + " % of the vocabulary per step");
  return section;
}

}  // namespace minigen::lab
