#pragma once
// Rotary position embedding in the rotate-half ("NeoX") form MiniMind uses: dimension i pairs with i + d/2.
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

// cos and sin for every position below max_positions, computed in float32 the way MiniMind builds its buffers:
// freq_i = 1 / theta^(2i/d); angle = float(pos) · freq_i; optional YaRN scaling of the frequencies.
class RopeTable {
 public:
  RopeTable(int head_dim, int max_positions, double theta, const std::optional<RopeYarn>& yarn);

  int max_positions() const { return max_positions_; }
  // Rotates one head vector (head_dim floats) in place for absolute position `position`.
  void apply(float* head, int position) const;

 private:
  int head_dim_;
  int max_positions_;
  std::vector<float> cos_;  // [position][head_dim / 2]
  std::vector<float> sin_;
};

}  // namespace minigen
