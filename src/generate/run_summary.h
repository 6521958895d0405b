#pragma once
// What a generate run reports, as `minigen generate --json` prints it and Python's generate() returns it: the
// module's numbers (P, N, forward calls and tokens, KV bytes, TTFT, ITL), each row's tokens and text, the settings.
#include <cstdint>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "generate/generate.h"
#include "model/transformer.h"
#include "tokenizer/bpe_tokenizer.h"

namespace minigen {

// The weights a run read: their type, the bytes one decode step streams, and the process's resident memory after
// the run (the packed weights, the KV caches and the activations; the fp32 matrices were released).
struct RunMemory {
  WeightType weights = WeightType::kF32;
  ActivationCodes activations = ActivationCodes::kInt16;  // q8/q4 only
  std::size_t weight_bytes = 0;
  uint64_t resident_bytes = 0;
};
RunMemory run_memory(const Transformer& transformer);

// `model_path`: the model as it was loaded (its directory or file); `adapter`: the LoRA adapter it ran with, if any
// (then the summary has "lora": name, source, format, rank, scale, parameters).
nlohmann::json run_summary_json(const GenerateResult& result, const Tokenizer& tokenizer,
                                const GenerateOptions& options, const std::filesystem::path& model_path,
                                const RunMemory& memory, const LoraAdapter* adapter = nullptr);

}  // namespace minigen
