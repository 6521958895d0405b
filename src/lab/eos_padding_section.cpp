// Section 7, measured: eos padding. MiniMind's generate keeps a `finished` flag per row and stops only when every
// row has finished; until then a finished row is still fed (its eos repeated), and that work is thrown away. The
// padding steps are counted in section 5's batches, per setting and in all.
#include <algorithm>
#include <string>
#include <vector>

#include "lab/section_measures.h"

namespace minigen::lab {
namespace {

void add(PaddingTotals& totals, const GenerateResult& result) {
  totals.rows += static_cast<long long>(result.sequences.size());
  totals.forward_calls += result.stats.forward_calls;
  for (const GeneratedSequence& sequence : result.sequences) {
    totals.useful_row_steps += static_cast<long long>(sequence.token_ids.size());
    totals.padding_row_steps += sequence.padding_steps;
    if (sequence.finish_reason == "stop") ++totals.rows_ended_with_eos;
  }
}

// One batch step by step: how many rows are still generating and how many are padding.
PaddingTrace trace_of(const GenerateResult& result) {
  PaddingTrace trace;
  trace.rows = static_cast<int>(result.sequences.size());
  for (int step = 0; step < result.stats.forward_calls; ++step) {
    int padded = 0;
    for (const GeneratedSequence& sequence : result.sequences) {
      // A row that stopped at step s (its eos is token s) is padded from step s + 1 on.
      if (sequence.finish_reason == "stop" && static_cast<int>(sequence.token_ids.size()) <= step) ++padded;
    }
    trace.generating_rows.push_back(trace.rows - padded);
    trace.padded_rows.push_back(padded);
  }
  return trace;
}

}  // namespace

EosPaddingData measure_eos_padding(const std::vector<TemperatureBatch>& batches) {
  EosPaddingData data;
  data.rows_per_batch = batches.empty() ? 0 : static_cast<int>(batches.front().result.sequences.size());
  for (const TemperatureBatch& batch : batches) {
    const auto same = [&](const PaddingSetting& setting) { return setting.setting == batch.setting; };
    auto setting = std::find_if(data.settings.begin(), data.settings.end(), same);
    if (setting == data.settings.end()) setting = data.settings.insert(data.settings.end(), {batch.setting, {}, {}});
    add(setting->totals, batch.result);
    add(data.all, batch.result);
    PaddedBatch padded{batch.prompt_index, batch.result.stats.forward_calls, {}};
    for (const GeneratedSequence& sequence : batch.result.sequences) {
      padded.padding_steps_per_row.push_back(sequence.padding_steps);
    }
    setting->batches.push_back(std::move(padded));
    if (!data.trace && batch.setting == "T = 1.0" && batch.prompt_index == 0) data.trace = trace_of(batch.result);
  }
  return data;
}

}  // namespace minigen::lab
