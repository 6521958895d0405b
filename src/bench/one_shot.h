#pragma once
// The first call as a user meets it. `minigen generate -f TEXT --greedy -n N` runs as a fresh process — files read,
// weights packed, threads started, first allocations faulted in — and its own report gives load time, TTFT and the
// time between later tokens. The same prompt is generated in this process, warm, in turn with it. Two tests:
//   one-shot ttft   the fresh process's TTFT against the warm TTFT (target: at most 1.5×; load is reported apart)
//   one-shot itl    its inter-token time against bench's bare decode step at the same positions (after the same
//                   prompt; target: at most 1.2×): what sampling, detokenising and the loop add to a forward
//                   call and an argmax. tg's step (from an empty cache) is reported beside it.
#include <vector>

#include "bench/bench_options.h"
#include "bench/bench_report.h"
#include "model/transformer.h"

namespace minigen::bench {

// `generate_test`: this configuration's tg result (reported beside the itl test's yardstick). Runs the fresh process
// and the warm generation once each to warm up, then `options.repetitions` times each, alternating. Throws
// minigen::Error when the fresh process fails (its first stderr line is in the message).
std::vector<TestResult> one_shot_tests(Transformer& transformer, const BenchOptions& options,
                                       const TestResult& generate_test);

}  // namespace minigen::bench
