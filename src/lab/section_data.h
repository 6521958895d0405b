#pragma once
// What each of the lab's eleven sections measured, as plain values: the measure functions (section_measures.h) fill
// these from generate() and the cache/config APIs, the report writers (section_reports.h) turn them into prose,
// tables, plots and report.json. Nothing here knows a model or a file; the names carry their units.
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "eval/perplexity.h"
#include "lab/lab_statistics.h"
#include "ops/kv_dtype.h"
#include "ops/weight_type.h"

namespace minigen::lab {

// One model given alone plays both parts (never a shipped model in place of the missing one); the report says so.
enum class OneModelForBoth { kNo, kOnlyBaseGiven, kOnlySftGiven };

// 1. The same prompt continued with and without the cache.
struct EquivalenceRun {
  std::string prompt_name;
  int prompt_tokens = 0;
  bool sampled = false;  // false: greedy
  RowComparison comparison;
  std::vector<int> token_ids_cached;
  std::vector<int> token_ids_uncached;
  std::vector<int> prompt_token_ids;  // bos + the prompt text's tokens
};

struct CacheEquivalenceData {
  int new_tokens = 0;
  uint64_t sampling_seed = 0;
  int vocab_size = 0;
  std::vector<EquivalenceRun> runs;                      // greedy on every prompt, then sampled
  std::optional<std::string> genesis_continuation_text;  // the greedy continuation of the long prompt, decoded
  int genesis_prompt_tokens = 0;
  int genesis_text_prompt_tokens = 0;  // the whole prompt text with bos, before the cut or extension
  std::string prompt_text_source;      // the text the prompts were cut from: a shipped file or the learner's
};

// 2. Tokens fed to forward in one mode, beside the module's formula for it.
struct ForwardTokensMode {
  int64_t forward_tokens = 0;
  int64_t formula = 0;  // P + N − 1 with the cache, P·N + N(N−1)/2 without (set even when the mode is not run)
  int forward_calls = 0;
  double total_ms = 0;
};

struct ForwardTokensPoint {
  int prompt_tokens = 0;
  int new_tokens = 0;
  ForwardTokensMode cached;
  bool uncached_run = false;  // false when the no-cache run would exceed the run's budget
  ForwardTokensMode uncached;
};

// A mixture-of-experts base model's router during the headline run of one mode.
struct ExpertRoutingRun {
  bool cached = false;
  int64_t forward_tokens = 0;
  int64_t expert_assignments = 0;          // counted in the router, all layers
  int64_t expected_assignments = 0;        // tokens × top-k × layers
  std::vector<int64_t> tokens_per_expert;  // [layer · experts + expert]
};

struct ExpertRouting {
  int experts = 0;
  int experts_per_token = 0;
  int layers = 0;
  std::vector<ExpertRoutingRun> runs;  // with the cache, then without
};

struct ForwardTokensData {
  std::vector<ForwardTokensPoint> grid;
  std::vector<ForwardTokensPoint> sweep_at_183;
  int64_t max_uncached_grid_tokens = 0;
  // The two formulas at P = 183 for N = 1 … the sweep's last N, drawn as curves under the measured points.
  std::vector<int> formula_new_tokens;
  std::vector<int64_t> cached_formula_curve;
  std::vector<int64_t> uncached_formula_curve;
  ForwardTokensPoint headline;  // P = 183, N = 64
  std::optional<ExpertRouting> routing;
  std::string prompt_text_source;  // the text every prompt of P tokens was cut from
};

// 3. Times of repeated runs (the report shows their medians).
struct TimingSamples {
  std::vector<double> ttft_ms;
  std::vector<double> itl_ms;
  std::vector<double> total_ms;
};

struct TimingPoint {
  int prompt_tokens = 0;
  int new_tokens = 0;
  TimingSamples cached;
  TimingSamples uncached;
};

struct TimingData {
  int repeats = 0;
  int threads = 0;
  TimingPoint headline;               // P = 183, N = 64
  int against_prompt_new_tokens = 0;  // N at every point of the next list
  std::vector<TimingPoint> against_prompt_length;
};

// 4. Cache bytes.
struct KvShape {
  std::string name;
  int layers = 0;
  int q_heads = 0;
  int kv_heads = 0;
  int head_dim = 0;
};

struct KvDTypeCost {
  KvDType dtype = KvDType::kF32;
  uint64_t kv_bytes_per_token = 0;  // measured with a one-position cache
};

struct CacheRunBytes {
  int prompt_tokens = 0;
  int new_tokens = 0;
  int positions = 0;  // P + N − 1
  uint64_t kv_bytes_used = 0;
  uint64_t kv_bytes_allocated = 0;
  uint64_t formula = 0;
};

struct GqaSaving {
  KvShape shape;
  std::size_t kv_bytes_per_token = 0;  // in the report's KV dtype
  uint64_t bytes_at_100_tokens = 0;
  uint64_t bytes_at_100_tokens_without_gqa = 0;  // the same shape with kv_heads = q_heads
  double ratio = 0;
};

struct SequencesInBudget {
  std::string model;
  int length_tokens = 0;
  std::size_t kv_bytes_per_token = 0;
  uint64_t weights_bytes = 0;
  std::vector<std::pair<std::string, int64_t>> sequences;  // per budget ("1 GiB", …)
};

struct CacheBytesData {
  KvShape model;
  KvDType kv_dtype = KvDType::kF32;
  uint64_t formula_bytes_per_token = 0;  // 2 · layers · kv_heads · (head_dim · bytes (+ int8 scales))
  std::size_t kv_bytes_per_token = 0;    // the cache layout's
  std::vector<KvDTypeCost> dtypes;
  int max_length = 0;
  std::vector<int> lengths;  // 1 … max_length
  std::vector<uint64_t> bytes_used;
  std::vector<uint64_t> bytes_allocated;
  bool bytes_used_match_formula = false;
  std::vector<CacheRunBytes> generate_runs;
  uint64_t bytes_at_100_tokens = 0;
  bool is_module_shape = false;  // 4 layers, 2 kv heads, head_dim 32: the module's example
  std::vector<GqaSaving> gqa;    // this model, MiniMind2, minimind-3
  std::vector<SequencesInBudget> budgets;
};

// 5. Temperature: one batch of samples per prompt and setting.
struct TemperaturePromptResult {
  std::string prompt;
  int distinct_answers = 0;
  int distinct_openings = 0;  // among the answers' first opening_tokens tokens
  double mean_length_tokens = 0;
  double eos_share = 0;
  double mean_entropy_bits = 0;
  std::vector<std::string> answers;        // decoded, special tokens skipped
  std::vector<std::vector<int>> openings;  // each answer's first opening_tokens token ids, in the answers' order
};

struct TemperatureSettingResult {
  std::string name;        // "greedy", "T = 0.7"
  double temperature = 0;  // 0: greedy
  std::vector<TemperaturePromptResult> prompts;
};

struct TemperatureData {
  int samples = 0;
  int max_new_tokens = 0;
  uint64_t seed = 0;
  std::size_t opening_tokens = 0;
  std::vector<TemperatureSettingResult> settings;
  std::string chat_prompts_source;  // where the questions came from: built in, a shipped file or the learner's
};

// 6. Candidates kept per step by one filter.
struct CandidateCounts {
  std::string name;
  std::vector<int> kept;                // per generated step
  std::vector<double> top_probability;  // the same steps: probability of the likeliest token (T = 1)
};

struct TopPData {
  int prompt_count = 0;
  int rows = 0;
  int new_tokens = 0;
  int top_k = 0;
  int vocab_size = 0;
  double peaked_top_probability = 0;     // a step is peaked when its top token has at least this probability
  double flat_top_probability = 0;       // and flat when it has less than this
  std::vector<CandidateCounts> filters;  // the top-p values, then top-k for comparison
  std::vector<std::string> prompts;      // the questions asked
  std::string chat_prompts_source;
};

// 7. Eos padding in section 5's batches.
struct PaddingTotals {
  long long rows = 0;
  long long forward_calls = 0;  // steps of the batch, summed over batches
  long long useful_row_steps = 0;
  long long padding_row_steps = 0;
  long long rows_ended_with_eos = 0;

  double wasted_share() const {
    const long long total = useful_row_steps + padding_row_steps;
    return total > 0 ? static_cast<double>(padding_row_steps) / static_cast<double>(total) : 0;
  }
};

struct PaddedBatch {
  int prompt_index = 0;
  int forward_calls = 0;
  std::vector<int> padding_steps_per_row;
};

struct PaddingSetting {
  std::string setting;
  PaddingTotals totals;
  std::vector<PaddedBatch> batches;
};

// One batch step by step: the rows still generating and the rows padded with eos.
struct PaddingTrace {
  int rows = 0;
  std::vector<int> generating_rows;  // per step
  std::vector<int> padded_rows;
};

struct EosPaddingData {
  int rows_per_batch = 0;
  std::vector<PaddingSetting> settings;
  PaddingTotals all;
  std::optional<PaddingTrace> trace;  // the first prompt's batch at T = 1.0
};

// 8. Two runs of one request compared.
struct SeedCheck {
  std::string question;
  std::string setup_a;
  std::string setup_b;
  RowComparison comparison;
  // The answers; absent for the alone-against-in-a-batch check, whose report shows only the comparison.
  bool answers_kept = false;
  std::vector<int> token_ids_a;
  std::vector<int> token_ids_b;
  std::string text_a;
  std::string text_b;
};

struct SeedData {
  int new_tokens = 0;
  std::string prompt;
  std::vector<SeedCheck> checks;  // different seeds, same seed cache on/off, greedy on/off, the usual bug, batch
  std::string chat_prompts_source;
};

// 9. Shrinking the cache and the weights, each type against f32.
// How a run with a smaller cache follows the f32 cache's run of the same prompts.
struct Agreement {
  double max_abs_logit_delta = 0;
  int64_t steps = 0;           // every greedy step of every row
  int64_t compared_steps = 0;  // steps taken on the same text so far as the f32 run
  int64_t agreeing_steps = 0;  // of those, the steps that chose the f32 run's token
  int64_t rows = 0;
  int64_t identical_rows = 0;  // rows whose every token is the f32 run's

  // The share of decisions made on the same text that came out the same: a row that parts once at step 3 of 64
  // counts one disagreement, not 61 (after it the two runs continue different texts).
  double agreement_share() const {
    return compared_steps > 0 ? static_cast<double>(agreeing_steps) / static_cast<double>(compared_steps) : 0;
  }
};

struct KvTypeResult {
  KvDType dtype = KvDType::kF32;
  uint64_t bytes_at_100_tokens = 0;
  std::vector<int64_t> sequences_per_gib;  // at each of ShrinkingData::budget_lengths
  Agreement agreement;
  PerplexityResult perplexity;  // against the same weights with an f32 cache
};

struct WeightTypeResult {
  WeightType type = WeightType::kF32;
  std::size_t weight_bytes = 0;
  double decode_tokens_per_second = 0;
  PerplexityResult perplexity;  // against f32 weights
};

struct ShrinkingData {
  int new_tokens = 0;
  std::string eval_source;        // the evaluation set the perplexities scored
  bool eval_is_documents = true;  // .jsonl documents (bos + text + eos); else a plain text in windows
  int documents = 0;              // documents scored, or windows of a plain text
  int decode_tokens = 0;
  std::vector<int> budget_lengths;    // sequence lengths of the sequences-per-GiB columns
  std::vector<KvTypeResult> base_kv;  // f32, bf16, f16, int8
  std::vector<KvTypeResult> sft_kv;
  std::vector<WeightTypeResult> weights;  // f32, bf16, q8, q4
};

// 10. Answers sampled freely or through a JSON Schema's grammar.
struct ConstrainedRun {
  int parsed = 0;
  int stopped = 0;                      // ended by eos rather than max_new_tokens
  std::vector<double> removed_share;    // per step: 1 − allowed / vocabulary
  std::vector<double> kept_candidates;  // per step: what top-k/top-p/min-p left
  std::vector<std::string> texts;
};

struct ConstrainingData {
  std::string question;
  nlohmann::ordered_json schema;
  int samples = 0;
  int new_tokens = 0;
  uint64_t seed = 0;
  int vocab_size = 0;
  ConstrainedRun free;
  ConstrainedRun constrained;
};

// 11. LoRA adapters on the SFT model.
// The wrapped matrices of one name (q_proj in every layer, …): each adds rank · (in + out) parameters.
struct AdapterMatrixGroup {
  std::string name;  // "q_proj"
  int in = 0;
  int out = 0;
  int rank = 0;
  int matrices = 0;  // how many layers wrap it

  int64_t parameters_each() const { return static_cast<int64_t>(rank) * (in + out); }
};

struct AdapterSize {
  std::string model;  // what the adapter is for: the run's SFT model, or "minimind-3"
  int64_t model_parameters = 0;
  std::vector<AdapterMatrixGroup> groups;
  int64_t parameters = 0;  // Σ over groups of matrices · rank · (in + out)

  uint64_t fp32_bytes() const { return static_cast<uint64_t>(parameters) * 4; }
  uint64_t fp16_bytes() const { return static_cast<uint64_t>(parameters) * 2; }  // MiniMind saves its .pth in fp16
  double share_of_model() const {
    return model_parameters > 0 ? static_cast<double>(parameters) / static_cast<double>(model_parameters) : 0;
  }
};

// A run with an adapter against a reference run, both scoring the same text (the reference's greedy answers): the
// logits at each answer position, and the free greedy answers of each — an answer taken up to and including its
// first eos, as a reader sees it.
struct AdapterEffect {
  int64_t positions = 0;  // answer positions compared, all rows
  double max_abs_logit_delta = 0;
  bool logits_bit_identical = false;  // every compared logit equal bit for bit
  double mean_kl_nats = 0;            // mean over positions of KL(reference ‖ adapter) of the softmaxes
  int64_t top1_agreeing = 0;          // positions whose argmax is the reference's
  int rows = 0;
  int rows_identical = 0;                 // free greedy answers equal to the reference's to the end
  std::vector<int> first_differing_step;  // per row; −1 when identical

  double top1_share() const {
    return positions > 0 ? static_cast<double>(top1_agreeing) / static_cast<double>(positions) : 0;
  }
};

// Decode steps of one batch with the base weights alone, and of the same rows with some of them on adapters.
struct MixedBatchTiming {
  int rows = 0;
  int adapters = 0;                      // distinct adapters among the rows
  int base_rows = 0;                     // rows without an adapter in the mixed batch
  int steps = 0;                         // timed decode steps per run
  std::vector<double> base_ms_per_step;  // one per repeat, taken in turn with the mixed runs
  std::vector<double> mixed_ms_per_step;
};

struct AdaptersData {
  bool learners_adapter = false;   // --lora: the learner's adapter; else a random one in MiniMind's shape
  std::string adapter_source;      // the file, or "random"
  std::string adapter_summary;     // "q_proj, o_proj in 4 of 4 layers, rank 16"
  std::string adapter_summary_zh;  // "q_proj、o_proj（4 层中的 4 层），秩 16"
  float scale = 1.0f;
  // ‖scale · B·A‖_F ÷ ‖W‖_F over the wrapped matrices: the adapter's size against the weights it changes (measured;
  // a random adapter's B is drawn to make it target_relative_size).
  double relative_size = 0;
  double target_relative_size = 0;  // random adapters only
  AdapterSize size;                 // the adapter on this run's SFT model
  AdapterSize minimind3;            // MiniMind's shape on minimind-3 at rank 16, from the family's config
  int new_tokens = 0;               // greedy tokens per answer, eos ignored
  std::vector<std::string> prompts;
  AdapterEffect zero_b;   // B = 0 (MiniMind's initialisation) against the base
  AdapterEffect trained;  // the adapter against the base
  // The first question whose answer the adapter changed (the first question when it changed none), and its greedy
  // answers, decoded up to eos.
  int example_prompt = 0;
  std::string base_answer;
  std::string adapter_answer;
  std::optional<AdapterEffect> merged;  // W + scale·B·A in fp32 against the adapter unmerged (fp32 both)
  std::string merge_skipped;            // why merged is empty
  MixedBatchTiming timing;
};

}  // namespace minigen::lab
