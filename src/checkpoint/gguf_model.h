#pragma once
// A minigen model ↔ llama.cpp's GGUF layout: the architecture, its hyper-parameter keys and its tensor names.
//
//   minigen family                GGUF architecture   why
//   tiny, minimind3               qwen3               per-head q/k RMSNorm, rotate-half RoPE: Qwen3's graph
//   minimind3-moe                 qwen3moe            the same with routed experts (no shared expert)
//   minimind2, minimind2-small    llama               no q/k norm; q/k rows permuted (below)
//   MoE without q/k norm          llama               llama.cpp's Mixtral layout (ffn_gate_inp, ffn_*_exps)
//   minimind2-moe                 refused             its shared expert has no tensor in llama.cpp's llama graph
//
// Tensors: token_embd, output_norm, output (absent when tied: the embedding is stored once), and per layer
// blk.N.{attn_norm, attn_q, attn_k, attn_v, attn_output, attn_q_norm, attn_k_norm, ffn_norm, ffn_gate, ffn_up,
// ffn_down, ffn_gate_inp, ffn_gate_exps, ffn_up_exps, ffn_down_exps}.weight — llama.cpp's tensor-name table. Experts
// are stacked into one 3-D tensor per projection, dims {cols, rows, experts}. Norms are always F32.
#include <string>
#include <vector>

#include "model/config.h"
#include "model/io/gguf_reader.h"
#include "model/io/gguf_writer.h"
#include "model/weights.h"

namespace minigen {

// "qwen3", "qwen3moe" or "llama"; throws minigen::Error saying why for a shape llama.cpp cannot run.
std::string gguf_architecture(const ModelConfig& config);

struct GgufExport {
  GgufMetadata metadata;  // general.*, the architecture's hyper-parameters (the caller appends the tokenizer)
  std::vector<GgufTensorToWrite> tensors;
};

// `matrix_type` is what the weight matrices are written as (F32, F16, BF16, Q8_0 or Q4_0; Q4_0 keeps the output
// projection, here the tied embedding, at Q8_0 as minigen's q4 does). Q8_0/Q4_0 codes are minigen's q8/q4 codes,
// whose blocks are exactly GGUF's; matrices a file already held as codes are written as they are.
GgufExport gguf_export(const ModelConfig& config, const ModelWeights& weights, GgufTensorType matrix_type,
                       const std::string& model_name);

// A tensor of the file whose blocks became fp32 values at load: every K-quant, and Q8_0/Q4_0 ones whose codes the
// model cannot run as they are (checkpoint/gguf_tensor_values.h). A q8/q4 model packs them into its type to run.
struct GgufDequantizedTensor {
  std::string name;     // the file's name, "token_embd.weight"
  GgufTensorType type;  // what the file stored it as
};

struct GgufModel {
  std::string architecture;
  ModelConfig config;
  // minigen's (HF) names. Q8_0/Q4_0 as q8/q4 codes and _scale tensors (quantized_tensors.h) when the layers' matrices
  // are all of one of those types; everything else as fp32 values.
  TensorMap tensors;
  std::vector<GgufDequantizedTensor> dequantized;  // in file order
};

// The minigen names of a GGUF tensor ("blk.3.attn_q.weight" → "model.layers.3.self_attn.q_proj.weight"): one, or one
// per expert for a stacked expert tensor; empty when the name is not one of the table's.
std::vector<std::string> hf_names(const std::string& gguf_name, const ModelConfig& config);
// The llama-layout row order of q and k (see gguf_model.cpp): `heads` heads of rows, HF → GGUF or back.
void permute_rows(HostTensor& tensor, int heads, bool to_gguf);

// The config and tensors of a GGUF of one of the architectures above; throws minigen::Error naming the key or
// tensor for anything missing, mistyped or unmapped.
GgufModel gguf_model(const GgufFile& file, const std::string& name);

}  // namespace minigen
