// Section 4, written: the formula with this model's numbers, what each --kv-dtype costs, the cache grown one
// position at a time, real generations, GQA's saving, and how many sequences a memory budget holds. A model whose
// shape is one of the catalogue's (MiniMind2, minimind-3) is listed once, under the catalogue's name.
#include <algorithm>
#include <string>
#include <vector>

#include "core/format.h"
#include "lab/section_reports.h"
#include "ops/kv_block.h"

namespace minigen::lab {
namespace {

std::string bytes_text(uint64_t bytes) { return with_thousands(static_cast<long long>(bytes)); }
std::string mib(double bytes) { return fixed(bytes / (1024.0 * 1024.0), 2) + " MiB"; }

// "· 4 B (f32)", "· 1 B (int8) + 2 · 4 · length · 2 · 4 B of scales": the formula's last factor in words, `length`
// standing for the positions.
std::string element_text(const KvShape& shape, KvDType dtype, const std::string& length, const Words& say) {
  std::string text = " · " + std::to_string(kv_dtype_bytes(dtype)) + " B (" + std::string(kv_dtype_name(dtype)) + ")";
  if (dtype == KvDType::kInt8) {
    text += " + 2 · " + std::to_string(shape.layers) + " · " + length + " · " + std::to_string(shape.kv_heads) +
            say(" · 4 B of scales", " · 4 B 的缩放因子");
  }
  return text;
}

bool same_shape(const KvShape& a, const KvShape& b) {
  return a.layers == b.layers && a.q_heads == b.q_heads && a.kv_heads == b.kv_heads && a.head_dim == b.head_dim;
}

// The GQA rows and budget rows to show: the model's own row (always first) replaces a catalogue row of the same
// shape and takes its name, so that a minimind-3 model is not listed twice ("minimind3 (this model)" and
// "minimind-3"); the replaced family's budget rows go with it.
struct FamilyRows {
  std::vector<GqaSaving> gqa;
  std::vector<SequencesInBudget> budgets;
};

FamilyRows family_rows(const CacheBytesData& data, const Words& say) {
  FamilyRows rows;
  if (data.gqa.empty()) return rows;
  const std::string own_name = data.gqa.front().shape.name;
  std::string model_name = data.model.name;
  std::vector<std::string> replaced;
  for (std::size_t i = 1; i < data.gqa.size(); ++i) {
    if (same_shape(data.gqa[i].shape, data.gqa.front().shape)) {
      model_name = data.gqa[i].shape.name;
      replaced.push_back(data.gqa[i].shape.name);
    } else {
      rows.gqa.push_back(data.gqa[i]);
    }
  }
  GqaSaving own = data.gqa.front();
  own.shape.name = say(model_name + " (this model)", model_name + "（本模型）");
  rows.gqa.insert(rows.gqa.begin(), own);
  for (const SequencesInBudget& budget : data.budgets) {
    if (std::find(replaced.begin(), replaced.end(), budget.model) != replaced.end()) continue;
    rows.budgets.push_back(budget);
    if (budget.model == own_name) rows.budgets.back().model = own.shape.name;
  }
  return rows;
}

// Two rows of the table that reach the same bytes per token by different shapes; said only when the table shows it.
std::string same_cost_note(const std::vector<GqaSaving>& rows, const Words& say) {
  auto shape = [&](const KvShape& s) {
    return std::to_string(s.layers) + say(" layers × ", " 层 × ") + std::to_string(s.kv_heads) +
           say(" kv heads × head_dim ", " 个 kv 头 × head_dim ") + std::to_string(s.head_dim);
  };
  for (std::size_t i = 0; i < rows.size(); ++i) {
    for (std::size_t j = i + 1; j < rows.size(); ++j) {
      if (rows[i].kv_bytes_per_token != rows[j].kv_bytes_per_token || same_shape(rows[i].shape, rows[j].shape)) {
        continue;
      }
      const std::string bytes = with_thousands(static_cast<long long>(rows[i].kv_bytes_per_token));
      return say(rows[i].shape.name + " and " + rows[j].shape.name + " need the same " + bytes +
                     " B per token by different routes: " + shape(rows[i].shape) + " against " + shape(rows[j].shape) +
                     ".",
                 rows[i].shape.name + " 和 " + rows[j].shape.name + " 每个 token 需要同样的 " + bytes +
                     " B，但途径不同：" + shape(rows[i].shape) + " 对比 " + shape(rows[j].shape) + "。");
    }
  }
  return "";
}

void add_dtypes(ReportSection& section, const CacheBytesData& data, const Words& say) {
  ReportTable table{{"`--kv-dtype`", say("bytes per element", "每个元素的字节数"),
                     say("bytes per token", "每个 token 的字节数"), say("1,000 tokens", "1,000 个 token")},
                    {}};
  nlohmann::json rows = nlohmann::json::array();
  for (const KvDTypeCost& cost : data.dtypes) {
    table.rows.push_back(
        {std::string(kv_dtype_name(cost.dtype)) +
             (cost.dtype == data.kv_dtype ? say(" (this report)", "（本报告）") : ""),
         cost.dtype == KvDType::kInt8 ? say("1 + scales", "1 + 缩放因子") : std::to_string(kv_dtype_bytes(cost.dtype)),
         bytes_text(cost.kv_bytes_per_token), bytes_text(1000 * cost.kv_bytes_per_token)});
    rows.push_back({{"kv_dtype", kv_dtype_name(cost.dtype)}, {"kv_bytes_per_token", cost.kv_bytes_per_token}});
  }
  section.paragraph(
      say("The element type is `--kv-dtype`: bf16 and f16 halve the bytes, int8 quarters them and adds one fp32 scale "
          "per position, kv head and K or V. Attention widens every element back to fp32 before it computes:",
          "元素类型由 `--kv-dtype` 决定：bf16 和 f16 把字节数减半，int8 减为四分之一，并为每个位置、每个 kv 头、K 或 V "
          "各加一个 fp32 缩放因子。注意力在计算前把每个元素扩展回 fp32："));
  section.table(std::move(table));
  section.data["kv_dtypes"] = rows;
}

// For the plot: regular samples plus both sides of every capacity jump, so the staircase is drawn exactly.
void add_growth(ReportSection& section, const CacheBytesData& data, const Words& say) {
  PlotSeries used_series{say("bytes used = formula", "已用字节 = 公式"), {}, {}, "lines"};
  PlotSeries allocated_series{
      say("bytes allocated (capacity doubles when full)", "已分配字节（满时容量翻倍）"), {}, {}, "lines dashtype 2"};
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
  const std::string max_length = with_thousands(data.max_length);
  section.paragraph(
      data.bytes_used_match_formula
          ? say("A cache grown one position at a time up to " + max_length +
                    " positions: at every length the bytes used equal the formula (checked at all " + max_length +
                    " lengths). The memory actually reserved is larger between doublings; `generate()` avoids that by "
                    "reserving P + N positions for each row up front.",
                "一个缓存逐个位置增长到 " + max_length + " 个位置：在每个长度上已用字节都等于公式（" + max_length +
                    " 个长度全部检查过）。两次翻倍之间实际预留的内存更大；`generate()` 通过预先为每行预留 P + N "
                    "个位置来"
                    "避免这一点。")
          : say("A cache grown one position at a time up to " + max_length +
                    " positions: the bytes used do **NOT** equal the formula at every length — a bug in the cache's "
                    "accounting. The memory actually reserved is larger between doublings.",
                "一个缓存逐个位置增长到 " + max_length +
                    " 个位置：已用字节**并非**在每个长度上都等于公式——缓存的计数有"
                    "错误。两次翻倍之间实际预留的内存更大。"));
  section.plot(PlotSpec{"cache_bytes.svg",
                        say("KV cache bytes of the " + data.model.name + " model against length",
                            data.model.name + " 模型的 KV 缓存字节数随长度的变化"),
                        say("cached length (tokens)", "缓存长度（token）"),
                        say("KV cache (MiB)", "KV 缓存 (MiB)"),
                        false,
                        false,
                        {},
                        {allocated_series, used_series},
                        std::nullopt,
                        "top left"},
               say("Used bytes grow by exactly " + bytes_text(data.formula_bytes_per_token) +
                       " B per token; a cache that grows on demand reserves up to twice that.",
                   "已用字节每个 token 恰好增加 " + bytes_text(data.formula_bytes_per_token) +
                       " B；按需增长的缓存最多预留两倍。"));
}

// Why the reserved column is larger than P + N positions: generate() reserves P + N positions for a row, rounded up
// to whole blocks of 16 (the attention kernel reads 16 keys per vector load), and says it with the run's numbers:
// 37 + 64 = 101 positions → 112 reserved. Computed from the bytes, so a reservation that is not whole blocks of
// positions says so instead.
std::string reserved_text(const CacheRunBytes& run, const CacheBytesData& data, const Words& say) {
  const uint64_t per_position = data.kv_bytes_per_token;
  const int wanted = run.prompt_tokens + run.new_tokens;
  if (per_position == 0 || run.kv_bytes_allocated % per_position != 0) {
    return say("The reserved bytes are not a whole number of positions of " + bytes_text(per_position) + " B.",
               "预留字节不是整数个位置（每个位置 " + bytes_text(per_position) + " B）。");
  }
  const uint64_t reserved = run.kv_bytes_allocated / per_position;
  const std::string sum =
      std::to_string(run.prompt_tokens) + " + " + std::to_string(run.new_tokens) + " = " + std::to_string(wanted);
  if (reserved == static_cast<uint64_t>(wanted)) {
    return say("The reserved column is exactly P + N positions (" + sum + ").",
               "预留一列正好是 P + N 个位置（" + sum + "）。");
  }
  return say("The reserved column is P + N positions rounded up to whole blocks of " +
                 std::to_string(KvBlockLayout::kBlockTokens) + " (the attention kernel reads " +
                 std::to_string(KvBlockLayout::kBlockTokens) + " keys per vector load): " + sum + " → " +
                 std::to_string(reserved) + " positions = " + bytes_text(run.kv_bytes_allocated) + " B.",
             "预留一列是 P + N 个位置向上取整到 " + std::to_string(KvBlockLayout::kBlockTokens) +
                 " 的整块（注意力内核每次向量加载读 " + std::to_string(KvBlockLayout::kBlockTokens) + " 个键）：" +
                 sum + " → " + std::to_string(reserved) + " 个位置 = " + bytes_text(run.kv_bytes_allocated) + " B。");
}

void add_generate_runs(ReportSection& section, const CacheBytesData& data, const Words& say) {
  ReportTable table{{"P", "N", say("positions cached (P+N−1)", "缓存的位置数 (P+N−1)"),
                     say("bytes used (measured)", "已用字节（实测）"), say("formula", "公式"),
                     say("bytes reserved (P+N, in blocks of 16)", "预留字节（P+N，按 16 个位置一块）")},
                    {}};
  nlohmann::json runs = nlohmann::json::array();
  bool all_match = true;
  for (const CacheRunBytes& run : data.generate_runs) {
    all_match = all_match && run.kv_bytes_used == run.formula;
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
  const std::string formula = "2 · " + std::to_string(model.layers) + say(" layers · 100 · ", " 层 · 100 · ") +
                              std::to_string(model.kv_heads) + say(" heads · ", " 个头 · ") +
                              std::to_string(model.head_dim) + element_text(model, data.kv_dtype, "100", say) +
                              " = **" + bytes_text(data.bytes_at_100_tokens) + " B**";
  const std::string opening =
      data.is_module_shape ? say("The module's figure: ", "课程中的数字：")
                           : say("The module's figure is for a model of 4 layers, 2 kv heads and head_dim 32 "
                                 "(204,800 B at 100 tokens in fp32); for this model, ",
                                 "课程中的数字针对的是 4 层、2 个 kv 头、head_dim 32 的模型（fp32 下 100 个 token 为 "
                                 "204,800 B）；对本模型，");
  const std::string runs_text =
      all_match
          ? say(". Real generations report the same bytes as the formula (a 37-token prompt and 64 new tokens "
                "end with 100 cached positions; the module's 183 + 64 run too):",
                "。真实的生成报告的字节数与公式相同（37 个 token 的提示加 64 个新 token，最后缓存 100 个位置；课程中"
                "183 + 64 的运行也一样）：")
          : say(". Real generations do **NOT** all report the formula's bytes — see the table:",
                "。真实的生成报告的字节数**并不**都等于公式——见下表：");
  section.paragraph(opening + say("100 cached tokens take ", "100 个缓存 token 占用 ") + formula + runs_text);
  section.table(std::move(table));
  if (!data.generate_runs.empty()) section.paragraph(reserved_text(data.generate_runs.front(), data, say));
  section.data["generate_runs"] = runs;
  section.data["generate_runs_match_formula"] = all_match;
}

void add_gqa(ReportSection& section, const CacheBytesData& data, const FamilyRows& families, const Words& say) {
  ReportTable table{
      {say("model", "模型"), say("q heads", "q 头数"), say("kv heads", "kv 头数"),
       say("bytes per token (GQA)", "每 token 字节数 (GQA)"),
       say("bytes per token if kv_heads = q_heads", "kv_heads = q_heads 时每 token 字节数"),
       say("100 tokens (GQA)", "100 个 token (GQA)"),
       say("100 tokens (kv_heads = q_heads)", "100 个 token (kv_heads = q_heads)"), say("saving", "节省")},
      {}};
  nlohmann::json gqa = nlohmann::json::array();
  for (const GqaSaving& saving : families.gqa) {
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
      say("Grouped-query attention lets several query heads share one key/value head. The cache only "
          "stores the shared heads, so against the same model with one kv head per query head it is "
          "q_heads / kv_heads times smaller (measured with KvCache objects of both shapes):",
          "分组查询注意力（GQA）让多个查询头共享一个键/值头。缓存只存共享的头，因此与每个查询头各有一个 kv "
          "头的同一模型相比，它小 q_heads / kv_heads 倍（用两种形状的 KvCache 对象实测）："));
  section.table(std::move(table));
  section.data["gqa"] = gqa;
  section.data["gqa_ratio"] = data.gqa.front().ratio;
}

// Concurrent sequences per memory budget: what is left after the weights, divided by one sequence's cache.
void add_budgets(ReportSection& section, const CacheBytesData& data, const FamilyRows& families, const Words& say) {
  ReportTable table{{say("model", "模型"), say("weights (fp32)", "权重 (fp32)"), say("sequence length L", "序列长度 L"),
                     say("KV cache per sequence", "每个序列的 KV 缓存"), say("fits in 1 GiB", "1 GiB 可容纳"),
                     say("fits in 24 GiB", "24 GiB 可容纳"), say("fits in 80 GiB", "80 GiB 可容纳")},
                    {}};
  nlohmann::json rows = nlohmann::json::array();
  for (const SequencesInBudget& budget : families.budgets) {
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
  const std::string dtype(kv_dtype_name(data.kv_dtype));
  const std::string note = same_cost_note(families.gqa, say);
  section.paragraph(
      say("In serving, this number decides how many requests run at once. Each cell below is ⌊(budget − "
          "weights) / (bytes per token · L)⌋, with fp32 weights and the cache in " +
              dtype + " (this report's `--kv-dtype`)." + (note.empty() ? "" : " " + note),
          "在服务中，这个数字决定能同时运行多少个请求。下表每格为 ⌊(预算 − 权重) / (每 token 字节数 · L)⌋，权重为 "
          "fp32，缓存为 " +
              dtype + "（本报告的 `--kv-dtype`）。" + note));
  section.table(std::move(table));
  section.data["budgets"] = rows;
}

}  // namespace

ReportSection cache_bytes_report(const CacheBytesData& data, Language language) {
  const Words say{language};
  ReportSection section;
  section.key = "cache_bytes";
  section.title = say("Cache bytes", "缓存的字节数");
  const KvShape& model = data.model;
  const std::string formula = "2 · " + std::to_string(model.layers) + say(" · length · ", " · 长度 · ") +
                              std::to_string(model.kv_heads) + " · " + std::to_string(model.head_dim) +
                              element_text(model, data.kv_dtype, say("length", "长度"), say) + " = " +
                              bytes_text(data.formula_bytes_per_token);
  section.paragraph(say(
      "The cache holds, for every layer, one key vector and one value vector per position and per **key/value** "
      "head: 2 · layers · length · kv_heads · head_dim · bytes per element. For this model (" +
          model.name + ") that is " + formula +
          " B per token. MiniMind stores K and V before `repeat_kv` copies them to match the query heads, and so does "
          "minigen: with grouped-query attention (GQA) the cache shrinks by q_heads / kv_heads.",
      "KV 缓存在每一层为每个位置、每个**键/值**头保存一个键向量和一个值向量：2 · 层数 · 长度 · kv_heads · head_dim · "
      "每个元素的字节数。对本模型（" +
          model.name + "）即 " + formula +
          " B/token。MiniMind 在 `repeat_kv` 把 K 和 V 复制到与查询头数一致之前就存下它们，minigen 也一样：使用分组查询"
          "注意力（GQA）时，缓存缩小 q_heads / kv_heads 倍。"));
  const FamilyRows families = family_rows(data, say);
  add_dtypes(section, data, say);
  add_growth(section, data, say);
  add_generate_runs(section, data, say);
  add_gqa(section, data, families, say);
  add_budgets(section, data, families, say);

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
