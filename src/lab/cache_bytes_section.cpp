// Section 4: what the cache costs in memory. K and V for every layer, position and kv head:
// 2 · layers · length · kv_heads · head_dim · bytes_per_element, stored before GQA's repeat_kv — in the report's
// --kv-dtype (int8 adds 2 · layers · length · kv_heads · 4 bytes of scales).
#include <algorithm>
#include <string>
#include <vector>

#include "cache/kv_cache.h"
#include "core/format.h"
#include "lab/kv_budget.h"
#include "lab/lab_sections.h"

namespace minigen::lab {
namespace {

constexpr uint64_t kGiB = uint64_t{1} << 30;

// 2 · layers · length · kv_heads · head_dim · bytes_per_element (+ int8: 2 · layers · length · kv_heads · 4)
uint64_t kv_formula_bytes(const ModelConfig& config, int length_tokens, KvDType dtype) {
  const uint64_t scales = dtype == KvDType::kInt8 ? 4 : 0;
  return 2ULL * config.num_layers * static_cast<uint64_t>(length_tokens) * config.num_kv_heads *
         (config.head_dim * kv_dtype_bytes(dtype) + scales);
}

// "· 4 B (f32)", "· 1 B (int8) + 2 · 4 · length · 2 · 4 B of scales": the formula's last factor in words, `length`
// standing for the positions.
std::string element_text(const ModelConfig& config, KvDType dtype, const std::string& length) {
  std::string text = " · " + std::to_string(kv_dtype_bytes(dtype)) + " B (" + std::string(kv_dtype_name(dtype)) + ")";
  if (dtype == KvDType::kInt8) {
    text += " + 2 · " + std::to_string(config.num_layers) + " · " + length + " · " +
            std::to_string(config.num_kv_heads) + " · 4 B of scales";
  }
  return text;
}

// A KvCache filled to `length_tokens` positions (the forward pass would write them; only the size matters here).
uint64_t bytes_used_at(const ModelConfig& config, int length_tokens, KvDType dtype) {
  KvCache cache(config.kv_layout(dtype), length_tokens);
  cache.advance(length_tokens);
  return cache.bytes_used();
}

std::string mib(double bytes) { return fixed(bytes / (1024.0 * 1024.0), 2) + " MiB"; }

// MiniMind2 and minimind-3 reach the same bytes per token by different shapes; say so when the table shows it.
std::string same_cost_note(const ModelConfig& minimind2, const ModelConfig& minimind3, KvDType dtype) {
  const std::size_t per_token = minimind2.kv_bytes_per_token(dtype);
  if (per_token != minimind3.kv_bytes_per_token(dtype)) return "";
  auto shape = [](const ModelConfig& c) {
    return std::to_string(c.num_layers) + " layers × " + std::to_string(c.num_kv_heads) + " kv heads × head_dim " +
           std::to_string(c.head_dim);
  };
  return "MiniMind2 and minimind-3 need the same " + with_thousands(static_cast<long long>(per_token)) +
         " B per token by different routes: " + shape(minimind2) + " against " + shape(minimind3) + ".";
}

}  // namespace

ReportSection cache_bytes_section(LabContext& lab) {
  ReportSection section;
  section.key = "cache_bytes";
  section.title = "Cache bytes";
  const ModelConfig& config = lab.base().model->config;
  const KvDType dtype = lab.kv_dtype();
  const int max_length = std::min(lab.scale().kv_max_length, config.max_position_embeddings);
  const std::string model_name = identify_family(config);
  section.paragraph(
      "The cache holds, for every layer, one key vector and one value vector per position and per **key/value** "
      "head: 2 · layers · length · kv_heads · head_dim · bytes per element. For this model (" +
      model_name + ") that is 2 · " + std::to_string(config.num_layers) + " · length · " +
      std::to_string(config.num_kv_heads) + " · " + std::to_string(config.head_dim) +
      element_text(config, dtype, "length") + " = " +
      with_thousands(static_cast<long long>(kv_formula_bytes(config, 1, dtype))) +
      " B per token. MiniMind stores K and V before `repeat_kv` copies them to match the query heads, and so does "
      "minigen: with grouped-query attention (GQA) the cache shrinks by q_heads / kv_heads.");

  // What each --kv-dtype costs per token for this model: the same formula with other element sizes.
  ReportTable dtype_table{{"--kv-dtype", "bytes per element", "bytes per token", "1,000 tokens"}, {}};
  nlohmann::json dtype_rows = nlohmann::json::array();
  for (KvDType each : {KvDType::kF32, KvDType::kBF16, KvDType::kF16, KvDType::kInt8}) {
    const uint64_t per_token = bytes_used_at(config, 1, each);
    dtype_table.rows.push_back({std::string(kv_dtype_name(each)) + (each == dtype ? " (this report)" : ""),
                                each == KvDType::kInt8 ? "1 + scales" : std::to_string(kv_dtype_bytes(each)),
                                with_thousands(static_cast<long long>(per_token)),
                                with_thousands(static_cast<long long>(1000 * per_token))});
    dtype_rows.push_back({{"kv_dtype", kv_dtype_name(each)}, {"kv_bytes_per_token", per_token}});
  }
  section.paragraph(
      "The element type is `--kv-dtype`: bf16 and f16 halve the bytes, int8 quarters them and adds one fp32 scale "
      "per position, kv head and K or V. Attention widens every element back to fp32 before it computes:");
  section.table(std::move(dtype_table));
  section.data["kv_dtypes"] = dtype_rows;

  // Every length from 1 to the maximum, growing one position at a time as decoding does. bytes_used is the live
  // length; bytes_allocated is the capacity, which doubles when a position does not fit (amortised growth).
  lab.progress("  growing a cache to " + std::to_string(max_length) + " positions, one at a time");
  KvCache growing(config.kv_layout(dtype), 0);
  std::vector<int> lengths;
  std::vector<uint64_t> used;
  std::vector<uint64_t> allocated;
  bool used_matches_formula = true;
  for (int length = 1; length <= max_length; ++length) {
    growing.reserve_for(1);
    growing.advance(1);
    lengths.push_back(length);
    used.push_back(growing.bytes_used());
    allocated.push_back(growing.bytes_allocated());
    used_matches_formula = used_matches_formula && used.back() == kv_formula_bytes(config, length, dtype);
  }
  // For the plot: regular samples plus both sides of every capacity jump, so the staircase is drawn exactly.
  PlotSeries used_series{"bytes used = formula", {}, {}, "lines"};
  PlotSeries allocated_series{"bytes allocated (capacity doubles when full)", {}, {}, "lines dashtype 2"};
  const int stride = std::max(1, max_length / 400);
  for (std::size_t i = 0; i < lengths.size(); ++i) {
    const bool jump_side =
        (i + 1 < lengths.size() && allocated[i + 1] != allocated[i]) || (i > 0 && allocated[i - 1] != allocated[i]);
    if (i % stride != 0 && !jump_side && i + 1 != lengths.size()) continue;
    used_series.x.push_back(lengths[i]);
    used_series.y.push_back(static_cast<double>(used[i]) / (1024.0 * 1024.0));
    allocated_series.x.push_back(lengths[i]);
    allocated_series.y.push_back(static_cast<double>(allocated[i]) / (1024.0 * 1024.0));
  }
  section.paragraph(
      "A cache grown one position at a time up to " + with_thousands(max_length) +
      " positions: at every length the bytes used equal the formula (" +
      (used_matches_formula ? "checked at all " + with_thousands(max_length) + " lengths" : "**NOT at every length**") +
      "). The memory actually reserved is larger between doublings; generate() avoids that by reserving "
      "P + N positions for each row up front.");
  section.plot(PlotSpec{"cache_bytes.svg",
                        "KV cache bytes of the " + model_name + " model against length",
                        "cached length (tokens)",
                        "KV cache (MiB)",
                        false,
                        false,
                        {},
                        {allocated_series, used_series}},
               "Used bytes grow by exactly " +
                   with_thousands(static_cast<long long>(kv_formula_bytes(config, 1, dtype))) +
                   " B per token; a cache that grows on demand reserves up to twice that.");

  // Real generations: the bytes generate() reports after a run (positions cached: P + N − 1).
  ReportTable runs_table{
      {"P", "N", "positions cached (P+N−1)", "bytes used (measured)", "formula", "bytes reserved (P+N)"}, {}};
  nlohmann::json runs = nlohmann::json::array();
  for (const auto& [prompt_tokens, new_tokens] :
       std::vector<std::pair<int, int>>{{37, 64}, {kHeadlinePromptTokens, 64}}) {
    const GenerateStats& stats = lab.base_greedy_run(lab.base_prompt_of_length(prompt_tokens), new_tokens, true).stats;
    const int positions = prompt_tokens + new_tokens - 1;
    runs_table.rows.push_back({std::to_string(prompt_tokens), std::to_string(new_tokens), std::to_string(positions),
                               with_thousands(static_cast<long long>(stats.kv_bytes_used)),
                               with_thousands(static_cast<long long>(kv_formula_bytes(config, positions, dtype))),
                               with_thousands(static_cast<long long>(stats.kv_bytes_allocated))});
    runs.push_back({{"prompt_tokens", prompt_tokens},
                    {"new_tokens", new_tokens},
                    {"positions", positions},
                    {"kv_bytes_used", stats.kv_bytes_used},
                    {"kv_bytes_allocated", stats.kv_bytes_allocated},
                    {"formula", kv_formula_bytes(config, positions, dtype)}});
  }
  const uint64_t bytes_at_100 = bytes_used_at(config, 100, dtype);
  const ModelConfig module_model = config_for_family("tiny");  // the module's example shape
  const bool is_module_shape = config.num_layers == module_model.num_layers &&
                               config.num_kv_heads == module_model.num_kv_heads &&
                               config.head_dim == module_model.head_dim;
  section.paragraph(std::string(is_module_shape ? "The module's figure: "
                                                : "The module's figure is for a model of 4 layers, 2 kv "
                                                  "heads and head_dim 32 (204,800 B at 100 tokens in fp32); "
                                                  "for this model, ") +
                    "100 cached tokens take 2 · " + std::to_string(config.num_layers) + " layers · 100 · " +
                    std::to_string(config.num_kv_heads) + " heads · " + std::to_string(config.head_dim) +
                    element_text(config, dtype, "100") + " = **" +
                    with_thousands(static_cast<long long>(bytes_at_100)) +
                    " B**. A real generation that ends with 100 cached positions (a 37-token prompt and 64 new "
                    "tokens) reports the same, and so does the module's 183 + 64 run:");
  section.table(std::move(runs_table));

  // GQA against the same model with kv_heads = q_heads (plain multi-head attention).
  ReportTable gqa_table{
      {"model", "q heads", "kv heads", "bytes per token (GQA)", "bytes per token if kv_heads = q_heads",
       "100 tokens (GQA)", "100 tokens (kv_heads = q_heads)", "saving"},
      {}};
  nlohmann::json gqa = nlohmann::json::array();
  const std::vector<std::pair<std::string, ModelConfig>> families = {{model_name + " (this model)", config},
                                                                     {"MiniMind2", config_for_family("minimind2")},
                                                                     {"minimind-3", config_for_family("minimind3")}};
  for (const auto& [name, family_config] : families) {
    ModelConfig without_gqa = family_config;
    without_gqa.num_kv_heads = family_config.num_q_heads;
    const uint64_t with_gqa_bytes = bytes_used_at(family_config, 100, dtype);
    const uint64_t without_gqa_bytes = bytes_used_at(without_gqa, 100, dtype);
    const double ratio = static_cast<double>(without_gqa_bytes) / static_cast<double>(with_gqa_bytes);
    gqa_table.rows.push_back({name, std::to_string(family_config.num_q_heads),
                              std::to_string(family_config.num_kv_heads),
                              with_thousands(static_cast<long long>(with_gqa_bytes / 100)),
                              with_thousands(static_cast<long long>(without_gqa_bytes / 100)),
                              with_thousands(static_cast<long long>(with_gqa_bytes)),
                              with_thousands(static_cast<long long>(without_gqa_bytes)), fixed(ratio, 0) + "×"});
    gqa.push_back({{"model", name},
                   {"q_heads", family_config.num_q_heads},
                   {"kv_heads", family_config.num_kv_heads},
                   {"bytes_at_100_tokens", with_gqa_bytes},
                   {"bytes_at_100_tokens_without_gqa", without_gqa_bytes},
                   {"ratio", ratio}});
  }
  section.paragraph(
      "Grouped-query attention lets several query heads share one key/value head. The cache only "
      "stores the shared heads, so against the same model with one kv head per query head it is "
      "q_heads / kv_heads times smaller (measured with KvCache objects of both shapes):");
  section.table(std::move(gqa_table));

  // Concurrent sequences per memory budget: what is left after the weights, divided by one sequence's cache.
  const std::vector<std::pair<std::string, uint64_t>> budgets = {
      {"1 GiB", kGiB}, {"24 GiB", 24 * kGiB}, {"80 GiB", 80 * kGiB}};
  ReportTable budget_table{{"model", "weights (fp32)", "sequence length L", "KV cache per sequence", "fits in 1 GiB",
                            "fits in 24 GiB", "fits in 80 GiB"},
                           {}};
  nlohmann::json budget_rows = nlohmann::json::array();
  for (const auto& [name, family_config] : families) {
    const uint64_t weights_bytes = static_cast<uint64_t>(family_config.parameter_count()) * sizeof(float);
    const std::size_t per_token = family_config.kv_bytes_per_token(dtype);
    for (int length_tokens : {256, 2048, 32768}) {
      std::vector<std::string> row = {name, mib(static_cast<double>(weights_bytes)), with_thousands(length_tokens),
                                      mib(static_cast<double>(per_token) * length_tokens)};
      nlohmann::json fits = nlohmann::json::object();
      for (const auto& [budget_name, budget_bytes] : budgets) {
        const int64_t sequences = sequences_in_budget(budget_bytes, weights_bytes, per_token, length_tokens);
        row.push_back(with_thousands(sequences));
        fits[budget_name] = sequences;
      }
      budget_table.rows.push_back(std::move(row));
      budget_rows.push_back({{"model", name},
                             {"length_tokens", length_tokens},
                             {"kv_bytes_per_token", per_token},
                             {"weights_bytes", weights_bytes},
                             {"sequences", fits}});
    }
  }
  section.paragraph(
      "In serving, this number decides how many requests run at once. Each cell below is ⌊(budget − "
      "weights) / (bytes per token · L)⌋, with fp32 weights and the cache in " +
      std::string(kv_dtype_name(dtype)) + " (this report's --kv-dtype). " +
      same_cost_note(families[1].second, families[2].second, dtype));
  section.table(std::move(budget_table));

  section.data["config"] = {{"layers", config.num_layers},
                            {"kv_heads", config.num_kv_heads},
                            {"q_heads", config.num_q_heads},
                            {"head_dim", config.head_dim},
                            {"kv_dtype", kv_dtype_name(dtype)},
                            {"bytes_per_element", kv_dtype_bytes(dtype)},
                            {"kv_bytes_per_token", config.kv_bytes_per_token(dtype)}};
  section.data["lengths"] = lengths;
  section.data["bytes_used"] = used;
  section.data["bytes_allocated_growing"] = allocated;
  section.data["bytes_used_match_formula"] = used_matches_formula;
  section.data["bytes_at_100_tokens"] = bytes_at_100;
  section.data["generate_runs"] = runs;
  section.data["gqa"] = gqa;
  section.data["gqa_ratio"] = gqa.front()["ratio"];
  section.data["budgets"] = budget_rows;
  section.summary.push_back("cache bytes: " + with_thousands(static_cast<long long>(bytes_at_100)) +
                            " B at 100 tokens; used = formula at every length to " + with_thousands(max_length) +
                            (used_matches_formula ? "" : " — NOT MATCHED") + "; GQA saves " +
                            fixed(gqa.front()["ratio"].get<double>(), 0) + "× (" + std::to_string(config.num_q_heads) +
                            " q heads / " + std::to_string(config.num_kv_heads) + " kv heads)");
  return section;
}

}  // namespace minigen::lab
