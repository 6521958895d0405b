#pragma once
// What a matrix product does with each finished sum — shared by the float (ops/matmul.h) and the quantized
// (ops/matmul_quantized.h) kernels, so that neither header has to include the other.
namespace minigen {

enum class MatmulOutput {
  kStore,  // out[r][o] = acc
  kAddTo,  // out[r][o] = out[r][o] + acc   (the residual connection h = h + f(h), fused)
};

}  // namespace minigen
