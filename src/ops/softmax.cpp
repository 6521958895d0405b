#include "ops/softmax.h"

#include <cmath>
#include <limits>

namespace minigen {

void softmax(float* values, int n) {
  float max_value = -std::numeric_limits<float>::infinity();
  for (int i = 0; i < n; ++i) max_value = values[i] > max_value ? values[i] : max_value;
  if (max_value == -std::numeric_limits<float>::infinity()) {
    for (int i = 0; i < n; ++i) values[i] = 0.0f;
    return;
  }
  float sum = 0.0f;
  for (int i = 0; i < n; ++i) {
    values[i] = std::exp(values[i] - max_value);
    sum += values[i];
  }
  for (int i = 0; i < n; ++i) values[i] /= sum;
}

}  // namespace minigen
