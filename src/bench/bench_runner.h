#pragma once
// Runs the measurements of `minigen bench`: for every (threads, weight type) one pool and one Transformer, each
// test warmed up once and then timed `repetitions` times; the memory bandwidth on the same pool; the bf16 drift.
#include <memory>
#include <ostream>
#include <span>
#include <vector>

#include "bench/bench_options.h"
#include "bench/bench_report.h"
#include "model/model.h"
#include "model/transformer.h"

namespace minigen::bench {

// Deterministic prompt ids above the special tokens: 36 + (i·7919 + salt·104729) mod (vocab − 36). The content
// does not change the speed; a fixed prompt makes runs comparable and the drift check reproducible.
std::vector<int> bench_prompt(int length, int vocab_size, int salt);

// The tests of one configuration, in table order: pp, tg, the batch decodes, ttft, the no-cache tg, the
// long-context decodes (each length, each KV dtype), and with adapters the LoRA tests (tg with the first adapter,
// then the mixed batch over all of them).
std::vector<TestResult> run_configuration_tests(Transformer& transformer, const BenchOptions& options,
                                                std::ostream& progress,
                                                std::span<const std::shared_ptr<const LoraAdapter>> adapters = {});

// Validates `options` against the model (minigen::Error on bad input), measures, and returns everything.
// Progress lines go to `progress`.
BenchReport run_bench(const Model& model, const ModelDescription& description, const BenchOptions& options,
                      std::ostream& progress);

}  // namespace minigen::bench
