#pragma once
// A counter-based random number for each draw: uniform_for(seed, row, step) is a pure function.
//
// Why not a stateful generator: a request's draws must depend only on (seed, row, step), never on how many other
// rows share the batch, in what order rows are sampled, or whether the KV cache is on, so that a request gives the
// same text alone or inside any batch. MiniMind instead draws from one global torch RNG for the whole batch
// (torch.multinomial over all rows), so there row r's sample depends on the draws of the rows before it and on the
// batch size; minigen's sampled output therefore matches MiniMind only in distribution, not token for token.
// Greedy decoding draws nothing and matches exactly.
//
// Construction: the SplitMix64 output function (a bijective 64-bit mixer) applied three times, absorbing seed, row
// and step in turn with distinct odd multipliers. Each step is a bijection of the new input for fixed earlier
// inputs, so two different (row, step) pairs of one seed collide only by chance. The top 53 bits become the double.
#include <cstdint>

namespace minigen {

// A uniform double in [0, 1) with 53 random bits, determined by (seed, row, step) alone.
double uniform_for(uint64_t seed, uint64_t row, uint64_t step);

}  // namespace minigen
