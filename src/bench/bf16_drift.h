#pragma once
// How far bf16 weights move the model's output from the exact fp32 path: the same prompt prefilled by both, every
// logit compared, and both models' greedy continuations compared token by token.
#include <span>

#include "bench/bench_report.h"
#include "model/model.h"
#include "ops/thread_pool.h"

namespace minigen::bench {

DriftResult measure_bf16_drift(const Model& model, ThreadPool& pool, std::span<const int> prompt, int greedy_tokens);

}  // namespace minigen::bench
