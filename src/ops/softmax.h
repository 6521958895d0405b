#pragma once

namespace minigen {

// In-place softmax over n values: subtract the maximum, exponentiate, divide by the sum (summed in index order).
// −inf entries become exactly 0. All −inf (nothing to choose from) is left as all 0.
void softmax(float* values, int n);

}  // namespace minigen
