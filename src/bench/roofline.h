#pragma once
// Every test against the ceiling of the resource it runs into (the roofline model): a decode step of one row
// streams every weight once, so memory bandwidth bounds it; a prefill does 2 ops per weight per token on weights it
// reads once, so the arithmetic peak bounds it; a batch of rows is bound by whichever of the two takes longer.
//   bytes bound     time ≥ (weight bytes + KV bytes read) ÷ bandwidth
//   compute bound   time ≥ ops ÷ peak ops/s     (bench/compute_peak.h: ops of the layers, attention, output)
// The fraction a test reaches is bound time ÷ measured time: 1 is the ceiling.
#include "bench/bench_options.h"
#include "bench/bench_report.h"
#include "model/config.h"

namespace minigen::bench {

struct RooflineInputs {
  double weight_bytes_per_second = 0;  // the bandwidth at the weights' working set (cache or DRAM)
  double dram_bytes_per_second = 0;    // for the long-context tests whose weights and KV cache outgrow the cache
  double peak_ops_per_second = 0;      // the weight type's compute peak; 0: no compute bound
};

// Sets TestResult::bound of every test that has one (pp, ttft, tg, batch decode, long context, LoRA tg and batch).
void assign_bounds(ConfigurationResult& configuration, const ModelConfig& config, const BenchOptions& options,
                   const RooflineInputs& inputs);

}  // namespace minigen::bench
