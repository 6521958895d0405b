#pragma once
// y = x · Wᵀ for a batch of rows, with W stored [out_features, in_features] as in PyTorch's nn.Linear.
#include "ops/thread_pool.h"

namespace minigen {

// out[r][o] = dot(weight[o], x[r]) for r < rows, o < out_features. Each element is one call of dot(), so the
// result for a row does not depend on `rows` or on the thread count (threads split the output features).
void matmul(float* out, const float* x, const float* weight, int rows, int in_features, int out_features,
            ThreadPool& pool);

}  // namespace minigen
