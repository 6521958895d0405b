#pragma once

namespace minigen {

// Causal attention of one query head over the first `num_keys` cached positions of one kv head:
//   out = Σ_j softmax_j(q·k_j / sqrt(head_dim)) · v_j
// Keys and values are rows of the cache, `row_stride` floats apart. Sums run over j = 0, 1, … in order, so a
// query's output does not depend on how many queries share the forward call. `scores` holds num_keys floats.
void attend(float* out, const float* query, const float* keys, const float* values, int row_stride, int num_keys,
            int head_dim, float* scores);

}  // namespace minigen
