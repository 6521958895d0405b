// Section 8, written: usually the cause of "the answers changed" is on the sampling side — an unfixed seed, or
// sampling on one side and greedy on the other — not the cache. Greedy first halves the search.
#include <string>
#include <vector>

#include "lab/section_reports.h"

namespace minigen::lab {
namespace {

nlohmann::json check_json(const SeedCheck& check) {
  const RowComparison& comparison = check.comparison;
  nlohmann::json json = {{"check", check.question},
                         {"answers_identical", comparison.token_ids_identical},
                         {"first_differing_step", comparison.first_differing_step},
                         {"logits_bit_identical", comparison.logits_bit_identical}};
  if (check.answers_kept) {
    json["a"] = {{"setup", check.setup_a}, {"token_ids", check.token_ids_a}, {"text", check.text_a}};
    json["b"] = {{"setup", check.setup_b}, {"token_ids", check.token_ids_b}, {"text", check.text_b}};
    json["max_abs_logit_difference"] = comparison.max_abs_logit_difference;
  }
  return json;
}

const char* identical_or(bool identical, const char* otherwise) { return identical ? "identical" : otherwise; }

}  // namespace

ReportSection seed_report(const SeedData& data) {
  ReportSection section;
  section.key = "seeds";
  section.title = "\"The answers changed when I turned the cache on\"";
  section.paragraph(
      "A classic bug report. Section 1 showed that the cache cannot change a token, so the cause is almost always on "
      "the sampling side: the two runs drew different random numbers (no fixed seed, or a shared random generator "
      "whose state depends on what ran before), or one side sampled while the other decoded greedily. MiniMind draws "
      "every row from torch's single global generator, so even with a fixed seed a row's draws depend on the other "
      "rows and on every draw made earlier. minigen gives each row its own stream keyed by (seed, row, step): the "
      "same request draws the same numbers whatever else happens. Each check below runs the SFT model on \"" +
      data.prompt + "\" (up to " + std::to_string(data.new_tokens) +
      " tokens, MiniMind's sampling defaults unless greedy) and compares the two answers.");

  ReportTable table{{"check", "run A", "run B", "answers identical", "first differing token", "logits bit-identical"},
                    {}};
  nlohmann::json results = nlohmann::json::array();
  for (const SeedCheck& check : data.checks) {
    const RowComparison& comparison = check.comparison;
    table.rows.push_back({check.question, check.setup_a, check.setup_b, comparison.token_ids_identical ? "yes" : "no",
                          comparison.token_ids_identical ? "—" : std::to_string(comparison.first_differing_step),
                          comparison.logits_bit_identical ? "yes" : "no"});
    results.push_back(check_json(check));
  }
  section.table(std::move(table));
  section.paragraph(
      "Different seeds give different answers (the logits differ too once the answers diverge, since each step "
      "continues a different text). With the same seed, turning the cache on or off changes nothing, bit for bit, "
      "and neither does sharing the batch. Greedy decoding is the quickest test when a report comes in: if the greedy "
      "answers with and without the cache agree token for token, the cache is exonerated and the difference lies in "
      "how the two runs sample (the last check reproduces the usual culprit). If even the greedy answers differ, look "
      "at the cache and the position bookkeeping.");

  const bool different_seeds_same = data.checks[0].comparison.token_ids_identical;
  const bool cache_on_off_same = data.checks[1].comparison.token_ids_identical;
  const bool greedy_on_off_same = data.checks[2].comparison.token_ids_identical;
  const bool alone_and_in_batch_same = data.checks.back().comparison.token_ids_identical;
  section.data["checks"] = results;
  section.data["max_new_tokens"] = data.new_tokens;
  section.data["prompt"] = data.prompt;
  section.data["different_seeds_differ"] = !different_seeds_same;
  section.data["same_seed_cache_on_off_identical"] = cache_on_off_same;
  section.data["greedy_cache_on_off_identical"] = greedy_on_off_same;
  section.data["alone_and_in_batch_identical"] = alone_and_in_batch_same;
  section.summary.push_back(std::string("seeds: different seeds ") +
                            (different_seeds_same ? "gave the SAME answer" : "differ") +
                            "; same seed with cache on/off " + identical_or(cache_on_off_same, "DIFFER") +
                            "; greedy on/off " + identical_or(greedy_on_off_same, "DIFFER") + "; alone vs in a batch " +
                            identical_or(alone_and_in_batch_same, "DIFFER"));
  return section;
}

}  // namespace minigen::lab
