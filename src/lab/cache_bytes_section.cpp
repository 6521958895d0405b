// Section 4, measured: what the cache costs in memory. K and V for every layer, position and kv head:
// 2 · layers · length · kv_heads · head_dim · bytes_per_element, stored before GQA's repeat_kv — in the report's
// --kv-dtype (int8 adds 2 · layers · length · kv_heads · 4 bytes of scales). Every number is read from a KvCache or
// a generate() run and set beside that formula.
#include <string>
#include <utility>
#include <vector>

#include "cache/kv_cache.h"
#include "lab/kv_budget.h"
#include "lab/section_measures.h"

namespace minigen::lab {
namespace {

constexpr uint64_t kGiB = uint64_t{1} << 30;

// 2 · layers · length · kv_heads · head_dim · bytes_per_element (+ int8: 2 · layers · length · kv_heads · 4)
uint64_t kv_formula_bytes(const ModelConfig& config, int length_tokens, KvDType dtype) {
  const uint64_t scales = dtype == KvDType::kInt8 ? 4 : 0;
  return 2ULL * config.num_layers * static_cast<uint64_t>(length_tokens) * config.num_kv_heads *
         (config.head_dim * kv_dtype_bytes(dtype) + scales);
}

KvShape shape_of(const std::string& name, const ModelConfig& config) {
  return KvShape{name, config.num_layers, config.num_q_heads, config.num_kv_heads, config.head_dim};
}

// Every length from 1 to the maximum, growing one position at a time as decoding does. bytes_used is the live
// length; bytes_allocated is the capacity, which doubles when a position does not fit (amortised growth).
void grow_cache(CacheBytesData& data, const ModelConfig& config) {
  KvCache growing(config.kv_layout(data.kv_dtype), 0);
  data.bytes_used_match_formula = true;
  for (int length = 1; length <= data.max_length; ++length) {
    growing.reserve_for(1);
    growing.advance(1);
    data.lengths.push_back(length);
    data.bytes_used.push_back(growing.bytes_used());
    data.bytes_allocated.push_back(growing.bytes_allocated());
    data.bytes_used_match_formula =
        data.bytes_used_match_formula && data.bytes_used.back() == kv_formula_bytes(config, length, data.kv_dtype);
  }
}

// GQA against the same shape with kv_heads = q_heads (plain multi-head attention), and how many sequences of each
// length fit in each memory budget after the fp32 weights.
void compare_families(CacheBytesData& data, const ModelConfig& config) {
  const std::vector<std::pair<std::string, ModelConfig>> families = {{data.model.name + " (this model)", config},
                                                                     {"MiniMind2", config_for_family("minimind2")},
                                                                     {"minimind-3", config_for_family("minimind3")}};
  const std::vector<std::pair<std::string, uint64_t>> budgets = {
      {"1 GiB", kGiB}, {"24 GiB", 24 * kGiB}, {"80 GiB", 80 * kGiB}};
  for (const auto& [name, family_config] : families) {
    ModelConfig without_gqa = family_config;
    without_gqa.num_kv_heads = family_config.num_q_heads;
    GqaSaving saving{shape_of(name, family_config), family_config.kv_bytes_per_token(data.kv_dtype),
                     kv_bytes_used_at(family_config, 100, data.kv_dtype),
                     kv_bytes_used_at(without_gqa, 100, data.kv_dtype), 0};
    saving.ratio =
        static_cast<double>(saving.bytes_at_100_tokens_without_gqa) / static_cast<double>(saving.bytes_at_100_tokens);
    data.gqa.push_back(saving);
    const uint64_t weights_bytes = static_cast<uint64_t>(family_config.parameter_count()) * sizeof(float);
    for (int length_tokens : {256, 2048, 32768}) {
      SequencesInBudget row{name, length_tokens, saving.kv_bytes_per_token, weights_bytes, {}};
      for (const auto& [budget_name, budget_bytes] : budgets) {
        row.sequences.emplace_back(
            budget_name, sequences_in_budget(budget_bytes, weights_bytes, saving.kv_bytes_per_token, length_tokens));
      }
      data.budgets.push_back(std::move(row));
    }
  }
}

}  // namespace

CacheBytesData measure_cache_bytes(LabContext& lab) {
  const ModelConfig& config = lab.base().model->config;
  CacheBytesData data;
  data.model = shape_of(identify_family(config), config);
  data.kv_dtype = lab.kv_dtype();
  data.formula_bytes_per_token = kv_formula_bytes(config, 1, data.kv_dtype);
  data.kv_bytes_per_token = config.kv_bytes_per_token(data.kv_dtype);
  for (KvDType each : {KvDType::kF32, KvDType::kBF16, KvDType::kF16, KvDType::kInt8}) {
    data.dtypes.push_back({each, kv_bytes_used_at(config, 1, each)});
  }
  data.max_length = std::min(lab.scale().kv_max_length, config.max_position_embeddings);
  lab.progress(lab.say("  growing a cache to " + std::to_string(data.max_length) + " positions, one at a time",
                       "  让缓存逐个位置增长到 " + std::to_string(data.max_length) + " 个位置"));
  grow_cache(data, config);
  // Real generations: the bytes generate() reports after a run (positions cached: P + N − 1).
  for (const auto& [prompt_tokens, new_tokens] :
       std::vector<std::pair<int, int>>{{37, 64}, {kHeadlinePromptTokens, 64}}) {
    const GenerateStats& stats = lab.base_greedy_run(lab.base_prompt_of_length(prompt_tokens), new_tokens, true).stats;
    const int positions = prompt_tokens + new_tokens - 1;
    data.generate_runs.push_back({prompt_tokens, new_tokens, positions, stats.kv_bytes_used, stats.kv_bytes_allocated,
                                  kv_formula_bytes(config, positions, data.kv_dtype)});
  }
  data.bytes_at_100_tokens = kv_bytes_used_at(config, 100, data.kv_dtype);
  const ModelConfig module_model = config_for_family("tiny");  // the module's example shape
  data.is_module_shape = config.num_layers == module_model.num_layers &&
                         config.num_kv_heads == module_model.num_kv_heads && config.head_dim == module_model.head_dim;
  compare_families(data, config);
  return data;
}

}  // namespace minigen::lab
