#include "cli/run_summary.h"

#include <cstdio>

namespace minigen::cli {

std::string run_summary_line(const GenerateResult& result, const RunMemory& memory) {
  const GenerateStats& stats = result.stats;
  std::size_t new_tokens = 0;
  for (const GeneratedSequence& sequence : result.sequences) new_tokens += sequence.token_ids.size();
  char load[48] = "";
  if (stats.load_ms > 0) std::snprintf(load, sizeof load, "load %.1f ms · ", stats.load_ms);
  // Without the cache there is none to report: name the buffer the recomputation fills instead, so that its bytes
  // are not taken for a cache the flag failed to turn off.
  char cache[160];
  if (stats.recompute_buffer_bytes > 0) {
    std::snprintf(cache, sizeof cache, "no KV cache (%zu B of K and V recomputed by the last step)",
                  stats.recompute_buffer_bytes);
  } else {
    std::snprintf(cache, sizeof cache, "KV cache %zu B used (%zu B allocated)", stats.kv_bytes_used,
                  stats.kv_bytes_allocated);
  }
  char line[640];
  std::snprintf(line, sizeof line,
                "[minigen] %sprompt %d tokens · %zu new · %d forward calls · %lld tokens fed · %s · TTFT %.1f ms · "
                "%.2f ms/token after · total %.1f ms · %s weights %.1f MB · resident %.1f MB",
                load, result.sequences.empty() ? 0 : result.sequences.front().prompt_tokens, new_tokens,
                stats.forward_calls, static_cast<long long>(stats.forward_tokens), cache, stats.ttft_ms, stats.itl_ms,
                stats.total_ms, weights_label(memory.weights, memory.activations).c_str(),
                static_cast<double>(memory.weight_bytes) / 1e6, static_cast<double>(memory.resident_bytes) / 1e6);
  return line;
}

}  // namespace minigen::cli
