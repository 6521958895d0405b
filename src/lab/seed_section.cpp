// Section 8: "the answers changed when I turned the cache on". Usually the cause is on the sampling side — an
// unfixed seed, or sampling on one side and greedy on the other — not the cache. Greedy first halves the search.
#include <string>
#include <vector>

#include "lab/lab_sections.h"
#include "lab/lab_statistics.h"

namespace minigen::lab {
namespace {

struct Setup {
  std::string description;
  bool use_cache = true;
  bool greedy = false;
  uint64_t seed = 1;
};

GenerateOptions setup_options(const Setup& setup, int new_tokens) {
  GenerateOptions options;
  options.max_new_tokens = new_tokens;
  options.use_cache = setup.use_cache;
  options.keep_step_logits = true;
  options.sampling.greedy = setup.greedy;  // otherwise MiniMind's defaults: T 0.85, top-k 50, top-p 0.85
  options.sampling.seed = setup.seed;
  return options;
}

struct Check {
  std::string question;
  Setup a;
  Setup b;
};

}  // namespace

ReportSection seed_section(LabContext& lab) {
  ReportSection section;
  section.key = "seeds";
  section.title = "\"The answers changed when I turned the cache on\"";
  const int new_tokens = lab.scale().seed_new_tokens;
  const std::string& message = LabContext::chat_messages().front();
  const std::vector<int> prompt = lab.chat_prompt(message);
  section.paragraph(
      "A classic bug report. Section 1 showed that the cache cannot change a token, so the cause is almost always on "
      "the sampling side: the two runs drew different random numbers (no fixed seed, or a shared random generator "
      "whose state depends on what ran before), or one side sampled while the other decoded greedily. MiniMind draws "
      "every row from torch's single global generator, so even with a fixed seed a row's draws depend on the other "
      "rows and on every draw made earlier. minigen gives each row its own stream keyed by (seed, row, step): the "
      "same request draws the same numbers whatever else happens. Each check below runs the SFT model on \"" +
      message + "\" (up to " + std::to_string(new_tokens) +
      " tokens, MiniMind's sampling defaults unless greedy) and compares the two answers.");

  const std::vector<Check> checks = {
      {"different seeds, both with the cache",
       {"seed 1, cache on", true, false, 1},
       {"seed 2, cache on", true, false, 2}},
      {"same seed, cache on against off", {"seed 1, cache on", true, false, 1}, {"seed 1, cache off", false, false, 1}},
      {"greedy, cache on against off", {"greedy, cache on", true, true, 1}, {"greedy, cache off", false, true, 1}},
      {"the usual bug: sampling on one side, greedy on the other",
       {"seed 1, cache on", true, false, 1},
       {"greedy, cache off", false, true, 1}},
  };
  ReportTable table{{"check", "run A", "run B", "answers identical", "first differing token", "logits bit-identical"},
                    {}};
  nlohmann::json results = nlohmann::json::array();
  const std::vector<std::vector<int>> batch = {prompt};
  for (const Check& check : checks) {
    lab.progress("  " + check.question);
    const GenerateResult a = lab.generate(lab.sft_transformer(), batch, setup_options(check.a, new_tokens));
    const GenerateResult b = lab.generate(lab.sft_transformer(), batch, setup_options(check.b, new_tokens));
    const RowComparison comparison = compare_rows(a.sequences.front(), b.sequences.front());
    table.rows.push_back({check.question, check.a.description, check.b.description,
                          comparison.token_ids_identical ? "yes" : "no",
                          comparison.token_ids_identical ? "—" : std::to_string(comparison.first_differing_step),
                          comparison.logits_bit_identical ? "yes" : "no"});
    results.push_back({{"check", check.question},
                       {"a",
                        {{"setup", check.a.description},
                         {"token_ids", a.sequences.front().token_ids},
                         {"text", lab.sft().tokenizer->decode(a.sequences.front().token_ids, true)}}},
                       {"b",
                        {{"setup", check.b.description},
                         {"token_ids", b.sequences.front().token_ids},
                         {"text", lab.sft().tokenizer->decode(b.sequences.front().token_ids, true)}}},
                       {"answers_identical", comparison.token_ids_identical},
                       {"first_differing_step", comparison.first_differing_step},
                       {"logits_bit_identical", comparison.logits_bit_identical},
                       {"max_abs_logit_difference", comparison.max_abs_logit_difference}});
  }

  // The same request alone and as row 0 of a batch with two other prompts: its row key (0) is the same, so its
  // draws are too — a shared global generator would give it different numbers here.
  lab.progress("  the same request alone and inside a batch of three");
  const Setup sampled{"seed 1, cache on", true, false, 1};
  const GenerateResult alone = lab.generate(lab.sft_transformer(), batch, setup_options(sampled, new_tokens));
  const std::vector<std::vector<int>> shared_batch = {prompt, lab.chat_prompt(LabContext::chat_messages()[1]),
                                                      lab.chat_prompt(LabContext::chat_messages()[2])};
  const GenerateResult in_batch = lab.generate(lab.sft_transformer(), shared_batch, setup_options(sampled, new_tokens));
  const RowComparison batch_comparison = compare_rows(alone.sequences.front(), in_batch.sequences.front());
  table.rows.push_back(
      {"same seed, alone against in a batch of 3", "seed 1, alone", "seed 1, row 0 of 3",
       batch_comparison.token_ids_identical ? "yes" : "no",
       batch_comparison.token_ids_identical ? "—" : std::to_string(batch_comparison.first_differing_step),
       batch_comparison.logits_bit_identical ? "yes" : "no"});
  results.push_back({{"check", "same seed, alone against in a batch of 3"},
                     {"answers_identical", batch_comparison.token_ids_identical},
                     {"first_differing_step", batch_comparison.first_differing_step},
                     {"logits_bit_identical", batch_comparison.logits_bit_identical}});
  section.table(std::move(table));
  section.paragraph(
      "Different seeds give different answers (the logits differ too once the answers diverge, since each step "
      "continues a different text). With the same seed, turning the cache on or off changes nothing, bit for bit, "
      "and neither does sharing the batch. Greedy decoding is the quickest test when a report comes in: if the greedy "
      "answers with and without the cache agree token for token, the cache is exonerated and the difference lies in "
      "how the two runs sample (the last check reproduces the usual culprit). If even the greedy answers differ, look "
      "at the cache and the position bookkeeping.");

  section.data["checks"] = results;
  section.data["max_new_tokens"] = new_tokens;
  section.data["prompt"] = message;
  section.data["different_seeds_differ"] = !results[0]["answers_identical"].get<bool>();
  section.data["same_seed_cache_on_off_identical"] = results[1]["answers_identical"].get<bool>();
  section.data["greedy_cache_on_off_identical"] = results[2]["answers_identical"].get<bool>();
  section.data["alone_and_in_batch_identical"] = batch_comparison.token_ids_identical;
  section.summary.push_back(
      std::string("seeds: different seeds ") +
      (results[0]["answers_identical"].get<bool>() ? "gave the SAME answer" : "differ") +
      "; same seed with cache on/off " + (results[1]["answers_identical"].get<bool>() ? "identical" : "DIFFER") +
      "; greedy on/off " + (results[2]["answers_identical"].get<bool>() ? "identical" : "DIFFER") +
      "; alone vs in a batch " + (batch_comparison.token_ids_identical ? "identical" : "DIFFER"));
  return section;
}

}  // namespace minigen::lab
