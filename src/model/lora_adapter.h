#pragma once
// A LoRA adapter: for some of the model's matrices W, a low-rank pair A [rank, in] and B [out, rank] so that the
// projection becomes  y = W x + scale · B (A x).
//
// MiniMind's model_lora.py wraps every square nn.Linear (q_proj and o_proj in its shapes) with scale 1; Hugging
// Face PEFT wraps the target_modules its adapter_config.json names, with scale lora_alpha / r. Both are read into
// this one form (checkpoint/lora_loader.h), checked against the model, and run unmerged: the base projections stay
// as they are (one copy for every adapter and for none) and the low-rank term is added in fp32 after them
// (model/low_rank_term.h), whatever type the base weights run in.
#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "model/config.h"
#include "model/tensor.h"
#include "model/weights.h"
#include "ops/packed_matrix.h"

namespace minigen {

// The matrices an adapter may wrap, by their name in MiniMind's (and HF's) state dict.
enum class LoraTarget { kQ, kK, kV, kO, kGate, kUp, kDown };
inline constexpr int kLoraTargetCount = 7;
const char* lora_target_name(LoraTarget target);  // "q_proj", …, "down_proj"

// One wrapped matrix: A and B as the file held them (fp32) and packed for the matrix-product kernels (fp32 panels,
// so the term is exact whatever the base weights' type).
struct LoraPair {
  int rank = 0;  // 0: this matrix is not wrapped
  Matrix a;      // [rank, in]
  Matrix b;      // [out, rank]
  PackedMatrix packed_a;
  PackedMatrix packed_b;

  bool present() const { return rank > 0; }
};

struct LoraFeedForward {
  LoraPair gate, up, down;
  bool any() const { return gate.present() || up.present() || down.present(); }
};

struct LoraLayer {
  LoraPair q, k, v, o;
  LoraFeedForward mlp;                          // dense models
  std::vector<LoraFeedForward> experts;         // MoE: one per routed expert (empty when none is wrapped)
  std::vector<LoraFeedForward> shared_experts;  // MoE: one per shared expert
};

struct LoraAdapter {
  std::string name;    // what serve's requests call it ("model": NAME); the file's stem by default
  std::string source;  // the file or folder it was read from
  std::string format;  // "MiniMind .pth", "PEFT" or "GGUF"
  float scale = 1.0f;  // lora_alpha / r (PEFT, GGUF); 1 for MiniMind's adapters
  float alpha = 0.0f;  // as the file said (PEFT, GGUF); 0 when it says none (MiniMind)
  std::vector<LoraLayer> layers;

  // Every wrapped matrix with its state-dict name (model.layers.L.self_attn.q_proj …), in layer order.
  struct Wrapped {
    std::string module;
    const LoraPair* pair;
  };
  std::vector<Wrapped> wrapped() const;
  int64_t parameter_count() const;  // Σ rank · (in + out)
  std::size_t fp32_bytes() const { return static_cast<std::size_t>(parameter_count()) * sizeof(float); }
  int max_rank() const;
  // "q_proj, o_proj in 8 of 8 layers, rank 16" — what the CLI prints when it loads one.
  std::string summary() const;
  // The same in Chinese, for the lab's zh report: "q_proj、o_proj（4 层中的 4 层），秩 16".
  std::string summary_zh() const;
};

// The wrapped matrices an adapter file names, before they are checked against a model: the module path as in the
// model's state dict ("model.layers.3.self_attn.q_proj"), A [rank, in] and B [out, rank] as fp32 tensors.
struct LoraTensors {
  std::string module;
  HostTensor a;
  HostTensor b;
};

// Checks each pair against the model's shapes and builds the adapter: every module must exist in the model (an
// unknown one is an Error naming it and what the model has), A and B must be rank-2 with one rank between them,
// 1 ≤ rank ≤ min(in, out), every value finite; at least one pair. Packs A and B for the kernels. Tensors read with
// TensorReadOptions::shapes_only get the same checks but no values: a loader's first look at what a file claims.
LoraAdapter lora_from_tensors(const ModelConfig& config, std::vector<LoraTensors> tensors, float scale,
                              const std::string& source, const std::string& format);

// W + scale · B·A for every wrapped matrix, in fp32 (MiniMind's merge_lora; it then rounds to fp16 when it saves).
// The weights must hold fp32 values (not a q8/q4 file's codes).
void merge_lora_into(ModelWeights& weights, const LoraAdapter& adapter);

}  // namespace minigen
