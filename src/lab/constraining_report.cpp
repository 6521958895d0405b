// Section 10, written: how often the answers parse with and without the schema, how much of the vocabulary the
// mask removes, what top-p keeps after it, and the first answer of each run.
#include <string>
#include <vector>

#include "core/format.h"
#include "lab/section_reports.h"

namespace minigen::lab {
namespace {

nlohmann::json run_json(const ConstrainedRun& run) {
  return nlohmann::json{{"parsed", run.parsed},
                        {"stopped", run.stopped},
                        {"mean_removed_share", mean(run.removed_share)},
                        {"median_kept_candidates", median(run.kept_candidates)},
                        {"mean_kept_candidates", mean(run.kept_candidates)},
                        {"texts", run.texts}};
}

}  // namespace

ReportSection constraining_report(const ConstrainingData& data) {
  ReportSection section;
  section.key = "constraining";
  section.title = "Constraining the sampler";
  const std::string samples = std::to_string(data.samples);
  section.paragraph(
      "Temperature, top-k and top-p reshape the model's distribution; none of them can promise a format. A grammar "
      "stage can: placed first in the chain, it sets every token that would take the text out of a language — here "
      "JSON valid against a schema — to −inf, then the usual stages run on what is left and the chosen token "
      "advances the grammar. eos is allowed only where the document is complete. The SFT model is asked \"" +
      data.question + "\" " + samples + " times (MiniMind's sampling defaults, seed " + std::to_string(data.seed) +
      ", up to " + std::to_string(data.new_tokens) + " tokens), once freely and once with the schema `" +
      data.schema.dump() +
      "` (`--json-schema`, or `response_format` "
      "in the API). An answer counts as parsed when it is a JSON object with exactly these two strings within their "
      "lengths, checked without the grammar.");

  const auto row = [&](const std::string& name, const ConstrainedRun& run, bool masked) {
    return std::vector<std::string>{name,
                                    std::to_string(run.parsed) + " of " + samples,
                                    std::to_string(run.stopped) + " of " + samples,
                                    masked ? fixed(100 * mean(run.removed_share), 2) + " %" : "—",
                                    fixed(median(run.kept_candidates), 0),
                                    fixed(mean(run.kept_candidates), 1)};
  };
  const ConstrainedRun& free = data.free;
  const ConstrainedRun& constrained = data.constrained;
  section.table(ReportTable{{"sampling", "answers that parse and validate", "ended by eos",
                             "vocabulary removed per step (mean)", "top-p kept candidates (median)", "(mean)"},
                            {row("free", free, false), row("with the schema", constrained, true)}});
  section.paragraph(
      "Without the schema the model answers in prose, as it was trained to: " + std::to_string(free.parsed) + " of " +
      samples +
      " answers parse. With it, every answer that ends by itself is a "
      "valid document (" +
      std::to_string(constrained.parsed) + " of " + samples +
      "; an answer cut by the token limit cannot be complete). The mask removes " +
      fixed(100 * mean(constrained.removed_share), 2) + " % of the " + with_thousands(data.vocab_size) +
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

  section.data["schema"] = data.schema;
  section.data["samples"] = data.samples;
  section.data["max_new_tokens"] = data.new_tokens;
  section.data["free"] = run_json(free);
  section.data["constrained"] = run_json(constrained);
  section.summary.push_back("constraining: answers that parse " + std::to_string(free.parsed) + " of " + samples +
                            " free, " + std::to_string(constrained.parsed) + " with a schema; the mask removes " +
                            fixed(100 * mean(constrained.removed_share), 1) + " % of the vocabulary per step");
  return section;
}

}  // namespace minigen::lab
