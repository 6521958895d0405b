// Section 4, written: the formula with this model's numbers, what each --kv-dtype costs, the cache grown one
// position at a time, real generations, GQA's saving, and how many sequences a memory budget holds.
#include <algorithm>
#include <string>
#include <vector>

#include "core/format.h"
#include "lab/section_reports.h"

namespace minigen::lab {
namespace {

std::string bytes_text(uint64_t bytes) { return with_thousands(static_cast<long long>(bytes)); }
std::string mib(double bytes) { return fixed(bytes / (1024.0 * 1024.0), 2) + " MiB"; }

// "· 4 B (f32)", "· 1 B (int8) + 2 · 4 · length · 2 · 4 B of scales": the formula's last factor in words, `length`
// standing for the positions.
std::string element_text(const KvShape& shape, KvDType dtype, const std::string& length) {
  std::string text = " · " + std::to_string(kv_dtype_bytes(dtype)) + " B (" + std::string(kv_dtype_name(dtype)) + ")";
  if (dtype == KvDType::kInt8) {
    text += " + 2 · " + std::to_string(shape.layers) + " · " + length + " · " + std::to_string(shape.kv_heads) +
            " · 4 B of scales";
  }
  return text;
}

// MiniMind2 and minimind-3 reach the same bytes per token by different shapes; say so when the table shows it.
std::string same_cost_note(const GqaSaving& minimind2, const GqaSaving& minimind3) {
  if (minimind2.kv_bytes_per_token != minimind3.kv_bytes_per_token) return "";
  auto shape = [](const KvShape& s) {
    return std::to_string(s.layers) + " layers × " + std::to_string(s.kv_heads) + " kv heads × head_dim " +
           std::to_string(s.head_dim);
  };
  return "MiniMind2 and minimind-3 need the same " +
         with_thousands(static_cast<long long>(minimind2.kv_bytes_per_token)) +
         " B per token by different routes: " + shape(minimind2.shape) + " against " + shape(minimind3.shape) + ".";
}

void add_dtypes(ReportSection& section, const CacheBytesData& data) {
  ReportTable table{{"--kv-dtype", "bytes per element", "bytes per token", "1,000 tokens"}, {}};
  nlohmann::json rows = nlohmann::json::array();
  for (const KvDTypeCost& cost : data.dtypes) {
    table.rows.push_back(
        {std::string(kv_dtype_name(cost.dtype)) + (cost.dtype == data.kv_dtype ? " (this report)" : ""),
         cost.dtype == KvDType::kInt8 ? "1 + scales" : std::to_string(kv_dtype_bytes(cost.dtype)),
         bytes_text(cost.kv_bytes_per_token), bytes_text(1000 * cost.kv_bytes_per_token)});
    rows.push_back({{"kv_dtype", kv_dtype_name(cost.dtype)}, {"kv_bytes_per_token", cost.kv_bytes_per_token}});
  }
  section.paragraph(
      "The element type is `--kv-dtype`: bf16 and f16 halve the bytes, int8 quarters them and adds one fp32 scale "
      "per position, kv head and K or V. Attention widens every element back to fp32 before it computes:");
  section.table(std::move(table));
  section.data["kv_dtypes"] = rows;
}

// For the plot: regular samples plus both sides of every capacity jump, so the staircase is drawn exactly.
void add_growth(ReportSection& section, const CacheBytesData& data) {
  PlotSeries used_series{"bytes used = formula", {}, {}, "lines"};
  PlotSeries allocated_series{"bytes allocated (capacity doubles when full)", {}, {}, "lines dashtype 2"};
  const std::vector<uint64_t>& allocated = data.bytes_allocated;
  const std::size_t count = data.lengths.size();
  const int stride = std::max(1, data.max_length / 400);
  for (std::size_t i = 0; i < count; ++i) {
    const bool jump_side =
        (i + 1 < count && allocated[i + 1] != allocated[i]) || (i > 0 && allocated[i - 1] != allocated[i]);
    if (i % stride != 0 && !jump_side && i + 1 != count) continue;
    used_series.x.push_back(data.lengths[i]);
    used_series.y.push_back(static_cast<double>(data.bytes_used[i]) / (1024.0 * 1024.0));
    allocated_series.x.push_back(data.lengths[i]);
    allocated_series.y.push_back(static_cast<double>(allocated[i]) / (1024.0 * 1024.0));
  }
  section.paragraph("A cache grown one position at a time up to " + with_thousands(data.max_length) +
                    " positions: at every length the bytes used equal the formula (" +
                    (data.bytes_used_match_formula ? "checked at all " + with_thousands(data.max_length) + " lengths"
                                                   : "**NOT at every length**") +
                    "). The memory actually reserved is larger between doublings; generate() avoids that by "
                    "reserving P + N positions for each row up front.");
  section.plot(PlotSpec{"cache_bytes.svg",
                        "KV cache bytes of the " + data.model.name + " model against length",
                        "cached length (tokens)",
                        "KV cache (MiB)",
                        false,
                        false,
                        {},
                        {allocated_series, used_series}},
               "Used bytes grow by exactly " + bytes_text(data.formula_bytes_per_token) +
                   " B per token; a cache that grows on demand reserves up to twice that.");
}

void add_generate_runs(ReportSection& section, const CacheBytesData& data) {
  ReportTable table{{"P", "N", "positions cached (P+N−1)", "bytes used (measured)", "formula", "bytes reserved (P+N)"},
                    {}};
  nlohmann::json runs = nlohmann::json::array();
  for (const CacheRunBytes& run : data.generate_runs) {
    table.rows.push_back({std::to_string(run.prompt_tokens), std::to_string(run.new_tokens),
                          std::to_string(run.positions), bytes_text(run.kv_bytes_used), bytes_text(run.formula),
                          bytes_text(run.kv_bytes_allocated)});
    runs.push_back({{"prompt_tokens", run.prompt_tokens},
                    {"new_tokens", run.new_tokens},
                    {"positions", run.positions},
                    {"kv_bytes_used", run.kv_bytes_used},
                    {"kv_bytes_allocated", run.kv_bytes_allocated},
                    {"formula", run.formula}});
  }
  const KvShape& model = data.model;
  section.paragraph(std::string(data.is_module_shape ? "The module's figure: "
                                                     : "The module's figure is for a model of 4 layers, 2 kv "
                                                       "heads and head_dim 32 (204,800 B at 100 tokens in fp32); "
                                                       "for this model, ") +
                    "100 cached tokens take 2 · " + std::to_string(model.layers) + " layers · 100 · " +
                    std::to_string(model.kv_heads) + " heads · " + std::to_string(model.head_dim) +
                    element_text(model, data.kv_dtype, "100") + " = **" + bytes_text(data.bytes_at_100_tokens) +
                    " B**. A real generation that ends with 100 cached positions (a 37-token prompt and 64 new "
                    "tokens) reports the same, and so does the module's 183 + 64 run:");
  section.table(std::move(table));
  section.data["generate_runs"] = runs;
}

void add_gqa(ReportSection& section, const CacheBytesData& data) {
  ReportTable table{{"model", "q heads", "kv heads", "bytes per token (GQA)", "bytes per token if kv_heads = q_heads",
                     "100 tokens (GQA)", "100 tokens (kv_heads = q_heads)", "saving"},
                    {}};
  nlohmann::json gqa = nlohmann::json::array();
  for (const GqaSaving& saving : data.gqa) {
    table.rows.push_back({saving.shape.name, std::to_string(saving.shape.q_heads),
                          std::to_string(saving.shape.kv_heads), bytes_text(saving.bytes_at_100_tokens / 100),
                          bytes_text(saving.bytes_at_100_tokens_without_gqa / 100),
                          bytes_text(saving.bytes_at_100_tokens), bytes_text(saving.bytes_at_100_tokens_without_gqa),
                          fixed(saving.ratio, 0) + "×"});
    gqa.push_back({{"model", saving.shape.name},
                   {"q_heads", saving.shape.q_heads},
                   {"kv_heads", saving.shape.kv_heads},
                   {"bytes_at_100_tokens", saving.bytes_at_100_tokens},
                   {"bytes_at_100_tokens_without_gqa", saving.bytes_at_100_tokens_without_gqa},
                   {"ratio", saving.ratio}});
  }
  section.paragraph(
      "Grouped-query attention lets several query heads share one key/value head. The cache only "
      "stores the shared heads, so against the same model with one kv head per query head it is "
      "q_heads / kv_heads times smaller (measured with KvCache objects of both shapes):");
  section.table(std::move(table));
  section.data["gqa"] = gqa;
  section.data["gqa_ratio"] = data.gqa.front().ratio;
}

// Concurrent sequences per memory budget: what is left after the weights, divided by one sequence's cache.
void add_budgets(ReportSection& section, const CacheBytesData& data) {
  ReportTable table{{"model", "weights (fp32)", "sequence length L", "KV cache per sequence", "fits in 1 GiB",
                     "fits in 24 GiB", "fits in 80 GiB"},
                    {}};
  nlohmann::json rows = nlohmann::json::array();
  for (const SequencesInBudget& budget : data.budgets) {
    std::vector<std::string> row = {budget.model, mib(static_cast<double>(budget.weights_bytes)),
                                    with_thousands(budget.length_tokens),
                                    mib(static_cast<double>(budget.kv_bytes_per_token) * budget.length_tokens)};
    nlohmann::json fits = nlohmann::json::object();
    for (const auto& [budget_name, sequences] : budget.sequences) {
      row.push_back(with_thousands(sequences));
      fits[budget_name] = sequences;
    }
    table.rows.push_back(std::move(row));
    rows.push_back({{"model", budget.model},
                    {"length_tokens", budget.length_tokens},
                    {"kv_bytes_per_token", budget.kv_bytes_per_token},
                    {"weights_bytes", budget.weights_bytes},
                    {"sequences", fits}});
  }
  section.paragraph(
      "In serving, this number decides how many requests run at once. Each cell below is ⌊(budget − "
      "weights) / (bytes per token · L)⌋, with fp32 weights and the cache in " +
      std::string(kv_dtype_name(data.kv_dtype)) + " (this report's --kv-dtype). " +
      same_cost_note(data.gqa[1], data.gqa[2]));
  section.table(std::move(table));
  section.data["budgets"] = rows;
}

}  // namespace

ReportSection cache_bytes_report(const CacheBytesData& data) {
  ReportSection section;
  section.key = "cache_bytes";
  section.title = "Cache bytes";
  const KvShape& model = data.model;
  section.paragraph(
      "The cache holds, for every layer, one key vector and one value vector per position and per **key/value** "
      "head: 2 · layers · length · kv_heads · head_dim · bytes per element. For this model (" +
      model.name + ") that is 2 · " + std::to_string(model.layers) + " · length · " + std::to_string(model.kv_heads) +
      " · " + std::to_string(model.head_dim) + element_text(model, data.kv_dtype, "length") + " = " +
      bytes_text(data.formula_bytes_per_token) +
      " B per token. MiniMind stores K and V before `repeat_kv` copies them to match the query heads, and so does "
      "minigen: with grouped-query attention (GQA) the cache shrinks by q_heads / kv_heads.");
  add_dtypes(section, data);
  add_growth(section, data);
  add_generate_runs(section, data);
  add_gqa(section, data);
  add_budgets(section, data);

  section.data["config"] = {{"layers", model.layers},
                            {"kv_heads", model.kv_heads},
                            {"q_heads", model.q_heads},
                            {"head_dim", model.head_dim},
                            {"kv_dtype", kv_dtype_name(data.kv_dtype)},
                            {"bytes_per_element", kv_dtype_bytes(data.kv_dtype)},
                            {"kv_bytes_per_token", data.kv_bytes_per_token}};
  section.data["lengths"] = data.lengths;
  section.data["bytes_used"] = data.bytes_used;
  section.data["bytes_allocated_growing"] = data.bytes_allocated;
  section.data["bytes_used_match_formula"] = data.bytes_used_match_formula;
  section.data["bytes_at_100_tokens"] = data.bytes_at_100_tokens;
  section.summary.push_back("cache bytes: " + bytes_text(data.bytes_at_100_tokens) +
                            " B at 100 tokens; used = formula at every length to " + with_thousands(data.max_length) +
                            (data.bytes_used_match_formula ? "" : " — NOT MATCHED") + "; GQA saves " +
                            fixed(data.gqa.front().ratio, 0) + "× (" + std::to_string(model.q_heads) + " q heads / " +
                            std::to_string(model.kv_heads) + " kv heads)");
  return section;
}

}  // namespace minigen::lab
