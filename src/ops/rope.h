#pragma once
// Rotary position embedding in the rotate-half ("NeoX") form MiniMind uses: dimension i pairs with i + d/2.
#include <cstddef>
#include <optional>
#include <vector>

namespace minigen {

struct RopeYarn {
  double factor = 16.0;
  int original_max_position_embeddings = 2048;
  double beta_fast = 32.0;
  double beta_slow = 1.0;
  double attention_factor = 1.0;
};

// cos and sin of the rotation angles, computed in float32 the way MiniMind builds its buffers: freq_i = 1 /
// theta^(2i/d); angle = float(pos) · freq_i; optional YaRN scaling of the frequencies. MiniMind precomputes every
// position up to the declared context; here only the first positions are tabled (kMaxTableFloats bounds the table)
// and later ones are computed when applied, with the same float operations and so the same bits. A config that
// declares a context of 2^31 − 1 tokens therefore costs nothing until that many tokens are used.
class RopeTable {
 public:
  // Floats per table (cos or sin): 4 MiB each. Covers MiniMind's whole 32,768-token context at head_dim 64, 21,845
  // positions at MiniMind2's 96; beyond the table a position costs head_dim/2 cos and sin per head, small beside the
  // attention over that many cached tokens.
  static constexpr std::size_t kMaxTableFloats = std::size_t{1} << 20;

  RopeTable(int head_dim, int max_positions, double theta, const std::optional<RopeYarn>& yarn);

  int max_positions() const { return max_positions_; }
  int tabled_positions() const { return tabled_positions_; }
  // Rotates one head vector (head_dim floats) in place for absolute position `position`.
  void apply(float* head, int position) const;

 private:
  int head_dim_;
  int max_positions_;
  int tabled_positions_;
  float attention_factor_ = 1.0f;
  std::vector<float> frequency_;  // [head_dim / 2]
  std::vector<float> cos_;        // [position][head_dim / 2], for positions below tabled_positions_
  std::vector<float> sin_;
};

}  // namespace minigen
