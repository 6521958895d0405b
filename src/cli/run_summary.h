#pragma once
// The one line `minigen generate` and `minigen chat --stats` print on stderr after a run.
#include <string>

#include "generate/generate.h"
#include "generate/run_summary.h"

namespace minigen::cli {

// "prompt 183 tokens · 64 new · 64 forward calls · 246 tokens fed · …".
std::string run_summary_line(const GenerateResult& result, const RunMemory& memory);

}  // namespace minigen::cli
