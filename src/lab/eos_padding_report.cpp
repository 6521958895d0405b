// Section 7, written: the padding row-steps per temperature setting, one batch step by step as a plot, and why
// serving engines batch differently.
#include <string>
#include <utility>
#include <vector>

#include "core/format.h"
#include "lab/section_reports.h"

namespace minigen::lab {
namespace {

void add_trace_plot(ReportSection& section, const PaddingTrace& trace) {
  PlotSeries generating{"rows still generating", {}, {}, "steps"};
  PlotSeries padding{"rows padded with eos (wasted)", {}, {}, "steps"};
  for (std::size_t step = 0; step < trace.padded_rows.size(); ++step) {
    generating.x.push_back(static_cast<double>(step));
    generating.y.push_back(trace.generating_rows[step]);
    padding.x.push_back(static_cast<double>(step));
    padding.y.push_back(trace.padded_rows[step]);
  }
  section.plot(PlotSpec{"eos_padding.svg",
                        "One batch at T = 1.0: rows generating and rows padded, per step",
                        "step (one new token per row)",
                        "rows of the batch",
                        false,
                        false,
                        {},
                        {generating, padding},
                        std::make_pair(0.0, trace.rows + 2.0)},
               "Every row is computed at every step until the last row finishes; the padded rows' work is wasted.");
}

}  // namespace

ReportSection eos_padding_report(const EosPaddingData& data) {
  ReportSection section;
  section.key = "eos_padding";
  section.title = "Eos padding in a batch";
  section.paragraph(
      "Section 5 ran each temperature as one batch of " + std::to_string(data.rows_per_batch) +
      " rows. MiniMind's generate — and minigen's, which follows it — stops a batch only when every row has "
      "produced eos (or the token limit is reached). A row that finished early is still fed at every later step, "
      "padded with eos: the model computes a token for it, and the result is thrown away. minigen counts these "
      "padding steps per row. With the cache each padding step is one token of forward work (plus its cache "
      "entry); the share below is padding steps over all row-steps computed.");

  ReportTable table{{"setting", "batches", "rows ended with eos", "steps per batch (mean)", "useful row-steps",
                     "padding row-steps (wasted)", "wasted share"},
                    {}};
  nlohmann::json by_setting = nlohmann::json::array();
  for (const PaddingSetting& setting : data.settings) {
    const PaddingTotals& totals = setting.totals;
    const int batch_count = static_cast<int>(setting.batches.size());
    nlohmann::json per_batch = nlohmann::json::array();
    for (const PaddedBatch& batch : setting.batches) {
      per_batch.push_back({{"prompt_index", batch.prompt_index},
                           {"forward_calls", batch.forward_calls},
                           {"padding_steps_per_row", batch.padding_steps_per_row}});
    }
    table.rows.push_back({setting.setting, std::to_string(batch_count),
                          std::to_string(totals.rows_ended_with_eos) + " of " + std::to_string(totals.rows),
                          fixed(static_cast<double>(totals.forward_calls) / batch_count, 1),
                          with_thousands(totals.useful_row_steps), with_thousands(totals.padding_row_steps),
                          fixed(100.0 * totals.wasted_share(), 1) + " %"});
    by_setting.push_back({{"setting", setting.setting},
                          {"rows", totals.rows},
                          {"rows_ended_with_eos", totals.rows_ended_with_eos},
                          {"forward_calls", totals.forward_calls},
                          {"useful_row_steps", totals.useful_row_steps},
                          {"padding_row_steps", totals.padding_row_steps},
                          {"wasted_share", totals.wasted_share()},
                          {"batches", per_batch}});
  }
  section.table(std::move(table));
  if (data.trace) add_trace_plot(section, *data.trace);
  section.paragraph(
      "The waste grows with the spread of answer lengths in a batch: one long answer keeps every finished row "
      "running. That is why serving engines (vLLM, TGI, llama.cpp's server) do not batch like this. They batch "
      "requests of different lengths continuously: a finished sequence leaves the batch at once and a waiting request "
      "takes its place, each with its own cache. The principle — one forward call over many sequences — is the "
      "same; the bookkeeping is what gets harder. (minigen keeps MiniMind's behaviour here so that the waste can be "
      "measured.)");

  const PaddingTotals& all = data.all;
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
