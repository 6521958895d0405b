#include "generate/memory_budget.h"

#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <limits>

#include "core/error.h"
#include "core/file_io.h"

namespace minigen {
namespace {

constexpr uint64_t kSaturated = std::numeric_limits<uint64_t>::max();

// Products and sums that stop at 2^64 − 1 instead of wrapping: an absurd shape must compare as absurd.
uint64_t times(uint64_t a, uint64_t b) {
  uint64_t product = 0;
  return __builtin_mul_overflow(a, b, &product) ? kSaturated : product;
}
uint64_t plus(uint64_t a, uint64_t b) {
  uint64_t sum = 0;
  return __builtin_add_overflow(a, b, &sum) ? kSaturated : sum;
}

uint64_t non_negative(int64_t value) { return value < 0 ? 0 : static_cast<uint64_t>(value); }

// Floats the transformer keeps per token fed (transformer.h): the hidden state, its normed copy and the MoE mixture
// (3 × hidden), [q | k | v] and the attention output (2 × q_width + 2 × kv_width), [gate | up] and the activation
// (3 × the feed-forward width), and for MoE the router's scores and an expert's input and output.
uint64_t activation_floats_per_token(const ModelConfig& config) {
  const uint64_t hidden = non_negative(config.hidden_size);
  const uint64_t width = non_negative(std::max(config.intermediate_size, config.moe_intermediate_size));
  uint64_t floats = 3 * hidden + 2 * non_negative(config.q_width()) + 2 * non_negative(config.kv_width()) + 3 * width;
  if (config.use_moe) floats += non_negative(config.num_experts) + 2 * hidden;
  return floats;
}

// cgroup v2's limit for this process ("max" or a byte count), when there is one.
uint64_t cgroup_memory_limit() {
  try {
    const std::string text = read_whole_file("/sys/fs/cgroup/memory.max", 64, "cgroup memory limit");
    uint64_t limit = 0;
    const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), limit);
    if (error == std::errc() && end != text.data()) return limit;
  } catch (const Error&) {
  }
  return kSaturated;
}

}  // namespace

MemoryEstimate estimate_run_memory(const ModelConfig& config, const RunShape& shape) {
  const uint64_t rows = non_negative(shape.rows);
  MemoryEstimate estimate;
  estimate.kv_cache_bytes =
      times(times(rows, non_negative(shape.tokens_per_row)), config.kv_bytes_per_token(shape.kv_dtype));
  estimate.activation_bytes =
      times(times(non_negative(shape.max_tokens_per_forward), activation_floats_per_token(config)), sizeof(float));
  // The forward's logits, generate's copy of a row and the sampler's filtered copy: three vocab-sized rows each.
  estimate.logits_bytes = times(times(rows, 3 * non_negative(config.vocab_size)), sizeof(float));
  return estimate;
}

uint64_t run_memory_budget_bytes() {
  const long pages = ::sysconf(_SC_PHYS_PAGES);
  const long page_size = ::sysconf(_SC_PAGE_SIZE);
  const uint64_t physical =
      pages > 0 && page_size > 0 ? times(static_cast<uint64_t>(pages), static_cast<uint64_t>(page_size)) : kSaturated;
  return std::min(physical, cgroup_memory_limit()) / 2;
}

void check_run_memory(const ModelConfig& config, const RunShape& shape, std::string_view advice,
                      uint64_t budget_bytes) {
  const MemoryEstimate estimate = estimate_run_memory(config, shape);
  const uint64_t total = plus(plus(estimate.kv_cache_bytes, estimate.activation_bytes), estimate.logits_bytes);
  if (total <= budget_bytes) return;
  const auto text = [](uint64_t bytes) {
    return bytes == kSaturated ? std::string("more than 16 EiB") : memory_size_text(bytes);
  };
  throw Error(std::to_string(shape.rows) + (shape.rows == 1 ? " row" : " rows") + " of up to " +
              std::to_string(shape.tokens_per_row) + " tokens would need about " + text(total) + " (KV cache " +
              text(estimate.kv_cache_bytes) + ", activations for " + std::to_string(shape.max_tokens_per_forward) +
              " tokens per forward " + text(estimate.activation_bytes) + "), more than the " +
              memory_size_text(budget_bytes) + " minigen allows itself (half of this machine's memory); " +
              std::string(advice));
}

std::string memory_size_text(uint64_t bytes) {
  constexpr uint64_t kKiB = 1024;
  char text[64];
  if (bytes >= (kKiB << 20)) {
    std::snprintf(text, sizeof(text), "%.1f GiB", static_cast<double>(bytes) / static_cast<double>(kKiB << 20));
  } else if (bytes >= (kKiB << 10)) {
    std::snprintf(text, sizeof(text), "%.1f MiB", static_cast<double>(bytes) / static_cast<double>(kKiB << 10));
  } else {
    std::snprintf(text, sizeof(text), "%llu bytes", static_cast<unsigned long long>(bytes));
  }
  return text;
}

}  // namespace minigen
