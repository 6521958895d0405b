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
// A chat reply's fields as a server returns them, added to each of the summary's sequences: reasoning_content (the
// think block's text; `prompt_opened_think` when the prompt opened it), content, and tool_calls parsed from
// <tool_call> blocks when the prompt offered tools.
void add_chat_reply_fields(nlohmann::json& summary, bool prompt_opened_think, bool tools_offered);
// One line for stderr: "prompt 183 tokens · 64 new · 64 forward calls · 246 tokens fed · …".
std::string run_summary_line(const GenerateResult& result, const RunMemory& memory);

}  // namespace minigen::cli
