#pragma once

namespace minigen {

// out[i] = silu(gate[i]) · up[i], the SwiGLU middle of MiniMind's MLP: down(silu(gate(x)) * up(x)).
// silu(g) = g / (1 + exp(−g)). The SIMD exp is a polynomial within 1 ulp of std::exp; every element, including
// the ragged end, goes through the same vector code, so an element's result does not depend on where it sits.
void silu_mul(float* out, const float* gate, const float* up, int n);
// Scalar reference with std::exp.
void silu_mul_reference(float* out, const float* gate, const float* up, int n);

}  // namespace minigen
