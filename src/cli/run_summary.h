#pragma once
// What a generate run reports: the module's numbers (P, N, forward calls and tokens, KV bytes, TTFT, ITL).
#include <nlohmann/json.hpp>
#include <string>

#include "checkpoint/model_loader.h"
#include "generate/generate.h"

namespace minigen::cli {

nlohmann::json run_summary_json(const GenerateResult& result, const Tokenizer& tokenizer,
                                const GenerateOptions& options, const LoadedModel& loaded);
// One line for stderr: "prompt 183 tokens · 64 new · 64 forward calls · 246 tokens fed · …".
std::string run_summary_line(const GenerateResult& result);

}  // namespace minigen::cli
