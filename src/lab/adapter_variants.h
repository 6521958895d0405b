#pragma once
// The adapters section 11 measures, and their sizes: a random adapter in MiniMind's shape (model_lora.py wraps every
// square projection — q_proj and o_proj in its shapes — at rank 16, scale 1) with B drawn to a trained-looking size,
// the same adapter with B = 0 (how MiniMind initialises one), and copies.
#include <cstdint>
#include <string>
#include <vector>

#include "lab/section_data.h"
#include "model/config.h"
#include "model/lora_adapter.h"
#include "model/weights.h"

namespace minigen::lab {

// MiniMind's default rank, and A's initialisation: A ~ N(0, 0.02²).
inline constexpr int kAdapterRank = 16;
inline constexpr float kAdapterAStd = 0.02f;
// A random adapter's B is drawn so that ‖B·A‖_F is this share of ‖W‖_F for each wrapped W: a fine-tune that moves
// the weights it adapts by a tenth — an assumed size for a trained adapter, not a measured one (--lora measures the
// learner's own).
inline constexpr double kAdapterRelativeSize = 0.10;

// The matrices MiniMind's apply_lora wraps at `rank`: the square projections of the model (q_proj and o_proj when
// q heads · head_dim = hidden; gate/up/down too if the feed-forward were square), one group per name.
std::vector<AdapterMatrixGroup> minimind_adapter_groups(const ModelConfig& config, int rank);
// Σ rank · (in + out) over those groups, against the model's parameter count.
AdapterSize minimind_adapter_size(const ModelConfig& config, int rank, const std::string& model);
// The same sums for an adapter as it is (a learner's may wrap other matrices, at other ranks).
AdapterSize adapter_size(const LoraAdapter& adapter, const ModelConfig& config, const std::string& model);

// A ~ N(0, 0.02²), B ~ N(0, σ²) on the groups of minimind_adapter_groups (q_proj and o_proj when the model has no
// square projection), σ per matrix such that the expected ‖B·A‖_F = relative_size · ‖W‖_F:
//   E‖B·A‖²_F = out · in · rank · σ² · 0.02²,  so  σ = relative_size · ‖W‖_F ÷ (0.02 · √(out · in · rank)).
LoraAdapter trained_shaped_adapter(const ModelConfig& config, const ModelWeights& weights, int rank,
                                   double relative_size, uint64_t seed);
// The same A, B = 0: what MiniMind's LoRA module holds before training.
LoraAdapter with_zero_b(const ModelConfig& config, const LoraAdapter& adapter);
// The same matrices in memory of their own: a batch reads each copy as it would a different adapter.
LoraAdapter copy_of_adapter(const ModelConfig& config, const LoraAdapter& adapter);

// ‖scale · B·A‖_F ÷ ‖W‖_F over every wrapped matrix together (square roots of the summed squares), with
// ‖B·A‖²_F = Σ_ij (BᵀB)_ij (A·Aᵀ)_ij computed on rank × rank products, never forming B·A.
double relative_size(const LoraAdapter& adapter, const ModelWeights& weights);

}  // namespace minigen::lab
