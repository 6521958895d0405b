#pragma once
// What a generate run reports: the module's numbers (P, N, forward calls and tokens, KV bytes, TTFT, ITL).
#include <nlohmann/json.hpp>
#include <string>

#include "checkpoint/model_loader.h"
#include "generate/generate.h"

namespace minigen::cli {

// The weights a run read: their type, the bytes one decode step streams, and the process's resident memory after
// the run (the packed weights, the KV caches and the activations; the fp32 matrices were released).
struct RunMemory {
  WeightType weights = WeightType::kF32;
  std::size_t weight_bytes = 0;
  uint64_t resident_bytes = 0;
};
RunMemory run_memory(const Transformer& transformer);

nlohmann::json run_summary_json(const GenerateResult& result, const Tokenizer& tokenizer,
                                const GenerateOptions& options, const LoadedModel& loaded, const RunMemory& memory);
// One line for stderr: "prompt 183 tokens · 64 new · 64 forward calls · 246 tokens fed · …".
std::string run_summary_line(const GenerateResult& result, const RunMemory& memory);

}  // namespace minigen::cli
