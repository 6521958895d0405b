#include "bench/roofline.h"

#include <algorithm>

#include "bench/bench_statistics.h"
#include "bench/compute_peak.h"

namespace minigen::bench {
namespace {

// The least time `amount` of a resource (bytes, ops) takes at `rate` per second, against the measured time.
TestBound bound_of(const char* resource, double amount, double rate, double measured_ms) {
  TestBound bound;
  bound.resource = resource;
  bound.time_ms = 1e3 * amount / rate;
  bound.fraction = bound.time_ms / measured_ms;
  return bound;
}

TestBound bytes_bound(double bytes, double bytes_per_second, double measured_ms) {
  return bound_of("memory bandwidth", bytes, bytes_per_second, measured_ms);
}

TestBound compute_bound(double ops, double ops_per_second, double measured_ms) {
  return bound_of("compute", ops, ops_per_second, measured_ms);
}

// One decode step of `rows` rows at an average position: every row runs the layers, attention over its keys and
// the output projection (decode computes logits for every row).
double decode_step_ops(const ModelConfig& config, int rows, double position) {
  const double output = static_cast<double>(config.hidden_size) * config.vocab_size;
  return 2.0 * rows * (layer_macs_per_token(config) + attention_macs(config, static_cast<int>(position)) + output);
}

}  // namespace

void assign_bounds(ConfigurationResult& configuration, const ModelConfig& config, const BenchOptions& options,
                   const RooflineInputs& inputs) {
  const double weights = static_cast<double>(configuration.weight_bytes);
  const bool compute = inputs.peak_ops_per_second > 0;
  for (TestResult& test : configuration.tests) {
    const double measured = test.time_ms.mean;
    if (measured <= 0) continue;
    if ((test.kind == "prompt" || test.kind == "ttft") && compute) {
      test.bound = compute_bound(prefill_ops(config, options.prompt_tokens), inputs.peak_ops_per_second, measured);
    } else if (test.kind == "generate" || test.kind == "lora_generate") {
      test.bound = bytes_bound(weights, inputs.weight_bytes_per_second, measured);
    } else if (test.kind == "batch_decode" || test.kind == "lora_batch") {
      const TestBound bytes = bytes_bound(weights, inputs.weight_bytes_per_second, measured);
      const double position = options.batch_prompt_tokens + options.generate_tokens / 2.0;
      test.bound = bytes;
      if (compute) {
        const TestBound arithmetic =
            compute_bound(decode_step_ops(config, test.batch_size, position), inputs.peak_ops_per_second, measured);
        if (arithmetic.time_ms > bytes.time_ms) test.bound = arithmetic;
      }
    } else if (test.kind == "long_context" && inputs.dram_bytes_per_second > 0) {
      // Each step reads every weight and the whole cache (kv_bytes: the cache after the last step, within 1 %), from
      // the last-level cache while both fit it (the bandwidth measured for the weights), else from DRAM.
      const double bytes = weights + static_cast<double>(test.kv_bytes);
      const bool cached = bytes <= static_cast<double>(kCacheResidentBytes);
      test.bound = bytes_bound(bytes, cached ? inputs.weight_bytes_per_second : inputs.dram_bytes_per_second, measured);
    }
  }
}

}  // namespace minigen::bench
