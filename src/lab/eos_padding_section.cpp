// Section 7: eos padding. MiniMind's generate keeps a `finished` flag per row and stops only when every row has
// finished; until then a finished row is still fed (its eos repeated), and that work is thrown away.
#include <algorithm>
#include <string>
#include <vector>

#include "core/format.h"
#include "lab/lab_sections.h"

namespace minigen::lab {
namespace {

struct PaddingTotals {
  long long rows = 0;
  long long forward_calls = 0;  // steps of the batch, summed over batches
  long long useful_row_steps = 0;
  long long padding_row_steps = 0;
  long long rows_ended_with_eos = 0;

  void add(const GenerateResult& result) {
    rows += static_cast<long long>(result.sequences.size());
    forward_calls += result.stats.forward_calls;
    for (const GeneratedSequence& sequence : result.sequences) {
      useful_row_steps += static_cast<long long>(sequence.token_ids.size());
      padding_row_steps += sequence.padding_steps;
      if (sequence.finish_reason == "stop") ++rows_ended_with_eos;
    }
  }
  double wasted_share() const {
    const long long total = useful_row_steps + padding_row_steps;
    return total > 0 ? static_cast<double>(padding_row_steps) / static_cast<double>(total) : 0;
  }
};

}  // namespace

ReportSection eos_padding_section(const std::vector<TemperatureBatch>& batches) {
  ReportSection section;
  section.key = "eos_padding";
  section.title = "Eos padding in a batch";
  const int rows_per_batch = batches.empty() ? 0 : static_cast<int>(batches.front().result.sequences.size());
  section.paragraph(
      "Section 5 ran each temperature as one batch of " + std::to_string(rows_per_batch) +
      " rows. MiniMind's generate — and minigen's, which follows it — stops a batch only when every row has "
      "produced eos (or the token limit is reached). A row that finished early is still fed at every later step, "
      "padded with eos: the model computes a token for it, and the result is thrown away. minigen counts these "
      "padding steps per row. With the cache each padding step is one token of forward work (plus its cache "
      "entry); the share below is padding steps over all row-steps computed.");

  ReportTable table{{"setting", "batches", "rows ended with eos", "steps per batch (mean)", "useful row-steps",
                     "padding row-steps (wasted)", "wasted share"},
                    {}};
  nlohmann::json by_setting = nlohmann::json::array();
  std::vector<std::string> setting_order;
  for (const TemperatureBatch& batch : batches) {
    if (std::find(setting_order.begin(), setting_order.end(), batch.setting) == setting_order.end()) {
      setting_order.push_back(batch.setting);
    }
  }
  PaddingTotals all;
  for (const std::string& setting : setting_order) {
    PaddingTotals totals;
    nlohmann::json per_batch = nlohmann::json::array();
    int batch_count = 0;
    for (const TemperatureBatch& batch : batches) {
      if (batch.setting != setting) continue;
      totals.add(batch.result);
      all.add(batch.result);
      ++batch_count;
      std::vector<int> padding_steps;
      for (const GeneratedSequence& sequence : batch.result.sequences) padding_steps.push_back(sequence.padding_steps);
      per_batch.push_back({{"prompt_index", batch.prompt_index},
                           {"forward_calls", batch.result.stats.forward_calls},
                           {"padding_steps_per_row", padding_steps}});
    }
    table.rows.push_back({setting, std::to_string(batch_count),
                          std::to_string(totals.rows_ended_with_eos) + " of " + std::to_string(totals.rows),
                          fixed(static_cast<double>(totals.forward_calls) / batch_count, 1),
                          with_thousands(totals.useful_row_steps), with_thousands(totals.padding_row_steps),
                          fixed(100.0 * totals.wasted_share(), 1) + " %"});
    by_setting.push_back({{"setting", setting},
                          {"rows", totals.rows},
                          {"rows_ended_with_eos", totals.rows_ended_with_eos},
                          {"forward_calls", totals.forward_calls},
                          {"useful_row_steps", totals.useful_row_steps},
                          {"padding_row_steps", totals.padding_row_steps},
                          {"wasted_share", totals.wasted_share()},
                          {"batches", per_batch}});
  }
  section.table(std::move(table));

  // One batch step by step: how many rows are still generating and how many are padding.
  const auto shown = std::find_if(batches.begin(), batches.end(), [](const TemperatureBatch& batch) {
    return batch.setting == "T = 1.0" && batch.prompt_index == 0;
  });
  if (shown != batches.end()) {
    PlotSeries generating{"rows still generating", {}, {}, "steps"};
    PlotSeries padding{"rows padded with eos (wasted)", {}, {}, "steps"};
    for (int step = 0; step < shown->result.stats.forward_calls; ++step) {
      int padded = 0;
      for (const GeneratedSequence& sequence : shown->result.sequences) {
        // A row that stopped at step s (its eos is token s) is padded from step s + 1 on.
        if (sequence.finish_reason == "stop" && static_cast<int>(sequence.token_ids.size()) <= step) ++padded;
      }
      generating.x.push_back(step);
      generating.y.push_back(static_cast<double>(shown->result.sequences.size()) - padded);
      padding.x.push_back(step);
      padding.y.push_back(padded);
    }
    section.plot(PlotSpec{"eos_padding.svg",
                          "One batch at T = 1.0: rows generating and rows padded, per step",
                          "step (one new token per row)",
                          "rows of the batch",
                          false,
                          false,
                          {},
                          {generating, padding},
                          std::make_pair(0.0, shown->result.sequences.size() + 2.0)},
                 "Every row is computed at every step until the last row finishes; the padded rows' work is wasted.");
  }
  section.paragraph(
      "The waste grows with the spread of answer lengths in a batch: one long answer keeps every finished row "
      "running. That is why serving engines (vLLM, TGI, llama.cpp's server) do not batch like this. They batch "
      "requests of different lengths continuously: a finished sequence leaves the batch at once and a waiting request "
      "takes its place, each with its own cache. The principle — one forward call over many sequences — is the "
      "same; the bookkeeping is what gets harder. (minigen keeps MiniMind's behaviour here so that the waste can be "
      "measured.)");

  section.data["settings"] = by_setting;
  section.data["total_padding_row_steps"] = all.padding_row_steps;
  section.data["total_useful_row_steps"] = all.useful_row_steps;
  section.data["wasted_share"] = all.wasted_share();
  section.summary.push_back("eos padding: " + with_thousands(all.padding_row_steps) + " of " +
                            with_thousands(all.padding_row_steps + all.useful_row_steps) +
                            " row-steps were padding for finished rows (" + fixed(100.0 * all.wasted_share(), 1) +
                            " % wasted)");
  return section;
}

}  // namespace minigen::lab
