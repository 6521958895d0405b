#pragma once
// The LoRA tests of `minigen bench --lora-rank R` / `--lora FILE`: what adapters cost a decode step when they run
// unmerged, each row adding its adapter's low-rank term after the shared base projections. Each test is timed in
// turn with the runs it is measured against, repetition by repetition (after one warm-up of each), so that the
// ratios are the adapters' cost and not a shared machine's bandwidth drifting between two tests:
//   tgN lora rR      one row decoding N tokens with one adapter, against the same row without it;
//   bB K adapters    B rows spread over K adapters (row b with adapter b mod K), against the same B rows without
//                    adapters, and against "one engine per adapter": each adapter's B/K rows decoded as a batch of
//                    their own, one batch after another on the same cores (what a server without multi-LoRA runs:
//                    one process per adapter, taking turns).
#include <memory>
#include <span>
#include <vector>

#include "bench/bench_options.h"
#include "bench/bench_report.h"
#include "cache/kv_cache.h"
#include "model/lora_adapter.h"
#include "model/transformer.h"

namespace minigen::bench {

// The targets, reported beside the measured fractions (never asserted: a shared machine's timings swing).
inline constexpr double kLoraDecodeTarget = 0.90;      // tg with one adapter ÷ tg without
inline constexpr double kLoraMixedBatchTarget = 0.85;  // the mixed batch ÷ the same batch without adapters

// tgN lora rR: from an empty cache, N greedy tokens after `first_token` with `adapter`, against the same without.
TestResult lora_generate_test(Transformer& transformer, KvCache& cache, int first_token, int new_tokens,
                              int repetitions, const LoraAdapter& adapter);

// bB K adapters: options.lora_batch_rows rows (each with its own cache and a short prefix prefilled untimed), then
// options.generate_tokens greedy steps; K = adapters.size().
TestResult lora_batch_test(Transformer& transformer, const BenchOptions& options,
                           std::span<const std::shared_ptr<const LoraAdapter>> adapters);

}  // namespace minigen::bench
