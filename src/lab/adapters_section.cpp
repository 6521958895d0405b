// Section 11, measured: what a LoRA adapter adds to the SFT model — its parameters and bytes by the formula; that
// with B = 0 (MiniMind's initialisation) it changes nothing; how far an adapter of a trained size moves the logits and
// the greedy answers; that merging it into W changes nothing but rounding; and what several adapters cost in one
// batch. The runs call the forward pass directly, one row per question, each row naming its adapter.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <memory>
#include <optional>

#include "cache/kv_cache.h"
#include "lab/adapter_variants.h"
#include "lab/section_measures.h"
#include "sampling/token_choice.h"

namespace minigen::lab {
namespace {

using Clock = std::chrono::steady_clock;
using Answers = std::vector<std::vector<int>>;

// Greedy answers of a batch with the cache, eos ignored (every answer new_tokens long, so two runs compare position
// by position): one prefill call for all prompts, then new_tokens − 1 decode steps; row r with adapters[r] (nullptr:
// the weights alone). `decode_seconds`, when given, receives the time of the decode steps (the prefill is untimed).
Answers greedy_batch(Transformer& transformer, const std::vector<std::vector<int>>& prompts,
                     const std::vector<const LoraAdapter*>& adapters, int new_tokens, KvDType kv_dtype,
                     double* decode_seconds = nullptr) {
  const ModelConfig& config = transformer.model().config;
  const std::size_t vocab = config.vocab_size;
  std::vector<KvCache> caches;
  caches.reserve(prompts.size());
  std::vector<ForwardRow> rows;
  for (std::size_t r = 0; r < prompts.size(); ++r) {
    caches.emplace_back(config.kv_layout(kv_dtype), static_cast<int>(prompts[r].size()) + new_tokens);
    rows.push_back(ForwardRow{&caches[r], prompts[r], false, adapters[r]});
  }
  Answers answers(prompts.size());
  std::vector<int> next(prompts.size());
  Clock::time_point start;
  for (int step = 0; step < new_tokens; ++step) {
    if (step == 1) start = Clock::now();
    const std::vector<float>& logits = transformer.forward(rows);
    for (std::size_t r = 0; r < rows.size(); ++r) {
      next[r] = argmax(std::span(logits).subspan(r * vocab, vocab));
      answers[r].push_back(next[r]);
      rows[r].tokens = std::span(&next[r], 1);
    }
  }
  if (decode_seconds != nullptr) {
    *decode_seconds = new_tokens > 1 ? std::chrono::duration<double>(Clock::now() - start).count() : 0;
  }
  return answers;
}

Answers greedy_answers(Transformer& transformer, const std::vector<std::vector<int>>& prompts,
                       const LoraAdapter* adapter, int new_tokens, KvDType kv_dtype) {
  return greedy_batch(transformer, prompts, std::vector<const LoraAdapter*>(prompts.size(), adapter), new_tokens,
                      kv_dtype);
}

// The logits at each answer position with the prompt and the answer fed (the answer given, not chosen), one call for
// all rows: per row, answer length × vocab floats, position i being what predicts answer token i. Feeding the same
// text to two runs compares them on equal terms even where their own greedy answers part.
std::vector<std::vector<float>> answer_logits(Transformer& transformer, const std::vector<std::vector<int>>& prompts,
                                              const Answers& answers, const LoraAdapter* adapter, KvDType kv_dtype) {
  const ModelConfig& config = transformer.model().config;
  const std::size_t vocab = config.vocab_size;
  std::vector<std::vector<int>> sequences;
  std::vector<KvCache> caches;
  caches.reserve(prompts.size());
  for (std::size_t r = 0; r < prompts.size(); ++r) {
    std::vector<int> sequence = prompts[r];
    sequence.insert(sequence.end(), answers[r].begin(), answers[r].end() - 1);  // the last token predicts nothing
    caches.emplace_back(config.kv_layout(kv_dtype), static_cast<int>(sequence.size()));
    sequences.push_back(std::move(sequence));
  }
  std::vector<ForwardRow> rows;
  for (std::size_t r = 0; r < prompts.size(); ++r) rows.push_back(ForwardRow{&caches[r], sequences[r], true, adapter});
  const std::vector<float>& logits = transformer.forward(rows);
  std::vector<std::vector<float>> per_row;
  std::size_t offset = 0;
  for (std::size_t r = 0; r < prompts.size(); ++r) {
    const std::size_t first = (offset + prompts[r].size() - 1) * vocab;
    per_row.emplace_back(logits.begin() + first, logits.begin() + first + answers[r].size() * vocab);
    offset += sequences[r].size();
  }
  return per_row;
}

// An answer as a reader sees it: up to and including its first eos (the batch ran on past it, eos ignored, so that
// every row takes the same number of steps).
std::span<const int> visible(const std::vector<int>& answer, int eos_id) {
  const auto end = std::find(answer.begin(), answer.end(), eos_id);
  return std::span(answer.data(), static_cast<std::size_t>(end - answer.begin()) + (end == answer.end() ? 0 : 1));
}

// A run against its reference: the logits at the reference answers' positions (up to their eos) when both score the
// reference's text, and their own greedy answers as a reader sees them.
AdapterEffect compare_runs(const std::vector<std::vector<float>>& reference_logits, const Answers& reference_answers,
                           const std::vector<std::vector<float>>& logits, const Answers& answers, std::size_t vocab,
                           int eos_id) {
  AdapterEffect effect;
  effect.rows = static_cast<int>(answers.size());
  double kl_sum = 0;
  bool bits_equal = true;
  for (std::size_t r = 0; r < answers.size(); ++r) {
    const std::span<const int> reference_answer = visible(reference_answers[r], eos_id);
    const std::span<const int> answer = visible(answers[r], eos_id);
    const std::span<const float> reference = std::span(reference_logits[r]).first(reference_answer.size() * vocab);
    const std::span<const float> run = std::span(logits[r]).first(reference.size());
    bits_equal = bits_equal && std::memcmp(reference.data(), run.data(), reference.size_bytes()) == 0;
    for (std::size_t position = 0; position < reference_answer.size(); ++position) {
      const auto expected = reference.subspan(position * vocab, vocab);
      const auto got = run.subspan(position * vocab, vocab);
      for (std::size_t i = 0; i < vocab; ++i) {
        effect.max_abs_logit_delta =
            std::max(effect.max_abs_logit_delta, std::fabs(static_cast<double>(expected[i]) - got[i]));
      }
      kl_sum += kl_divergence_nats(expected, got);
      effect.top1_agreeing += argmax(expected) == argmax(got) ? 1 : 0;
      ++effect.positions;
    }
    const auto [ours, theirs] =
        std::mismatch(answer.begin(), answer.end(), reference_answer.begin(), reference_answer.end());
    const bool identical = ours == answer.end() && theirs == reference_answer.end();
    effect.first_differing_step.push_back(identical ? -1 : static_cast<int>(ours - answer.begin()));
    effect.rows_identical += identical ? 1 : 0;
  }
  effect.logits_bit_identical = bits_equal;
  effect.mean_kl_nats = effect.positions > 0 ? kl_sum / static_cast<double>(effect.positions) : 0;
  return effect;
}

// The answer as a reader sees it, as text (the eos, a special token, is skipped).
std::string answer_text(const Tokenizer& tokenizer, const std::vector<int>& answer) {
  return tokenizer.decode(visible(answer, tokenizer.eos_id()), true);
}

// kMixedBatchRows rows on the questions in turn: every fourth row on the weights alone, the others on three adapters
// (the adapter and two copies in memory of their own, so the step reads three adapters' matrices), against the same
// rows all on the weights alone. The two batches run in turn, after one warm-up each.
MixedBatchTiming time_mixed_batch(Transformer& transformer, const std::vector<std::vector<int>>& questions,
                                  const LoraAdapter& adapter, const LabScale& scale, KvDType kv_dtype) {
  const ModelConfig& config = transformer.model().config;
  const LoraAdapter copy_one = copy_of_adapter(config, adapter);
  const LoraAdapter copy_two = copy_of_adapter(config, adapter);
  const LoraAdapter* const distinct[kMixedBatchAdapters] = {&adapter, &copy_one, &copy_two};
  MixedBatchTiming timing;
  timing.rows = kMixedBatchRows;
  timing.adapters = kMixedBatchAdapters;
  timing.steps = scale.adapter_timed_steps;
  std::vector<std::vector<int>> prompts;
  std::vector<const LoraAdapter*> mixed;
  for (int r = 0; r < kMixedBatchRows; ++r) {
    prompts.push_back(questions[r % questions.size()]);
    const int slot = r % (kMixedBatchAdapters + 1);
    mixed.push_back(slot == 0 ? nullptr : distinct[slot - 1]);
    timing.base_rows += slot == 0 ? 1 : 0;
  }
  const std::vector<const LoraAdapter*> base(kMixedBatchRows, nullptr);
  const auto ms_per_step = [&](const std::vector<const LoraAdapter*>& adapters) {
    double seconds = 0;
    greedy_batch(transformer, prompts, adapters, timing.steps + 1, kv_dtype, &seconds);
    return seconds * 1000.0 / timing.steps;
  };
  ms_per_step(base);
  ms_per_step(mixed);
  for (int repeat = 0; repeat < scale.adapter_timing_repeats; ++repeat) {
    timing.base_ms_per_step.push_back(ms_per_step(base));
    timing.mixed_ms_per_step.push_back(ms_per_step(mixed));
  }
  return timing;
}

}  // namespace

AdaptersData measure_adapters(LabContext& lab) {
  AdaptersData data;
  const Model& model = *lab.sft().model;
  const ModelConfig& config = model.config;
  const std::size_t vocab = config.vocab_size;
  Transformer& transformer = lab.sft_transformer();
  const KvDType kv_dtype = lab.kv_dtype();
  data.new_tokens = lab.scale().adapter_new_tokens;
  std::vector<std::vector<int>> prompts;
  const std::vector<std::string>& messages = lab.chat_messages();
  for (std::size_t i = 0; i < std::min(messages.size(), kAdapterChatPrompts); ++i) {
    data.prompts.push_back(messages[i]);
    prompts.push_back(lab.chat_prompt(messages[i]));
  }

  // The learner's adapter, or a random one in MiniMind's shape with B of a trained size.
  std::optional<LoraAdapter> random;
  const LoraAdapter* adapter = lab.learners_adapter();
  data.learners_adapter = adapter != nullptr;
  if (adapter == nullptr) {
    random = trained_shaped_adapter(config, model.weights, kAdapterRank, kAdapterRelativeSize, 11);
    adapter = &*random;
    data.target_relative_size = kAdapterRelativeSize;
  }
  data.adapter_source = data.learners_adapter ? adapter->source : "random";
  data.adapter_summary = adapter->summary();
  data.adapter_summary_zh = adapter->summary_zh();
  data.scale = adapter->scale;
  data.relative_size = relative_size(*adapter, model.weights);
  data.size = adapter_size(*adapter, config, identify_family(config));
  data.minimind3 = minimind_adapter_size(config_for_family("minimind3"), kAdapterRank, "minimind-3");

  lab.progress(lab.say("  greedy answers on the base weights, with B = 0 and with the adapter",
                       "  基础权重上的贪心回答：不加适配器、B = 0、加适配器"));
  const LoraAdapter zero_b = with_zero_b(config, *adapter);
  const Answers base = greedy_answers(transformer, prompts, nullptr, data.new_tokens, kv_dtype);
  const Answers with_zero_b_answers = greedy_answers(transformer, prompts, &zero_b, data.new_tokens, kv_dtype);
  const Answers adapted = greedy_answers(transformer, prompts, adapter, data.new_tokens, kv_dtype);
  const auto base_logits = answer_logits(transformer, prompts, base, nullptr, kv_dtype);
  const int eos_id = lab.sft().tokenizer->eos_id();
  data.zero_b = compare_runs(base_logits, base, answer_logits(transformer, prompts, base, &zero_b, kv_dtype),
                             with_zero_b_answers, vocab, eos_id);
  data.trained = compare_runs(base_logits, base, answer_logits(transformer, prompts, base, adapter, kv_dtype), adapted,
                              vocab, eos_id);
  const Tokenizer& tokenizer = *lab.sft().tokenizer;
  const auto changed = std::find_if(data.trained.first_differing_step.begin(), data.trained.first_differing_step.end(),
                                    [](int step) { return step >= 0; });
  if (changed != data.trained.first_differing_step.end()) {
    data.example_prompt = static_cast<int>(changed - data.trained.first_differing_step.begin());
  }
  data.base_answer = answer_text(tokenizer, base[data.example_prompt]);
  data.adapter_answer = answer_text(tokenizer, adapted[data.example_prompt]);

  if (model.weights.stored_quantization() != WeightType::kF32) {
    data.merge_skipped = std::string("the SFT model's file stores ") +
                         std::string(weight_type_name(model.weights.stored_quantization())) +
                         " codes, not the fp32 weights a merge adds B·A to";
  } else {
    lab.progress(lab.say("  the adapter merged into a copy of the weights (fp32) against it unmerged",
                         "  把适配器合并进权重的副本（fp32），与不合并的比较"));
    ModelWeights merged_weights = model.weights;  // a copy: the SFT model itself stays as it is
    merge_lora_into(merged_weights, *adapter);
    Model merged_model(config, std::move(merged_weights));
    Transformer merged(merged_model, transformer.pool(), WeightType::kF32);
    merged_model.release_matrices();  // the packed copy is the one that runs
    // Both sides in fp32, whatever --weights the lab runs with: the comparison is of the merge, not of rounding W.
    std::unique_ptr<Transformer> f32_unmerged;
    Transformer* unmerged = &transformer;
    if (transformer.weight_type() != WeightType::kF32) {
      f32_unmerged = std::make_unique<Transformer>(model, transformer.pool(), WeightType::kF32);
      unmerged = f32_unmerged.get();
    }
    const Answers reference =
        unmerged == &transformer ? adapted : greedy_answers(*unmerged, prompts, adapter, data.new_tokens, kv_dtype);
    const Answers merged_answers = greedy_answers(merged, prompts, nullptr, data.new_tokens, kv_dtype);
    data.merged =
        compare_runs(answer_logits(*unmerged, prompts, reference, adapter, kv_dtype), reference,
                     answer_logits(merged, prompts, reference, nullptr, kv_dtype), merged_answers, vocab, eos_id);
  }

  const std::string rows = std::to_string(kMixedBatchRows);
  const std::string adapters = std::to_string(kMixedBatchAdapters);
  lab.progress(
      lab.say("  a batch of " + rows + " rows over " + adapters + " adapters and the base, against the base alone",
              "  " + rows + " 行的批次，混合 " + adapters + " 个适配器和基础模型，与只用基础模型的比较"));
  data.timing = time_mixed_batch(transformer, prompts, *adapter, lab.scale(), kv_dtype);
  return data;
}

}  // namespace minigen::lab
