#pragma once
// The LoRA adapters `minigen bench` times: random ones in the shape MiniMind's model_lora.py gives its adapters
// (every square projection — q_proj and o_proj in MiniMind's shapes — at one rank, scale 1), or copies of a real
// adapter file. What is timed is the work an adapter adds; its values do not change the speed.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "model/config.h"
#include "model/lora_adapter.h"

namespace minigen::bench {

// MiniMind initialises A ~ N(0, 0.02²) and B = 0; training moves B. The bench's B ~ N(0, 0.5²) is large enough that
// the low-rank term changes greedy tokens even on a random model (so a test can see that it ran), and B's size does
// not change the time.
inline constexpr float kLoraAStd = 0.02f;
inline constexpr float kBenchLoraBStd = 0.5f;

// The module paths of the model's square attention and feed-forward projections, in layer order: what MiniMind's
// apply_lora wraps (it wraps every nn.Linear whose weight is square).
std::vector<std::string> square_projections(const ModelConfig& config);

// A random adapter on square_projections(config): A ~ N(0, 0.02²) [rank, in], B ~ N(0, 0.5²) [out, rank], scale 1.
// Throws minigen::Error when the model has no square projection or the rank exceeds its width.
LoraAdapter random_minimind_adapter(const ModelConfig& config, int rank, uint64_t seed);

// The same matrices as `adapter` in memory of their own: n copies make a step read n adapters' bytes, exactly as n
// different adapters of that shape would (rows are grouped by adapter, not by values).
LoraAdapter copy_of_adapter(const ModelConfig& config, const LoraAdapter& adapter);

// The adapters of the bench's LoRA tests: `count` random adapters of `rank` (seeds 1, 2, …), or, when `file` is
// given, the file's adapter and count − 1 copies of it.
std::vector<std::shared_ptr<const LoraAdapter>> bench_adapters(const ModelConfig& config, int rank,
                                                               std::shared_ptr<const LoraAdapter> file, int count);

}  // namespace minigen::bench
