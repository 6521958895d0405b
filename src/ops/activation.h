#pragma once

namespace minigen {

// gate[i] = silu(gate[i]) · up[i], the SwiGLU middle of MiniMind's MLP: down(silu(gate(x)) * up(x)).
void silu_mul(float* gate, const float* up, int n);

}  // namespace minigen
