// Section 8, measured: "the answers changed when I turned the cache on". Pairs of runs of one chat request that
// differ in the seed, the cache or greedy decoding, and the same request alone against inside a batch.
#include <string>
#include <vector>

#include "lab/section_measures.h"

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

struct Pair {
  std::string question;
  Setup a;
  Setup b;
};

}  // namespace

SeedData measure_seeds(LabContext& lab) {
  SeedData data;
  data.new_tokens = lab.scale().seed_new_tokens;
  data.prompt = lab.chat_messages().front();
  data.chat_prompts_source = lab.material().chat_prompts.source;
  const std::vector<int> prompt = lab.chat_prompt(data.prompt);
  const std::vector<Pair> pairs = {
      {"different seeds, both with the cache",
       {"seed 1, cache on", true, false, 1},
       {"seed 2, cache on", true, false, 2}},
      {"same seed, cache on against off", {"seed 1, cache on", true, false, 1}, {"seed 1, cache off", false, false, 1}},
      {"greedy, cache on against off", {"greedy, cache on", true, true, 1}, {"greedy, cache off", false, true, 1}},
      {"the usual bug: sampling on one side, greedy on the other",
       {"seed 1, cache on", true, false, 1},
       {"greedy, cache off", false, true, 1}},
  };
  const Tokenizer& tokenizer = *lab.sft().tokenizer;
  const std::vector<std::vector<int>> batch = {prompt};
  for (const Pair& pair : pairs) {
    lab.progress("  " + Words{lab.language()}.label(pair.question));
    const GenerateResult a = lab.generate(lab.sft_transformer(), batch, setup_options(pair.a, data.new_tokens));
    const GenerateResult b = lab.generate(lab.sft_transformer(), batch, setup_options(pair.b, data.new_tokens));
    const GeneratedSequence& row_a = a.sequences.front();
    const GeneratedSequence& row_b = b.sequences.front();
    data.checks.push_back({pair.question, pair.a.description, pair.b.description, compare_rows(row_a, row_b), true,
                           row_a.token_ids, row_b.token_ids, tokenizer.decode(row_a.token_ids, true),
                           tokenizer.decode(row_b.token_ids, true)});
  }

  // The same request alone and as row 0 of a batch with two other prompts: its row key (0) is the same, so its
  // draws are too — a shared global generator would give it different numbers here.
  lab.progress(
      lab.say("  the same request alone and inside a batch of three", "  同一个请求单独运行，以及在 3 行的批次中运行"));
  const Setup sampled{"seed 1, cache on", true, false, 1};
  const GenerateResult alone = lab.generate(lab.sft_transformer(), batch, setup_options(sampled, data.new_tokens));
  // The other two rows ask the next questions (the first again when the learner gave fewer than three).
  const std::vector<std::string>& messages = lab.chat_messages();
  const std::vector<std::vector<int>> shared_batch = {prompt, lab.chat_prompt(messages[1 % messages.size()]),
                                                      lab.chat_prompt(messages[2 % messages.size()])};
  const GenerateResult in_batch =
      lab.generate(lab.sft_transformer(), shared_batch, setup_options(sampled, data.new_tokens));
  SeedCheck batch_check;
  batch_check.question = "same seed, alone against in a batch of 3";
  batch_check.setup_a = "seed 1, alone";
  batch_check.setup_b = "seed 1, row 0 of 3";
  batch_check.comparison = compare_rows(alone.sequences.front(), in_batch.sequences.front());
  data.checks.push_back(std::move(batch_check));
  return data;
}

}  // namespace minigen::lab
