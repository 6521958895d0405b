#include "ops/attention.h"

#include <cmath>
#include <cstdint>

#include "ops/dot.h"
#include "ops/softmax.h"

namespace minigen {

void attend(float* out, const float* query, const float* keys, const float* values, int row_stride, int num_keys,
            int head_dim, float* scores) {
  const float scale_divisor = std::sqrt(static_cast<float>(head_dim));
  for (int j = 0; j < num_keys; ++j) {
    scores[j] = dot(query, keys + static_cast<int64_t>(j) * row_stride, head_dim) / scale_divisor;
  }
  softmax(scores, num_keys);
  for (int d = 0; d < head_dim; ++d) out[d] = 0.0f;
  for (int j = 0; j < num_keys; ++j) {
    const float weight = scores[j];
    const float* value_row = values + static_cast<int64_t>(j) * row_stride;
    for (int d = 0; d < head_dim; ++d) out[d] += weight * value_row[d];
  }
}

}  // namespace minigen
