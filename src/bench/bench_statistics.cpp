#include "bench/bench_statistics.h"

#include <cmath>

#include "core/error.h"

namespace minigen::bench {

Statistic summarize(std::vector<double> samples) {
  if (samples.empty()) throw Error("no measurements to summarize");
  Statistic statistic;
  double sum = 0;
  for (double sample : samples) sum += sample;
  statistic.mean = sum / static_cast<double>(samples.size());
  if (samples.size() > 1) {
    double squares = 0;
    for (double sample : samples) squares += (sample - statistic.mean) * (sample - statistic.mean);
    statistic.stddev = std::sqrt(squares / static_cast<double>(samples.size() - 1));
  }
  statistic.samples = std::move(samples);
  return statistic;
}

Statistic per_second(const std::vector<double>& seconds, double units) {
  std::vector<double> rates;
  for (double s : seconds) rates.push_back(units / s);
  return summarize(std::move(rates));
}

Statistic milliseconds_per(const std::vector<double>& seconds, double units) {
  std::vector<double> values;
  for (double s : seconds) values.push_back(s * 1000.0 / units);
  return summarize(std::move(values));
}

int64_t cached_forward_tokens(int64_t prompt_tokens, int64_t new_tokens) { return prompt_tokens + new_tokens - 1; }

int64_t uncached_forward_tokens(int64_t prompt_tokens, int64_t new_tokens) {
  return prompt_tokens * new_tokens + new_tokens * (new_tokens - 1) / 2;
}

double bound_tokens_per_second(double bytes_per_second, std::size_t weight_bytes) {
  if (weight_bytes == 0) throw Error("a model without weight bytes has no bandwidth bound");
  return bytes_per_second / static_cast<double>(weight_bytes);
}

}  // namespace minigen::bench
