#pragma once
// LoRA adapters as GGUF files, the way llama.cpp reads them (`llama-cli --lora`, llama_adapter_lora_init):
// general.type = "adapter", adapter.type = "lora", adapter.lora.alpha (f32), general.architecture the base model's,
// and per wrapped matrix `<base tensor>.lora_a` with dims {in, rank} and `<base tensor>.lora_b` with dims {rank, out}
// (ggml order: the row-major A [rank][in] and B [out][rank] as they are). llama.cpp scales the term by alpha / rank,
// or by 1 when alpha is 0.
#include <string>

#include "checkpoint/gguf_model.h"
#include "model/io/gguf_reader.h"
#include "model/lora_adapter.h"

namespace minigen {

// The adapter's metadata and tensors (F32) for a base model of `config`. alpha = scale · rank when every matrix has
// one rank; a MiniMind adapter of mixed ranks (scale 1) gets alpha 0. Throws minigen::Error for what llama.cpp's
// graph has no tensor for (expert matrices of MoE models) or cannot scale (mixed ranks with a scale other than 1).
GgufExport gguf_lora_export(const ModelConfig& config, const LoraAdapter& adapter, const std::string& name);

// The adapter a GGUF file holds, checked against `config` as every adapter is (model/lora_adapter.h).
LoraAdapter lora_from_gguf(const GgufFile& file, const ModelConfig& config, const std::string& source);

}  // namespace minigen
