// Section 10, measured: constraining the sampler. A grammar stage placed first in the chain masks every token that
// would take the text out of a JSON Schema's language (grammar/, sampling/allowed_tokens_sampler.h). The same SFT
// model, the same prompt and seeds, with and without the schema: how often the answer parses, how much of the
// vocabulary the mask removes per step, and what is left for top-p to choose from.
#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "grammar/json_schema_compiler.h"
#include "grammar/token_vocabulary.h"
#include "lab/section_measures.h"

namespace minigen::lab {
namespace {

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

constexpr uint64_t kSeed = 10;

ConstrainedRun sample(LabContext& lab, const std::vector<int>& prompt,
                      const std::shared_ptr<const CompiledGrammar>& grammar) {
  const LabScale& scale = lab.scale();
  const std::vector<std::vector<int>> batch(static_cast<std::size_t>(scale.constraining_samples), prompt);
  GenerateOptions options;  // MiniMind's defaults: T 0.85, top-k 50, top-p 0.85
  options.max_new_tokens = scale.constraining_new_tokens;
  options.sampling.seed = kSeed;
  if (grammar) options.grammars = {grammar};
  const GenerateResult result = lab.generate(lab.sft_transformer(), batch, options);
  const int vocabulary = lab.sft().model->config.vocab_size;
  ConstrainedRun run;
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

ConstrainingData measure_constraining(LabContext& lab) {
  const LabScale& scale = lab.scale();
  const Model& model = *lab.sft().model;
  ConstrainingData data;
  data.question = lab.constraining_question();
  data.schema = nlohmann::ordered_json::parse(kSchema);
  data.samples = scale.constraining_samples;
  data.new_tokens = scale.constraining_new_tokens;
  data.seed = kSeed;
  data.vocab_size = model.config.vocab_size;
  const auto grammar = std::make_shared<const CompiledGrammar>(
      compile_json_schema(data.schema),
      TokenVocabulary::from_tokenizer(*lab.sft().tokenizer, model.config.vocab_size, model.config.eos_token_id));
  const std::vector<int> prompt = lab.chat_prompt(lab.constraining_question());
  lab.progress(lab.say("  " + std::to_string(data.samples) + " answers without a schema",
                       "  " + std::to_string(data.samples) + " 个不用模式约束的回答"));
  data.free = sample(lab, prompt, nullptr);
  lab.progress(lab.say("  " + std::to_string(data.samples) + " answers with the schema",
                       "  " + std::to_string(data.samples) + " 个使用模式约束的回答"));
  data.constrained = sample(lab, prompt, grammar);
  return data;
}

}  // namespace minigen::lab
