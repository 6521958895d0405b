#include "ops/matmul.h"

#include <cstdint>

#include "ops/dot.h"

namespace minigen {

void matmul(float* out, const float* x, const float* weight, int rows, int in_features, int out_features,
            ThreadPool& pool) {
  // Output features outermost: each weight row is read once per call and reused for every batch row while it is
  // in cache — the reason batched decode is cheaper per token than one row at a time.
  pool.parallel_for(out_features, [&](int64_t begin, int64_t end) {
    for (int64_t o = begin; o < end; ++o) {
      const float* weight_row = weight + o * static_cast<int64_t>(in_features);
      for (int r = 0; r < rows; ++r) {
        out[static_cast<int64_t>(r) * out_features + o] =
            dot(weight_row, x + static_cast<int64_t>(r) * in_features, in_features);
      }
    }
  });
}

}  // namespace minigen
